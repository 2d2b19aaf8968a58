r"""``hazan-kale-submodular``: non-private online submodular minimization, full information.

:class:`HazanKaleSubmodular`, Hazan & Kale, "Online Submodular Minimization" (JMLR
2012), full-information algorithm: projected subgradient descent on the Lovász
extension over ``K = [0, 1]^n``, playing ``S_t = {i : x_t(i) >= u_t}``,
``u_t ~ U[0, 1)`` (:func:`~agents.lovasz.threshold_round`), with the greedy subgradient
of the Lovász extension at ``x_t`` (its norm bounds: :func:`~agents.lovasz.lovasz_gradient_bounds`).
The private learner of the same game is ``submod-pftal``
(:mod:`agents.full_info.submod_pftal`); details: ``docs/algorithms/submod-pftal.md``.
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import Agent, register
from agents.lovasz import lovasz_gradient_bounds, require_submodular, threshold_round
from dp_online_envs.validation import check_real

__all__ = ["HazanKaleSubmodular", "hazan_kale_eta"]


def hazan_kale_eta(scale: float, n: int, horizon: int) -> float:
    """``eta = D / (G sqrt(T))`` with ``D = sqrt(n)`` (diameter of ``[0,1]^n``) and
    ``G = G_2 = min(4M, 2M sqrt(n))`` (:func:`lovasz_gradient_bounds`): projected
    subgradient descent then has regret ``<= D G sqrt(T)`` on the Lovász extensions
    (Zinkevich 2003), ``<= 4 M sqrt(n T)``, and so in expectation on the rounded sets."""
    return math.sqrt(n) / (lovasz_gradient_bounds(scale, n)[1] * math.sqrt(horizon))


# -------------------------------------------------------------------- Hazan-Kale
@register
class HazanKaleSubmodular(Agent):
    r"""Hazan-Kale online submodular minimization, full information (JMLR 2012).

    Projected subgradient descent on the Lovász extensions over ``K = [0, 1]^n``:
    ``x_{t+1} = Proj_K(x_t - eta g_t)`` from ``x_1 = (1/2, ..., 1/2)``, with
    ``eta = D / (G sqrt(T))``, ``D = sqrt(n)``, ``G = min(4M, 2M sqrt(n))``
    (:func:`hazan_kale_eta`); plays ``S_t = {i : x_t(i) >= u_t}``, ``u_t ~ U[0, 1)``.
    Expected regret ``<= D G sqrt(T) <= 4 M sqrt(n T)``.

    Args:
        eta: Step size override.
    """

    name = "hazan-kale-submodular"
    description = ("non-private Hazan-Kale online submodular minimization: projected "
                   "subgradient descent on the Lovász extension, threshold rounding")
    paper = "Hazan & Kale, Online Submodular Minimization, JMLR 13 (2012), full-information case"
    feedback = "full"
    private = False
    requires = ("bound",)

    def setup(self, eta: float | None = None) -> None:
        p = self.problem
        require_submodular(self.name, p)
        self.scale = float(p.bound)
        self.eta = (hazan_kale_eta(self.scale, p.dim, p.horizon) if eta is None
                    else check_real("eta", eta, 0.0, low_inclusive=False))
        #: ``D G sqrt(T)``: the regret bound of the chosen tuning (for the default eta).
        self.regret_bound = (math.sqrt(p.dim) * lovasz_gradient_bounds(self.scale, p.dim)[1]
                             * math.sqrt(p.horizon))

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._x = np.full(self.problem.dim, 0.5)

    @property
    def point_played(self) -> np.ndarray:
        """The fractional point ``x_t`` of the coming round."""
        return self._x.copy()

    def act(self):
        return threshold_round(self._x, self.rng.random())

    def update(self, action, feedback) -> None:
        theta = self.clip_feedback(feedback)
        g = self.problem.loss.subgradient(theta, self._x)
        self.t += 1
        self._x = self.problem.domain.project(self._x - self.eta * g)
