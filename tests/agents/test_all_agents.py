"""Every registered agent on every env it is meant for: feasible play, determinism,
and nothing but permitted feedback."""

import numpy as np
import pytest

import agents
from agents import agent_class, make
from agents.reference import REFERENCE_AGENTS
from dp_online_envs import build_env
from dp_online_envs.envs.registry import CONTEXTUAL_IDS

PRIV = {"epsilon": 1.0}
GAUSS = {"epsilon": 1.0, "delta": 1e-5}
#: agent -> [(env id, env options, agent options)]
PLAYS = {
    "hedge": [("DPFullInfo-Experts-v0", {}, {})],
    "private-ftrl": [("DPFullInfo-Experts-v0", {}, PRIV), ("DPFullInfo-Sphere-v1", {}, PRIV),
                     ("DPFullInfo-Cube-v1", {}, GAUSS), ("DPFullInfo-Cube-v2", {}, GAUSS)],
    "private-ftpl": [("DPFullInfo-Experts-v0", {}, GAUSS), ("DPFullInfo-Matroid-v1", {}, GAUSS)],
    "private-lazy-mw": [("DPFullInfo-Experts-v0", {}, GAUSS)],
    "private-ftrl-grad": [("DPFullInfo-Convex-v1", {}, PRIV), ("DPFullInfo-Convex-v1", {}, GAUSS),
                          ("DPFullInfo-Experts-v0", {}, PRIV)],
    "private-ftpl-grad": [("DPFullInfo-Convex-v1", {}, GAUSS), ("DPFullInfo-Experts-v0", {}, GAUSS)],
    "ftrl": [("DPFullInfo-Sphere-v1", {}, {}), ("DPFullInfo-Convex-v1", {}, {}),
             ("DPFullInfo-Cube-v2", {}, {})],
    "online-fw": [("DPFullInfo-Matroid-v1", {}, {})],
    "pftal": [("DPFullInfo-StronglyConvex-v1", {}, PRIV), ("DPFullInfo-Convex-v1", {}, GAUSS)],
    "ftal": [("DPFullInfo-StronglyConvex-v1", {}, {})],
    # the oblivious adversary: the portfolio simplex is built without the realdata extra
    "ons": [("DPFullInfo-Portfolio-v1", {"adversary": "oblivious"}, {})],
    "submod-pftal": [(e, {}, PRIV) for e in ("DPFullInfo-Submodular-v1",
                                             "DPFullInfo-Submodular-v2")],
    "hazan-kale-submodular": [("DPFullInfo-Submodular-v1", {}, {}),
                              ("DPFullInfo-Submodular-v2", {}, {})],
    "exp2": [("DPBandit-MAB-v0", {}, {})],
    "exp3": [("DPBandit-MAB-v0", {}, {})],
    "private-exp2": [("DPBandit-MAB-v0", {}, PRIV)],
    "private-bandit": [("DPBandit-MAB-v0", {}, {**PRIV, "base": "exp3"})],
    "htinf": [("DPBandit-MAB-v0", {}, {})],
    "ucb1": [("DPBandit-MAB-v0", {}, {})],
    "kl-ucb": [("DPBandit-MAB-v0", {}, {})],
    "adap-ucb": [("DPBandit-MAB-v0", {}, PRIV), ("DPBandit-MAB-v0", {}, {"epsilon": 0.2})],
    # at eps = 1 the optimistic shift clips every index to 1 for the first 50 rounds (the
    # arms are played in order whatever the noise): eps = 3 lets the seed show
    "adap-klucb": [("DPBandit-MAB-v0", {}, {"epsilon": 3.0})],
    "thompson": [("DPBandit-MAB-v0", {}, {}), ("DPBandit-MAB-v0", {}, {"posterior": "gaussian"})],
    "private-batched-htinf": [("DPBandit-MAB-v0", {}, PRIV),
                              ("DPBandit-MAB-v0", {}, {"epsilon": 0.2})],
    "scrible": [("DPBandit-Linear-v1", {}, {}), ("DPBandit-Linear-v1", {"domain": "cube"}, {})],
    "private-scrible": [("DPBandit-Linear-v1", {}, PRIV)],
    "fkm": [("DPBandit-Convex-v1", {}, {})],
    "bandit-pftal": [("DPBandit-Convex-v1", {}, PRIV), ("DPBandit-StronglyConvex-v1", {}, PRIV)],
    "private-projection-free": [(e, {}, kw) for e in ("DPBandit-Matroid-v1", "DPBandit-Flow-v1",
                                                      "DPBandit-SubmodularBase-v1",
                                                      "DPBandit-Birkhoff-v1")
                                for kw in (PRIV, {**GAUSS, "noise": "gaussian"})],
    "garber-kretzu": [("DPBandit-Matroid-v1", {}, {}), ("DPBandit-Birkhoff-v1", {}, {})],
    "garber-kretzu-tuned": [("DPBandit-Matroid-v2", {}, {}), ("DPBandit-Birkhoff-v2", {}, {})],
    "private-projection-free-tuned": [(e, {}, PRIV) for e in ("DPBandit-Flow-v2",
                                                              "DPBandit-SubmodularBase-v2")],
    "bandit-submod-pftal": [(e, {}, PRIV) for e in ("DPBandit-Submodular-v1",
                                                    "DPBandit-Submodular-v2")],
    "hazan-kale-submodular-bandit": [("DPBandit-Submodular-v1", {}, {}),
                                     ("DPBandit-Submodular-v2", {}, {})],
    "linucb": [("DPBandit-ContextualLinear-v0", {}, {}),
               ("DPBandit-ContextualLinear-v0", {}, {"alpha": 0.5})],
    "lin-ts": [("DPBandit-ContextualLinear-v0", {}, {})],
    "lin-epsilon-greedy": [("DPBandit-ContextualLinear-v0", {}, {"decay": True})],
    "jdp-linucb": [("DPBandit-ContextualLinear-v0", {}, GAUSS)],
    "ldp-linucb": [("DPBandit-ContextualLinear-v0", {}, GAUSS)],
    "center": [(e, {}, {}) for e in ("DPFullInfo-Experts-v0", "DPBandit-MAB-v0",
                                     "DPBandit-Matroid-v1", "DPFullInfo-Submodular-v1")],
    "uniform": [(e, {}, {}) for e in ("DPBandit-MAB-v0", "DPFullInfo-Sphere-v1",
                                      "DPBandit-Birkhoff-v1", "DPBandit-Submodular-v1")],
}
CASES = [(name, *case) for name, cases in PLAYS.items() for case in cases]
HORIZON = 50


