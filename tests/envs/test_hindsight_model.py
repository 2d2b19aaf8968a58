"""The comparator's Newton model on oracle polytopes: the smoothed sum's Hessian as a
low-rank-plus-identity operator, and the model step by Wolfe's algorithm in its metric."""

from __future__ import annotations

import numpy as np
import pytest

from dp_online_envs.domains import Birkhoff, FlowPolytope, UniformMatroid
from dp_online_envs.hindsight import (
    _evaluate,
    _HessianOperator,
    _oracle_model_min,
    minimize_smoothed,
)


def _thetas(family, n, dim, rng):
    if family == "distance":
        return rng.uniform(-1, 1, size=(n, dim))
    a = rng.normal(size=(n, dim)) / np.sqrt(dim)
    last = rng.normal(size=n) if family == "absolute" else rng.choice([-1.0, 1.0], size=n)
    return np.c_[a, last]


@pytest.mark.parametrize("family", ["distance", "absolute", "hinge", "logistic"])
def test_dense_hessian_is_the_former_build_bit_for_bit(family):
    """Non-oracle domains (ball, box, ...) still use the dense Hessian: it must be the
    same floating-point result as the former construction."""
    rng = np.random.default_rng(0)
    dim = 6
    thetas = _thetas(family, 40, dim, rng)
    x = rng.normal(size=dim) * 0.3
    mu = 0.05 if family != "logistic" else 1.0
    h = _evaluate(family, thetas, x, mu, True).hess.dense()
    if family == "distance":
        d = x - thetas
        n = np.sqrt(np.einsum("ij,ij->i", d, d))
        inv = 1.0 / np.maximum(n, mu)
        w = np.where(n >= mu, inv ** 3, 0.0)
        former = float(inv.sum()) * np.eye(dim) - (d * w[:, None]).T @ d
    else:
        ev = _evaluate(family, thetas, x, mu, False)
        a = thetas[:, :-1]
        if family == "logistic":
            u = 1.0 / (1.0 + np.exp(-ev.r))
            d2 = u * (1.0 - u)
            band = slice(None)
        else:
            d2 = np.where((np.abs(ev.r) < mu) if family == "absolute"
                          else ((ev.r > 0) & (ev.r < mu)), 1.0 / mu, 0.0)
            band = np.flatnonzero(d2)
        former = (a[band] * d2[band, None]).T @ a[band]
    np.testing.assert_array_equal(h, former) if family != "logistic" else (
        np.testing.assert_allclose(h, former, rtol=1e-12, atol=1e-15))


@pytest.mark.parametrize("family", ["distance", "absolute", "logistic"])
@pytest.mark.parametrize("terms", [5, 40])
def test_operator_products_solves_and_trace(family, terms):
    """Low rank (Woodbury) and dense paths against the dense matrix."""
    rng = np.random.default_rng(1)
    dim = 30
    thetas = _thetas(family, terms, dim, rng)
    x = rng.normal(size=dim) * 0.1
    hess = _evaluate(family, thetas, x, 0.1, True).hess
    h = hess.shifted(1e-3 * hess.trace() / dim + 1e-9)
    dense = h.dense()
    assert h.trace() == pytest.approx(np.trace(dense), rel=1e-12)
    op = _HessianOperator(h)
    assert (op._dense is None) == (2 * len(h.rows) <= dim)  # both paths are exercised
    v = rng.normal(size=dim)
    batch = rng.normal(size=(4, dim))
    np.testing.assert_allclose(op(v), dense @ v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(op(batch), batch @ dense, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(op.solve(v), np.linalg.solve(dense, v), rtol=1e-7)


@pytest.mark.parametrize("domain", [Birkhoff(3), FlowPolytope.grid(3, 4), UniformMatroid(7, 3)],
                         ids=repr)
def test_model_step_is_optimal_over_the_vertices(domain):
    """``argmin_{y in P} <g, y - x> + (y - x)^T H (y - x) / 2``: certified by the
    Frank-Wolfe gap over every vertex, cold and warm-started alike, and in P."""
    rng = np.random.default_rng(2)
    verts = domain.vertices()
    thetas = rng.uniform(-1, 1, size=(8, domain.dim))
    x = domain.center
    ev = _evaluate("distance", thetas, x, 1e-3, True)
    h = ev.hess.shifted(1e-6 * ev.hess.trace() / domain.dim + 1e-12)
    dense = h.dense()
    warm = None
    for step in range(2):
        y, warm = _oracle_model_min(domain, x, ev.grad, h, warm)
        grad = ev.grad + dense @ (y - x)
        gap = float(grad @ y - (verts @ grad).min())
        scale = 1.0 + abs(float(x @ dense @ x)) + float(np.abs(ev.grad).sum())
        assert gap <= 1e-10 * scale, step
        assert domain.contains(y, atol=1e-9)
        np.testing.assert_allclose(warm[1].sum(), 1.0)


def test_flow_distance_comparator_interval_is_tight():
    """The checkpoint the benchmark times, at a size where the vertices can be
    enumerated: the certified interval is within 1e-9 relative and ``hi`` is F at a
    point of the polytope."""
    domain = FlowPolytope.grid(4, 5)
    rng = np.random.default_rng(3)
    thetas = np.where(rng.random((50, domain.dim)) < 0.7, 1.0, -1.0)
    lo, hi, x = minimize_smoothed("distance", thetas, domain)
    assert lo <= hi <= lo + 1e-9 * abs(hi)
    assert domain.contains(x, atol=1e-9)
    assert hi == pytest.approx(float(np.linalg.norm(x - thetas, axis=1).sum()), rel=1e-13)
    # no vertex is below the lower bound
    verts = domain.vertices()
    vals = np.linalg.norm(verts[:, None, :] - thetas[None], axis=2).sum(1)
    assert lo <= vals.min()
