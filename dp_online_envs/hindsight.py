"""The best fixed action in hindsight: ``min_{x in D} sum_{s<=t} f_s(x)``.

:class:`Comparator` is a streaming ledger of the losses played. It is

* exact and O(param_dim) memory for linear losses (one oracle call on the cumulative
  parameter: ``min_x <Theta_t, x>`` is attained at a vertex);
* exact for submodular losses (the summed function is submodular: brute force for
  small n, the Fujishige-Wolfe minimum-norm-point algorithm beyond);
* exact for strongly convex quadratics ``(H/2)||x - a||^2`` (the sum is a quadratic
  centred at the mean of the ``a_s``: one Euclidean projection);
* certified for the distance, absolute, hinge and logistic families: ``F(x)`` at a
  feasible point from damped Newton steps on a smoothing of ``F`` is the upper bound,
  and a dual certificate (the affine minorant ``sum_t u_t r_t(y) - phi*(u_t)`` of ``F``
  for dual points ``u_t`` taken from the smoothing, minimized over D with one linear
  oracle call) the lower bound (:func:`minimize_smoothed`); typically within ``1e-9``
  relative of each other, so the regret interval is tight enough to fit rates on;
* certified for the log-wealth losses of portfolio selection: SLSQP's point, made
  feasible, is the upper bound and its linear minorant minimized over the simplex's
  vertices the lower bound (:func:`~dp_online_envs.losses.portfolio.best_rebalanced_portfolio`);
* certified for other convex losses: a projected-subgradient solver gives a feasible
  point (an upper bound) and the averaged linear minorants
  ``F(y) >= F(x_j) + <g_j, y - x_j>`` minimized with the linear oracle give a lower
  bound (:func:`minimize_convex_sum`; slower to close: ``O(1/sqrt(k))`` after k steps).

In the certified cases the comparator is an interval ``[lo, hi]`` containing the true
minimum, and the ledger keeps the T parameters (O(T * param_dim) memory).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dp_online_envs.domains.ball import Ball
from dp_online_envs.domains.base import Domain
from dp_online_envs.domains.polytope import OraclePolytope
from dp_online_envs.domains.wolfe import wolfe_minimize
from dp_online_envs.losses.base import LossFamily
from dp_online_envs.losses.convex import AbsoluteLinearLoss, DistanceLoss, HingeLoss, LogisticLoss
from dp_online_envs.losses.linear import LinearLoss
from dp_online_envs.losses.portfolio import LogWealthLoss, best_rebalanced_portfolio
from dp_online_envs.losses.quadratic import QuadraticLoss
from dp_online_envs.losses.submodular_min import minimize_submodular


def _kind(loss: LossFamily) -> str:
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


# --------------------------------------------------------------------------------------
# Dual certificates for the distance / absolute / hinge / logistic families.
#
# Each is ``f(theta, x) = phi(r(theta, x))`` with ``phi`` convex: the residual is
# ``r = x - a`` and ``phi = ||.||_2`` (distance), ``r = <a, x> - b`` and ``phi = |.|``
# (absolute), ``r = 1 - y <a, x>`` and ``phi = max(0, .)`` (hinge), ``r = -y <a, x>``
# and ``phi = log(1 + e^.)`` (logistic). Conjugate duality, ``phi(r) = max_u <u, r> -
# phi*(u)``, gives for any dual point ``u_t`` in the domain of ``phi*`` (the unit ball,
# ``[-1, 1]``, ``[0, 1]``, ``[0, 1]``) the affine minorant
#
#     F(y) >= ell_u(y) = sum_t <u_t, r_t(y)> - phi*(u_t)          (every y)
#
# whose minimum over D is one linear-oracle call. Written at a feasible ``x`` with
# ``g = grad ell_u``:
#
#     min_D F >= F(x) - sum_t FY_t - max_{v in D} <g, x - v>,
#     FY_t = phi(r_t(x)) + phi*(u_t) - <u_t, r_t(x)> >= 0      (Fenchel-Young gaps).
#
# With ``u_t = phi_mu'(r_t(x))``, the derivative of the Huber-type smoothing ``phi_mu``
# (the Moreau envelope of ``phi``), ``g = grad F_mu(x)``: the Fenchel-Young gaps vanish
# except for the terms within ``mu`` of their kink (``FY_t <= mu/4`` there; none for the
# logistic loss, whose ``u_t`` is the exact derivative), and the Frank-Wolfe gap vanishes
# at the minimizer of ``F_mu`` over D. Damped Newton steps on ``F_mu`` with ``mu``
# decreased geometrically drive both to zero; the upper bound is ``F`` at the best
# iterate. Neither bound depends on how the iterates were found; both hold up to the
# floating-point rounding of the sums (relative ~1e-16 per term), like any computed value.
# --------------------------------------------------------------------------------------

#: Families with a dual certificate, by exact type (a subclass may redefine ``value``).
_SMOOTHABLE = ("distance", "absolute", "hinge", "logistic")


def _smooth_family(loss: LossFamily) -> str | None:
    """Name of the dual-certificate rule for ``loss``, or ``None`` when it has none."""
    return {
        DistanceLoss: "distance",
        AbsoluteLinearLoss: "absolute",
        HingeLoss: "hinge",
        LogisticLoss: "logistic",
    }.get(type(loss))


@dataclass
class _Hessian:
    """``H = scale I + rows^T diag(weights) rows``: the Hessian of a smoothed sum.

    Each term of ``F_mu`` curves along one direction (or isotropically, a multiple of
    the identity), so the Hessian is kept as that sum and never formed unless asked
    (:meth:`dense`, O(k dim^2)); products, the trace and solves cost O(k dim) (plus
    O(k^3) for a solve) with ``k = len(rows)``.
    """

    scale: float
    rows: np.ndarray
    weights: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.rows.shape[1])

    def dense(self) -> np.ndarray:
        """The matrix (the same floating-point operations as the former dense build)."""
        m = (self.rows * self.weights[:, None]).T @ self.rows
        return self.scale * np.eye(self.dim) + m if self.scale != 0.0 else m

    def trace(self) -> float:
        return self.scale * self.dim + float(self.weights @ np.einsum("ij,ij->i", self.rows,
                                                                       self.rows))

    def shifted(self, shift: float) -> _Hessian:
        """``H + shift I``."""
        return _Hessian(self.scale + shift, self.rows, self.weights)


class _HessianOperator:
    """Products and solves with a :class:`_Hessian` (positive definite), cheapest way.

    Low rank (``k <= dim / 2``): ``H v`` from the rows, O(k dim), and ``H^{-1} b`` by the
    Woodbury identity ``(s I + U^T W U)^{-1} = (I - U^T W (s I + U U^T W)^{-1} U) / s``.
    Otherwise the dense matrix, formed once, and a Cholesky factorization for solves.
    """

    def __init__(self, h: _Hessian) -> None:
        self.h = h
        self._dense = h.dense() if 2 * len(h.rows) > h.dim or h.scale <= 0.0 else None

    def __call__(self, v: np.ndarray) -> np.ndarray:
        """``H v`` along the last axis of ``v`` (a vector, or a batch of rows)."""
        if self._dense is not None:
            return v @ self._dense  # H is symmetric
        h = self.h
        return h.scale * v + ((v @ h.rows.T) * h.weights) @ h.rows

    def solve(self, b: np.ndarray) -> np.ndarray:
        if self._dense is not None:
            import scipy.linalg  # imported when used: scipy is slow to import

            return scipy.linalg.cho_solve(scipy.linalg.cho_factor(self._dense, lower=True,
                                                                  check_finite=False),
                                          b, check_finite=False)
        h = self.h
        u, w, s = h.rows, h.weights, h.scale
        core = s * np.eye(len(w)) + (u @ u.T) * w[None, :]
        return (b - (w * np.linalg.solve(core, u @ b)) @ u) / s


@dataclass
class _Eval:
    """``F(x)``, the certificate's pieces at ``x`` and the smoothed objective."""

    value: float  # F(x)
    slack: float  # sum_t FY_t for u_t = phi_mu'(r_t(x))
    smooth_value: float  # F_mu(x)
    grad: np.ndarray  # grad F_mu(x) = grad ell_u
    hess: _Hessian | None  # Hessian of F_mu at x (when asked)
    r: np.ndarray  # residuals (scalar families) or distances (distance)


