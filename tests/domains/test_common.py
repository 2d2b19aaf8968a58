"""Checks every domain against brute force over its vertices."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gymnasium import spaces

from .cases import CASES
from .checks import (
    convex_combinations,
    max_pairwise,
    oracle_gap,
    pushed_out,
    sphere_in_hull,
    variational_violation,
)


@pytest.fixture(params=CASES, ids=[c.id for c in CASES])
def case(request):
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


def test_vertices_have_the_right_shape(case):
    d = case.make()
    verts = d.vertices()
    assert verts is not None and verts.ndim == 2 and verts.shape[1] == d.dim
    assert isinstance(d.name, str) and d.name and d.name != "domain"
    assert len(np.unique(np.round(verts, 9), axis=0)) == len(verts)


def test_oracle_matches_brute_force(case, rng):
    d = case.make()
    verts = d.vertices()
    costs = list(rng.normal(size=(15, d.dim))) + list(
        rng.integers(-2, 3, size=(10, d.dim)).astype(float)  # many ties
    )
    for c in costs + [np.zeros(d.dim)]:
        assert oracle_gap(d, c, verts) <= 1e-9
        v = d.linear_minimizer(c)
        assert v.shape == (d.dim,)
        assert d.contains(v)


def test_oracle_rejects_wrong_shape(case):
    d = case.make()
    with pytest.raises(ValueError):
        d.linear_minimizer(np.zeros(d.dim + 1))
    with pytest.raises(ValueError):
        d.linear_minimizer(np.full(d.dim, np.nan))


def test_contains_vertices_and_convex_combinations(case, rng):
    d = case.make()
    verts = d.vertices()
    assert all(d.contains(v) for v in verts)
    assert all(d.contains(x) for x in convex_combinations(verts, rng, 30))


def test_points_pushed_outward_are_not_contained(case, rng):
    d = case.make()
    basis = d.affine_hull.basis
    for c in rng.normal(size=(10, d.dim)):
        assert not d.contains(pushed_out(d, c))
        inside = basis @ (basis.T @ c)  # stays in the hull, crosses a facet
        if np.linalg.norm(inside) > 1e-6:
            assert not d.contains(pushed_out(d, inside))


#: The cases whose affine hull is a proper subspace (the others have no "off the hull").
LOWER_DIMENSIONAL = [c for c in CASES if c.rank < c.make().dim]


@pytest.mark.parametrize("case", LOWER_DIMENSIONAL, ids=[c.id for c in LOWER_DIMENSIONAL])
def test_points_off_the_hull_are_not_contained(case, rng):
    d = case.make()
    hull = d.affine_hull
    assert hull.rank < d.dim
    for r in rng.normal(size=(5, d.dim)):
        normal = r - hull.project_direction(r)
        x = d.center + 1e-3 * normal / np.linalg.norm(normal)
        assert not d.contains(x)


@pytest.mark.parametrize("bad", [
    "wrong-length", "matrix", "nan", "inf", "string", "none",
])
def test_contains_is_false_on_malformed_input(case, bad):
    d = case.make()
    x = {
        "wrong-length": np.zeros(d.dim + 1),
        "matrix": np.zeros((1, d.dim)),
        "nan": np.full(d.dim, np.nan),
        "inf": np.full(d.dim, np.inf),
        "string": "abc",
        "none": None,
    }[bad]
    assert d.contains(x) is False


def test_projection_is_optimal(case, rng):
    d = case.make()
    verts = d.vertices()
    center, _ = d.inner_ball()
    for scale in (0.1, 1.0, 10.0):
        for _ in range(4):
            x = center + scale * rng.normal(size=d.dim)
            y = d.project(x)
            assert y.shape == (d.dim,)
            assert d.contains(y, atol=1e-8)
            assert variational_violation(x, y, verts) <= 1e-8
            assert math.isclose(d.distance(x), np.linalg.norm(x - y), abs_tol=1e-12)


def test_projection_fixes_points_of_the_domain(case, rng):
    d = case.make()
    for x in convex_combinations(d.vertices(), rng, 5):
        assert np.linalg.norm(d.project(x) - x) <= 1e-4  # sqrt(2 tol) for Frank-Wolfe


def test_projection_rejects_wrong_shape(case):
    d = case.make()
    with pytest.raises(ValueError):
        d.project(np.zeros(d.dim + 1))


def test_affine_hull(case):
    d = case.make()
    hull = d.affine_hull
    assert hull.point.shape == (d.dim,)
    assert hull.basis.shape == (d.dim, case.rank)
    assert hull.rank == case.rank
    np.testing.assert_allclose(hull.basis.T @ hull.basis, np.eye(case.rank), atol=1e-10)
    assert d.contains(hull.point)
    offsets = d.vertices() - hull.point
    np.testing.assert_allclose(offsets @ hull.basis @ hull.basis.T, offsets, atol=1e-9)


def test_hull_rank_equals_vertex_span(case):
    d = case.make()
    verts = d.vertices()
    span = np.linalg.matrix_rank(verts - verts[0], tol=1e-9) if len(verts) > 1 else 0
    assert span == case.rank


def test_inner_ball_is_inside(case, rng):
    d = case.make()
    center, radius = d.inner_ball()
    assert d.contains(center)
    np.testing.assert_allclose(center, d.center)
    if case.rank == 0:
        assert radius == 0.0
        return
    assert radius > 0
    for x in sphere_in_hull(d, rng, 60):
        assert d.contains(x, atol=1e-9)
    # The center is in the relative interior: the hull point is at positive depth too.
    assert np.all(np.abs(d.affine_hull.project_direction(center - d.affine_hull.point)
                         - (center - d.affine_hull.point)) < 1e-9)


def test_norm_bound_matches_vertices(case):
    d = case.make()
    verts = d.vertices()
    for p in (1, 2, np.inf):
        brute = float(np.linalg.norm(verts, ord=p, axis=1).max())
        assert d.norm_bound(p) == pytest.approx(brute, rel=1e-9, abs=1e-12)
    for p in (0, 3, -1, "two", None):
        with pytest.raises(ValueError):
            d.norm_bound(p)


def test_diameter_matches_vertices(case):
    d = case.make()
    assert d.diameter == pytest.approx(max_pairwise(d.vertices()), rel=1e-9, abs=1e-7)


def test_action_space(case):
    d = case.make()
    space = d.action_space
    verts = d.vertices()
    if isinstance(space, spaces.Box):
        assert space.dtype == np.float64 and space.shape == (d.dim,)
        assert np.all(verts >= space.low - 1e-12) and np.all(verts <= space.high + 1e-12)
        for v in verts:
            np.testing.assert_array_equal(d.to_point(v), v)
        with pytest.raises(ValueError):
            d.to_point(np.zeros(d.dim + 1))
        with pytest.raises(ValueError):
            d.to_point(np.full(d.dim, np.nan))
    else:
        assert isinstance(space, (spaces.Discrete, spaces.MultiBinary))
        space.seed(0)
        for _ in range(10):
            x = d.to_point(space.sample())
            assert any(np.array_equal(x, v) for v in verts)
