r"""LinUCB / OFUL on the contextual ids (Li, Chu, Langford and Schapire 2010;
Abbasi-Yadkori, Pal and Szepesvari 2011), non-private.

``linucb`` -- :class:`LinUCB`: the disjoint linear model of Li et al. 2010 (Algorithm 1,
one ridge regression per arm, :mod:`agents.bandit.contextual`), played optimistically
for losses: in context ``c`` it plays

    a_t = argmin_a  theta_hat_a^T c - beta_a ||c||_{A_a^{-1}}     (ties: lowest index)

with ``beta_a = alpha`` when ``alpha`` is given (Li et al.'s exploration constant), and by
default the self-normalized radius of Abbasi-Yadkori et al. 2011, Thm. 2, for each arm
at level ``failure_prob / K`` (a union bound over the arms):

    beta_a = R sqrt(2 log(K / failure_prob) + log det A_a - d log lambda) + sqrt(lambda) S,

``R = 1/2`` (Bernoulli losses), ``S = 1``, ``||c|| <= 1``. Then (OFUL's argument, their
Thm. 3, per arm, with the elliptical-potential lemma, their Lemma 11, and Cauchy-Schwarz
over the arms), with probability at least ``1 - failure_prob``, for ``lambda >= 1``,

    pseudo-regret(T) <= 2 beta_T sqrt(2 K d T log(1 + T / (K lambda d))),
    beta_T = R sqrt(2 log(K / failure_prob) + d log(1 + T / (lambda d))) + sqrt(lambda) S,

plus one round (the first round is played without its context).
"""

from __future__ import annotations

import math

import numpy as np

from agents.bandit.contextual import (
    PARAM_BOUND_S,
    SUB_GAUSSIAN_R,
    LinearContextualAgent,
    oful_radius,
)
from agents.base import register
from dp_online_envs.validation import check_real

__all__ = ["LinUCB", "linucb_regret_bound"]


def linucb_regret_bound(horizon: int, n_arms: int, dim: int, ridge: float = 1.0,
                        failure_prob: float = 0.05) -> float:
    """The high-probability pseudo-regret bound of the module docstring (plus 1 for the
    first round), for ``ridge >= 1``."""
    t, k, d = float(horizon), float(n_arms), float(dim)
    beta = SUB_GAUSSIAN_R * math.sqrt(2 * math.log(k / failure_prob)
                                      + d * math.log(1 + t / (ridge * d))) \
        + math.sqrt(ridge) * PARAM_BOUND_S
    return 2 * beta * math.sqrt(2 * k * d * t * math.log(1 + t / (k * ridge * d))) + 1.0


@register
class LinUCB(LinearContextualAgent):
    """LinUCB / OFUL with disjoint per-arm models; pseudo-regret
    ``O(d sqrt(K T) log T)`` with probability ``1 - failure_prob`` (module docstring).

    Args:
        alpha: Li et al.'s fixed exploration constant; ``None`` (default): OFUL's radius
            per arm at level ``failure_prob / K``.
        ridge: The ridge parameter lambda > 0 (the bound needs ``lambda >= 1``).
        failure_prob: The confidence level of OFUL's radius, in (0, 1).
    """

    name = "linucb"
    description = "LinUCB / OFUL on contexts, disjoint per-arm ridge models, non-private"
    paper = ("Li, Chu, Langford, Schapire, A contextual-bandit approach to personalized news "
             "article recommendation (WWW 2010), Alg. 1; Abbasi-Yadkori, Pal, Szepesvari, "
             "Improved algorithms for linear stochastic bandits (NeurIPS 2011), Thm. 2-3")

    def setup(self, alpha: float | None = None, ridge: float = 1.0,
              failure_prob: float = 0.05) -> None:
        self.setup_ridge(ridge)
        self.alpha = None if alpha is None else check_real("alpha", alpha, 0.0)
        self.failure_prob = check_real("failure_prob", failure_prob, 0.0, 1.0,
                                       low_inclusive=False, high_inclusive=False)

    def radii(self) -> np.ndarray:
        """``beta_a`` of every arm (``alpha`` when given, else OFUL's radius)."""
        if self.alpha is not None:
            return np.full(self.k, self.alpha)
        base = self.d * math.log(self.ridge)
        return np.array([oful_radius(ld - base, self.failure_prob / self.k, SUB_GAUSSIAN_R,
                                     self.ridge, PARAM_BOUND_S) for ld in self.log_det])

    def indices(self, c: np.ndarray) -> np.ndarray:
        """The optimistic (lower-confidence) loss of every arm in context ``c``."""
        return self.estimates() @ c - self.radii() * self.widths(c)

    def choose(self, c: np.ndarray) -> int:
        return int(np.argmin(self.indices(c)))

    @property
    def regret_bound(self) -> float:
        """:func:`linucb_regret_bound` of this game (OFUL's radius, ``ridge >= 1``)."""
        return linucb_regret_bound(self.problem.horizon, self.k, self.d, self.ridge,
                                   self.failure_prob)
