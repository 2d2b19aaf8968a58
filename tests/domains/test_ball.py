"""Euclidean and l1 balls."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dp_online_envs.domains import Ball, L1Ball, frank_wolfe_projection

from .checks import (
    lp_minimum,
    lp_tolerance,
    projection_error_bound,
    variational_violation,
)


def boundary_samples(dim, radius, rng, count=2000):
    u = rng.normal(size=(count, dim))
    return radius * u / np.linalg.norm(u, axis=1, keepdims=True)


def test_ball_oracle():
    rng = np.random.default_rng(0)
    domain = Ball(4, 2.5)
    samples = boundary_samples(4, 2.5, rng)
    for c in rng.normal(size=(10, 4)):
        v = domain.linear_minimizer(c)
        assert c @ v == pytest.approx(-2.5 * np.linalg.norm(c))
        assert c @ v <= (samples @ c).min() + 1e-12
        assert domain.contains(v)
    v0 = domain.linear_minimizer(np.zeros(4))
    assert np.linalg.norm(v0) == pytest.approx(2.5)


def test_ball_projection_is_exact():
    rng = np.random.default_rng(1)
    domain = Ball(3, 2.0)
    samples = boundary_samples(3, 2.0, rng)
    for scale in (0.3, 3.0, 30.0):
        for x in rng.normal(size=(5, 3)) * scale:
            y = domain.project(x)
            assert domain.contains(y)
            assert variational_violation(x, y, samples) <= 1e-12
            if np.linalg.norm(x) <= 2.0:
                np.testing.assert_array_equal(y, x)
            else:
                assert np.linalg.norm(y) == pytest.approx(2.0)
                # Matches the generic oracle-based QP within its certified error.
                qp = frank_wolfe_projection(domain, x)
                assert np.linalg.norm(qp - y) <= (projection_error_bound(domain, x, qp)
                                                  + projection_error_bound(domain, x, y) + 1e-12)


def test_ball_facts():
    domain = Ball(5, 2.0)
    assert domain.name == "ball" and domain.dim == 5
    assert domain.diameter == 4.0
    center, radius = domain.inner_ball()
    np.testing.assert_array_equal(center, np.zeros(5))
    assert radius == 2.0
    assert domain.norm_bound(1) == pytest.approx(2.0 * math.sqrt(5))  # at 2/sqrt(5) * 1
    assert domain.contains(np.full(5, 2.0 / math.sqrt(5)))
    assert domain.norm_bound(2) == 2.0 and domain.norm_bound(np.inf) == 2.0
    assert domain.affine_hull.rank == 5
    assert domain.vertices() is None
    assert domain.action_space.low.min() == -2.0 and domain.action_space.high.max() == 2.0
    assert domain.contains(np.array([2.0 + 1e-10, 0, 0, 0, 0]))
    assert not domain.contains(np.array([2.0 + 1e-6, 0, 0, 0, 0]))


def test_ball_inner_ball_and_pushed_out_points():
    rng = np.random.default_rng(2)
    domain = Ball(3)
    for x in boundary_samples(3, 1.0, rng, 50):
        assert domain.contains(x)
        assert not domain.contains(1.001 * x)


def test_l1_oracle_matches_linprog():
    rng = np.random.default_rng(3)
    dim, radius = 5, 1.5
    domain = L1Ball(dim, radius)
    # x = u - w with u, w >= 0 and sum(u + w) <= R.
    for c in rng.normal(size=(10, dim)):
        cc = np.concatenate([c, -c])
        ref = lp_minimum(cc, radius * np.vstack([np.eye(2 * dim), np.zeros(2 * dim)]),
                         A_ub=np.ones((1, 2 * dim)), b_ub=[radius], bounds=(0, None))
        assert c @ domain.linear_minimizer(c) == pytest.approx(ref, abs=lp_tolerance(cc))


def test_l1_projection_matches_generic_qp():
    rng = np.random.default_rng(4)
    domain = L1Ball(6, 2.0)
    for scale in (0.1, 1.0, 10.0):
        for x in rng.normal(size=(5, 6)) * scale:
            y, qp = domain.project(x), frank_wolfe_projection(domain, x, tol=1e-12)
            assert variational_violation(x, y, domain.vertices()) <= 1e-10
            assert domain.contains(qp, atol=1e-9)
            assert np.linalg.norm(qp - y) <= (projection_error_bound(domain, x, qp)
                                              + projection_error_bound(domain, x, y) + 1e-12)


def test_l1_facts():
    domain = L1Ball(4, 2.0)
    assert domain.name == "l1-ball"
    assert domain.inner_ball()[1] == pytest.approx(1.0)  # R / sqrt(dim)
    # The inner ball touches the facet <1, x> = R at R/dim * 1.
    assert domain.contains(np.full(4, 0.5))
    assert not domain.contains(np.full(4, 0.5 + 1e-6))


@pytest.mark.parametrize("cls", [Ball, L1Ball])
@pytest.mark.parametrize("radius", [0.0, -1.0, math.nan, math.inf])
def test_bad_radius(cls, radius):
    with pytest.raises(ValueError, match="radius"):
        cls(3, radius)


@pytest.mark.parametrize("cls", [Ball, L1Ball])
@pytest.mark.parametrize("dim", [0, -2, 1.5, "3"])
def test_bad_dim(cls, dim):
    with pytest.raises(ValueError, match="dim"):
        cls(dim)
