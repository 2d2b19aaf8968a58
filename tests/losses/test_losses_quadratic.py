"""QuadraticLoss: strong convexity and the exact hindsight comparator; constructor errors."""

from __future__ import annotations

import numpy as np
import pytest
from loss_helpers import domain_points, euclidean_domains

from dp_online_envs.domains.ball import Ball
from dp_online_envs.losses import (
    AbsoluteLinearLoss,
    DistanceLoss,
    HingeLoss,
    LinearLoss,
    LogisticLoss,
    QuadraticLoss,
)

D = 5


@pytest.mark.parametrize("H", [0.3, 1.0, 4.0])
def test_strong_convexity_inequality(H):
    fam = QuadraticLoss(D, strong_convexity=H, center_radius=1.0)
    assert fam.strong_convexity == H
    rng = np.random.default_rng(0)
    for _ in range(200):
        theta = fam.sample_param(rng)
        x, y = rng.standard_normal((2, D)) * 2
        g = fam.subgradient(theta, x)
        lower = fam.value(theta, x) + g @ (y - x) + H / 2 * np.sum((y - x) ** 2)
        assert fam.value(theta, y) >= lower - 1e-9
        # ... and it is tight (a quadratic), so a larger modulus would fail
        assert fam.value(theta, y) == pytest.approx(lower)


def test_other_families_declare_no_strong_convexity():
    for fam in [LinearLoss(D), DistanceLoss(D), AbsoluteLinearLoss(D), HingeLoss(D),
                LogisticLoss(D)]:
        assert fam.strong_convexity == 0.0 and fam.convex


@pytest.mark.parametrize("dom", euclidean_domains(D), ids=repr)
def test_hindsight_minimizer_is_exact(dom):
    rng = np.random.default_rng(1)
    fam = QuadraticLoss(D, strong_convexity=2.0, center_radius=1.5)
    T = 37
    thetas = np.array([fam.sample_param(rng) for _ in range(T)])
    stat = sum(fam.sufficient_statistic(t) for t in thetas)
    x_star, val = fam.hindsight_minimizer(stat, T, dom)
    x2, val2 = fam.hindsight_minimizer(thetas.sum(0), T, dom,
                                       sq_norms_sum=float(np.sum(thetas**2)))
    np.testing.assert_allclose(x_star, x2)
    assert val == pytest.approx(val2)
    assert dom.contains(x_star, atol=1e-6)
    assert val == pytest.approx(sum(fam.value(t, x_star) for t in thetas))

    def total(y):
        return float(sum(fam.value(t, y) for t in thetas))

    others = domain_points(dom, rng, 40)
    near = [dom.project(x_star + 1e-2 * rng.standard_normal(D)) for _ in range(20)]
    for y in list(others) + near:
        assert total(y) >= val - 1e-7 * (1 + abs(val))


def test_hindsight_minimizer_refuses_missing_square_norms():
    fam = QuadraticLoss(D)
    with pytest.raises(ValueError, match="sq_norms_sum"):
        fam.hindsight_minimizer(np.zeros(D), 3, Ball(D))
    with pytest.raises(ValueError, match="shape"):
        fam.hindsight_minimizer(np.zeros(D + 3), 3, Ball(D))
    with pytest.raises(ValueError, match="count"):
        fam.hindsight_minimizer(np.zeros(D + 1), 0, Ball(D))


@pytest.mark.parametrize(
    ("factory", "match"),
    [
        (lambda: QuadraticLoss(D, strong_convexity=0.0), "strong_convexity"),
        (lambda: QuadraticLoss(D, strong_convexity=float("nan")), "strong_convexity"),
        (lambda: QuadraticLoss(D, center_radius=-1.0), "center_radius"),
        (lambda: QuadraticLoss(0), "dim"),
        (lambda: DistanceLoss(D, center_radius=-0.1), "center_radius"),
        (lambda: LinearLoss(D, theta_set="l3"), "theta_set"),
        (lambda: LinearLoss(2.5), "dim"),
        (lambda: HingeLoss(True), "dim"),
        (lambda: AbsoluteLinearLoss(-1), "dim"),
    ],
)
def test_constructor_errors_name_the_bad_value(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()


def test_l1_and_l2_sampling_is_spread_over_the_ball():
    """Uniform samples: the norm's distribution has P(||theta|| <= r) = r^dim."""
    rng = np.random.default_rng(2)
    for theta_set, order in (("l2", 2), ("l1", 1)):
        fam = LinearLoss(3, theta_set)
        norms = np.array([np.linalg.norm(fam.sample_param(rng), ord=order) for _ in range(4000)])
        assert norms.max() <= 1.0
        for r in (0.5, 0.8):
            assert np.mean(norms <= r) == pytest.approx(r**3, abs=0.03)


def test_l1_projection_is_the_euclidean_projection():
    rng = np.random.default_rng(3)
    fam = LinearLoss(D, "l1")
    for _ in range(30):
        v = 3 * rng.standard_normal(D)
        p = fam.clip_param(v)
        assert np.abs(p).sum() <= 1 + 1e-12
        # optimality: no feasible point is closer
        for _ in range(50):
            q = fam.sample_param(rng)
            assert np.linalg.norm(v - p) <= np.linalg.norm(v - q) + 1e-12
