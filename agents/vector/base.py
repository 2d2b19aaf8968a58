"""The vector-learner base: B seeds of one scalar learner, stepped together.

A vector learner is built from a *prototype*, the scalar agent with the same problem,
budget and options (:func:`agents.vector.make_vector` builds it), and reads its
constants from there. Its :meth:`VectorAgent.reset_batch` resets the prototype once
per seed and keeps what that reset made (generators, counters, first points), so game
``b`` starts exactly as the scalar agent reset with ``seeds[b]``; from then on the
vector rounds make the same arithmetic and the same generator calls per seed (random
numbers are drawn in the scalar agent's blocks, B generator calls per block).

The interface (:class:`~dp_online_envs.loop.VectorLearner`) is
``act_batch() -> (B,) | (B, dim)`` and ``update_batch(actions, feedback)``;
``docs/vector.md`` describes it and what a JAX backend would implement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from agents.base import Agent
from dp_online_envs._former_paths import former_names
from dp_online_envs.domains import Ball, Box, Simplex
from dp_online_envs.domains.ball import l2_norms, project_l2_rows
from dp_online_envs.losses import LinearLoss

__all__ = ["VectorAgent", "clip_bandit_rows", "clip_full_rows", "lmo_rows",
           "project_rows", "softmin_rows"]


class VectorAgent:
    """B games of one scalar learner (module docstring).

    Attributes:
        prototype: The scalar agent (its constants; reset once per seed at
            :meth:`reset_batch`).
        problem: The prototype's problem.
        privacy: The prototype's guarantee (each game's; ``None`` if not private).
        clipped_feedback: ``(B,)`` int counts of clipped feedback per game.
    """

    #: Registry names of the scalar learners this class plays.
    names: ClassVar[tuple[str, ...]] = ()

    def __init__(self, prototype: Agent) -> None:
        self.prototype = prototype
        self.problem = prototype.problem
        self.privacy = prototype.privacy
        self.name = prototype.name
        self.num_envs = 0
        self.clipped_feedback = np.zeros(0, dtype=np.int64)

    @classmethod
    def refusal(cls, prototype: Agent) -> str | None:
        """Why this class cannot play ``prototype``'s configuration, or ``None``."""
        return None

    def reset_batch(self, seeds: Sequence[int | None]) -> None:
        """Start B games; game ``b`` is the prototype reset with ``seeds[b]``."""
        self.num_envs = len(seeds)
        self.rows = np.arange(self.num_envs)
        self.clipped_feedback = np.zeros(self.num_envs, dtype=np.int64)
        self.t = 0
        states = []
        for s in seeds:
            self.prototype.reset(s)
            states.append(self._harvest(self.prototype))
        self._start(states)

    def _harvest(self, agent: Agent) -> Any:
        """What the scalar reset made that the vector games need (one game's)."""
        return None

    def _start(self, states: list[Any]) -> None:
        """Builds the vector state from the harvested per-game states."""

    def act_batch(self) -> np.ndarray:
        raise NotImplementedError

    def update_batch(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.prototype!r}, num_envs={self.num_envs})"


# ------------------------------------------------------------------- row helpers
def clip_bandit_rows(agent: VectorAgent, feedback: np.ndarray, lo: float, hi: float
                     ) -> np.ndarray:
    """The B bandit losses clipped to ``[lo, hi]``, clips counted per game (the rows of
    :func:`agents.common.clipped_loss`).

    Raises:
        ValueError: Feedback that is not ``(B, 1)`` or not finite.
    """
    fb = np.asarray(feedback, dtype=np.float64)
    if fb.shape != (agent.num_envs, 1):
        raise ValueError(f"bandit feedback must have shape ({agent.num_envs}, 1), got "
                         f"{fb.shape}")
    f = fb[:, 0]
    if not np.all(np.isfinite(f)):
        raise ValueError(f"feedback must be finite, got {f!r}")
    out = (f < lo) | (f > hi)
    if out.any():
        agent.clipped_feedback += out
        f = np.clip(f, lo, hi)
    return f


