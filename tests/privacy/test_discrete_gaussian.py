"""Tests of the exact discrete Gaussian (agents.privacy.discrete) and its strategy.

* :func:`bernoulli_exp_big` (``gamma > 1``): its probability is enumerated EXACTLY over
  every outcome of its uniform integer draws and must bracket ``exp(-gamma)``.
* :func:`discrete_gaussian`: chi-square goodness of fit against the exact pmf (seeded,
  so deterministic), a wrong ``sigma`` is rejected, the sample variance matches the
  variance computed from the pmf within 4 standard errors (from the pmf's 4th moment),
  and every random choice is an integer draw.
* Accounting: the zCDP route agrees with the continuous minimum of the CKS conversion
  and upper-bounds dp-accounting's exact 1-D discrete Gaussian PLD (within 20%).
* :class:`DiscreteGaussianNoise`: the grid's squared-sensitivity bound on adversarial
  pairs, the calibration (smallest integer sigma), refusals, exact integer releases of
  the counters with the stated variance.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import math
from fractions import Fraction

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import privacy_loss_distribution as pld
from scipy import optimize, stats
from scripted_rng import enumerate_bernoulli

from agents.privacy import accountant_epsilon, discrete_gaussian_sigma, make_counter
from agents.privacy.calibration import (
    ACCOUNTING_CALLS,
    discrete_gaussian_rho,
    gaussian_sigma,
)
from agents.privacy.discrete import (
    MAX_GAUSS_SIGMA,
    OsRandom,
    bernoulli_exp_big,
    discrete_gaussian,
    discrete_gaussian_variance,
)
from agents.privacy.noise import DiscreteGaussianNoise, noise_strategy


# ------------------------------------------------------------------ the samplers
def _enumerate_big(num: int, den: int, depth: int) -> tuple[Fraction, Fraction]:
    """(P(output 1 within ``depth`` draws), P(undecided)) of ``bernoulli_exp_big``."""
    return enumerate_bernoulli(lambda rng: bernoulli_exp_big(rng, np.array([num]), den), depth)


@pytest.mark.parametrize("num,den", [(3, 2), (5, 2), (7, 3), (2, 1)])
def test_bernoulli_exp_big_probability_brackets_exp_minus_gamma(num, den):
    p_one, undecided = _enumerate_big(num, den, depth=9)
    assert undecided < Fraction(1, 50)  # the enumeration decides almost everything
    assert float(p_one) <= math.exp(-num / den) <= float(p_one + undecided) + 1e-15


def test_bernoulli_exp_big_frequencies_for_large_gamma():
    rng = np.random.default_rng(0)
    for num, den in [(3, 2), (40, 7)]:
        hits = bernoulli_exp_big(rng, np.full(400_000, num, dtype=np.int64), den).sum()
        p = math.exp(-num / den)
        assert abs(hits - 400_000 * p) < 5 * math.sqrt(400_000 * p * (1 - p)) + 1
    # Python-integer path (squares beyond int64): exp(-huge) is never drawn
    big = np.array([10**30] * 100, dtype=object)
    assert not bernoulli_exp_big(rng, big, 3).any()
    assert bernoulli_exp_big(rng, np.array([0, 0], dtype=object), 5).all()


def _log_weights(sigma: int, ys: np.ndarray) -> np.ndarray:
    return -(ys.astype(float) ** 2) / (2.0 * sigma * sigma)


def _pmf(sigma: int, ys: np.ndarray) -> np.ndarray:
    lim = 60 * sigma
    allys = np.arange(-lim, lim + 1)
    norm = np.exp(_log_weights(sigma, allys)).sum()
    return np.exp(_log_weights(sigma, ys)) / norm


def _chi2_pvalue(samples: np.ndarray, sigma: float) -> float:
    lim = int(12 * sigma) + 2
    ys = np.arange(-lim, lim + 1)
    expected = _pmf(sigma, ys) * samples.size
    keep = expected >= 20
    edges = ys[keep]
    counts = np.bincount(samples[np.abs(samples) <= lim] + lim, minlength=2 * lim + 1)
    observed = counts[keep].astype(float)
    obs = np.append(observed, samples.size - observed.sum())
    exp = np.append(expected[keep], samples.size - expected[keep].sum())
    return float(stats.chisquare(obs, exp).pvalue) if edges.size else 0.0


@pytest.mark.parametrize("sigma", [1, 2, 5, 30])
def test_discrete_gaussian_fits_its_pmf(sigma):
    y = discrete_gaussian(np.random.default_rng(sigma), sigma, 200_000)
    assert y.dtype == np.int64 and y.shape == (200_000,)
    assert _chi2_pvalue(y, sigma) > 1e-3


def test_a_wrong_sigma_is_rejected_by_the_fit():
    """The chi-square test has power: draws of sigma 5 do not fit sigma 5.2."""
    y = discrete_gaussian(np.random.default_rng(5), 5, 200_000)
    assert _chi2_pvalue(y, 5.2) < 1e-6


def _exact_moments(sigma: int) -> tuple[float, float]:
    """(variance, fourth moment) from the pmf, summed in Fractions' float images."""
    lim = 60 * sigma
    ys = np.arange(-lim, lim + 1, dtype=float)
    w = np.exp(-ys**2 / (2.0 * sigma**2))
    w /= w.sum()
    return float(np.sum(w * ys**2)), float(np.sum(w * ys**4))


