"""Online Newton Step (Hazan-Agarwal-Kale 2007, Alg. 2, Thm. 2) on the simplex."""

import itertools
import math

import numpy as np
import pytest

from agents import make
from agents.full_info.ons import ONS, ons_parameters, project_in_norm
from dp_online_envs.domains import Ball, Simplex
from dp_online_envs.losses import LinearLoss, LogWealthLoss
from dp_online_envs.problem import Problem


def _problem(k=2, r_min=0.8, r_max=1.2, horizon=100, loss=None):
    loss = LogWealthLoss(k, r_min=r_min, r_max=r_max) if loss is None else loss
    return Problem.build(Simplex(loss.dim), loss, "full", horizon)


def _hull(k):
    h = Simplex(k).affine_hull
    return np.asarray(h.point, float), np.asarray(h.basis, float)


# ------------------------------------------------------------------- parameters
@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_hull_lipschitz_is_the_largest_hull_gradient_norm(k):
    """Brute force: the sup of ||P r|| / <r, x> over the box and the simplex is at a box
    vertex and a simplex vertex (<r, x> is linear in x, ||P r|| / min r is quasi-convex
    in r along each coordinate); enumerate them all."""
    loss = LogWealthLoss(k, r_min=0.7, r_max=1.3)
    p = np.eye(k) - 1.0 / k
    best = max(np.linalg.norm(p @ r) / r.min()
               for r in map(np.array, itertools.product([0.7, 1.3], repeat=k)))
    assert loss.hull_lipschitz(Simplex(k)) == pytest.approx(best, rel=1e-12)
    # a bound: random points and parameters never exceed it
    rng = np.random.default_rng(k)
    for _ in range(500):
        r, x = rng.uniform(0.7, 1.3, size=k), rng.dirichlet(np.ones(k))
        assert np.linalg.norm(p @ loss.subgradient(r, x)) <= best * (1 + 1e-12)


def test_parameters_are_theorem_2s():
    """k = 2, relatives in [0.8, 1.2]: G = 0.4 sqrt(1/2) / 0.8, D = sqrt 2, 4 G D = 2,
    gamma = min(1/2, 1)/2 = 1/4, eps = 1 / (gamma^2 D^2) = 8."""
    a = make("ons", _problem(), seed=0)
    assert a.alpha == 1.0 and a.diameter == pytest.approx(math.sqrt(2))
    assert a.gradient_bound == pytest.approx(0.4 * math.sqrt(0.5) / 0.8)
    assert a.gamma == pytest.approx(0.25) and a.eps == pytest.approx(8.0)
    # the alpha branch of the min: a tiny G leaves gamma = alpha / 2
    assert ons_parameters(1e-3, 1.0, 0.3) == pytest.approx((0.15, 1 / 0.15 ** 2))
    for bad in ({"gradient_bound": 0.0}, {"diameter": math.inf}, {"alpha": -1.0}):
        kw = {"gradient_bound": 1.0, "diameter": 1.0, "alpha": 1.0, **bad}
        with pytest.raises(ValueError, match=f"{next(iter(bad))}="):
            ons_parameters(**kw)


def test_without_a_hull_bound_g_is_the_problems_lipschitz_constant():
    class NoHullBound(LogWealthLoss):
        hull_lipschitz = None

    a = make("ons", _problem(loss=NoHullBound(3, r_min=0.8, r_max=1.2)), seed=0)
    assert a.gradient_bound == a.problem.lipschitz == pytest.approx(
        math.sqrt(0.64 + 2 * 1.44) / 0.8)


def test_refuses_what_it_cannot_play():
    with pytest.raises(ValueError, match="ons needs exp-concave losses.*LinearLoss"):
        make("ons", _problem(loss=LinearLoss(3, theta_set="unit")), seed=0)
    with pytest.raises(ValueError, match="ons plays the simplex.*Ball"):
        make("ons", Problem.build(Ball(2), LinearLoss(2), "full", 10), seed=0)


