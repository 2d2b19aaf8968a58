"""The advertised bounds L and B are attained where the docstrings say they are exact."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dp_online_envs.domains.ball import Ball
from dp_online_envs.domains.box import Cube
from dp_online_envs.domains.ground_set import GroundSet
from dp_online_envs.domains.simplex import Simplex
from dp_online_envs.losses import (
    AbsoluteLinearLoss,
    ConcaveModularLoss,
    DistanceLoss,
    FacilityLocationLoss,
    GraphCutLoss,
    HingeLoss,
    LinearLoss,
    LogisticLoss,
    QuadraticLoss,
)

D = 4


def test_linear_unit_on_simplex_bound_is_one_and_attained():
    fam, dom = LinearLoss(D, "unit"), Simplex(D)
    assert fam.bound(dom) == 1.0
    assert fam.value(np.ones(D), np.eye(D)[2]) == 1.0
    assert fam.lipschitz(dom) == pytest.approx(math.sqrt(D))


@pytest.mark.parametrize(
    ("theta_set", "dom", "theta", "x"),
    [
        ("linf", Cube(D), np.ones(D), np.ones(D)),
        ("l2", Ball(D, 2.0), np.ones(D) / 2.0, np.ones(D)),
        ("l1", Ball(D, 2.0), np.eye(D)[0], 2.0 * np.eye(D)[0]),
        ("l1", Cube(D), np.eye(D)[1], np.ones(D)),
        ("unit", Cube(D), np.ones(D), np.ones(D)),
    ],
)
def test_linear_bound_attained(theta_set, dom, theta, x):
    fam = LinearLoss(D, theta_set)
    assert fam.param_space.contains(theta) and np.allclose(fam.clip_param(theta), theta)
    assert dom.contains(x)
    assert fam.value(theta, x) == pytest.approx(fam.bound(dom))


@pytest.mark.parametrize("theta_set", ["linf", "l2", "l1", "unit"])
def test_linear_lipschitz_attained_along_theta(theta_set):
    fam, dom = LinearLoss(D, theta_set), Ball(D, 1.0)
    theta = {"linf": np.ones(D), "unit": np.ones(D), "l2": np.eye(D)[0], "l1": np.eye(D)[0]}[
        theta_set
    ]
    x, y = np.zeros(D), theta / np.linalg.norm(theta)
    ratio = abs(fam.value(theta, y) - fam.value(theta, x)) / np.linalg.norm(y - x)
    assert ratio == pytest.approx(fam.lipschitz(dom))


def test_distance_bound_attained_on_ball_cube_simplex():
    c = 0.7
    fam = DistanceLoss(D, center_radius=c)
    a = -c * np.ones(D)
    for dom, x in [
        (Ball(D, 2.0), 2.0 * np.ones(D) / math.sqrt(D)),
        (Cube(D), np.ones(D)),
        (Simplex(D), np.eye(D)[0]),
    ]:
        assert fam.value(a, x) == pytest.approx(fam.bound(dom))
        # never looser than the simple triangle-inequality bound
        assert fam.bound(dom) <= dom.norm_bound(2) + c * math.sqrt(D) + 1e-12
    assert fam.lipschitz(Cube(D)) == 1.0


def test_absolute_linear_bound_attained_on_cube():
    fam, dom = AbsoluteLinearLoss(D), Cube(D)
    theta = np.append(np.ones(D) / math.sqrt(D), -1.0)
    assert fam.param_space.contains(theta)
    assert fam.value(theta, np.ones(D)) == pytest.approx(fam.bound(dom)) == pytest.approx(
        math.sqrt(D) + 1
    )


@pytest.mark.parametrize("r", [0.5, 2.0])
def test_hinge_and_logistic_bounds_attained_on_ball(r):
    dom = Ball(D, r)
    x = r * np.eye(D)[0]
    theta = np.append(-np.eye(D)[0], 1.0)  # y <a, x> = -r
    assert HingeLoss(D).value(theta, x) == pytest.approx(HingeLoss(D).bound(dom)) == 1 + r
    assert LogisticLoss(D).value(theta, x) == pytest.approx(LogisticLoss(D).bound(dom))
    # Lipschitz: the hinge gradient has norm exactly 1 there
    assert np.linalg.norm(HingeLoss(D).subgradient(theta, x)) == pytest.approx(1.0)


def test_quadratic_bounds_attained_on_simplex():
    H, c = 3.0, 0.4
    fam, dom = QuadraticLoss(D, strong_convexity=H, center_radius=c), Simplex(D)
    a, x = -c * np.ones(D), np.eye(D)[0]
    R2 = 1 + 2 * c + D * c**2
    assert fam.bound(dom) == pytest.approx(H / 2 * R2)
    assert fam.value(a, x) == pytest.approx(fam.bound(dom))
    assert np.linalg.norm(fam.subgradient(a, x)) == pytest.approx(fam.lipschitz(dom))
    # and it is never looser than the brief's H (N_2 + c sqrt(d)) formula
    assert fam.lipschitz(dom) <= H * (1 + c * math.sqrt(D)) + 1e-12


def test_graph_cut_bound_and_lipschitz_attained_on_star():
    n, M = 6, 2.0
    star = [(0, i) for i in range(1, n)]  # bipartite: max cut = all edges
    fam, dom = GraphCutLoss(n, star, scale=M), GroundSet(n)
    theta = np.ones(fam.param_dim)
    S = np.zeros(n, dtype=bool)
    S[0] = True
    assert fam.set_value(theta, S) == pytest.approx(fam.bound(dom)) == M
    x = np.linspace(1.0, 0.0, n)  # center first in the greedy order
    assert np.linalg.norm(fam.subgradient(theta, x)) == pytest.approx(fam.lipschitz(dom))


def test_concave_modular_bound_attained_when_modular_part_dominates():
    n = 9
    fam = ConcaveModularLoss(n, [[0, 1], [2]], scale=1.5)  # sum sqrt|G| < n, so Z = n
    theta = np.concatenate([np.zeros(2), np.ones(n)])
    dom = GroundSet(n)
    assert fam.set_value(theta, np.ones(n, dtype=bool)) == pytest.approx(-fam.bound(dom))
    # the Lipschitz bound min(...) is attained here too: g = -(M/n) 1
    g = fam.subgradient(theta, np.random.default_rng(0).random(n))
    assert np.linalg.norm(g) == pytest.approx(fam.lipschitz(dom))


def test_submodular_lipschitz_bounds_are_not_absurdly_loose():
    """Random greedy vectors reach a sizeable fraction of L (and never exceed it)."""
    rng = np.random.default_rng(0)
    n = 6
    for fam in [
        GraphCutLoss(n, [(i, j) for i in range(n) for j in range(i + 1, n)], unary=True),
        ConcaveModularLoss(n),
        FacilityLocationLoss(n, n_customers=2),
    ]:
        L = fam.lipschitz(GroundSet(n))
        best = 0.0
        for _ in range(400):
            theta = np.where(rng.random(fam.param_dim) < 0.5, fam.param_space.low,
                             fam.param_space.high)
            g = fam.subgradient(theta, rng.random(n))
            best = max(best, float(np.linalg.norm(g)))
        assert best <= L + 1e-12
        assert best >= 0.4 * L, (fam, best, L)