def test_every_agent_has_a_game():
    assert set(PLAYS) == {n for n, _ in agents.list_agents()}


def _trace(name, env_id, env_kw, agent_kw, seed):
    env = build_env(env_id, horizon=HORIZON, **env_kw)
    problem = env.get_wrapper_attr("problem")
    agent = make(name, problem, seed=seed, **agent_kw)
    agent.reset(seed)
    obs, _ = env.reset(seed=seed)
    points, seen, terminated = [], [], False
    while not terminated:
        action = agent.act()
        x = problem.domain.to_point(action)
        assert problem.domain.contains(x, 1e-7), f"round {agent.t + 1}: infeasible point"
        obs, _, terminated, _, info = env.step(action)
        agent.update(action, obs)
        points.append(x)
        seen.append(obs.shape)
    return np.stack(points), seen, info["regret"], problem


@pytest.mark.parametrize("name,env_id,env_kw,agent_kw", CASES,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_plays_feasibly_and_deterministically(name, env_id, env_kw, agent_kw):
    a, seen, summary, problem = _trace(name, env_id, env_kw, agent_kw, seed=11)
    b, *_ = _trace(name, env_id, env_kw, agent_kw, seed=11)
    c, *_ = _trace(name, env_id, env_kw, agent_kw, seed=12)
    assert summary.rounds == HORIZON and summary.projected_actions == 0
    assert np.array_equal(a, b)  # same seed, same play, bit for bit
    if agent_class(name).private:
        assert not np.array_equal(a, c)  # the noise depends on the seed
    expected = (1,) if problem.feedback == "bandit" else (problem.loss.param_dim,)
    if env_id in CONTEXTUAL_IDS:  # [loss, context played, next context]
        expected = (1 + 2 * problem.loss.context_dim,)
    assert all(shape == expected for shape in seen)
    # a bandit learner plays bandit envs; the reference agents ignore feedback, so any env
    assert (agent_class(name).feedback == "full" or problem.feedback == "bandit"
            or name in REFERENCE_AGENTS)


def _fed_trace(name, env_id, env_kw, agent_kw, feedback):
    """Play ``HORIZON`` rounds feeding ``feedback(round, problem)``: ``(agent, points, releases)``."""
    env = build_env(env_id, horizon=HORIZON, **env_kw)
    problem = env.get_wrapper_attr("problem")
    agent = make(name, problem, seed=5, **agent_kw)
    agent.record_releases = True
    agent.reset(5)
    points = []
    for t in range(HORIZON):
        action = agent.act()
        points.append(problem.domain.to_point(action))
        agent.update(action, feedback(t, problem))
    return agent, np.stack(points), agent.releases


def _out_of_range(t, problem, scale):
    """Round ``t``'s out-of-range feedback: far outside the declared bounds, a random sign
    per round (bandit), or a far-out parameter (full information)."""
    rng = np.random.default_rng(t)
    if problem.feedback == "bandit":
        loss = [scale * (1.0 + t) * rng.choice([-1.0, 1.0])]
        d = getattr(problem.loss, "context_dim", 0)  # contexts: far out along an axis
        contexts = np.zeros(2 * d)
        if d:
            contexts[[t % d, d + (t + 1) % d]] = scale * rng.choice([-1.0, 1.0], 2)
        return np.array([*loss, *contexts])
    return scale * rng.standard_normal(problem.loss.param_dim)


@pytest.mark.parametrize("name,env_id,env_kw,agent_kw", CASES,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_only_the_clipped_feedback_reaches_the_learner(name, env_id, env_kw, agent_kw):
    """Released values and actions are those of a same-seed twin fed the clipped feedback.

    The privacy calibrations assume the sensitivity the clip enforces, so a clip that is
    counted but whose unclipped value is passed on breaks them. Bandit feedback: one agent
    sees ``+-1e6 (1 + t)`` and its twin ``+-1e9``: both clip to the same bound, so their
    releases (clipped value + the same noise) and their actions must agree bit for bit.
    Full information: the twin sees ``loss.clip_param`` of the first one's parameter.
    """
    def raw(t, problem):
        return _out_of_range(t, problem, 1e6 if problem.feedback == "bandit" else 50.0)

    def twin(t, problem):
        if problem.feedback == "bandit":
            return np.sign(raw(t, problem)) * 1e9
        return problem.loss.clip_param(raw(t, problem))

    a, points_a, releases_a = _fed_trace(name, env_id, env_kw, agent_kw, raw)
    b, points_b, releases_b = _fed_trace(name, env_id, env_kw, agent_kw, twin)
    assert a.clipped_feedback == HORIZON
    assert [r for r, _ in releases_a] == [r for r, _ in releases_b]
    if agent_class(name).private:
        assert releases_a
    if a.problem.feedback == "bandit":  # the same clipped number: bit for bit
        assert np.array_equal(points_a, points_b)
        assert all(np.array_equal(va, vb) for (_, va), (_, vb) in zip(releases_a, releases_b))
    else:  # an l2 projection may round to norm 1 + 1 ulp, so clipping it again moves it
        np.testing.assert_allclose(points_a, points_b, rtol=1e-9, atol=1e-9)
        for (_, va), (_, vb) in zip(releases_a, releases_b):
            np.testing.assert_allclose(va, vb, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", [n for n in PLAYS if agent_class(n).private])
def test_a_private_learner_refuses_delta_zero_exactly_when_it_declares_needs_delta(name):
    """``needs_delta`` (what the learner pages print) is what the learner does: at its
    first case's options with ``delta = 0``, it refuses with a message naming delta iff it
    declares it needs one."""
    env_id, env_kwargs, kwargs = PLAYS[name][0]
    problem = build_env(env_id, horizon=HORIZON, **env_kwargs).get_wrapper_attr("problem")
    kwargs = {**{k: v for k, v in kwargs.items() if k != "delta"}, "delta": 0.0}
    if agent_class(name).needs_delta:
        with pytest.raises(ValueError, match="delta"):
            make(name, problem, seed=0, **kwargs)
    else:
        assert make(name, problem, seed=0, **kwargs).privacy.delta == 0.0