# ------------------------------------------------------------------- projection
def _brute_projection(y, a, k, steps):
    """Minimum of (z - y)^T a (z - y) over a grid of the simplex (hull coordinates)."""
    c, u = _hull(k)
    best, arg = math.inf, None
    for i in itertools.product(range(steps + 1), repeat=k - 1):
        if sum(i) > steps:
            continue
        x = np.array([*i, steps - sum(i)], float) / steps
        z = u.T @ (x - c)
        v = float((z - y) @ a @ (z - y))
        if v < best:
            best, arg = v, z
    return best, arg


@pytest.mark.parametrize("k,seed", [(2, 0), (2, 1), (3, 0), (3, 1), (3, 2)])
def test_projection_in_the_a_norm_matches_brute_force(k, seed):
    rng = np.random.default_rng(seed)
    c, u = _hull(k)
    m = rng.standard_normal((k - 1, k - 1))
    a = m @ m.T + 0.1 * np.eye(k - 1)
    y = rng.standard_normal(k - 1)
    y *= 1.5 / np.linalg.norm(y)  # farther from the center than any vertex
    assert np.any(c + u @ y < 0)  # outside: the QP is needed
    z = project_in_norm(y, a, c, u, np.zeros(k - 1))
    x = c + u @ z
    assert np.all(x >= -1e-15) and abs(x.sum() - 1) < 1e-12
    val = float((z - y) @ a @ (z - y))
    brute, _ = _brute_projection(y, a, k, 400 if k == 2 else 300)
    assert val <= brute + 1e-12
    assert val >= brute - 0.05 * abs(brute)  # the grid is within a step of the optimum
    # inside: the point itself, no solve
    inside = u.T @ (np.full(k, 1.0 / k) + 0.01 * (np.eye(k)[0] - 1.0 / k) - c)
    assert np.array_equal(project_in_norm(inside, a, c, u, np.zeros(k - 1)), inside)


def test_projection_pulls_an_infeasible_solver_answer_back(monkeypatch):
    """The guard after the solver: an answer outside the simplex (here a NaN-free but
    infeasible point) is shrunk toward the center until it is feasible."""
    from types import SimpleNamespace


    c, u = _hull(3)
    monkeypatch.setattr("scipy.optimize.minimize",
                        lambda *a, **k: SimpleNamespace(x=np.array([5.0, 0.0])))
    z = project_in_norm(np.array([5.0, 0.0]), np.eye(2), c, u, np.zeros(2))
    x = c + u @ z
    assert np.all(x >= -1e-15) and np.isclose(x.min(), 0.0, atol=1e-15)
    monkeypatch.setattr("scipy.optimize.minimize",
                        lambda *a, **k: SimpleNamespace(x=np.array([np.nan, 0.0])))
    z0 = np.array([0.01, 0.0])
    assert np.array_equal(project_in_norm(np.array([5.0, 0.0]), np.eye(2), c, u, z0), z0)


# ---------------------------------------------------------------------- updates
def _reference_two_assets(thetas, r_min, r_max):
    """Alg. 2 by hand on two assets: the hull is the segment x = (1/2, 1/2) + s u,
    u = (1, -1)/sqrt 2, |s| <= 1/sqrt 2, where the A-norm projection is a clip."""
    g_bound = (r_max - r_min) * math.sqrt(0.5) / r_min
    d = math.sqrt(2)
    gamma = 0.5 * min(1 / (4 * g_bound * d), 1.0)
    a, s, xs = 1 / (gamma ** 2 * d ** 2), 0.0, []
    u = np.array([1.0, -1.0]) / math.sqrt(2)
    for r in thetas:
        x = np.array([0.5, 0.5]) + s * u
        xs.append(x)
        r = np.clip(r, r_min, r_max)
        g = -(r @ u) / (r @ x)
        a += g * g
        s = min(max(s - g / (gamma * a), -1 / math.sqrt(2)), 1 / math.sqrt(2))
    return np.array(xs)


