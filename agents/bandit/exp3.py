r"""EXP3 (Auer, Cesa-Bianchi, Freund, Schapire 2002) for K-armed bandits, non-private.

``exp3`` -- :class:`EXP3`: exponential weights on importance-weighted loss estimates
(loss form of Bubeck & Cesa-Bianchi 2012, Sec. 3.1),

    p_t = (1 - gamma) q_t + gamma / K,   q_t(i) ∝ exp(-eta L~_{t-1}(i)),   I_t ~ p_t,
    l~_t(i) = l_t(i) 1{I_t = i} / p_t(i),   L~_t = L~_{t-1} + l~_t,

with ``eta = sqrt(2 ln K / (T K))`` and ``gamma = 0`` by default: pseudo-regret
``<= sqrt(2 T K ln K)`` (their Thm. 3.1) for losses in ``[0, 1]``. The feedback is
normalised to ``l = (f - lo) / (hi - lo)`` with the declared range; ``eta`` is per unit
of that loss. As the base of ``private-bandit`` the bound needs non-negative losses:
pass ``gamma > 0`` or use ``private-exp2``. Notes: ``docs/algorithms/exp3.md``.
"""

from __future__ import annotations

import math

from agents.bandit.arms import ArmsExpWeights
from agents.base import register
from agents.common import check_arms_problem, check_range
from dp_online_envs.validation import check_int, check_real

__all__ = ["EXP3", "exp3_eta"]


def exp3_eta(horizon: int, n_arms: int) -> float:
    """``sqrt(2 ln K / (T K))`` (Bubeck & Cesa-Bianchi 2012, Thm. 3.1)."""
    k, t = check_int("n_arms", n_arms, 1), check_int("horizon", horizon, 1)
    return math.sqrt(2.0 * math.log(k) / (t * k))


@register
class EXP3(ArmsExpWeights):
    """EXP3 on K arms, ``eta = sqrt(2 ln K / (T K))``; regret ``<= sqrt(2 T K ln K)``.

    Args:
        eta: Learning rate override (per unit of normalized loss).
        gamma: Uniform mixing weight in ``[0, 1]`` (default 0).
        loss_range: ``(lo, hi)`` overriding the declared range of the feedback.
    """

    name = "exp3"
    description = "EXP3 (Auer et al. 2002), eta = sqrt(2 ln K / (T K)), non-private"
    paper = ("Auer, Cesa-Bianchi, Freund, Schapire, The nonstochastic multiarmed bandit "
             "problem (SIAM J. Comput. 2002); Bubeck & Cesa-Bianchi 2012, Thm. 3.1")

    def setup(self, eta: float | None = None, gamma: float = 0.0,
              loss_range: tuple[float, float] | None = None) -> None:
        p = self.problem
        k = check_arms_problem(self.name, p)
        g = check_real("gamma", gamma, 0.0, 1.0)
        self._lo, self._hi = check_range(p, loss_range)
        self._width = self._hi - self._lo
        self.eta = exp3_eta(p.horizon, k) if eta is None else check_real("eta", eta, 0.0)
        self.gamma = g
        self._init_arms(k)

    @property
    def regret_bound(self) -> float:
        """``sqrt(2 T K ln K)`` times the loss width (for the default eta, gamma = 0)."""
        k = self.k
        return self._width * math.sqrt(2.0 * self.problem.horizon * k * math.log(k))
