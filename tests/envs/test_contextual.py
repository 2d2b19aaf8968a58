"""The contextual bandit id: Gymnasium conformance, the stated law, the observation, the
exact regret against brute force, and the guard's doors (the hostile-learner tricks of
``tests/envs/test_hostile_learners.py``, applied to the contextual id)."""

from __future__ import annotations

import copy
import itertools
import math
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

from dp_online_envs.adversaries.contextual import StochasticLinearContexts
from dp_online_envs.envs.contextual import (
    CONTEXT_INFO_KEY,
    ContextualBanditEnv,
    observation_layout,
)
from dp_online_envs.envs.registry import CONTEXTUAL_IDS, ENV_IDS, build_env
from dp_online_envs.wrappers import regret_summary
from dp_online_envs.wrappers.feedback import LEARNER_ATTRIBUTES

ID = "DPBandit-ContextualLinear-v0"
T = 40
SEED = 12345
D = 5
LAYOUT = observation_layout(D)


ADVERSARIES = ("stochastic-linear", "adversarial-context")


def _make(**kwargs) -> gym.Env:
    return gym.make(ID, horizon=kwargs.pop("horizon", T), record_losses=True, **kwargs)


DATA_ID = "DPBandit-ContextualClasses-v0"


def test_registered_but_not_benchmark_ids():
    assert CONTEXTUAL_IDS == (ID, DATA_ID)
    assert all(i in gym.registry and i not in ENV_IDS for i in CONTEXTUAL_IDS)


@pytest.mark.parametrize("env_id", CONTEXTUAL_IDS)
def test_gymnasium_and_sb3_checkers_pass(env_id):
    from stable_baselines3.common import env_checker as sb3_checker  # torch: where used

    env = gym.make(env_id, horizon=T)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gym_check_env(env.unwrapped, skip_render_check=False)
        gym_check_env(env)
        sb3_checker.check_env(env, warn=True)
    bad = [str(w.message) for w in caught if "wrapped" not in str(w.message)]
    assert not bad, bad


def _play(env: gym.Env, seed: int, actions) -> tuple[list, np.ndarray]:
    obs, _ = env.reset(seed=seed)
    seen = [obs]
    for a in actions:
        seen.append(env.step(a))
    return seen, env.unwrapped.played_losses().thetas


@pytest.mark.parametrize("adversary", ADVERSARIES)
def test_observation_is_the_loss_played_and_the_contexts(adversary):
    env = _make(adversary=adversary)
    actions = [int(a) for a in np.random.default_rng(0).integers(0, 5, T)]
    obs, _ = env.reset(seed=SEED)
    assert obs.shape == (1 + 2 * D,) and np.all(obs[:1 + D] == 0)
    nxt = obs[LAYOUT["next"]]
    thetas = []
    for t, a in enumerate(actions, 1):
        c = nxt
        assert np.linalg.norm(c) == pytest.approx(1.0) and c[0] == pytest.approx(2 ** -0.5)
        obs, r, term, trunc, info = env.step(a)
        theta = env.unwrapped.played_losses().thetas[-1]
        thetas.append(theta)
        assert obs[0] == theta[a] == -r and set(np.unique(theta)) <= {0.0, 1.0}
        np.testing.assert_array_equal(obs[LAYOUT["played"]], c)
        nxt = obs[LAYOUT["next"]]
        assert (t == T) == term and not trunc
        assert info == ({} if t < T else {"regret": info["regret"]})
    assert np.all(nxt == 0)  # no round after the last


@pytest.mark.parametrize("adversary", ADVERSARIES)
def test_same_seed_same_game_and_contexts_do_not_depend_on_the_play(adversary):
    a = _play(_make(adversary=adversary), SEED, [0] * T)
    b = _play(_make(adversary=adversary), SEED, [1] * T)
    c = _play(_make(adversary=adversary), SEED + 1, [0] * T)
    np.testing.assert_array_equal(a[1], b[1])  # oblivious: the losses too
    for (oa, *_), (ob, *_) in zip(a[0][1:], b[0][1:]):
        np.testing.assert_array_equal(oa[1:], ob[1:])
    assert not np.array_equal(a[1], c[1])


