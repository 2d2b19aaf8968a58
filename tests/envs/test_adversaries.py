"""Adversaries: admissibility, means, the lower-bound gap, adaptivity."""

import numpy as np
import pytest

from dp_online_envs.adversaries import (
    AlternatingAdversary,
    DriftingAdversary,
    LowerBoundAdversary,
    PunishFavoriteAdversary,
    StochasticAdversary,
    SwitchingAdversary,
    make_adversary,
)
from dp_online_envs.domains import Arms, Ball
from dp_online_envs.losses import LinearLoss


def _draws(adv, domain, loss, horizon=4000, seed=0):
    adv.reset(np.random.default_rng(seed), domain, loss, horizon)
    return np.array([adv.next_loss(t) for t in range(1, horizon + 1)])


@pytest.mark.parametrize("theta_set", ["unit", "linf", "l2", "l1"])
def test_stochastic_mean_is_exact_and_draws_admissible(theta_set):
    loss = LinearLoss(5, theta_set)
    adv = StochasticAdversary()
    draws = _draws(adv, Ball(5), loss)
    mu = adv.mean_param
    assert mu is not None
    for th in draws[:200]:
        np.testing.assert_allclose(loss.clip_param(th), th, atol=1e-12)
    # Sample mean within 5 standard errors of the declared mean.
    se = draws.std(axis=0) / np.sqrt(len(draws)) + 1e-12
    assert np.all(np.abs(draws.mean(axis=0) - mu) < 5 * se)


def test_stochastic_box_mean_has_unique_best_arm_by_gap():
    adv = StochasticAdversary(gap=0.1)
    _draws(adv, Arms(6), LinearLoss(6, "unit"), horizon=10)
    mu = np.sort(adv.mean_param)
    assert mu[1] - mu[0] >= 0.1 - 1e-12


def test_lower_bound_gap_scales_as_sqrt_k_over_t():
    for k, t in [(10, 1000), (10, 100000), (4, 10000)]:
        adv = LowerBoundAdversary()
        _draws(adv, Arms(k), LinearLoss(k, "unit"), horizon=t if t < 5000 else 10, seed=1)
        adv.reset(np.random.default_rng(1), Arms(k), LinearLoss(k, "unit"), t)
        mu = adv.mean_param
        assert adv.instance_gap == pytest.approx(min(0.25, np.sqrt(k / t)))
        assert np.sort(mu)[1] - np.sort(mu)[0] == pytest.approx(adv.instance_gap)
        assert np.count_nonzero(mu == 0.5) == k - 1


def test_lower_bound_refuses_non_box_losses():
    with pytest.raises(ValueError, match="box"):
        LowerBoundAdversary().reset(np.random.default_rng(0), Ball(3), LinearLoss(3, "l2"), 10)


def test_switching_changes_mean_every_period():
    adv = SwitchingAdversary(period=100)
    draws = _draws(adv, Arms(3), LinearLoss(3, "unit"), horizon=400)
    means = draws.reshape(4, 100, 3).mean(axis=1)
    assert adv.mean_param is None
    assert np.abs(np.diff(means, axis=0)).max() > 0.1


def test_drifting_stays_admissible():
    loss = LinearLoss(4, "l2")
    for th in _draws(DriftingAdversary(rate=0.1), Ball(4), loss, horizon=300):
        assert np.linalg.norm(th) <= 1 + 1e-9


def test_punish_favorite_gives_most_played_arm_the_top_loss():
    domain, loss = Arms(4), LinearLoss(4, "unit")
    adv = PunishFavoriteAdversary(noise=0.0)
    adv.reset(np.random.default_rng(0), domain, loss, 10)
    for arm in (2, 2, 2, 1):
        theta = adv.next_loss(1)
        adv.observe(domain.to_point(arm), theta)
    theta = adv.next_loss(5)
    assert int(np.argmax(theta)) == 2 and theta[2] == pytest.approx(1.0)


def test_alternating_defeats_follow_the_leader():
    domain, loss = Arms(2), LinearLoss(2, "unit")
    adv = AlternatingAdversary()
    adv.reset(np.random.default_rng(0), domain, loss, 100)
    cum, ftl_loss = np.zeros(2), 0.0
    for t in range(1, 101):
        theta = adv.next_loss(t)
        ftl_loss += theta[int(np.argmin(cum))]
        cum += theta
    assert ftl_loss - cum.min() > 0.4 * 100  # linear regret


def test_make_adversary_lists_valid_names():
    with pytest.raises(ValueError, match="valid:.*stochastic"):
        make_adversary("greedy")
