"""Tests of agents.privacy.noise (the counters' noise strategies), the popcount helper,
and the strategy/name equivalence of the counters' ``noise=`` argument."""

from __future__ import annotations

import dataclasses
import math

import dp_accounting
import numpy as np
import pytest

from agents.privacy import gaussian_sigma, laplace_scale, make_counter
from agents.privacy.counters import popcount
from agents.privacy.noise import GaussianNoise, LaplaceNoise, NoNoise, noise_strategy

EPS, DELTA, SENS = 0.8, 1e-6, 1.5


def test_laplace_calibration_variance_and_event():
    lap = noise_strategy("laplace", EPS, None, SENS).calibrate(copies=5)
    assert isinstance(lap, LaplaceNoise) and lap.delta == 0.0
    assert lap.scale == laplace_scale(5 * SENS, EPS)
    assert lap.variance == 2.0 * lap.scale**2
    event = lap.dp_event(copies=5)
    assert event == dp_accounting.SelfComposedDpEvent(
        dp_accounting.LaplaceDpEvent(lap.scale / SENS), 5)
    assert lap.guarantee(event, "m").epsilon == pytest.approx(EPS, rel=1e-4)


def test_gaussian_calibration_variance_and_event():
    gau = noise_strategy("gaussian", EPS, DELTA, SENS).calibrate(copies=4, gain=3.0)
    assert isinstance(gau, GaussianNoise)
    assert gau.scale == gaussian_sigma(math.sqrt(4) * 3.0 * SENS, EPS, DELTA)
    assert gau.variance == gau.scale**2
    assert gau.dp_event(gain=3.0) == dp_accounting.GaussianDpEvent(gau.scale / (3.0 * SENS))


def test_calibrate_returns_a_copy():
    lap = LaplaceNoise(EPS, SENS)
    assert lap.calibrate(copies=3).scale > 0 and lap.scale == 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        lap.scale = 1.0  # type: ignore[misc]


@pytest.mark.parametrize("noise", [LaplaceNoise(EPS, SENS, scale=2.0),
                                   GaussianNoise(EPS, DELTA, SENS, scale=2.0)])
def test_draws_have_the_stated_variance(noise):
    rng = np.random.default_rng(0)
    draws = noise.draw(rng, (200_000,))
    assert draws.var() == pytest.approx(noise.variance, rel=0.02)
    sums = np.array([noise.sum_of_draws(rng, 3, 2) for _ in range(20_000)])
    assert sums.shape == (20_000, 2)
    assert sums.var(axis=0) == pytest.approx([3 * noise.variance] * 2, rel=0.05)


def test_no_noise_is_exact_and_not_private():
    none = noise_strategy(None)
    assert isinstance(none, NoNoise) and not none.private and none.calibrate(7) is none
    assert none.variance == 0.0 and not none.draw(np.random.default_rng(0), 3).any()
    assert isinstance(none.dp_event(copies=3), dp_accounting.NonPrivateDpEvent)
    assert none.guarantee(none.dp_event(), "m").epsilon == math.inf


@pytest.mark.parametrize("kw, match", [
    ({"noise": "uniform"}, "noise must be"),
    ({"noise": "laplace", "epsilon": 0.0}, "epsilon"),
    ({"noise": "laplace", "sensitivity": -1.0}, "sensitivity"),
    ({"noise": "gaussian", "delta": 0.0}, "delta"),
])
def test_bad_budget_raises(kw, match):
    args = {"noise": "laplace", "epsilon": EPS, "delta": DELTA, "sensitivity": SENS, **kw}
    with pytest.raises(ValueError, match=match):
        noise_strategy(**args)


@pytest.mark.parametrize("name, noise", [("tree", "laplace"), ("honaker", "gaussian"),
                                         ("agarwal-singh", "laplace"),
                                         ("factorization", "gaussian"), ("tree", None)])
def test_a_strategy_and_its_name_build_the_same_counter(name, noise):
    by_name = make_counter(name, 20, 2, noise=noise, epsilon=EPS, delta=DELTA,
                           sensitivity=SENS, rng=np.random.default_rng(3))
    by_strategy = make_counter(name, 20, 2, noise=noise_strategy(noise, EPS, DELTA, SENS),
                               rng=np.random.default_rng(3))
    assert by_strategy.noise == noise and by_strategy.draw_scale == by_name.draw_scale
    zs = np.random.default_rng(1).normal(size=(20, 2))
    for z in zs:
        np.testing.assert_array_equal(by_name.add(z), by_strategy.add(z))
    assert by_name.describe() == by_strategy.describe()


def test_factorization_refuses_a_laplace_strategy():
    with pytest.raises(ValueError, match="l1 column"):
        make_counter("factorization", 8, 1, noise=LaplaceNoise(EPS, SENS))


def test_popcount_scalar_and_array_agree_with_bin():
    ts = np.arange(0, 5000)
    expected = np.array([bin(int(t)).count("1") for t in ts])
    np.testing.assert_array_equal(popcount(ts), expected)
    assert all(popcount(int(t)) == e for t, e in zip(ts[:300], expected[:300]))
    assert popcount(2**40 - 1) == 40
