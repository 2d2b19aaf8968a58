"""htinf (Huang-Dai-Huang 2022) and private-batched-htinf (Asi-Raman-Talwar ICML 2025):
the Tsallis leader against a brute-force solve, the skipping guard, the batch structure,
the noise calibration (exact variance of the released batch sums), the sensitivity, the
noise-off limit, the audit with batches longer than one round, regret below trivial
play, and the parameter errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from agent_helpers import tenth_noise_audits
from scipy.optimize import minimize

from agents import make
from agents.bandit import private_batched_htinf
from agents.bandit.htinf import skip_constant, tsallis_leader
from agents.bandit.private_batched_htinf import THEOREM_SIGMA, batch_size
from agents.privacy.discrete import discrete_laplace_variance
from dp_online_envs import build_env
from dp_online_envs.lab.audit import audit
from dp_online_envs.loop import run_rounds


def _mab(T=64, **kw):
    return build_env("DPBandit-MAB-v0", horizon=T, **kw)


def _play(agent, env, seed, agent_seed=None):
    agent.reset(seed if agent_seed is None else agent_seed)
    env.reset(seed=seed)
    arms = []

    def hook(t, a, fb):
        arms.append(int(a))

    info = run_rounds(env, agent, hook)
    return arms, info


# ------------------------------------------------------------------- the leader
@pytest.mark.parametrize("alpha", [2.0, 1.5])
def test_tsallis_leader_is_the_argmin(alpha):
    rng = np.random.default_rng(0)
    for _ in range(5):
        cum = rng.normal(0, 5, size=4)
        eta = float(rng.uniform(0.05, 1.0))
        x = tsallis_leader(eta, cum, alpha)
        assert x.sum() == pytest.approx(1.0, abs=1e-12) and np.all(x > 0)

        def obj(z, eta=eta, cum=cum):
            z = np.abs(z) / np.abs(z).sum()
            return eta * cum @ z - alpha * np.sum(z ** (1 / alpha))

        best = minimize(obj, np.full(4, 0.25), method="Nelder-Mead",
                        options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20000})
        z = np.abs(best.x) / np.abs(best.x).sum()
        assert obj(x) <= obj(z) + 1e-9
        np.testing.assert_allclose(x, z, atol=1e-4)
    # no loss: uniform
    np.testing.assert_allclose(tsallis_leader(0.7, np.zeros(5)), np.full(5, 0.2), atol=1e-15)


def test_skip_constant():
    assert skip_constant(2.0) == pytest.approx(1 - 2 ** (-1 / 3))
    a = 1.5
    assert skip_constant(a) == pytest.approx(min(1 - 2 ** (-(a - 1) / (2 * a - 1)),
                                                 (2 - 2 / a) ** (1 / (2 - a))))


def test_htinf_skips_exactly_the_losses_above_the_threshold():
    problem = _mab(T=10, n_arms=3).unwrapped.problem
    agent = make("htinf", problem, seed=0, loss_range=(-1e3, 1e3))
    agent.reset(0)
    arm = agent.act()
    x = agent.probabilities()[arm]
    eta = agent.eta(1)
    r = agent.theta * math.sqrt(x) / eta          # threshold on the normalized loss
    big = (r * 1.01) * 2e3 - 1e3                  # normalized: 1.01 r, skipped
    agent.observe_loss(arm, big)
    assert agent.skipped == 1 and np.all(agent._cum == 0.0)
    arm = agent.act()
    x = agent.probabilities()[arm]
    r = agent.theta * math.sqrt(x) / agent.eta(2)
    small = (r * 0.99) * 2e3 - 1e3                # kept, importance-weighted
    agent.observe_loss(arm, small)
    assert agent.skipped == 1
    assert agent._cum[arm] == pytest.approx((small + 1e3) / 2e3 / x)


# ---------------------------------------------------------------- the batches
def test_batch_size_is_ceil_inverse_epsilon_clamped():
    assert batch_size(1.0, 100) == 1 and batch_size(0.3, 100) == 4
    assert batch_size(0.25, 100) == 4 and batch_size(5.0, 100) == 1
    assert batch_size(1e-4, 100) == 100  # one batch
    assert batch_size(5e-324, 100) == 100  # 1/epsilon overflows to inf
    with pytest.raises(ValueError, match="epsilon"):
        batch_size(0.0, 100)


@pytest.mark.parametrize("eps", [0.2, 0.3])
def test_one_arm_per_batch_and_one_release_per_batch(eps):
    T = 23
    env = _mab(T=T)
    agent = make("private-batched-htinf", env.unwrapped.problem, epsilon=eps, seed=1)
    agent.record_releases = True
    arms, _ = _play(agent, env, 3)
    tau = agent.batch
    assert tau == math.ceil(1 / eps)
    for j in range(0, T, tau):
        assert len(set(arms[j:j + tau])) == 1
    ends = [min(j + tau, T) for j in range(0, T, tau)]
    assert [r for r, _ in agent.releases] == ends
    assert agent.base.t == len(ends)


def test_released_sum_is_the_grid_sum_plus_integer_noise():
    """The release is (sum of grid-rounded losses + Z) g; the noise is exactly the
    strategy's integers drawn from the agent's generator after the base's seed, in one
    block of exactly the game's number of batches (``noise_block``)."""
    T = 12
    env = _mab(T=T)
    agent = make("private-batched-htinf", env.unwrapped.problem, epsilon=0.25, seed=0)
    agent.record_releases = True
    losses = []
    agent.reset(7)
    env.reset(seed=7)
    done = False
    while not done:
        a = agent.act()
        obs, _, done, _, _ = env.step(a)
        losses.append(float(obs[0]))
        agent.update(a, obs)
    rng = np.random.default_rng(7)
    rng.integers(2**63)  # the base's seed
    z = agent.noise_strategy.draw_int(rng, 3)  # one block: the game's 3 batches, no more
    g = agent.noise_strategy.grid
    for j, (_, v) in enumerate(agent.releases):
        n = sum(round(f / g) for f in losses[4 * j:4 * j + 4])
        assert float(v) == (n + int(z[j])) * g


