"""Vector follow-the-regularized-leader: ``ftrl`` and ``private-ftrl`` for B games.

* ``ftrl`` (:class:`~agents.full_info.ftrl.FTRL`, linear losses): lazy
  ``x = Proj(x_1 - eta sum_s theta_s)`` or greedy ``x = Proj(x - eta theta)`` on the
  rows, the projection by :func:`~agents.vector.base.project_rows` (one ``clip`` on
  the cube, the ball's scaling on the rows, the domain's own projection row by row
  elsewhere).
* ``private-ftrl`` (:class:`~agents.full_info.ftrl.PrivateFTRL`): each game keeps the
  generator its scalar reset built; with the default Agarwal-Singh counter the B
  counters are one :class:`~agents.vector.counters.VectorAgarwalSingh` (rows, the
  scalar noise blocks), with the other counters the B releases of a round are the B
  counters' own ``add``; the leaders are computed on the rows (entropic:
  :func:`~agents.vector.base.softmin_rows`; l2: the projection above).

Only point actions (a ``Box`` action space): on arms the scalar learner draws the arm
from its own generator every round.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent
from agents.vector.base import (
    VectorAgent,
    batch_counters,
    box_actions,
    clip_full_rows,
    project_rows,
    softmin_rows,
)
from dp_online_envs._former_paths import former_names
from dp_online_envs.losses import LinearLoss

__all__ = ["VectorFTRL", "VectorPrivateFTRL"]


def _refusal(prototype: Agent) -> str | None:
    if not isinstance(prototype.problem.loss, LinearLoss):
        return f"the vector {prototype.name} needs linear losses"
    if not box_actions(prototype):
        return f"the vector {prototype.name} plays points (a Box action space)"
    if getattr(prototype, "record_releases", False):
        return "record_releases is not offered by the vector path"
    return None


class VectorFTRL(VectorAgent):
    """B games of ``ftrl`` with linear losses (module docstring)."""

    names = ("ftrl",)

    @classmethod
    def refusal(cls, prototype: Agent) -> str | None:
        return _refusal(prototype)

    def _harvest(self, agent: Agent) -> Any:
        return agent.x1

    def _start(self, states: list[Any]) -> None:
        self._x1 = states[0]
        self._x = np.tile(self._x1, (self.num_envs, 1))
        self._grad_sum = np.zeros_like(self._x)

    def act_batch(self) -> np.ndarray:
        return self._x.copy()

    def update_batch(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        g = clip_full_rows(self, feedback)  # the subgradient of a linear loss: theta
        self.t += 1
        proto, dom = self.prototype, self.problem.domain
        if proto.lazy:
            self._grad_sum += g
            self._x = project_rows(dom, self._x1 - proto.eta * self._grad_sum)
        else:
            self._x = project_rows(dom, self._x - proto.eta * g)


class VectorPrivateFTRL(VectorAgent):
    """B games of ``private-ftrl`` (module docstring)."""

    names = ("private-ftrl",)

    @classmethod
    def refusal(cls, prototype: Agent) -> str | None:
        return _refusal(prototype)

    def _harvest(self, agent: Agent) -> Any:
        return agent.counter, agent.noisy_sum

    def _start(self, states: list[Any]) -> None:
        self._counter = batch_counters([s[0] for s in states])
        self._x = self._leader(np.stack([s[1] for s in states]))

    def _leader(self, noisy: np.ndarray) -> np.ndarray:
        proto = self.prototype
        if proto.regularizer == "entropic":
            return softmin_rows(proto.eta, noisy)
        return project_rows(self.problem.domain, proto.x1 - proto.step * noisy)

    def act_batch(self) -> np.ndarray:
        return self._x.copy()

    def update_batch(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        noisy = self._counter.add_batch(clip_full_rows(self, feedback))
        self.t += 1
        self._x = self._leader(noisy)

#: Former names of this module (one release, with a ``DeprecationWarning``).
__getattr__ = former_names(globals(), {
    "BatchedFTRL": "VectorFTRL",
    "BatchedPrivateFTRL": "VectorPrivateFTRL",
})