def test_the_law_means_are_linear_in_the_context_and_in_the_unit_interval():
    env = build_env(ID, horizon=4000)
    env.reset(seed=3)
    adv = env.unwrapped.adversary
    assert adv.params.shape == (5, D)
    np.testing.assert_allclose(adv.params[:, 0], 2 ** -0.5)
    np.testing.assert_allclose(np.linalg.norm(adv.params[:, 1:], axis=1), 2 ** -0.5)
    dev = np.zeros(5)
    for _ in range(4000):
        *_, info = env.unwrapped.step(0)
        rec = info[CONTEXT_INFO_KEY]
        np.testing.assert_allclose(rec.means, adv.params @ rec.context, atol=1e-15)
        assert np.all((rec.means >= 0) & (rec.means <= 1))
        dev += info["round"].theta - rec.means
    # sum of (Bernoulli - mean): a martingale with increments in [-1, 1], sd <= sqrt(T)/2
    assert np.all(np.abs(dev) < 5 * math.sqrt(4000) / 2), dev


@pytest.mark.parametrize("adversary", ADVERSARIES)
def test_trivial_play_loses_more_than_a_fifth_a_round_on_every_seed(adversary):
    """The registry's rule for a benchmark default (>= 0.1 a round), with room: a
    uniformly random arm's expected loss exceeds the best policy's by more than 0.2 a
    round over the 200 contexts of each of game seeds 0-99 (the smallest: 0.2195 on
    the i.i.d. contexts, 0.2113 on the adversarial ones)."""
    worst = math.inf
    for seed in range(100):
        env = build_env(ID, horizon=200, adversary=adversary).unwrapped
        env.reset(seed=seed)
        gaps = [np.mean(r.means) - np.min(r.means)
                for r in (env.step(0)[4][CONTEXT_INFO_KEY] for _ in range(200))]
        worst = min(worst, float(np.mean(gaps)))
    assert worst > 0.2, worst


def test_adversarial_contexts_come_in_phases_of_doubling_length():
    env = build_env(ID, horizon=64, adversary="adversarial-context",
                    adversary_kwargs={"spread": 1e-9}).unwrapped
    env.reset(seed=5)
    zs = np.array([env.step(0)[4][CONTEXT_INFO_KEY].context[1:] * math.sqrt(2)
                   for _ in range(64)])
    for j in range(6):  # rounds 2^j .. 2^{j+1} - 1 share their phase direction
        phase = zs[2 ** j - 1:2 ** (j + 1) - 1]
        np.testing.assert_allclose(phase, np.repeat(phase[:1], len(phase), 0), atol=1e-8)
        if j:
            assert np.linalg.norm(phase[0] - zs[2 ** j - 2]) > 1e-3  # a new direction
    with pytest.raises(ValueError, match="spread"):
        build_env(ID, adversary="adversarial-context", adversary_kwargs={"spread": 0.0})


# ------------------------------------------------------------------- exact regret
SUPPORT = np.array([[0.6, 0.0, 0.8], [0.6, 0.8, 0.0], [0.6, -0.8, 0.0], [1.0, 0.0, 0.0]])
PARAMS = np.array([[0.5, 0.3, 0.1], [0.5, -0.2, 0.4], [0.4, 0.1, -0.3]])


def _small_game(horizon: int = 60) -> gym.Env:
    return build_env(ID, n_arms=3, loss_kwargs={"context_dim": 3}, horizon=horizon,
                     record_losses=True,
                     adversary_kwargs={"params": PARAMS, "contexts": SUPPORT})


def test_best_policy_is_the_brute_force_best_of_all_policies():
    """Over all K^m maps from the m support contexts to arms, the least expected loss
    under the uniform law is the per-context best arm, which the ledger uses."""
    means = SUPPORT @ PARAMS.T  # (m, K)
    best = min(itertools.product(range(3), repeat=len(SUPPORT)),
               key=lambda pi: np.mean([means[i, a] for i, a in enumerate(pi)]))
    assert list(best) == list(np.argmin(means, axis=1))
    # and no linear policy argmin_a <w_a, c> of 2000 random ones does better
    rng = np.random.default_rng(0)
    for w in rng.standard_normal((2000, 3, 3)):
        pi = np.argmin(SUPPORT @ w.T, axis=1)
        assert means[np.arange(4), pi].mean() >= means[np.arange(4), best].mean()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regret_and_pseudo_regret_equal_brute_force(seed):
    env = _small_game()
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    means = SUPPORT @ PARAMS.T
    contexts, actions = [], []
    for _ in range(60):
        contexts.append(int(np.flatnonzero(np.all(SUPPORT == obs[4:7], axis=1))[0]))
        actions.append(int(rng.integers(3)))
        obs, *_, info = env.step(actions[-1])
    thetas = env.unwrapped.played_losses().thetas
    pi = min(itertools.product(range(3), repeat=4),
             key=lambda p: sum(means[i, p[i]] for i in range(4)))
    learner = sum(thetas[t, a] for t, a in enumerate(actions))
    comparator = sum(thetas[t, pi[c]] for t, c in enumerate(contexts))
    pseudo = sum(means[c, a] - means[c, pi[c]] for c, a in zip(contexts, actions))
    s = info["regret"]
    assert s.exact and s.regret_lo == s.regret_hi == s.regret
    assert s.learner_loss == learner and s.comparator_lo == comparator
    assert s.regret == learner - comparator
    assert s.pseudo_regret == pytest.approx(pseudo, abs=1e-12)
    assert s.checkpoints[-1] == 60 and s.regret_curve_lo[-1] == s.regret