@pytest.mark.parametrize("sigma", [1, 3, 40])
def test_sample_variance_matches_the_pmf_within_four_standard_errors(sigma):
    n = 400_000
    var, m4 = _exact_moments(sigma)
    assert discrete_gaussian_variance(sigma) == pytest.approx(var, rel=1e-12)
    y = discrete_gaussian(np.random.default_rng(100 + sigma), sigma, n).astype(float)
    se = math.sqrt((m4 - var**2) / n)  # standard error of the mean of y^2
    assert abs(np.mean(y**2) - var) < 4 * se
    assert abs(np.mean(y)) < 4 * math.sqrt(var / n)


def test_variance_formula_agrees_with_poisson_summation():
    """``Var = sigma^2 (1 - 4 pi^2 sigma^2 S1 / S0)``, ``S_j = sum_k k^{2j}
    e^{-2 pi^2 sigma^2 k^2}`` (Poisson summation; independent of the direct sum)."""
    for sigma in (1, 2):
        ks = np.arange(-6, 7, dtype=float)
        e = np.exp(-2 * math.pi**2 * sigma**2 * ks**2)
        ref = sigma**2 * (1 - 4 * math.pi**2 * sigma**2 * np.sum(ks**2 * e) / np.sum(e))
        assert discrete_gaussian_variance(sigma) == pytest.approx(ref, rel=1e-13)
    assert discrete_gaussian_variance(1) < 1.0  # strictly below sigma^2
    # the switch to sigma^2 above 64 is seamless
    assert discrete_gaussian_variance(65) == 65.0**2
    assert _exact_moments(65)[0] == pytest.approx(65.0**2, rel=1e-12)


class _Recording:
    """A generator that records every bound it is asked for and checks it is integral."""

    def __init__(self, seed: int) -> None:
        self.rng, self.highs = np.random.default_rng(seed), []

    def integers(self, low, high, size=None):
        high_arr = np.asarray(high)
        assert low == 0 and high_arr.dtype.kind in "iu", high_arr.dtype
        self.highs.append(high_arr)
        out = self.rng.integers(low, high, size=size)
        assert out.dtype == np.int64
        return out


def test_every_random_choice_is_an_integer_draw_and_output_is_int64():
    src = _Recording(0)
    y = discrete_gaussian(src, 7, 5000)
    assert y.dtype == np.int64 and src.highs
    # the same draws from the same generator state: bit-for-bit reproducible
    again = discrete_gaussian(np.random.default_rng(0), 7, 5000)
    np.testing.assert_array_equal(y, again)


@pytest.mark.parametrize("fn", ["bernoulli_exp", "bernoulli_exp_big", "_laplace_candidates",
                                "discrete_gaussian"])
def test_the_data_path_has_no_floating_point_operation(fn):
    """The samplers' code: no true division, no float literal, no float / exp / log /
    sqrt call (the docstrings may name them)."""
    from agents.privacy import discrete

    tree = ast.parse(inspect.getsource(getattr(discrete, fn)))
    for node in ast.walk(tree):
        assert not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Pow))
                    and not _int_pow(node)), ast.unparse(node)
        assert not (isinstance(node, ast.Constant) and isinstance(node.value, float))
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func).rsplit(".", 1)[-1]
            assert name not in ("float", "exp", "expm1", "log", "log1p", "sqrt", "random",
                                "normal", "standard_normal", "laplace", "uniform"), name


