"""Frank-Wolfe projection: optimality, reported gap, variants, membership."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dp_online_envs.domains import (
    Birkhoff,
    FlowPolytope,
    Simplex,
    SubmodularBasePolytope,
    UniformMatroid,
    frank_wolfe_contains,
    frank_wolfe_projection,
    frank_wolfe_projection_with_gap,
    frank_wolfe_solve,
    project_simplex,
)

from .cases import facility_location
from .checks import (
    convex_combinations,
    projection_error_bound,
    pushed_out,
    variational_violation,
)

VARIANTS = ("wolfe", "pairwise", "away")


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("tol", [1e-6, 1e-10])
def test_reported_gap_is_below_tol_and_certifies_optimality(variant, tol):
    rng = np.random.default_rng(1)
    domain = Birkhoff(4)
    verts = domain.vertices()
    for _ in range(5):
        x = rng.normal(size=16)
        y, gap = frank_wolfe_projection_with_gap(domain.linear_minimizer, x, tol=tol,
                                                 variant=variant)
        assert 0.0 <= gap or abs(gap) < 1e-12
        assert gap <= tol
        assert variational_violation(x, y, verts) <= gap + 1e-12
        assert domain.contains(y)


@pytest.mark.parametrize("variant", VARIANTS)
def test_matches_exact_simplex_projection(variant):
    rng = np.random.default_rng(2)
    domain = Simplex(7)
    for _ in range(10):
        x = rng.normal(size=7) * 2
        y = frank_wolfe_projection(domain, x, tol=1e-14, variant=variant)
        # ||y - y*|| <= sqrt(gap(y)), the gap recomputed at y: certified, whether or not
        # the solver reached its tolerance.
        assert domain.contains(y, atol=1e-9)
        bound = projection_error_bound(domain, x, y)
        assert np.linalg.norm(y - project_simplex(x)) <= bound + 1e-12
        assert bound <= 1e-5  # gap <= 1e-10: far above rounding, far below a wrong answer


def test_result_record_is_consistent():
    rng = np.random.default_rng(3)
    domain = FlowPolytope.grid(3, 4)
    x = rng.normal(size=domain.dim)
    res = frank_wolfe_solve(domain, x, tol=1e-9)  # well above rounding (~1e-15 here)
    assert res.converged and res.gap <= 1e-9 and res.iterations >= 1
    # the reported gap is the gap of the returned point
    assert projection_error_bound(domain, x, res.point) ** 2 == pytest.approx(res.gap, abs=1e-12)
    assert np.all(res.weights > 0) and res.weights.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(res.weights @ res.atoms, res.point, atol=1e-10)
    verts = domain.vertices()
    for atom in res.atoms:  # every active atom is a vertex
        assert np.min(np.abs(verts - atom).sum(axis=1)) < 1e-12


def test_warm_start_from_a_vertex():
    rng = np.random.default_rng(4)
    domain = UniformMatroid(8, 3)
    x = rng.normal(size=8)
    y0 = frank_wolfe_projection(domain, x, tol=1e-12)
    y1 = frank_wolfe_projection(domain, x, tol=1e-12, x0=domain.linear_minimizer(-np.ones(8)))
    assert domain.contains(y0, atol=1e-9) and domain.contains(y1, atol=1e-9)
    b0, b1 = projection_error_bound(domain, x, y0), projection_error_bound(domain, x, y1)
    assert np.linalg.norm(y0 - y1) <= b0 + b1 + 1e-12
    assert max(b0, b1) <= 1e-5


def test_hard_base_polytope_converges():
    """Many nearly coincident vertices: slow for pairwise FW, easy for min-norm-point."""
    domain = SubmodularBasePolytope(facility_location(5, 3, seed=7), 5)
    rng = np.random.default_rng(20240611)
    for x in convex_combinations(domain.vertices(), rng, 10):
        res = frank_wolfe_solve(domain, x, tol=1e-10)  # well above rounding (~1e-15)
        assert res.converged
        # x lies in the polytope, so it is its own projection: certified distance
        bound = projection_error_bound(domain, x, res.point)
        assert np.linalg.norm(res.point - x) <= bound + 1e-12 and bound <= 1e-5


def test_iteration_cap_warns_and_reports_the_gap():
    rng = np.random.default_rng(5)
    domain = Birkhoff(6)
    x = rng.normal(size=36)
    with pytest.warns(RuntimeWarning, match="stopped after 2 iterations"):
        res = frank_wolfe_solve(domain, x, tol=1e-12, max_iter=2, variant="pairwise")
    assert not res.converged and res.gap > 1e-12
    assert domain.contains(res.point)


def test_bad_arguments():
    domain = Simplex(3)
    with pytest.raises(ValueError, match="variant"):
        frank_wolfe_projection(domain, np.zeros(3), variant="newton")
    with pytest.raises(ValueError, match="tol"):
        frank_wolfe_projection(domain, np.zeros(3), tol=0.0)


@pytest.mark.parametrize("domain", [Birkhoff(4), SubmodularBasePolytope(
    facility_location(6, 4, seed=3), 6), FlowPolytope.grid(3, 3)], ids=repr)
def test_membership_agrees_with_exact_contains(domain):
    rng = np.random.default_rng(6)
    verts = domain.vertices()
    points = list(convex_combinations(verts, rng, 10))
    points += [pushed_out(domain, c, 1e-4) for c in rng.normal(size=(10, domain.dim))]
    basis = domain.affine_hull.basis
    points += [pushed_out(domain, basis @ (basis.T @ c), 1e-4)
               for c in rng.normal(size=(10, domain.dim))]
    points += list(domain.center + rng.normal(size=(10, domain.dim)) * 0.3)
    answers = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x in points:
            answers.append(frank_wolfe_contains(domain, x, 1e-9))
            assert answers[-1] == domain.contains(x, 1e-9)
    assert 5 <= sum(answers) <= len(answers) - 5
