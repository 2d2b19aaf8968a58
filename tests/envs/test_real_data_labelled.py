"""The ids built on scikit-learn's bundled labelled data, (c))."""

import hashlib
import importlib

import gymnasium as gym
import numpy as np
import pytest
from scipy.optimize import minimize

pytest.importorskip("sklearn", reason="the 'realdata' extra (scikit-learn) is not installed")

import dp_online_envs
from agents import make, play
from dp_online_envs import datasets
from dp_online_envs.adversaries.data import ShuffledRowsAdversary
from dp_online_envs.envs import real_data

CLS, BANDIT = "DPFullInfo-Classification-v0", "DPBandit-Classes-v0"

# sha256 of features[:5].tobytes() + labels[:5].tobytes() (float64, int64).
KNOWN = {
    "breast-cancer": ((569, 30), [212, 357], [17.99, 10.38, 122.8],
                      "1401e6841b7c8baa0797ade2b36b0b6f3f833cb643f30042cf5776ba7110aca3"),
    "wine": ((178, 13), [59, 71, 48], [14.23, 1.71, 2.43],
             "43c4b66131de201eacfb47eb3e2c0f817b8b018ea3c079385e82a7897bba80a5"),
    "digits": ((1797, 64), [178, 182, 177, 183, 181, 182, 181, 179, 174, 180], [0.0, 0.0, 5.0],
               "3116e5d4afaa980631e75f69fb78074bf376c7b9a0d682e49929c3f1bdef3a8f"),
}


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_loaded_data_matches_known_facts(name):
    shape, counts, first, digest = KNOWN[name]
    data = datasets.load_labelled(name)
    assert data.features.shape == shape and data.n_classes == len(counts)
    assert np.bincount(data.labels).tolist() == counts
    assert data.features[0, :3].tolist() == first
    raw = data.features[:5].tobytes() + data.labels[:5].tobytes()
    assert hashlib.sha256(raw).hexdigest() == digest
    assert not data.features.flags.writeable


def test_unknown_dataset_and_missing_extra_are_named(monkeypatch):
    with pytest.raises(ValueError, match=r"dataset='iris', expected one of"):
        datasets.load_labelled("iris")
    real_import = importlib.import_module

    def no_sklearn(name, *args):
        if name.startswith("sklearn"):
            raise ImportError("no sklearn")
        return real_import(name, *args)

    monkeypatch.setattr(importlib, "import_module", no_sklearn)
    datasets.load_labelled.cache_clear()
    try:
        with pytest.raises(ImportError, match=r"scikit-learn.*\[realdata\]"):
            datasets.load_labelled("wine")
    finally:
        monkeypatch.setattr(importlib, "import_module", real_import)
        datasets.load_labelled.cache_clear()


def test_unit_rows_standardize_then_normalize():
    x = np.array([[1.0, 5.0, 2.0], [3.0, 5.0, 2.0], [5.0, 5.0, 8.0]])
    out = datasets.unit_rows(x)
    # column 0: (1 - 3) / sqrt(8/3); column 1 constant -> 0; column 2: (2 - 4) / sqrt(8)
    z0 = np.array([-2.0 / np.sqrt(8.0 / 3.0), 0.0, -2.0 / np.sqrt(8.0)])
    np.testing.assert_allclose(out[0], z0 / np.linalg.norm(z0), rtol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-14)
    rows = real_data.classification_rows()
    assert rows.shape == (569, 31) and set(rows[:, -1]) == {-1.0, 1.0}
    assert np.all(np.linalg.norm(rows[:, :-1], axis=1) <= 1.0 + 1e-12)
    # benign (label 1) is +1: 357 of them
    assert int((rows[:, -1] > 0).sum()) == 357


def test_shuffled_rows_are_whole_passes_in_a_seeded_order():
    env = gym.make(BANDIT, horizon=1200, record_losses=True)
    env.reset(seed=5)
    adv = env.unwrapped.adversary
    order, replayed = adv.order, adv.sequence.thetas
    assert len(order) == 1200
    assert sorted(order[:569]) == list(range(569))  # every pass is a permutation
    assert sorted(order[569:1138]) == list(range(569))
    env.reset(seed=5)
    np.testing.assert_array_equal(env.unwrapped.adversary.order, order)
    env.reset(seed=6)
    assert not np.array_equal(env.unwrapped.adversary.order, order)
    labels = datasets.load_labelled("breast-cancer").labels
    np.testing.assert_array_equal(replayed, 1.0 - np.eye(2)[labels[order]])


