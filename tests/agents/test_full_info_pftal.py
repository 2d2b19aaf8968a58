"""Follow the approximate leader: Smith-Thakurta PFTAL / FTAL and Cardoso-Cummings
SubmodPFTAL / Hazan-Kale online submodular minimization.

Parameters are checked against values computed by hand from Smith & Thakurta (NeurIPS
2013) Thm. 4 / App. C Thm. 11 and Cardoso & Cummings (AISTATS 2019) Thm. 7 as
documented in ``agents/full_info/pftal.py`` and ``agents/full_info/submod_pftal.py``;
every learner plays its envs end to end and must never have an action projected.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from agent_helpers import DELTA, T_SHORT, discrete_gaussian_scale
from agent_helpers import center_regret as _center_regret
from agent_helpers import make_env as _env
from agent_helpers import play_agent as _play
from agent_helpers import problem_of as _problem

import dp_online_envs  # noqa: F401  (registers the env ids)
from agents import make, play
from agents.common import clip_norm
from agents.full_info.hazan_kale_submodular import hazan_kale_eta
from agents.full_info.pftal import (
    ftal_leader,
    ftal_regularization,
    pftal_regularization,
    st_log,
)
from agents.full_info.submod_pftal import (
    lovasz_gradient_bounds,
    submod_pftal_regularization,
    threshold_round,
)
from agents.privacy import gaussian_sigma, laplace_scale
from dp_online_envs.domains import Ball, GroundSet
from dp_online_envs.lab.audit import audit
from dp_online_envs.losses import ConcaveModularLoss, FacilityLocationLoss, GraphCutLoss

SC, CVX, SUB = "DPFullInfo-StronglyConvex-v1", "DPFullInfo-Convex-v1", "DPFullInfo-Submodular-v1"



# ------------------------------------------------------------ end to end, feasible
E2E = [
    ("pftal", SC, {}, {"epsilon": 1.0}),
    ("pftal", SC, {}, {"epsilon": 1.0, "delta": DELTA}),
    ("pftal", SC, {}, {"epsilon": 1.0, "delta": DELTA, "counter": "factorization"}),
    ("pftal", SC, {"adversary": "drifting"}, {"epsilon": 1.0, "counter": "honaker"}),
    ("pftal", CVX, {}, {"epsilon": 1.0}),
    ("pftal", CVX, {"loss": "hinge"}, {"epsilon": 1.0, "delta": DELTA}),
    ("pftal", CVX, {"loss": "logistic"}, {"epsilon": 0.5, "counter": "agarwal-singh"}),
    ("ftal", SC, {}, {}),
    ("ftal", CVX, {}, {}),
    ("ftal", CVX, {"loss": "distance"}, {}),
    ("submod-pftal", SUB, {}, {"epsilon": 1.0}),
    ("submod-pftal", SUB, {}, {"epsilon": 1.0, "delta": DELTA}),
    ("submod-pftal", SUB, {"loss": "graph-cut"}, {"epsilon": 1.0, "gradient_bound": "family"}),
    ("submod-pftal", SUB, {"loss": "facility-location"}, {"epsilon": 2.0}),
    ("hazan-kale-submodular", SUB, {}, {}),
    ("hazan-kale-submodular", SUB, {"loss": "facility-location", "adversary": "switching"}, {}),
]


@pytest.mark.parametrize("name,env_id,env_kw,kw", E2E,
                         ids=[f"{n}-{e}-{sorted(ek)}-{sorted(k)}" for n, e, ek, k in E2E])
def test_plays_feasible_actions_end_to_end(name, env_id, env_kw, kw):
    env = _env(env_id, **env_kw)
    agent, summary = _play(name, env, **kw)
    assert summary.rounds == T_SHORT
    assert summary.projected_actions == 0
    assert agent.t == T_SHORT
    assert agent.clipped_feedback == 0
    assert getattr(agent, "clipped_gradients", 0) == 0
    assert math.isfinite(summary.regret_hi)


def test_submodular_actions_are_subsets():
    env = _env(SUB, 30)
    for name, kw in [("submod-pftal", {"epsilon": 1.0}), ("hazan-kale-submodular", {})]:
        agent = make(name, _problem(env), seed=2, **kw)
        a = agent.act()
        assert a.dtype == np.int8 and a.shape == (8,) and set(np.unique(a)) <= {0, 1}
        assert env.action_space.contains(a)


# -------------------------------------------------- the leader is one projection
# No iterative reference solver: the FTAL objective
#   <v, w> + (H/2) sum_s ||w - w_s||^2 = (H t/2) ||w - c||^2 + const,  c = mean(w_s) - v/(H t)
# is an isotropic quadratic, so its minimizer on a ball or a box is c scaled onto the ball
# or clipped to the box (written out here, not through Domain.project). Independently of
# that closed form, the Frank-Wolfe gap max_{y in C} <grad(w), w - y> is computed exactly
# for a ball or a box; it bounds objective(w) - min_C objective from above, and by
# (H t)-strong convexity ||w - w*||^2 <= 2 gap / (H t): a certificate, not a tolerance.


def _ball_gap(g: np.ndarray, w: np.ndarray, radius: float) -> float:
    """``max_{||y|| <= radius} <g, w - y> = <g, w> + radius ||g||``."""
    return float(g @ w + radius * np.linalg.norm(g))


def _cube_gap(g: np.ndarray, w: np.ndarray) -> float:
    """``max_{y in [0,1]^n} <g, w - y> = <g, w> - sum_i min(g_i, 0)``."""
    return float(g @ w - np.minimum(g, 0.0).sum())


@pytest.mark.parametrize("trial", range(6))
def test_ftal_leader_is_the_certified_minimizer_on_the_ball(trial):
    rng = np.random.default_rng(trial)
    d, t = 4, int(rng.integers(1, 8))
    ball = Ball(d, radius=float(rng.uniform(0.5, 2.0)))
    ws = np.array([ball.project(rng.normal(size=d)) for _ in range(t)])
    v = rng.normal(scale=[0.1, 1.0, 5.0, 30.0][trial % 4], size=d)  # inside and outside
    H = float(rng.uniform(0.2, 3.0))

    def objective(w):
        return v @ w + 0.5 * H * np.sum((w - ws) ** 2)

    leader = ftal_leader(ball, v, ws.sum(axis=0), t, H)
    c = ws.mean(axis=0) - v / (H * t)
    np.testing.assert_allclose(leader, c * min(1.0, ball.radius / np.linalg.norm(c)),
                               rtol=1e-12, atol=1e-12)
    assert np.linalg.norm(leader) <= ball.radius * (1.0 + 1e-12)
    g = v + H * (t * leader - ws.sum(axis=0))
    gap = _ball_gap(g, leader, ball.radius)
    assert gap <= 1e-10 * (1.0 + np.linalg.norm(g)) * ball.radius
    # the certificate has teeth: a feasible point off the minimizer has a positive gap
    other = ball.project(leader + 0.1 * rng.normal(size=d))
    assert _ball_gap(v + H * (t * other - ws.sum(axis=0)), other, ball.radius) > 1e-6
    y = rng.normal(size=(200, d))
    y *= ball.radius * rng.random((200, 1)) ** (1 / d) / np.linalg.norm(y, axis=1, keepdims=True)
    assert all(objective(leader) <= objective(p) + 1e-12 for p in y)


def test_regularized_leader_is_the_certified_minimizer_on_the_cube():
    # App. C: h_t = f_t + (lam/2)||w||^2 with f_t H_f-strongly convex; the linear term
    # sum grad h = v + lam sum w_tau with modulus H_f + lam. Cube [0,1]^n.
    rng = np.random.default_rng(3)
    cube = GroundSet(5)
    for _ in range(4):
        t = int(rng.integers(1, 6))
        xs = rng.random((t, 5))
        v = rng.normal(scale=3.0, size=5)
        hf, lam = float(rng.uniform(0, 1)), float(rng.uniform(0.1, 2))
        H = hf + lam
        lin = v + lam * xs.sum(axis=0)
        leader = ftal_leader(cube, lin, xs.sum(axis=0), t, H)
        np.testing.assert_allclose(leader, np.clip(xs.mean(axis=0) - lin / (H * t), 0, 1),
                                   rtol=1e-12, atol=1e-12)
        assert np.all((leader >= 0) & (leader <= 1))
        g = lin + H * (t * leader - xs.sum(axis=0))
        assert _cube_gap(g, leader) <= 1e-10 * (1.0 + np.abs(g).sum())
        other = np.clip(leader + 0.1 * rng.normal(size=5), 0, 1)
        assert _cube_gap(lin + H * (t * other - xs.sum(axis=0)), other) > 1e-6


def test_submod_pftal_point_is_the_projection_of_the_release():
    env = _env(SUB, 20)
    a = make("submod-pftal", _problem(env), epsilon=1.0, seed=4)
    a.record_releases = True
    rng = np.random.default_rng(0)
    for t in range(1, 6):
        a.update(a.act(), _problem(env).loss.sample_param(rng))
        v = a.releases[-1][1]
        np.testing.assert_allclose(a.point_played, np.clip(-v / (a.H * t), 0, 1), atol=1e-12)


def test_pftal_point_is_the_projection_of_the_release():
    p = _problem(_env(CVX, 20))  # convex: x = Proj_ball(-v / (lam t))
    a = make("pftal", p, epsilon=1.0, seed=4)
    a.record_releases = True
    rng = np.random.default_rng(0)
    for t in range(1, 6):
        a.update(a.act(), p.loss.sample_param(rng))
        v = a.releases[-1][1]
        np.testing.assert_allclose(a.point_played, p.domain.project(-v / (a.H * t)),
                                   atol=1e-12)


# ---------------------------------------------------------------------- regret
def test_pftal_regret_is_logarithmic_at_large_epsilon():
    # epsilon = 300 rather than 1e6: the dp_accounting PLD accountant certifying the
    # guarantee discretizes the Laplace privacy loss on a grid growing with epsilon
    # (0.6 s at 300, tens of GB at 1e6). Per-node Laplace scale 10 * 2 L sqrt(5) / 300
    # = 0.48: the noise displaces w_t by O(1/t), a O(1) total.
    # i.i.d. quadratics around a random mean (optimum away from the center, so a
    # learner that does not learn pays linear regret).
    env = _env(SC, 1000, adversary="stochastic")
    p = _problem(env)
    L, H, D = p.lipschitz, p.strong_convexity, p.diameter
    agent = make("pftal", p, epsilon=300.0)
    regrets = [play(env, agent, seed=s, agent_seed=s).regret_hi for s in range(3)]
    assert np.mean(regrets) <= 2.0 * (L**2 / H) * math.log(1000)
    assert np.mean(regrets) <= 0.2 * np.mean([_center_regret(env, s) for s in range(3)])
    # The non-private FTAL: deterministic bound 2 (L + H D)^2 (1 + ln T) / H
    # (Fact 9 + Claim 10; sum_{t<=T} 1/t <= 1 + ln T).
    for T, adversary in [(250, "stochastic"), (2000, "stochastic"), (2000, "switching")]:
        env = _env(SC, T, adversary=adversary)
        _, s = _play("ftal", env, seed=1)
        assert s.regret_hi <= 2.0 * (L + H * D) ** 2 * (1 + math.log(T)) / H
        assert s.regret_hi <= 2.0 * (L**2 / H) * math.log(T)



def test_privacy_costs_regret_at_small_epsilon():
    env = _env(SC, 500, adversary="stochastic")
    p = _problem(env)
    big = np.mean([play(env, make("pftal", p, epsilon=300.0), seed=s, agent_seed=s).regret_hi
                   for s in range(2)])
    small = np.mean([play(env, make("pftal", p, epsilon=0.5), seed=s, agent_seed=s).regret_hi
                     for s in range(2)])
    assert small > 3 * big


def test_pftal_convex_at_large_epsilon_is_close_to_ftal():
    # eps = 300 > p log^1.5 T: clamped, so lam equals the non-private one.
    env = _env(CVX, 1000, adversary="stochastic", loss="distance")
    p = _problem(env)
    priv = make("pftal", p, epsilon=300.0)
    ftal = make("ftal", p)
    assert priv.H == pytest.approx(ftal.H)
    r_priv = np.mean([play(env, priv, seed=s, agent_seed=s).regret_hi for s in range(3)])
    r_ftal = np.mean([play(env, ftal, seed=s, agent_seed=s).regret_hi for s in range(3)])
    assert r_priv < 1.5 * r_ftal + 5.0
    assert r_ftal < p.lipschitz * p.domain.norm_bound(2) * math.sqrt(1000 * math.log(1000))
    assert r_ftal < 0.3 * np.mean([_center_regret(env, s) for s in range(3)])


def test_hazan_kale_below_its_bound_and_learns():
    T = 2000
    env = _env(SUB, T, adversary="stochastic")
    agent, s = _play("hazan-kale-submodular", env, seed=0)
    assert agent.regret_bound == pytest.approx(4.0 * math.sqrt(8 * T))
    assert s.regret_hi <= agent.regret_bound
    # Playing the fractional midpoint's rounding every round does far worse.
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    done, info = False, {}
    while not done:
        _, _, done, _, info = env.step(threshold_round(np.full(8, 0.5), rng.random()))
    assert s.regret_hi < 0.5 * info["regret"].regret_hi


def test_submod_pftal_regret_shrinks_with_epsilon():
    env = _env(SUB, 1000, adversary="stochastic")
    p = _problem(env)
    reg = {}
    for eps in (0.5, 300.0):
        agent = make("submod-pftal", p, epsilon=eps, gradient_bound="family")
        reg[eps] = np.mean([play(env, agent, seed=s, agent_seed=s).regret_hi for s in range(2)])
    assert reg[300.0] < 0.5 * reg[0.5]


# ---------------------------------------------------------- parameter formulas
def test_st_log_and_clip_norm():
    assert st_log(1) == 1.0 and st_log(2) == 1.0
    assert st_log(1000) == pytest.approx(6.907755279)
    g, c = clip_norm(np.array([3.0, 4.0]), 1.0)
    assert c and np.linalg.norm(g) == pytest.approx(1.0)
    g, c = clip_norm(np.array([3.0, 4.0]), 5.0)
    assert not c and np.array_equal(g, [3.0, 4.0])
    g, c = clip_norm(np.array([1.0, -3.0]), 2.0, ord=1)
    assert c and np.abs(g).sum() == pytest.approx(2.0)


def test_pftal_regularization_thm_11():
    # T = 1000, p = 5, eps = 1, L = 1, ||C|| = 1: ln T = 6.907755, ln^2.5 T = 125.4129,
    # eps' = min(1, 5 * 18.1554) = 1, lam = sqrt(5 * 125.4126 / 1000) = 0.7918742.
    assert pftal_regularization(1000, 5, 1.0, 1.0, 1.0) == pytest.approx(0.7918742, rel=1e-6)
    # Units restored: lam scales as L / ||C||.
    assert pftal_regularization(1000, 5, 1.0, 3.0, 2.0) == pytest.approx(1.5 * 0.7918742,
                                                                        rel=1e-6)
    # T = 4096, p = 2, eps = 0.5, L = 2, ||C|| = 1: ln T = 8.317766,
    # ln^2.5 T = 199.5339, lam = 2 sqrt(2 * 199.5339 / (0.5 * 4096)) = 0.8828530.
    assert pftal_regularization(4096, 2, 0.5, 2.0, 1.0) == pytest.approx(0.8828530, rel=1e-6)
    # Clamp: eps = 1000 > p ln^1.5 T = 90.777 -> lam = sqrt(ln T / T) = 0.0831129,
    # the non-private tuning.
    assert pftal_regularization(1000, 5, 1000.0, 1.0, 1.0) == pytest.approx(0.0831129, rel=1e-6)
    assert ftal_regularization(1000, 1.0, 1.0) == pytest.approx(0.0831129, rel=1e-6)
    # The clamp is continuous at eps = p ln^1.5 T.
    edge = 5 * math.log(1000) ** 1.5
    assert pftal_regularization(1000, 5, edge, 1.0, 1.0) == pytest.approx(0.0831129, rel=1e-6)


def test_pftal_parameters_on_the_envs():
    # Convex env: Ball(5), absolute loss, L = 1, ||C|| = 1.
    a = make("pftal", _problem(_env(CVX, 1000)), epsilon=1.0)
    assert a.loss_strong_convexity == 0.0
    assert a.regularization == pytest.approx(0.7918742, rel=1e-6) == a.H
    assert a.gradient_bound == 1.0
    assert a.noise == "laplace" and a.levels == 10
    assert a.sensitivity == pytest.approx(2.0 * math.sqrt(5))
    # Laplace scales are the exact discrete mechanism's t g, within 2^-15 of b
    assert a.noise_scale == pytest.approx(10 * 2.0 * math.sqrt(5) / 1.0, rel=1e-4)
    # Strongly convex env: quadratic H = 1, no regularizer, L = H sqrt(1 + 2 sqrt 5 + 5).
    s = make("pftal", _problem(_env(SC, 1000)), epsilon=2.0)
    L = math.sqrt(6 + 2 * math.sqrt(5))
    assert s.gradient_bound == pytest.approx(L) == pytest.approx(3.2360680)
    assert s.regularization == 0.0 and s.H == 1.0
    assert s.sensitivity == pytest.approx(2 * L * math.sqrt(5)) == pytest.approx(14.472136)
    assert s.noise_scale == pytest.approx(10 * 14.472136 / 2.0, rel=1e-4)
    f = make("ftal", _problem(_env(CVX, 1000)))
    assert f.H == pytest.approx(0.0831129, rel=1e-6) and f.privacy is None
    assert make("ftal", _problem(_env(SC, 1000))).H == 1.0


@pytest.mark.parametrize("kw", [{"epsilon": 0.7}, {"epsilon": 0.7, "delta": DELTA},
                                {"epsilon": 0.7, "delta": DELTA, "counter": "factorization"}])
def test_pftal_declared_privacy_and_noise_scale(kw):
    a = make("pftal", _problem(_env(SC, 300)), **kw)
    L, d, levels = a.gradient_bound, 5, 9  # 300 < 2^9
    assert a.levels == (None if "counter" in kw else levels)
    assert a.privacy.epsilon == pytest.approx(0.7, rel=1e-3)
    assert a.privacy.epsilon <= 0.7 * (1 + 1e-4) + 1e-6
    assert a.privacy.delta == kw.get("delta", 0.0)
    if "delta" not in kw:
        assert a.noise == "laplace" and a.sensitivity == pytest.approx(2 * L * math.sqrt(d))
        assert a.noise_scale == pytest.approx(laplace_scale(levels * 2 * L * math.sqrt(d), 0.7),
                                              rel=1e-4)
    elif "counter" not in kw:
        assert a.noise == "gaussian" and a.sensitivity == pytest.approx(2 * L)
        assert a.noise_scale == discrete_gaussian_scale(2 * L, levels, d, 0.7, DELTA)
    else:
        col = a._counter.column_norm
        assert a.noise_scale == pytest.approx(gaussian_sigma(col * 2 * L, 0.7, DELTA))


def test_submodular_parameters():
    assert lovasz_gradient_bounds(1.0, 8) == (4.0, 4.0)
    assert lovasz_gradient_bounds(1.0, 1) == (2.0, 2.0)
    g1, g2 = lovasz_gradient_bounds(2.0, 3)
    assert g1 == 8.0 and g2 == pytest.approx(4 * math.sqrt(3))
    # H = M / sqrt(n T): M = 1, n = 8, T = 1000 -> 1 / sqrt(8000) = 0.01118034.
    assert submod_pftal_regularization(1.0, 8, 1000) == pytest.approx(0.01118034, rel=1e-6)
    # eta = sqrt(n) / (G sqrt(T)) = sqrt(8) / (4 sqrt(1000)) = 0.02236068.
    assert hazan_kale_eta(1.0, 8, 1000) == pytest.approx(0.02236068, rel=1e-6)
    p = _problem(_env(SUB, 1000))
    a = make("submod-pftal", p, epsilon=0.5)
    assert a.scale == 1.0 and a.gradient_bounds == (4.0, 4.0)
    assert a.H == pytest.approx(0.01118034, rel=1e-6)
    assert a.sensitivity == 8.0 and a.levels == 10
    assert a.noise_scale == pytest.approx(laplace_scale(10 * 8.0, 0.5), rel=1e-4) == pytest.approx(
        160.0, rel=1e-4)
    assert a.privacy.epsilon == pytest.approx(0.5) and a.privacy.delta == 0.0
    g = make("submod-pftal", p, epsilon=0.5, delta=DELTA)
    assert g.sensitivity == 8.0
    assert g.noise_scale == discrete_gaussian_scale(8.0, 10, 8, 0.5, DELTA)
    assert g.privacy.epsilon == pytest.approx(0.5, rel=1e-3) and g.privacy.delta == DELTA
    fam = make("submod-pftal", p, epsilon=0.5, gradient_bound="family")
    L = p.lipschitz
    assert fam.gradient_bounds == pytest.approx((math.sqrt(8) * L, L))
    assert fam.sensitivity == pytest.approx(2 * math.sqrt(8) * L)
    hk = make("hazan-kale-submodular", p)
    assert hk.eta == pytest.approx(0.02236068, rel=1e-6)


def test_lovasz_bound_holds_on_random_submodular_functions():
    # ||g||_1 <= 4M for greedy vectors (CC Lemma 3), checked on the families here.
    rng = np.random.default_rng(0)
    for loss in (ConcaveModularLoss(7), GraphCutLoss(6, unary=True),
                 FacilityLocationLoss(6, n_customers=4)):
        g1, g2 = lovasz_gradient_bounds(loss.scale, loss.n)
        for _ in range(200):
            g = loss.subgradient(loss.sample_param(rng), rng.random(loss.n))
            assert np.abs(g).sum() <= g1 + 1e-12 and np.linalg.norm(g) <= g2 + 1e-12


# --------------------------------------------------------------- threshold rounding
@pytest.mark.parametrize("loss", [ConcaveModularLoss(6), GraphCutLoss(6, unary=True),
                                  FacilityLocationLoss(6, n_customers=3)],
                         ids=["concave-modular", "graph-cut", "facility-location"])
def test_threshold_rounding_is_unbiased_for_the_lovasz_extension(loss):
    rng = np.random.default_rng(1)
    N = 40_000
    for _ in range(3):
        theta = loss.sample_param(rng)
        x = rng.random(6)
        x[rng.integers(6)] = 0.0
        x[rng.integers(6)] = 1.0
        sets = np.stack([threshold_round(x, u) for u in rng.random(N)])
        vals = loss.set_values(theta, sets.astype(bool))
        tol = 5.0 * max(vals.std(), 1e-3) / math.sqrt(N)  # CLT, 5 standard errors
        assert abs(vals.mean() - loss.value(theta, x)) <= tol
        np.testing.assert_allclose(sets.mean(axis=0), x, atol=5 * 0.5 / math.sqrt(N))


def test_threshold_round_edges():
    x = np.array([0.0, 1.0, 0.3])
    assert threshold_round(x, 0.0).tolist() == [1, 1, 1]
    assert threshold_round(x, 0.3).tolist() == [0, 1, 1]
    assert threshold_round(x, 0.999).tolist() == [0, 1, 0]


# ----------------------------------------------------- privacy and reproducibility
@pytest.mark.parametrize("name,env_id", [("pftal", SC), ("pftal", CVX), ("submod-pftal", SUB)])
def test_private_agents_refuse_without_epsilon(name, env_id):
    with pytest.raises(ValueError, match="epsilon"):
        make(name, _problem(_env(env_id)))


@pytest.mark.parametrize("name,env_id,kw", [("pftal", SC, {"epsilon": 1.0}),
                                            ("submod-pftal", SUB, {"epsilon": 1.0})])
def test_every_counter_output_is_released(name, env_id, kw):
    env = _env(env_id, 40)
    a = make(name, _problem(env), seed=0, **kw)
    a.record_releases = True
    play(env, a, seed=0, agent_seed=0)
    assert [r for r, _ in a.releases] == list(range(40))


def test_invalid_configurations_are_refused():
    sub, cvx = _problem(_env(SUB)), _problem(_env(CVX))
    with pytest.raises(ValueError, match="subsets"):
        make("pftal", sub, epsilon=1.0)
    with pytest.raises(ValueError, match="subsets"):
        make("ftal", sub)
    with pytest.raises(ValueError, match="submodular"):
        make("submod-pftal", cvx, epsilon=1.0)
    with pytest.raises(ValueError, match="submodular"):
        make("hazan-kale-submodular", cvx)
    with pytest.raises(ValueError, match="regularization"):
        make("pftal", cvx, epsilon=1.0, regularization=0.0)  # convex, H = 0
    with pytest.raises(ValueError, match="regularization"):
        make("submod-pftal", sub, epsilon=1.0, regularization=-1.0)
    with pytest.raises(ValueError, match="gradient_bound"):
        make("submod-pftal", sub, epsilon=1.0, gradient_bound="nope")
    with pytest.raises(ValueError, match="[Ll]aplace|gaussian"):
        make("pftal", cvx, epsilon=1.0, counter="factorization")  # Gaussian only
    with pytest.raises(ValueError, match="counter"):
        make("pftal", cvx, epsilon=1.0, counter="nope")
    with pytest.raises(ValueError, match="not private"):
        make("ftal", cvx, epsilon=1.0)
    with pytest.raises(TypeError, match="unknown option"):
        make("ftal", cvx, counter="tree")
    bandit = _problem(_env(SC, feedback="bandit"))
    with pytest.raises(ValueError, match="full-information"):
        make("pftal", bandit, epsilon=1.0)


def test_gradients_are_clipped_to_the_declared_lipschitz_constant():
    # An understated L: every gradient is clipped (and counted); the counter is
    # calibrated to the declared L, so the guarantee still holds for the clipped stream.
    env = _env(SC, 30)
    p = dataclasses.replace(_problem(env), lipschitz=0.01)
    a = make("pftal", p, epsilon=1.0, seed=0)
    assert a.sensitivity == pytest.approx(2 * 0.01 * math.sqrt(5))
    play(env, a, seed=0, agent_seed=0)
    assert a.clipped_gradients > 20 and a.clipped_feedback == 0


def test_black_box_audit_does_not_refute_pftal():
    env = _env(SC, 4)
    problem = _problem(env)
    result = audit(lambda seed: make("pftal", problem, seed=seed, epsilon=1.0), env, tau=2,
                   runs=600, seed=1)
    assert result.passed, str(result)
