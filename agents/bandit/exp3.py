r"""EXP3 (Auer, Cesa-Bianchi, Freund, Schapire 2002) for K-armed bandits, non-private.

``exp3`` -- :class:`EXP3`: exponential weights on importance-weighted loss estimates,

    p_t(i) ∝ exp(-eta L~_{t-1}(i)),   play I_t ~ p_t,
    l~_t(i) = l_t(i) 1{I_t = i} / p_t(i),   L~_t = L~_{t-1} + l~_t,

in the loss form of Bubeck & Cesa-Bianchi (2012, Sec. 3.1) with the standard rate

    eta = sqrt(2 ln K / (T K)),

for which the pseudo-regret is at most ``sqrt(2 T K ln K)`` (their Thm. 3.1) for losses
in ``[0, 1]``. The feedback is mapped onto ``[0, 1]`` by ``l = (f - lo)/(hi - lo)`` with
the declared range (:func:`~agents.common.loss_range`; the identity on
``DPBandit-MAB-v0``); a constant shift of every arm's loss changes no regret, and the
reported ``eta`` is per unit of that normalized loss.

Mixing. ``gamma`` (default 0) mixes in the uniform distribution,
``p_t = (1 - gamma) q_t + gamma / K``, as in Auer et al.'s original Exp3; it bounds the
estimates by ``K / gamma`` times the loss.

As a base of the private reduction (``private-bandit`` with ``base="exp3"``) EXP3
receives noisy, possibly negative losses. It runs in the log domain (no overflow), but
the ``sqrt(2TK ln K)`` analysis needs non-negative losses (``e^{-x} <= 1 - x + x^2/2``
for ``x >= 0``): with ``gamma = 0`` a negative noisy loss of a rarely played arm gives an
unbounded estimate. Use ``base_options={"gamma": ...}`` or prefer ``private-exp2``,
whose exploration is tuned to the noise (Theorem 4.1). The per-round cost is that of
:class:`~agents.bandit.arms.ArmsExpWeights`: O(K) scalar work.
"""

from __future__ import annotations

import math

import gymnasium as gym

from agents.bandit.arms import ArmsExpWeights
from agents.base import check_number, register
from agents.common import check_bandit_problem, check_range
from dp_online_envs.domains import Simplex

__all__ = ["EXP3", "exp3_eta"]


def exp3_eta(horizon: int, n_arms: int) -> float:
    """``sqrt(2 ln K / (T K))`` (Bubeck & Cesa-Bianchi 2012, Thm. 3.1)."""
    k, t = int(n_arms), int(horizon)
    if k < 1 or t < 1:
        raise ValueError(f"need K >= 1 arms and T >= 1 rounds, got K={n_arms}, T={horizon}")
    return math.sqrt(2.0 * math.log(k) / (t * k))


@register
class EXP3(ArmsExpWeights):
    """EXP3 on K arms, ``eta = sqrt(2 ln K / (T K))``; regret ``<= sqrt(2 T K ln K)``.

    Args (of ``setup``):
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
        check_bandit_problem(self.name, p)
        if not (isinstance(p.domain, Simplex)
                and isinstance(p.domain.action_space, gym.spaces.Discrete)):
            raise ValueError(f"exp3 plays K arms (a Discrete(K) action space), got {p.domain!r}")
        g = check_number("gamma", gamma)
        if g > 1.0:
            raise ValueError(f"gamma={gamma!r}, expected a number in [0, 1]")
        self._lo, self._hi = check_range(p, loss_range)
        self._width = self._hi - self._lo
        k = p.domain.dim
        self.eta = exp3_eta(p.horizon, k) if eta is None else check_number("eta", eta)
        self.gamma = g
        self._init_arms(k)

    @property
    def regret_bound(self) -> float:
        """``sqrt(2 T K ln K)`` times the loss width (for the default eta, gamma = 0)."""
        k = self.k
        return self._width * math.sqrt(2.0 * self.problem.horizon * k * math.log(k))