def _int_pow(node) -> bool:
    """``2**31``-style integer constants are fine."""
    return (isinstance(node.op, ast.Pow) and isinstance(node.left, ast.Constant)
            and isinstance(node.right, ast.Constant) and isinstance(node.left.value, int)
            and isinstance(node.right.value, int))


def test_sigma_is_checked_and_the_os_generator_works():
    for bad in (0, -1, 2.5, MAX_GAUSS_SIGMA + 1, True):
        with pytest.raises(ValueError, match="sigma"):
            discrete_gaussian(np.random.default_rng(0), bad, 3)
    assert discrete_gaussian(np.random.default_rng(0), 3, 0).shape == (0,)
    assert _chi2_pvalue(discrete_gaussian(OsRandom(), 3, 50_000), 3) > 1e-6


def test_extreme_sigma_is_sampled():
    y = discrete_gaussian(np.random.default_rng(1), MAX_GAUSS_SIGMA, 20_000)
    assert np.std(y) == pytest.approx(MAX_GAUSS_SIGMA, rel=0.03)


# ------------------------------------------------------------------ accounting
def _cks_continuous(rho: float, delta: float) -> float:
    """``min_{alpha > 1} alpha rho + log(1 - 1/alpha) - (log delta + log alpha)/(alpha-1)``
    (Canonne-Kamath-Steinke 2020, Prop. 12 on the zCDP curve), minimised by scipy."""
    def f(u):
        a = 1.0 + math.exp(u)
        return a * rho + math.log1p(-1 / a) - (math.log(delta) + math.log(a)) / (a - 1)
    return float(optimize.minimize_scalar(f, bounds=(-8, 16), method="bounded").fun)


@pytest.mark.parametrize("sens,sigma", [(1, 2), (1, 20), (3, 5), (2, 200)])
@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_one_dimensional_epsilon_is_a_valid_and_tight_bound(sens, sigma, delta):
    event = dp_event.ZCDpEvent(discrete_gaussian_rho(sens * sens, sigma))
    ours = accountant_epsilon(event, delta)
    # the zCDP curve's conversion, minimised continuously: the order grid costs < 1e-4
    cont = _cks_continuous(sens**2 / (2 * sigma**2), delta)
    assert cont <= ours <= cont * (1 + 1e-4)
    # dp-accounting's PLD of the 1-D discrete Gaussian (near exact): ours bounds it, and
    # the zCDP route costs at most 20% of epsilon (4-13% measured on these cases)
    exact = pld.from_discrete_gaussian_mechanism(
        sigma, sensitivity=sens, value_discretization_interval=1e-4).get_epsilon_for_delta(delta)
    assert exact <= ours <= 1.2 * exact


def test_zcdp_route_composes_additively_and_is_counted():
    rho = discrete_gaussian_rho(5, 30)
    before = ACCOUNTING_CALLS["zcdp"]
    composed = accountant_epsilon(dp_event.SelfComposedDpEvent(dp_event.ZCDpEvent(rho), 7), 1e-6)
    assert accountant_epsilon(dp_event.ZCDpEvent(7 * rho), 1e-6) == pytest.approx(composed,
                                                                                  rel=1e-12)
    assert ACCOUNTING_CALLS["zcdp"] > before
    assert discrete_gaussian_rho(5, 30) >= 5 / (2 * 30**2)  # rounded up


@pytest.mark.parametrize("k2,eps,delta", [(1, 1.0, 1e-5), (12_885_295_106, 0.5, 1e-6),
                                          (400, 1e3, 1e-5), (10**10, 1e6, 1e-6)])
def test_calibration_finds_the_smallest_integer_sigma(k2, eps, delta):
    sigma = discrete_gaussian_sigma(k2, eps, delta, MAX_GAUSS_SIGMA)

    def eps_of(s):
        return accountant_epsilon(dp_event.ZCDpEvent(discrete_gaussian_rho(k2, s)), delta)

    assert eps_of(sigma) <= eps
    assert sigma == 1 or eps_of(sigma - 1) > eps
    # within a few percent of the continuous analytic Gaussian for sqrt(K2)
    assert 0.97 < sigma / gaussian_sigma(math.sqrt(k2), eps, delta) < 1.12 or sigma < 100