def clip_full_rows(agent: VectorAgent, feedback: np.ndarray) -> np.ndarray:
    """The B loss parameters mapped to the nearest admissible ones, clips counted per
    game (the rows of :meth:`agents.base.Agent.clip_feedback`)."""
    fb = np.asarray(feedback, dtype=np.float64)
    loss = agent.problem.loss
    if fb.shape != (agent.num_envs, loss.param_dim):
        raise ValueError(f"feedback must have shape ({agent.num_envs}, {loss.param_dim}), "
                         f"got {fb.shape}")
    if not np.all(np.isfinite(fb)):
        raise ValueError(f"feedback must be finite, got {fb!r}")
    if isinstance(loss, LinearLoss):
        clipped = loss.clip_params(fb)   # the scalar clip_param is this on one row
    else:
        clipped = np.stack([loss.clip_param(row) for row in fb])
    agent.clipped_feedback += np.any(clipped != fb, axis=1)
    return clipped


def softmin_rows(eta: float, cum: np.ndarray) -> np.ndarray:
    """:func:`agents.common.softmin` of every row (the same operations, row-wise)."""
    w = -eta * cum
    w -= w.max(axis=1, keepdims=True)
    p = np.exp(w)
    return p / p.sum(axis=1, keepdims=True)


def project_rows(domain: Any, v: np.ndarray) -> np.ndarray:
    """``domain.project`` of every row: one ``clip`` on boxes, the ball's own row-wise
    projection (:func:`~dp_online_envs.domains.ball.project_l2_rows`, which the scalar
    :meth:`~dp_online_envs.domains.Ball.project` runs on one row), else row by row (the
    domain's own projection), so the result is the scalar one bit for bit."""
    kind = type(domain).project
    if kind is Box.project:
        return np.clip(v, domain.low, domain.high)
    if kind is Ball.project:
        return project_l2_rows(v, domain.radius)
    return np.stack([domain.project(row) for row in v])


def lmo_rows(domain: Any, c: np.ndarray) -> np.ndarray:
    """``domain.linear_minimizer`` of every row: vectorized on the simplex and boxes,
    else row by row."""
    if type(domain).linear_minimizer is Simplex.linear_minimizer:
        x = np.zeros(c.shape)
        x[np.arange(c.shape[0]), np.argmin(c, axis=1)] = 1.0
        return x
    if type(domain).linear_minimizer is Box.linear_minimizer:
        return np.where(c < 0, domain.high, domain.low)
    if type(domain).linear_minimizer is Ball.linear_minimizer:
        norms = l2_norms(c)
        x = (-domain.radius / np.where(norms == 0.0, 1.0, norms))[:, None] * c
        x[norms == 0.0] = np.eye(1, c.shape[1])[0] * domain.radius
        return x
    return np.stack([domain.linear_minimizer(row) for row in c])


class _PerGameCounters:
    """B scalar counters behind the vector interface (``add`` row by row)."""

    def __init__(self, counters: list[Any]) -> None:
        self.counters = counters

    def add_batch(self, z: np.ndarray) -> np.ndarray:
        return np.stack([c.add(row) for c, row in zip(self.counters, z)])

    def noise_variance(self, t: int) -> float:
        return self.counters[0].noise_variance(t)


def batch_counters(counters: list[Any]) -> Any:
    """The B games' continual counters as one object with ``add_batch(z) -> (B, dim)``
    and ``noise_variance(t)``: a :class:`~agents.vector.counters.VectorAgarwalSingh`
    when they are Agarwal-Singh counters, else the B counters called row by row."""
    from agents.vector.counters import VectorAgarwalSingh

    if VectorAgarwalSingh.fits(counters):
        return VectorAgarwalSingh(counters)
    return _PerGameCounters(counters)


def box_actions(agent: VectorAgent) -> bool:
    """Whether the problem's actions are points (a ``Box`` action space)."""
    return isinstance(agent.problem.domain.action_space, gym.spaces.Box)


def exp_list(values: np.ndarray) -> np.ndarray:
    """``math.exp`` of every value (the scalar learners' libm exp, not numpy's SIMD one,
    which differs in the last bit on some inputs), as a float64 array."""
    return np.fromiter(map(math.exp, values.tolist()), np.float64, values.size)

#: Former names of this module (one release, with a ``DeprecationWarning``).
__getattr__ = former_names(globals(), {
    "BatchedAgent": "VectorAgent",
})