def test_play_matches_algorithm_2_by_hand_on_two_assets():
    rng = np.random.default_rng(3)
    thetas = rng.uniform(0.8, 1.2, size=(300, 2))
    thetas[:, 0] *= 1.05  # a drift: asset 0 wins, so ONS reaches the boundary
    thetas[:, 0] = np.minimum(thetas[:, 0], 1.2)
    agent = make("ons", _problem(horizon=300), seed=0)
    played = []
    for r in thetas:
        played.append(agent.act())
        agent.update(played[-1], r)
    ref = _reference_two_assets(thetas, 0.8, 1.2)
    np.testing.assert_allclose(np.array(played), ref, rtol=0, atol=1e-12)
    assert agent.projections > 0 and agent.projection_gap < 1e-9
    # the guard after the projection: every played point is in the simplex exactly
    # (c + U z alone can be -1e-17 at the boundary)
    assert min(p.min() for p in played) >= 0.0
    assert max(abs(p.sum() - 1.0) for p in played) <= 1e-15


def test_feedback_is_clipped_before_the_gradient():
    """The guard that makes G a gradient bound: a relative outside [r_min, r_max]
    moves ONS as its clipped value does (and is counted)."""
    thetas = np.array([[0.3, 1.0], [1.0, 5.0], [1.1, 0.9]])
    agent = make("ons", _problem(horizon=3), seed=0)
    played = []
    for r in thetas:
        played.append(agent.act())
        agent.update(played[-1], r)
    np.testing.assert_allclose(played, _reference_two_assets(thetas, 0.8, 1.2), atol=1e-12)
    assert agent.clipped_feedback == 2


def test_three_assets_update_is_the_newton_step_then_the_projection():
    """One round on three assets by hand in hull coordinates: A_1 = eps I + g g^T,
    y = -A_1^{-1} g / gamma, and y stays inside (no projection)."""
    prob = _problem(k=3, horizon=5)
    agent = make("ons", prob, seed=0)
    c, u = _hull(3)
    r = np.array([1.01, 0.99, 1.0])
    agent.update(agent.act(), r)
    g = u.T @ (-r / (r @ c))
    a = agent.eps * np.eye(2) + np.outer(g, g)
    x = c + u @ (-np.linalg.solve(a, g) / agent.gamma)
    np.testing.assert_allclose(agent.point_played, x / x.sum(), atol=1e-15)
    assert agent.projections == 0


def test_regret_within_theorem_2_and_far_below_on_a_drifting_market():
    """Thm. 2's bound 5 (1/alpha + G D) n log T on a synthetic market where asset 0
    grows 1% a day faster: ONS's regret is within it (and the uniform portfolio's is
    linear)."""
    from agents import play
    from dp_online_envs.adversaries import ReplayAdversary
    from dp_online_envs.adversaries.base import LossSequence
    from dp_online_envs.envs.online_env import OnlineLearningEnv
    from dp_online_envs.wrappers import FeedbackGuard, RegretRecorder

    rng = np.random.default_rng(0)
    T = 2000
    thetas = np.column_stack([rng.uniform(0.95, 1.07, T), rng.uniform(0.95, 1.05, T)])

    def regret(name):
        env = FeedbackGuard(RegretRecorder(OnlineLearningEnv(
            Simplex(2), LogWealthLoss(2, r_min=0.8, r_max=1.2),
            ReplayAdversary(LossSequence(thetas)), feedback="full", horizon=T)), "full")
        agent = make(name, env.get_wrapper_attr("problem"), seed=0)
        return play(env, agent, seed=0, agent_seed=0).regret, agent

    r_ons, agent = regret("ons")
    r_center, _ = regret("center")
    bound = 5 * (1 / agent.alpha + agent.gradient_bound * agent.diameter) * 1 * math.log(T)
    assert 0 < r_ons <= bound and r_ons < 0.2 * r_center


def test_same_seed_same_play_and_reset_restarts():
    agent = make("ons", _problem(horizon=50), seed=0)
    assert isinstance(agent, ONS)
    rng = np.random.default_rng(1)
    thetas = rng.uniform(0.8, 1.2, size=(50, 2))

    def run():
        agent.reset(0)
        out = []
        for r in thetas:
            out.append(agent.act())
            agent.update(out[-1], r)
        return np.array(out)

    a, b = run(), run()
    assert np.array_equal(a, b) and np.array_equal(a[0], [0.5, 0.5])
