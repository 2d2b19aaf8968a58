"""The best fixed action in hindsight: ``min_{x in D} sum_{s<=t} f_s(x)``.

:class:`Comparator` is a streaming ledger of the losses played. It is

* exact and O(param_dim) memory for linear losses (one oracle call on the cumulative
  parameter: ``min_x <Theta_t, x>`` is attained at a vertex);
* exact for submodular losses (the summed function is submodular: brute force for
  small n, the Fujishige-Wolfe minimum-norm-point algorithm beyond);
* exact for strongly convex quadratics ``(H/2)||x - a||^2`` (the sum is a quadratic
  centred at the mean of the ``a_s``: one Euclidean projection);
* certified for other convex losses: a projected-subgradient solver gives a feasible
  point (an upper bound) and the averaged linear minorants
  ``F(y) >= F(x_j) + <g_j, y - x_j>`` minimized with the linear oracle give a lower
  bound, so the comparator is an interval ``[lo, hi]`` containing the true minimum.
"""

from __future__ import annotations

import math

import numpy as np

from dp_online_envs.domains.base import Domain
from dp_online_envs.domains.polytope import OraclePolytope
from dp_online_envs.losses.base import LossFamily


def _kind(loss: LossFamily) -> str:
    from dp_online_envs.losses.linear import LinearLoss
    from dp_online_envs.losses.quadratic import QuadraticLoss

    if isinstance(loss, LinearLoss):
        return "linear"
    if hasattr(loss, "set_value"):
        return "submodular"
    if isinstance(loss, QuadraticLoss):
        return "quadratic"
    return "convex"


def minimize_convex_sum(
    loss: LossFamily,
    thetas: np.ndarray,
    domain: Domain,
    *,
    iters: int = 400,
    rel_gap: float = 1e-6,
    x0: np.ndarray | None = None,
) -> tuple[float, float, np.ndarray]:
    """Certified bounds on ``min_{x in D} F(x)``, ``F = sum_t f(theta_t, .)`` convex.

    Iterates stay feasible: projected subgradient steps ``D / (G sqrt(k))`` on domains
    with an exact projection, Frank-Wolfe steps ``x + 2/(k+2) (v - x)`` with
    ``v = LMO(g)`` on oracle-only polytopes (whose projection is itself an iterative
    solve). The best value seen is the upper bound ``hi``. Every iterate gives a linear
    minorant ``F(y) >= F(x_j) + <g_j, y - x_j>``; the average of the first k minorants,
    minimized over D with the linear oracle, is a lower bound, and ``lo`` is the best.

    Returns:
        ``(lo, hi, x)`` with ``lo <= min F <= hi = F(x)``.
    """
    use_fw = isinstance(domain, OraclePolytope)
    x = domain.center.copy() if x0 is None else np.asarray(x0, dtype=np.float64)
    if not use_fw:
        x = domain.project(x)
    diam = max(domain.diameter, 1e-12)
    best_val, best_x = math.inf, x
    lo = -math.inf
    const_sum, grad_sum = 0.0, np.zeros_like(x)
    for k in range(1, iters + 1):
        val, g = loss.total(thetas, x)
        if val < best_val:
            best_val, best_x = val, x
        const_sum += val - float(g @ x)
        grad_sum += g
        v = domain.linear_minimizer(grad_sum)
        lo = max(lo, (const_sum + float(grad_sum @ v)) / k)
        if best_val - lo <= rel_gap * max(1.0, abs(best_val)):
            break
        gnorm = float(np.linalg.norm(g))
        if gnorm == 0.0:
            lo = max(lo, val)  # x is a minimizer over R^d, hence over D
            break
        if use_fw:
            x = x + (2.0 / (k + 2.0)) * (domain.linear_minimizer(g) - x)
        else:
            x = domain.project(x - (diam / (gnorm * math.sqrt(k))) * g)
    return min(lo, best_val), best_val, best_x


class Comparator:
    """Streaming ledger of the losses played, answering ``min_x sum_s f_s(x)``."""

    def __init__(self, domain: Domain, loss: LossFamily) -> None:
        self.domain, self.loss = domain, loss
        self.kind = _kind(loss)
        self.count = 0
        self._streams = loss.linear_in_theta or self.kind == "quadratic"
        self._sum = np.zeros(loss.param_dim)
        self._sq = 0.0  # quadratic: sum of ||a_s||^2
        self._thetas: list[np.ndarray] = []
        self._x_warm: np.ndarray | None = None

    def add(self, theta: np.ndarray) -> None:
        """Record one round's parameter."""
        self.count += 1
        if self._streams:
            self._sum += theta
            if self.kind == "quadratic":
                self._sq += float(theta @ theta)
        else:
            self._thetas.append(np.array(theta, dtype=np.float64))

    @property
    def cumulative_param(self) -> np.ndarray | None:
        """``sum_s theta_s`` when the ledger streams it, else ``None``."""
        return self._sum.copy() if self._streams else None

    def best(self) -> tuple[float, float]:
        """``(lo, hi)`` bounds on the best fixed action's total loss (equal when exact)."""
        if self.count == 0:
            return 0.0, 0.0
        loss, domain = self.loss, self.domain
        if self.kind == "linear":
            v = domain.linear_minimizer(self._sum)
            val = float(self._sum @ v)
            return val, val
        if self.kind == "submodular":
            from dp_online_envs.losses.submodular_min import minimize_submodular

            if self._streams:
                val, _ = loss.minimize(self._sum)
            else:
                thetas = np.stack(self._thetas)
                val, _ = minimize_submodular(
                    lambda masks: sum(loss.set_values(th, masks) for th in thetas),
                    domain.dim, vectorized=True,
                )
            return float(val), float(val)
        if self.kind == "quadratic":
            # sum_s (H/2)||x - a_s||^2 = (H n/2)||x - abar||^2 + (H/2)(sum ||a_s||^2 - n ||abar||^2)
            h, n = loss.strong_convexity, self.count
            abar = self._sum / n
            x = domain.project(abar)
            val = 0.5 * h * n * float((x - abar) @ (x - abar)) + 0.5 * h * (
                self._sq - n * float(abar @ abar)
            )
            return val, val
        lo, hi, x = minimize_convex_sum(loss, np.stack(self._thetas), domain, x0=self._x_warm)
        self._x_warm = x
        return lo, hi
