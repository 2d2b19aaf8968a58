"""RegretRecorder and the comparator against brute force on small instances."""

import itertools

import gymnasium as gym
import numpy as np
import pytest
from scipy.optimize import minimize

from dp_online_envs import OnlineLearningEnv
from dp_online_envs.domains import (
    Arms,
    Ball,
    Birkhoff,
    Cube,
    FlowPolytope,
    GroundSet,
    L1Ball,
    PartitionMatroid,
    Simplex,
    SubmodularBasePolytope,
    UniformMatroid,
)
from dp_online_envs.hindsight import Comparator
from dp_online_envs.losses import (
    AbsoluteLinearLoss,
    ConcaveModularLoss,
    DistanceLoss,
    GraphCutLoss,
    HingeLoss,
    LinearLoss,
    LogisticLoss,
    QuadraticLoss,
)
from dp_online_envs.wrappers import RegretRecorder, log_checkpoints

POLYTOPES = [
    Simplex(4),
    UniformMatroid(5, 2),
    PartitionMatroid([[0, 1], [2, 3, 4]], [1, 2]),
    FlowPolytope.grid(2, 3),
    SubmodularBasePolytope.concave_cardinality(4),
    Birkhoff(3),
]


def _thetas(loss, n, seed):
    rng = np.random.default_rng(seed)
    return np.array([loss.sample_param(rng) for _ in range(n)])


@pytest.mark.parametrize("domain", POLYTOPES + [Cube(3)], ids=lambda d: d.name)
def test_linear_comparator_equals_vertex_enumeration(domain):
    loss = LinearLoss(domain.dim, "linf")
    thetas = _thetas(loss, 50, 0)
    ledger = Comparator(domain, loss)
    for th in thetas:
        ledger.add(th)
    brute = min(sum(loss.value(th, v) for th in thetas) for v in domain.vertices())
    assert ledger.best() == pytest.approx((brute, brute), abs=1e-9)


def test_linear_comparator_on_ball_is_minus_norm():
    loss, domain = LinearLoss(4, "l2"), Ball(4, radius=2.0)
    thetas = _thetas(loss, 30, 1)
    ledger = Comparator(domain, loss)
    for th in thetas:
        ledger.add(th)
    lo, hi = ledger.best()
    assert lo == hi == pytest.approx(-2.0 * np.linalg.norm(thetas.sum(axis=0)))


def _certified_bounds(domain, loss, thetas, x):
    """Exact bounds on ``min_D F``, ``F = sum_t f(theta_t, .)``, from one feasible ``x``.

    ``F(x)`` is an upper bound; with ``g`` a subgradient of ``F`` at ``x``, convexity gives
    ``min_D F >= F(x) - max_{y in D} <g, x - y>``, where the maximum is over the vertices
    (enumerated) or in closed form for the unit l2 and l1 balls. Neither bound depends on
    how ``x`` was found, so a reference solver that stops early only loosens them.
    """
    assert domain.contains(x, atol=1e-12)
    val = sum(loss.value(th, x) for th in thetas)
    g = sum(loss.subgradient(th, x) for th in thetas)
    verts = domain.vertices()
    if verts is not None:
        support = float((verts @ g).min())
    elif isinstance(domain, L1Ball):
        support = -domain.radius * float(np.abs(g).max())
    else:
        support = -domain.radius * float(np.linalg.norm(g))
    return val - (float(g @ x) - support), val


@pytest.mark.parametrize("domain", POLYTOPES + [Ball(3), L1Ball(3)], ids=lambda d: d.name)
@pytest.mark.parametrize("loss_cls", [DistanceLoss, AbsoluteLinearLoss, LogisticLoss, HingeLoss,
                                      QuadraticLoss])
def test_convex_comparator_interval_agrees_with_certified_bounds(domain, loss_cls):
    loss = loss_cls(domain.dim)
    thetas = _thetas(loss, 20, 2)
    ledger = Comparator(domain, loss)
    for th in thetas:
        ledger.add(th)
    lo, hi = ledger.best()
    # Candidate points from a few SLSQP runs over the weights of convex combinations of
    # the vertices (polytopes) or over the ball, each mapped back into the domain;
    # whatever SLSQP converged to (its status is irrelevant), each candidate gives
    # certified bounds [ref_lo, ref_hi] on the true minimum.
    total = lambda x: sum(loss.value(th, x) for th in thetas)  # noqa: E731
    verts = domain.vertices()
    if verts is not None:
        def to_x(w):
            w = np.clip(w, 0.0, None)
            return w @ verts / w.sum() if w.sum() > 0 else verts.mean(axis=0)

        def value_and_grad(w):
            x = to_x(w)
            return total(x), verts @ sum(loss.subgradient(th, x) for th in thetas)

        simplex = {"type": "eq", "fun": lambda w: w.sum() - 1.0, "jac": np.ones_like}
        starts = [np.random.default_rng(s).dirichlet(np.ones(len(verts))) for s in range(3)]
        points = [to_x(minimize(value_and_grad, w0, jac=True, method="SLSQP",
                                bounds=[(0, 1)] * len(verts), constraints=[simplex],
                                options={"maxiter": 300}).x)
                  for w0 in starts]
    else:
        cons = {"type": "ineq", "fun": lambda x: 1 - (np.linalg.norm(x) if domain.name == "ball"
                                                      else np.abs(x).sum())}
        points = [domain.project(minimize(total, np.random.default_rng(s).normal(size=3) * 0.3,
                                          constraints=[cons], method="SLSQP").x)
                  for s in range(3)]
    bounds = [_certified_bounds(domain, loss, thetas, x) for x in points + [domain.center]]
    ref_lo, ref_hi = max(b[0] for b in bounds), min(b[1] for b in bounds)
    assert ref_lo <= ref_hi + 1e-9
    assert lo <= ref_hi + 1e-9  # lo <= min F <= ref_hi
    assert hi >= ref_lo - 1e-9  # hi >= min F >= ref_lo
    assert hi >= lo
    if loss_cls is QuadraticLoss:  # exact comparator
        assert lo == hi
    assert hi <= ref_hi + 1e-2 * max(1.0, abs(ref_hi))  # as good as the reference points