def _scalar_parts(family: str, thetas: np.ndarray, x: np.ndarray) -> tuple[np.ndarray,
                                                                             np.ndarray]:
    """Residuals ``r_t`` and the signs ``s_t`` with ``grad r_t = s_t a_t`` (scalar families)."""
    z = thetas[:, :-1] @ x
    if family == "absolute":
        return z - thetas[:, -1], np.ones(len(z))
    y = thetas[:, -1]
    return (1.0 if family == "hinge" else 0.0) - y * z, -y


def _scalar_derivs(family: str, r: np.ndarray, mu: float) -> tuple[np.ndarray, np.ndarray]:
    """``phi_mu'(r)`` (the dual point ``u``) and ``phi_mu''(r)``, elementwise."""
    if family == "absolute":
        u = np.clip(r / mu, -1.0, 1.0)
        return u, np.where(np.abs(r) < mu, 1.0 / mu, 0.0)
    if family == "hinge":
        u = np.clip(r / mu, 0.0, 1.0)
        return u, np.where((r > 0.0) & (r < mu), 1.0 / mu, 0.0)
    from scipy.special import expit  # imported when used: scipy is slow to import

    u = expit(r)  # logistic: exact derivative
    return u, u * (1.0 - u)


def _evaluate(family: str, thetas: np.ndarray, x: np.ndarray, mu: float,
              hess: bool) -> _Eval:
    """Every quantity of the certificate and of the Newton step at ``x``.

    ``value = F(x)``; ``slack = sum_t FY_t`` and ``grad = sum_t u_t grad r_t`` for the dual
    point ``u_t = phi_mu'(r_t(x))`` (so ``grad = grad F_mu(x)``); ``smooth_value = F_mu(x)``
    and, when ``hess``, its Hessian; ``r``: the residuals (or the distances ``||x - a_t||``).
    """
    if family == "distance":
        d = x - thetas
        n = np.sqrt(np.einsum("ij,ij->i", d, d))
        m = np.maximum(n, mu)
        inv = 1.0 / m  # u_t = d_t / max(n_t, mu)
        smooth = np.where(n >= mu, n - 0.5 * mu, n * n / (2.0 * mu))
        h = None
        if hess:  # (I - d d^T / n^2) / n when n >= mu, I / mu within mu of a_t
            h = _Hessian(float(inv.sum()), d, -np.where(n >= mu, inv ** 3, 0.0))
        slack = np.where(n >= mu, 0.0, n - n * n / mu)  # n - <u, d>, exactly 0 when far
        return _Eval(float(n.sum()), float(slack.sum()), float(smooth.sum()), inv @ d, h, n)
    r, sgn = _scalar_parts(family, thetas, x)
    u, d2 = _scalar_derivs(family, r, mu)
    if family == "absolute":
        val = np.abs(r)
        smooth = np.where(np.abs(r) < mu, r * r / (2.0 * mu), val - 0.5 * mu)
    elif family == "hinge":
        val = np.maximum(r, 0.0)
        smooth = np.where(r <= 0.0, 0.0, np.where(r < mu, r * r / (2.0 * mu), r - 0.5 * mu))
    else:
        val = smooth = np.logaddexp(0.0, r)
    slack = 0.0 if family == "logistic" else float((val - u * r).sum())
    a = thetas[:, :-1]
    h = None
    if hess:  # piecewise-linear families: only the terms within mu of their kink curve
        band = np.flatnonzero(d2) if family != "logistic" else slice(None)
        h = _Hessian(0.0, a[band], d2[band])
    return _Eval(float(val.sum()), slack, float(smooth.sum()), (u * sgn) @ a, h, r)


