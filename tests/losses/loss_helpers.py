"""Shared factories for the loss-family tests: families, domains, random points."""

from __future__ import annotations

import numpy as np

from dp_online_envs.domains import (
    Ball,
    Cube,
    Domain,
    GraphicMatroid,
    GroundSet,
    Simplex,
    UniformMatroid,
)
from dp_online_envs.losses import (
    AbsoluteLinearLoss,
    ConcaveModularLoss,
    DistanceLoss,
    FacilityLocationLoss,
    GraphCutLoss,
    HingeLoss,
    LinearLoss,
    LogisticLoss,
    LossFamily,
    QuadraticLoss,
)

DIM = 5
N_SET = 7


def euclidean_families(dim: int = DIM) -> list[LossFamily]:
    """One instance of every non-submodular family."""
    return [
        LinearLoss(dim, "linf"),
        LinearLoss(dim, "l2"),
        LinearLoss(dim, "l1"),
        LinearLoss(dim, "unit"),
        DistanceLoss(dim, center_radius=0.7),
        AbsoluteLinearLoss(dim),
        HingeLoss(dim),
        LogisticLoss(dim),
        QuadraticLoss(dim, strong_convexity=2.5, center_radius=0.5),
    ]


def random_edges(n: int, p: float, seed: int) -> list[tuple[int, int]]:
    """An Erdos-Renyi edge list (a path if it comes out empty)."""
    rng = np.random.default_rng(seed)
    edges = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < p]
    return edges or [(i, i + 1) for i in range(n - 1)]


def submodular_families(n: int = N_SET, seed: int = 0) -> list[LossFamily]:
    """One instance of every submodular family (both variants where there are two)."""
    rng = np.random.default_rng(seed)
    groups = [sorted(rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False))
              for _ in range(4)]
    return [
        GraphCutLoss(n, random_edges(n, 0.5, seed), scale=2.0),
        GraphCutLoss(n, random_edges(n, 0.5, seed + 1), scale=1.0, unary=True),
        GraphCutLoss(n, [(i, i + 1) for i in range(n - 1)], scale=1.0, unary=True),
        ConcaveModularLoss(n, groups, scale=1.5),
        ConcaveModularLoss(n),
        FacilityLocationLoss(n, n_customers=3, scale=1.0),
        FacilityLocationLoss(n, n_customers=4, scale=3.0, modular=False),
    ]


def graphic_matroid(m: int) -> GraphicMatroid:
    """Graphic matroid on ``m >= 3`` edges: edges of K_4 (with cycles), then a path."""
    k4 = [(0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3)]
    edges = k4[:m] + [(k, k + 1) for k in range(3, 3 + max(0, m - 6))]
    n_nodes = 1 + max(max(e) for e in edges)
    return GraphicMatroid(n_nodes, edges)


def euclidean_domains(dim: int = DIM) -> list[Domain]:
    """Domains of dimension ``dim`` for the Euclidean families."""
    return [Ball(dim), Ball(dim, radius=2.0), Cube(dim), Simplex(dim), UniformMatroid(dim, 2),
            graphic_matroid(dim)]


def set_domains(n: int = N_SET) -> list[Domain]:
    """Domains inside ``[0, 1]^n`` for the submodular families."""
    return [GroundSet(n), Simplex(n), UniformMatroid(n, 3), graphic_matroid(n)]


def domain_points(domain: Domain, rng: np.random.Generator, m: int) -> np.ndarray:
    """``m`` points of ``domain``: LMO vertices, their convex combinations, projections.

    Only the LMO and the projection are used, so this works for any domain; convex
    combinations of domain points stay in the (convex) domain.
    """
    d = domain.dim
    verts = np.array([domain.linear_minimizer(rng.standard_normal(d)) for _ in range(m)])
    projs = np.array([domain.project(2.0 * rng.standard_normal(d)) for _ in range(m)])
    pool = np.vstack([verts, projs])
    w = rng.dirichlet(np.full(3, 0.5), size=m)
    idx = rng.integers(0, len(pool), size=(m, 3))
    combos = np.einsum("mk,mkd->md", w, pool[idx])
    pts = np.vstack([verts[: m // 3], projs[: m // 3], combos])
    return pts[:m]


def random_points(dim: int, rng: np.random.Generator, m: int, scale: float = 1.5) -> np.ndarray:
    """Gaussian points of R^dim (the families are defined on all of R^dim)."""
    return scale * rng.standard_normal((m, dim))
