"""Simplex and Arms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dp_online_envs.domains import Arms, Simplex, frank_wolfe_projection, project_simplex

from .checks import (
    lp_minimum,
    lp_tolerance,
    projection_error_bound,
    variational_violation,
)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(arrays(np.float64, st.integers(1, 8), elements=st.floats(-50, 50)))
def test_simplex_projection_is_exact(x):
    k = x.size
    y = project_simplex(x)
    assert y.min() >= 0 and abs(y.sum() - 1) < 1e-12
    assert variational_violation(x, y, np.eye(k)) <= 1e-9 * max(1.0, np.abs(x).max())


def test_projection_matches_generic_qp():
    """The exact projection has a zero certified error; the generic Frank-Wolfe QP lies
    within its own certified error of it (whether or not it reached its tolerance)."""
    rng = np.random.default_rng(0)
    domain = Simplex(6)
    for scale in (0.01, 1.0, 100.0):
        for _ in range(5):
            x = rng.normal(size=6) * scale
            y, qp = domain.project(x), frank_wolfe_projection(domain, x, tol=1e-13)
            assert domain.contains(y) and domain.contains(qp, atol=1e-9)
            assert projection_error_bound(domain, x, y) <= 1e-7 * max(1.0, scale)
            assert np.linalg.norm(qp - y) <= (projection_error_bound(domain, x, qp)
                                              + projection_error_bound(domain, x, y) + 1e-12)


def test_projection_fixed_points_and_known_values():
    domain = Simplex(3)
    np.testing.assert_allclose(domain.project([0.2, 0.3, 0.5]), [0.2, 0.3, 0.5])
    np.testing.assert_allclose(domain.project([1.0, 1.0, 1.0]), [1 / 3] * 3)
    np.testing.assert_allclose(domain.project([5.0, 0.0, -3.0]), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(domain.project([0.5, 0.5, -1.0]), [0.5, 0.5, 0.0])


def test_oracle_matches_linprog():
    rng = np.random.default_rng(1)
    k = 7
    domain = Simplex(k)
    for c in rng.normal(size=(10, k)):
        ref = lp_minimum(c, np.eye(k), A_eq=np.ones((1, k)), b_eq=[1.0], bounds=(0, None))
        assert c @ domain.linear_minimizer(c) == pytest.approx(ref, abs=lp_tolerance(c))


@pytest.mark.parametrize("k", [2, 3, 10])
def test_inner_ball_is_the_largest(k):
    domain = Simplex(k)
    center, radius = domain.inner_ball()
    assert radius == pytest.approx(1 / math.sqrt(k * (k - 1)))
    hull = domain.affine_hull
    towards_facet = -hull.project_direction(np.eye(k)[0])
    towards_facet /= np.linalg.norm(towards_facet)
    assert domain.contains(center + radius * towards_facet)
    assert not domain.contains(center + 1.001 * radius * towards_facet)


def test_contains_tolerance():
    domain = Simplex(3)
    assert domain.contains([0.5, 0.5 + 1e-10, -1e-10])
    assert not domain.contains([0.5, 0.5 + 1e-6, 0.0])
    assert not domain.contains([1.001, -0.001, 0.0])
    assert domain.contains([1.001, -0.001, 0.0], atol=1e-2)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3", None])
def test_constructor_rejects_bad_k(bad):
    with pytest.raises(ValueError, match="k="):
        Simplex(bad)
    with pytest.raises(ValueError, match="k="):
        Arms(bad)


def test_simplex_space_and_large_k():
    assert Simplex(4).action_space == spaces.Box(0.0, 1.0, (4,), np.float64)
    big = Simplex(5000)
    assert big.vertices() is None
    assert big.linear_minimizer(np.arange(5000.0)[::-1])[-1] == 1.0


@pytest.mark.parametrize("action", [2, np.int64(2), np.int8(2), np.uint16(2), np.array(2),
                                    np.array([2]), np.array([[2]])])
def test_arms_to_point(action):
    domain = Arms(4)
    x = domain.to_point(action)
    np.testing.assert_array_equal(x, [0.0, 0.0, 1.0, 0.0])
    assert x.dtype == np.float64
    with pytest.raises(ValueError):
        x[0] = 5.0  # read-only: the shared row cannot be corrupted


@pytest.mark.parametrize("action", [-1, 4, 2.0, np.float64(1.0), True, np.bool_(True),
                                    np.array([1, 2]), np.array([]), "1", None, [0.0],
                                    np.array(1.5)])
def test_arms_to_point_rejects(action):
    with pytest.raises(ValueError):
        Arms(4).to_point(action)


def test_arms_space_and_large_k():
    domain = Arms(3)
    assert domain.action_space == spaces.Discrete(3)
    assert domain.name == "arms" and domain.dim == 3
    big = Arms(3000)
    x = big.to_point(2999)
    assert x[2999] == 1.0 and x.sum() == 1.0
    x[0] = 1.0  # a fresh array when rows are not precomputed
    assert big.to_point(0)[1:].sum() == 0.0
