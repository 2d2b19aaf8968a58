"""Vector ``hedge``: exponential weights on the simplex for B games at once.

The rows of :class:`~agents.full_info.hedge.Hedge` with linear losses on the
simplex's points (``DPFullInfo-Experts-v0``): ``x_t = softmin(eta, sum_{s<t}
clip(theta_s))`` row by row (:func:`~agents.vector.base.softmin_rows`, the scalar
operations along each row), no randomness (the point is played as is).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent
from agents.vector.base import VectorAgent, box_actions, clip_full_rows, softmin_rows
from dp_online_envs._former_paths import former_names
from dp_online_envs.losses import LinearLoss

__all__ = ["VectorHedge"]


class VectorHedge(VectorAgent):
    """B games of ``hedge`` with linear losses and point actions."""

    names = ("hedge",)

    @classmethod
    def refusal(cls, prototype: Agent) -> str | None:
        p = prototype.problem
        if not isinstance(p.loss, LinearLoss):
            return f"the vector hedge needs linear losses, got {p.loss!r}"
        if not box_actions(prototype):
            return "the vector hedge plays points of the simplex (a Box action space)"
        return None

    def _start(self, states: list[Any]) -> None:
        self._cum = np.zeros((self.num_envs, self.problem.dim))
        self._x = softmin_rows(self.prototype.eta, self._cum)

    def act_batch(self) -> np.ndarray:
        return self._x.copy()

    def update_batch(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        self._cum += clip_full_rows(self, feedback)
        self.t += 1
        self._x = softmin_rows(self.prototype.eta, self._cum)

#: Former names of this module (one release, with a ``DeprecationWarning``).
__getattr__ = former_names(globals(), {
    "BatchedHedge": "VectorHedge",
})