def test_summary_mid_game_is_the_regret_so_far():
    env = _small_game()
    env.reset(seed=0)
    for _ in range(10):
        env.step(0)
    mid = regret_summary(env)
    assert mid.rounds == 10 and mid.checkpoints[-1] == 10
    assert mid.regret_curve_lo[-1] == mid.regret


def test_bad_laws_are_refused_with_the_value():
    env = build_env(ID, n_arms=3, loss_kwargs={"context_dim": 3},
                    adversary_kwargs={"params": -PARAMS, "contexts": SUPPORT})
    with pytest.raises(ValueError, match=r"mean losses .* range over \[-0.62, .*expected \[0, 1\]"):
        env.reset(seed=0)
    env = build_env(ID, adversary_kwargs={"params": np.ones((5, D))})  # the sphere law
    with pytest.raises(ValueError, match=r"range over \[-0.707107, 2.12132\]"):
        env.reset(seed=0)
    env = build_env(ID, n_arms=3, loss_kwargs={"context_dim": 3},
                    adversary_kwargs={"params": PARAMS[:2], "contexts": SUPPORT})
    with pytest.raises(ValueError, match=r"params rejected: shape \(2, 3\), expected \(3, 3\)"):
        env.reset(seed=0)
    with pytest.raises(ValueError, match="norm <= 1"):
        StochasticLinearContexts(contexts=2 * SUPPORT)
    with pytest.raises(ValueError, match="unknown contextual adversary 'oblivious'"):
        build_env(ID, adversary="oblivious")
    with pytest.raises(ValueError, match="bandit feedback only"):
        build_env(ID, feedback="full")
    with pytest.raises(ValueError, match="context_dim"):
        build_env(ID, loss_kwargs={"context_dim": 1})
    from dp_online_envs.adversaries import StochasticAdversary
    from dp_online_envs.domains import Arms
    from dp_online_envs.losses import LinearLoss
    from dp_online_envs.losses.contextual import ContextualLinearLoss
    with pytest.raises(TypeError, match="ContextualLinearLoss"):
        ContextualBanditEnv(Arms(3), LinearLoss(3, "unit"), StochasticLinearContexts())
    loss = ContextualLinearLoss(3, context_dim=3)
    with pytest.raises(ValueError, match="feedback='full' rejected"):
        ContextualBanditEnv(Arms(3), loss, StochasticLinearContexts(), feedback="full")
    with pytest.raises(TypeError, match="needs a contextual adversary"):
        ContextualBanditEnv(Arms(3), loss, StochasticAdversary())
    with pytest.raises(ValueError, match="unknown contextual adversary 'planted'"):
        ContextualBanditEnv(Arms(3), loss, "planted")
    with pytest.raises(ValueError, match="theta_set='linf' rejected"):
        ContextualLinearLoss(3, theta_set="linf")
    with pytest.raises(ValueError, match="plays K arms with contextual losses"):
        StochasticLinearContexts().reset(np.random.default_rng(0), Arms(3),
                                         LinearLoss(3, "unit"), 10)


# -------------------------------------------------------- the guard, door by door
def _twins(arm0_same: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Two parameter sets that agree on arm 0 and differ on the other arms."""
    other = PARAMS.copy()
    other[1:] = [[0.3, -0.1, -0.2], [0.6, 0.3, 0.2]]
    return PARAMS, other


def _twin_game(params: np.ndarray, **kwargs) -> gym.Env:
    return gym.make(ID, n_arms=3, loss_kwargs={"context_dim": 3}, horizon=T,
                    record_losses=True,
                    adversary_kwargs={"params": params, "contexts": SUPPORT}, **kwargs)


@pytest.mark.parametrize("mode", [None, "ansi", "rgb_array"])
def test_learner_sees_the_context_and_its_arms_loss_only(mode):
    """Twin games equal on arm 0 and different on arms 1, 2: a learner that plays arm 0
    sees the same observations, rewards, infos and pictures in both, bit for bit, while
    the experimenter's records differ."""
    runs = []
    for params in _twins():
        env = _twin_game(params, render_mode=mode)
        seen = [env.reset(seed=SEED)]
        seen += [env.step(0)[:4] for _ in range(T - 1)]
        *step, info = env.step(0)
        seen.append(tuple(step))
        runs.append((seen, info["regret"], env.unwrapped.played_losses().thetas,
                     env.render() if mode else None, env.unwrapped.render() if mode else None))
    (a, ra, ta, pa, fa), (b, rb, tb, pb, fb) = runs
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)
    assert not np.array_equal(ta[:, 1:], tb[:, 1:])  # the other arms' losses differ
    np.testing.assert_array_equal(ta[:, 0], tb[:, 0])
    assert ra.regret != rb.regret  # the experimenter's ledger does differ
    if mode == "rgb_array":
        np.testing.assert_array_equal(pa, pb)
        assert not np.array_equal(fa, fb)
    elif mode == "ansi":
        assert pa == pb


