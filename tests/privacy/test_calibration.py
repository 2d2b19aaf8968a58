"""Tests of agents.privacy.calibration: noise scales and accounting."""

from __future__ import annotations

import dataclasses
import math

import dp_accounting
import numpy as np
import pytest
from scipy.stats import norm

from agents.privacy import (
    DEFAULT_NEIGHBOURING,
    PrivacyGuarantee,
    accountant_epsilon,
    compose_epsilon,
    gaussian_sigma,
    laplace_scale,
    verify_guarantee,
)


def balle_wang_delta(sigma: float, eps: float, sens: float = 1.0) -> float:
    """delta(eps) of the Gaussian mechanism, Balle & Wang (2018) Thm. 8 (test oracle)."""
    a, b = sens / (2 * sigma), eps * sigma / sens
    return norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b)


# ------------------------------------------------------------------ Laplace
@pytest.mark.parametrize("sens, eps", [(1.0, 1.0), (2.0, 0.5), (3.0, 0.1), (0.25, 4.0)])
def test_laplace_scale_is_sensitivity_over_epsilon(sens, eps):
    assert laplace_scale(sens, eps) == sens / eps


# ------------------------------------------------------------------ Gaussian
@pytest.mark.parametrize("eps", [0.05, 0.3, 0.9])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-9])
def test_analytic_gaussian_beats_classical_bound(eps, delta):
    classical = math.sqrt(2 * math.log(1.25 / delta)) / eps
    assert gaussian_sigma(1.0, eps, delta) < classical


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_analytic_gaussian_is_exact(eps, delta):
    sigma = gaussian_sigma(1.0, eps, delta)
    assert balle_wang_delta(sigma, eps) == pytest.approx(delta, rel=1e-6)
    # a little less noise would violate (eps, delta)
    assert balle_wang_delta(0.99 * sigma, eps) > delta


def test_gaussian_sigma_is_linear_in_sensitivity():
    assert gaussian_sigma(3.0, 0.7, 1e-6) == pytest.approx(3.0 * gaussian_sigma(1.0, 0.7, 1e-6),
                                                           rel=1e-12)


@pytest.mark.parametrize("eps, delta", [(0.1, 1e-5), (0.5, 1e-6), (0.9, 1e-8), (2.0, 1e-6)])
def test_gaussian_mechanism_verifies_through_pld_accountant(eps, delta):
    sens = 2.5
    sigma = gaussian_sigma(sens, eps, delta)
    event = dp_accounting.GaussianDpEvent(sigma / sens)
    achieved = accountant_epsilon(event, delta)
    assert achieved <= eps + 1e-6
    assert achieved >= eps - 1e-3  # and the calibration is tight
    g = verify_guarantee(event, eps, delta, mechanism="gaussian")
    assert g.epsilon == achieved and g.delta == delta and g.mechanism == "gaussian"


# ------------------------------------------------------------------ bad inputs
@pytest.mark.parametrize("bad", [0, 0.0, -1.0, math.inf, math.nan, "1", None, True])
def test_bad_epsilon_raises_naming_value(bad):
    with pytest.raises(ValueError, match="epsilon") as info:
        laplace_scale(1.0, bad)
    assert repr(bad) in str(info.value)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_sigma(1.0, bad, 1e-6)


@pytest.mark.parametrize("bad", [0, 0.0, 1, 1.0, -1e-6, 1.5, math.nan, None])
def test_bad_delta_raises_naming_value(bad):
    expected = r"\(0, 1\) for Gaussian" if bad == 0 else r"\[0, 1\)"
    with pytest.raises(ValueError, match=rf"^delta=.* rejected: expected a real number in "
                                         rf"{expected}") as info:
        gaussian_sigma(1.0, 1.0, bad)
    assert repr(bad) in str(info.value)


@pytest.mark.parametrize("bad", [0, -2.0, math.inf, math.nan, "x"])
def test_bad_sensitivity_raises_naming_value(bad):
    with pytest.raises(ValueError, match="l1_sensitivity") as info:
        laplace_scale(bad, 1.0)
    assert repr(bad) in str(info.value)
    with pytest.raises(ValueError, match="l2_sensitivity"):
        gaussian_sigma(bad, 1.0, 1e-6)


# ------------------------------------------------------------------ guarantees
def test_privacy_guarantee_is_frozen_with_default_relation():
    g = PrivacyGuarantee(1.0, 1e-6, mechanism="tree")
    assert g.neighbouring == DEFAULT_NEIGHBOURING == "loss sequences differing in one round's loss"
    assert not g.is_pure and PrivacyGuarantee(1.0, 0.0).is_pure
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.epsilon = 2.0  # type: ignore[misc]
    assert "tree" in str(g)


@pytest.mark.parametrize("eps, delta, match", [
    (-1.0, 0.0, r"^epsilon=-1\.0 rejected: expected a finite real number >= 0$"),
    (math.nan, 0.0, r"^epsilon=nan rejected"),
    (True, 0.0, r"^epsilon=True rejected: .*, got a bool$"),
    (1.0, -0.1, r"^delta=-0\.1 rejected: expected a real number in \[0, 1\]$"),
    (1.0, 1.1, r"^delta=1\.1 rejected"),
])
def test_privacy_guarantee_rejects_invalid_values(eps, delta, match):
    with pytest.raises(ValueError, match=match):
        PrivacyGuarantee(eps, delta)


def test_privacy_guarantee_allows_no_guarantee_and_delta_one():
    g = PrivacyGuarantee(math.inf, 1.0)
    assert g.epsilon == math.inf and g.delta == 1.0
    assert type(PrivacyGuarantee(np.float64(2.0), 0).epsilon) is float


