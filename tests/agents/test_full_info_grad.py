"""private-ftrl-grad / private-ftpl-grad: Agarwal-Singh private FTRL / FTPL fed the
clipped gradients ``g_t = clip_L(grad f_t(x_t))`` of convex Lipschitz losses (on
synthetic labelled data; the real-data game ``DPFullInfo-Classification-v0`` is in
test_full_info_grad_classification.py, which needs the ``realdata`` extra).

Checked against: central finite differences of the loss (the counter input is the
gradient at the played point), the clip (an env whose gradients exceed the declared
``L``), the linear learners (bit-identical play on linear losses, and on hinge losses
whose linearization is the linear game ``theta_t = -y_t a_t``), the calibration of the
counter's noise for the sensitivity ``2L`` (l2) / ``2 L sqrt(d)`` (l1), the non-private
counterpart ``ftrl`` and the black-box audit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from agent_helpers import DELTA, claiming, played_points

import dp_online_envs  # noqa: F401  (registers the env ids)
from agents import counter_agent, make
from agents.common import clipped_gradient, gradient_sensitivity
from dp_online_envs import OnlineLearningEnv, build_env
from dp_online_envs.adversaries import ReplayAdversary
from dp_online_envs.domains import Ball
from dp_online_envs.lab.audit import audit
from dp_online_envs.losses import HingeLoss, LinearLoss, LogisticLoss
from dp_online_envs.wrappers import RegretRecorder

GRAD = {"private-ftrl-grad": {"epsilon": 1.0}, "private-ftpl-grad": {"epsilon": 1.0,
                                                                        "delta": DELTA}}
BASE = {"private-ftrl-grad": "private-ftrl", "private-ftpl-grad": "private-ftpl"}


def _margin(horizon: int = 64, loss: str = "logistic", dim: int = 8):
    """Labelled examples on the unit sphere of R^dim, labels of a planted separator
    with 10% flipped, replayed with a margin loss on the unit ball (a synthetic
    stand-in for ``DPFullInfo-Classification-v0``, which needs the realdata extra:
    see test_full_info_grad_classification.py)."""
    rng = np.random.default_rng(7)
    a = rng.normal(size=(horizon, dim))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    y = np.sign(a @ np.linspace(-1.0, 1.0, dim) + 1e-12)
    y[rng.random(horizon) < 0.1] *= -1.0
    family = {"logistic": LogisticLoss, "hinge": HingeLoss}[loss](dim)
    env = RegretRecorder(OnlineLearningEnv(Ball(dim), family,
                                           ReplayAdversary(np.column_stack([a, y])),
                                           feedback="full", horizon=horizon))
    return env, env.get_wrapper_attr("problem")




def _fd_gradient(loss, theta, x, h=1e-6) -> np.ndarray:
    e = np.eye(len(x))
    return np.array([(loss.value(theta, x + h * e[i]) - loss.value(theta, x - h * e[i]))
                     / (2 * h) for i in range(len(x))])


# ------------------------------------------------------- the counter's input
@pytest.mark.parametrize("loss", ["logistic", "hinge"])
@pytest.mark.parametrize("name", sorted(GRAD))
def test_counter_input_is_the_gradient_at_the_played_point(name, loss):
    """Noise off, the releases are the exact prefix sums of the counter inputs: each
    increment equals the finite-difference gradient of ``f_t`` at the point played."""
    env, problem = _margin(40, loss)
    agent = make(name, problem, seed=0, **GRAD[name])
    agent.noise = None
    agent.reset(1)
    agent.record_releases = True
    env.reset(seed=1)
    prev, done, checked = np.zeros(problem.dim), False, 0
    while not done:
        a = agent.act()
        x = problem.domain.to_point(a)  # FTRL on the ball plays its point x_t itself
        obs, _, done, _, _ = env.step(a)
        agent.update(a, obs)
        g = agent.releases[-1][1] - prev
        prev = agent.releases[-1][1]
        theta = problem.loss.clip_param(obs)
        margin = theta[-1] * float(theta[:-1] @ x)
        if loss == "hinge" and abs(1.0 - margin) < 1e-4:
            continue  # the kink: no finite difference
        np.testing.assert_allclose(g, _fd_gradient(problem.loss, theta, x), atol=1e-6)
        checked += 1
    assert checked >= 30
    assert np.any(np.abs(prev) > 0.1)  # the gradients are not all ~0
    assert agent.clipped_gradients == 0  # an honest env's gradients need no clip


class _SteepLogistic(LogisticLoss):
    """A logistic loss whose gradient is 5x the declared Lipschitz bound (a lying env)."""

    def subgradient(self, theta, x):
        return 5.0 * super().subgradient(theta, x)


@pytest.mark.parametrize("name", sorted(GRAD))
def test_gradients_above_the_declared_bound_are_clipped(name):
    dim = 4
    rng = np.random.default_rng(0)
    rows = np.column_stack([rng.normal(size=(10, dim)), np.sign(rng.normal(size=10))])
    rows[:, :-1] /= np.linalg.norm(rows[:, :-1], axis=1, keepdims=True)
    env = RegretRecorder(OnlineLearningEnv(Ball(dim), _SteepLogistic(dim),
                                           ReplayAdversary(rows), feedback="full",
                                           horizon=10))
    problem = env.get_wrapper_attr("problem")
    assert problem.lipschitz == 1.0
    agent = make(name, problem, seed=0, **GRAD[name])
    agent.noise = None
    agent.reset(0)
    agent.record_releases = True
    env.reset(seed=0)
    prev, done = np.zeros(dim), False
    while not done:
        a = agent.act()
        x = problem.domain.to_point(a)
        obs, _, done, _, _ = env.step(a)
        agent.update(a, obs)
        g = agent.releases[-1][1] - prev
        prev = agent.releases[-1][1]
        raw = problem.loss.subgradient(problem.loss.clip_param(obs), x)
        assert np.linalg.norm(raw) > 1.0 + 1e-6  # the lie: |grad| = 5 |a| sigmoid > 1
        assert np.linalg.norm(g) <= 1.0 + 1e-12
        np.testing.assert_allclose(g, raw / np.linalg.norm(raw), rtol=1e-12)
    assert agent.clipped_gradients == 10


def test_clipped_gradient_and_gradient_sensitivity():
    loss = LogisticLoss(3)
    theta = np.array([0.6, 0.0, 0.8, -1.0])
    g, clipped = clipped_gradient(loss, theta, np.zeros(3), 1.0)
    np.testing.assert_allclose(g, 0.5 * theta[:-1])  # -y a sigmoid(0)
    assert not clipped
    g, clipped = clipped_gradient(loss, theta, np.zeros(3), 0.25)
    assert clipped and np.linalg.norm(g) == pytest.approx(0.25)
    # the l_p diameters of the l2 ball of radius L, attained at g = -g'
    L, d = 1.5, 9
    assert gradient_sensitivity(L, d, 2) == 2 * L
    assert gradient_sensitivity(L, d, 1) == pytest.approx(2 * L * 3)
    u = L * np.ones(d) / 3.0
    assert np.abs(2 * u).sum() == pytest.approx(gradient_sensitivity(L, d, 1))
    with pytest.raises(ValueError, match="p=3"):
        gradient_sensitivity(L, d, 3)


# ------------------------------------------------------------- calibration
def test_ftrl_grad_entropic_rate_uses_the_gradient_width():
    problem = build_env("DPFullInfo-Experts-v0", horizon=100).get_wrapper_attr("problem")
    a = make("private-ftrl-grad", problem, epsilon=1.0, seed=0)
    L = problem.lipschitz  # sqrt(10): ||theta||_2 for theta in [0, 1]^10
    assert a.eta == pytest.approx(math.sqrt(8 * math.log(10) / 100) / (2 * L))
    assert a.sensitivity == pytest.approx(2 * L * math.sqrt(10))


def test_ftrl_grad_regret_bound_formula():
    """``D^2/(2s) + s T L^2/2 + s L T sqrt(d Var)``: at the default step
    ``s = D / (L sqrt T)`` it is ``D L sqrt(T) + D sqrt(T) sqrt(d Var)``; ``Var`` is the
    per-coordinate variance of a release (``ceil(log2 T)`` draws, Agarwal-Singh counter)."""
    _, problem = _margin(256)
    D, L, T, d = problem.diameter, problem.lipschitz, problem.horizon, problem.dim
    a = make("private-ftrl-grad", problem, seed=0, epsilon=2.0, delta=DELTA)
    var = math.ceil(math.log2(T)) * a._counter.noise_strategy.variance
    assert a.noise_norm() == pytest.approx(math.sqrt(d * var))
    assert a.regret_bound() == pytest.approx(D * L * math.sqrt(T)
                                             + D * math.sqrt(T) * math.sqrt(d * var))
    b = make("private-ftrl-grad", problem, seed=0, epsilon=2.0, delta=DELTA, eta=0.01)
    s = 0.005
    assert b.regret_bound() == pytest.approx(D**2 / (2 * s) + s * T * L**2 / 2
                                             + s * L * T * b.noise_norm())
    a.noise = None
    a.reset(0)
    assert a.noise_norm() == 0.0
    assert a.regret_bound() == pytest.approx(D * L * math.sqrt(T))
    experts = build_env("DPFullInfo-Experts-v0", horizon=50).get_wrapper_attr("problem")
    with pytest.raises(ValueError, match="l2 regularizer, got 'entropic'"):
        make("private-ftrl-grad", experts, seed=0, epsilon=1.0).regret_bound()


# ----------------------------------------------- the linear learners, bit for bit
LINEAR = [("private-ftrl-grad", {"epsilon": 1.0}),
          ("private-ftrl-grad", {"epsilon": 1.0, "delta": DELTA}),
          ("private-ftrl-grad", {"epsilon": 1.0, "delta": DELTA, "counter": "tree"}),
          ("private-ftpl-grad", {"epsilon": 1.0, "delta": DELTA}),
          ("private-ftpl-grad", {"epsilon": 1.0, "delta": DELTA, "counter": "tree"})]


@pytest.mark.parametrize("name,kw", LINEAR)
def test_on_linear_losses_it_is_the_linear_learner(name, kw):
    """``DPFullInfo-Sphere-v1`` (theta_set "l2"): the gradient is theta, the
    sensitivities coincide, the clip is a no-op."""
    env_id, env_kw = "DPFullInfo-Sphere-v1", {}
    env = build_env(env_id, horizon=64, **env_kw)
    problem = env.get_wrapper_attr("problem")
    grad = make(name, problem, seed=0, **kw)
    base = make(BASE[name], problem, seed=0, **kw)
    assert grad.sensitivity == base.sensitivity and grad.noise_scale == base.noise_scale
    for seed in (3, 4):
        assert np.array_equal(played_points(grad, env, seed), played_points(base, env, seed))
    assert not np.array_equal(played_points(grad, env, 3), played_points(grad, env, 4))


@pytest.mark.parametrize("name", sorted(GRAD))
def test_on_hinge_losses_it_is_the_linear_learner_on_minus_y_a(name):
    """On the unit ball every hinge margin ``y <a, x>`` is ``< 1`` (``||a|| = 1``), so the
    linearized game is the linear game ``theta_t = -y_t a_t``: the linear learner on
    that replayed sequence plays the same points, bit for bit (and its theorems apply)."""
    env, problem = _margin(128, "hinge")
    env.reset(seed=2)
    rows, done = [], False
    while not done:
        obs, _, done, _, _ = env.step(problem.domain.center)
        rows.append(problem.loss.clip_param(obs))
    lin_rows = np.array([clipped_gradient(problem.loss, r, np.zeros(problem.dim), 1.0)[0]
                         for r in rows])
    lin_env = RegretRecorder(OnlineLearningEnv(problem.domain, LinearLoss(problem.dim, "l2"),
                                               ReplayAdversary(lin_rows), feedback="full",
                                               horizon=len(rows)))
    kw = GRAD[name]
    grad_pts = played_points(make(name, problem, seed=0, **kw), env, 2)
    lin_pts = played_points(make(BASE[name], lin_env.get_wrapper_attr("problem"), seed=0, **kw),
                      lin_env, 2)
    assert np.array_equal(grad_pts, lin_pts)


@pytest.mark.parametrize("name", sorted(GRAD))
def test_refuses_what_it_cannot_play(name):
    kw = GRAD[name]
    with pytest.raises(ValueError, match="epsilon"):
        make(name, _margin()[1])
    if name == "private-ftpl-grad":
        with pytest.raises(ValueError, match="delta"):
            make(name, _margin()[1], epsilon=1.0)
    bandit = build_env("DPBandit-Convex-v1", horizon=10).get_wrapper_attr("problem")
    with pytest.raises(ValueError, match="full-information"):
        make(name, bandit, **kw)

    class NonConvex(LogisticLoss):
        convex = False

    p = OnlineLearningEnv(Ball(3), NonConvex(3), "oblivious", feedback="full",
                          horizon=10).problem
    with pytest.raises(ValueError, match="convex losses"):
        make(name, p, **kw)
    # the linear learners still refuse these losses
    with pytest.raises(ValueError, match="linear"):
        make(BASE[name], _margin()[1], **kw)


# --------------------------------------------- non-private limit, reproducibility
def test_ftrl_grad_without_noise_is_ftrl():
    env, problem = _margin(128)
    assert make("private-ftrl-grad", problem, epsilon=1.0).counterpart_for(problem) == "ftrl"
    quiet = make("private-ftrl-grad", problem, epsilon=1e6, seed=0)
    quiet.noise = None
    base = played_points(make("ftrl", problem, seed=0), env, 3)
    assert np.array_equal(played_points(quiet, env, 3), base)
    noisy = make("private-ftrl-grad", problem, epsilon=1.0, seed=0)
    assert not np.array_equal(played_points(noisy, env, 3), base)


@pytest.mark.parametrize("name", sorted(GRAD))
def test_same_seed_same_play(name):
    env, problem = _margin(64)
    a = played_points(make(name, problem, seed=0, **GRAD[name]), env, 5)
    b = played_points(make(name, problem, seed=0, **GRAD[name]), env, 5)
    c = played_points(make(name, problem, seed=0, **GRAD[name]), env, 6)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


# ----------------------------------------------------------- audit (black box)
def _small_hinge_env(horizon: int = 4):
    """Hinge losses on the unit ball of R^2 (few dimensions: the audit's statistic is
    estimated from a few hundred runs)."""
    rows = np.array([[0.6, 0.8, 1.0], [-0.8, 0.6, -1.0], [1.0, 0.0, 1.0], [0.0, 1.0, -1.0]])
    env = RegretRecorder(OnlineLearningEnv(Ball(2), HingeLoss(2), ReplayAdversary(rows),
                                           feedback="full", horizon=horizon))
    return env, env.get_wrapper_attr("problem")


def _first_rows(env, problem, n: int, seed: int = 1) -> np.ndarray:
    env.reset(seed=seed)
    return np.array([problem.loss.clip_param(env.step(problem.domain.center)[0])
                     for _ in range(n)])


@pytest.mark.parametrize("name", sorted(GRAD))
def test_black_box_audit_does_not_refute_the_claim(name):
    """The neighbour flips round 1's label (the default neighbour of a margin loss,
    ``(-a, -y)``, is the same loss: no signal)."""
    env, problem = _small_hinge_env()
    rows = _first_rows(env, problem, 4)
    flip = rows[0].copy()
    flip[-1] = -flip[-1]
    # The same test as the under-noised copy's below (its pair, its seed): at 400 runs
    # private-ftrl-grad's copy with a tenth of the noise is refuted as surely as at 1000
    # (see there), so the calibrated learner's audit keeps that power at 400.
    runs = 400 if name == "private-ftrl-grad" else 600
    result = audit(lambda seed: make(name, problem, seed=seed, **GRAD[name]), env, tau=1,
                   runs=runs, seed=1, sequence=rows, neighbour_theta=flip)
    assert result.passed, str(result)


@pytest.mark.parametrize("name", sorted(GRAD))
def test_under_noised_copy_is_caught(name, monkeypatch):
    """The counter sees epsilon * 10 (a tenth of the noise); the claim stays epsilon."""
    real = counter_agent.make_counter

    def weak_counter(*args, epsilon, **kwargs):
        return real(*args, epsilon=10.0 * epsilon, **kwargs)

    monkeypatch.setattr(counter_agent, "make_counter", weak_counter)
    env, problem = _small_hinge_env()
    kw = GRAD[name]

    def factory(seed):  # the counter's tenth of the noise, the claim kept: a false claim
        return claiming(make(name, problem, seed=seed, **kw), kw["epsilon"])

    # the neighbour flips the label of round 1: g_1 = -y a moves by 2 a (||2a|| = 2L);
    # the default neighbour (-a, -y) is the same hinge loss, no signal at all
    # runs per side: private-ftrl-grad's copy is refuted with 400 as surely as with 1000
    # (1000/1000 of 1000 draws of n distinct runs per side from a 1000-run audit's
    # samples, the same test on them, at n = 1000 and at 400; median eps_lb 2.48, 1.94);
    # private-ftpl-grad's keeps 1000 (997/1000 at 700).
    runs = 400 if name == "private-ftrl-grad" else 1000
    result = audit(factory, env, tau=1, runs=runs, seed=1,
                   neighbour_theta=np.array([0.6, 0.8, -1.0]))
    assert not result.passed, str(result)