SECRETS = ("adversary", "played_losses", "domain", "loss", "horizon", "round", "totals",
           "params", "context", "last_round", "mean_param", "feedback", "context_dim")


@pytest.mark.parametrize("env_id", CONTEXTUAL_IDS)
def test_get_wrapper_attr_withholds_everything_but_the_allowlist(env_id):
    guard = build_env(env_id, horizon=T)
    guard.reset(seed=SEED)
    env = gym.make(env_id, horizon=T)
    env.reset(seed=SEED)
    for name in SECRETS:
        with pytest.raises(AttributeError, match=f"FeedbackGuard withholds {name!r}"):
            guard.get_wrapper_attr(name)
        assert not guard.has_wrapper_attr(name) and not env.has_wrapper_attr(name)
        with pytest.raises(AttributeError):
            getattr(env, name)
    assert all(guard.has_wrapper_attr(n) for n in LEARNER_ATTRIBUTES)
    problem = env.get_wrapper_attr("problem")
    assert (problem.horizon, problem.feedback) == (T, "bandit")
    assert problem.loss.context_dim == (D if env_id == ID else 14)  # wine: 13 features
    with pytest.raises(AttributeError, match="refuses set_wrapper_attr"):
        guard.set_wrapper_attr("horizon", 3)
    with pytest.raises(ValueError, match="takes no options"):
        env.reset(seed=SEED, options={"horizon": 3})


@pytest.mark.parametrize("env_id", CONTEXTUAL_IDS)
def test_info_is_empty_until_the_last_round_and_never_holds_the_context_record(env_id):
    env = gym.make(env_id, horizon=T)
    _, info = env.reset(seed=SEED)
    infos = [info] + [env.step(0)[4] for _ in range(T)]
    assert all(i == {} for i in infos[:-1]) and set(infos[-1]) == {"regret"}
    # the unwrapped env does hand the ledger the means: the guard strips them
    inner = build_env(env_id).unwrapped
    inner.reset(seed=0)
    assert CONTEXT_INFO_KEY in inner.step(0)[4]


