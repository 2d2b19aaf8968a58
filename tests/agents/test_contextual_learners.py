"""The linear contextual learners: hand-computed indices, the ridge statistics, the
clipped feedback, learning on the contextual id, and mabwiser (an independent
implementation) on the same games."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import agents
from agents.bandit.lin_ts import lin_ts_scale
from agents.bandit.linucb import linucb_regret_bound
from agents.loop import play
from dp_online_envs.envs.registry import build_env

ID = "DPBandit-ContextualLinear-v0"
NAMES = ("linucb", "lin-ts", "lin-epsilon-greedy")


def _problem(k: int = 2, d: int = 2, horizon: int = 100):
    return build_env(ID, n_arms=k, loss_kwargs={"context_dim": d},
                     horizon=horizon).get_wrapper_attr("problem")


def _fb(loss, played, nxt) -> np.ndarray:
    return np.array([loss, *played, *nxt], dtype=np.float64)


def test_linucb_indices_by_hand():
    """One observation of arm 0 (context (1, 0), loss 1), lambda = 1, level 0.05 / 2:
    arm 0 has A = diag(2, 1), theta_hat = (1/2, 0), beta = R sqrt(2 log 40 + log 2) + 1;
    arm 1 is unobserved, beta = R sqrt(2 log 40) + 1, width 1."""
    agent = agents.make("linucb", _problem(), seed=0)
    agent.update(0, _fb(1.0, (1.0, 0.0), (1.0, 0.0)))
    beta0 = 0.5 * math.sqrt(2 * math.log(40) + math.log(2)) + 1  # 2.4204544...
    beta1 = 0.5 * math.sqrt(2 * math.log(40)) + 1  # 2.3581015...
    expected = [0.5 - beta0 * math.sqrt(0.5), -beta1]
    np.testing.assert_allclose(agent.indices(np.array([1.0, 0.0])), expected, rtol=1e-13)
    assert expected == pytest.approx([-1.2115286, -2.3581015], abs=1e-6)
    assert agent.act() == 1
    fixed = agents.make("linucb", _problem(), seed=0, alpha=0.1)
    fixed.update(0, _fb(1.0, (1.0, 0.0), (0.6, 0.8)))
    c = np.array([0.6, 0.8])  # A^{-1} c = (0.3, 0.8), c^T A^{-1} c = 0.82
    np.testing.assert_allclose(fixed.indices(c), [0.3 - 0.1 * math.sqrt(0.82), -0.1],
                               rtol=1e-13)
    assert fixed.act() == 1


def test_ridge_statistics_match_direct_linear_algebra():
    rng = np.random.default_rng(0)
    agent = agents.make("linucb", _problem(k=3, d=4, horizon=500), seed=0, ridge=2.0)
    xs, ys, arms = [], [], []
    for _ in range(300):
        c = rng.standard_normal(4)
        c /= np.linalg.norm(c)
        a, y = int(rng.integers(3)), float(rng.random())
        agent.update(a, _fb(y, c, c))
        xs.append(c), ys.append(y), arms.append(a)
    xs, ys, arms = np.array(xs), np.array(ys), np.array(arms)
    for a in range(3):
        x, y = xs[arms == a], ys[arms == a]
        gram = 2.0 * np.eye(4) + x.T @ x
        np.testing.assert_allclose(agent.gram[a], gram, rtol=1e-12)
        np.testing.assert_allclose(agent.gram_inv[a], np.linalg.inv(gram), atol=1e-12)
        np.testing.assert_allclose(agent.estimates()[a], np.linalg.solve(gram, x.T @ y),
                                   atol=1e-12)
        assert agent.log_det[a] == pytest.approx(np.linalg.slogdet(gram)[1], rel=1e-12)


def test_lin_ts_draws_by_hand():
    problem = _problem(horizon=100)
    v = 0.5 * math.sqrt(24 * math.log(100) * 4 * math.log(20))  # eps = 1/ln T, D = Kd = 4
    assert lin_ts_scale(100, 4, 0.05) == pytest.approx(v, rel=1e-14)
    agent = agents.make("lin-ts", problem, seed=0)
    assert agent.v == pytest.approx(v, rel=1e-14)
    agent = agents.make("lin-ts", problem, seed=0, v=0.3)
    agent.update(0, _fb(1.0, (1.0, 0.0), (0.6, 0.8)))
    agent.rng = np.random.default_rng(7)
    z = np.random.default_rng(7).standard_normal(2)
    c = np.array([0.6, 0.8])
    expected = np.array([0.3, 0.0]) + 0.3 * np.sqrt([0.82, 1.0]) * z
    np.testing.assert_allclose(agent.samples(c), expected, rtol=1e-13)


def test_epsilon_greedy_explores_at_its_rate_and_is_greedy_otherwise():
    agent = agents.make("lin-epsilon-greedy", _problem(), seed=0, explore=0.25)
    agent.update(0, _fb(1.0, (1.0, 0.0), (1.0, 0.0)))  # arm 0 looks bad in context (1, 0)
    plays = np.array([agent.act() for _ in range(4000)])
    # greedy arm 1, plus arm 0 at rate explore / 2
    assert abs(np.mean(plays == 0) - 0.125) < 4 * math.sqrt(0.125 * 0.875 / 4000)
    decaying = agents.make("lin-epsilon-greedy", _problem(k=8), seed=0, explore=1.0,
                           decay=True)
    decaying.t = 63
    assert decaying.explore_prob() == pytest.approx(0.5)  # (8 / 64)^(1/3)


@pytest.mark.parametrize("name", NAMES)
def test_feedback_is_clipped_to_the_declared_bounds_and_checked(name):
    agent = agents.make(name, _problem(), seed=0)
    agent.update(1, _fb(3.0, (0.0, 2.0), (0.0, -4.0)))
    assert agent.clipped_feedback == 1
    np.testing.assert_allclose(agent.target[1], [0.0, 1.0])  # loss 1, context (0, 1)
    np.testing.assert_allclose(agent.context, [0.0, -1.0])
    with pytest.raises(ValueError, match=r"5 numbers; got shape \(1,\)"):
        agent.update(0, np.array([0.5]))
    with pytest.raises(ValueError, match="finite"):
        agent.update(0, _fb(np.nan, (0, 0), (0, 0)))


@pytest.mark.parametrize("name", NAMES)
def test_refuses_a_game_without_contexts(name):
    problem = gym.make("DPBandit-MAB-v0").get_wrapper_attr("problem")
    with pytest.raises(ValueError, match="plays the contextual ids"):
        agents.make(name, problem)


def _regrets(name: str, seeds, horizon: int = 1000, **options) -> np.ndarray:
    out = []
    for s in seeds:
        env = gym.make(ID, horizon=horizon)
        out.append(play(env, agents.make(name, env.get_wrapper_attr("problem"), seed=s,
                                         **options), seed=s, agent_seed=s).pseudo_regret)
    return np.array(out)


def _uniform(seeds, horizon: int = 1000) -> np.ndarray:
    out = []
    for s in seeds:
        env = build_env(ID, horizon=horizon)
        env.reset(seed=s)
        rng = np.random.default_rng(s)
        for _ in range(horizon):
            *_, info = env.step(int(rng.integers(5)))
        out.append(info["regret"].pseudo_regret)
    return np.array(out)


def test_linucb_beats_uniform_play_on_adversarial_contexts():
    seeds = range(4)
    uniform, linucb = [], []
    for s in seeds:
        env = build_env(ID, horizon=1000, adversary="adversarial-context")
        env.reset(seed=s)
        rng = np.random.default_rng(s)
        for _ in range(1000):
            *_, info = env.step(int(rng.integers(5)))
        uniform.append(info["regret"].pseudo_regret)
        env = gym.make(ID, horizon=1000, adversary="adversarial-context")
        agent = agents.make("linucb", env.get_wrapper_attr("problem"))
        linucb.append(play(env, agent, seed=s, agent_seed=s).pseudo_regret)
    assert np.all(np.array(linucb) < 0.4 * np.array(uniform)), (linucb, uniform)
    assert np.all(np.array(linucb) <= linucb_regret_bound(1000, 5, 5))


def test_learners_beat_uniform_play_on_the_wine_examples():
    uniform, learners = [], {n: [] for n in NAMES}
    for s in range(2):
        env = gym.make("DPBandit-ContextualClasses-v0", horizon=1000)
        problem = env.get_wrapper_attr("problem")
        uniform.append(play(env, agents.make("uniform", problem), seed=s,
                            agent_seed=s).pseudo_regret)
        for n in NAMES:
            options = {"v": 0.5} if n == "lin-ts" else {}
            learners[n].append(play(env, agents.make(n, problem, **options), seed=s,
                                    agent_seed=s).pseudo_regret)
    for n in NAMES:
        assert np.all(np.array(learners[n]) < 0.25 * np.array(uniform)), (n, learners, uniform)


def test_learners_beat_uniform_play_and_linucb_meets_its_bound():
    seeds = range(4)
    uniform = _uniform(seeds)
    linucb = _regrets("linucb", seeds)
    assert np.all(linucb < 0.4 * uniform), (linucb, uniform)
    assert np.all(linucb <= linucb_regret_bound(1000, 5, 5))
    assert np.all(_regrets("lin-ts", seeds, v=0.5) < 0.4 * uniform)
    assert np.all(_regrets("lin-epsilon-greedy", seeds) < 0.5 * uniform)


# ------------------------------------------------------------- against mabwiser
def _mabwiser():
    """``mabwiser.mab``, imported by the tests that use it (with pandas and
    scikit-learn: not at collection, which every worker does for every file)."""
    import mabwiser.mab

    return mabwiser.mab


class _Mabwiser:
    """mabwiser's learner behind the suite's act/update, fed rewards ``-loss`` (so its
    maximization is our minimization); round 1 is a uniformly random arm, as ours."""

    def __init__(self, policy, k: int, d: int, seed: int) -> None:
        self.policy, self.k, self.d = policy, k, d
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.mab = _mabwiser().MAB(list(range(self.k)), self.policy, seed=seed or 0)
        self.rng = np.random.default_rng(seed)
        self.context, self.fitted = None, False

    def act(self) -> int:
        if self.context is None:
            return int(self.rng.integers(self.k))
        return int(self.mab.predict(self.context[None]))

    def update(self, action, feedback) -> None:
        fb = np.asarray(feedback)
        played = fb[1:1 + self.d][None]
        fit = self.mab.partial_fit if self.fitted else self.mab.fit
        fit([int(action)], [-float(fb[0])], contexts=played)
        self.fitted, self.context = True, fb[1 + self.d:]


def _paired(name: str, policy, seeds, horizon: int, **options) -> np.ndarray:
    """Pseudo-regret of ours minus mabwiser's, game seed by game seed."""
    diffs = []
    for s in seeds:
        ours = gym.make(ID, horizon=horizon)
        theirs = gym.make(ID, horizon=horizon)
        a = play(ours, agents.make(name, ours.get_wrapper_attr("problem"), seed=s,
                                   **options), seed=s, agent_seed=s).pseudo_regret
        b = play(theirs, _Mabwiser(policy, 5, 5, s), seed=s, agent_seed=s).pseudo_regret
        diffs.append(a - b)
    return np.array(diffs)


