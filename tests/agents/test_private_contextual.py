"""The private contextual learners ``jdp-linucb`` (Shariff-Sheffet) and ``ldp-linucb``
(Zheng-Cheng-Xu-Sheffet): sensitivity, calibration by hand, the noise's law, the clip,
the noise-free twin, refusals, and a regret sanity check on paired seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import agents
from agents import make, play
from agents.bandit.jdp_linucb import augmented_sensitivity
from agents.privacy import calibration
from agents.privacy.discrete import discrete_gaussian_variance
from agents.privacy.noise import DiscreteGaussianNoise
from dp_online_envs import build_env

NAMES = ("jdp-linucb", "ldp-linucb")
GAUSS = {"epsilon": 1.0, "delta": 1e-5}


def _problem(k: int = 5, d: int = 5, horizon: int = 1000):
    return build_env("DPBandit-ContextualLinear-v0", n_arms=k, loss_kwargs={"context_dim": d},
                     horizon=horizon).get_wrapper_attr("problem")


def _fb(loss, played, nxt) -> np.ndarray:
    return np.array([loss, *played, *nxt], dtype=np.float64)


def _feed(agent, rounds, rng) -> list[tuple[int, np.ndarray]]:
    """Feed ``rounds`` rounds of random in-bound feedback (arm, unit context, loss in
    [0, 1]); return what the agent released."""
    agent.record_releases = True
    d = agent.d
    for _ in range(rounds):
        arm = int(rng.integers(agent.k))
        c = rng.standard_normal(d)
        c /= max(1.0, float(np.linalg.norm(c)))
        agent.update(arm, _fb(float(rng.random()), c, np.zeros(d)))
    return agent.releases


# ------------------------------------------------------------------ sensitivity
def test_the_sensitivity_is_the_largest_change_of_one_round_and_is_attained():
    agent = make("jdp-linucb", _problem(k=3, d=3), seed=0, **GAUSS)
    assert agent.sensitivity == augmented_sensitivity() == math.sqrt(6.0)
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(3000):  # random rounds: arms, contexts in the ball, losses in [0, 1]
        pair = []
        for _ in range(2):
            c = rng.standard_normal(3) * rng.choice([0.1, 1.0, 10.0])
            c /= max(1.0, float(np.linalg.norm(c)))
            pair.append(agent.pack(int(rng.integers(3)), float(rng.random()), c))
        worst = max(worst, float(np.linalg.norm(pair[0] - pair[1])))
    assert worst <= math.sqrt(6.0)
    e1 = np.array([1.0, 0.0, 0.0])  # the extreme pair: y = (e_1, 1) on two different arms
    extreme = np.linalg.norm(agent.pack(0, 1.0, e1) - agent.pack(1, 1.0, e1))
    assert extreme == pytest.approx(math.sqrt(6.0), rel=1e-15)
    # the packed upper triangle of y y^T has (|y|^4 + sum y_i^4) / 2 as squared norm
    y = np.array([0.6, -0.8, 0.0, 0.7])
    z = agent.pack(2, 0.7, y[:3])
    assert float(z @ z) == pytest.approx((np.sum(y**2) ** 2 + np.sum(y**4)) / 2)


# ------------------------------------------------------------------ calibration
def test_jdp_calibration_by_hand():
    """T = 1000, K = d = 5, epsilon = 1, delta = 1e-5, alpha = 0.05, ridge 1."""
    agent = make("jdp-linucb", _problem(), seed=0, **GAUSS)
    k, d, T, a = 5, 5, 1000, 0.05
    width = k * (d + 1) * (d + 2) // 2
    assert (agent.width, agent.levels) == (width, 10) == (105, T.bit_length())
    node = DiscreteGaussianNoise(1.0, 1e-5, math.sqrt(6.0), dim=width).calibrate(copies=10)
    assert agent.noise_scale == node.sigma * node.grid == node.scale
    # the accountant: 10 levels of rho = K2 / (2 sigma^2) each are (1, 1e-5)-DP, and the
    # integer sigma is the smallest that is (one less is not)
    event = node.dp_event(copies=10)
    assert calibration.accountant_epsilon(event, 1e-5) <= 1.0
    tighter = DiscreteGaussianNoise(1.0, 1e-5, math.sqrt(6.0), dim=width, sigma=node.sigma - 1,
                                    step=node.step, copies=10)
    assert calibration.accountant_epsilon(tighter.dp_event(copies=10), 1e-5) > 1.0
    assert agent.privacy.epsilon == 1.0 and agent.privacy.delta == 1e-5
    assert "joint DP" in agent.privacy.neighbouring and not agent.privacy.idealized
    # max popcount(t) for t <= 1000 is 9 (511, 767, ...): s = 3 sigma g
    s = 3.0 * node.scale
    assert agent.entry_scale == pytest.approx(s, rel=1e-15)
    log_term = math.log(2 * k * T / a)
    upsilon = s * (4 * math.sqrt(d) + 2 * log_term)
    assert agent.upsilon_at(0) == agent.upsilon_at(T) == pytest.approx(upsilon, rel=1e-14)
    assert agent.shift_at(7) == pytest.approx(2 * upsilon, rel=1e-14)
    rho_min, rho_max = 1 + upsilon, 1 + 3 * upsilon
    assert agent.rho_min_at(5) == pytest.approx(rho_min, rel=1e-14)
    assert agent.rho_max_at(5) == pytest.approx(rho_max, rel=1e-14)
    gamma = s * (math.sqrt(d) + math.sqrt(2 * log_term)) / math.sqrt(rho_min)
    assert agent.gamma_at(5) == pytest.approx(gamma, rel=1e-14)
    # the paper's per-node sigma: 16 m L~^4 ln(4/delta)^2 / eps^2, m = ceil(log2 T) + 1
    assert agent.paper_sigma == pytest.approx(math.sqrt(16 * 11 * 4 * math.log(4e5) ** 2))
    assert agent.noise_scale < agent.paper_sigma / 10  # ours: about 11 times less noise
    # the radius from a released matrix's log-determinant
    _feed(agent, 20, np.random.default_rng(1))
    beta = 0.5 * np.sqrt(2 * math.log(2 * k / a)
                         + np.maximum(agent.log_det - d * math.log(rho_min), 0.0)) \
        + math.sqrt(rho_max) + gamma
    np.testing.assert_allclose(agent.radii(agent.t), beta, rtol=1e-13)
    # A~ is the released sum plus (ridge + shift) I, and theta~ = A~^{-1} b~
    m = agent.unpack(agent.releases[-1][1])
    np.testing.assert_array_equal(agent.gram, m[:, :d, :d] + (1 + 2 * upsilon) * np.eye(d))
    np.testing.assert_array_equal(agent.target, m[:, :d, d])
    assert np.allclose(agent.log_det, np.linalg.slogdet(agent.gram)[1])


def test_ldp_calibration_by_hand():
    agent = make("ldp-linucb", _problem(), seed=0, **GAUSS)
    k, d, T, a = 5, 5, 1000, 0.05
    node = DiscreteGaussianNoise(1.0, 1e-5, math.sqrt(6.0), dim=105).calibrate()
    assert agent.noise_strategy == node and agent.noise_scale == node.scale
    assert calibration.accountant_epsilon(node.dp_event(), 1e-5) <= 1.0
    assert agent.privacy.epsilon == 1.0 and "local DP" in agent.privacy.neighbouring
    assert agent.paper_sigma == pytest.approx(4 * math.sqrt(2 * math.log(1.25e5)))
    assert agent.noise_scale < agent.paper_sigma  # the paper's sensitivity is 4, ours sqrt 6
    log_term = math.log(2 * k * T / a)
    for t in (1, 17, 1000):
        s = math.sqrt(t) * node.scale
        ups = s * (4 * math.sqrt(d) + 2 * log_term)
        assert agent.upsilon_at(t) == pytest.approx(ups, rel=1e-14)
        assert agent.shift_at(t) == pytest.approx(2 * ups, rel=1e-14)
        assert agent.rho_min_at(t) == pytest.approx(1 + ups, rel=1e-14)
        assert agent.rho_max_at(t) == pytest.approx(1 + 3 * ups, rel=1e-14)
        assert agent.gamma_at(t) == pytest.approx(
            s * (math.sqrt(d) + math.sqrt(2 * log_term)) / math.sqrt(1 + ups), rel=1e-14)


# ------------------------------------------------------------------ the noise's law
def _exact_rounded(agent, grid: float, z: np.ndarray) -> np.ndarray:
    return np.rint(z / grid) * grid


@pytest.mark.parametrize("name", NAMES)
def test_the_released_noise_has_its_analytic_variance(name):
    """Released minus the exact (grid-rounded) sums is integer noise times g: mean 0 and,
    per entry, variance popcount(t) Var(draw) for the tree (jdp), t Var(draw) for the
    sum of t reports (ldp); Var(draw) = discrete_gaussian_variance(sigma) g^2, exactly.
    Over 48 games of 7 rounds and 105 entries (5040 values per round), the sample
    variances lie inside the chi-square 99.9% band of the analytic one."""
    problem = _problem(horizon=7)
    noise = {t: [] for t in range(1, 8)}
    for seed in range(48):
        agent = make(name, problem, seed=seed, **GAUSS)
        strategy = (agent.counter_spec.build(np.random.default_rng(0)).noise_strategy
                    if name == "jdp-linucb" else agent.noise_strategy)
        g = strategy.grid
        rng = np.random.default_rng(1000 + seed)
        exact = np.zeros(agent.width)
        total = np.zeros(agent.width)
        agent.record_releases = True
        for t in range(1, 8):
            arm, c = int(rng.integers(5)), rng.standard_normal(5)
            c /= np.linalg.norm(c)
            loss = float(rng.random())
            exact += _exact_rounded(agent, g, agent.pack(arm, loss, c))
            agent.update(arm, _fb(loss, c, np.zeros(5)))
            released = agent.releases[-1][1]
            total = released if name == "jdp-linucb" else total + released
            diff = (total - exact) / g
            assert np.array_equal(diff, np.rint(diff))  # exact: integers on the grid
            noise[t].append(diff * g)
    var_draw = discrete_gaussian_variance(strategy.sigma) * g**2
    for t, values in noise.items():
        x = np.concatenate(values)
        n = x.size
        units = bin(t).count("1") if name == "jdp-linucb" else t
        expected = units * var_draw
        sample = float(np.sum(x * x) / n)  # the mean is 0 by construction
        lo, hi = stats.chi2.ppf([0.0005, 0.9995], n) / n
        assert lo * expected <= sample <= hi * expected, (t, sample / expected)
        assert abs(float(np.mean(x))) <= 4.0 * math.sqrt(expected / n)


# ------------------------------------------------------------------ the clip
@pytest.mark.parametrize("name", NAMES)
def test_contexts_and_losses_are_clipped_to_the_declared_bounds_before_the_noise(name):
    """A context of norm 5 and a loss of 3 enter the statistics as the unit context and
    the loss 1: the noise-free release is exactly the clipped round's, and the noisy
    release equals that of a twin fed the clipped values (same seed, same noise)."""
    problem = _problem(k=3, d=2, horizon=16)
    c = np.array([3.0, 4.0])
    quiet = make(name, problem, seed=0, **GAUSS, add_noise=False)
    quiet.record_releases = True
    quiet.update(1, _fb(3.0, c, [0.0, 9.0]))
    assert quiet.clipped_feedback == 1
    np.testing.assert_array_equal(quiet.releases[0][1], quiet.pack(1, 1.0, c * (1.0 / 5.0)))
    np.testing.assert_allclose(quiet.context, [0.0, 1.0], rtol=1e-15)
    for loss, ctx in ((-2.0, c), (0.25, 100.0 * c)):
        a = make(name, problem, seed=4, **GAUSS)
        b = make(name, problem, seed=4, **GAUSS)
        a.record_releases = b.record_releases = True
        a.update(2, _fb(loss, ctx, [0.0, 0.0]))
        b.update(2, _fb(min(max(loss, 0.0), 1.0), ctx / np.linalg.norm(ctx), [0.0, 0.0]))
        np.testing.assert_array_equal(a.releases[0][1], b.releases[0][1])


# ------------------------------------------------------------------ the twin
@pytest.mark.parametrize("name", NAMES)
def test_without_noise_the_learner_plays_linucb(name):
    """``add_noise=False``, ``shift=0``, a fixed ``alpha``: the arms linucb(ridge, alpha)
    plays, on every round of three games (the statistics are summed from the releases
    and inverted directly, not by Sherman-Morrison: equal indices to 1e-9, not bits).
    With the noise the arms differ."""
    env = build_env("DPBandit-ContextualLinear-v0", horizon=300)
    problem = env.get_wrapper_attr("problem")

    def arms(agent, seed):
        agent.reset(seed)
        env.reset(seed=seed)
        out, done = [], False
        while not done:
            a = agent.act()
            obs, _, done, _, _ = env.step(a)
            agent.update(a, obs)
            out.append(a)
        return out, agent

    for seed in range(3):
        quiet, q = arms(make(name, problem, seed=0, **GAUSS, add_noise=False, shift=0.0,
                             alpha=0.8, ridge=2.0), seed)
        base, b = arms(make("linucb", problem, seed=0, alpha=0.8, ridge=2.0), seed)
        assert quiet == base
        c = np.full(5, 1 / math.sqrt(5))
        np.testing.assert_allclose(q.indices(c), b.indices(c), rtol=1e-9, atol=1e-9)
        assert q.privacy.epsilon == math.inf
        noisy, _ = arms(make(name, problem, seed=0, **GAUSS, alpha=0.8, ridge=2.0), seed)
        assert noisy != base
    # the default twin keeps the calibrated shift and radius, only the noise goes
    twin = make(name, problem, seed=0, **GAUSS, add_noise=False)
    real = make(name, problem, seed=0, **GAUSS)
    assert twin.shift_at(300) == real.shift_at(300) > 0
    assert twin.radii(300).tolist() == real.radii(300).tolist()


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("name", NAMES)
def test_refusals(name):
    problem = _problem(horizon=100)
    with pytest.raises(ValueError, match=r"adds Gaussian noise .*pass a delta in \(0, 1\)"):
        make(name, problem, epsilon=1.0)
    with pytest.raises(ValueError, match="is a private learner: pass epsilon"):
        make(name, problem)
    mab = build_env("DPBandit-MAB-v0", horizon=10).get_wrapper_attr("problem")
    with pytest.raises(ValueError, match="plays the contextual ids"):
        make(name, mab, **GAUSS)
    with pytest.raises(ValueError, match=r"shift=0\.0 with ridge=1\.0 does not keep the "
                                         r"regularizer positive definite.*Upsilon_T - ridge"):
        make(name, problem, **GAUSS, shift=0.0)
    make(name, problem, **GAUSS, shift=0.0, alpha=1.0)  # a fixed radius needs no rho_min
    for bad in ({"failure_prob": 0.0}, {"failure_prob": 1.0}, {"ridge": 0.0},
                {"shift": -1.0}, {"alpha": -0.5}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            make(name, problem, **GAUSS, **bad)
    for bad in (0, "no", None):
        with pytest.raises(ValueError, match=rf"^add_noise={bad!r} rejected"):
            make(name, problem, **GAUSS, add_noise=bad)
    with pytest.raises(ValueError, match="action must be an arm"):
        make(name, problem, **GAUSS).update(5, _fb(0.5, np.zeros(5), np.zeros(5)))


def test_both_are_registered_with_linucb_as_counterpart():
    for name in NAMES:
        cls = agents.agent_class(name)
        assert cls.private and cls.counterpart == "linucb" and cls.feedback == "bandit"
        assert cls.__module__ == f"agents.bandit.{name.replace('-', '_')}"


# ------------------------------------------------------------------ regret sanity
def _regrets(env, name: str, seeds, **kw) -> np.ndarray:
    problem = env.get_wrapper_attr("problem")
    return np.array([play(env, make(name, problem, seed=s, **kw), seed=s,
                          agent_seed=s).pseudo_regret for s in seeds])


def _interval(x: np.ndarray) -> tuple[float, float]:
    half = stats.t.ppf(0.975, len(x) - 1) * np.std(x, ddof=1) / math.sqrt(len(x))
    return float(np.mean(x) - half), float(np.mean(x) + half)


def test_regret_near_linucb_at_a_huge_epsilon_and_between_at_a_moderate_one():
    """Game seeds 0-5 = learner seeds, T = 500. At epsilon = 1e10 (the Gaussian's noise
    falls as 1/sqrt(epsilon) only: sigma g ~ 5e-5 per node) the 95% interval of the paired
    difference to linucb lies within 15% of linucb's mean regret; at epsilon = 100 each
    learner sits between linucb and trivial play on every seed (paired), and its 95%
    interval of the paired difference to uniform is below 0."""
    seeds = range(6)
    env = build_env("DPBandit-ContextualLinear-v0", horizon=500)
    linucb, uniform = _regrets(env, "linucb", seeds), _regrets(env, "uniform", seeds)
    scale = float(np.mean(linucb))
    for name in NAMES:
        huge = _regrets(env, name, seeds, epsilon=1e10, delta=1e-5)
        lo, hi = _interval(huge - linucb)
        assert -0.15 * scale <= lo and hi <= 0.15 * scale, (name, lo, hi, scale)
        mid = _regrets(env, name, seeds, epsilon=100.0, delta=1e-5)
        assert np.all(linucb < mid) and np.all(mid < uniform), (name, linucb, mid, uniform)
        assert _interval(mid - uniform)[1] < 0.0
