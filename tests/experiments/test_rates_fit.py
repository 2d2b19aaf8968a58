"""The slope-fitting helpers of :mod:`dp_online_envs.lab.experiments.rates`, checked against
exact power laws, analytic local slopes and crossings computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dp_online_envs.lab.experiments.rates import (
    below_from,
    geometric_horizons,
    local_slope,
    loglog_slope,
    slope_reached,
)


def test_loglog_slope_is_exact_on_power_laws_and_least_squares_otherwise():
    ts = [10, 100, 1000, 10_000]
    assert loglog_slope(ts, [3.0 * t**0.75 for t in ts]) == pytest.approx(0.75, abs=1e-12)
    vals = [2.0, 5.0, 7.0, 30.0]
    expected = np.polyfit(np.log(ts), np.log(vals), 1)[0]  # brute force: numpy's fit
    assert loglog_slope(ts, vals) == pytest.approx(expected, rel=1e-12)


def test_loglog_slope_is_nan_on_non_positive_values_and_rejects_bad_horizons():
    assert math.isnan(loglog_slope([1, 2], [1.0, 0.0]))
    assert math.isnan(loglog_slope([1, 2], [1.0, math.inf]))
    with pytest.raises(ValueError, match="equal length"):
        loglog_slope([1, 2, 3], [1.0, 2.0])
    with pytest.raises(ValueError, match="positive"):
        loglog_slope([0, 2], [1.0, 2.0])
    with pytest.raises(ValueError, match="two distinct horizons"):
        loglog_slope([5, 5], [1.0, 2.0])


@pytest.mark.parametrize("k", [1.0, 2.5])
@pytest.mark.parametrize("T", [1e3, 1e5, 1e9])
def test_local_slope_of_a_polylog_is_k_over_ln_t(k, T):
    assert local_slope(lambda t: math.log(t) ** k, T) == pytest.approx(k / math.log(T),
                                                                       rel=1e-6)


def test_local_slope_of_a_sum_matches_the_analytic_derivative():
    a, b, T = 3.0, 40.0, 1e4
    def f(t):
        return a * math.sqrt(t) + b * math.log(t) ** 2

    exact = (0.5 * a * math.sqrt(T) + 2.0 * b * math.log(T)) / f(T)
    assert local_slope(f, T) == pytest.approx(exact, rel=1e-6)


def test_local_slope_rejects_a_non_positive_bound():
    with pytest.raises(ValueError, match="positive and finite near T=10"):
        local_slope(lambda t: t - 10.0, 10.0)
    with pytest.raises(ValueError, match="horizon"):
        local_slope(math.sqrt, -1.0)


def test_slope_reached_is_where_the_analytic_local_slope_enters_the_band():
    # f = sqrt(T) + b: local slope 0.5 sqrt(T) / (sqrt(T) + b) >= 0.4  <=>  sqrt(T) >= 4 b
    b = 50.0
    t_star = slope_reached(lambda t: math.sqrt(t) + b, 0.5, tol=0.1)
    assert t_star == pytest.approx((4.0 * b) ** 2, rel=1e-6)
    # within the band everywhere / never inside the scan
    assert slope_reached(lambda t: t**0.75, 0.75, t_min=2.0) == 2.0
    assert math.isinf(slope_reached(lambda t: t, 0.5, t_max=1e6))


def test_below_from_is_the_crossing_of_a_power_law_and_a_line():
    # c T^{3/4} <= r T  <=>  T >= (c / r)^4
    c, r = 10.0, 0.5
    assert below_from(lambda t: c * t**0.75, lambda t: r * t) == pytest.approx(
        (c / r) ** 4, rel=1e-6)
    assert below_from(lambda t: 1.0, lambda t: t) == 2.0
    assert math.isinf(below_from(lambda t: t, lambda t: 0.5 * t, t_max=1e6))
    with pytest.raises(ValueError, match="per_octave"):
        below_from(math.sqrt, math.sqrt, per_octave=0)
    with pytest.raises(ValueError, match="t_max"):
        below_from(math.sqrt, math.sqrt, t_min=10.0, t_max=5.0)


def test_geometric_horizons():
    assert geometric_horizons(100_000) == [1000, 3162, 10000, 31623, 100000]
    assert geometric_horizons(1000, decades=1, per_decade=1) == [100, 1000]
    with pytest.raises(ValueError, match="t_max=1"):
        geometric_horizons(1)
    with pytest.raises(ValueError, match="starts at T=0"):
        geometric_horizons(10, decades=3)