def _ci(x: np.ndarray) -> tuple[float, float]:
    half = 1.96 * x.std(ddof=1) / math.sqrt(len(x)) if len(x) > 1 else 0.0
    return x.mean() - half, x.mean() + half


def test_linucb_indices_equal_mabwisers_on_the_same_history():
    """mabwiser's UCB of the rewards -loss is minus our lower confidence bound, arm by
    arm, on one shared history (fixed alpha: mabwiser has no OFUL radius)."""
    rng = np.random.default_rng(1)
    ours = agents.make("linucb", _problem(k=3, d=4, horizon=400), seed=0, alpha=0.7)
    mabwiser = _mabwiser()
    theirs = mabwiser.MAB([0, 1, 2], mabwiser.LearningPolicy.LinUCB(alpha=0.7), seed=0)
    cs = rng.standard_normal((301, 4))
    cs /= np.linalg.norm(cs, axis=1, keepdims=True)
    arms, losses = rng.integers(0, 3, 300), (rng.random(300) < 0.4).astype(float)
    for t in range(300):
        ours.update(int(arms[t]), _fb(losses[t], cs[t], cs[t + 1]))
    theirs.fit(list(arms), list(-losses), contexts=cs[:300])
    for c in cs[:50]:
        mine = ours.indices(c)
        theirs_ucb = theirs.predict_expectations(c[None])
        np.testing.assert_allclose(mine, [-theirs_ucb[a] for a in range(3)], atol=1e-10)
        assert ours.choose(c) == theirs.predict(c[None])


