"""Base polytopes of submodular functions."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dp_online_envs.domains import SubmodularBasePolytope
from dp_online_envs.domains.base import subset_masks

from .cases import facility_location, separable
from .checks import (
    convex_combinations,
    lp_minimum,
    lp_tolerance,
    max_pairwise,
    pushed_out,
    sphere_in_hull,
)


def h_representation(domain):
    """``x(S) <= f(S)`` for every S, ``x(V) = f(V)``, from the set function itself."""
    masks = subset_masks(domain.n)
    values = np.array([domain.f(m) for m in masks])
    return masks[1:-1].astype(float), values[1:-1], values[-1]


def test_greedy_matches_linprog():
    rng = np.random.default_rng(0)
    for domain in [SubmodularBasePolytope(facility_location(5, 3, seed=1), 5),
                   SubmodularBasePolytope(separable, 5),
                   SubmodularBasePolytope.concave_cardinality(5, np.log1p)]:
        a_ub, b_ub, total = h_representation(domain)
        for c in rng.normal(size=(10, domain.n)):
            ref = lp_minimum(c, domain.vertices(), A_ub=a_ub, b_ub=b_ub,
                             A_eq=np.ones((1, domain.n)), b_eq=[total], bounds=(None, None))
            assert c @ domain.linear_minimizer(c) == pytest.approx(ref, abs=lp_tolerance(c))


def test_generic_and_cardinality_paths_agree():
    """The same f given as a black box and as g(|S|): table-based LP vs closed forms."""
    rng = np.random.default_rng(1)
    n = 5
    closed = SubmodularBasePolytope.concave_cardinality(n, np.sqrt)
    generic = SubmodularBasePolytope(lambda m: math.sqrt(m.sum()), n)
    assert closed.is_cardinality_based and not generic.is_cardinality_based
    np.testing.assert_allclose(np.sort(closed.vertices(), axis=0),
                               np.sort(generic.vertices(), axis=0))
    c1, r1 = closed.inner_ball()
    c2, r2 = generic.inner_ball()
    assert r2 == pytest.approx(r1, rel=1e-7)
    np.testing.assert_allclose(c1, c2, atol=1e-6)
    assert generic.diameter == pytest.approx(closed.diameter)
    for p in (1, 2, np.inf):
        assert generic.norm_bound(p) == pytest.approx(closed.norm_bound(p))
    np.testing.assert_allclose(generic.affine_hull.basis @ generic.affine_hull.basis.T,
                               closed.affine_hull.basis @ closed.affine_hull.basis.T, atol=1e-12)
    for c in rng.normal(size=(10, n)):
        np.testing.assert_allclose(closed.linear_minimizer(c), generic.linear_minimizer(c))
    points = list(convex_combinations(closed.vertices(), rng, 20))
    points += [pushed_out(closed, closed.affine_hull.project_direction(c), 1e-4)
               for c in rng.normal(size=(20, n))]
    points += list(sphere_in_hull(closed, rng, 20, scale=1.05))
    verdicts = [closed.contains(x) for x in points]
    assert verdicts == [generic.contains(x) for x in points]
    assert 0 < np.mean(verdicts) < 1


def test_concave_cardinality_inner_ball_is_tight():
    domain = SubmodularBasePolytope.concave_cardinality(6, np.sqrt)
    center, radius = domain.inner_ball()
    np.testing.assert_allclose(center, np.full(6, math.sqrt(6) / 6))
    # The closed form's minimizing size k gives the touching facet x(S) <= g(k).
    n, g = 6, np.sqrt(np.arange(7))
    k = int(np.argmin([(g[k] - k * g[n] / n) / math.sqrt(k * (1 - k / n))
                       for k in range(1, n)])) + 1
    direction = domain.affine_hull.project_direction(np.r_[np.ones(k), np.zeros(n - k)])
    direction /= np.linalg.norm(direction)
    assert domain.contains(center + radius * direction)
    assert not domain.contains(center + 1.001 * radius * direction)


def test_permutahedron():
    domain = SubmodularBasePolytope.permutahedron(4)
    expected = np.array(sorted(itertools.permutations([1.0, 2.0, 3.0, 4.0])))
    np.testing.assert_allclose(np.array(sorted(map(tuple, domain.vertices()))), expected)
    assert domain.diameter == pytest.approx(math.sqrt(4 * (16 - 1) / 3))
    assert domain.contains([2.5, 2.5, 2.5, 2.5])
    assert not domain.contains([4.0, 4.0, 1.0, 1.0])  # x({0, 1}) = 8 > f = 7
    assert not domain.contains([1.0, 2.0, 3.0, 4.1])  # x(V) != f(V)


def test_contains_against_brute_force():
    rng = np.random.default_rng(2)
    domain = SubmodularBasePolytope(facility_location(5, 4, seed=3), 5)
    a_ub, b_ub, total = h_representation(domain)
    verdicts = []
    for x in list(sphere_in_hull(domain, rng, 30, scale=3.0)) + list(
            convex_combinations(domain.vertices(), rng, 10)):
        verdicts.append(bool(np.all(a_ub @ x <= b_ub + 1e-9) and abs(x.sum() - total) <= 1e-9))
        assert domain.contains(x) == verdicts[-1]
    assert 0 < np.mean(verdicts) < 1


def test_separable_function_hull():
    domain = SubmodularBasePolytope(separable, 5)
    assert [c.tolist() for c in domain.components] == [[0, 1, 2], [3, 4]]
    hull = domain.affine_hull
    assert hull.rank == 3
    assert hull.point[:3].sum() == pytest.approx(math.sqrt(3))
    assert hull.point[3:].sum() == pytest.approx(1.0)
    # Moving mass between components leaves the polytope (and its hull).
    x = hull.point + 1e-3 * np.array([1.0, 0, 0, -1.0, 0])
    assert not domain.contains(x)


def test_modular_function_is_a_point():
    weights = np.array([1.0, -2.0, 0.5])
    domain = SubmodularBasePolytope(lambda m: float(m @ weights), 3)
    np.testing.assert_allclose(domain.vertices(), [weights])
    assert domain.affine_hull.rank == 0 and domain.inner_ball()[1] == 0.0
    assert domain.diameter == 0.0
    np.testing.assert_allclose(domain.project(np.zeros(3)), weights)
    linear = SubmodularBasePolytope.concave_cardinality(4, lambda k: 2.0 * k)
    assert linear.affine_hull.rank == 0 and linear.contains(np.full(4, 2.0))


def test_action_space_is_the_tight_box():
    domain = SubmodularBasePolytope(facility_location(5, 3, seed=4), 5)
    verts = domain.vertices()
    np.testing.assert_allclose(domain.action_space.low, verts.min(axis=0))
    np.testing.assert_allclose(domain.action_space.high, verts.max(axis=0))


def test_large_generic_function():
    """n > 16: membership by Frank-Wolfe, sampled components, box-bounded quantities."""
    rng = np.random.default_rng(5)
    n = 18
    f = facility_location(n, 4, seed=6)
    domain = SubmodularBasePolytope(f, n)
    assert domain.vertices() is None
    verts = np.array([domain.linear_minimizer(c) for c in rng.normal(size=(20, n))])
    assert all(domain.contains(v) for v in verts)
    assert all(domain.contains(x) for x in convex_combinations(verts, rng, 5))
    basis = domain.affine_hull.basis
    assert domain.affine_hull.rank == n - 1
    for c in rng.normal(size=(5, n)):
        assert not domain.contains(pushed_out(domain, basis @ (basis.T @ c), 1e-3))
    center, radius = domain.inner_ball()
    assert radius == 0.0 and domain.contains(center)
    assert domain.diameter >= max_pairwise(verts)
    assert domain.norm_bound(1) == pytest.approx(domain.f(np.ones(n, dtype=bool)))  # monotone
    assert domain.norm_bound(2) >= np.linalg.norm(verts, axis=1).max()


def test_large_separable_components_are_found():
    n = 18

    def f(mask):
        return float(np.sqrt(mask[:10].sum()) + np.log1p(mask[10:].sum()))

    domain = SubmodularBasePolytope(f, n)
    assert [c.tolist() for c in domain.components] == [list(range(10)), list(range(10, 18))]
    assert domain.affine_hull.rank == n - 2


@pytest.mark.parametrize("fn,n,match", [
    (lambda m: 1.0 + m.sum(), 3, "empty"),
    (lambda m: float(m.sum()) ** 2, 3, "submodular"),
    (lambda m: math.nan if m.all() else 0.0, 3, "f\\(V\\)"),
    (lambda m: 0.0, 0, "n="),
])
def test_constructor_rejects(fn, n, match):
    with pytest.raises(ValueError, match=match):
        SubmodularBasePolytope(fn, n)


@pytest.mark.parametrize("g,match", [
    (lambda k: k**2, "concave"), (lambda k: k + 1.0, "empty"), (lambda k: math.inf, "finite"),
])
def test_concave_cardinality_rejects(g, match):
    with pytest.raises(ValueError, match=match):
        SubmodularBasePolytope.concave_cardinality(4, g)
