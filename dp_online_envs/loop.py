"""The one game loop: every caller (``agents.play``, the experiment runner, the privacy
auditor, isolated play) plays its rounds here, so the feedback boundary is crossed in
exactly one place.

A *learner* is anything with ``act()`` and ``update(action, feedback)`` (an
:class:`agents.Agent`, or :class:`~dp_online_envs.lab.isolation.IsolatedLearner`, the proxy
of an agent running in its own process). The loop hands it nothing but the
observation the env emits (the round's permitted feedback).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import gymnasium as gym
import numpy as np

from dp_online_envs._former_paths import former_names
from dp_online_envs.validation import check_int


class Learner(Protocol):
    """What the loop needs of a learner."""

    def act(self) -> Any:
        """The action of the next round."""

    def update(self, action: Any, feedback: np.ndarray) -> None:
        """Learn from the round just played (``feedback`` is the env's observation)."""


#: ``on_round(t, action, feedback)``, called after the learner's update of round ``t``
#: (1-based): what the auditor and the runner need per round.
RoundHook = Callable[[int, Any, np.ndarray], None]
#: ``on_round(t, actions, feedback)`` of :func:`run_vector_rounds`: the same per round,
#: with the ``(B, ...)`` actions and observations of B lockstep games.
BatchRoundHook = Callable[[int, np.ndarray, np.ndarray], None]


def run_rounds(env: gym.Env, learner: Learner, on_round: RoundHook | None = None
               ) -> dict[str, Any]:
    """Play an already reset ``env`` with ``learner`` until the game ends.

    Each round: ``a = learner.act()``; ``obs = env.step(a)``; ``learner.update(a, obs)``;
    then ``on_round(t, a, obs)`` if given. Resetting the env and the learner (and
    choosing their seeds) is the caller's job.

    Args:
        env: A reset env (normally a registered id, whose outermost wrapper is the
            :class:`~dp_online_envs.wrappers.FeedbackGuard`).
        learner: The learner.
        on_round: Optional per-round hook.

    Returns:
        The ``info`` of the last step (``info["regret"]`` holds the
        :class:`~dp_online_envs.wrappers.RegretSummary` at the end of a game).
    """
    terminated = truncated = False
    info: dict[str, Any] = {}
    t = 0
    while not (terminated or truncated):
        action = learner.act()
        obs, _, terminated, truncated, info = env.step(action)
        learner.update(action, obs)
        t += 1
        if on_round is not None:
            on_round(t, action, obs)
    return info


def game_seeds(seed: int | None) -> tuple[int | None, int | None]:
    """``(env_seed, agent_seed)`` of the game seeded ``seed``: ``(seed, agent seed)``.

    The env is reset with ``seed`` itself, so ``env.reset(seed=s)`` in a hand-written
    loop faces the same losses. The learner's seed is derived from it,
    ``SeedSequence(seed).spawn(2)[1]`` (through :func:`seed_of`): the compiled loop's
    harness (:func:`agents.compiled.play_compiled`) seeds its trusted learners so, and
    ``agents.play(env, agent, seed=s, agent_seed=game_seeds(s)[1])`` plays the same
    game. ``agents.play`` itself no longer derives the agent's seed from ``seed`` (a
    learner could search small seeds for its own): it takes ``agent_seed=`` or fresh
    entropy. ``None`` gives ``(None, None)`` (fresh entropy each).

    Raises:
        ValueError: ``seed`` is not ``None`` or an integer ``>= 0``.
    """
    if seed is None:
        return None, None
    seed = check_int("seed", seed, 0)
    agent_ss = np.random.SeedSequence(seed).spawn(2)[1]
    return seed, seed_of(agent_ss)


def seed_of(seq: np.random.SeedSequence) -> int:
    """A 63-bit integer seed drawn from a seed sequence (its first 64-bit word, halved)."""
    return int(seq.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


class VectorLearner(Protocol):
    """What the vector loop needs of a learner playing B games at once.

    The shapes are the interface (``docs/vector.md``): a numpy implementation
    (:mod:`agents.vector`) or a JAX one can stand behind it without changing callers.
    """

    def act_batch(self) -> np.ndarray:
        """The actions of the next round, one row per game: ``(B,)`` or ``(B, dim)``."""

    def update_batch(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        """Learn from the round just played (``feedback``: the env's observations)."""


def run_vector_rounds(venv: gym.vector.VectorEnv, learner: VectorLearner,
                       on_round: BatchRoundHook | None = None) -> dict[str, Any]:
    """Play an already reset vector env of B lockstep games until they end.

    The vector counterpart of :func:`run_rounds`, round for round the same steps:
    ``a = learner.act_batch()``; ``obs = venv.step(a)``; ``learner.update_batch(a, obs)``;
    then ``on_round(t, a, obs)`` if given. The learner sees nothing but the observations
    (each game's permitted feedback).

    Returns:
        The ``info`` of the last step (``info["regret"]``: one
        :class:`~dp_online_envs.wrappers.RegretSummary` per game).

    Raises:
        ValueError: Games that are not in lockstep (an env whose ``unwrapped`` has ``rounds``,
            after a reset of some of its games only): they would never all end in one
            step; reset every game first.
    """
    rounds = getattr(getattr(venv, "unwrapped", venv), "rounds", None)
    if rounds is not None and np.unique(np.asarray(rounds)).size > 1:
        raise ValueError(f"run_vector_rounds plays games in lockstep, but they are at "
                         f"rounds {np.asarray(rounds).tolist()}: reset every game "
                         "(venv.reset(seed=...)) before playing them together")
    done = False
    info: dict[str, Any] = {}
    t = 0
    while not done:
        actions = learner.act_batch()
        obs, _, terminated, truncated, info = venv.step(actions)
        learner.update_batch(actions, obs)
        t += 1
        if on_round is not None:
            on_round(t, actions, obs)
        done = bool(np.all(terminated | truncated))
    return info

#: Former names of this module (one release, with a ``DeprecationWarning``).
__getattr__ = former_names(globals(), {
    "BatchedLearner": "VectorLearner",
    "run_batched_rounds": "run_vector_rounds",
})
