"""Full-information learners: Agarwal-Singh private FTRL / FTPL, hedge, ftrl, online-fw.

Parameters are checked against values computed by hand from Agarwal & Singh (ICML
2017) Corollary 3.2 / Theorem 3.5 and the standard non-private tunings; every learner
plays its envs end to end and must never have an action projected by the env.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from agent_helpers import DELTA, T_SHORT, discrete_gaussian_scale
from agent_helpers import center_regret as _center_regret
from agent_helpers import make_env as _env
from agent_helpers import play_agent as _play
from agent_helpers import problem_of as _problem

import dp_online_envs  # noqa: F401  (registers the env ids)
from agents import make, play
from agents.common import paper_log, replacement_sensitivity, theta_norm
from agents.privacy import gaussian_sigma, laplace_scale
from dp_online_envs import OnlineLearningEnv
from dp_online_envs.adversaries import ReplayAdversary
from dp_online_envs.domains import (
    Arms,
    Birkhoff,
    FlowPolytope,
    PartitionMatroid,
    Simplex,
    SubmodularBasePolytope,
)
from dp_online_envs.lab.audit import audit
from dp_online_envs.losses import LinearLoss
from dp_online_envs.wrappers import RegretRecorder


def _linear_env(domain, theta_set: str = "unit", horizon: int = T_SHORT,
                adversary="oblivious") -> gym.Env:
    """A full-information linear game on any domain (also those of bandit-only ids)."""
    loss = LinearLoss(domain.dim, theta_set=theta_set)
    return RegretRecorder(OnlineLearningEnv(domain, loss, adversary, feedback="full",
                                            horizon=horizon))


# ------------------------------------------------------------ end to end, feasible
E2E = [
    ("hedge", "DPFullInfo-Experts-v0", {}),
    ("ftrl", "DPFullInfo-Sphere-v1", {}),
    ("ftrl", "DPFullInfo-Cube-v1", {}),
    ("ftrl", "DPFullInfo-Matroid-v1", {}),
    ("ftrl", "DPFullInfo-Convex-v1", {"lazy": False}),
    ("private-ftrl", "DPFullInfo-Experts-v0", {"epsilon": 1.0}),
    ("private-ftrl", "DPFullInfo-Sphere-v1", {"epsilon": 1.0}),
    ("private-ftrl", "DPFullInfo-Cube-v1", {"epsilon": 1.0}),
    ("private-ftrl", "DPFullInfo-Experts-v0", {"epsilon": 1.0, "delta": DELTA}),
    ("private-ftrl", "DPFullInfo-Sphere-v1", {"epsilon": 1.0, "delta": DELTA,
                                              "counter": "factorization"}),
    ("private-ftrl", "DPFullInfo-Cube-v1", {"epsilon": 1.0, "counter": "honaker"}),
    ("private-ftpl", "DPFullInfo-Experts-v0", {"epsilon": 1.0, "delta": DELTA}),
    ("private-ftpl", "DPFullInfo-Sphere-v1", {"epsilon": 1.0, "delta": DELTA}),
    ("private-ftpl", "DPFullInfo-Cube-v1", {"epsilon": 1.0, "delta": DELTA}),
    ("private-ftpl", "DPFullInfo-Matroid-v1", {"epsilon": 1.0, "delta": DELTA}),
    ("private-ftpl", "DPFullInfo-Matroid-v1", {"epsilon": 1.0, "delta": DELTA,
                                               "counter": "tree"}),
    ("online-fw", "DPFullInfo-Matroid-v1", {}),
    ("online-fw", "DPFullInfo-Convex-v1", {}),
    ("online-fw", "DPFullInfo-StronglyConvex-v1", {}),
]


@pytest.mark.parametrize("name,env_id,kw", E2E, ids=[f"{n}-{e}-{sorted(k)}" for n, e, k in E2E])
def test_plays_feasible_actions_end_to_end(name, env_id, kw):
    env = _env(env_id)
    agent, summary = _play(name, env, **kw)
    assert summary.rounds == T_SHORT
    assert summary.projected_actions == 0
    assert agent.t == T_SHORT
    assert agent.clipped_feedback == 0
    assert math.isfinite(summary.regret_hi)


POLYTOPES = [
    ("flow", lambda: FlowPolytope.grid(3, 4)),
    ("birkhoff", lambda: Birkhoff(4)),
    ("base-polytope", lambda: SubmodularBasePolytope.concave_cardinality(6)),
    ("partition-matroid", lambda: PartitionMatroid([[0, 1, 2], [3, 4, 5]], [1, 2])),
    ("arms", lambda: Arms(5)),
    ("simplex", lambda: Simplex(5)),
]


@pytest.mark.parametrize("make_domain", [m for _, m in POLYTOPES], ids=[n for n, _ in POLYTOPES])
def test_private_ftpl_runs_on_every_polytope(make_domain):
    env = _linear_env(make_domain(), horizon=100)
    _, summary = _play("private-ftpl", env, epsilon=1.0, delta=DELTA)
    assert summary.projected_actions == 0 and summary.rounds == 100


@pytest.mark.parametrize("make_domain", [m for n, m in POLYTOPES if n != "arms"],
                         ids=[n for n, _ in POLYTOPES if n != "arms"])
def test_online_fw_plays_convex_combinations_of_oracle_outputs(make_domain):
    domain = make_domain()
    env = _linear_env(domain, horizon=100)
    agent = make("online-fw", _problem(env), seed=3)
    agent.reset(3)
    env.reset(seed=3)
    for _ in range(100):
        x = agent.act()
        assert domain.contains(x, 1e-9)
        obs, *_ = env.step(x)
        agent.update(x, obs)


def test_arms_actions_are_indices():
    env = _linear_env(Arms(4), horizon=50)
    for name, kw in [("hedge", {}), ("private-ftrl", {"epsilon": 2.0}), ("ftrl", {}),
                     ("private-ftpl", {"epsilon": 2.0, "delta": DELTA})]:
        agent = make(name, _problem(env), seed=1, **kw)
        a = agent.act()
        assert isinstance(a, int) and 0 <= a < 4
        _, summary = _play(name, env, seed=1, **kw)
        assert summary.projected_actions == 0


# ---------------------------------------------------------- parameter formulas
def test_sensitivity_table():
    assert replacement_sensitivity(LinearLoss(10, "unit"), 1) == 10
    assert replacement_sensitivity(LinearLoss(10, "unit"), 2) == pytest.approx(math.sqrt(10))
    assert replacement_sensitivity(LinearLoss(10, "l2"), 1) == pytest.approx(2 * math.sqrt(10))
    assert replacement_sensitivity(LinearLoss(10, "l2"), 2) == 2
    assert replacement_sensitivity(LinearLoss(10, "l1"), 1) == 2
    assert replacement_sensitivity(LinearLoss(10, "l1"), 2) == 2
    assert replacement_sensitivity(LinearLoss(10, "linf"), 1) == 20
    assert theta_norm(LinearLoss(10, "l2"), 1) == pytest.approx(math.sqrt(10))
    assert theta_norm(LinearLoss(10, "unit"), math.inf) == 1
    assert [paper_log(t) for t in (1, 2, 3, 1000, 1024, 1025)] == [1, 1, 2, 10, 10, 11]


def test_private_ftrl_experts_corollary_3_2():
    # K=10, T=1000, eps=0.5: 10 tree levels (1000 < 2^10), l1 sensitivity K = 10,
    # lambda = 10 * 10 / 0.5 = 200; entropic eta = hedge's sqrt(8 ln 10 / 1000).
    a = make("private-ftrl", _problem(_env("DPFullInfo-Experts-v0", 1000)), epsilon=0.5)
    assert a.regularizer == "entropic" and a.noise == "laplace"
    assert a.levels == 10 and a.sensitivity == 10
    # the exact discrete Laplace scale t g is within 2^-15 of lambda
    assert a.noise_scale == pytest.approx(200.0, rel=1e-4)
    assert a.noise_scale == pytest.approx(laplace_scale(10 * 10, 0.5), rel=1e-4)
    assert a._counter.draw_scale == a.noise_scale
    assert a._counter.draws == 10  # ceil(log2 1000) identically distributed draws
    assert a.eta == pytest.approx(math.sqrt(8 * math.log(10) / 1000))
    assert a.eta == pytest.approx(0.1357228085)
    assert a.eta == make("hedge", a.problem).eta
    assert a.privacy.epsilon == pytest.approx(0.5) and a.privacy.delta == 0.0


def test_private_ftrl_sphere_and_cube_corollary_3_2():
    # Sphere N=10, T=1024: 11 levels, l1 sensitivity 2 sqrt(10); R=||x||^2, D_R = 1;
    # eta = 2 D / (L sqrt T) = 2 * 2 / 32 = 0.125, the step eta/2 is ftrl's eta.
    s = make("private-ftrl", _problem(_env("DPFullInfo-Sphere-v1", 1024)), epsilon=1.0)
    assert s.regularizer == "l2" and s.levels == 11
    assert s.noise_scale == pytest.approx(11 * 2 * math.sqrt(10), rel=1e-4)
    assert s.eta == pytest.approx(0.125)
    assert s.step == make("ftrl", s.problem).eta
    # Cube N=10, T=1024: l1 sensitivity 2, lambda = 22 / eps; D_R = N = 10,
    # eta = 2 D / (L sqrt T) = 2 * 2 sqrt(10) / 32 = 0.3952847.
    c = make("private-ftrl", _problem(_env("DPFullInfo-Cube-v1", 1024)), epsilon=2.0)
    assert c.noise_scale == pytest.approx(11.0, rel=1e-4)
    assert c.D_R == pytest.approx(10.0)
    assert c.eta == pytest.approx(0.39528470752)
    assert c.step == make("ftrl", c.problem).eta


def test_private_ftrl_gaussian_calibration():
    # delta > 0: Gaussian counter, l2 sensitivity sqrt(K), sqrt(levels) of them per input.
    a = make("private-ftrl", _problem(_env("DPFullInfo-Experts-v0", 1000)), epsilon=1.0,
             delta=DELTA)
    assert a.noise == "gaussian" and a.sensitivity == pytest.approx(math.sqrt(10))
    assert a.noise_scale == discrete_gaussian_scale(math.sqrt(10), 10, 10, 1.0, DELTA)
    assert not a.privacy.idealized
    assert a.privacy.epsilon == pytest.approx(1.0, rel=1e-3)
    assert a.privacy.delta == DELTA
    sphere = make("private-ftrl", _problem(_env("DPFullInfo-Sphere-v1", 1000)), epsilon=1.0,
                  delta=DELTA, counter="factorization")
    assert sphere.levels is None and sphere.sensitivity == 2.0
    col = sphere._counter.column_norm  # sqrt(sum_{j<T} f_j^2) of the square-root factor
    assert sphere.noise_scale == pytest.approx(gaussian_sigma(2.0 * col, 1.0, DELTA))


def test_private_ftpl_theorem_3_5():
    # K=10, T=1024, eps=1, delta=1e-6: log T = 10,
    # sigma_regret = sqrt(10) * sqrt(1024 / (sqrt(10) * 10)) = 17.99492,
    # paper privacy term sqrt(10) * 10 * ln(10 / 1e-6) = 509.699,
    # accountant sigma: exact discrete Gaussian for 11 levels of sensitivity sqrt(10).
    a = make("private-ftpl", _problem(_env("DPFullInfo-Experts-v0", 1024)), epsilon=1.0,
             delta=DELTA)
    assert a.log_T == 10
    assert a.sigma_regret == pytest.approx(17.99492, rel=1e-5)
    assert a.sigma_paper_privacy == pytest.approx(509.699, rel=1e-5)
    assert a.sigma_privacy == discrete_gaussian_scale(math.sqrt(10), 11, 10, 1.0, DELTA)
    assert a.sigma == max(a.sigma_regret, a.sigma_privacy)
    assert a.target_variance == pytest.approx(10 * a.sigma**2)
    assert a.privacy.epsilon == pytest.approx(1.0, rel=1e-3) and a.privacy.delta == DELTA
    # At a large epsilon the regret term decides and the extra perturbation tops the
    # AS counter's noise up to exactly R sigma^2 per coordinate.
    b = make("private-ftpl", _problem(_env("DPFullInfo-Experts-v0", 1024)), epsilon=50.0,
             delta=DELTA)
    assert b.sigma == b.sigma_regret > b.sigma_privacy
    assert b.perturbation_std() ** 2 + b._noise_var == pytest.approx(b.target_variance)


def test_non_private_learning_rates():
    T = 400
    h = make("hedge", _problem(_env("DPFullInfo-Experts-v0", T)))
    assert h.eta == pytest.approx(math.sqrt(8 * math.log(10) / T))
    assert h.regret_bound == pytest.approx(math.sqrt(T * math.log(10) / 2))
    f = make("ftrl", _problem(_env("DPFullInfo-Sphere-v1", T)))
    assert f.eta == pytest.approx(2.0 / (1.0 * math.sqrt(T)))  # D = 2, L = 1
    p = _problem(_env("DPFullInfo-Matroid-v1", T))
    fw = make("online-fw", p)
    assert fw.eta == pytest.approx(p.diameter / (2 * p.lipschitz * T**0.75))
    assert [fw.step_size(t) for t in (1, 4, 16)] == [1.0, 1.0, 0.5]


# ---------------------------------------------------------------------- regret
@pytest.mark.parametrize("adversary", ["alternating", "punish-favorite", "oblivious"])
def test_hedge_regret_below_its_bound(adversary):
    T = 2000
    env = _env("DPFullInfo-Experts-v0", T, adversary=adversary)
    agent, summary = _play("hedge", env, seed=5)
    bound = math.sqrt(T * math.log(10) / 2)
    assert summary.exact
    assert summary.regret_hi <= bound
    assert agent.regret_bound == pytest.approx(bound)


def test_hedge_bound_on_a_fixed_sequence():
    T, K = 1000, 10
    rng = np.random.default_rng(7)
    thetas = (rng.random((T, K)) < 0.5).astype(float)
    thetas[: T // 2, 0] = 0.0  # expert 0 is best for a while, then worst
    thetas[T // 2 :, 0] = 1.0
    env = _linear_env(Simplex(K), horizon=T, adversary=ReplayAdversary(thetas))
    _, summary = _play("hedge", env)
    assert summary.regret_hi <= math.sqrt(T * math.log(K) / 2)


def test_private_ftrl_at_large_epsilon_matches_the_non_private():
    # The pure-DP guarantee is certified without building the accountant's privacy-loss
    # grid, so a huge epsilon is cheap (it once cost tens of GB at 1e6).
    T, eps, seeds = 1000, 1e6, range(3)
    env = _env("DPFullInfo-Experts-v0", T)
    priv = [_play("private-ftrl", env, seed=s, epsilon=eps) for s in seeds]
    hedge = [_play("hedge", env, seed=s)[1].regret_hi for s in seeds]  # its default eta
    assert np.mean([r.regret_hi for _, r in priv]) == pytest.approx(np.mean(hedge), rel=0.05)
    env = _env("DPFullInfo-Sphere-v1", T, adversary="stochastic")
    priv = [_play("private-ftrl", env, seed=s, epsilon=eps) for s in seeds]
    # x = Proj(x_1 - (eta/2) L~) is lazy FTRL from x_1 = 0 with ftrl's step eta/2.
    ftrl = [_play("ftrl", env, seed=s)[1].regret_hi for s in seeds]
    assert np.mean([r.regret_hi for _, r in priv]) == pytest.approx(np.mean(ftrl), rel=0.05)
    assert np.mean(ftrl) < 3 * math.sqrt(T)


def test_privacy_costs_regret_at_small_epsilon():
    env = _env("DPFullInfo-Experts-v0", 1000)
    big = np.mean([_play("private-ftrl", env, seed=s, epsilon=300.0)[1].regret_hi
                   for s in range(3)])
    small = np.mean([_play("private-ftrl", env, seed=s, epsilon=0.05)[1].regret_hi
                     for s in range(3)])
    assert small > big


def test_online_fw_learns_on_the_matroid():
    T = 3000
    env = _env("DPFullInfo-Matroid-v1", T, adversary="stochastic")
    agent, summary = _play("online-fw", env, seed=0)
    assert summary.regret_hi <= agent.regret_bound
    center = np.mean([_center_regret(env, s) for s in range(1)])
    assert summary.regret_hi < 0.5 * center



# ----------------------------------------------------- privacy and reproducibility
@pytest.mark.parametrize("name,kw", [("private-ftrl", {"epsilon": 0.7}),
                                     ("private-ftrl", {"epsilon": 0.7, "delta": DELTA}),
                                     ("private-ftpl", {"epsilon": 0.7, "delta": DELTA})])
def test_declared_privacy_is_the_requested_one(name, kw):
    a = make(name, _problem(_env("DPFullInfo-Cube-v1", 300)), **kw)
    assert a.privacy.epsilon == pytest.approx(kw["epsilon"], rel=1e-3)
    assert a.privacy.epsilon <= kw["epsilon"] * (1 + 1e-4) + 1e-6
    assert a.privacy.delta == kw.get("delta", 0.0)


@pytest.mark.parametrize("name,kw", [("private-ftrl", {"epsilon": 1.0}),
                                     ("private-ftpl", {"epsilon": 1.0, "delta": DELTA})])
def test_every_counter_output_is_released(name, kw):
    env = _env("DPFullInfo-Experts-v0", 50)
    a = make(name, _problem(env), seed=0, **kw)
    a.record_releases = True
    play(env, a, seed=0, agent_seed=0)
    assert [r for r, _ in a.releases] == list(range(50))


@pytest.mark.parametrize("name", ["private-ftrl", "private-ftpl"])
def test_private_agents_refuse_without_epsilon(name):
    with pytest.raises(ValueError, match="epsilon"):
        make(name, _problem(_env("DPFullInfo-Experts-v0")))


def test_invalid_configurations_are_refused():
    experts = _problem(_env("DPFullInfo-Experts-v0"))
    with pytest.raises(ValueError, match="delta"):
        make("private-ftpl", experts, epsilon=1.0)  # Gaussian FTPL needs delta > 0
    with pytest.raises(ValueError, match="[Ll]aplace|gaussian"):
        make("private-ftrl", experts, epsilon=1.0, counter="factorization")
    with pytest.raises(ValueError, match="counter"):
        make("private-ftrl", experts, epsilon=1.0, counter="nope")
    with pytest.raises(ValueError, match="not private"):
        make("hedge", experts, epsilon=1.0)
    convex = _problem(_env("DPFullInfo-Convex-v1"))
    for name, kw in [("private-ftrl", {"epsilon": 1.0}),
                     ("private-ftpl", {"epsilon": 1.0, "delta": DELTA})]:
        with pytest.raises(ValueError, match="linear"):
            make(name, convex, **kw)
    with pytest.raises(ValueError, match="simplex"):
        make("hedge", _problem(_env("DPFullInfo-Sphere-v1")))
    with pytest.raises(ValueError, match="entropic"):
        make("private-ftrl", _problem(_env("DPFullInfo-Sphere-v1")), epsilon=1.0,
             regularizer="entropic")


@pytest.mark.parametrize("name,kw", [("hedge", {}), ("ftrl", {}), ("online-fw", {}),
                                     ("private-ftrl", {"epsilon": 1.0}),
                                     ("private-ftpl", {"epsilon": 1.0, "delta": DELTA})])
def test_full_info_agents_refuse_bandit_problems(name, kw):
    bandit = _problem(_env("DPFullInfo-Experts-v0", feedback="bandit"))
    assert bandit.feedback == "bandit"
    with pytest.raises(ValueError, match="full-information"):
        make(name, bandit, **kw)


def test_feedback_is_clipped_to_the_loss_set():
    p = _problem(_env("DPFullInfo-Sphere-v1", 10))
    a = make("private-ftrl", p, epsilon=1.0, seed=0)
    a.record_releases = True
    a.update(a.act(), np.full(10, 5.0))  # ||theta||_2 >> 1: projected onto the ball
    assert a.clipped_feedback == 1
    truth = np.full(10, 5.0) / np.linalg.norm(np.full(10, 5.0))
    noise = a.releases[0][1] - truth
    assert np.all(np.isfinite(noise))


# ------------------------------------------------------------------ audit (black box)
@pytest.mark.parametrize("name,kw", [("private-ftrl", {"epsilon": 1.0}),
                                     ("private-ftpl", {"epsilon": 1.0, "delta": 1e-5})])
def test_black_box_audit_does_not_refute_the_claim(name, kw):
    env = _env("DPFullInfo-Experts-v0", 4, n_arms=3)
    problem = _problem(env)
    result = audit(lambda seed: make(name, problem, seed=seed, **kw), env, tau=2, runs=600,
                   seed=1)
    assert result.passed, str(result)