def test_the_search_finds_what_enumeration_finds_on_any_non_increasing_epsilon():
    """The calibration's search returns the smallest passing integer whatever the shape:
    smooth power laws (where its interpolation is nearly exact), flat stretches and
    jumps (where it is wrong and must halve), an epsilon that is infinite at 0."""
    from agents.privacy.calibration import _smallest_passing

    rng = np.random.default_rng(11)
    shapes = []
    for _ in range(40):
        c, p = 10 ** rng.uniform(-1, 6), rng.uniform(0.3, 3.0)
        shapes.append(lambda s, c=c, p=p: c / s**p)
        cuts = np.sort(rng.integers(1, 5000, size=rng.integers(1, 6)))
        shapes.append(lambda s, cuts=cuts: float(len(cuts) - np.searchsorted(cuts, s, "right")))
    for f in shapes:
        lo = int(rng.integers(0, 2000))
        hi = lo + int(rng.integers(1, 3000))
        eps = float(rng.uniform(f(hi), f(lo + 1)))
        first = next(s for s in range(lo + 1, hi + 1) if f(s) <= eps)
        e_lo = math.inf if lo == 0 else f(lo)
        if e_lo <= eps:  # not a bracket: the search's precondition does not hold
            continue
        assert _smallest_passing(f, eps, lo, e_lo, hi, f(hi)) == first


def test_calibration_refuses_what_the_sampler_cannot_draw():
    with pytest.raises(ValueError, match=r"sigma.*1000"):
        discrete_gaussian_sigma(10**8, 0.01, 1e-6, 1000)
    with pytest.raises(ValueError, match="sq_sensitivity"):
        discrete_gaussian_sigma(0, 1.0, 1e-6, 1000)
    with pytest.raises(ValueError, match="delta"):
        discrete_gaussian_sigma(4, 1.0, 0.0, 1000)


# ------------------------------------------------------------------ the strategy
def test_grid_squared_sensitivity_bounds_adversarial_pairs():
    eps, delta, sens, dim = 0.5, 1e-6, 1.0, 4
    noise = DiscreteGaussianNoise(eps, delta, sens, dim=dim).calibrate(copies=3)
    g, k2 = noise.grid, noise.grid_sensitivity
    assert g == 2.0 ** round(math.log2(g)) and g <= sens / (math.sqrt(dim) * 2**16)
    assert k2 == math.floor((sens / g + math.sqrt(dim)) ** 2)
    rng = np.random.default_rng(0)
    worst = 0
    for _ in range(3000):
        z = rng.uniform(-5, 5, dim)
        d = rng.normal(size=dim)
        d *= sens / np.linalg.norm(d)
        z = (np.floor(z / g) + 0.5 + 1e-6 * np.sign(d)) * g  # half-grid points
        diff = np.rint(z / g) - np.rint((z + d) / g)
        worst = max(worst, int(np.sum(diff.astype(np.int64) ** 2)))
    assert worst <= k2
    # the integer sigma: smallest for 3 blocks of K2, and the event says so
    assert noise.sigma == discrete_gaussian_sigma(3 * k2, eps, delta, MAX_GAUSS_SIGMA)
    assert noise.dp_event(copies=3) == dp_event.SelfComposedDpEvent(
        dp_event.ZCDpEvent(discrete_gaussian_rho(k2, noise.sigma)), 3)
    assert noise.scale == noise.sigma * g
    assert noise.variance == pytest.approx(noise.scale**2, rel=1e-15)
    checked = noise.guarantee(noise.dp_event(copies=3), "m")
    assert checked.epsilon == eps and checked.delta == delta and not checked.idealized
    assert accountant_epsilon(noise.dp_event(copies=3), delta) <= eps


def test_grid_is_coarsened_for_huge_noise_and_refined_for_tiny_noise():
    tiny = DiscreteGaussianNoise(1e6, 1e-6, 1.0, dim=2).calibrate(copies=4)
    assert tiny.sigma >= 2**16 * 0.95 and tiny.sigma <= 2**23
    huge = DiscreteGaussianNoise(1e-3, 1e-10, 1.0, dim=50).calibrate(copies=20)
    assert 2**16 <= huge.sigma <= 2**24
    assert huge.grid > 1.0 / (math.sqrt(50) * 2**16)  # coarsened: sigma stays drawable
    # a sensitivity spans at most 2^29 grid steps, however small the noise
    wild = DiscreteGaussianNoise(1e7, 1e-6, 3.0, dim=2).calibrate(copies=1)
    assert 2**28 <= 3.0 / wild.grid <= 2**29 and wild.sigma >= 100


