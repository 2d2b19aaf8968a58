"""Vector ``private-ftpl`` (Agarwal-Singh Algorithm 3) for B games.

The rows of :class:`~agents.full_info.private_ftpl.PrivateFTPL`: each game keeps the counter,
the extra-noise generator and the first release its scalar reset made; a round is
one ``add_batch`` of the counters (one :class:`~agents.vector.counters.
VectorAgarwalSingh` with the default counter, else the B counters' own ``add``) and,
when the counter's variance is below the target, each game's ``normal(0, s, dim)``
from its extra generator (drawn for a block of rounds at once when ``s`` is constant,
the same numbers), then the
linear minimizer on the rows (:func:`~agents.vector.base.lmo_rows`: vectorized on
the simplex and the cube, the domain's own oracle row by row elsewhere).

Only point actions (a ``Box`` action space): on arms the scalar learner draws the arm
from its own generator every round.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.base import Agent
from agents.vector.base import (
    VectorAgent,
    batch_counters,
    box_actions,
    clip_full_rows,
    lmo_rows,
)
from agents.vector.counters import FLOAT_BLOCK, VectorAgarwalSingh
from dp_online_envs._former_paths import former_names
from dp_online_envs.losses import LinearLoss

__all__ = ["VectorPrivateFTPL"]


class VectorPrivateFTPL(VectorAgent):
    """B games of ``private-ftpl`` (module docstring)."""

    names = ("private-ftpl",)

    @classmethod
    def refusal(cls, prototype: Agent) -> str | None:
        if not isinstance(prototype.problem.loss, LinearLoss):
            return "the vector private-ftpl needs linear losses"
        if not box_actions(prototype):
            return "the vector private-ftpl plays points (a Box action space)"
        if prototype.record_releases:
            return "record_releases is not offered by the vector path"
        return None

    def _harvest(self, agent: Agent) -> Any:
        return agent.counter, agent.noisy_sum, agent.release_variance, agent.extra_rng

    def _start(self, states: list[Any]) -> None:
        self._counter = batch_counters([s[0] for s in states])
        self._constant = isinstance(self._counter, VectorAgarwalSingh)
        self._noisy = np.stack([s[1] for s in states])
        self._noise_var = states[0][2]  # the same for every game (a function of t)
        self._extra_rngs = [s[3] for s in states]
        self._extra = np.empty((0, self.num_envs, self.problem.dim))
        self._ei = 0

    def _extra_noise(self, scale: float) -> np.ndarray:
        """Each game's ``normal(0, scale, dim)`` of this round. With a constant scale
        (the Agarwal-Singh counter's variance does not depend on t) a block of rounds
        is drawn per game at once: ``normal(0, scale, (n, dim))`` gives the numbers of
        ``n`` successive calls."""
        dim = self.problem.dim
        if not self._constant:
            return np.stack([r.normal(0.0, scale, size=dim) for r in self._extra_rngs])
        if self._ei == len(self._extra):
            n = max(1, min(FLOAT_BLOCK // (self.num_envs * dim), self.problem.horizon - self.t))
            block = np.empty((self.num_envs, n, dim))
            for r, rows in zip(self._extra_rngs, block):
                rows[...] = r.normal(0.0, scale, size=(n, dim))
            self._extra = block.transpose(1, 0, 2)
            self._ei = 0
        row = self._extra[self._ei]
        self._ei += 1
        return row

    def act_batch(self) -> np.ndarray:
        c = self._noisy
        extra = math.sqrt(max(self.prototype.target_variance - self._noise_var, 0.0))
        if extra > 0.0:
            c = c + self._extra_noise(extra)
        return lmo_rows(self.problem.domain, c)

    def update_batch(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        self._noisy = self._counter.add_batch(clip_full_rows(self, feedback))
        self.t += 1
        self._noise_var = self._counter.noise_variance(self.t)

#: Former names of this module (one release, with a ``DeprecationWarning``).
__getattr__ = former_names(globals(), {
    "BatchedPrivateFTPL": "VectorPrivateFTPL",
})
