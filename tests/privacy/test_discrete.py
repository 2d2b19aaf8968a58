"""Tests of the exact samplers (agents.privacy.discrete) and the discrete Laplace strategy.

* :func:`bernoulli_exp`: its probability is computed EXACTLY by enumerating every
  outcome of its uniform integer draws (a scripted generator), as a Fraction, and
  compared with the truncated series of ``exp(-gamma)``.
* :func:`discrete_laplace`: chi-square goodness of fit against the exact pmf (seeded,
  so deterministic), for numpy's generator and for the OS generator.
* :class:`DiscreteLaplaceNoise`: the grid's sensitivity bound on adversarial pairs,
  the calibration and its ``dp_accounting`` event, and exact integer releases.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld
from scipy import stats
from scripted_rng import enumerate_bernoulli

from agents.privacy import accountant_epsilon, make_counter
from agents.privacy.discrete import (
    OsRandom,
    bernoulli_exp,
    discrete_laplace,
    discrete_laplace_variance,
)
from agents.privacy.noise import DiscreteLaplaceNoise, noise_strategy


def _enumerate(num: int, den: int, depth: int) -> tuple[Fraction, Fraction]:
    """(P(output 1 within ``depth`` draws), P(not decided within ``depth`` draws))."""
    return enumerate_bernoulli(
        lambda rng: bernoulli_exp(rng, np.array([num]), np.array([den])), depth)


@pytest.mark.parametrize("num,den", [(0, 1), (1, 3), (2, 3), (1, 1), (2, 5), (4, 4)])
def test_bernoulli_exp_probability_is_exactly_the_series(num, den):
    depth = 6
    p_one, undecided = _enumerate(num, den, depth)
    g = Fraction(num, den)
    # stop at K = k with probability g^{k-1}/(k-1)! - g^k/k!; output 1 iff k is odd
    series = sum((g ** (k - 1) / math.factorial(k - 1) - g**k / math.factorial(k)
                  for k in range(1, depth + 1, 2)), Fraction(0))
    assert p_one == series
    assert undecided == g**depth / math.factorial(depth)
    assert float(p_one) <= math.exp(-num / den) <= float(p_one + undecided) + 1e-15


def _pmf(t: int, ys: np.ndarray) -> np.ndarray:
    q = math.exp(-1.0 / t)
    return (1 - q) / (1 + q) * q ** np.abs(ys)


def _chi2_pvalue(samples: np.ndarray, t: int) -> float:
    lim = int(np.ceil(t * 12))  # tail mass beyond is e^-12
    ys = np.arange(-lim, lim + 1)
    expected = _pmf(t, ys) * samples.size
    keep = expected >= 20
    edges = ys[keep]
    observed = np.array([np.sum(samples == y) for y in edges], dtype=float)
    obs = np.append(observed, samples.size - observed.sum())
    exp = np.append(expected[keep], samples.size - expected[keep].sum())
    return float(stats.chisquare(obs, exp).pvalue)


@pytest.mark.parametrize("t", [1, 3, 20])
def test_discrete_laplace_fits_its_pmf(t):
    rng = np.random.default_rng(t)
    y = discrete_laplace(rng, t, 200_000)
    assert y.dtype == np.int64 and y.shape == (200_000,)
    assert _chi2_pvalue(y, t) > 1e-3
    assert y.var() == pytest.approx(discrete_laplace_variance(t), rel=0.03)


def test_a_wrong_scale_is_rejected_by_the_fit():
    """The chi-square test has power: draws of scale 3 do not fit scale 3.2."""
    y = discrete_laplace(np.random.default_rng(3), 3, 200_000)
    lim = 40
    ys = np.arange(-lim, lim + 1)
    q = math.exp(-1 / 3.2)
    expected = (1 - q) / (1 + q) * q ** np.abs(ys) * y.size
    keep = expected >= 20
    obs = np.array([np.sum(y == v) for v in ys[keep]], dtype=float)
    p = stats.chisquare(np.append(obs, y.size - obs.sum()),
                        np.append(expected[keep], y.size - expected[keep].sum())).pvalue
    assert p < 1e-6


def test_the_os_generator_is_uniform_and_feeds_the_sampler():
    src = OsRandom()
    u = src.integers(0, 7, size=70_000)
    assert u.min() == 0 and u.max() == 6
    assert stats.chisquare(np.bincount(u, minlength=7)).pvalue > 1e-6
    assert _chi2_pvalue(discrete_laplace(src, 3, 50_000), 3) > 1e-6
    with pytest.raises(ValueError, match="low=0"):
        src.integers(1, 5)


def test_grid_sensitivity_bounds_adversarial_pairs():
    eps, sens, dim = 0.5, 1.0, 4
    noise = DiscreteLaplaceNoise(eps, sens, dim=dim).calibrate(copies=3)
    g, k1 = noise.grid, noise.grid_sensitivity
    assert g == 2.0 ** round(math.log2(g)) and g <= sens / (dim * 2**16)
    assert k1 == math.floor(sens / g) + dim
    rng = np.random.default_rng(0)
    worst = 0
    for _ in range(2000):
        z = rng.uniform(-5, 5, dim)
        d = rng.dirichlet(np.ones(dim)) * sens * rng.choice([-1, 1], dim)
        # push both ends onto half-grid points, where rounding moves the most
        z = (np.floor(z / g) + 0.5 + 1e-6) * g
        zp = z + d
        diff = np.abs(np.rint(z / g) - np.rint(zp / g)).sum()
        worst = max(worst, diff)
    assert worst <= k1
    # t = ceil(3 k1 / eps) exactly; epsilon = 3 k1 / t <= eps, and the accountant agrees
    assert noise.t == math.ceil(Fraction(3 * k1) / Fraction(eps))
    event = noise.dp_event(copies=3)
    assert accountant_epsilon(event, 0.0) == pytest.approx(3 * k1 / noise.t, rel=1e-12)
    assert 3 * k1 / noise.t <= eps
    one = pld.from_discrete_laplace_mechanism(1.0 / noise.t, sensitivity=k1,
                                              value_discretization_interval=1e-4)
    assert one.self_compose(3).get_epsilon_for_delta(1e-12) <= eps * (1 + 1e-3)


def test_counters_release_exact_integer_multiples_of_the_grid():
    for name in ("tree", "agarwal-singh", "honaker"):
        c = make_counter(name, 16, 3, noise="discrete-laplace", epsilon=1.0, sensitivity=1.0,
                         rng=np.random.default_rng(0))
        assert c.grid is not None and not c.guarantee().idealized
        exact = np.zeros(3)
        z = np.array([0.1, 1 / 3, -0.7])
        for t in range(1, 17):
            y = c.add(z)
            exact += np.rint(z / c.grid) * c.grid
            if name != "honaker" or t == 1:  # Honaker post-processes the exact nodes
                assert np.array_equal(y / c.grid, np.round(y / c.grid))
        no = make_counter(name, 16, 3, noise=None)
        assert np.allclose([no.add(np.rint(z / c.grid) * c.grid) for _ in range(16)][-1], exact)


@pytest.mark.parametrize("name", ["tree", "agarwal-singh", "honaker"])
def test_counter_release_has_the_stated_mean_and_variance(name):
    """Honaker's release is built from the integer noisy nodes: its variance must still
    be ``sum_j v_j`` draws (at t = 4 only the level-2 estimate: v_2 = 4/7)."""
    vals = []
    for s in range(3000):
        c = make_counter(name, 8, 1, noise="discrete-laplace", epsilon=1.0,
                         sensitivity=1.0, rng=np.random.default_rng(s))
        vals.append([c.add(np.array([0.25])) for _ in range(4)][-1][0])
    assert np.var(vals) == pytest.approx(c.noise_variance(4), rel=0.08)
    assert abs(np.mean(vals) - 1.0) < 4 * math.sqrt(c.noise_variance(4) / len(vals))
    unit = {"tree": 1.0, "agarwal-singh": 3.0, "honaker": 4 / 7}[name]
    assert c.noise_variance(4) == pytest.approx(unit * c.noise_strategy.variance)


def test_too_large_inputs_are_refused_not_rounded_inexactly():
    c = make_counter("tree", 4, 1, noise="discrete-laplace", epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="too large"):
        c.add(np.array([1e30]))


def test_secure_strategy_draws_from_the_os():
    a = noise_strategy("discrete-laplace", 1.0, None, 1.0, secure=True).calibrate()
    x = a.draw_int(np.random.default_rng(0), 1000)
    y = a.draw_int(np.random.default_rng(0), 1000)
    assert not np.array_equal(x, y)  # the seeded generator is ignored
    with pytest.raises(ValueError, match="secure"):
        noise_strategy("laplace", 1.0, None, 1.0, secure=True)


def _assert_minimal_safe_scale(ns, epsilon: float) -> None:
    """``t`` is the SMALLEST integer with ``copies k1 / t <= epsilon`` (exact fractions):
    rounded up (the safe way: never less noise than the budget needs), and by no more
    than one step."""
    total = Fraction(ns.copies * ns.grid_sensitivity)
    assert total / ns.t <= Fraction(epsilon), f"t={ns.t} under-noises: {total / ns.t} > {epsilon}"
    assert total / (ns.t - 1) > Fraction(epsilon), f"t={ns.t} is not the smallest safe scale"
    assert ns.variance == discrete_laplace_variance(ns.t) * ns.grid**2


#: Budgets where ``copies k1 / epsilon`` is NOT an integer (rounding down would differ).
_ODD_BUDGETS = [0.3, 0.7, 1.3, 2.9, 0.1 + 0.2]


@pytest.mark.parametrize("epsilon", _ODD_BUDGETS)
@pytest.mark.parametrize("copies, dim, secure", [(1, 1, False), (3, 4, False), (5, 2, True)])
def test_every_calibrated_discrete_laplace_scale_is_rounded_up(epsilon, copies, dim, secure):
    ns = DiscreteLaplaceNoise(epsilon, 1.0, dim=dim, secure=secure).calibrate(copies=copies)
    assert Fraction(copies * ns.grid_sensitivity) / Fraction(epsilon) != ns.t  # not exact
    _assert_minimal_safe_scale(ns, epsilon)


@pytest.mark.parametrize("epsilon", _ODD_BUDGETS)
def test_learners_and_counters_get_the_safe_scale(epsilon):
    """The same check on the strategies the private bandit learners and the counters
    build for themselves."""
    from agents import make
    from dp_online_envs import build_env

    problem = build_env("DPBandit-MAB-v0", horizon=50).unwrapped.problem
    for name in ("private-bandit", "private-batched-htinf"):
        _assert_minimal_safe_scale(make(name, problem, epsilon=epsilon).noise_strategy, epsilon)
    for name in ("tree", "agarwal-singh", "honaker"):
        c = make_counter(name, 16, 3, noise="discrete-laplace", epsilon=epsilon,
                         sensitivity=1.0, rng=np.random.default_rng(0))
        _assert_minimal_safe_scale(c.noise_strategy, epsilon)


@pytest.mark.parametrize("source", ["numpy", "os"])
@pytest.mark.parametrize("t", [1, 2])
def test_each_sampler_has_the_analytic_variance_at_small_scales(source, t):
    """At ``t = 1, 2`` one step of the scale changes the variance fourfold (1.84 vs
    7.83), so a sampler or a calibration off by one is caught by the variance alone."""
    rng = OsRandom() if source == "os" else np.random.default_rng(10 + t)
    y = discrete_laplace(rng, t, 100_000)
    assert y.var() == pytest.approx(discrete_laplace_variance(t), rel=0.05)
    assert discrete_laplace_variance(2) > 4 * discrete_laplace_variance(1)


@pytest.mark.parametrize("high", [2**34 + 1, 2**40 + 2**39 + 7, 2**62 + 3])
def test_the_os_generator_is_uniform_above_2_to_the_33(high):
    """The mask must cover every bit below ``high - 1``'s top bit: for ``high = 2^34 + 1``
    a mask smeared only 31 bits down leaves the low bits always zero; the high bits
    (the value's position in ``[0, high)``) must be uniform too."""
    u = OsRandom().integers(0, high, size=40_000)
    assert u.min() >= 0 and u.max() < high
    low = np.bincount(u & 255, minlength=256)  # the lowest 8 bits: 256 equal cells
    assert stats.chisquare(low).pvalue > 1e-6
    cells = (u.astype(np.float64) / high * 64).astype(int)  # 64 equal slices of [0, high)
    assert stats.chisquare(np.bincount(cells, minlength=64)).pvalue > 1e-6


@pytest.mark.parametrize("epsilon", [*_ODD_BUDGETS, 1.0, 8.0, 1e-3])
@pytest.mark.parametrize("copies, dim", [(1, 1), (3, 4), (7, 2)])
def test_the_guarantee_without_the_accountant_is_the_accountants(epsilon, copies, dim):
    """``guarantee()`` with no event checks the calibrated mechanism's exact
    ``copies k1 / t`` against the budget and states the guarantee the accountant's route
    states for the self-composed event; a mechanism above the budget is refused."""
    import dataclasses

    ns = DiscreteLaplaceNoise(epsilon, 1.0, dim=dim).calibrate(copies=copies)
    own = ns.guarantee(mechanism="m")
    assert own.delta == 0.0 and own.mechanism == "m" and not own.idealized
    assert own == ns.guarantee(ns.dp_event(copies=copies), "m")
    # one block fewer noised than the input moves: above the budget, refused
    over = dataclasses.replace(ns, copies=copies + 1)
    assert Fraction((copies + 1) * ns.grid_sensitivity, ns.t) > Fraction(epsilon)
    with pytest.raises(ValueError, match=r"above the budget epsilon="):
        over.guarantee()
    with pytest.raises(ValueError, match=r"above the budget epsilon="):
        dataclasses.replace(ns, t=ns.t // 2).guarantee()


def test_the_guarantee_without_the_accountant_needs_a_calibration():
    with pytest.raises(ValueError, match=r"calibrate\(\) first"):
        DiscreteLaplaceNoise(1.0, 1.0).guarantee()


def test_the_guarantee_without_the_accountant_imports_no_accountant():
    """The course's sample states its guarantee this way in every sandboxed game: the
    accountant's import (scipy's signal and stats) is not paid."""
    import subprocess
    import sys

    code = ("import sys\nfrom agents.privacy import DiscreteLaplaceNoise\n"
            "g = DiscreteLaplaceNoise(1.0, 1.0).calibrate().guarantee(mechanism='m')\n"
            "print(g.epsilon <= 1.0, 'dp_accounting' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "False"]


#: The learners whose every release is one exact discrete Laplace draw on a scalar
#: (``agents.common.exact_laplace_guarantee``; ``tests/agents/test_import_cost.py`` checks
#: that building them imports no accountant).
SCALAR_LAPLACE_LEARNERS = ("private-exp2", "private-bandit", "private-batched-htinf",
                           "adap-ucb", "adap-klucb")


def test_scalar_laplace_learners_state_the_guarantee_the_accountant_confirms():
    """Their guarantee comes from the exact rational check, not the accountant: it is the
    one the accountant confirms for the same noise."""
    import gymnasium as gym

    import agents

    problem = gym.make("DPBandit-MAB-v0").get_wrapper_attr("problem")
    for name in SCALAR_LAPLACE_LEARNERS:
        for epsilon in (0.1, 1.0, 10.0):
            learner = agents.make(name, problem, epsilon=epsilon, seed=0)
            noise = learner.noise_strategy
            checked = noise.guarantee(noise.dp_event(), mechanism=learner.privacy.mechanism)
            assert (learner.privacy.epsilon, learner.privacy.delta) == (epsilon, 0.0), name
            assert learner.privacy == checked, name


@pytest.mark.parametrize("name", ["tree", "agarwal-singh", "honaker"])
def test_tree_counters_with_discrete_laplace_state_the_guarantee_the_accountant_confirms(
        name):
    """The dyadic counters check ``levels k1 / t <= epsilon`` exactly (no accountant):
    the guarantee is the one the accountant gives for the counter's event."""
    from agents.privacy.counters.base import ContinualCounter

    for horizon in (1, 7, 1000, 2**20):
        for dim in (1, 5):
            for epsilon in (0.1, 1.0, 10.0):
                counter = make_counter(name, horizon, dim, noise="discrete-laplace",
                                       epsilon=epsilon, sensitivity=2.0)
                stated = counter.guarantee()
                assert ContinualCounter.guarantee(counter) == stated  # the accountant's
                assert (stated.epsilon, stated.delta) == (epsilon, 0.0)


def test_a_tree_counter_noised_for_one_node_is_refused():
    """Noise calibrated for one node, not for the ``levels`` nodes one input moves: the
    exact check is not taken on the strategy's own ``copies``, and the guarantee is
    refused."""
    import dataclasses

    counter = make_counter("tree", 1000, 3, noise="discrete-laplace", epsilon=1.0,
                           sensitivity=1.0)
    strategy = counter.noise_strategy
    counter.noise_strategy = dataclasses.replace(strategy, step=0.0).calibrate(copies=1)
    # a tenth of the noise (levels = 10), rounded up: t * levels within levels of before
    assert counter.noise_strategy.t * counter.levels <= strategy.t + counter.levels
    with pytest.raises(ValueError, match=r"accountant reports epsilon=10\.0 .* above the "
                                         r"claimed epsilon=1\.0"):
        counter.guarantee()
