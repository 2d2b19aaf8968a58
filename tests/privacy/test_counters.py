"""Tests of agents.privacy.counters: exactness, noise variance, calibration."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.privacy import (
    COUNTERS,
    GAUSSIAN_ONLY,
    AgarwalSinghCounter,
    BinaryTreeCounter,
    BLTCounter,
    ContinualCounter,
    FactorizationCounter,
    HonakerCounter,
    accountant_epsilon,
    gaussian_sigma,
    make_counter,
)

NAMES = list(COUNTERS)
EPS, DELTA, SENS = 0.8, 1e-6, 1.5
NOISY = [(name, noise) for name in NAMES for noise in ("laplace", "gaussian")
         if not (name in GAUSSIAN_ONLY and noise == "laplace")]


def build(name, horizon, dim, noise="gaussian", seed=0):
    return make_counter(name, horizon, dim, noise=noise, epsilon=EPS, delta=DELTA,
                        sensitivity=SENS, rng=np.random.default_rng(seed))


def run(counter: ContinualCounter, stream: np.ndarray) -> np.ndarray:
    return np.array([counter.add(z) for z in stream])


# ------------------------------------------------------------------ exactness
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("horizon", [1, 2, 3, 7, 16, 37, 64, 100])
def test_noise_none_gives_exact_prefix_sums(name, horizon):
    stream = np.random.default_rng(horizon).normal(size=(horizon, 3))
    counter = build(name, horizon, 3, noise=None)
    out = run(counter, stream)
    np.testing.assert_allclose(out, np.cumsum(stream, axis=0), rtol=0, atol=1e-12)
    assert counter.t == counter.released == horizon
    assert counter.max_noise_variance() == 0.0 and counter.noise_variance(horizon) == 0.0


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(name=st.sampled_from(NAMES), horizon=st.integers(1, 70), dim=st.integers(1, 4),
       seed=st.integers(0, 2**32 - 1))
def test_exact_prefix_sums_property(name, horizon, dim, seed):
    stream = np.random.default_rng(seed).uniform(-1, 1, size=(horizon, dim))
    np.testing.assert_allclose(run(build(name, horizon, dim, noise=None), stream),
                               np.cumsum(stream, axis=0), atol=1e-12)


@pytest.mark.parametrize("name, noise", NOISY)
def test_release_is_prefix_sum_plus_data_independent_noise(name, noise):
    """Same seed, different data: the difference of releases is the exact prefix sum."""
    stream = np.random.default_rng(5).normal(size=(21, 2))
    noisy = run(build(name, 21, 2, noise, seed=9), stream)
    zero = run(build(name, 21, 2, noise, seed=9), np.zeros_like(stream))
    np.testing.assert_allclose(noisy - zero, np.cumsum(stream, axis=0), atol=1e-9)


# ------------------------------------------------------------------ noise variance
WIDE = 20_000  # one run with dim = WIDE == WIDE independent runs of a 1-d counter


@pytest.mark.parametrize("horizon", [16, 37])
@pytest.mark.parametrize("name, noise", NOISY)
def test_empirical_variance_matches_analytic(name, noise, horizon):
    counter = build(name, horizon, WIDE, noise, seed=horizon)
    out = run(counter, np.zeros((horizon, WIDE)))
    empirical = np.mean(out**2, axis=1)  # mean-zero noise: unbiased variance estimate
    analytic = np.array([counter.noise_variance(t) for t in range(1, horizon + 1)])
    # sd of a variance estimate from n draws: sigma^2 sqrt((2 + excess kurtosis) / n);
    # every noise here has excess kurtosis <= 3 (that of one Laplace draw).
    kurtosis = 3.0 if noise == "laplace" else 0.0
    tol = 5.0 * math.sqrt((2.0 + kurtosis) / WIDE)
    np.testing.assert_allclose(empirical, analytic, rtol=tol)
    assert np.mean(out[-1]) == pytest.approx(0.0, abs=5 * math.sqrt(analytic[-1] / WIDE))


def _decomposition(t: int) -> list[tuple[int, int]]:
    """The dyadic nodes ``(level j, index i)``, covering ``(i 2^j, (i+1) 2^j]``, whose
    disjoint union is ``[1, t]``: one per 1-bit of ``t``."""
    nodes, start = [], 0
    for j in reversed(range(t.bit_length())):
        if (t >> j) & 1:
            nodes.append((j, start >> j))
            start += 1 << j
    return nodes


def _noise_map(name: str, horizon: int) -> np.ndarray:
    """``M`` with ``eta = M w``, ``w`` the i.i.d. draws in units of one draw, written out
    from the papers' definitions (not from the counters' recursions):

    * tree: ``eta_t`` = sum of one draw per decomposition node of ``[1, t]``;
    * agarwal-singh: the tree's plus ``R - popcount(t)`` draws of its own;
    * honaker: node estimates ``hat_v = v_k e_v + (1 - v_k)(hat_left + hat_right)`` with
      ``v_k = 2^k / (2^(k+1) - 1)``, summed over the decomposition;
    * factorization: ``M = C``, ``C[t, s] = f_(t-s)``, ``f_j = binom(2j, j) / 4^j``;
    * blt: ``M = A C^{-1}``, ``C`` materialized from its BLT and inverted numerically.
    """
    if name == "blt":
        c = BLTCounter(horizon, 1, noise=None).params.strategy_coefficients(horizon)
        strategy = np.array([[c[t - s] if s <= t else 0.0 for s in range(horizon)]
                             for t in range(horizon)])
        return np.cumsum(np.linalg.inv(strategy), axis=0)
    if name == "factorization":
        f = [math.comb(2 * j, j) / 4.0**j for j in range(horizon)]
        return np.array([[f[t - s] if s <= t else 0.0 for s in range(horizon)]
                         for t in range(horizon)])
    nodes = sorted({nd for t in range(1, horizon + 1) for nd in _decomposition(t)})
    if name == "honaker":  # the subtrees of decomposition nodes are complete: noised too
        nodes = sorted({(k, (i << (j - k)) + r) for j, i in nodes
                        for k in range(j + 1) for r in range(1 << (j - k))})
    column = {nd: c for c, nd in enumerate(nodes)}

    def estimate(j: int, i: int) -> np.ndarray:
        e = np.zeros(len(nodes))
        e[column[(j, i)]] = 1.0
        if name != "honaker" or j == 0:
            return e
        v = 2.0**j / (2.0 ** (j + 1) - 1.0)
        return v * e + (1.0 - v) * (estimate(j - 1, 2 * i) + estimate(j - 1, 2 * i + 1))

    rows = [sum(estimate(j, i) for j, i in _decomposition(t)) for t in range(1, horizon + 1)]
    m = np.array(rows)
    if name == "agarwal-singh":
        r = max((horizon - 1).bit_length(), (horizon + 1).bit_length() - 1)
        extra = [r - bin(t).count("1") for t in range(1, horizon + 1)]
        own = np.zeros((horizon, sum(extra)))
        for t, c in enumerate(np.cumsum([0] + extra[:-1])):
            own[t, c:c + extra[t]] = 1.0
        m = np.hstack([m, own])
    return m


@pytest.mark.parametrize("name, noise", NOISY)
def test_noise_covariance_across_rounds_matches_analytic(name, noise):
    """The full T x T covariance of the released noise, not only its diagonal.

    Each counter's calibration rests on how the noise of different rounds is shared
    (tree nodes, the factor C): noise with the right per-round variance but the wrong
    correlation passes the variance test and breaks the guarantee. Every entry of the
    empirical covariance over ``WIDE`` independent coordinates must lie within 5
    standard errors (estimated from the same samples) of ``Var(draw) M M^T``.
    """
    horizon = 12
    counter = build(name, horizon, WIDE, noise, seed=3)
    out = run(counter, np.zeros((horizon, WIDE)))
    m = _noise_map(name, horizon)
    draw_var = (2.0 if noise == "laplace" else 1.0) * counter.draw_scale**2
    analytic = draw_var * m @ m.T
    np.testing.assert_allclose(np.diag(analytic),
                               [counter.noise_variance(t) for t in range(1, horizon + 1)],
                               rtol=1e-12)
    products = out[:, None, :] * out[None, :, :]  # mean-zero noise: E[products] = cov
    empirical = products.mean(axis=2)
    stderr = products.std(axis=2) / math.sqrt(WIDE)
    assert np.all(np.abs(empirical - analytic) <= 5.0 * stderr)
    assert np.abs(analytic - np.diag(np.diag(analytic))).max() > 0.2 * draw_var  # correlated


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
@pytest.mark.parametrize("horizon", [3, 5, 16, 37, 100, 1023, 1024, 4097])
def test_honaker_beats_tree(noise, horizon):
    tree, hon = build("tree", horizon, 1, noise), build("honaker", horizon, 1, noise)
    assert hon.max_noise_variance() < tree.max_noise_variance()
    for t in range(1, min(horizon, 200) + 1):
        assert hon.noise_variance(t) <= tree.noise_variance(t) + 1e-12
    if horizon >= 1024:
        assert hon.max_noise_variance() < 0.6 * tree.max_noise_variance()


def test_honaker_equals_tree_when_only_single_nodes_are_released():
    # T <= 2: every release is one node, at t = 1 a leaf, nothing to average
    for horizon in (1, 2):
        assert (build("honaker", horizon, 1).max_noise_variance()
                == build("tree", horizon, 1).max_noise_variance())


def test_honaker_node_variances_closed_form():
    hon = build("honaker", 1000, 1)
    k = np.arange(hon.levels)
    np.testing.assert_allclose(hon.node_variances, 2.0**k / (2.0 ** (k + 1) - 1), rtol=1e-14)


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
@pytest.mark.parametrize("horizon", [1, 2, 3, 8, 37, 64, 1000])
def test_agarwal_singh_identical_variance(noise, horizon):
    counter = build("agarwal-singh", horizon, 1, noise)
    variances = {counter.noise_variance(t) for t in range(1, horizon + 1)}
    assert len(variances) == 1
    assert counter.draws == max(1, math.ceil(math.log2(horizon)))
    max_popcount = max(bin(t).count("1") for t in range(1, horizon + 1))
    assert counter.draws >= max_popcount
    tree = build("tree", horizon, 1, noise)
    assert counter.draw_scale == tree.draw_scale
    assert counter.max_noise_variance() >= tree.max_noise_variance()


def test_tree_variance_is_popcount_times_draw_variance():
    counter = build("tree", 100, 1, "laplace")
    b = counter.draw_scale
    for t in (1, 2, 3, 7, 63, 64, 100):
        assert counter.noise_variance(t) == pytest.approx(bin(t).count("1") * 2 * b**2)


def test_factorization_variance_and_coefficients():
    f = FactorizationCounter.coefficients(40)
    exact = [math.comb(2 * j, j) / 4**j for j in range(40)]
    np.testing.assert_allclose(f, exact, rtol=1e-13)
    counter = build("factorization", 40, 1)
    for t in (1, 2, 10, 40):
        assert counter.noise_variance(t) == pytest.approx(counter.draw_scale**2 * sum(
            x**2 for x in exact[:t]))
    # sanity: the square of C is the all-ones lower-triangular matrix
    c = np.array([[f[i - j] if i >= j else 0.0 for j in range(40)] for i in range(40)])
    np.testing.assert_allclose(c @ c, np.tril(np.ones((40, 40))), atol=1e-12)


# ------------------------------------------------------------------ calibration
def _used_nodes_per_input(horizon: int, all_nodes: bool) -> int:
    """Brute force: max over t of the number of noised dyadic nodes containing t."""
    counts = np.zeros(horizon + 1, dtype=int)
    k = 0
    while 2**k <= horizon:
        for j in range(1, horizon // 2**k + 1):  # complete nodes ((j-1) 2^k, j 2^k]
            if all_nodes or j % 2 == 1:  # the plain tree only uses left children
                counts[(j - 1) * 2**k + 1: j * 2**k + 1] += 1
        k += 1
    return int(counts.max())


@pytest.mark.parametrize("horizon", [1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 100])
def test_tree_levels_are_the_real_node_count(horizon):
    counter = build("tree", horizon, 1)
    assert counter.levels == _used_nodes_per_input(horizon, all_nodes=False)
    assert counter.levels == _used_nodes_per_input(horizon, all_nodes=True)
    assert counter.levels == math.ceil(math.log2(horizon + 1))


@pytest.mark.parametrize("name", ["tree", "agarwal-singh", "honaker"])
def test_tree_family_calibration(name):
    horizon = 37  # levels = 6
    lap = build(name, horizon, 1, "laplace")
    assert lap.draw_scale == pytest.approx(6 * SENS / EPS)
    gau = build(name, horizon, 1, "gaussian")
    assert gau.draw_scale == pytest.approx(gaussian_sigma(math.sqrt(6) * SENS, EPS, DELTA))


def test_factorization_calibration():
    counter = build("factorization", 37, 1)
    col = math.sqrt(sum((math.comb(2 * j, j) / 4**j) ** 2 for j in range(37)))
    assert counter.column_norm == pytest.approx(col)
    assert counter.draw_scale == pytest.approx(gaussian_sigma(col * SENS, EPS, DELTA))


@pytest.mark.parametrize("name, noise", NOISY)
def test_guarantee_through_accountant(name, noise):
    counter = build(name, 100, 2, noise)
    event = counter.describe()
    delta = 0.0 if noise == "laplace" else DELTA
    assert accountant_epsilon(event, delta) <= EPS * (1 + 1e-6)
    g = counter.guarantee()
    assert g.epsilon <= EPS * (1 + 1e-6) and g.delta == delta
    assert type(counter).__name__ in g.mechanism


def test_exact_counter_describes_itself_as_non_private():
    counter = build("tree", 10, 1, noise=None)
    assert isinstance(counter.describe(), dp_accounting.NonPrivateDpEvent)
    assert counter.guarantee().epsilon == math.inf


def test_factorization_refuses_laplace():
    with pytest.raises(ValueError, match="l1 column"):
        FactorizationCounter(16, 1, noise="laplace", epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ValueError, match="gaussian"):
        build("factorization", 16, 1, "laplace")


# ------------------------------------------------------------------ interface
@pytest.mark.parametrize("name", NAMES)
def test_adding_more_than_horizon_raises(name):
    counter = build(name, 5, 2)
    run(counter, np.ones((5, 2)))
    with pytest.raises(ValueError, match="horizon"):
        counter.add(np.ones(2))
    assert counter.t == 5


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [np.ones(3), np.ones((2, 1)), np.array([1.0, np.nan]),
                                 np.array([np.inf, 0.0]), 1.0])
def test_bad_input_raises_and_keeps_state(name, bad):
    counter = build(name, 5, 2)
    first = counter.add(np.ones(2))
    with pytest.raises(ValueError, match="z must"):
        counter.add(bad)
    assert counter.t == 1
    twin = build(name, 5, 2)
    twin.add(np.ones(2))
    np.testing.assert_array_equal(counter.add(np.ones(2)), twin.add(np.ones(2)))
    assert first.shape == (2,)


@pytest.mark.parametrize("name, noise", NOISY)
def test_same_seed_bit_identical(name, noise):
    stream = np.random.default_rng(3).normal(size=(19, 3))
    a = run(build(name, 19, 3, noise, seed=42), stream)
    b = run(build(name, 19, 3, noise, seed=42), stream)
    c = run(build(name, 19, 3, noise, seed=43), stream)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("name", NAMES)
def test_add_returns_a_new_array(name):
    counter = build(name, 4, 2)
    first = counter.add(np.ones(2))
    snapshot = first.copy()
    first[:] = 1e9
    counter.add(np.ones(2))
    np.testing.assert_array_equal(first, 1e9)
    assert not np.shares_memory(first, snapshot)


@pytest.mark.parametrize("name", ["tree", "agarwal-singh", "honaker"])
def test_tree_memory_is_logarithmic(name):
    counter = build(name, 2**12, 5)
    run(counter, np.zeros((100, 5)))
    assert counter.memory_floats() == 5 * (counter.levels + 1)


def test_factorization_memory_grows_with_history():
    counter = build("factorization", 1000, 3)
    small = counter.memory_floats()
    run(counter, np.zeros((200, 3)))
    assert counter.memory_floats() >= small + 3 * (200 - 16)
    assert counter.memory_floats() <= 2 * 1000 + 3 + 3 * 256


@pytest.mark.parametrize("kwargs, word", [
    ({"horizon": 0}, r"^horizon=0 rejected: expected an integer >= 1$"),
    ({"horizon": 2.5}, r"^horizon=2\.5 rejected: expected an integer >= 1, got a float$"),
    ({"dim": 0}, r"^dim=0 rejected: expected an integer >= 1$"),
    ({"noise": "uniform"}, "noise must be"),
    ({"epsilon": None}, r"^epsilon=None rejected: expected a finite real number > 0, got a "),
    ({"epsilon": -1.0}, r"^epsilon=-1\.0 rejected: expected a finite real number > 0$"),
    ({"delta": None}, r"^delta=None rejected: expected a real number in \[0, 1\), got a "),
    ({"delta": 1.0}, r"^delta=1\.0 rejected: expected a real number in \[0, 1\)$"),
    ({"delta": 0.0}, r"^delta=0\.0 rejected: expected a real number in \(0, 1\) for Gaussian"),
    ({"sensitivity": None}, r"^sensitivity=None rejected: expected a finite real number > 0"),
    ({"sensitivity": 0.0}, r"^sensitivity=0\.0 rejected: expected a finite real number > 0$"),
    ({"rng": 3}, "rng must be"),
])
@pytest.mark.parametrize("cls", [BinaryTreeCounter, AgarwalSinghCounter, HonakerCounter,
                                 FactorizationCounter, BLTCounter])
def test_invalid_parameters_raise(cls, kwargs, word):
    params = dict(horizon=8, dim=2, noise="gaussian", epsilon=1.0, delta=1e-6,
                  sensitivity=1.0, rng=np.random.default_rng(0))
    params.update(kwargs)
    horizon, dim = params.pop("horizon"), params.pop("dim")
    with pytest.raises(ValueError, match=word):
        cls(horizon, dim, **params)


def test_noise_variance_range_and_factory():
    counter = build("tree", 8, 1)
    for bad in (0, 9, 1.5):
        with pytest.raises(ValueError,
                           match=rf"^t={bad!r} rejected: expected an integer in \[1, 8\]"):
            counter.noise_variance(bad)
    with pytest.raises(ValueError, match="unknown counter"):
        make_counter("nope", 8, 1, noise=None)
    assert set(COUNTERS) == {"tree", "agarwal-singh", "honaker", "factorization", "blt"}
    assert all(isinstance(v, str) and v for v in COUNTERS.values())
