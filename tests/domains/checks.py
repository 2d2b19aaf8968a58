"""Shared brute-force checks for the domain tests."""

from __future__ import annotations

import math

import numpy as np

from dp_online_envs.domains import Domain


def oracle_gap(domain: Domain, c: np.ndarray, vertices: np.ndarray) -> float:
    """``<c, LMO(c)> - min_v <c, v>`` (0 when the oracle is exact)."""
    return float(c @ domain.linear_minimizer(c) - (vertices @ c).min())


def variational_violation(x: np.ndarray, y: np.ndarray, vertices: np.ndarray) -> float:
    """``max_v <x - y, v - y>``: <= 0 exactly when y is the projection of x."""
    return float(((vertices - y) @ (x - y)).max())


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