def _line_search_scalar(family: str, r: np.ndarray, q: np.ndarray, mu: float) -> float:
    """``argmin_{s in [0, 1]} sum_t phi_mu(r_t + s q_t)`` (safeguarded Newton on the slope).

    Returns the largest bracketed ``s`` at which the slope is still ``<= 0``, so the
    smoothed objective does not increase.
    """
    def slope(s: float) -> tuple[float, float]:
        u, d2 = _scalar_derivs(family, r + s * q, mu)
        return float(q @ u), float((q * q) @ d2)

    lo, hi, s = 0.0, 1.0, 1.0
    for _ in range(60):
        val, der = slope(s)
        if val <= 0.0:
            lo = s
            if s == 1.0 or val == 0.0:
                break
        else:
            hi = s
        if hi - lo <= 1e-12 * hi:
            break
        nxt = s - val / der if der > 0.0 else -1.0
        s = nxt if lo < nxt < hi else 0.5 * (lo + hi)
    return lo


def _ball_quadratic_min(b: np.ndarray, h: np.ndarray, radius: float) -> np.ndarray:
    """``argmin_{||y|| <= R} <b, y> + y^T H y / 2`` for positive definite ``H``.

    The unconstrained minimizer (by Cholesky) if it lies in the ball, else
    ``y(lam) = -(H + lam I)^{-1} b`` with ``||y(lam)|| = R``: in the eigenbasis of ``H``,
    Newton's method on the secular equation ``1/||y(lam)|| = 1/R`` (concave in ``lam``:
    from the left the iterates increase monotonically to the root; Moré and Sorensen,
    1983), O(dim) per iteration, safeguarded by bisection of the bracket
    ``(0, ||b|| / R]``. The result is scaled into the ball.
    """
    import scipy.linalg  # imported when used: scipy is slow to import
    from scipy.linalg import solve_triangular

    try:  # interior solution: one Cholesky factorization (cheaper than eigh)
        chol = np.linalg.cholesky(h)
        y = -solve_triangular(chol.T, solve_triangular(chol, b, lower=True, check_finite=False),
                              lower=False, check_finite=False)
        if float(y @ y) <= radius * radius and np.all(np.isfinite(y)):
            return y
    except np.linalg.LinAlgError:
        pass
    lam_h, q = scipy.linalg.eigh(h, check_finite=False)
    lam_h = np.maximum(lam_h, 0.0)
    c = q.T @ b
    c2 = c * c
    if lam_h[0] > 0.0 and float(np.sum(c2 / lam_h**2)) <= radius * radius:
        return -(q @ (c / lam_h))
    # the root lies in (0, ||b|| / R]: ||y(lam)|| <= ||b|| / lam. Newton steps from the
    # left, safeguarded by (geometric) bisection where the norm is not finite.
    lo, hi = 0.0, float(np.linalg.norm(b)) / radius
    lam = 0.0 if lam_h[0] > 0.0 else hi * 1e-16
    for _ in range(200):
        d = lam_h + lam
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            n2 = float(np.sum(c2 / d**2))
            deriv = float(np.sum(c2 / d**3))  # -d(||y||^2)/dlam / 2
        if not (math.isfinite(n2) and math.isfinite(deriv)) or n2 > radius * radius:
            lo = lam
        else:
            hi = lam
        if math.isfinite(n2) and abs(math.sqrt(n2) - radius) <= 1e-12 * radius:
            break
        nxt = -1.0
        if math.isfinite(n2) and math.isfinite(deriv) and deriv > 0.0:
            nxt = lam + (math.sqrt(n2) - radius) / radius * n2 / deriv
        if not lo < nxt < hi:
            nxt = math.sqrt(max(lo, hi * 1e-16) * hi) if lo < 1e-3 * hi else 0.5 * (lo + hi)
        if hi - lo <= 1e-15 * hi or nxt == lam:
            break
        lam = nxt
    y = -(q @ (c / (lam_h + lam)))
    ny = float(np.linalg.norm(y))
    if not math.isfinite(ny):  # pragma: no cover - stopped on the infinite side
        y = -(q @ (c / (lam_h + hi)))
        ny = float(np.linalg.norm(y))
    return y if ny <= radius else y * (radius / ny)