def test_linucb_plays_mabwisers_game_exactly():
    """Same games, same alpha: the same arms every round, so the paired difference of
    pseudo-regret is exactly 0 on every seed."""
    diffs = _paired("linucb", _mabwiser().LearningPolicy.LinUCB(alpha=0.5), range(3), 200,
                    alpha=0.5)
    np.testing.assert_allclose(diffs, 0.0, atol=1e-9)


def test_lin_ts_matches_mabwiser_in_law():
    """Different generators, the same posterior law: the 95% paired interval of the
    pseudo-regret difference (8 game seeds) holds 0 and is narrow next to the regret."""
    seeds = range(8)
    diffs = _paired("lin-ts", _mabwiser().LearningPolicy.LinTS(alpha=0.5), seeds, 200, v=0.5)
    lo, hi = _ci(diffs)
    assert lo <= 0.0 <= hi, (lo, hi, diffs)
    assert hi - lo < 0.5 * np.mean(_uniform(seeds, 200)), (lo, hi)


def test_isolated_play_is_the_in_process_game():
    """The learner in its own process (what graders use) plays the same game bit for bit:
    the contextual feedback frames carry the contexts."""
    import functools

    from dp_online_envs.lab.isolation import IsolatedLearner, IsolationLimits

    env = gym.make(ID, horizon=100)
    problem = env.get_wrapper_attr("problem")
    with IsolatedLearner(functools.partial(agents.make, "linucb"), problem,
                         env.action_space, IsolationLimits()) as learner:
        isolated = play(env, learner, seed=3, agent_seed=4)
    local = play(gym.make(ID, horizon=100), agents.make("linucb", problem), seed=3,
                 agent_seed=4)
    assert isolated.learner_loss == local.learner_loss
    assert isolated.regret_curve_lo == local.regret_curve_lo


def test_reference_play_reads_the_contextual_feedback_and_wrong_sizes_are_refused():
    """``uniform`` (trivial play) plays the contextual id: ``Agent.clip_feedback`` takes
    the loss of ``[loss, c_t, c_{t+1}]``; feedback of another size is refused by name."""
    env = gym.make(ID, horizon=1000)
    problem = env.get_wrapper_attr("problem")
    summaries = [play(env, agents.make("uniform", problem), seed=s, agent_seed=s)
                 for s in range(4)]
    assert all(s.pseudo_regret / 1000 > 0.2 for s in summaries)
    agent = agents.make("uniform", problem)
    assert agent.clip_feedback(_fb(3.0, np.zeros(5), np.zeros(5))).tolist() == [1.0]
    assert agent.clipped_feedback == 1
    with pytest.raises(ValueError, match=r"11 number\(s\), got shape \(1,\)"):
        agent.clip_feedback(np.array([0.5]))
    mab = agents.make("uniform", gym.make("DPBandit-MAB-v0").get_wrapper_attr("problem"))
    with pytest.raises(ValueError, match=r"1 number\(s\), got shape \(11,\)"):
        mab.clip_feedback(_fb(0.5, np.zeros(5), np.zeros(5)))