def test_compose_epsilon_is_basic_composition():
    g = compose_epsilon(PrivacyGuarantee(0.5, 1e-6, mechanism="a"),
                        PrivacyGuarantee(0.25, 2e-6, mechanism="b"), 0.125)
    assert g.epsilon == pytest.approx(0.875) and g.delta == pytest.approx(3e-6)
    assert g.mechanism.startswith("a + b")
    with pytest.raises(ValueError, match="neighbouring"):
        compose_epsilon(PrivacyGuarantee(1.0, 0.0), PrivacyGuarantee(1.0, 0.0, neighbouring="x"))
    with pytest.raises(ValueError):
        compose_epsilon()


def test_pure_laplace_composition_is_exact_at_delta_zero():
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(5.0), 5)
    assert accountant_epsilon(event, 0.0) == pytest.approx(1.0, abs=1e-12)
    # at delta > 0 the PLD accountant can only do better than basic composition
    assert accountant_epsilon(event, 1e-6) <= 1.0 + 1e-9
    assert verify_guarantee(event, 1.0, 0.0).epsilon == pytest.approx(1.0)


def test_verify_guarantee_rejects_overclaim():
    event = dp_accounting.GaussianDpEvent(gaussian_sigma(1.0, 1.0, 1e-6))
    with pytest.raises(ValueError, match="accountant reports"):
        verify_guarantee(event, 0.9, 1e-6)
    with pytest.raises(ValueError, match="accountant reports"):
        verify_guarantee(event, 1.0, 0.0)  # a Gaussian is never pure DP


def test_non_private_and_unknown_events():
    assert accountant_epsilon(dp_accounting.NonPrivateDpEvent(), 1e-6) == math.inf
    with pytest.raises(ValueError):
        verify_guarantee(dp_accounting.NonPrivateDpEvent(), 10.0, 1e-6)
    with pytest.raises(dp_accounting.UnsupportedEventError):
        accountant_epsilon(dp_accounting.UnsupportedDpEvent(), 1e-6)
    with pytest.raises(dp_accounting.UnsupportedEventError):
        accountant_epsilon(dp_accounting.UnsupportedDpEvent(), 0.0)


def test_composed_events_split_budget():
    sig = gaussian_sigma(1.0, 0.5, 5e-7)
    lap = laplace_scale(1.0, 0.5)
    event = dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(sig),
                                           dp_accounting.LaplaceDpEvent(lap)])
    # PLD composition is at least as good as basic composition of (0.5, 5e-7) + (0.5, 0)
    assert np.isfinite(accountant_epsilon(event, 1e-6))
    verify_guarantee(event, 1.0, 1e-6)


# ------------------------------------------- Gaussian compositions, large epsilon
def _pld_epsilon(event, delta: float) -> float:
    """The PLD accountant's (discretised, pessimistic) epsilon: the test oracle."""
    acc = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc.compose(event)
    return float(acc.get_epsilon(delta))


@pytest.mark.parametrize("event", [
    dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(3.0), 10),
    dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(2.0),
                                   dp_accounting.SelfComposedDpEvent(
                                       dp_accounting.GaussianDpEvent(5.0), 4),
                                   dp_accounting.NoOpDpEvent()]),
    dp_accounting.GaussianDpEvent(0.7),
])
@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_gaussian_compositions_are_accounted_exactly(event, delta):
    from agents.privacy.calibration import ACCOUNTING_CALLS, gaussian_mu

    before = dict(ACCOUNTING_CALLS)
    exact = accountant_epsilon(event, delta)
    assert ACCOUNTING_CALLS["pld"] == before.get("pld", 0)
    # the PLD accountant is an upper bound a hair above the exact value
    pld = _pld_epsilon(event, delta)
    assert exact <= pld + 1e-9
    assert pld == pytest.approx(exact, rel=2e-3)
    # and the exact value is the one Gaussian mechanism of shift mu
    mu = gaussian_mu(event)
    assert balle_wang_delta(1.0 / mu, exact) == pytest.approx(delta, rel=1e-6)


def test_gaussian_mu_of_events():
    from agents.privacy.calibration import gaussian_mu

    g = dp_accounting.GaussianDpEvent
    assert gaussian_mu(dp_accounting.SelfComposedDpEvent(g(2.0), 9)) == pytest.approx(1.5)
    assert gaussian_mu(dp_accounting.ComposedDpEvent([g(1.0), g(1.0)])) == pytest.approx(
        math.sqrt(2))
    assert gaussian_mu(dp_accounting.NoOpDpEvent()) == 0.0
    assert gaussian_mu(g(0.0)) == math.inf
    assert gaussian_mu(dp_accounting.LaplaceDpEvent(1.0)) is None
    assert gaussian_mu(dp_accounting.ComposedDpEvent([g(1.0), dp_accounting.LaplaceDpEvent(1.0)])
                       ) is None
    assert accountant_epsilon(g(0.0), 1e-6) == math.inf


@pytest.mark.parametrize("eps", [300.0, 1000.0, 1e4, 1e6])
@pytest.mark.parametrize("levels", [1, 14])
def test_large_epsilon_gaussian_calibration_holds_its_claim(eps, levels):
    # the calibrated noise is within the claim (no slack needed), and verifies
    sens = math.sqrt(levels) * 3.0
    sigma = gaussian_sigma(sens, eps, 1e-6)
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.GaussianDpEvent(sigma / 3.0), levels)
    achieved = accountant_epsilon(event, 1e-6)
    assert achieved <= eps * (1 + 1e-12)
    assert achieved >= eps * (1 - 1e-6)  # and tight
    assert verify_guarantee(event, eps, 1e-6).epsilon == achieved
