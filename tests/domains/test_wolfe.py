"""Wolfe's algorithm with the factored corral (domains/wolfe.py), against the former
least-squares implementation, brute force over explicit vertex lists, and exact
optimality certificates; degenerate inputs (repeated and affinely dependent points)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dp_online_envs.domains import (
    Birkhoff,
    FlowPolytope,
    SubmodularBasePolytope,
    UniformMatroid,
    frank_wolfe_solve,
)
from dp_online_envs.domains.projection import _run_wolfe
from dp_online_envs.domains.wolfe import Corral, wolfe_minimize

from .cases import facility_location
from .checks import variational_violation
from .reference_wolfe import run_wolfe_lstsq


def vertex_lmo(verts: np.ndarray, calls: list | None = None):
    """The exact LMO over an explicit list of points (first minimizer wins)."""
    def lmo(c):
        if calls is not None:
            calls.append(1)
        return verts[int(np.argmin(verts @ c))].copy()
    return lmo


DOMAINS = [Birkhoff(4), UniformMatroid(9, 4), FlowPolytope.grid(4, 5),
           SubmodularBasePolytope(facility_location(6, 4, seed=3), 6)]


@pytest.mark.parametrize("domain", DOMAINS, ids=repr)
def test_matches_the_former_least_squares_path(domain):
    """Same points as the lstsq-per-minor-cycle implementation, to the stated tolerance
    (both within sqrt(2 tol) of the projection; in practice within 1e-12)."""
    rng = np.random.default_rng(0)
    verts = domain.vertices()
    for scale in (0.1, 1.0, 10.0):
        for x in rng.normal(size=(4, domain.dim)) * scale:
            new, _ = _run_wolfe(domain.linear_minimizer, x, 1e-10, 20_000, None, None)
            old, _ = run_wolfe_lstsq(domain.linear_minimizer, x, 1e-10, 20_000, None, None)
            assert np.linalg.norm(new.point - old.point) <= 1e-9 * (1 + scale)
            assert variational_violation(x, new.point, verts) <= max(new.gap, 0.0) + 1e-12
            assert new.gap <= 1e-10 or not new.converged
            assert np.all(new.weights > 0) and new.weights.sum() == pytest.approx(1.0)
            np.testing.assert_allclose(new.weights @ new.atoms, new.point, atol=1e-10)


def _degenerate_sets():
    rng = np.random.default_rng(1)
    square = np.array([[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [1, 1, 0, 0]], float)
    plane = rng.normal(size=(12, 2)) @ rng.normal(size=(2, 6)) + rng.normal(size=6)
    line = np.outer(np.linspace(-1, 2, 7), rng.normal(size=5))
    cube = np.array([[i >> k & 1 for k in range(3)] for i in range(8)], float)
    repeated = np.vstack([cube, cube[[0, 3, 5]], cube[[7]] + 1e-13])
    return {"square (4 coplanar)": square, "12 points on a 2-plane": plane,
            "7 collinear": line, "repeated and nearly repeated": repeated}


@pytest.mark.parametrize("name", list(_degenerate_sets()))
def test_degenerate_point_sets(name):
    """Affinely dependent and repeated points: the exact projection (brute force over
    the vertices: the variational inequality holds up to the reported gap) and the
    former implementation agree."""
    verts = _degenerate_sets()[name]
    rng = np.random.default_rng(2)
    lmo = vertex_lmo(verts)
    points = list(rng.normal(size=(8, verts.shape[1])) * 2)
    points += [verts[0], verts.mean(0), verts[1] + 0.3 * (verts[1] - verts[0])]
    for x in points:
        new, _ = _run_wolfe(lmo, x, 1e-12, 20_000, None, None)
        old, _ = run_wolfe_lstsq(lmo, x, 1e-12, 20_000, None, None)
        assert variational_violation(x, new.point, verts) <= max(new.gap, 0.0) + 1e-11
        assert np.linalg.norm(new.point - old.point) <= 1e-8
        # the corral stays affinely independent
        atoms = new.atoms
        assert np.linalg.matrix_rank(np.c_[np.ones(len(atoms)), atoms], tol=1e-9) == len(atoms)


def _random_corral(rng, n, dim, hess=None, g=None):
    x0 = rng.normal(size=dim)
    corral = Corral(x0, g, hess)
    pts = rng.normal(size=(n, dim))
    for p in pts:
        assert corral.try_insert(p, p.tobytes())
    return corral, x0, pts


def _gram(corral, x0, pts, h):
    d = pts - x0
    return d @ h @ d.T + 1.0


def test_factor_stays_exact_through_inserts_and_deletes():
    """L L^T = R = K + e e^T with K recomputed from the points, after random
    insertions and deletions (including the first and last positions), and a point
    affinely dependent on the corral is refused."""
    rng = np.random.default_rng(3)
    dim = 12
    a = rng.normal(size=(dim, dim))
    h = a @ a.T + np.eye(dim)
    corral, x0, pts = _random_corral(rng, 9, dim, hess=lambda v: v @ h)
    kept = list(range(9))
    for keep in ([0, 1, 2, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6], [0, 1, 2, 3, 4]):
        corral.keep(np.array(keep))
        kept = [kept[i] for i in keep]
        k = corral.size
        lo = corral.chol[:k, :k]
        np.testing.assert_allclose(lo @ lo.T, _gram(corral, x0, pts[kept], h), rtol=1e-10)
        np.testing.assert_array_equal(corral.v[:k], pts[kept])
        assert np.all(corral.chol[:k, k:] == 0) and np.allclose(np.triu(lo, 1), 0)
        new = rng.normal(size=dim)
        assert corral.try_insert(new, new.tobytes())
        pts = np.vstack([pts, new])
        kept.append(len(pts) - 1)
    k = corral.size
    for _ in range(20):  # affine combinations of the corral (up to rounding): refused
        w = rng.dirichlet(np.ones(k)) * 1.5 - 0.5 / k
        mid = w @ corral.v[:k]
        assert not corral.try_insert(mid, mid.tobytes()) and corral.size == k


def _bordered_solution(gram, r):
    """Brute force: the bordered KKT system ``[K e; e^T 0] (alpha, nu) = (-r, 1)``."""
    k = len(r)
    big = np.zeros((k + 1, k + 1))
    big[:k, :k] = gram - 1.0
    big[:k, k] = big[k, :k] = 1.0
    return np.linalg.solve(big, np.concatenate([-r, [1.0]]))[:k]


def test_affine_minimizer_and_its_fallbacks():
    """The factored solve equals the bordered KKT solution; a corrupted factor is
    detected by the residual check and recomputed; a factor marked broken falls back on
    least squares. Each guard is needed: without it the answer is wrong."""
    rng = np.random.default_rng(4)
    dim = 8
    g = rng.normal(size=dim)
    corral, _, _ = _random_corral(rng, 6, dim, g=g)
    k = corral.size
    truth = _bordered_solution(corral.gram[:k, :k], corral.r[:k])
    np.testing.assert_allclose(corral.affine_minimizer(), truth, rtol=1e-9, atol=1e-12)
    # a bad update: the factor is off by a lot, the residual test refactors
    corral.chol[2, 1] += 0.5
    np.testing.assert_allclose(corral.affine_minimizer(), truth, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(corral.chol[:k, :k] @ corral.chol[:k, :k].T,
                               corral.gram[:k, :k], rtol=1e-10)
    # a factor that cannot be recomputed: least squares on the bordered system
    corral.gram[:k, :k] += 0.0
    corral.factored = False
    corral.chol[:k, :k] = np.nan
    saved = corral._refactor
    corral._refactor = lambda j: False
    np.testing.assert_allclose(corral.affine_minimizer(), truth, rtol=1e-8, atol=1e-11)
    corral._refactor = saved


def _quadratic(verts, x0, g, h, y):
    z = y - x0
    return float(g @ z + 0.5 * z @ h @ z)


@pytest.mark.parametrize("seed", range(4))
def test_quadratic_in_a_metric_is_optimal(seed):
    """``min <g, y - x0> + (y - x0)^T H (y - x0) / 2`` over conv(V): the returned point
    is certified by brute force over the vertices (``<grad, y - v> <= gap`` for every
    v), and the reported gap is that of the returned point."""
    rng = np.random.default_rng(seed)
    domain = Birkhoff(3) if seed % 2 else FlowPolytope.grid(3, 4)
    verts = domain.vertices()
    dim = domain.dim
    a = rng.normal(size=(3, dim))
    h = 0.3 * np.eye(dim) + a.T @ a
    x0 = verts.mean(0)
    g = rng.normal(size=dim) * 3
    res = wolfe_minimize(domain.linear_minimizer, x0, x0, g=g, hess=lambda v: v @ h,
                         tol=1e-12, max_iter=500)
    y = res.weights @ res.vertices
    grad = g + h @ (y - x0)
    np.testing.assert_allclose(res.grad, grad, atol=1e-10)
    np.testing.assert_allclose(res.z, y - x0, atol=1e-12)
    real_gap = float(grad @ y - (verts @ grad).min())
    assert res.gap == pytest.approx(real_gap, abs=1e-10)
    assert real_gap <= 1e-10
    # no vertex combination does better than phi(y) - gap
    best_vertex = min(_quadratic(verts, x0, g, h, v) for v in verts)
    assert _quadratic(verts, x0, g, h, y) <= best_vertex + 1e-10


def test_warm_start_reaches_the_same_point_with_fewer_oracle_calls():
    rng = np.random.default_rng(5)
    domain = FlowPolytope.grid(5, 6)
    dim = domain.dim
    a = rng.normal(size=(4, dim))
    h1, h2 = np.eye(dim) + a.T @ a, 1.1 * np.eye(dim) + a.T @ a
    x0 = domain.center
    g = rng.normal(size=dim)
    first = wolfe_minimize(domain.linear_minimizer, x0, x0, g=g, hess=lambda v: v @ h1,
                           tol=1e-12, max_iter=1000)
    cold_calls, warm_calls = [], []
    def lmo_cold(c):
        cold_calls.append(1)
        return domain.linear_minimizer(c)

    def lmo_warm(c):
        warm_calls.append(1)
        return domain.linear_minimizer(c)

    cold = wolfe_minimize(lmo_cold, x0, x0, g=g, hess=lambda v: v @ h2, tol=1e-12,
                          max_iter=1000)
    warm = wolfe_minimize(lmo_warm, x0, first.vertices, first.weights, g=g,
                          hess=lambda v: v @ h2, tol=1e-12, max_iter=1000)
    y_cold, y_warm = cold.weights @ cold.vertices, warm.weights @ warm.vertices
    assert np.linalg.norm(y_cold - y_warm) <= 1e-6
    assert cold.gap <= 1e-12 and warm.gap <= 1e-12
    assert len(warm_calls) * 3 <= len(cold_calls)
    # a warm start with repeated and zero-weight rows: they are skipped
    rows = np.vstack([first.vertices, first.vertices[:2]])
    weights = np.concatenate([first.weights, [0.0, 0.5]])
    again = wolfe_minimize(domain.linear_minimizer, x0, rows, weights, g=g,
                           hess=lambda v: v @ h2, tol=1e-12, max_iter=1000)
    assert np.linalg.norm(again.weights @ again.vertices - y_cold) <= 1e-6
    with pytest.raises(ValueError, match="positive weight"):
        wolfe_minimize(domain.linear_minimizer, x0, rows, np.zeros(len(rows)), tol=1e-9,
                       max_iter=10)


@pytest.mark.parametrize("variant", ["wolfe", "pairwise", "away"])
def test_gap_at_the_iteration_cap_is_the_returned_points(variant):
    """At the cap the reported gap is recomputed at the returned point (it was the
    previous iterate's: on Birkhoff(6), 0.249 reported where the real gap was 0.310)."""
    rng = np.random.default_rng(5)
    domain = Birkhoff(6)
    x = rng.normal(size=36)
    capped = 0
    for cap in (1, 2, 3, 5):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = frank_wolfe_solve(domain, x, tol=1e-14, max_iter=cap, variant=variant)
        if not res.converged and res.iterations == cap:
            capped += 1
            assert any(f"stopped after {cap} iterations" in str(w.message) for w in caught)
        g = res.point - x
        real = float(g @ res.point - g @ domain.linear_minimizer(g))
        assert res.gap == pytest.approx(real, rel=1e-12, abs=1e-12)
    assert capped >= 2
