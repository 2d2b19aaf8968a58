"""Batched ``private-ftpl`` (Agarwal-Singh Algorithm 3) for B games.

The rows of :class:`~agents.full_info.ftpl.PrivateFTPL`: each game keeps the counter,
the extra-noise generator and the first release its scalar reset made; a round is
the B counters' ``add`` and, when the counter's variance is below the target, one
``normal(0, s, dim)`` per game from its extra generator (the scalar call), then the
linear minimizer on the rows (:func:`~agents.batched.base.lmo_rows`: vectorized on
the simplex and the cube, the domain's own oracle row by row elsewhere).

Only point actions (a ``Box`` action space): on arms the scalar learner draws the arm
from its own generator every round.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.base import Agent
from agents.batched.base import BatchedAgent, box_actions, clip_full_rows, lmo_rows
from dp_online_envs.losses import LinearLoss

__all__ = ["BatchedPrivateFTPL"]


class BatchedPrivateFTPL(BatchedAgent):
    """B games of ``private-ftpl`` (module docstring)."""

    names = ("private-ftpl",)

    @classmethod
    def refusal(cls, prototype: Agent) -> str | None:
        if not isinstance(prototype.problem.loss, LinearLoss):
            return "the batched private-ftpl needs linear losses"
        if not box_actions(prototype):
            return "the batched private-ftpl plays points (a Box action space)"
        if prototype.record_releases:
            return "record_releases is not offered by the batched path"
        return None

    def _harvest(self, agent: Agent) -> Any:
        return agent._counter, agent._noisy, agent._noise_var, agent._extra_rng

    def _start(self, states: list[Any]) -> None:
        self._counters = [s[0] for s in states]
        self._noisy = np.stack([s[1] for s in states])
        self._noise_var = states[0][2]  # the same for every game (a function of t)
        self._extra_rngs = [s[3] for s in states]

    def act_batch(self) -> np.ndarray:
        c = self._noisy
        extra = math.sqrt(max(self.prototype.target_variance - self._noise_var, 0.0))
        if extra > 0.0:
            dim = c.shape[1]
            c = c + np.stack([r.normal(0.0, extra, size=dim) for r in self._extra_rngs])
        return lmo_rows(self.problem.domain, c)

    def update_batch(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        theta = clip_full_rows(self, feedback)
        self._noisy = np.stack([c.add(row) for c, row in zip(self._counters, theta)])
        self.t += 1
        self._noise_var = self._counters[0].noise_variance(self.t)