def test_summary_is_withheld_mid_game_and_given_at_the_end():
    env = _make()
    env.reset(seed=SEED)
    for _ in range(T // 2):
        env.step(1)
    with pytest.raises(RuntimeError, match="withholds the regret summary while a game"):
        env.get_wrapper_attr("summary")()
    for _ in range(T // 2):
        *_, info = env.step(1)
    assert env.get_wrapper_attr("summary")() == info["regret"]


def test_the_env_cannot_be_copied_or_pickled():
    env = _make()
    env.reset(seed=SEED)
    for attempt in (copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="cannot be copied or pickled"):
            attempt(env)


def test_np_random_predicts_neither_contexts_nor_losses():
    env = _make()
    env.reset(seed=SEED)
    stolen = copy.deepcopy(env.np_random)
    seen = [env.step(0)[0] for _ in range(T)]
    actual = env.unwrapped.played_losses().thetas
    twin = _make()
    twin.reset(seed=0)
    twin.unwrapped.adversary._context_rng = copy.deepcopy(stolen)  # the best guess
    twin.unwrapped.adversary._loss_rng = stolen
    guessed = [twin.step(0)[0] for _ in range(T)]
    assert not any(np.array_equal(a[1:], b[1:]) for a, b in zip(seen, guessed))
    assert not np.array_equal(actual, twin.unwrapped.played_losses().thetas)
    assert env.np_random_seed == -1


# --------------------------------------------------- full-feedback data as bandit feedback
def _data_game(features, labels, k: int, horizon: int = 80) -> gym.Env:
    from dp_online_envs.adversaries.contextual import ReplayedExamples
    from dp_online_envs.domains import Arms
    from dp_online_envs.envs.contextual import ContextualRegretRecorder
    from dp_online_envs.losses.contextual import ContextualLinearLoss
    from dp_online_envs.wrappers import FeedbackGuard

    env = ContextualBanditEnv(Arms(k), ContextualLinearLoss(k, context_dim=3),
                              ReplayedExamples(features, labels), horizon=horizon,
                              record_losses=True)
    return FeedbackGuard(ContextualRegretRecorder(env))


#: Three distinct rows, duplicated, with conflicting labels on two of them.
ROWS = np.array([[0.6, 0.8], [0.6, 0.8], [0.6, 0.8], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
LABELS = np.array([1, 1, 0, 0, 1, 0])


@pytest.mark.parametrize("seed", [0, 1])
def test_data_regret_is_against_the_brute_force_best_of_all_policies(seed):
    """Examples drawn uniformly: the best of the 2^3 policies on the 3 distinct rows, by
    brute force over the empirical law, is the per-row majority label (ties to 0), and
    the ledger's regret and pseudo-regret are against it."""
    distinct = np.unique(ROWS, axis=0)
    group = [int(np.flatnonzero(np.all(distinct == r, axis=1))[0]) for r in ROWS]

    def expected_loss(pi):
        return np.mean([pi[g] != y for g, y in zip(group, LABELS)])

    best = min(itertools.product(range(2), repeat=3), key=expected_loss)
    means = np.array([[np.mean([LABELS[i] != a for i in range(6) if group[i] == g])
                       for a in range(2)] for g in range(3)])
    assert list(best) == list(np.argmin(means, axis=1)) == [0, 1, 0]  # [0,1]: a 1-1 tie
    env = _data_game(ROWS, LABELS, 2)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    played, actions = [], []
    for _ in range(80):
        row = obs[5:7] * math.sqrt(2)  # the next context (1, x)/sqrt(2)
        played.append(int(np.flatnonzero(np.all(np.abs(distinct - row) < 1e-12, axis=1))[0]))
        actions.append(int(rng.integers(2)))
        obs, *_, info = env.step(actions[-1])
    thetas = env.unwrapped.played_losses().thetas
    assert set(np.unique(thetas)) <= {0.0, 1.0} and np.all(thetas.sum(axis=1) == 1)
    s = info["regret"]
    learner = sum(thetas[t, a] for t, a in enumerate(actions))
    assert s.learner_loss == learner
    assert s.comparator_lo == sum(thetas[t, best[g]] for t, g in enumerate(played))
    pseudo = sum(means[g, a] - means[g, best[g]] for g, a in zip(played, actions))
    assert s.pseudo_regret == pytest.approx(pseudo, abs=1e-12)


def test_data_id_plays_the_wine_examples():
    from dp_online_envs import datasets

    data = datasets.load_labelled("wine")
    rows = datasets.unit_rows(data.features)
    env = build_env(DATA_ID, horizon=300, record_losses=True)
    obs, _ = env.reset(seed=2)
    assert env.action_space.n == 3 and obs.shape == (1 + 2 * 14,)
    for _ in range(300):
        c = obs[15:29]
        i = int(np.flatnonzero(np.all(np.abs(rows - c[1:] * math.sqrt(2)) < 1e-12, axis=1))[0])
        assert c[0] == pytest.approx(2 ** -0.5)
        obs, r, *_ = env.step(1)
        theta = env.unwrapped.played_losses().thetas[-1]
        np.testing.assert_array_equal(theta, 1.0 - np.eye(3)[data.labels[i]])
        assert -r == theta[1]


def test_data_inputs_are_checked():
    from dp_online_envs.adversaries.contextual import ReplayedExamples

    with pytest.raises(ValueError, match="dataset='iris' rejected"):
        build_env(DATA_ID, dataset="iris")
    with pytest.raises(ValueError, match="norm <= 1"):
        ReplayedExamples(2 * ROWS, LABELS)
    with pytest.raises(ValueError, match="6 integer labels"):
        ReplayedExamples(ROWS, LABELS[:5])
    with pytest.raises(ValueError, match=r"labels rejected: .* expected 0..0"):
        _data_game(ROWS, LABELS, 1).reset(seed=0)
    with pytest.raises(ValueError, match="takes no adversary_kwargs"):
        build_env(DATA_ID, adversary_kwargs={"spread": 1.0})
    env = build_env(DATA_ID, loss_kwargs={"context_dim": 5})
    with pytest.raises(ValueError, match="context_dim=5 rejected: the data has 13 features"):
        env.reset(seed=0)