def test_only_integer_structures_and_names_are_accepted():
    noise = DiscreteGaussianNoise(1.0, 1e-6, 1.0)
    with pytest.raises(ValueError, match="gain"):
        noise.calibrate(gain=2.0)
    with pytest.raises(ValueError, match="real coefficients"):
        make_counter("factorization", 8, 1, noise="discrete-gaussian", epsilon=1.0,
                     delta=1e-6, sensitivity=1.0)
    with pytest.raises(ValueError, match="delta"):
        noise_strategy("discrete-gaussian", 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="noise must be"):
        noise_strategy("discrete-normal", 1.0, 1e-6, 1.0)


@pytest.mark.parametrize("name", ["tree", "agarwal-singh", "honaker"])
def test_counters_release_exact_multiples_with_the_stated_variance(name):
    vals = []
    for s in range(3000):
        c = make_counter(name, 8, 1, noise="discrete-gaussian", epsilon=1.0, delta=1e-5,
                         sensitivity=1.0, rng=np.random.default_rng(s))
        ys = [c.add(np.array([0.25])) for _ in range(4)]
        if name != "honaker":
            assert all(np.array_equal(y / c.grid, np.round(y / c.grid)) for y in ys)
        vals.append(ys[-1][0])
    assert not c.guarantee().idealized and c.guarantee().epsilon == 1.0
    var = c.noise_variance(4)
    # 4 standard errors of a Gaussian-like sample variance (sqrt(2/n) relative)
    assert np.var(vals) == pytest.approx(var, rel=4 * math.sqrt(2 / len(vals)))
    assert abs(np.mean(vals) - 1.0) < 4 * math.sqrt(var / len(vals))
    unit = {"tree": 1.0, "agarwal-singh": 3.0, "honaker": 4 / 7}[name]
    assert var == pytest.approx(unit * c.noise_strategy.variance)


def test_same_seed_same_releases_and_secure_ignores_the_seed():
    def run(seed, **kw):
        c = make_counter("tree", 16, 3, noise="discrete-gaussian", epsilon=1.0, delta=1e-6,
                         sensitivity=1.0, rng=np.random.default_rng(seed), **kw)
        return np.array([c.add(np.full(3, 0.3)) for _ in range(16)])

    np.testing.assert_array_equal(run(4), run(4))
    assert not np.array_equal(run(4), run(5))
    assert not np.array_equal(run(4, secure=True), run(4, secure=True))
    s = noise_strategy("discrete-gaussian", 1.0, 1e-6, 1.0, secure=True)
    assert dataclasses.replace(s).secure


def test_paper_calibration_copy_accounts_the_same_mechanism():
    """A copy with another sensitivity keeps the grid and sigma: only K2 changes."""
    a = DiscreteGaussianNoise(1.0, 1e-6, 1.0, dim=3).calibrate(copies=5)
    b = dataclasses.replace(a, sensitivity=2.0)
    assert b.grid == a.grid and b.sigma == a.sigma
    assert b.grid_sensitivity == math.floor((2.0 / a.grid + math.sqrt(3)) ** 2)
    assert accountant_epsilon(b.dp_event(copies=5), 1e-6) > 1.5


def test_gaussian_agents_take_secure_and_factorization_refuses_it():
    from agents import make
    from dp_online_envs import build_env

    problem = build_env("DPFullInfo-Experts-v0", horizon=8, n_arms=3).get_wrapper_attr("problem")
    agent = make("private-ftrl", problem, epsilon=1.0, delta=1e-5, secure=True, seed=0)
    counter = agent._make_counter(np.random.default_rng(0))
    assert counter.noise_strategy.secure and counter.noise == "discrete-gaussian"
    assert not agent.privacy.idealized
    with pytest.raises(ValueError, match="secure=True needs an exact noise"):
        make("private-ftrl", problem, epsilon=1.0, delta=1e-5, secure=True,
             counter="factorization")
