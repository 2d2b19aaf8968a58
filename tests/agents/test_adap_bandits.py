"""AdaP-UCB and AdaP-KLUCB (Azize & Basu, NeurIPS 2022, Alg. 1, Eq. (7)).

* the episodes of Algorithm 1: every arm once, then the chosen arm until its pull count
  doubles; one release per episode, of that episode's losses only (forgetting);
* the indices of Eq. (7) by hand (AdaP-UCB) and against a bisection (AdaP-KLUCB);
* the noise: each release is ``(sum of grid-rounded losses + Z) g`` with ``Z`` the
  calibrated exact discrete Laplace draws of the learner's seed, ``t = ceil(k / eps)``;
* the black-box audit refutes a copy with a tenth of the noise and passes the honest
  learner on the same neighbouring pair (the honest one at its claim is also in
  ``test_privacy_audits``);
* regret on a gap instance below Theorem 7's bound and far below trivial play.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from agent_helpers import tenth_noise_audits

from agents import make
from agents.bandit import adap_ucb
from agents.bandit.stochastic import kl_bernoulli
from agents.common import noise_block
from agents.privacy.noise import DiscreteLaplaceNoise
from dp_online_envs import build_env

NAMES = ("adap-ucb", "adap-klucb")


def _problem(k=3, horizon=64):
    return build_env("DPBandit-MAB-v0", horizon=horizon, n_arms=k).unwrapped.problem


def _run(agent, losses):
    """Play ``agent`` against a fixed loss table ``losses[t, arm]``: the arms played."""
    arms = []
    for row in losses:
        arm = agent.act()
        arms.append(arm)
        agent.update(arm, np.array([row[arm]]))
    return arms


# ------------------------------------------------------------ the episodes
@pytest.mark.parametrize("name", NAMES)
def test_episodes_double_and_release_only_their_own_losses(name):
    agent = make(name, _problem(k=3, horizon=40), epsilon=1.0, seed=0, add_noise=False)
    agent.record_releases = True
    rng = np.random.default_rng(1)
    losses = (rng.random((40, 3)) < [0.2, 0.6, 0.7]).astype(float)
    arms = _run(agent, losses)
    assert arms[:3] == [0, 1, 2]
    # cut the play into runs of one arm; episodes may continue a run of the same arm
    pulls, t, ends = [0, 0, 0], 0, []
    for a in range(3):  # the initial pulls
        pulls[a] = 1
        t += 1
        ends.append((t, a, 1))
    while t < 40:
        a = arms[t]
        length = min(pulls[a], 40 - t)  # until N_a doubles (or the game ends)
        assert arms[t:t + length] == [a] * length
        pulls[a] += length
        t += length
        ends.append((t, a, length))
    assert agent.pulls == pulls and agent.episodes == len(ends)
    # one release per episode, at its last round, the exact sum of its losses
    assert [r for r, _ in agent.releases] == [end for end, _, _ in ends]
    for (end, a, length), (_, value) in zip(ends, agent.releases):
        assert float(value) == losses[end - length:end, a].sum()
    # forgetting: an arm's mean is its last episode's only
    for a in range(3):
        end, _, length = [e for e in ends if e[1] == a][-1]
        assert agent.last_length[a] == length
        assert agent.private_mean(a) == pytest.approx(
            1.0 - losses[end - length:end, a].mean(), abs=1e-15)


def test_adap_ucb_index_by_hand():
    eps, alpha = 0.5, 3.1
    agent = make("adap-ucb", _problem(k=3), epsilon=eps, alpha=alpha, add_noise=False)
    _run(agent, np.array([[0.0, 1.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 0.0]]))
    # after the initial pulls: rewards 1, 0, 1, m = 1, episode starts at t_l = 4
    bonus = math.sqrt(alpha * math.log(8) / 2) + alpha * math.log(4) / eps
    assert agent.indices() == pytest.approx([1 + bonus, bonus, 1 + bonus], rel=1e-15)
    assert agent.act() == 0  # a tie of arms 0 and 2 goes to the lower one
    w = agent.width
    assert agent.regret_bound([0.0, 0.2, 0.5]) == pytest.approx(
        sum(w * (16 * alpha * math.log(64) / min(g, eps) + alpha / (alpha - 3))
            for g in (0.2, 0.5)), rel=1e-14)


def test_adap_klucb_index_against_bisection():
    eps, alpha = 3.0, 3.5
    agent = make("adap-klucb", _problem(k=2, horizon=200), epsilon=eps, alpha=alpha,
                 add_noise=False)
    losses = np.tile([[0.0, 1.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]], (50, 1))
    _run(agent, losses[:37])
    t = agent.t + 1
    for a in range(2):
        m = agent.last_length[a]
        shifted = min(1.0, max(0.0, agent.private_mean(a) + alpha * math.log(t) / (eps * m)))
        level = alpha * math.log(t) / m
        lo, hi = shifted, 1.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if kl_bernoulli(shifted, mid) <= level else (lo, mid)
        assert agent.index(a, t) == pytest.approx(lo, abs=1e-12)


# -------------------------------------------------------------- the noise
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("eps", [0.3, 2.0])
def test_releases_are_grid_sums_plus_the_calibrated_discrete_laplace(name, eps):
    T, seed = 30, 9
    agent = make(name, _problem(k=3, horizon=T), epsilon=eps, seed=seed, loss_range=(0, 2))
    agent.record_releases = True
    ns = agent.noise_strategy
    g = ns.grid
    k = math.floor(2.0 / g) + 1  # integer sensitivity of one episode sum
    assert ns.grid_sensitivity == k and ns.t == math.ceil(k / eps)
    assert agent.privacy.epsilon == eps and not agent.privacy.idealized
    assert agent.privacy.delta == 0.0 and "discrete Laplace" in agent.privacy.mechanism
    losses = np.random.default_rng(2).uniform(0, 2, size=(T, 3))
    arms = _run(agent, losses)
    z = DiscreteLaplaceNoise(eps, 2.0).calibrate().draw_int(np.random.default_rng(seed),
                                                            noise_block(T))
    start = 0
    for i, (end, value) in enumerate(agent.releases):
        a = arms[end - 1]
        total = sum(round(losses[s, a] / g) for s in range(start, end))
        assert float(value) == (total + int(z[i])) * g
        start = end
    assert start == T


def test_update_for_another_arm_is_refused():
    agent = make("adap-ucb", _problem(), epsilon=1.0)
    assert agent.act() == 0
    with pytest.raises(ValueError, match=r"plays arm 0 for its whole episode; got feedback "
                                         r"for arm 2"):
        agent.update(2, np.array([0.5]))


def test_alpha_must_exceed_three():
    with pytest.raises(ValueError, match="alpha"):
        make("adap-ucb", _problem(), epsilon=1.0, alpha=3.0)


# -------------------------------------------------------------- the audit
@pytest.mark.parametrize("name", NAMES)
def test_tenth_of_the_noise_is_refuted_and_the_honest_learner_is_not(name, monkeypatch):
    """Every arm's loss flips 1 -> 0 in round 1 (arm 0's initial pull, released alone), so
    the first release moves by the full sensitivity."""
    weak_agent, weak, honest_agent, honest = tenth_noise_audits(
        monkeypatch, adap_ucb, name, n_arms=3, horizon=4, epsilon=1.0, seed=1)
    assert weak_agent.noise_scale == pytest.approx(0.1, rel=1e-3)
    assert not weak.passed, str(weak)
    assert honest_agent.noise_scale == pytest.approx(1.0, rel=1e-3)
    assert honest.passed, str(honest)


# -------------------------------------------------------------- regret
@pytest.mark.parametrize("name", NAMES)
def test_regret_on_a_gap_instance(name):
    """Two Bernoulli arms (mean losses 0.3, 0.6), eps = 1, T = 4000, 6 paired seeds:
    mean pseudo-regret below Theorem 7's bound and below a third of trivial play's
    (0.15 T = 600). Measured: the worse arm is pulled 512 times (episodes 1, 1, 2, ...,
    256) in every seed, regret 153.6."""
    T, means = 4000, np.array([0.3, 0.6])
    problem = _problem(k=2, horizon=T)
    regrets = []
    for s in range(6):
        losses = (np.random.default_rng(100 + s).random((T, 2)) < means).astype(float)
        arms = np.array(_run(make(name, problem, epsilon=1.0, seed=s), losses))
        regrets.append(0.3 * np.count_nonzero(arms == 1))
    bound = make("adap-ucb", problem, epsilon=1.0).regret_bound([0.0, 0.3])
    assert np.mean(regrets) < min(bound, 0.15 * T / 3), regrets