def test_noise_calibration_matches_the_analytic_variance():
    problem = _mab(T=1000).unwrapped.problem
    eps = 0.25
    agent = make("private-batched-htinf", problem, epsilon=eps, seed=0)
    ns = agent.noise_strategy
    # exact sensitivity: one round's loss moves a batch sum by the width of [0, 1]
    assert agent.sensitivity == 1.0
    k = math.floor(1.0 / ns.grid) + 1
    assert ns.grid_sensitivity == k and ns.t == math.ceil(k / eps)
    assert agent.noise_scale == pytest.approx(1.0 / eps, rel=1e-4)
    # variance of the noise on one batch average, normalized: Var(Z) / tau^2
    var = discrete_laplace_variance(ns.t) * ns.grid**2
    assert agent.average_noise_variance == pytest.approx(var / agent.batch**2, rel=1e-12)
    assert var == pytest.approx(2 * (1 / eps) ** 2, rel=1e-3)
    # empirical variance of the released sums of an all-zero sequence
    draws = ns.draw(np.random.default_rng(1), 200_000)
    assert np.var(draws) == pytest.approx(var, rel=0.02)
    # Cor. 2: E[l^2] <= 1 + Var/tau^2 <= 6 = sigma^2 for tau >= 1/eps
    assert 1.0 + agent.average_noise_variance <= THEOREM_SIGMA**2
    assert agent.sigma == THEOREM_SIGMA and agent.base.sigma == THEOREM_SIGMA
    moment = make("private-batched-htinf", problem, epsilon=eps, sigma="moment")
    assert moment.sigma == pytest.approx(math.sqrt(1 + agent.average_noise_variance))
    # the guarantee: one discrete Laplace event with (k, t), pure
    assert agent.privacy.epsilon == eps and agent.privacy.delta == 0.0
    assert not agent.privacy.idealized


def test_wider_range_means_more_noise():
    problem = _mab(T=100).unwrapped.problem
    a = make("private-batched-htinf", problem, epsilon=0.5, loss_range=(0.0, 1.0))
    b = make("private-batched-htinf", problem, epsilon=0.5, loss_range=(-1.0, 1.0))
    assert b.sensitivity == 2.0 and b.noise_scale == pytest.approx(2 * a.noise_scale, rel=1e-4)


# -------------------------------------------------------------- noise-off limit
@pytest.mark.parametrize("sigma,other_kw", [("moment", {}), ("theorem", {"sigma": THEOREM_SIGMA})])
def test_noise_off_is_htinf_bit_for_bit(sigma, other_kw):
    env = _mab(T=200)
    problem = env.unwrapped.problem
    agent = make("private-batched-htinf", problem, epsilon=1.0, seed=0, sigma=sigma,
                 add_noise=False)
    assert agent.batch == 1 and agent.noise_scale == 0.0
    assert agent.privacy.epsilon == math.inf
    priv, _ = _play(agent, env, 5)
    base_seed = int(np.random.default_rng(5).integers(2**63))
    other = make("htinf", problem, seed=0, **other_kw)
    plain, _ = _play(other, env, 5, agent_seed=base_seed)
    assert priv == plain
    noisy, _ = _play(make("private-batched-htinf", problem, epsilon=1.0, seed=0, sigma=sigma),
                     env, 5)
    assert noisy != plain


