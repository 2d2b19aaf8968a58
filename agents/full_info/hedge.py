"""Hedge: non-private exponential weights on the simplex (experts)."""

from __future__ import annotations

import math

import numpy as np

from agents.base import Agent, register
from agents.common import env_action, hedge_eta, loss_width, softmin
from dp_online_envs.domains import Simplex
from dp_online_envs.losses import LinearLoss
from dp_online_envs.validation import check_real


@register
class Hedge(Agent):
    r"""Hedge / exponential weights (Littlestone-Warmuth 1994; Freund-Schapire 1997).

    ``x_t ∝ exp(-eta sum_{s<t} g_s)`` on the simplex, with ``g_s = theta_s`` for linear
    losses (the experts' losses) and the subgradient at ``x_s`` otherwise (exponentiated
    gradient). For expert losses in an interval of width ``w``,
    ``eta = sqrt(8 ln K / T) / w`` gives, by Hoeffding's lemma,

        regret <= ln K / eta + eta w^2 T / 8 = w sqrt(T ln K / 2)

    deterministically for the mixture ``x_t`` (Cesa-Bianchi & Lugosi 2006, Thm. 2.2),
    against any (also adaptive) sequence. ``w = 1`` for ``[0,1]^K`` losses (the
    ``DPFullInfo-Experts-v0`` default); ``w`` is the width of the loss family's parameter
    box for the other linear families and ``2 L`` for convex losses. On ``Discrete(K)``
    the arm is drawn from ``x_t`` (the bound then holds in expectation).

    Args:
        eta: Learning rate override.
    """

    name = "hedge"
    description = ("non-private exponential weights on the simplex, "
                   "eta = sqrt(8 ln K / T) / w (w: loss width)")
    paper = "Freund & Schapire 1997; Cesa-Bianchi & Lugosi, Prediction, Learning, and Games, Thm. 2.2"
    feedback = "full"
    private = False

    def setup(self, eta: float | None = None) -> None:
        p = self.problem
        if not isinstance(p.domain, Simplex):
            raise ValueError(f"hedge plays on the simplex (experts or arms), got {p.domain!r}")
        k = p.domain.dim
        loss = p.loss
        self._linear = isinstance(loss, LinearLoss)
        if self._linear:
            self.loss_width = loss_width(loss)
        else:
            if not (math.isfinite(p.lipschitz) and p.lipschitz > 0):
                raise ValueError(f"hedge needs a finite Lipschitz constant, got {p.lipschitz!r}")
            self.loss_width = 2.0 * float(p.lipschitz)
        self.eta = (hedge_eta(p.horizon, k, self.loss_width) if eta is None
                    else check_real("eta", eta, 0.0))

    @property
    def regret_bound(self) -> float:
        """``w sqrt(T ln K / 2)``, the bound of the default learning rate."""
        p = self.problem
        return self.loss_width * math.sqrt(p.horizon * math.log(p.domain.dim) / 2.0)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._cum = np.zeros(self.problem.dim)
        self._x = softmin(self.eta, self._cum)

    def act(self):
        return env_action(self.problem.domain, self._x, self.rng)

    def update(self, action, feedback) -> None:
        theta = self.clip_feedback(feedback)
        # a linear loss's gradient is theta itself (LinearLoss.subgradient copies it)
        self._cum += theta if self._linear else self.problem.loss.subgradient(theta, self._x)
        self.t += 1
        self._x = softmin(self.eta, self._cum)
