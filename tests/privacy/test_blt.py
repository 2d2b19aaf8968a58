"""Tests of agents.privacy.counters.blt: the BLT counter against brute force (materialized C and
C^{-1}), its closed forms against direct sums, its calibration and its optimizer."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.linalg import solve_triangular

from agents.privacy import (
    BLTCounter,
    DiscreteLaplaceNoise,
    FactorizationCounter,
    LaplaceNoise,
    accountant_epsilon,
    gaussian_sigma,
    make_counter,
)
from agents.privacy.counters import blt
from dp_online_envs.lab.audit import audit_samples

EPS, DELTA, SENS = 0.8, 1e-6, 1.5


def build(horizon, dim, noise="gaussian", seed=0, **kw):
    return make_counter("blt", horizon, dim, noise=noise, epsilon=EPS, delta=DELTA,
                        sensitivity=SENS, rng=np.random.default_rng(seed), **kw)


def run(counter, stream):
    return np.array([counter.add(z) for z in stream])


def toeplitz(coef: np.ndarray) -> np.ndarray:
    """The lower-triangular Toeplitz matrix with first column ``coef``."""
    n = len(coef)
    i, j = np.indices((n, n))
    return np.where(i >= j, coef[np.clip(i - j, 0, None)], 0.0)


def coefficients_by_power_sums(theta, omega, n):
    """``1, sum_i omega_i theta_i^(k-1)`` term by term in Python floats (the definition)."""
    return np.array([1.0] + [math.fsum(w * th ** (k - 1) for th, w in zip(theta, omega))
                             for k in range(1, n)])


# ------------------------------------------------------------------ exactness
@pytest.mark.parametrize("horizon", [1, 2, 3, 17, 64, 300])
@pytest.mark.parametrize("dim", [1, 4])
def test_noise_off_gives_exact_prefix_sums(horizon, dim):
    stream = np.random.default_rng(horizon).normal(size=(horizon, dim))
    counter = build(horizon, dim, noise=None)
    np.testing.assert_allclose(run(counter, stream), np.cumsum(stream, axis=0), atol=1e-12)
    assert counter.max_noise_variance() == 0.0 and counter.memory_floats() == dim * 1 + 2 * (
        counter.buffers)  # exact: no noise buffers


def test_release_is_prefix_sum_plus_data_independent_noise():
    stream = np.random.default_rng(5).normal(size=(50, 3))
    noisy = run(build(50, 3, seed=9), stream)
    zero = run(build(50, 3, seed=9), np.zeros_like(stream))
    np.testing.assert_allclose(noisy - zero, np.cumsum(stream, axis=0), atol=1e-9)


@pytest.mark.parametrize("horizon, buffers", [(40, 1), (40, 4), (120, 3), (120, 8)])
def test_noise_is_prefix_sums_of_c_inverse_of_the_draws(horizon, buffers):
    """Brute force: ``eta = A C^{-1} w`` with ``C`` materialized from its coefficients, ``w``
    the Gaussian draws (same generator, same order), solved by a triangular solve."""
    counter = build(horizon, 3, seed=4, buffers=buffers)
    eta = run(counter, np.zeros((horizon, 3)))
    draws = np.random.default_rng(4).normal(0.0, counter.draw_scale, size=(horizon, 3))
    p = counter.params
    c = toeplitz(coefficients_by_power_sums(p.theta, p.omega, horizon))
    expected = np.cumsum(solve_triangular(c, draws, lower=True), axis=0)
    np.testing.assert_allclose(eta, expected, rtol=0, atol=1e-9 * counter.draw_scale)


def test_strategy_and_noise_blts_are_inverse():
    p = blt.blt_parameters(500, 4)
    c, d = p.strategy_coefficients(500), p.noise_coefficients(500)
    np.testing.assert_allclose(np.convolve(c, d)[:500], np.eye(1, 500)[0], atol=1e-13)
    np.testing.assert_allclose(c, coefficients_by_power_sums(p.theta, p.omega, 500),
                               rtol=1e-12)
    # the interlacing of Lemma 5.2 / McMahan-Pillutla: positive C, negative C^{-1} tails
    assert np.all(p.omega > 0) and np.all(p.omega_hat < 0)
    assert np.all(np.diff(c) < 0) and np.all(c > 0)
    both = np.sort(np.concatenate([p.theta, p.theta_hat]))[::-1]
    np.testing.assert_array_equal(both[0::2], np.sort(p.theta)[::-1])
    assert 0.0 < p.theta_hat.min() and p.theta.max() < 1.0


# ------------------------------------------------------------------ sensitivity
@pytest.mark.parametrize("horizon, buffers", [(1, 4), (2, 4), (7, 2), (60, 4), (200, 6)])
def test_column_norm_is_the_max_column_norm_of_c(horizon, buffers):
    counter = build(horizon, 1, buffers=buffers)
    p = counter.params
    c = toeplitz(coefficients_by_power_sums(p.theta, p.omega, horizon))
    brute = np.sqrt((c**2).sum(axis=0)).max()
    assert counter.column_norm == pytest.approx(brute * (1 + blt.SENSITIVITY_MARGIN), rel=1e-13)
    assert counter.column_norm >= brute


@pytest.mark.parametrize("horizon", [2**16, 2**20])
def test_closed_forms_match_direct_sums_at_scale(horizon):
    """Lemma 5.3 / 5.4 closed forms against O(T * buffers) sums of the materialized
    coefficients; the closed-form sensitivity error is far inside the safety margin."""
    p = blt.blt_parameters(horizon, 4)
    c = p.strategy_coefficients(horizon)
    assert p.sensitivity_squared(horizon) == pytest.approx(math.fsum(c**2), rel=1e-11)
    assert abs(p.sensitivity_squared(horizon) / math.fsum(c**2) - 1) < blt.SENSITIVITY_MARGIN / 100
    b = np.cumsum(p.noise_coefficients(horizon))
    direct = np.cumsum(b**2)
    ts = np.unique(np.geomspace(1, horizon, 60).astype(np.int64))
    np.testing.assert_allclose(p.variances(ts), direct[ts - 1], rtol=1e-9)


def test_calibration_and_guarantee():
    counter = build(100, 2)
    assert counter.draw_scale == pytest.approx(
        gaussian_sigma(counter.column_norm * SENS, EPS, DELTA), rel=1e-12)
    event = counter.describe()
    assert accountant_epsilon(event, DELTA) <= EPS * (1 + 1e-6)
    g = counter.guarantee()
    assert g.epsilon <= EPS * (1 + 1e-6) and g.delta == DELTA
    assert g.idealized and "BLTCounter" in g.mechanism and "IDEALIZED" in str(g)
    # one more draw than calibrated for would not be covered: the event is that of C
    assert event.noise_multiplier == pytest.approx(
        counter.draw_scale / (counter.column_norm * SENS), rel=1e-12)


# ------------------------------------------------------------------ variance
def test_analytic_variance_is_the_row_norm_of_a_c_inverse():
    horizon = 80
    counter = build(horizon, 1)
    p = counter.params
    c = toeplitz(coefficients_by_power_sums(p.theta, p.omega, horizon))
    b = np.cumsum(np.linalg.inv(c), axis=0)  # A C^{-1}
    brute = counter.draw_scale**2 * (b**2).sum(axis=1)
    got = [counter.noise_variance(t) for t in range(1, horizon + 1)]
    np.testing.assert_allclose(got, brute, rtol=1e-10)
    assert np.all(np.diff(got) > 0)
    assert counter.max_noise_variance() == pytest.approx(max(got), rel=1e-12)


def test_max_noise_variance_equals_the_maximum_over_all_rounds():
    counter = build(3000, 1)
    every = counter.noise_strategy.variance * counter._unit_variances(
        np.arange(1, 3001))
    assert counter.max_noise_variance() == pytest.approx(every.max(), rel=1e-13)
    assert counter.max_noise_variance() == counter.noise_variance(3000)


WIDE = 20_000


def test_empirical_variance_matches_analytic():
    horizon = 300
    counter = build(horizon, WIDE, seed=1)
    out = run(counter, np.zeros((horizon, WIDE)))
    ts = np.array([1, 2, 3, 10, 50, 100, 299, 300])
    empirical = np.mean(out[ts - 1] ** 2, axis=1)
    analytic = np.array([counter.noise_variance(int(t)) for t in ts])
    np.testing.assert_allclose(empirical, analytic, rtol=5.0 * math.sqrt(2.0 / WIDE))


# ------------------------------------------------------------------ rate and optimizer
@pytest.mark.parametrize("horizon", [2**10, 2**16, 2**20])
def test_worst_noise_within_two_percent_of_the_square_root_factorization(horizon):
    """Equal privacy (same epsilon, delta, sensitivity): the BLT's worst std against the
    factorization's ``sigma_1 Delta sum_{j<T} f_j^2`` (its max variance without building
    the O(T) counter at 2^20)."""
    counter = build(horizon, 1)
    f2 = np.sum(FactorizationCounter.coefficients(horizon) ** 2)
    fact_std = gaussian_sigma(SENS, EPS, DELTA) * f2
    if horizon <= 2**16:
        assert fact_std == pytest.approx(
            math.sqrt(make_counter("factorization", horizon, 1, noise="gaussian", epsilon=EPS,
                                   delta=DELTA, sensitivity=SENS).max_noise_variance()),
            rel=1e-9)
    ratio = math.sqrt(counter.max_noise_variance()) / fact_std
    assert 0.999 < ratio < 1.02


def test_more_buffers_never_hurt():
    losses = [blt.blt_parameters(2**16, n).max_loss(2**16) for n in range(1, 7)]
    assert all(b <= a * (1 + 1e-9) for a, b in itertools.pairwise(losses))
    assert losses[0] > 1.5 * losses[3]  # one buffer is far from optimal at 2^16


def test_optimizer_is_deterministic_and_cached():
    a = blt.blt_parameters.__wrapped__(4096, 3)
    b = blt.blt_parameters.__wrapped__(4096, 3)
    assert np.array_equal(a.eps, b.eps) and np.array_equal(a.eps_hat, b.eps_hat)
    assert blt.blt_parameters(4096, 3) is blt.blt_parameters(4096, 3)
    with pytest.raises(ValueError, match="read-only"):
        blt.blt_parameters(4096, 3).omega[0] = 0.0


def test_optimizer_keeps_values_in_bounds():
    x = np.linspace(-5.0, -1.0, 4)
    value, grad = blt._loss_and_gradient(x, 100, -10.0, -0.5)
    assert value < 1e3 and np.all(np.isfinite(grad)) and np.any(grad != 0)
    for bad in (x + 4.5, x - 9.0):  # above the upper, below the lower bound
        assert blt._loss_and_gradient(bad, 100, -10.0, -0.5)[0] == 1e3


def test_degenerate_optimum_raises(monkeypatch):
    class Result:
        x = np.full(8, -1.0)  # coinciding decays: 0/0 output scales

    from scipy import optimize  # blt imports it where it optimizes

    monkeypatch.setattr(optimize, "minimize", lambda *a, **k: Result())
    with pytest.raises(RuntimeError, match="invalid BLT"):
        blt.blt_parameters.__wrapped__(64, 4)


def test_gradient_matches_finite_differences_of_the_loss():
    x = np.log(np.array([1e-4, 1e-3, 1e-2, 0.1]))
    _, grad = blt._loss_and_gradient(x, 2**12, -20.0, -1e-9)
    h = 1e-5
    for k in range(4):
        e = np.zeros(4)
        e[k] = h
        fd = (blt._log_max_losses(x + e, 2**12) - blt._log_max_losses(x - e, 2**12)) / (2 * h)
        assert grad[k] == pytest.approx(float(fd), rel=1e-4, abs=1e-7)


# ------------------------------------------------------------------ interface
@pytest.mark.parametrize("dim, buffers", [(1, 1), (5, 4), (3, 8)])
def test_memory_is_dim_times_buffers(dim, buffers):
    counter = build(2**12, dim, buffers=buffers)
    expected = dim + dim * buffers + dim + 2 * buffers  # prefix, buffers, eta, theta/omega
    assert counter.memory_floats() == expected
    run(counter, np.ones((500, dim)))
    assert counter.memory_floats() == expected


def test_same_seed_bit_identical():
    stream = np.random.default_rng(3).normal(size=(40, 3))
    a = run(build(40, 3, seed=42), stream)
    b = run(build(40, 3, seed=42), stream)
    c = run(build(40, 3, seed=43), stream)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


@pytest.mark.parametrize("noise", ["laplace", "discrete-laplace", LaplaceNoise(1.0, 1.0),
                                   DiscreteLaplaceNoise(1.0, 1.0)])
def test_refuses_laplace_noise(noise):
    with pytest.raises(ValueError, match=r"supports only noise='gaussian'.*got noise='"):
        BLTCounter(16, 1, noise=noise, epsilon=1.0, sensitivity=1.0)


@pytest.mark.parametrize("buffers, message", [
    (0, r"^buffers=0 rejected: expected an integer in \[1, 8\]$"),
    (9, r"^buffers=9 rejected: expected an integer in \[1, 8\]$"),
    (2.5, r"^buffers=2\.5 rejected: expected an integer in \[1, 8\], got a float$"),
])
def test_invalid_buffers_raise(buffers, message):
    with pytest.raises(ValueError, match=message):
        build(16, 1, buffers=buffers)


def test_buffers_option_is_used():
    small, large = build(2**14, 1, buffers=1), build(2**14, 1, buffers=5)
    assert small.params.buffers == 1 and large.params.buffers == 5
    assert large.max_noise_variance() < 0.8 * small.max_noise_variance()
    assert build(2**14, 1).buffers == blt.DEFAULT_BUFFERS == 4


def test_black_box_audit_passes_and_refutes_a_tenth_of_the_noise():
    """Two neighbouring streams (0 vs ``Delta_2`` in round 1, whose column of ``C`` is the
    longest), 20 000 runs per side as the coordinates of one counter, the likelihood-ratio
    statistic ``<C e_1, C diff(y)>`` (``C A^{-1} y = C z + w``): the calibrated counter
    passes the auditor; the same releases with a tenth of the noise are refuted."""
    horizon, runs = 32, 20_000
    neighbour = np.zeros((horizon, runs))
    neighbour[0] = SENS
    zero = run(build(horizon, runs, seed=1), np.zeros((horizon, runs))).T
    moved = run(build(horizon, runs, seed=2), neighbour).T
    p = build(horizon, 1, noise=None).params
    c = toeplitz(p.strategy_coefficients(horizon))

    def likelihood_ratio(y):
        return (np.diff(y, axis=1, prepend=0.0) @ c.T) @ c[:, 0]

    result = audit_samples(zero, moved, epsilon=EPS, delta=DELTA, statistic=likelihood_ratio)
    assert result.passed and result.eps_lb > 0.0, str(result)
    prefix = np.cumsum(neighbour, axis=0).T
    weak = audit_samples(0.1 * zero, prefix + 0.1 * (moved - prefix), epsilon=EPS,
                         delta=DELTA, statistic=likelihood_ratio)
    assert not weak.passed and weak.eps_lb > 2.0 * EPS, str(weak)


def test_the_generator_inverts_the_calibrated_strategy():
    """The noise is generated from ``(theta_hat, omega_hat)``, the sensitivity from
    ``(theta, omega)``: the strategy the float64 generator actually inverts (its impulse
    response solved by the feedback form) has the calibrated column norm, far inside the
    safety margin, at T = 2^16."""
    horizon = 2**16
    p = blt.blt_parameters(horizon, 4)
    decay, scale = np.array(p.theta_hat), np.array(p.omega_hat)
    state, column = np.zeros(4), np.empty(horizon)
    for t in range(horizon):  # solve C^{-1} y = e_1
        y = (1.0 if t == 0 else 0.0) - scale @ state
        column[t] = y
        state = decay * state + y
    implied = math.fsum(column**2)
    assert abs(implied / p.sensitivity_squared(horizon) - 1) < blt.SENSITIVITY_MARGIN / 100