# ------------------------------------------------------------------- the audit
def test_audit_with_two_round_batches():
    env = _mab(T=8, n_arms=3)
    problem = env.get_wrapper_attr("problem")
    result = audit(lambda s: make("private-batched-htinf", problem, epsilon=0.5, seed=s),
                   env, tau=3, runs=400, seed=0)
    assert result.passed, str(result)


def test_under_noised_batches_are_caught(monkeypatch):
    """Noise for epsilon * 10 while claiming epsilon: the auditor refutes the claim; the
    correctly noised agent passes the same audit (every arm's loss flips 1 -> 0 in round
    1, so the released value moves by the full sensitivity whatever arm is drawn)."""
    weak_agent, weak, honest_agent, honest = tenth_noise_audits(
        monkeypatch, private_batched_htinf, "private-batched-htinf", n_arms=3, horizon=4, epsilon=1.0, seed=1)
    assert weak_agent.noise_scale == pytest.approx(0.1, rel=1e-3)
    assert not weak.passed, str(weak)
    assert honest.passed, str(honest)


# --------------------------------------------------------------------- regret
def test_regret_below_uniform_play():
    T = 3000
    regrets = {"private-batched-htinf": [], "uniform": [], "htinf": []}
    for s in range(3):
        for name, kw in (("private-batched-htinf", {"epsilon": 1.0}), ("uniform", {}),
                         ("htinf", {})):
            env = _mab(T=T)
            agent = make(name, env.unwrapped.problem, seed=s, **kw)
            _, info = _play(agent, env, s)
            regrets[name].append(float(info["regret"].regret))
    mean = {k: np.mean(v) for k, v in regrets.items()}
    assert mean["htinf"] < mean["private-batched-htinf"] < 0.75 * mean["uniform"]


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("kw,match", [
    ({"sigma": "paper"}, "sigma='paper'"),
    ({"sigma": -1.0}, "sigma=-1.0"),
    ({"batch": 0}, "batch"),
    ({"batch": 10_000}, "batch"),
    ({"loss_range": (1.0, 0.0)}, "loss_range"),
])
def test_bad_parameters_are_named(kw, match):
    problem = _mab(T=100).unwrapped.problem
    with pytest.raises(ValueError, match=match):
        make("private-batched-htinf", problem, epsilon=0.5, **kw)


def test_bad_htinf_parameters_and_problems():
    problem = _mab(T=100).unwrapped.problem
    with pytest.raises(ValueError, match="alpha"):
        make("htinf", problem, alpha=2.5)
    with pytest.raises(ValueError, match="sigma"):
        make("htinf", problem, sigma=0.0)
    with pytest.raises(ValueError, match="epsilon"):
        make("private-batched-htinf", problem)
    full = build_env("DPFullInfo-Experts-v0", horizon=10).unwrapped.problem
    with pytest.raises(ValueError, match="bandit"):
        make("private-batched-htinf", full, epsilon=1.0)
    linear = build_env("DPBandit-Linear-v1", horizon=10).unwrapped.problem
    with pytest.raises(ValueError, match="arms"):
        make("htinf", linear)


def test_out_of_range_feedback_is_clipped_before_the_batch_sum():
    """Feedback outside the declared range ``[0, 1]`` (a hostile env, or a wrapper that
    rescales) must be clipped before it enters a batch sum: otherwise one round moves the
    sum by more than the sensitivity the noise is calibrated to. Fed ``5`` and ``-3``,
    the agent releases exactly what it releases when fed ``1`` and ``0``."""
    problem = _mab(T=12).unwrapped.problem
    wild = [5.0, -3.0, 0.25, 1e6, -0.5, 0.75, 2.0, 0.5, -1e3, 1.0, 0.0, 7.0]
    runs = []
    for feed in (wild, [min(max(f, 0.0), 1.0) for f in wild]):
        agent = make("private-batched-htinf", problem, epsilon=0.3, seed=0)
        agent.record_releases = True
        agent.reset(5)
        for f in feed:
            agent.update(agent.act(), np.array([f]))
        runs.append((list(agent.releases), agent.clipped_feedback))
    (released_wild, clips_wild), (released_clean, clips_clean) = runs
    assert released_wild == released_clean and len(released_wild) == 3  # tau = 4
    assert clips_wild == 7 and clips_clean == 0
