"""Submodular families: submodularity, Lovász extension, feature maps, validation."""

from __future__ import annotations

import numpy as np
import pytest
from loss_helpers import N_SET, submodular_families

from dp_online_envs.domains.ball import Ball
from dp_online_envs.domains.ground_set import GroundSet
from dp_online_envs.losses import (
    ConcaveModularLoss,
    FacilityLocationLoss,
    GraphCutLoss,
    SubmodularLoss,
)
from dp_online_envs.losses.submodular_min import all_masks

FAMS = submodular_families()
IDS = [repr(f) for f in FAMS]
MASKS = all_masks(N_SET)


def admissible_thetas(fam, rng, k):
    """Random admissible parameters, box corners, and (linear families) sums of them."""
    out = [fam.sample_param(rng) for _ in range(k)]
    out.append(fam.param_space.high.copy())
    out.append(np.where(rng.random(fam.param_dim) < 0.5, fam.param_space.low,
                        fam.param_space.high))
    if fam.linear_in_theta:  # the comparator minimizes f(sum_t theta_t, .)
        out.append(sum(fam.sample_param(rng) for _ in range(5)))
    return out


@pytest.mark.parametrize("fam", FAMS, ids=IDS)
def test_diminishing_returns(fam):
    rng = np.random.default_rng(0)
    n = fam.n
    for theta in admissible_thetas(fam, rng, 6):
        for _ in range(60):
            B = rng.random(n) < rng.random()
            A = B & (rng.random(n) < 0.5)
            outside = np.flatnonzero(~B)
            if outside.size == 0:
                continue
            e = rng.choice(outside)
            Ae, Be = A.copy(), B.copy()
            Ae[e] = Be[e] = True
            vals = fam.set_values(theta, np.stack([A, Ae, B, Be]))
            assert vals[1] - vals[0] >= vals[3] - vals[2] - 1e-12, (fam, A, B, e)


@pytest.mark.parametrize("fam", FAMS, ids=IDS)
def test_all_pairs_submodular_inequality_small(fam):
    """f(A) + f(B) >= f(A | B) + f(A & B) on every pair of subsets of a 5-set."""
    n = 5
    small = type(fam)(n) if not isinstance(fam, GraphCutLoss) else GraphCutLoss(
        n, [(0, 1), (1, 2), (2, 3), (3, 4), (0, 2), (1, 4)], unary=fam.unary
    )
    masks = all_masks(n)
    rng = np.random.default_rng(1)
    for theta in admissible_thetas(small, rng, 3):
        f = small.set_values(theta, masks)
        idx = np.arange(len(masks))
        union, inter = idx[:, None] | idx[None, :], idx[:, None] & idx[None, :]
        assert np.all(f[:, None] + f[None, :] >= f[union] + f[inter] - 1e-12)


@pytest.mark.parametrize("fam", FAMS, ids=IDS)
def test_lovasz_extension_equals_f_on_indicators(fam):
    rng = np.random.default_rng(2)
    for theta in admissible_thetas(fam, rng, 3):
        f = fam.set_values(theta, MASKS)
        np.testing.assert_allclose(fam.values(theta, MASKS.astype(float)), f, atol=1e-12)
        assert fam.set_value(theta, MASKS[5]) == pytest.approx(f[5])
        assert fam.set_value(theta, MASKS[5].astype(int)) == pytest.approx(f[5])
        assert f[0] == 0.0  # normalized: f(empty) = 0


@pytest.mark.parametrize("fam", FAMS, ids=IDS)
def test_set_values_bounded_by_scale(fam):
    rng = np.random.default_rng(3)
    low, high = fam.param_space.low, fam.param_space.high
    corners = [np.where(rng.random(fam.param_dim) < 0.5, low, high) for _ in range(20)]
    for theta in [fam.sample_param(rng) for _ in range(10)] + corners + [low, high]:
        assert np.all(np.abs(fam.set_values(theta, MASKS)) <= fam.scale + 1e-12)
    assert fam.bound(GroundSet(fam.n)) == fam.scale


