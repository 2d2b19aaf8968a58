"""Private -> non-private as epsilon grows.

* With its noise switched off, a private learner IS its non-private counterpart
  (:attr:`agents.base.Agent.counterpart`): same actions, bit for bit, on the same seed.
* Huge epsilons build and play for every private agent, and never reach the PLD
  accountant's privacy-loss grid (whose size grows with epsilon).
* At epsilon = 1000 a Gaussian tree counter verifies (it used to overshoot).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from agent_helpers import played_points
from test_all_agents import PLAYS

from agents import agent_class, list_agents, make
from agents.privacy import calibration
from dp_online_envs import build_env

T = 64




def _counter_agent_noise_off(name: str, problem, **kw):
    """A counter-based private learner whose counter releases exact sums (noise=None)."""
    agent = make(name, problem, epsilon=1e6, seed=0, **kw)
    agent.noise = None  # the next reset builds an exact counter and draws no L~_0 noise
    return agent


# (private, env id, env options, private options) for the counter-based learners
COUNTER_PAIRS = [
    ("private-ftrl", "DPFullInfo-Experts-v0", {}, {}),
    ("private-ftrl", "DPFullInfo-Experts-v0", {"adversary": "punish-favorite"}, {}),
    ("private-ftrl", "DPFullInfo-Sphere-v1", {}, {}),
    ("private-ftrl", "DPFullInfo-Cube-v1", {}, {}),
    ("private-ftrl", "DPFullInfo-Experts-v0", {}, {"counter": "tree"}),
    ("pftal", "DPFullInfo-StronglyConvex-v1", {}, {}),
    ("pftal", "DPFullInfo-Convex-v1", {}, {}),
]


@pytest.mark.parametrize("name,env_id,env_kw,kw", COUNTER_PAIRS,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(COUNTER_PAIRS)])
def test_counter_learner_without_noise_is_its_counterpart(name, env_id, env_kw, kw):
    env = build_env(env_id, horizon=T, **env_kw)
    problem = env.unwrapped.problem
    other = agent_class(name).counterpart_for(problem, **kw)
    assert other is not None and not agent_class(other).private
    priv = played_points(_counter_agent_noise_off(name, problem, **kw), env, seed=3, reset_seed=5)
    base = played_points(make(other, problem, seed=0), env, seed=3, reset_seed=5)
    assert np.array_equal(priv, base)
    # and the switch matters: with its noise the private learner plays differently
    noisy = played_points(make(name, problem, epsilon=1.0, seed=0, **kw), env, seed=3, reset_seed=5)
    assert not np.array_equal(noisy, base)


# (private, env id, private options, counterpart options)
REDUCTION_PAIRS = [
    ("private-exp2", "DPBandit-MAB-v0", {}, {}),
    ("private-scrible", "DPBandit-Linear-v1", {}, {}),
    ("private-bandit", "DPBandit-MAB-v0", {"base": "exp3"}, {}),
]


@pytest.mark.parametrize("name,env_id,kw,other_kw", REDUCTION_PAIRS,
                         ids=[c[0] for c in REDUCTION_PAIRS])
def test_reduction_without_noise_is_its_base(name, env_id, kw, other_kw):
    env = build_env(env_id, horizon=T)
    problem = env.unwrapped.problem
    other = agent_class(name).counterpart_for(problem, **kw)
    assert other is not None and not agent_class(other).private
    # Noise switched off: no noise strategy (the base is then tuned for noise 0, as its
    # non-private self, and receives the exact clipped losses); the claim says so.
    agent = make(name, problem, epsilon=1.0, seed=0, add_noise=False, **kw)
    assert agent.noise_scale == 0.0 and agent.privacy.epsilon == math.inf
    priv = played_points(agent, env, seed=3, reset_seed=5)
    # the reduction seeds its base with the first draw of its own generator
    base_seed = int(np.random.default_rng(5).integers(2**63))
    base = played_points(make(other, problem, seed=0, **other_kw), env, seed=3, reset_seed=base_seed)
    assert np.array_equal(priv, base)
    # and the switch matters: with its noise the reduction plays differently
    noisy = played_points(make(name, problem, epsilon=1.0, seed=0, **kw), env, seed=3,
                          reset_seed=5)
    assert not np.array_equal(noisy, base)


@pytest.mark.parametrize("name,kw", [("private-exp2", {}), ("private-bandit", {}),
                                     ("private-scrible", {}), ("private-batched-htinf", {}),
                                     ("adap-ucb", {}), ("adap-klucb", {})])
def test_add_noise_must_be_a_bool(name, kw):
    env_id = "DPBandit-Linear-v1" if name == "private-scrible" else "DPBandit-MAB-v0"
    problem = build_env(env_id, horizon=T).unwrapped.problem
    for bad in (0, "no", None):
        with pytest.raises(ValueError, match=rf"^add_noise={bad!r} rejected: expected True "
                                             "or False"):
            make(name, problem, epsilon=1.0, add_noise=bad, **kw)
    assert make(name, problem, epsilon=1.0, add_noise=True).privacy.epsilon <= 1.0 + 1e-9


def test_counterparts_are_declared_in_one_place():
    declared = {n: agent_class(n).counterpart for n, _ in list_agents()
                if agent_class(n).private}
    assert declared["private-ftrl"] == "hedge"
    assert declared["private-exp2"] == "exp2"
    assert declared["private-scrible"] == "scrible"
    assert declared["pftal"] == "ftal"
    for other in filter(None, declared.values()):
        assert not agent_class(other).private
    sphere = build_env("DPFullInfo-Sphere-v1", horizon=T).unwrapped.problem
    assert agent_class("private-ftrl").counterpart_for(sphere) == "ftrl"
    mab = build_env("DPBandit-MAB-v0", horizon=T).unwrapped.problem
    assert agent_class("private-bandit").counterpart_for(mab, base="exp3") == "exp3"
    assert agent_class("private-bandit").counterpart_for(mab) == "exp2"


def test_non_private_limit_parameters_are_the_counterparts():
    experts = build_env("DPFullInfo-Experts-v0", horizon=1000).unwrapped.problem
    assert make("private-ftrl", experts, epsilon=1.0).eta == make("hedge", experts).eta
    mab = build_env("DPBandit-MAB-v0", horizon=1000).unwrapped.problem
    p, e = make("private-exp2", mab, epsilon=1e6), make("exp2", mab)
    assert p.eta == pytest.approx(e.eta, rel=1e-9) and p.gamma == pytest.approx(e.gamma, rel=1e-9)
    convex = build_env("DPFullInfo-Convex-v1", horizon=1000).unwrapped.problem
    assert (make("pftal", convex, epsilon=1e6).regularization
            == make("ftal", convex).regularization)


# --------------------------------------------------------------------- huge epsilon
PRIVATE_CASES = [(name, env_id, env_kw, kw) for name, cases in PLAYS.items()
                 if agent_class(name).private for env_id, env_kw, kw in cases]


@pytest.mark.parametrize("eps", [1e3, 1e6])
@pytest.mark.parametrize("name,env_id,env_kw,kw", PRIVATE_CASES,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(PRIVATE_CASES)])
def test_huge_epsilon_builds_and_plays(name, env_id, env_kw, kw, eps):
    env = build_env(env_id, horizon=32, **env_kw)
    problem = env.unwrapped.problem
    before = calibration.ACCOUNTING_CALLS["pld"]
    agent = make(name, problem, seed=1, **{**kw, "epsilon": eps})
    assert calibration.ACCOUNTING_CALLS["pld"] == before  # no privacy-loss grid
    assert agent.privacy is not None
    assert agent.privacy.epsilon <= eps * (1 + 1e-9)
    assert agent.privacy.delta in (kw.get("delta", 0.0), 0.0)  # 0: a pure claim
    points = played_points(agent, env, seed=2, reset_seed=2)
    assert np.all(np.isfinite(points)) and len(points) == 32


@pytest.mark.parametrize("eps", [300.0, 1000.0, 1e6])
def test_gaussian_tree_at_large_epsilon_verifies_exactly(eps):
    problem = build_env("DPFullInfo-Experts-v0", horizon=10_000).unwrapped.problem
    agent = make("private-ftrl", problem, epsilon=eps, delta=1e-6)
    assert agent.noise == "gaussian"
    assert agent.privacy.epsilon <= eps * (1 + 1e-12) and agent.privacy.delta == 1e-6
    # the exact discrete Gaussian: levels blocks of squared grid sensitivity K2 >= (Delta/g)^2,
    # rho-zCDP with rho = levels K2 / (2 sigma^2), sigma the smallest integer for the claim
    ns = agent._make_counter(np.random.default_rng(0)).noise_strategy
    assert ns.kind == "discrete-gaussian" and ns.copies == agent.levels
    assert ns.grid_sensitivity >= (agent.sensitivity / ns.grid) ** 2
    assert calibration.accountant_epsilon(ns.dp_event(copies=agent.levels), 1e-6) <= eps
    # and not over-noised: 0.1% less noise would break the claim
    less = dataclasses.replace(ns, sigma=math.floor(0.999 * ns.sigma))
    assert calibration.accountant_epsilon(less.dp_event(copies=agent.levels), 1e-6) > eps
