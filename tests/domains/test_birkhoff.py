"""The Birkhoff polytope."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dp_online_envs.domains import Birkhoff

from .checks import lp_minimum, lp_tolerance, variational_violation


def test_oracle_matches_linprog():
    rng = np.random.default_rng(0)
    n = 5
    domain = Birkhoff(n)
    rows = np.kron(np.eye(n), np.ones((1, n)))
    cols = np.kron(np.ones((1, n)), np.eye(n))
    for c in rng.normal(size=(10, n * n)):
        ref = lp_minimum(c, domain.vertices(), A_eq=np.vstack([rows, cols]),
                         b_eq=np.ones(2 * n), bounds=(0, None))
        v = domain.linear_minimizer(c)
        assert c @ v == pytest.approx(ref, abs=lp_tolerance(c))
        m = v.reshape(n, n)
        assert np.all(m.sum(axis=0) == 1) and np.all(m.sum(axis=1) == 1)


def test_contains_violations():
    domain = Birkhoff(3)
    x = np.full(9, 1 / 3)
    assert domain.contains(x)
    row = x.copy()
    row[0] += 1e-3  # row 0 and column 0 sums off
    assert not domain.contains(row)
    cycle = np.zeros(9)
    cycle[[0, 4]], cycle[[1, 3]] = 1.0, -1.0  # a 2x2 cycle: every row/column sum is 0
    assert domain.contains(x + cycle / 3)  # entries (0, 1) and (1, 0) reach 0
    assert not domain.contains(x + (1 / 3 + 1e-3) * cycle)  # ... and then go negative
    assert domain.contains(x + (1 / 3 + 1e-3) * cycle, atol=1e-2)


def test_hull_and_inner_ball():
    for n in (2, 3, 5):
        domain = Birkhoff(n)
        hull = domain.affine_hull
        assert hull.rank == (n - 1) ** 2
        for j in range(hull.rank):
            m = hull.basis[:, j].reshape(n, n)
            np.testing.assert_allclose(m.sum(axis=0), 0, atol=1e-12)
            np.testing.assert_allclose(m.sum(axis=1), 0, atol=1e-12)
        center, radius = domain.inner_ball()
        assert radius == pytest.approx(1 / (n - 1))
        direction = -hull.project_direction(np.eye(n * n)[0])  # towards the facet x_00 = 0
        direction /= np.linalg.norm(direction)
        assert domain.contains(center + radius * direction)
        assert not domain.contains(center + 1.001 * radius * direction)


def test_projection_of_larger_instance():
    rng = np.random.default_rng(1)
    domain = Birkhoff(6)
    perms = np.array([domain.linear_minimizer(c) for c in rng.normal(size=(300, 36))])
    for _ in range(5):
        x = rng.normal(size=36)
        y = domain.project(x)
        assert domain.contains(y)
        assert variational_violation(x, y, perms) <= domain.projection_tol + 1e-12


def test_facts_and_errors():
    assert Birkhoff(3).diameter == pytest.approx(math.sqrt(6))
    assert Birkhoff(4).norm_bound(1) == 4 and Birkhoff(4).norm_bound(2) == 2
    assert Birkhoff(9).vertices() is None and len(Birkhoff(5).vertices()) == 120
    assert Birkhoff(2).name == "birkhoff" and Birkhoff(3).dim == 9
    for bad in (0, -1, 2.0, "3"):
        with pytest.raises(ValueError, match="n="):
            Birkhoff(bad)