def test_replayed_rows_are_clipped_into_the_parameter_set():
    """The guard: a row outside the family's parameter set is replayed clipped."""
    loss = dp_online_envs.losses.LogisticLoss(2)
    adv = ShuffledRowsAdversary(np.array([[3.0, 4.0, 0.2], [0.3, 0.4, -1.0]]))
    adv.reset(np.random.default_rng(0), dp_online_envs.domains.Ball(2), loss, 2)
    thetas = adv.sequence.thetas
    big = thetas[np.argmax(np.abs(thetas[:, 0]))]
    np.testing.assert_allclose(big, [0.6, 0.8, 1.0], rtol=1e-14)


def _game(env_id, agent="center", horizon=300, seed=0, **kw):
    """Play one game; return the env, its regret summary and the replayed parameters."""
    env = gym.make(env_id, horizon=horizon, record_losses=True, **kw)
    summary = play(env, make(agent, env.get_wrapper_attr("problem"), seed=seed), seed=seed, agent_seed=seed)
    return env, summary, env.unwrapped.played_losses().thetas


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_classification_losses_within_bounds_and_comparator_certified(loss):
    env, summary, thetas = _game(CLS, "ftal", horizon=200, loss=loss)
    problem = env.get_wrapper_attr("problem")
    lossf = problem.loss
    assert problem.dim == 30 and problem.bound == pytest.approx(
        np.logaddexp(0, 1.0) if loss == "logistic" else 2.0)
    xs = np.random.default_rng(1).normal(size=(50, 30))
    xs /= np.maximum(1.0, np.linalg.norm(xs, axis=1, keepdims=True))
    vals = np.array([lossf.values(th, xs) for th in thetas])
    assert vals.min() >= 0.0 and vals.max() <= problem.bound
    # certified comparator against an independent constrained solve (scipy SLSQP)
    def total(x):
        return lossf.total(thetas, x)

    res = minimize(lambda x: total(x)[0], np.zeros(30), jac=lambda x: total(x)[1],
                   constraints=[{"type": "ineq", "fun": lambda x: 1.0 - x @ x,
                                 "jac": lambda x: -2.0 * x}], method="SLSQP",
                   options={"ftol": 1e-12, "maxiter": 500})
    x = res.x / max(1.0, np.linalg.norm(res.x))
    assert summary.comparator_lo <= total(x)[0] + 1e-9
    assert summary.comparator_hi <= total(x)[0] + 1e-6
    assert summary.comparator_hi - summary.comparator_lo <= 1e-6 * summary.comparator_hi


def test_bandit_losses_are_misclassification_and_comparator_exact():
    _, summary, thetas = _game(BANDIT, "uniform", horizon=700)
    assert set(np.unique(thetas)) == {0.0, 1.0} and np.all(thetas.sum(axis=1) == 1.0)
    brute = thetas.sum(axis=0).min()  # the best fixed arm: the majority class in hindsight
    assert summary.exact and summary.comparator_lo == summary.comparator_hi == brute


@pytest.mark.parametrize("dataset,k", [("wine", 3), ("digits", 10)])
def test_bandit_has_one_arm_per_class(dataset, k):
    env = gym.make(BANDIT, dataset=dataset, horizon=5)
    assert env.action_space.n == k


def test_data_adversary_takes_no_options_and_others_still_play():
    with pytest.raises(ValueError, match="adversary='data' takes no adversary_kwargs"):
        gym.make(CLS, adversary_kwargs={"gap": 0.1})
    env = gym.make(CLS, adversary="oblivious", horizon=5)
    env.reset(seed=0)
    assert env.unwrapped.adversary.name == "oblivious"


def test_same_seed_same_game():
    a = _game(BANDIT, "exp3", horizon=400, seed=3)
    b = _game(BANDIT, "exp3", horizon=400, seed=3)
    np.testing.assert_array_equal(a[2], b[2])
    assert a[1].regret == b[1].regret


def _regret(env_id, agent, horizon, seeds=(0, 1), **kw):
    total = 0.0
    for seed in seeds:
        env = gym.make(env_id, horizon=horizon)
        total += play(env, make(agent, env.get_wrapper_attr("problem"), seed=seed, **kw),
                      seed=seed, agent_seed=seed).regret
    return total / len(seeds)


@pytest.mark.parametrize("env_id,learner,private,horizon", [
    (CLS, "ftal", "pftal", 2048), (BANDIT, "exp3", "private-exp2", 2048)])
def test_defaults_separate_learning_from_trivial_play(env_id, learner, private, horizon):
    trivial = _regret(env_id, "center", horizon)
    assert trivial >= 0.1 * horizon
    assert _regret(env_id, learner, horizon) <= 0.5 * trivial
    assert _regret(env_id, private, horizon, epsilon=1.0) < trivial