@pytest.mark.parametrize("fam", FAMS, ids=IDS)
def test_lovasz_extension_midpoint_convex_and_interpolates(fam):
    rng = np.random.default_rng(4)
    for theta in admissible_thetas(fam, rng, 4):
        x, y = rng.random((2, 200, fam.n))
        lam = rng.random((200, 1))
        fx, fy = fam.values(theta, x), fam.values(theta, y)
        assert np.all(fam.values(theta, (x + y) / 2) <= (fx + fy) / 2 + 1e-12)
        mix = fam.values(theta, lam * x + (1 - lam) * y)
        assert np.all(mix <= lam[:, 0] * fx + (1 - lam[:, 0]) * fy + 1e-12)
        # positively homogeneous (f(empty) = 0) and equal to the chain's convex combination
        assert np.allclose(fam.values(theta, 0.5 * x), 0.5 * fx)


@pytest.mark.parametrize("fam", FAMS, ids=IDS)
def test_greedy_vector_is_in_base_polytope(fam):
    """g(S) <= f(S) for every S, with equality on the greedy chain and g([n]) = f([n])."""
    rng = np.random.default_rng(5)
    theta = fam.sample_param(rng)
    f = fam.set_values(theta, MASKS)
    for _ in range(10):
        x = rng.random(fam.n)
        g = fam.subgradient(theta, x)
        assert np.all(MASKS @ g <= f + 1e-12)
        assert g.sum() == pytest.approx(f[-1])
        assert g @ x == pytest.approx(fam.value(theta, x))


@pytest.mark.parametrize("fam", [f for f in FAMS if f.linear_in_theta],
                         ids=[repr(f) for f in FAMS if f.linear_in_theta])
def test_feature_map_matches(fam):
    rng = np.random.default_rng(6)
    theta = fam.sample_param(rng)
    np.testing.assert_allclose(fam.features(MASKS) @ theta, fam.set_values(theta, MASKS),
                               atol=1e-12)


def test_facility_location_truthfully_not_linear():
    fam = FacilityLocationLoss(3, n_customers=1, modular=False)
    w1, w2 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    S = np.array([True, True, False])
    assert fam.set_value(w1 + w2, S) != fam.set_value(w1, S) + fam.set_value(w2, S)
    assert not fam.linear_in_theta


def test_mask_validation():
    fam = ConcaveModularLoss(4)
    theta = fam.sample_param(np.random.default_rng(0))
    with pytest.raises(ValueError, match="shape"):
        fam.set_value(theta, np.zeros(5, dtype=bool))
    with pytest.raises(ValueError, match="0/1"):
        fam.set_value(theta, np.array([0.5, 0, 0, 1]))
    with pytest.raises(ValueError, match="shape"):
        fam.set_values(theta, np.zeros(4, dtype=bool))


def test_domain_outside_unit_cube_rejected():
    fam = GraphCutLoss(4)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        fam.bound(Ball(4))
    with pytest.raises(ValueError, match="dim"):
        fam.lipschitz(GroundSet(5))


@pytest.mark.parametrize(
    ("factory", "match"),
    [
        (lambda: GraphCutLoss(1), "n_nodes"),
        (lambda: GraphCutLoss(4, []), "edges"),
        (lambda: GraphCutLoss(4, [(0, 0)]), "self-loop"),
        (lambda: GraphCutLoss(4, [(0, 4)]), "edges"),
        (lambda: GraphCutLoss(4, scale=0.0), "scale"),
        (lambda: ConcaveModularLoss(4, []), "groups"),
        (lambda: ConcaveModularLoss(4, [[0, 0]]), "group 0"),
        (lambda: ConcaveModularLoss(4, [[1], []]), "group 1"),
        (lambda: ConcaveModularLoss(4, [[7]]), "group 0"),
        (lambda: FacilityLocationLoss(4, n_customers=0), "n_customers"),
        (lambda: FacilityLocationLoss(0), "n"),
    ],
)
def test_constructor_errors(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()


def test_ground_set_actions_evaluate_to_set_values():
    dom = GroundSet(N_SET)
    rng = np.random.default_rng(7)
    for fam in FAMS:
        assert isinstance(fam, SubmodularLoss)
        theta = fam.sample_param(rng)
        action = dom.action_space.sample()
        x = dom.to_point(action)
        assert fam.value(theta, x) == pytest.approx(fam.set_value(theta, action.astype(bool)))
