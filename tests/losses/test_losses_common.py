"""Properties every loss family must have (Euclidean and submodular alike)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from loss_helpers import (
    domain_points,
    euclidean_domains,
    euclidean_families,
    random_points,
    set_domains,
    submodular_families,
)

from dp_online_envs.losses import SubmodularLoss

ALL_FAMILIES = euclidean_families() + submodular_families()
FAMILY_IDS = [repr(f) for f in ALL_FAMILIES]


def family_points(fam, rng: np.random.Generator, m: int) -> np.ndarray:
    """Test points: the unit cube for set functions (plus R^n), Gaussians otherwise."""
    if isinstance(fam, SubmodularLoss):
        return np.vstack([rng.random((m - m // 4, fam.dim)),
                          random_points(fam.dim, rng, m // 4)])
    return random_points(fam.dim, rng, m)


def domains_for(fam):
    return set_domains(fam.dim) if isinstance(fam, SubmodularLoss) else euclidean_domains(fam.dim)


@pytest.mark.parametrize("fam", ALL_FAMILIES, ids=FAMILY_IDS)
def test_value_matches_values_and_is_float(fam):
    rng = np.random.default_rng(1)
    for _ in range(5):
        theta = fam.sample_param(rng)
        xs = family_points(fam, rng, 24)
        vec = fam.values(theta, xs)
        assert vec.shape == (len(xs),)
        single = [fam.value(theta, x) for x in xs]
        assert all(type(v) is float for v in single)
        np.testing.assert_allclose(vec, single, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fam", ALL_FAMILIES, ids=FAMILY_IDS)
def test_subgradient_inequality(fam):
    """Convexity + validity: f(y) >= f(x) + <g(x), y - x> for all pairs."""
    rng = np.random.default_rng(2)
    for _ in range(8):
        theta = fam.sample_param(rng)
        xs = family_points(fam, rng, 16)
        ys = family_points(fam, rng, 16)
        fx = fam.values(theta, xs)
        fy = fam.values(theta, ys)
        for i, x in enumerate(xs):
            g = fam.subgradient(theta, x)
            assert g.shape == (fam.dim,)
            lower = fx[i] + (ys - x) @ g
            assert np.all(fy >= lower - 1e-9 * (1 + np.abs(fy))), fam


@pytest.mark.parametrize("fam", ALL_FAMILIES, ids=FAMILY_IDS)
def test_subgradient_matches_finite_differences(fam):
    """At random (a.s. smooth) points the subgradient is the gradient."""
    rng = np.random.default_rng(3)
    h = 1e-6
    for _ in range(20):
        theta = fam.sample_param(rng)
        x = family_points(fam, rng, 4)[0]
        v = rng.standard_normal(fam.dim)
        fd = (fam.value(theta, x + h * v) - fam.value(theta, x - h * v)) / (2 * h)
        g = fam.subgradient(theta, x)
        assert fd == pytest.approx(float(g @ v), abs=1e-5), (fam, x)


@pytest.mark.parametrize("fam", ALL_FAMILIES, ids=FAMILY_IDS)
def test_empirical_lipschitz_and_bound(fam):
    rng = np.random.default_rng(4)
    for dom in domains_for(fam):
        L, B = fam.lipschitz(dom), fam.bound(dom)
        assert np.isfinite(L) and L > 0 and np.isfinite(B) and B > 0
        pts = domain_points(dom, rng, 60)
        assert all(dom.contains(p, atol=1e-7) for p in pts)
        # near pairs too: the Lipschitz constant is a local statement
        near = np.array([dom.project(p + 1e-3 * rng.standard_normal(dom.dim)) for p in pts])
        for _ in range(6):
            theta = fam.sample_param(rng)
            for a, b in ((pts, pts[rng.permutation(len(pts))]), (pts, near)):
                fa, fb = fam.values(theta, a), fam.values(theta, b)
                dist = np.linalg.norm(a - b, axis=1)
                assert np.all(np.abs(fa - fb) <= L * dist + 1e-9), (fam, dom)
                assert np.all(np.abs(fa) <= B + 1e-9), (fam, dom)


@pytest.mark.parametrize("fam", ALL_FAMILIES, ids=FAMILY_IDS)
def test_bound_holds_at_adversarial_vertices(fam):
    """|f| <= B also at the domain vertices maximizing / minimizing gradients."""
    rng = np.random.default_rng(5)
    for dom in domains_for(fam):
        B = fam.bound(dom)
        for _ in range(10):
            theta = fam.sample_param(rng)
            c = fam.subgradient(theta, dom.center)
            verts = np.array([dom.linear_minimizer(c), dom.linear_minimizer(-c)])
            assert np.all(np.abs(fam.values(theta, verts)) <= B + 1e-9)


@pytest.mark.parametrize("fam", ALL_FAMILIES, ids=FAMILY_IDS)
def test_sample_param_in_param_space_and_fixed_by_clip(fam):
    rng = np.random.default_rng(6)
    space = fam.param_space
    assert space.shape == (fam.param_dim,)
    assert space.is_bounded("both")
    for _ in range(50):
        theta = fam.sample_param(rng)
        assert theta.shape == (fam.param_dim,)
        assert space.contains(theta)
        np.testing.assert_allclose(fam.clip_param(theta), theta, atol=1e-12)


@pytest.mark.parametrize("fam", ALL_FAMILIES, ids=FAMILY_IDS)
@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_clip_param_lands_in_set_and_is_idempotent(fam, data):
    theta = data.draw(
        arrays(np.float64, fam.param_dim,
               elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False))
    )
    c = fam.clip_param(theta)
    assert fam.param_space.contains(c)
    np.testing.assert_array_equal(fam.clip_param(c), c)  # bit for bit
    # the clipped parameter gives a loss within the advertised bounds
    dom = domains_for(fam)[0]
    x = dom.center
    assert abs(fam.value(c, x)) <= fam.bound(dom) + 1e-9


@pytest.mark.parametrize("fam", ALL_FAMILIES, ids=FAMILY_IDS)
def test_clip_param_rejects_bad_input(fam):
    with pytest.raises(ValueError, match="shape"):
        fam.clip_param(np.zeros(fam.param_dim + 1))
    bad = np.zeros(fam.param_dim)
    bad[0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        fam.clip_param(bad)


@pytest.mark.parametrize(
    "fam", [f for f in ALL_FAMILIES if f.linear_in_theta],
    ids=[repr(f) for f in ALL_FAMILIES if f.linear_in_theta],
)
def test_linear_in_theta_families_are_additive(fam):
    rng = np.random.default_rng(7)
    for _ in range(10):
        t1, t2 = fam.sample_param(rng), fam.sample_param(rng)
        a = rng.uniform(-2, 2)
        xs = family_points(fam, rng, 12)
        np.testing.assert_allclose(
            fam.values(t1 + t2, xs), fam.values(t1, xs) + fam.values(t2, xs), atol=1e-12
        )
        np.testing.assert_allclose(fam.values(a * t1, xs), a * fam.values(t1, xs), atol=1e-12)
        x = xs[0]
        assert fam.value(t1 + t2, x) == pytest.approx(fam.value(t1, x) + fam.value(t2, x))


def test_nonlinear_families_really_are_not_additive():
    """linear_in_theta=False is truthful: additivity fails for some parameters."""
    rng = np.random.default_rng(8)
    for fam in ALL_FAMILIES:
        if fam.linear_in_theta:
            continue
        worst = 0.0
        for _ in range(20):
            t1, t2 = fam.sample_param(rng), fam.sample_param(rng)
            x = family_points(fam, rng, 4)[0]
            worst = max(worst, abs(fam.value(t1 + t2, x) - fam.value(t1, x) - fam.value(t2, x)))
        assert worst > 1e-6, fam


@pytest.mark.parametrize("fam", ALL_FAMILIES, ids=FAMILY_IDS)
def test_check_domain_rejects_wrong_dimension(fam):
    dom = domains_for(fam)[0]
    other = type(dom)(fam.dim + 1)  # Ball(dim) / GroundSet(n)
    with pytest.raises(ValueError, match="dim"):
        fam.lipschitz(other)
    with pytest.raises(ValueError, match="dim"):
        fam.bound(other)


@pytest.mark.parametrize("fam", ALL_FAMILIES, ids=FAMILY_IDS)
def test_total_matches_sum_of_values_and_subgradients(fam):
    """The vectorized ``total`` (used by the hindsight comparator) equals the loop."""
    rng = np.random.default_rng(9)
    for T in (1, 7):
        thetas = np.array([fam.sample_param(rng) for _ in range(T)])
        for x in family_points(fam, rng, 6):
            val, grad = fam.total(thetas, x)
            assert type(val) is float
            assert val == pytest.approx(sum(fam.value(t, x) for t in thetas), abs=1e-10)
            np.testing.assert_allclose(
                grad, sum(fam.subgradient(t, x) for t in thetas), atol=1e-10
            )


@pytest.mark.parametrize("theta_set", ["l2", "l1"])
def test_ball_clips_are_bit_idempotent(theta_set):
    """Clipping a clipped parameter changes no bit. The rescaled vector used to round to
    a norm one ulp above 1 (l2: about 2% of random draws; l1: e.g. (3, 3, 3, 3, 3) ->
    0.2 each, whose float sum is 1 + 9e-16), and a second clip moved it again."""
    from dp_online_envs.losses import LinearLoss

    loss = LinearLoss(5, theta_set)
    order = 2 if theta_set == "l2" else 1
    rng = np.random.default_rng(0)
    draws = np.concatenate([rng.normal(size=(3000, 5)) * 3,
                            np.arange(1, 9, dtype=float)[:, None] * np.ones(5)])
    for v in draws:
        once = loss.clip_param(v)
        assert np.linalg.norm(once, order) <= 1.0
        np.testing.assert_array_equal(loss.clip_param(once), once)
        if theta_set == "l2":
            np.testing.assert_allclose(once, v / max(1.0, np.linalg.norm(v)), rtol=0,
                                       atol=1e-15)
