r"""Linear Thompson sampling on the contextual ids (Agrawal and Goyal 2013), non-private.

``lin-ts`` -- :class:`LinTS`: Algorithm 1 of Agrawal and Goyal, *Thompson sampling for
contextual bandits with linear payoffs* (ICML 2013), on the disjoint per-arm model
(:mod:`agents.bandit.contextual`). Their algorithm on the block embedding ``b_a(c) =
e_a (x) c`` (dimension ``Kd``) has a block-diagonal ``B(t) = diag(A_a)``, so its sample
``mu~ ~ N(mu_hat, v^2 B(t)^{-1})`` is independent per arm, ``theta~_a ~ N(theta_hat_a,
v^2 A_a^{-1})``, and the arm played, ``argmin_a theta~_a^T c`` (losses), depends on the
samples only through the K numbers ``theta~_a^T c ~ N(theta_hat_a^T c, v^2 ||c||^2_{A_a^{-1}})``,
which are drawn directly (the same law of the arm played, K normal draws a round).

``v = R sqrt((24 / eps) D ln(1 / failure_prob))`` with ``D = K d``, ``R = 1/2`` and
``eps = 1 / ln T`` by default (their Thm. 1): with probability ``1 - failure_prob`` the
regret is ``O(D^2 / eps sqrt(T^{1 + eps}) ln(T D) ln(1 / failure_prob))``. The
theorem's ``v`` explores heavily at small T; ``v`` overrides it (a tuned variant).
"""

from __future__ import annotations

import math

import numpy as np

from agents.bandit.contextual import SUB_GAUSSIAN_R, LinearContextualAgent
from agents.base import register
from dp_online_envs.validation import check_real

__all__ = ["LinTS", "lin_ts_scale"]


def lin_ts_scale(horizon: int, dim: int, failure_prob: float,
                 eps: float | None = None) -> float:
    """Agrawal and Goyal's ``v = R sqrt((24 / eps) D ln(1 / failure_prob))``, ``R = 1/2``,
    ``eps = 1 / ln T`` by default (1 for ``T < 3``)."""
    if eps is None:
        eps = 1.0 / math.log(horizon) if horizon >= 3 else 1.0
    return SUB_GAUSSIAN_R * math.sqrt(24.0 / eps * dim * math.log(1.0 / failure_prob))


@register
class LinTS(LinearContextualAgent):
    """Linear Thompson sampling, Gaussian samples of scale ``v`` around the per-arm ridge
    estimates; regret ``O~(D^2 sqrt(T^{1+eps}) / eps)``, ``D = Kd`` (module docstring).

    Args:
        v: The posterior scale; ``None`` (default): Agrawal and Goyal's Thm. 1 value.
        ridge: The ridge parameter lambda > 0 (the paper's ``B = I + ...``: 1).
        failure_prob: The ``delta`` of the default ``v``, in (0, 1).
        eps: The ``epsilon`` of the default ``v``, in (0, 1]; default ``1 / ln T``.
    """

    name = "lin-ts"
    description = "linear Thompson sampling on contexts (Agrawal-Goyal 2013), non-private"
    paper = ("Agrawal, Goyal, Thompson sampling for contextual bandits with linear payoffs "
             "(ICML 2013), Alg. 1, Thm. 1")

    def setup(self, v: float | None = None, ridge: float = 1.0, failure_prob: float = 0.05,
              eps: float | None = None) -> None:
        self.setup_ridge(ridge)
        fp = check_real("failure_prob", failure_prob, 0.0, 1.0, low_inclusive=False,
                        high_inclusive=False)
        e = None if eps is None else check_real("eps", eps, 0.0, 1.0, low_inclusive=False)
        self.v = (lin_ts_scale(self.problem.horizon, self.k * self.d, fp, e) if v is None
                  else check_real("v", v, 0.0))

    def samples(self, c: np.ndarray) -> np.ndarray:
        """One posterior draw of ``theta~_a^T c`` for every arm."""
        z = self.rng.standard_normal(self.k)
        return self.estimates() @ c + self.v * self.widths(c) * z

    def choose(self, c: np.ndarray) -> int:
        return int(np.argmin(self.samples(c)))
