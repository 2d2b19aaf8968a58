"""``private-lazy-mw``: L2P (Asi-Koren-Liu-Talwar NeurIPS 2024, Alg. 1) on MW.

Checked against exact computations: the switch-decision epsilon against a brute-force
maximum over the batch-loss differences, the closed-form composition against a
brute-force enumeration and against dp-accounting, the draw quantile against the exact
binomial tail, the exact sampler against the MW distribution, the switch count against
its exact law; plus refusals, the batch structure, determinism, the large-epsilon limit
and the black-box audit (passes at the declared epsilon, refutes eta x 30).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from agents import make
from agents.full_info import private_lazy_mw
from agents.full_info.private_lazy_mw import (
    ETA_BITS,
    LOSS_BITS,
    composed_delta,
    draw_quantile,
    l2p_parameters,
    switch_epsilon,
)
from dp_online_envs import build_env
from dp_online_envs.lab.audit import audit

NAME = "private-lazy-mw"
DELTA = 1e-6


def _problem(horizon=200, n_arms=4, env="DPFullInfo-Experts-v0"):
    kw = {"n_arms": n_arms} if env == "DPFullInfo-Experts-v0" else {}
    return build_env(env, horizon=horizon, **kw).get_wrapper_attr("problem")


def _drive(agent, losses):
    """Play ``losses`` (T x d) against ``agent``; the expert played each round."""
    played = []
    for theta in losses:
        x = np.asarray(agent.point(agent.act()))
        played.append(int(np.argmax(x)))
        agent.update(None, theta)
    return np.array(played)


# ------------------------------------------------------------------ refusals
def test_refuses_bad_parameters():
    prob = _problem()
    with pytest.raises(ValueError, match=r"delta=0 rejected: private-lazy-mw is"):
        make(NAME, prob, epsilon=1.0)  # delta = 0
    with pytest.raises(ValueError, match="delta=1.5"):
        make(NAME, prob, epsilon=1.0, delta=1.5)
    with pytest.raises(ValueError, match="epsilon"):
        make(NAME, prob, delta=DELTA)
    with pytest.raises(ValueError, match="simplex"):
        make(NAME, _problem(env="DPFullInfo-Sphere-v1"), epsilon=1.0, delta=DELTA)
    with pytest.raises(ValueError, match="batch=0"):
        make(NAME, prob, epsilon=1.0, delta=DELTA, batch=0)
    with pytest.raises(ValueError, match=r"p=1.5 rejected"):
        make(NAME, prob, epsilon=1.0, delta=DELTA, p=1.5)
    with pytest.raises(ValueError, match=r"eta=nan rejected"):
        make(NAME, prob, epsilon=1.0, delta=DELTA, eta=float("nan"))
    # a learning rate 30x the calibrated one cannot hold the requested epsilon
    eta = make(NAME, prob, epsilon=1.0, delta=DELTA).eta
    with pytest.raises(ValueError, match="above the requested epsilon=1"):
        make(NAME, prob, epsilon=1.0, delta=DELTA, eta=30 * eta)


# -------------------------------------------------------------- the accounting
@pytest.mark.parametrize("eta,B,p", [(0.01, 10, 0.0), (0.003, 50, 0.01), (0.2, 1, 0.3),
                                     (0.05, 3, 1.0)])
def test_switch_epsilon_is_the_brute_force_maximum(eta, B, p):
    """max over g in [-B eta, B eta], |g' - g| <= 2 eta of the log ratios of the stay
    and switch probabilities a(g) = (1-p) exp(-g - 2 B eta)."""
    g = np.linspace(-B * eta, B * eta, 2001)
    worst = 0.0
    for shift in np.linspace(-2 * eta, 2 * eta, 41):
        g2 = g + shift
        ok = np.abs(g2) <= B * eta + 1e-15
        a1 = (1 - p) * np.exp(-g[ok] - 2 * B * eta)
        a2 = (1 - p) * np.exp(-g2[ok] - 2 * B * eta)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.concatenate([np.log(a1 / a2) if p < 1 else [0.0],
                                np.log((1 - a1) / (1 - a2))])
        worst = max(worst, float(np.nanmax(np.abs(r))))
    bound = switch_epsilon(eta, B, p)
    assert worst <= bound + 1e-12
    assert worst >= bound - 1e-9 or bound == pytest.approx(2 * eta)


@pytest.mark.parametrize("esw,e0,k,eps", [(0.3, 0.1, 3, 0.2), (0.05, 0.2, 4, 0.5),
                                          (1.0, 0.4, 2, 0.0)])
def test_composed_delta_is_the_brute_force_hockey_stick(esw, e0, k, eps):
    """Enumerate the 2^(k+1) outcomes of the composed randomized-response pairs."""
    def rr(e):
        return [(math.exp(e) / (1 + math.exp(e)), 1 / (1 + math.exp(e))),
                (1 / (1 + math.exp(e)), math.exp(e) / (1 + math.exp(e)))]
    total = 0.0
    for outcome in itertools.product(*[rr(esw)] + [rr(e0)] * k):
        p = math.prod(o[0] for o in outcome)
        q = math.prod(o[1] for o in outcome)
        total += max(0.0, p - math.exp(eps) * q)
    assert composed_delta(eps, esw, e0, k) == pytest.approx(total, rel=1e-9, abs=1e-15)


def test_closed_form_agrees_with_dp_accounting():
    for esw, e0, k, d in ((0.1, 0.02, 300, 1e-6), (0.0731, 0.0123, 150, 1e-5)):
        acc = private_lazy_mw._accountant_epsilon(esw, e0, k, d)
        # dp-accounting's pessimistic grid e0/4 rounds esw up by at most e0/4: its
        # epsilon is at least the exact one, and at most the exact one of esw + e0/4
        assert composed_delta(acc, esw, e0, k) <= d * (1 + 1e-6)
        assert composed_delta(acc * (1 - 1e-6), esw + e0 / 4, e0, k) > d


def test_draw_quantile_is_the_exact_binomial_tail():
    m, px, tail = 300, 0.03, 1e-4
    k = private_lazy_mw._quantile(m, px, tail)
    assert stats.binom.sf(k, m, px) <= tail < stats.binom.sf(k - 1, m, px)
    eta, B, p = 0.002, 10, 0.05
    total = draw_quantile(m + 1, eta, B, p, tail)
    pxb = 1 - (1 - p) * math.exp(-3 * B * eta)
    assert total == private_lazy_mw._quantile(m, pxb, tail / 2) + private_lazy_mw._quantile(m, p, tail / 2)


@pytest.mark.parametrize("T,eps", [(500, 0.3), (2000, 1.0), (300, 0.05)])
def test_calibration_holds_the_declared_epsilon(T, eps):
    P = l2p_parameters(T, 10, eps, DELTA)
    assert 0.0 <= P.epsilon <= eps
    if P.batches > 1:
        # recomputed from scratch: the same composition, by dp-accounting
        k = draw_quantile(P.batches, P.eta, P.batch, P.p, DELTA / 2)
        assert k == P.draws
        assert P.eps_switch == switch_epsilon(P.eta, P.batch, P.p)
        assert private_lazy_mw._accountant_epsilon(P.eps_switch, 2 * P.eta, k, DELTA / 2) <= eps
        assert P.eta <= math.sqrt(8 * math.log(10) / (T * P.batch))


def test_one_batch_when_nothing_else_is_private_enough():
    P = l2p_parameters(50, 10, 1e-4, DELTA)
    assert (P.batch, P.batches, P.epsilon) == (50, 1, 0.0)
    agent = make(NAME, _problem(horizon=50, n_arms=10), epsilon=1e-4, delta=DELTA, seed=0)
    played = _drive(agent, np.random.default_rng(0).random((50, 10)))
    assert len(set(played)) == 1 and agent.x_draws == 0


def test_large_epsilon_is_mw_with_hedges_rate():
    prob = _problem(horizon=2000, n_arms=10)
    agent = make(NAME, prob, epsilon=1e6, delta=DELTA)
    hedge = make("hedge", prob)
    assert agent.batch == 1 and agent.p == 0.0
    assert 0 <= hedge.eta - agent.eta < 2.0**-ETA_BITS
    # its regret then is hedge's: mean over seeds below hedge's bound w sqrt(T ln K / 2)
    from dp_online_envs.lab.experiments.game import GameSpec, play_game
    regs = [play_game(GameSpec("DPFullInfo-Experts-v0", NAME, 1e6, DELTA, 2000, s))["regret"]
            for s in range(4)]
    assert np.mean(regs) < hedge.regret_bound


# ------------------------------------------------------------------ the play
def test_plays_are_constant_within_batches_and_released_once_per_batch():
    prob = _problem(horizon=203, n_arms=5)
    agent = make(NAME, prob, epsilon=20.0, delta=DELTA, seed=3, batch=7, p=0.5)
    agent.record_releases = True
    played = _drive(agent, np.random.default_rng(1).random((203, 5)))
    batches = [played[i:i + 7] for i in range(0, 203, 7)]
    assert all(len(set(b)) == 1 for b in batches)
    assert len({int(b[0]) for b in batches}) > 1  # it does switch
    assert [t for t, _ in agent.releases] == list(range(0, 203, 7))
    assert [int(np.argmax(v)) for _, v in agent.releases] == [int(b[0]) for b in batches]


def test_same_seed_same_play():
    prob = _problem(horizon=300, n_arms=6)
    losses = np.random.default_rng(2).random((300, 6))
    a = _drive(make(NAME, prob, epsilon=20.0, delta=DELTA, seed=5, batch=3), losses)
    b = _drive(make(NAME, prob, epsilon=20.0, delta=DELTA, seed=5, batch=3), losses)
    c = _drive(make(NAME, prob, epsilon=20.0, delta=DELTA, seed=6, batch=3), losses)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


@pytest.mark.parametrize("p", [0.0, 0.25])
def test_switch_count_has_its_exact_law_on_zero_losses(p):
    """With zero losses L(x) = L(y): each of the n - 1 batch changes redraws x with
    probability 1 - (1-p) e^{-2 B eta} and y with probability p, independently, so the
    draws are Binomial(n - 1, .) -- deleting the fake switch coin or the 2 B eta term
    moves the mean by many standard deviations.

    One learner, reset with each seed: ``reset(s)`` starts the game of
    ``make(..., seed=s)`` (the calibration, dearer than a game, is done once)."""
    T, d, B, eta = 120, 3, 2, 0.01
    prob = _problem(horizon=T, n_arms=d)
    zeros = np.zeros((T, d))
    runs = 200
    xs, ys, sw, ysw = [], [], [], []
    agent = make(NAME, prob, epsilon=50.0, delta=DELTA, seed=0, batch=B, eta=eta, p=p)
    assert agent.p == p
    for s in range(runs):
        agent.reset(s)
        played, refs = [], []
        for theta in zeros:
            played.append(int(np.argmax(agent.point(agent.act()))))
            refs.append(agent._y)  # the hidden reference sample of this batch
            agent.update(None, theta)
        played, refs = np.array(played), np.array(refs)
        xs.append(agent.x_draws)
        ys.append(agent.y_draws)
        sw.append(int(np.sum(played[1:] != played[:-1])))
        ysw.append(int(np.sum(refs[1:] != refs[:-1])))
    m = T // B - 1
    qx = 1 - (1 - p) * math.exp(-2 * B * agent.eta)
    for counts, q in ((xs, qx), (ys, p)):
        sd = math.sqrt(m * q * (1 - q) / runs) if 0 < q < 1 else 1e-9
        assert abs(np.mean(counts) - m * q) <= 5 * sd
    # a redraw lands on another expert with probability (d-1)/d (nu is uniform)
    for changes, q in ((sw, qx), (ysw, p)):
        q_sw = q * (d - 1) / d
        sd = math.sqrt(m * q_sw * (1 - q_sw) / runs) if q_sw > 0 else 1e-9
        assert abs(np.mean(changes) - m * q_sw) <= 5 * sd


def test_switches_stay_below_the_drawn_bound_on_adversarial_losses():
    """The x draws per batch change have probability <= 1 - (1-p) e^{-3 B eta} whatever
    the losses: the mean over seeds stays below (n-1) times that (5 sd). One learner,
    reset with each seed (``reset(s)`` starts the game of ``make(..., seed=s)``)."""
    T, d, B = 300, 4, 5
    prob = _problem(horizon=T, n_arms=d)
    losses = (np.random.default_rng(0).random((T, d)) < 0.5).astype(float)
    counts = []
    agent = make(NAME, prob, epsilon=50.0, delta=DELTA, seed=0, batch=B, eta=0.02, p=0.0)
    for s in range(150):
        agent.reset(s)
        _drive(agent, losses)
        counts.append(agent.x_draws)
    m = T // B - 1
    q = 1 - math.exp(-3 * B * agent.eta)
    assert np.mean(counts) <= m * q
    assert np.mean(counts) >= m * (1 - math.exp(-B * agent.eta)) - 5 * math.sqrt(m / 600)


def test_exact_sampler_draws_the_mw_distribution():
    prob = _problem(horizon=100, n_arms=4)
    agent = make(NAME, prob, epsilon=1000.0, delta=DELTA, seed=0, eta=0.5)
    agent._cum = np.array([0, 1, 2, 4], dtype=np.int64) * 2**LOSS_BITS
    n = 20000
    draws = np.array([agent._sample_nu() for _ in range(n)])
    w = np.exp(-agent.eta * np.array([0, 1, 2, 4]))
    w /= w.sum()
    freq = np.bincount(draws, minlength=4) / n
    assert np.all(np.abs(freq - w) <= 5 * np.sqrt(w * (1 - w) / n))


def test_losses_are_clipped_and_rounded_onto_the_unit_grid():
    prob = _problem(horizon=10, n_arms=3)
    agent = make(NAME, prob, epsilon=1.0, delta=DELTA, seed=0, batch=10)
    agent.act()
    agent.update(None, np.array([2.0, -1.0, 0.3]))  # outside [0, 1]: clipped
    assert agent.clipped_feedback == 1
    assert agent._cur.tolist() == [2**LOSS_BITS, 0, round(0.3 * 2**LOSS_BITS)]


# ------------------------------------------------------------------ the audit
def _audit(mult: float):
    env = build_env("DPFullInfo-Experts-v0", horizon=8, n_arms=3)
    problem = env.get_wrapper_attr("problem")

    def factory(seed):
        agent = make(NAME, problem, seed=seed, epsilon=1.0, delta=1e-5)
        if mult != 1:  # the broken copy: eta x mult, the same (1, 1e-5) claim
            agent.params = replace(agent.params,
                                   eta_units=int(agent.params.eta_units * mult))
        return agent

    # 300 runs per side: the copy with thirty times eta is refuted as surely as with
    # 1000. Its refutation rate, estimated from a 1000-run audit's samples (1000 draws
    # of n distinct runs per side, the same test on them), is 1000/1000 at n = 1000 and
    # at 300 (median eps_lb 4.47, 3.26); a miss rate above 0.3% would have shown a miss
    # with probability 95%. The declared learner faces the same test, so the same break
    # of its own eta would fail it as surely as before.
    return audit(factory, env, tau=1, runs=300, seed=1)


def test_audit_passes_at_the_declared_epsilon():
    result = _audit(1)
    assert result.passed, str(result)


def test_audit_refutes_a_copy_with_thirty_times_eta():
    result = _audit(30)
    assert not result.passed, str(result)
    assert result.eps_lb > 1.0


def test_switch_probability_uses_the_last_batch_losses_of_x_and_y():
    """Two experts, losses (0, 1) every round, one batch change: x is redrawn with
    probability 1 - exp(-eta (L(x) - L(y)) - 2 B eta) given (x_1, y_1) -- e^{-B eta},
    e^{-2 B eta}, e^{-3 B eta} for L(x) - L(y) = -B, 0, B."""
    B, eta, runs = 5, 0.1, 1500
    prob = _problem(horizon=2 * B, n_arms=2)
    losses = np.tile([0.0, 1.0], (2 * B, 1))
    drawn = {}
    for s in range(runs):
        agent = make(NAME, prob, epsilon=1000.0, delta=DELTA, seed=s, batch=B, eta=eta, p=0.0)
        x1, y1 = agent._x, agent._y
        _drive(agent, losses)
        drawn.setdefault((x1, y1), []).append(agent.x_draws)
    for (x1, y1), counts in drawn.items():
        diff = B * ((x1 == 1) - (y1 == 1))  # L(x) - L(y) in loss units
        q = 1 - math.exp(-eta * diff - 2 * B * eta)
        n = len(counts)
        assert abs(np.mean(counts) - q) <= 5 * math.sqrt(q * (1 - q) / n), (x1, y1, q)


def test_secure_generator_plays_in_batches():
    prob = _problem(horizon=60, n_arms=3)
    agent = make(NAME, prob, epsilon=20.0, delta=DELTA, secure=True, batch=6)
    played = _drive(agent, np.random.default_rng(0).random((60, 3)))
    assert all(len(set(played[i:i + 6])) == 1 for i in range(0, 60, 6))
