"""The ground set 2^[n]."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gymnasium import spaces

from dp_online_envs.domains import GroundSet


@pytest.mark.parametrize("action", [
    [True, False, True], [1, 0, 1], [1.0, 0.0, 1.0], np.array([1, 0, 1], dtype=np.int8),
    (1, 0, 1), np.array([True, False, True]),
])
def test_to_point_accepts_indicators(action):
    x = GroundSet(3).to_point(action)
    assert x.dtype == np.float64
    np.testing.assert_array_equal(x, [1.0, 0.0, 1.0])


@pytest.mark.parametrize("action", [
    [0.5, 0, 1], [2, 0, 1], [-1, 0, 0], [np.nan, 0, 0], [1, 0], [[1, 0, 1]], "101",
    ["1", "0", "1"], None, [1 + 1e-12, 0, 0],
])
def test_to_point_rejects(action):
    with pytest.raises(ValueError):
        GroundSet(3).to_point(action)


def test_oracle_and_geometry():
    domain = GroundSet(4)
    np.testing.assert_array_equal(domain.linear_minimizer([-1.0, 0.0, 2.0, -0.5]),
                                  [1.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(domain.project([-1.0, 0.3, 2.0, 1.0]), [0.0, 0.3, 1.0, 1.0])
    assert domain.diameter == 2.0
    assert domain.inner_ball()[1] == 0.5
    assert domain.norm_bound(1) == 4 and domain.norm_bound(2) == 2
    assert domain.norm_bound(math.inf) == 1
    assert isinstance(domain.action_space, spaces.MultiBinary)
    assert domain.vertices().shape == (16, 4)
    assert GroundSet(17).vertices() is None
    assert domain.name == "ground-set"


@pytest.mark.parametrize("n", [0, -1, 2.0, None])
def test_constructor_rejects(n):
    with pytest.raises(ValueError, match="n="):
        GroundSet(n)
