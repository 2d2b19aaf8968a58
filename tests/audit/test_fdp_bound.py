"""The one-run f-DP bound (Mahloujifar, Melis and Chaudhuri 2024) beside Steinke, Nasr and
Jagielski's: the relaxation's exact optimum (a linear program), exact tails of the
tightest mechanisms by enumeration, the edge cases and the refutation rates."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from scipy import optimize, stats

from dp_online_envs.lab.audit.one_run import (
    fdp_eps_lower_bound,
    fdp_p_value,
    one_run_eps_lower_bound,
    one_run_p_value,
)


def relaxation_optimum(r, v, eps, delta, m):
    """The largest ``P[v' >= v]`` over laws ``d_j = P[v' = j]`` of the right guesses out of
    exactly ``r`` that satisfy, for ``i = 1..r``, ``R_i <= m fbar(H_{i-1} / m)`` with
    ``R_i = sum_{j >= i} j d_j``, ``H_i = sum_{j >= i} (r - j) d_j`` and ``fbar`` the
    blow-up of the ``(eps, delta)`` trade-off (three linear pieces): a linear program."""
    up = np.triu(np.ones((r + 1, r + 1)))  # row i sums the entries j >= i
    right, wrong = up * np.arange(r + 1), up * (r - np.arange(r + 1))
    rows, rhs = [], []
    for i in range(1, r + 1):
        rows += [right[i] - math.exp(eps) * wrong[i - 1],
                 right[i] - math.exp(-eps) * wrong[i - 1], right[i]]
        rhs += [m * delta, m * (1 - math.exp(-eps) * (1 - delta)), m]
    res = optimize.linprog(-up[v], A_ub=np.array(rows), b_ub=rhs,
                           A_eq=np.ones((1, r + 1)), b_eq=[1.0], bounds=(0, None),
                           method="highs")
    assert res.status == 0
    return -res.fun


@pytest.mark.parametrize("r, m", [(6, 6), (12, 40), (30, 1000)])
@pytest.mark.parametrize("eps, delta", [(0.5, 0.0), (1.0, 0.0), (1.0, 1e-3), (2.0, 0.02)])
def test_the_recursion_is_the_relaxations_exact_optimum(r, m, eps, delta):
    for v in range(1, r + 1):
        exact = relaxation_optimum(r, v, eps, delta, m)
        got = fdp_p_value(r, v, eps, delta=delta, canaries=m)
        assert got >= exact - 1e-9  # never below: a valid bound
        assert got == pytest.approx(exact, rel=1e-6, abs=1e-9)  # and nothing looser


def rr_tail(m, r, eps, delta):
    """``P[right >= v]`` for ``v = 0..r`` by enumeration: each of ``m`` canaries, secret
    ``s`` uniform in {0, 1}, goes through the mechanism whose trade-off is exactly that of
    ``(eps, delta)``-DP (reveal ``s`` with probability ``delta``, else randomized response
    at ``eps``); the guesser makes exactly ``r`` guesses, the revealed canaries first
    (always right), then the first others, guessing the response. Every secret vector
    and every output is enumerated."""
    q = 1 / (1 + math.exp(-eps))
    # outputs per canary: 0 revealed "0", 1 revealed "1", 2 response "0", 3 response "1"
    law = {0: (delta, 0.0, (1 - delta) * q, (1 - delta) * (1 - q)),
           1: (0.0, delta, (1 - delta) * (1 - q), (1 - delta) * q)}
    counts = np.zeros(r + 1)
    for secrets in itertools.product((0, 1), repeat=m):
        for out in itertools.product(range(4), repeat=m):
            p = 0.5 ** m * math.prod(law[s][o] for s, o in zip(secrets, out))
            if p == 0.0:
                continue
            order = sorted(range(m), key=lambda t: (out[t] >= 2, t))[:r]
            counts[sum(out[t] % 2 == secrets[t] for t in order)] += p
    assert counts.sum() == pytest.approx(1.0)
    return np.cumsum(counts[::-1])[::-1]


@pytest.mark.parametrize("m, r", [(4, 2), (5, 3), (6, 6), (6, 4)])
@pytest.mark.parametrize("eps, delta", [(0.5, 0.0), (1.5, 0.0), (1.0, 0.05), (0.3, 0.15)])
def test_both_bounds_are_at_least_the_exact_tail_of_the_tightest_mechanism(m, r, eps, delta):
    tail = rr_tail(m, r, eps, delta)
    for v in range(r + 1):
        fdp = fdp_p_value(r, v, eps, delta=delta, canaries=m)
        snj = one_run_p_value(r, v, eps, delta=delta, canaries=m)
        assert fdp >= tail[v] - 1e-12 and snj >= tail[v] - 1e-12, (v, fdp, snj, tail[v])
    if delta == 0:  # randomized response: the binomial tail, which Steinke et al. attain
        q = 1 / (1 + math.exp(-eps))
        assert tail == pytest.approx(stats.binom.sf(np.arange(r + 1) - 1, r, q))
        assert all(one_run_p_value(r, v, eps) == pytest.approx(tail[v]) for v in range(r + 1))
    # the revealed canaries beyond the r guessed make the tail grow with m (as both
    # bounds' delta terms do): a bound blind to m would be below it
    if delta > 0 and m > r:
        assert tail[r] > (delta + (1 - delta) / (1 + math.exp(-eps))) ** r + 1e-9


def test_at_delta_zero_the_f_dp_bound_never_beats_the_exact_binomial():
    m = 16 * 16384
    for r, v, eps in ((10, 10, 1.0), (100, 90, 1.0), (3000, 2400, 1.0), (500, 300, 0.2)):
        q = 1 / (1 + math.exp(-eps))
        binom = stats.binom.sf(v - 1, r, q)
        assert fdp_p_value(r, v, eps, canaries=m) >= binom * (1 - 1e-8)
        assert fdp_eps_lower_bound(r, v, canaries=m) <= one_run_eps_lower_bound(r, v) + 1e-9
    # so the audit's bound at delta = 0 is the binomial one, unchanged
    assert one_run_eps_lower_bound(100, 90, canaries=m) == one_run_eps_lower_bound(100, 90)


def test_edges_and_monotonicity():
    m = 1000
    assert fdp_p_value(0, 0, 1.0, canaries=m) == 1.0
    assert fdp_p_value(20, 0, 1.0, delta=1e-3, canaries=m) == 1.0
    assert fdp_eps_lower_bound(0, 0, canaries=m) == 0.0
    assert fdp_eps_lower_bound(20, 0, delta=1e-3, canaries=m) == 0.0
    # all right, delta = 0: the relaxation is exact (tail q^r, Clopper-Pearson's bound)
    assert fdp_p_value(20, 20, 1.0, canaries=m) == pytest.approx(
        (1 / (1 + math.exp(-1.0))) ** 20, rel=1e-8)
    assert fdp_eps_lower_bound(25, 25, canaries=m) == pytest.approx(
        one_run_eps_lower_bound(25, 25), rel=1e-8)
    # a huge epsilon refutes nothing (and does not overflow)
    assert fdp_p_value(20, 20, 800.0, delta=1e-3, canaries=m) == 1.0
    for delta in (0.0, 1e-4, 1e-2):
        p = [fdp_p_value(60, v, 1.0, delta=delta, canaries=m) for v in range(61)]
        assert all(a >= b for a, b in zip(p, p[1:]))  # decreasing in v
        e = [fdp_p_value(60, 50, x, delta=delta, canaries=m) for x in (0.2, 0.5, 1.0, 2.0)]
        assert all(a <= b for a, b in zip(e, e[1:]))  # increasing in epsilon
    d = [fdp_p_value(60, 50, 1.0, delta=x, canaries=m) for x in (0.0, 1e-5, 1e-3, 1e-2)]
    assert all(a <= b for a, b in zip(d, d[1:]))  # increasing in delta
    g = [fdp_p_value(60, 50, 1.0, delta=1e-4, canaries=x) for x in (60, 600, 6000, 60000)]
    assert all(a <= b for a, b in zip(g, g[1:]))  # and in the canaries (the m delta term)
    assert g[0] < g[-1]
    # the bound is where the tail reaches alpha
    for r, v, delta in ((100, 95, 1e-5), (300, 240, 1e-4), (30, 30, 1e-3)):
        eps = fdp_eps_lower_bound(r, v, delta=delta, canaries=10 * r)
        assert fdp_p_value(r, v, eps, delta=delta, canaries=10 * r) == pytest.approx(
            0.05, rel=1e-4)


def test_the_audits_bound_is_the_larger_of_the_two_with_delta():
    for r, v, m, delta in ((10, 10, 262144, 1e-6), (100, 95, 1000, 1e-5),
                           (1000, 600, 262144, 1e-6), (300, 280, 81920, 1e-6)):
        def excess(e, r=r, v=v, m=m, delta=delta):  # Steinke et al.'s p-value alone
            return one_run_p_value(r, v, e, delta=delta, canaries=m) - 0.05

        snj_alone = 0.0 if excess(0.0) > 0 else optimize.brentq(excess, 0.0, 50.0)
        fdp = fdp_eps_lower_bound(r, v, delta=delta, canaries=m)
        both = one_run_eps_lower_bound(r, v, delta=delta, canaries=m)
        assert both == pytest.approx(max(snj_alone, fdp), abs=1e-8)
    # where Steinke et al.'s delta term (2 m delta = 0.52) dominates: ten right of ten
    assert one_run_p_value(10, 10, 0.8, delta=1e-6, canaries=262144) > 0.1
    assert one_run_eps_lower_bound(10, 10, delta=1e-6, canaries=262144) > 0.79


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="canaries"):
        fdp_p_value(10, 5, 1.0, canaries=9)
    with pytest.raises(ValueError, match="canaries"):
        fdp_eps_lower_bound(10, 5, delta=1e-3, canaries=0)
    with pytest.raises(ValueError, match="canaries"):
        one_run_eps_lower_bound(10, 5, delta=1e-3, canaries=3)
    with pytest.raises(ValueError, match="correct"):
        fdp_p_value(10, 11, 1.0, canaries=20)
    with pytest.raises(ValueError, match="epsilon"):
        fdp_p_value(10, 5, -1.0, canaries=20)
    with pytest.raises(ValueError, match="delta"):
        fdp_eps_lower_bound(10, 5, delta=1.5, canaries=20)
    with pytest.raises(ValueError, match="confidence"):
        fdp_eps_lower_bound(10, 5, confidence=1.0, canaries=20)


def simulate_refutations(eps_true, claim, delta, m, r, reps, seed):
    """How often the audit's bound refutes ``claim`` on the mechanism of :func:`rr_tail` at
    ``(eps_true, delta)`` with ``m`` canaries and ``r`` guesses (revealed ones first)."""
    rng = np.random.default_rng(seed)
    q = 1 / (1 + math.exp(-eps_true))
    revealed = rng.binomial(m, delta, size=reps)
    sure = np.minimum(revealed, r)
    right = sure + rng.binomial(r - sure, q)

    @functools.cache
    def refutes(v):
        return one_run_eps_lower_bound(r, int(v), delta=delta, canaries=m) > claim

    return float(np.mean([refutes(v) for v in right]))


@pytest.mark.parametrize("delta, m, r", [(1e-3, 1000, 100), (2e-3, 2000, 200)])
def test_the_tightest_mechanism_at_the_claim_is_refuted_at_most_alpha_of_the_time(delta, m, r):
    """The (eps, delta)-DP mechanism that reveals about ``m delta`` secrets, at the claim,
    is refuted at most 5% of the time (up to three standard errors of 4000 games); the
    same mechanism at eps = 3 is refuted."""
    rate = simulate_refutations(1.0, 1.0, delta, m, r, reps=4000, seed=7)
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 4000)
    assert simulate_refutations(3.0, 1.0, delta, m, r, reps=400, seed=8) > 0.9


@pytest.mark.parametrize("eps_true, r", [(0.8, 300), (1.0, 100)])
def test_randomized_response_below_the_claim_is_refuted_at_most_alpha_by_the_f_dp_bound(
        eps_true, r):
    """Randomized response at ``eps_true <= 1`` claimed as 1-DP: the f-DP bound alone
    refutes it at most 5% of the time (exactly: summed over the binomial law)."""
    q = 1 / (1 + math.exp(-eps_true))
    refuting = [v for v in range(r + 1)
                if fdp_eps_lower_bound(r, v, canaries=16 * 16384) > 1.0]
    rate = sum(stats.binom.pmf(v, r, q) for v in refuting)
    assert rate <= 0.05
    assert refuting and stats.binom.sf(refuting[0] - 1, r, 1 / (1 + math.exp(-2.0))) > 0.9
