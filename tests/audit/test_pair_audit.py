"""Tests of dp_online_envs.lab.audit.audit (one neighbouring pair) and its statistics.

The toy learner is noisy follow-the-leader on the experts problem (the simplex with
linear losses in [0, 1]^K, full information): every clipped theta_t goes into a
binary-tree counter, the noisy prefix sums are released, and the agent plays the
vertex minimising them. Replacing one theta in [0, 1]^K moves the stream by at most
K in l1 and sqrt(K) in l2, the counter's sensitivities for Laplace / Gaussian noise.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from scipy import stats

from agents.base import Agent
from agents.privacy import PrivacyGuarantee, make_counter
from dp_online_envs.adversaries import LossSequence
from dp_online_envs.domains import Simplex
from dp_online_envs.envs import OnlineLearningEnv, build_env
from dp_online_envs.lab.audit import (
    AuditResult,
    audit,
    audit_samples,
    clopper_pearson,
    eps_lower_bound,
    neighbour_param,
    replay_env,
)
from dp_online_envs.losses import LinearLoss
from dp_online_envs.problem import Problem
from dp_online_envs.wrappers import FeedbackGuard, RegretRecorder

K, T, EPS, DELTA = 3, 16, 1.0, 1e-5
RUNS = 1000


class NoisyFTL(Agent):
    """Follow the noisy leader: tree-counter prefix sums of theta, argmin vertex."""

    name = "test-noisy-ftl"
    feedback = "full"
    private = True

    def setup(self, noise: str = "laplace", noise_divisor: float = 1.0) -> None:
        k = self.problem.domain.dim
        self.noise = noise
        # Calibrating for a larger epsilon divides the noise scale (Laplace exactly).
        self.counter_epsilon = self.epsilon * noise_divisor
        self.sensitivity = float(k) if noise == "laplace" else math.sqrt(k)
        self.privacy = PrivacyGuarantee(self.epsilon, self.delta if noise == "gaussian" else 0.0,
                                        mechanism=f"noisy FTL ({noise} tree counter)")

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        k = self.problem.domain.dim
        self.counter = make_counter(
            "tree", self.problem.horizon, k, noise=self.noise, epsilon=self.counter_epsilon,
            delta=self.delta if self.noise == "gaussian" else None,
            sensitivity=self.sensitivity, rng=self.rng)
        self.noisy_sum = np.zeros(k)

    def act(self) -> np.ndarray:
        x = np.zeros(self.problem.domain.dim)
        x[int(np.argmin(self.noisy_sum))] = 1.0
        return x

    def update(self, action, feedback) -> None:
        theta = self.clip_feedback(feedback)
        self.noisy_sum = self.release(self.counter.add(theta))
        self.t += 1


def experts_problem(k: int = K, horizon: int = T) -> Problem:
    return Problem.build(Simplex(k), LinearLoss(k, "unit"), "full", horizon)


PROBLEM = experts_problem()


def factory(noise="laplace", divisor=1.0, epsilon=EPS, delta=0.0, problem=PROBLEM):
    return lambda seed: NoisyFTL(problem, epsilon=epsilon, delta=delta, seed=seed,
                                 noise=noise, noise_divisor=divisor)


def worst_sequence(tau: int, horizon: int = T, k: int = K) -> LossSequence:
    """Ties everywhere but round tau: theta_tau = (0, 1, ..., 1), neighbour (1, 0, ..., 0).

    The change has the full l1 norm K and is not a constant shift of all coordinates
    (which the argmin, hence the actions, could not see).
    """
    thetas = np.full((horizon, k), 0.5)
    thetas[tau - 1] = 1.0
    thetas[tau - 1, 0] = 0.0
    return LossSequence(thetas)


# ------------------------------------------------------------ Clopper-Pearson
@pytest.mark.parametrize("k, n, conf", [(0, 10, 0.95), (3, 10, 0.95), (10, 10, 0.9),
                                        (57, 500, 0.99), (1, 1, 0.5), (250, 500, 0.999)])
def test_clopper_pearson_matches_beta_quantiles(k, n, conf):
    a = (1 - conf) / 2
    lo, hi = clopper_pearson(k, n, conf)
    want_lo = 0.0 if k == 0 else stats.beta.ppf(a, k, n - k + 1)
    want_hi = 1.0 if k == n else stats.beta.ppf(1 - a, k + 1, n - k)
    assert lo == pytest.approx(want_lo, abs=1e-12)
    assert hi == pytest.approx(want_hi, abs=1e-12)
    ci = stats.binomtest(k, n).proportion_ci(conf, method="exact")
    assert (lo, hi) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_clopper_pearson_known_values():
    # 0 of n: the upper bound solves (1 - p)^n = a  ->  p = 1 - a^(1/n).
    lo, hi = clopper_pearson(0, 100, 0.9)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-10)
    lo, hi = clopper_pearson(100, 100, 0.9)
    assert hi == 1.0 and lo == pytest.approx(0.05 ** (1 / 100), rel=1e-10)


def test_clopper_pearson_coverage():
    """Empirical coverage of the one-sided bounds is at least the nominal level."""
    rng = np.random.default_rng(1)
    p, n, conf = 0.07, 60, 0.9
    ks = rng.binomial(n, p, size=2000)
    bounds = {k: clopper_pearson(int(k), n, conf) for k in np.unique(ks)}
    assert np.mean([bounds[k][0] <= p for k in ks]) >= 0.95 - 0.01
    assert np.mean([bounds[k][1] >= p for k in ks]) >= 0.95 - 0.01


def test_eps_lower_bound_formula_and_bonferroni():
    k1, k0, n = 300, 30, 500
    lo1 = clopper_pearson(k1, n, 1 - 0.05 / 4)[0]
    hi0 = clopper_pearson(k0, n, 1 - 0.05 / 4)[1]
    assert eps_lower_bound(k1, n, k0, n, confidence=0.95, tests=4) == pytest.approx(
        math.log(lo1 / hi0))
    assert eps_lower_bound(k1, n, k0, n, delta=0.1, tests=4) == pytest.approx(
        math.log((lo1 - 0.1) / hi0))
    # More tests -> wider intervals -> smaller bound; identical counts -> negative.
    assert (eps_lower_bound(k1, n, k0, n, tests=10) < eps_lower_bound(k1, n, k0, n, tests=1))
    assert eps_lower_bound(100, n, 100, n) < 0
    assert eps_lower_bound(0, n, 0, n) == -math.inf
    assert eps_lower_bound(5, n, 0, n, delta=0.5) == -math.inf


# ------------------------------------------------------------- event selection
def test_audit_samples_identical_sides_give_no_evidence():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2000, 5))
    res = audit_samples(x[:1000], x[1000:], epsilon=0.5)
    assert res.eps_lb <= 0.0 and res.passed
    # Literally the same outputs on both sides: every event has equal counts.
    same = audit_samples(x[:1000], x[:1000].copy(), epsilon=0.5)
    assert same.eps_lb < 0.0 or same.eps_lb == -math.inf


def test_audit_samples_gaussian_shift_is_detected_and_bounded():
    """N(0,1) vs N(mu,1) is exactly (eps, delta(eps))-DP; the bound never exceeds it."""
    rng = np.random.default_rng(3)
    mu, n = 3.0, 1000
    x0, x1 = rng.normal(size=(n, 1)), rng.normal(mu, size=(n, 1))
    res = audit_samples(x0, x1, epsilon=math.inf, delta=1e-6, thresholds=8)
    # True epsilon at delta=1e-6 for mu=3: well above 3 (Balle-Wang), and eps_lb > 0.
    assert 0.5 < res.eps_lb < 12.0
    custom = audit_samples(x0, x1, statistic=lambda x: x[:, 0], epsilon=1.0)
    assert custom.eps_lb > 1.0 and not custom.passed and custom.statistic == "<lambda>"


def test_audit_samples_validation():
    x = np.zeros((20, 2))
    with pytest.raises(ValueError, match="runs=9"):
        audit_samples(x[:9], x[:9])
    with pytest.raises(ValueError, match="confidence=1.5"):
        audit_samples(x, x, confidence=1.5)
    with pytest.raises(ValueError, match="equal shape"):
        audit_samples(x, x[:, :1])
    with pytest.raises(ValueError, match="statistic='svm'"):
        audit_samples(x, x, statistic="svm")


# ------------------------------------------------------------ game helpers
def test_neighbour_param_is_far_and_admissible():
    loss = LinearLoss(4, "unit")
    theta = np.array([0.1, 0.9, 0.5, 0.0])
    nb = neighbour_param(loss, theta)
    assert np.allclose(nb, [1.0, 0.0, 0.0, 1.0])
    ball = LinearLoss(3, "l2")
    theta = np.array([0.3, 0.0, 0.4])
    nb = neighbour_param(ball, theta)
    assert np.allclose(nb, -theta / np.linalg.norm(theta))


@pytest.mark.parametrize("family", ["logistic", "hinge"])
def test_neighbour_of_a_margin_loss_is_another_loss(family):
    """(a, y) and (-a, -y) are the same margin loss: the default neighbour must be a
    different function (the flipped label), not the Euclidean-farthest parameter, which
    is that same loss and made every default audit of a margin loss powerless."""
    from dp_online_envs.losses import HingeLoss, LogisticLoss

    loss = {"logistic": LogisticLoss, "hinge": HingeLoss}[family](3)
    theta = np.array([0.6, 0.0, -0.8, 1.0])
    nb = neighbour_param(loss, theta)
    np.testing.assert_array_equal(nb, [0.6, 0.0, -0.8, -1.0])
    xs = np.random.default_rng(0).uniform(-0.5, 0.5, size=(50, 3))  # points of the ball
    assert np.max(np.abs(loss.values(nb, xs) - loss.values(theta, xs))) > 0.1
    same = loss.clip_param(-theta)  # the Euclidean-farthest parameter: the same loss
    np.testing.assert_allclose(loss.values(same, xs), loss.values(theta, xs))


def test_replay_env_is_guarded_and_deterministic():
    seq = worst_sequence(3)
    env = replay_env(PROBLEM, seq)
    obs, info = env.reset(seed=0)
    assert info == {}
    seen = []
    for _ in range(T):
        obs, _, term, _, info = env.step(np.eye(K)[0])
        seen.append(obs)
        assert info == {}
    assert term and np.allclose(seen, seq.thetas)
    bandit = replay_env(PROBLEM, seq, feedback="bandit")
    bandit.reset(seed=0)
    obs, *_ = bandit.step(np.eye(K)[1])
    assert obs.shape == (1,) and obs[0] == pytest.approx(0.5)


# ---------------------------------------------------------------- the audits
@pytest.fixture(scope="module")
def timings():
    out: dict[str, float] = {}
    yield out
    print("\nauditor timings (s):", {k: round(v, 2) for k, v in out.items()})


def timed(timings, name, fn):
    start = time.perf_counter()
    res = fn()
    timings[name] = time.perf_counter() - start
    print(f"\n{name}: {res}")
    return res


TAU = 1


@pytest.mark.parametrize("view", ["releases", "actions"])
def test_calibrated_laplace_ftl_passes(view, timings):
    res = timed(timings, f"laplace-{view}", lambda: audit(
        factory(), PROBLEM, tau=TAU, runs=RUNS, view=view, seed=11,
        sequence=worst_sequence(TAU)))
    assert isinstance(res, AuditResult)
    assert res.passed and res.eps_lb <= EPS
    assert res.epsilon == EPS and res.delta == 0.0 and res.view == view
    assert res.runs == RUNS and res.n_test == RUNS // 2 and res.tau == TAU
    assert res.theta == (0.0,) + (1.0,) * (K - 1)
    assert res.neighbour_theta == (1.0,) + (0.0,) * (K - 1)
    assert "PASSED" in str(res) and "evidence, not proof" in str(res)


def test_under_noised_laplace_ftl_is_caught(timings):
    """700 runs per side refute the copy as surely as 1000: its refutation rate,
    estimated from a 1000-run audit's samples (1000 draws of n distinct runs per side,
    the same test on them), is 1000/1000 at n = 1000 and at 700 (median eps_lb 1.79,
    1.61; 999/1000 at 600); a miss rate above 0.3% would have shown a miss with
    probability 95%."""
    res = timed(timings, "laplace/10-releases", lambda: audit(
        factory(divisor=10.0), PROBLEM, tau=TAU, runs=700, view="releases", seed=12,
        sequence=worst_sequence(TAU)))
    assert res.eps_lb > EPS and not res.passed
    assert "FAILED" in str(res)


def test_under_noised_laplace_ftl_actions_view(timings):
    """The actions (argmin vertices) are post-processing of the releases, so they reveal
    less; on this sequence they still expose the missing factor 10."""
    res = timed(timings, "laplace/10-actions", lambda: audit(
        factory(divisor=10.0), PROBLEM, tau=TAU, runs=RUNS, view="actions", seed=13,
        sequence=worst_sequence(TAU)))
    assert EPS < res.eps_lb <= 10 * EPS  # 10 * EPS: the true epsilon of this agent


#: Runs per side of the Gaussian pair: the copy with a tenth of the noise is refuted
#: with 600 as surely as with 1000. Its refutation rate, estimated from a 1000-run
#: audit's samples (1000 draws of n distinct runs per side, the same test on them), is
#: 1000/1000 at n = 1000 and at 600 (median eps_lb 1.99, 1.75; 993/1000 at 400); a miss
#: rate above 0.3% would have shown a miss with probability 95%. The calibrated agent
#: faces the same test, so a tenfold cut of its calibration would fail it as surely.
GAUSS_RUNS = 600


def test_gaussian_ftl_with_delta(timings):
    ok = timed(timings, "gaussian-releases", lambda: audit(
        factory("gaussian", delta=DELTA), PROBLEM, tau=TAU, runs=GAUSS_RUNS, seed=14,
        sequence=worst_sequence(TAU)))
    assert ok.passed and ok.delta == DELTA
    bad = timed(timings, "gaussian/10-releases", lambda: audit(
        factory("gaussian", divisor=10.0, delta=DELTA), PROBLEM, tau=TAU, runs=GAUSS_RUNS,
        seed=15, sequence=worst_sequence(TAU)))
    assert not bad.passed


def test_recorded_sequence_from_registered_env(timings):
    """No sequence given: one is recorded by playing the registered env itself."""
    env = build_env("DPFullInfo-Experts-v0", n_arms=K, horizon=T)
    res = timed(timings, "recorded-releases", lambda: audit(
        factory(), env, tau=5, runs=200, seed=16))
    assert res.passed and res.horizon == T and res.tau == 5
    assert res.runs == 200
    # the default neighbour is the opposite corner of theta_5
    assert all(abs(a - b) >= 0.5 for a, b in zip(res.theta, res.neighbour_theta))
    # a hand-built guarded env with an oblivious adversary works as well
    hand = FeedbackGuard(RegretRecorder(OnlineLearningEnv(
        Simplex(K), LinearLoss(K, "unit"), "oblivious", feedback="full", horizon=T)))
    assert audit(factory(), hand, tau=T, runs=20, seed=3).passed


def test_bandit_agent_sees_only_bandit_feedback():
    """A bandit agent on a full-information problem gets the downgraded feedback."""
    seen = []

    class BanditProbe(NoisyFTL):
        feedback = "bandit"

        def update(self, action, feedback):
            seen.append(np.shape(feedback))
            self.release(self.counter.add(np.zeros(K)))
            self.t += 1

    res = audit(lambda s: BanditProbe(PROBLEM, epsilon=EPS, seed=s), PROBLEM, tau=2,
                runs=10, seed=1, sequence=worst_sequence(2))
    assert set(seen) == {(1,)}
    assert res.eps_lb < 0.0  # its releases ignore the data

def test_identical_sequences_give_no_evidence(timings):
    seq = worst_sequence(TAU)
    res = timed(timings, "identical", lambda: audit(
        factory(divisor=10.0), PROBLEM, tau=TAU, runs=200, seed=17, sequence=seq,
        neighbour_theta=seq.thetas[TAU - 1]))
    assert res.eps_lb <= 0.0 and res.passed


def test_audit_is_deterministic():
    kw = {"tau": 2, "runs": 40, "seed": 5, "sequence": worst_sequence(2)}
    a, b = audit(factory(), PROBLEM, **kw), audit(factory(), PROBLEM, **kw)
    assert a == b


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("kwargs, match", [
    ({"tau": 0}, "tau=0"),
    ({"tau": T + 1}, f"tau={T + 1}"),
    ({"tau": T, "view": "actions"}, f"tau={T}"),
    ({"tau": 1.5}, "tau=1.5"),
    ({"tau": 1, "runs": 9}, "runs=9"),
    ({"tau": 1, "confidence": 0.0}, "confidence=0.0"),
    ({"tau": 1, "confidence": 1.0}, "confidence=1.0"),
    ({"tau": 1, "view": "weights"}, "view='weights'"),
    ({"tau": 1, "neighbour_theta": np.full(K, 2.0)}, "neighbour_theta"),
])
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        audit(factory(), PROBLEM, sequence=worst_sequence(1), runs=kwargs.pop("runs", 10),
              **kwargs)


def test_non_recording_agent_is_refused():
    class Silent(NoisyFTL):
        def update(self, action, feedback):
            self.noisy_sum = self.counter.add(self.clip_feedback(feedback))
            self.t += 1

    with pytest.raises(ValueError, match="released nothing"):
        audit(lambda s: Silent(PROBLEM, epsilon=1.0, seed=s), PROBLEM, tau=1, runs=10,
              sequence=worst_sequence(1))


# ------------------------------------------------- observing, never touching
class FrozenAgentProxy:
    """Forwards the learner API to an agent; refuses every attribute assignment."""

    __slots__ = ("_agent",)
    feedback = "full"

    def __init__(self, agent):
        object.__setattr__(self, "_agent", agent)

    def __setattr__(self, name, value):
        raise AttributeError(f"frozen proxy: cannot set {name!r}")

    @property
    def privacy(self):
        return self._agent.privacy

    def reset(self, seed):
        self._agent.reset(seed)

    def act(self):
        return self._agent.act()

    def update(self, action, feedback):
        self._agent.update(action, feedback)


@pytest.mark.parametrize("view", ["releases", "actions"])
def test_audit_only_observes_a_frozen_proxy(view):
    """Releases are heard through the context listener, actions through the loop's
    hook: the same result through a proxy that cannot be written to."""
    kw = {"tau": 1, "runs": 100, "seed": 21, "view": view, "sequence": worst_sequence(1)}
    inner = factory(divisor=10.0)
    direct = audit(inner, PROBLEM, **kw)
    proxied = audit(lambda s: FrozenAgentProxy(inner(s)), PROBLEM, **kw)
    assert proxied == direct


def test_release_listener_is_scoped():
    from dp_online_envs.release_tap import listening, release_listener

    agent = factory()(0)
    heard, outer = [], []
    assert release_listener() is None
    with listening(lambda t, v: outer.append(t)):
        with listening(lambda t, v: heard.append((t, np.array(v)))):
            agent.update(None, np.full(K, 0.5))
        agent.update(None, np.full(K, 0.5))
    agent.update(None, np.full(K, 0.5))  # nobody listens
    assert [t for t, _ in heard] == [0] and outer == [1] and release_listener() is None
    assert not agent.releases and not agent.record_releases  # nothing set on the agent
