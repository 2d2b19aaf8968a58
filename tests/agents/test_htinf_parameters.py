"""private-batched-htinf and htinf: every parameter as a function of (T, K, epsilon) as
Asi-Raman-Talwar (ICML 2025) Alg. 1 / Cor. 2 and Huang-Dai-Huang (ICML 2022) Alg. 1 set
it, what the base learner is fed, and the privacy of the batch statistic.

What is pinned (docs/algorithms/private-batched-htinf.md, "What was checked"):

* tau = ceil(1/epsilon) (the smallest tau >= 1 with tau epsilon >= 1), clamped to T;
* HTINF with alpha = 2, sigma = sqrt(6), Theta_2 = 1 - 2^(-1/3) on K arms, one HTINF
  round per batch, learning rate eta_j = 1/(sigma sqrt(j)) indexed by the BATCH j;
* what HTINF receives: the batch's released noisy sum divided by the batch length (the
  batch average plus noise), normalized by the declared range, not clipped;
* the noise on the batch average has scale (hi - lo)/(tau epsilon), i.e. the batch
  statistic's sensitivity (1/tau on [0, 1]-losses) over epsilon, never less;
* the black-box pair auditor does not refute epsilon with batches longer than one
  round and refutes a copy with a tenth of the noise.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from agent_helpers import tenth_noise_audits

from agents import make
from agents.bandit import private_batched_htinf
from agents.bandit.htinf import tsallis_leader
from agents.bandit.private_batched_htinf import THEOREM_SIGMA
from dp_online_envs import build_env
from dp_online_envs.lab.audit import audit


def _problem(T, K=10, **kw):
    return build_env("DPBandit-MAB-v0", horizon=T, n_arms=K, **kw).unwrapped.problem


# ----------------------------------------------------------- parameters(T, K, eps)
GRID_T = (1, 7, 100, 5000)
GRID_K = (2, 5, 10)
GRID_EPS = (1e-5, 1e-3, 0.01, 0.03, 0.1, 0.25, 0.3, 1 / 3, 0.5, 0.99, 1.0, 2.5)


@pytest.mark.parametrize("T", GRID_T)
@pytest.mark.parametrize("K", GRID_K)
def test_parameters_as_the_corollary_sets_them(T, K):
    problem = _problem(T, K)
    for eps in GRID_EPS:
        agent = make("private-batched-htinf", problem, epsilon=eps, seed=0)
        tau = agent.batch
        # tau = ceil(1/eps): the smallest tau >= 1 with tau * eps >= 1 (to float rounding
        # of 1/eps), clamped to [1, T]
        if 1.0 / eps >= T:
            assert tau == T
        else:
            assert tau >= 1 and tau * eps >= 1 - 1e-12
            assert tau == 1 or (tau - 1) * eps < 1
        # the base: HTINF(alpha = 2, sigma = sqrt(6)) on the K arms, Theta_2 = 1 - 2^(-1/3)
        base = agent.base
        assert base.name == "htinf" and base.k == K
        assert base.alpha == 2.0 and base.sigma == THEOREM_SIGMA == math.sqrt(6.0)
        assert base.theta == pytest.approx(1 - 2 ** (-1 / 3), rel=1e-15)
        # its learning rate at its j-th round (= batch j): 1 / (sigma sqrt(j))
        for j in (1, 2, 17):
            assert base.eta(j) == pytest.approx(1 / (math.sqrt(6) * math.sqrt(j)), rel=1e-15)
        # Cor. 2's sigma is a valid second-moment bound of what HTINF is fed whenever
        # tau eps >= 1 (every eps >= 1/T): E[(l-bar + Z)^2] <= 1 + Var(Z/tau) <= 6
        if tau * eps >= 1 - 1e-12:
            assert 1.0 + agent.average_noise_variance <= THEOREM_SIGMA ** 2


@pytest.mark.parametrize("eps", [1e-4, 0.01, 0.1, 1 / 3, 1.0, 4.0])
@pytest.mark.parametrize("loss_range", [(0.0, 1.0), (-1.0, 1.0), (2.0, 7.0)])
def test_noise_scale_is_the_batch_statistics_sensitivity_over_epsilon(eps, loss_range):
    """Lap(1/(tau eps)) on the average of tau losses in [0, 1] (Alg. 1): sensitivity of
    the average 1/tau, of the sum hi - lo; the exact discrete mechanism's scale is within
    2^-15 above (hi - lo)/eps on the sum and never below, and its budget k / t <= eps."""
    T = 1000
    agent = make("private-batched-htinf", _problem(T), epsilon=eps, loss_range=loss_range)
    w = loss_range[1] - loss_range[0]
    assert agent.sensitivity == w
    ns = agent.noise_strategy
    # on the batch SUM (loss units): b = t g in [w/eps, w/eps (1 + 2^-15)]
    assert w / eps <= agent.noise_scale <= w / eps * (1 + 2 ** -15)
    # on the batch AVERAGE, normalized to [0, 1]: b / (w tau) >= 1 / (tau eps)
    avg_scale = agent.noise_scale / (w * agent.batch)
    assert avg_scale >= 1 / (agent.batch * eps)
    assert avg_scale == pytest.approx(1 / (agent.batch * eps), rel=2 ** -15)
    # the integer mechanism: grid sensitivity k of one rounded loss, k / t <= eps exactly
    k = ns.grid_sensitivity
    assert k * ns.grid >= w  # one loss moves the rounded sum by at most k grid steps
    assert Fraction(k, ns.t) <= Fraction(eps)
    assert agent.privacy.epsilon == eps and agent.privacy.delta == 0.0


# ------------------------------------------------------ what the base receives
def test_base_gets_the_release_over_the_batch_length_once_per_batch():
    T, eps = 203, 0.2  # tau = 5: 40 full batches and one of 3 rounds
    env = build_env("DPBandit-MAB-v0", horizon=T, n_arms=4)
    agent = make("private-batched-htinf", env.unwrapped.problem, epsilon=eps, seed=3)
    agent.record_releases = True
    seen = []
    real = agent.base.observe_loss

    def spy(action, loss):
        j = agent.base.t + 1  # the base round (batch) being closed
        x = agent.base.probabilities()
        # the arm's probability and the learning rate are those of batch j
        np.testing.assert_array_equal(
            x, tsallis_leader(1 / (THEOREM_SIGMA * math.sqrt(j)), agent.base._cum, 2.0))
        seen.append((int(action), float(loss), float(x[int(action)])))
        real(action, loss)

    agent.base.observe_loss = spy
    agent.reset(5)
    env.reset(seed=5)
    done, arms = False, []
    while not done:
        a = agent.act()
        arms.append(int(a))
        obs, _, done, _, _ = env.step(a)
        agent.update(a, obs)
    tau = agent.batch
    assert tau == 5 and agent.base.t == math.ceil(T / tau) == len(seen)
    lengths = [min(tau, T - j) for j in range(0, T, tau)]
    for (arm, loss, _), (_, release), m, j in zip(seen, agent.releases, lengths,
                                                  range(0, T, tau)):
        assert arm == arms[j]  # the batch's arm
        assert loss == float(release) / m  # the average (plus noise), not clipped
    # replay HTINF by hand on the values it was given, with eta of each batch and the
    # skipping threshold Theta x^(1/2) / eta: the same cumulative loss estimates
    cum = np.zeros(4)
    theta = 1 - 2 ** (-1 / 3)
    for j, (arm, loss, x) in enumerate(seen, start=1):
        eta = 1 / (THEOREM_SIGMA * math.sqrt(j))
        if abs(loss) <= theta * math.sqrt(x) / eta:
            cum[arm] += loss / x
    np.testing.assert_allclose(agent.base._cum, cum, rtol=1e-12, atol=0)


# --------------------------------------------------------------------- audits
def test_audit_with_four_round_batches_passes():
    """eps = 0.25: tau = 4, the neighbouring round in the middle of the first batch."""
    env = build_env("DPBandit-MAB-v0", horizon=8, n_arms=3)
    problem = env.get_wrapper_attr("problem")
    result = audit(lambda s: make("private-batched-htinf", problem, epsilon=0.25, seed=s),
                   env, tau=2, runs=400, seed=0)
    assert result.passed, str(result)


def test_tenth_of_the_noise_with_two_round_batches_is_refuted(monkeypatch):
    """Claimed eps = 0.5 (tau = 2) with the noise of eps = 5: the pair auditor refutes
    it where it has power (every arm's loss flips 1 -> 0 in round 1, so the first
    batch's release moves by the full sensitivity whatever arm is drawn); the correctly
    noised agent passes the same audit."""
    weak_agent, weak, honest_agent, honest = tenth_noise_audits(
        monkeypatch, private_batched_htinf, "private-batched-htinf", n_arms=3, horizon=4, epsilon=0.5, seed=2)
    assert weak_agent.batch == honest_agent.batch == 2
    assert weak_agent.noise_scale == pytest.approx(0.2, rel=1e-3)
    assert not weak.passed, str(weak)
    assert honest_agent.noise_scale == pytest.approx(2.0, rel=1e-3)
    assert honest.passed, str(honest)
