"""Boxes and the cube."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dp_online_envs.domains import Box, Cube, frank_wolfe_projection

from .checks import lp_minimum, lp_tolerance, projection_error_bound


def test_oracle_matches_linprog_and_projection_matches_qp():
    rng = np.random.default_rng(0)
    low, high = np.array([-1.0, 0.0, 2.0, -3.0]), np.array([1.0, 0.5, 4.0, -1.0])
    domain = Box(low, high)
    for c in rng.normal(size=(10, 4)):
        ref = lp_minimum(c, domain.vertices(), bounds=list(zip(low, high)))
        assert c @ domain.linear_minimizer(c) == pytest.approx(ref, abs=lp_tolerance(c))
    for x in rng.normal(size=(10, 4)) * 4:
        # Box projection is a clip; the Frank-Wolfe QP is within its certified error.
        y, qp = domain.project(x), frank_wolfe_projection(domain, x, tol=1e-12)
        np.testing.assert_array_equal(y, np.clip(x, low, high))
        assert domain.contains(qp, atol=1e-9)
        assert np.linalg.norm(qp - y) <= projection_error_bound(domain, x, qp) + 1e-12


def test_constructor_forms():
    a = Box(-1.0, 2.0, dim=3)
    np.testing.assert_array_equal(a.low, [-1.0] * 3)
    b = Box([0.0, 1.0], 5.0)
    np.testing.assert_array_equal(b.high, [5.0, 5.0])
    assert b.dim == 2
    c = Box(0.0, [1.0, 2.0, 3.0], dim=3)
    assert c.diameter == pytest.approx(math.sqrt(14))
    assert c.norm_bound(1) == 6.0 and c.norm_bound(np.inf) == 3.0
    assert c.inner_ball()[1] == 0.5


@pytest.mark.parametrize("args", [
    ((1.0, 0.0), {"dim": 2}),                  # low > high
    (([0.0, 2.0], [1.0, 1.0]), {}),            # low > high in one coordinate
    (([0.0, 0.0], [1.0, 1.0, 1.0]), {}),       # mismatched shapes
    ((0.0, 1.0), {}),                          # scalars need dim
    (([0.0, 0.0], [1.0, 1.0]), {"dim": 3}),    # dim mismatch
    ((0.0, 1.0), {"dim": 0}),
    ((np.nan, 1.0), {"dim": 2}),
    ((0.0, np.inf), {"dim": 2}),
    ((np.zeros((2, 2)), 1.0), {}),
])
def test_constructor_rejects(args):
    pos, kw = args
    with pytest.raises(ValueError):
        Box(*pos, **kw)


def test_degenerate_coordinate():
    domain = Box([0.0, 1.0], [1.0, 1.0])
    assert domain.affine_hull.rank == 1
    assert domain.inner_ball()[1] == 0.5
    assert domain.contains([0.3, 1.0]) and not domain.contains([0.3, 1.001])
    assert len(domain.vertices()) == 2


def test_cube():
    domain = Cube(4)
    assert domain.name == "cube"
    assert domain.diameter == pytest.approx(4.0)
    assert domain.inner_ball()[1] == 1.0
    assert domain.norm_bound(1) == 4.0 and domain.norm_bound(2) == 2.0
    np.testing.assert_array_equal(domain.project([2.0, -3.0, 0.5, 1.0]), [1.0, -1.0, 0.5, 1.0])
    assert len(domain.vertices()) == 16
    assert Cube(17).vertices() is None
    with pytest.raises(ValueError, match="dim"):
        Cube(0)