def test_quadratic_comparator_exact():
    domain, loss = Ball(3), QuadraticLoss(3, strong_convexity=2.0)
    thetas = _thetas(loss, 25, 3)
    ledger = Comparator(domain, loss)
    for th in thetas:
        ledger.add(th)
    lo, hi = ledger.best()
    # sum_t (H/2)||x - a_t||^2 is isotropic about the mean of the a_t: its minimizer on
    # the unit ball is the mean scaled onto the ball, certified by a zero gap.
    abar = thetas.mean(axis=0)
    x_star = abar * min(1.0, 1.0 / np.linalg.norm(abar))
    ref_lo, ref_hi = _certified_bounds(domain, loss, thetas, x_star)
    assert ref_hi - ref_lo <= 1e-12 * max(1.0, abs(ref_hi))
    assert lo == hi == pytest.approx(ref_hi, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("make_loss", [lambda: ConcaveModularLoss(6),
                                       lambda: GraphCutLoss(6, [(0, 1), (1, 2), (2, 3), (3, 4),
                                                                (4, 5), (0, 5), (1, 4)])])
def test_submodular_comparator_equals_enumeration(make_loss):
    loss = make_loss()
    domain = GroundSet(6)
    thetas = _thetas(loss, 15, 4)
    ledger = Comparator(domain, loss)
    for th in thetas:
        ledger.add(th)
    brute = min(sum(loss.set_value(th, np.array(m, bool)) for th in thetas)
                for m in itertools.product([0, 1], repeat=6))
    assert ledger.best() == pytest.approx((brute, brute), abs=1e-9)


def test_recorder_regret_equals_direct_sum():
    domain, loss = Arms(5), LinearLoss(5, "unit")
    env = RegretRecorder(OnlineLearningEnv(domain, loss, "oblivious", horizon=200,
                                           record_losses=True))
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    arms = rng.integers(5, size=200)
    for a in arms:
        *_, info = env.step(int(a))
    s = info["regret"]
    thetas = env.unwrapped.played_losses().thetas
    learner = thetas[np.arange(200), arms].sum()
    assert s.learner_loss == pytest.approx(learner)
    assert s.regret_lo == s.regret_hi == pytest.approx(learner - thetas.sum(axis=0).min())
    assert s.checkpoints == log_checkpoints(200).tolist()
    # every checkpoint's regret, recomputed
    for t, r in zip(s.checkpoints, s.regret_curve_lo):
        assert r == pytest.approx(thetas[np.arange(t), arms[:t]].sum() - thetas[:t].sum(0).min())


def test_pseudo_regret_for_stochastic_adversary():
    env = gym.make("DPBandit-MAB-v0", horizon=300, n_arms=4)
    env.reset(seed=5)
    for _ in range(300):
        *_, info = env.step(0)
    s = info["regret"]
    mu = env.unwrapped.adversary.mean_param
    assert s.pseudo_regret == pytest.approx(300 * (mu[0] - mu.min()))


def test_log_checkpoints():
    cps = log_checkpoints(1000)
    assert cps[0] == 1 and cps[-1] == 1000 and np.all(np.diff(cps) > 0)
    assert 10 <= len(cps) <= 25


def test_recorder_reads_the_env_totals_exactly_mid_game_and_at_the_end():
    """The learner's side of the ledger is the env's PlayTotals: the summary's rounds,
    loss and projections are exactly the in-order sums of the rounds' records."""
    from dp_online_envs.envs.online_env import RoundRecord

    env = RegretRecorder(OnlineLearningEnv(Ball(2), LinearLoss(2, "l2"), "oblivious",
                                           feedback="full", horizon=30), checkpoints=[3, 7])
    with pytest.raises(RuntimeError, match="reset"):
        env.summary()
    env.reset(seed=2)
    rng = np.random.default_rng(1)
    loss, projected = 0.0, 0
    for t in range(1, 31):
        *_, terminated, _, info = env.step(rng.uniform(-1.2, 1.2, size=2))
        record = RoundRecord.of(info)
        loss += record.loss
        projected += record.projected
        s = info["regret"] if terminated else env.summary()
        assert (s.rounds, s.learner_loss, s.projected_actions) == (t, loss, projected)
        assert s.learner_loss == env.unwrapped.totals.learner_loss
    assert 0 < projected < 30 and s.checkpoints == [3, 7, 30]
