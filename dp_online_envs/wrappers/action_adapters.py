"""Action adapters: let continuous-action RL agents (stable-baselines3 PPO, SAC, ...) play.

RL libraries' Gaussian policies emit a vector in a bounded ``Box``; the suite's envs
want an arm index (``Discrete(K)``, multi-armed bandits) or a point of the probability
simplex (experts). These ``gymnasium.ActionWrapper`` s map a logits vector to either:

* :class:`LogitsToArm`: ``Box(-bound, bound, (K,), float32)`` -> arm ``argmax(logits)``
  (or an arm drawn from ``softmax(logits / temperature)`` with ``mode="sample"``);
* :class:`LogitsToSimplex`: ``Box(-bound, bound, (K,), float32)`` -> the point
  ``softmax(logits / temperature)`` of the simplex;
* :func:`adapt` picks the right one for an env.

Put the adapter outside the env (``adapt(gym.make(...))``): the ``FeedbackGuard`` still
decides what the agent observes, and the regret is still that of the points played.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from dp_online_envs.domains import Simplex
from dp_online_envs.validation import check_real


def softmax(z: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """``exp(z / temperature)`` normalized (computed stably)."""
    z = np.asarray(z, dtype=np.float64) / temperature
    e = np.exp(z - z.max())
    return e / e.sum()


def _check(bound: float, temperature: float) -> None:
    check_real("bound", bound, 0.0, low_inclusive=False)
    check_real("temperature", temperature, 0.0, low_inclusive=False)


class LogitsToArm(gym.ActionWrapper):
    """A ``Box`` of logits for an env whose actions are arms (``Discrete(K)``).

    Args:
        env: An env with a ``Discrete`` action space (e.g. ``DPBandit-MAB-v0``).
        mode: ``"argmax"`` (deterministic) or ``"sample"`` (an arm drawn from
            ``softmax(logits / temperature)`` with the wrapper's own generator, seeded at
            ``reset(seed=...)``; the env's generators are not touched).
        bound: The Box is ``[-bound, bound]^K`` (finite, as stable-baselines3 wants).
        temperature: Softmax temperature for ``mode="sample"``.
    """

    def __init__(self, env: gym.Env, mode: str = "argmax", bound: float = 5.0,
                 temperature: float = 1.0) -> None:
        super().__init__(env)
        if not isinstance(env.action_space, gym.spaces.Discrete):
            raise TypeError(f"LogitsToArm needs a Discrete action space, got {env.action_space}")
        if mode not in ("argmax", "sample"):
            raise ValueError(f"mode={mode!r}, expected 'argmax' or 'sample'")
        _check(bound, temperature)
        self.n = int(env.action_space.n)
        self.start = int(env.action_space.start)
        self.mode = mode
        self.temperature = float(temperature)
        self.action_space = gym.spaces.Box(-bound, bound, shape=(self.n,), dtype=np.float32)
        self._rng = np.random.default_rng()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        return self.env.reset(seed=seed, options=options)

    def action(self, action: Any) -> int:
        z = np.asarray(action, dtype=np.float64).reshape(-1)
        if z.shape != (self.n,):
            raise ValueError(f"expected {self.n} logits, got shape {np.shape(action)}")
        z = np.clip(np.nan_to_num(z), self.action_space.low, self.action_space.high)
        if self.mode == "argmax":
            return self.start + int(np.argmax(z))
        return self.start + int(self._rng.choice(self.n, p=softmax(z, self.temperature)))


class LogitsToSimplex(gym.ActionWrapper):
    """A ``Box`` of logits for an env whose actions are points of the simplex (experts).

    Args:
        env: An env whose decision set is the probability simplex (its ``Problem``'s
            domain is a ``Simplex`` and its actions are points), e.g.
            ``DPFullInfo-Experts-v0``.
        bound: The Box is ``[-bound, bound]^K``.
        temperature: Softmax temperature (smaller: closer to a vertex).
    """

    def __init__(self, env: gym.Env, bound: float = 5.0, temperature: float = 1.0) -> None:
        super().__init__(env)
        domain = env.get_wrapper_attr("problem").domain
        if not isinstance(domain, Simplex) or not isinstance(env.action_space, gym.spaces.Box):
            raise TypeError(f"LogitsToSimplex needs points of a simplex, got {domain!r} with "
                            f"actions {env.action_space}")
        _check(bound, temperature)
        self.n = int(domain.dim)
        self.temperature = float(temperature)
        self.action_space = gym.spaces.Box(-bound, bound, shape=(self.n,), dtype=np.float32)

    def action(self, action: Any) -> np.ndarray:
        z = np.asarray(action, dtype=np.float64).reshape(-1)
        if z.shape != (self.n,):
            raise ValueError(f"expected {self.n} logits, got shape {np.shape(action)}")
        z = np.clip(np.nan_to_num(z), self.action_space.low, self.action_space.high)
        return softmax(z, self.temperature)


def adapt(env: gym.Env, **kwargs: Any) -> gym.ActionWrapper:
    """The adapter for an env: :class:`LogitsToArm` for arms, :class:`LogitsToSimplex`
    for the simplex.

    Raises:
        TypeError: Other decision sets (no logits parametrization here).
    """
    if isinstance(env.action_space, gym.spaces.Discrete):
        return LogitsToArm(env, **kwargs)
    return LogitsToSimplex(env, **kwargs)


__all__ = ["LogitsToArm", "LogitsToSimplex", "adapt", "softmax"]
