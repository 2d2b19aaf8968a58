"""Shared brute-force checks for the domain tests."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linprog

from dp_online_envs.domains import Domain

#: HiGHS's default primal and dual feasibility tolerance: its optimal value is exact only
#: up to about this much per unit of cost.
LP_TOL = 1e-7


def lp_minimum(c: np.ndarray, vertices: np.ndarray | None = None, **constraints) -> float:
    """``min <c, x>`` over a polytope given in ``scipy.optimize.linprog`` form (HiGHS).

    Only an optimal status is trusted; otherwise the exact minimum over ``vertices``
    (when given) is the fallback, and without them the test fails with HiGHS's message.
    Compare with :func:`lp_tolerance`, not with a tolerance HiGHS does not promise.
    """
    res = linprog(c, method="highs", **constraints)
    if res.status == 0:
        return float(res.fun)
    assert vertices is not None, f"reference LP not solved: {res.message}"
    return float((np.asarray(vertices) @ c).min())


def lp_tolerance(c: np.ndarray) -> float:
    """Absolute tolerance on an LP optimum from :func:`lp_minimum`: ``LP_TOL (1 + ||c||_1)``."""
    return LP_TOL * (1.0 + float(np.abs(c).sum()))


def oracle_gap(domain: Domain, c: np.ndarray, vertices: np.ndarray) -> float:
    """``<c, LMO(c)> - min_v <c, v>`` (0 when the oracle is exact)."""
    return float(c @ domain.linear_minimizer(c) - (vertices @ c).min())


def variational_violation(x: np.ndarray, y: np.ndarray, vertices: np.ndarray) -> float:
    """``max_v <x - y, v - y>``: <= 0 exactly when y is the projection of x."""
    return float(((vertices - y) @ (x - y)).max())


def projection_error_bound(domain: Domain, x: np.ndarray, y: np.ndarray) -> float:
    """Certified bound on ``||y - Proj_D(x)||`` for a point ``y`` of D: ``sqrt(gap)``.

    ``gap = max_{v in D} <x - y, v - y>`` is computed with the (exact) linear oracle at
    ``y`` itself, so it holds however ``y`` was found (a solver that stopped early only
    gives a larger bound): with ``y*`` the projection, ``<x - y*, y - y*> <= 0``, hence
    ``||y - y*||^2 <= <y - x, y - y*> <= gap``.
    """
    g = np.asarray(y, dtype=np.float64) - np.asarray(x, dtype=np.float64)
    gap = float(g @ y - g @ domain.linear_minimizer(g))
    return math.sqrt(max(gap, 0.0))


def convex_combinations(vertices: np.ndarray, rng: np.random.Generator, count: int) -> np.ndarray:
    """Random convex combinations (Dirichlet weights) of a few vertices each."""
    out = []
    for _ in range(count):
        k = min(len(vertices), int(rng.integers(1, 6)))
        rows = rng.choice(len(vertices), size=k, replace=False)
        out.append(rng.dirichlet(np.ones(k)) @ vertices[rows])
    return np.array(out)


def sphere_in_hull(domain: Domain, rng: np.random.Generator, count: int,
                   scale: float = 1.0) -> np.ndarray:
    """Points at distance ``scale * radius`` from the inner-ball center, within the hull."""
    center, radius = domain.inner_ball()
    basis = domain.affine_hull.basis
    u = rng.normal(size=(count, basis.shape[1]))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return center + scale * radius * (u @ basis.T)


def pushed_out(domain: Domain, c: np.ndarray, eps: float = 1e-3) -> np.ndarray:
    """``LMO(c) - eps c/||c||``: strictly below ``min_D <c, .>``, hence outside D."""
    c = c / np.linalg.norm(c)
    return domain.linear_minimizer(c) - eps * c


def max_pairwise(points: np.ndarray) -> float:
    sq = (points**2).sum(axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * points @ points.T
    return math.sqrt(max(float(d2.max()), 0.0))
