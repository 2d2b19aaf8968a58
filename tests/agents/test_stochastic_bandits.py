"""The stochastic K-armed baselines: ``ucb1``, ``kl-ucb`` and ``thompson``.

* UCB1's index is the hand-computed ``mean + sqrt(2 ln t / N)`` on rewards
  ``(hi - f) / (hi - lo)`` (a range other than ``[0, 1]``, so a wrong conversion fails);
* KL-UCB's index is the root of ``N d(mu, q) = ln t`` found by a plain bisection, to
  ``1e-12``, over means and levels from the extremes to the ones a game produces;
* Thompson's Beta posterior is the conjugate update ``Beta(1 + S, 1 + F)``, its Gaussian
  one ``N(sum r / (N + 1), 1 / (N + 1))``, and the arm it plays has the posterior's
  probability of being the largest (``P(Beta(3,1) > Beta(1,3)) = 0.95`` exactly);
* on a two-armed gap instance all three have logarithmic regret: the log-log slope of
  the mean pseudo-regret over ``T = 2000..8000``, with a paired-seed bootstrap 95%
  interval, lies below the ``1/2`` of a ``sqrt(T)`` learner, and UCB1 stays below its
  Theorem 1 bound.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents import make
from agents.bandit.stochastic import kl_bernoulli, kl_ucb_index
from dp_online_envs import build_env


def _problem(k=3, horizon=100, **kw):
    return build_env("DPBandit-MAB-v0", horizon=horizon, n_arms=k, **kw).unwrapped.problem


def _feed(agent, plays):
    """Update ``agent`` with the (arm, loss) pairs of ``plays``, whatever it would play."""
    for arm, loss in plays:
        agent.update(arm, np.array([loss]))


# ------------------------------------------------------------------------ UCB1
def test_ucb1_index_by_hand():
    agent = make("ucb1", _problem(), loss_range=(-1.0, 3.0))  # r = (3 - f) / 4
    assert [agent.act() for _ in range(1)] == [0]
    _feed(agent, [(0, -1.0), (1, 3.0), (2, 2.0)])  # rewards 1, 0, 1/4
    _feed(agent, [(0, 1.0), (2, 0.0), (2, -1.0)])  # rewards 1/2, 3/4, 1
    # t = 6; arm 0: rewards 1, 1/2; arm 1: 0; arm 2: 1/4, 3/4, 1
    expected = [0.75 + math.sqrt(2 * math.log(6) / 2),
                0.0 + math.sqrt(2 * math.log(6) / 1),
                2 / 3 + math.sqrt(2 * math.log(6) / 3)]
    assert agent.indices() == pytest.approx(expected, rel=1e-15, abs=0)
    assert agent.act() == 0  # 2.089 > 1.893 > 1.760
    _feed(agent, [(1, 3.0)])  # arm 1 again: reward 0, N = 2, t = 7
    assert agent.index(1, 7) == pytest.approx(0.0 + math.sqrt(math.log(7)), rel=1e-15)


def test_ucb1_plays_every_arm_once_first():
    agent = make("ucb1", _problem(k=4))
    first = []
    for _ in range(4):
        first.append(agent.act())
        agent.update(first[-1], np.array([1.0]))
    assert first == [0, 1, 2, 3]


def test_ucb1_regret_bound_is_theorem_1_in_loss_units():
    agent = make("ucb1", _problem(horizon=1000), loss_range=(0.0, 2.0))
    # w = 2: 8 w^2 ln T / Delta per suboptimal arm + (1 + pi^2/3) sum Delta
    expected = 8 * 4 * math.log(1000) * (1 / 0.5 + 1 / 1.0) + (1 + math.pi ** 2 / 3) * 1.5
    assert agent.regret_bound([0.0, 0.5, 1.0]) == pytest.approx(expected, rel=1e-14)


# ---------------------------------------------------------------------- KL-UCB
def _bisection(p: float, level: float) -> float:
    lo, hi = p, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if kl_bernoulli(p, mid) <= level:
            lo = mid
        else:
            hi = mid
    return lo


def test_kl_bernoulli_against_its_formula():
    for p, q in [(0.3, 0.5), (0.01, 0.99), (0.5, 0.5000001)]:
        direct = p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))
        assert kl_bernoulli(p, q) == pytest.approx(direct, rel=1e-9)
    assert kl_bernoulli(0.0, 0.5) == pytest.approx(math.log(2), rel=1e-15)
    assert kl_bernoulli(1.0, 0.25) == pytest.approx(math.log(4), rel=1e-15)
    assert kl_bernoulli(0.5, 1.0) == math.inf and kl_bernoulli(0.5, 0.0) == math.inf


def test_kl_ucb_index_matches_bisection():
    rng = np.random.default_rng(0)
    means = [0.0, 1e-9, 0.01, 0.3, 0.5, 0.75, 0.99, 1 - 1e-9, 1.0, *rng.random(40)]
    # the levels a game produces, ln t / N for t <= 1e6, and extreme ones
    levels = [0.0, 1e-6, math.log(1e6) / 1e6, 1e-3, math.log(5) / 3, 1.0, 5.0, 50.0,
              *rng.random(10) * 3]
    worst = 0.0
    for p in means:
        for level in levels:
            q = kl_ucb_index(float(p), float(level))
            worst = max(worst, abs(q - _bisection(float(p), float(level))))
            assert p <= q <= 1.0
    assert worst <= 1e-12


def test_kl_ucb_index_rejects_bad_input():
    with pytest.raises(ValueError, match=r"p=1\.5, expected a mean in \[0, 1\]"):
        kl_ucb_index(1.5, 0.1)
    with pytest.raises(ValueError, match=r"level=-0\.1"):
        kl_ucb_index(0.5, -0.1)


def test_kl_ucb_agent_index_is_the_level_root():
    agent = make("kl-ucb", _problem(k=2))
    _feed(agent, [(0, 0.0), (1, 1.0), (0, 1.0), (0, 0.0)])  # arm 0: rewards 1, 0, 1
    t, q = 4, agent.index(0, 4)
    assert 3 * kl_bernoulli(2 / 3, q) == pytest.approx(math.log(t), rel=1e-12)
    assert q == pytest.approx(_bisection(2 / 3, math.log(4) / 3), abs=1e-12)
    c3 = make("kl-ucb", _problem(k=2), c=3.0)
    assert c3.level(20) == pytest.approx(math.log(20) + 3 * math.log(math.log(20)), rel=1e-15)
    assert c3.level(2) == math.log(2)  # ln ln t dropped while ln t <= 1


# -------------------------------------------------------------------- Thompson
def test_thompson_beta_posterior_is_the_conjugate_update():
    agent = make("thompson", _problem(k=3), seed=0)
    losses = [(0, 0.0), (0, 1.0), (0, 0.0), (2, 1.0), (2, 1.0), (0, 0.0)]
    _feed(agent, losses)
    a, b = agent.posterior_parameters()
    # reward 1 - f: arm 0 three successes and one failure, arm 2 two failures
    assert a.tolist() == [4.0, 1.0, 1.0] and b.tolist() == [2.0, 1.0, 3.0]


def test_thompson_bernoulli_trial_of_fractional_rewards():
    agent = make("thompson", _problem(k=2), seed=3)
    _feed(agent, [(1, 0.7)] * 4000)  # reward 0.3
    a, b = agent.posterior_parameters()
    assert a[1] + b[1] == 4002 and a[0] == b[0] == 1.0
    # S ~ Binomial(4000, 0.3): within 4 standard deviations (23.2)
    assert abs((a[1] - 1) - 1200) < 4 * math.sqrt(4000 * 0.3 * 0.7)


def test_thompson_gaussian_posterior():
    agent = make("thompson", _problem(k=3), posterior="gaussian", loss_range=(0.0, 2.0))
    _feed(agent, [(0, 0.5), (0, 1.5), (1, 2.0)])  # rewards 3/4, 1/4; 0
    mean, var = agent.posterior_parameters()
    assert mean.tolist() == [1.0 / 3.0, 0.0, 0.0]
    assert var.tolist() == [1 / 3, 1 / 2, 1.0]


def test_thompson_plays_the_posterior_probability_of_being_best():
    """Beta(3, 1) against Beta(1, 3): P(X > Y) = 1 - 3 B(3, 4) = 0.95 exactly."""
    agent = make("thompson", _problem(k=2), seed=1)
    _feed(agent, [(0, 0.0), (0, 0.0), (1, 1.0), (1, 1.0)])
    state = (agent.successes.copy(), agent.failures.copy())
    n = 8000
    zeros = sum(agent.act() == 0 for _ in range(n))  # act() draws, never updates
    assert [agent.successes.tolist(), agent.failures.tolist()] == [s.tolist() for s in state]
    assert abs(zeros / n - 0.95) < 4 * math.sqrt(0.95 * 0.05 / n)


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match=r"posterior='normal', expected one of"):
        make("thompson", _problem(), posterior="normal")
    with pytest.raises(ValueError, match="exploration"):
        make("ucb1", _problem(), exploration=0.0)
    with pytest.raises(ValueError, match="c"):
        make("kl-ucb", _problem(), c=-1.0)
    full = build_env("DPFullInfo-Experts-v0", horizon=10).unwrapped.problem
    for name in ("ucb1", "kl-ucb", "thompson"):
        with pytest.raises(ValueError, match="bandit"):
            make(name, full)
    cube = build_env("DPBandit-Linear-v1", horizon=10).unwrapped.problem
    with pytest.raises(ValueError, match=r"plays K arms"):
        make("ucb1", cube)


def test_same_seed_same_game_and_ucb_ignores_the_seed():
    def play(name, seed, **kw):
        agent = make(name, _problem(k=3, horizon=300), seed=seed, **kw)
        rng = np.random.default_rng(7)
        arms = []
        for _ in range(300):
            arms.append(agent.act())
            agent.update(arms[-1], np.array([float(rng.random() < 0.3 + 0.2 * arms[-1])]))
        return arms

    for name, kw in [("thompson", {}), ("thompson", {"posterior": "gaussian"})]:
        assert play(name, 4, **kw) == play(name, 4, **kw)
        assert play(name, 4, **kw) != play(name, 5, **kw)
    for name in ("ucb1", "kl-ucb"):  # deterministic index policies
        assert play(name, 4) == play(name, 5)


# ------------------------------------------------------- logarithmic regret
MEANS = np.array([0.3, 0.6])  # Bernoulli losses: arm 0 best, gap 0.3
CHECKS = (500, 1000, 2000, 4000, 8000)
SEEDS = 12


def _pseudo_regret(name: str, kw: dict) -> np.ndarray:
    """``(SEEDS, len(CHECKS))`` pseudo-regrets ``sum_t Delta_{I_t}`` at the checkpoints;
    seed ``s`` plays the loss stream of seed ``1000 + s`` for every learner (paired)."""
    horizon = CHECKS[-1]
    gaps = MEANS - MEANS.min()
    problem = _problem(k=2, horizon=horizon)
    out = np.zeros((SEEDS, len(CHECKS)))
    for s in range(SEEDS):
        losses = (np.random.default_rng(1000 + s).random((horizon, 2)) < MEANS).astype(float)
        agent = make(name, problem, seed=s, **kw)
        regret, j = 0.0, 0
        for t in range(horizon):
            arm = agent.act()
            agent.update(arm, losses[t, arm:arm + 1])
            regret += gaps[arm]
            if t + 1 == CHECKS[j]:
                out[s, j] = regret
                j += 1
    return out


def _late_slope(regrets: np.ndarray) -> float:
    """Least-squares slope of log(mean regret) on log T over T = 2000, 4000, 8000."""
    return float(np.polyfit(np.log(CHECKS[2:]), np.log(regrets.mean(axis=0)[2:]), 1)[0])


@pytest.mark.parametrize("name,kw", [("ucb1", {}), ("kl-ucb", {}), ("thompson", {}),
                                     ("thompson", {"posterior": "gaussian"})],
                         ids=["ucb1", "kl-ucb", "thompson", "thompson-gaussian"])
def test_logarithmic_regret_on_a_gap_instance(name, kw):
    """Measured (12 paired seeds): late slopes ucb1 ~0.28, kl-ucb ~0.25, thompson ~0.16,
    gaussian thompson ~0.25, each with a 95% bootstrap upper end below 0.45; a sqrt(T)
    learner has 0.5, a linear one 1."""
    regrets = _pseudo_regret(name, kw)
    rng = np.random.default_rng(0)
    boot = [_late_slope(regrets[rng.integers(0, SEEDS, SEEDS)]) for _ in range(400)]
    low, high = np.percentile(boot, [2.5, 97.5])
    assert high < 0.45, (name, _late_slope(regrets), low, high)
    assert np.all(np.diff(regrets.mean(axis=0)) > 0)  # still learning, not stuck
    if name == "ucb1":
        bound = make("ucb1", _problem(k=2, horizon=CHECKS[-1])).regret_bound([0.0, 0.3])
        assert regrets.mean(axis=0)[-1] < bound