def _oracle_model_min(domain: Domain, x: np.ndarray, g: np.ndarray, h: _Hessian,
                      warm: tuple[np.ndarray, np.ndarray] | None = None,
                      max_iter: int = 100) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The model's minimizer over an oracle-only polytope, by Wolfe's algorithm.

    Minimizes ``<g, y - x> + (y - x)^T H (y - x) / 2`` over P with
    :func:`~dp_online_envs.domains.wolfe.wolfe_minimize` in the Hessian's metric (the
    same implementation as the Euclidean projection; H enters only through products
    ``H v``, O(k dim) for the low-rank-plus-identity Hessians of the smoothed sums). The
    Frank-Wolfe gap tolerance is ``1e-13 (1 + ||x - H^{-1} g||_H^2)``: relative to the
    squared H-norm of the unconstrained minimizer (``H^{-1} g`` by the Woodbury
    identity). The first corral is ``{x}`` (cold: the answer is then no worse than a
    null step), or ``warm``, the previous Newton step's corral and weights (successive
    models share most of their optimal face: this saves most oracle calls; a worse
    answer is caught by the line search). The answer is the corral's
    convex combination of points of P (oracle vertices, and ``x``), so it lies in P up to
    rounding.

    Returns:
        ``(y, (vertices, weights))``: the point and its corral, the next call's ``warm``.
    """
    op = _HessianOperator(h)
    hx = op(x)
    c_norm2 = float(x @ hx) - 2.0 * float(g @ x) + float(g @ op.solve(g))
    tol = 1e-13 * (1.0 + abs(c_norm2))
    start, weights = (x, None) if warm is None else warm
    res = wolfe_minimize(domain.linear_minimizer, x, start, weights, g=g, hess=op, tol=tol,
                         max_iter=max_iter)
    y = res.weights @ res.vertices / float(res.weights.sum())
    return y, (res.vertices, res.weights)


def _model_min(domain: Domain, x: np.ndarray, g: np.ndarray, h: np.ndarray,
               iters: int = 60) -> np.ndarray:
    """A feasible (approximate) minimizer over D of ``<g, y - x> + (y-x)^T H (y-x) / 2``.

    Exact on a :class:`Ball` (secular equation); FISTA with the domain's projection
    otherwise (oracle-only polytopes: :func:`_oracle_model_min`). Only feasibility
    matters to the certificate.
    """
    if type(domain) is Ball:
        return _ball_quadratic_min(g - h @ x, h, domain.radius)
    import scipy.linalg  # imported when used: scipy is slow to import

    big = float(scipy.linalg.eigh(h, eigvals_only=True, check_finite=False).max())
    if not big > 1e-100:  # (numerically) linear model: its minimizer is a vertex
        return domain.linear_minimizer(g)
    y, z, t = x.copy(), x.copy(), 1.0
    for _ in range(iters):
        y_new = domain.project(z - (g + h @ (z - x)) / big)
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        z = y_new + ((t - 1.0) / t_new) * (y_new - y)
        y, t = y_new, t_new
    return y


def minimize_smoothed(
    family: str,
    thetas: np.ndarray,
    domain: Domain,
    *,
    x0: np.ndarray | None = None,
    rel_gap: float = 1e-9,
    max_iters: int = 80,
    shrink: float = 8.0,
) -> tuple[float, float, np.ndarray]:
    """Certified bounds on ``min_{x in D} F(x)``, ``F = sum_t f(theta_t, .)``, by duality.

    Certificate (see the comment block above): at every iterate ``x`` (feasible),
    ``hi = F(x)`` and ``lo = F(x) - sum_t FY_t - max_{v in D} <g, x - v>``, the minimum
    over D of the affine minorant ``ell_u`` of ``F`` with the dual point
    ``u_t = phi_mu'(r_t(x))``; the best of each is returned. The smoothing ``mu`` starts
    at the residual scale of the ``8 dim`` terms nearest their kink and is divided by
    ``shrink`` once the Frank-Wolfe gap is below the Fenchel-Young slack (the smoothing,
    not the solve, then limits the bound). Each iteration is a Newton step on ``F_mu``
    (the quadratic model minimized over D, see :func:`_model_min` and, on oracle
    polytopes, :func:`_oracle_model_min`), with an exact line
    search along the segment (feasible by convexity) for the scalar families and
    Armijo backtracking for the distance.

    Args:
        family: One of ``"distance"``, ``"absolute"``, ``"hinge"``, ``"logistic"``.
        thetas: The parameters as rows.
        domain: The decision set.
        x0: Warm start: projected onto D, or, on an :class:`OraclePolytope`, taken as
            given (it must then lie in D, e.g. a previous answer); default the center.
        rel_gap: Stop once ``hi - lo <= rel_gap * max(1, |hi|)``.
        max_iters: At most this many Newton steps.
        shrink: Factor by which ``mu`` decreases between stages.

    Returns:
        ``(lo, hi, x)`` with ``lo <= min F <= hi = F(x)``.
    """
    if family not in _SMOOTHABLE:
        raise ValueError(f"family={family!r}, expected one of {_SMOOTHABLE}")
    dim = domain.dim
    if x0 is None:
        x = domain.center.copy()
    elif isinstance(domain, OraclePolytope):  # no cheap membership test: trusted
        x = np.array(x0, dtype=np.float64)
    else:
        x = domain.project(np.asarray(x0, dtype=np.float64))
    mu = 1.0
    if family != "logistic":
        kink = np.abs(_evaluate(family, thetas, x, 1.0, False).r)  # distance to the kinks
        k = min(len(thetas), 8 * dim)
        mu = max(float(np.partition(kink, k - 1)[k - 1]), 1e-12)
    # Ridge on the Hessian, relative to its mean eigenvalue: the ball's model step is
    # exact for any PSD matrix; the iterative ones need a bounded condition number.
    ridge = 1e-12 if type(domain) is Ball else 1e-6
    diam = max(float(domain.diameter), 1e-300)
    ev = _evaluate(family, thetas, x, mu, True)
    best_hi, best_x, lo = math.inf, x, -math.inf
    oracle = isinstance(domain, OraclePolytope)
    warm = None  # oracle polytopes: the previous model step's corral
    for it in range(max_iters + 1):
        if ev.value < best_hi:
            best_hi, best_x = ev.value, x
        vertex = domain.linear_minimizer(ev.grad)
        gap = float(ev.grad @ (x - vertex))
        lo = max(lo, ev.value - ev.slack - gap)
        if best_hi - lo <= rel_gap * max(1.0, abs(best_hi)) or it == max_iters:
            break
        if family == "logistic" or gap > 0.5 * ev.slack:
            floor = 1e-12 * float(np.linalg.norm(ev.grad)) / diam + 1e-300  # flat model
            if oracle:
                h = ev.hess.shifted(ridge * ev.hess.trace() / dim + floor)
                y, warm = _oracle_model_min(domain, x, ev.grad, h, warm)
            else:
                dense = ev.hess.dense()
                h = dense + (ridge * float(np.trace(dense)) / dim + floor) * np.eye(dim)
                y = _model_min(domain, x, ev.grad, h)
            step = y - x
            finite = bool(np.all(np.isfinite(step)))
            s = _line_search(family, thetas, x, step, ev, mu) if finite else 0.0
            if s > 0.0:
                x = x + s * step
                ev = _evaluate(family, thetas, x, mu, True)
                continue
            # an inexact model step: fall back on the Frank-Wolfe direction
            s = _line_search(family, thetas, x, vertex - x, ev, mu)
            if s > 0.0:
                x = x + s * (vertex - x)
                ev = _evaluate(family, thetas, x, mu, True)
                continue
            if family == "logistic":
                break  # no descent left at this precision
        # the smoothing, not the solve, limits the bound (or no descent is left): refine
        if mu <= 1e-15:
            break
        mu /= shrink
        ev = _evaluate(family, thetas, x, mu, True)
    return min(lo, best_hi), best_hi, best_x


def _line_search(family: str, thetas: np.ndarray, x: np.ndarray, step: np.ndarray,
                 ev: _Eval, mu: float) -> float:
    """A step ``s in [0, 1]`` along ``step`` that decreases ``F_mu`` (``0`` if none)."""
    slope = float(ev.grad @ step)
    if not slope < 0.0:
        return 0.0
    if family != "distance":
        _, sgn = _scalar_parts(family, thetas, x)
        return _line_search_scalar(family, ev.r, sgn * (thetas[:, :-1] @ step), mu)
    s = 1.0  # Armijo backtracking
    while s > 1e-12:
        if _evaluate(family, thetas, x + s * step, mu, False).smooth_value <= (
                ev.smooth_value + 1e-4 * s * slope):
            return s
        s *= 0.5
    return 0.0


class Comparator:
    """Streaming ledger of the losses played, answering ``min_x sum_s f_s(x)``."""

    def __init__(self, domain: Domain, loss: LossFamily) -> None:
        self.domain, self.loss = domain, loss
        self.kind = _kind(loss)
        self.count = 0
        self._streams = loss.linear_in_theta or self.kind == "quadratic"
        self._sum = np.zeros(loss.param_dim)
        self._sq = 0.0  # quadratic: sum of ||a_s||^2
        self._thetas = np.empty((0, loss.param_dim))  # rows [0, count) are the played ones
        self._x_warm: np.ndarray | None = None

    def add(self, theta: np.ndarray) -> None:
        """Record one round's parameter."""
        self.count += 1
        if self._streams:
            self._sum += theta
            if self.kind == "quadratic":
                self._sq += float(theta @ theta)
        else:
            if self.count > len(self._thetas):  # amortized O(1): capacity doubles
                grown = np.empty((max(16, 2 * len(self._thetas)), self.loss.param_dim))
                grown[: self.count - 1] = self._thetas[: self.count - 1]
                self._thetas = grown
            self._thetas[self.count - 1] = theta

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
            if self._streams:
                val, _ = loss.minimize(self._sum)
            else:
                thetas = self._thetas[: self.count]
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
        thetas = self._thetas[: self.count]
        family = _smooth_family(loss)
        if isinstance(loss, LogWealthLoss):
            lo, hi, x = best_rebalanced_portfolio(thetas, x0=self._x_warm)
        elif family is not None:
            lo, hi, x = minimize_smoothed(family, thetas, domain, x0=self._x_warm)
        else:
            lo, hi, x = minimize_convex_sum(loss, thetas, domain, x0=self._x_warm)
        self._x_warm = x
        return lo, hi
