"""Adversaries: admissibility, means, the lower-bound gap, adaptivity."""

import gymnasium as gym
import numpy as np
import pytest

import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs.adversaries import (
    ADVERSARIES,
    AlternatingAdversary,
    DriftingAdversary,
    LowerBoundAdversary,
    PlantedAdversary,
    PunishFavoriteAdversary,
    StochasticAdversary,
    SwitchingAdversary,
    make_adversary,
)
from dp_online_envs.domains import Arms, Ball
from dp_online_envs.losses import AbsoluteLinearLoss, DistanceLoss, LinearLoss


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
        np.testing.assert_array_equal(loss.clip_param(th), th)  # no learner clips it
    # Sample mean within 5 standard errors of the declared mean.
    se = draws.std(axis=0) / np.sqrt(len(draws)) + 1e-12
    assert np.all(np.abs(draws.mean(axis=0) - mu) < 5 * se)


def test_stochastic_box_mean_has_unique_best_arm_by_gap():
    adv = StochasticAdversary(gap=0.1)
    _draws(adv, Arms(6), LinearLoss(6, "unit"), horizon=10)
    mu = np.sort(adv.mean_param)
    assert mu[1] - mu[0] >= 0.1 - 1e-12


@pytest.mark.parametrize("loss", [LinearLoss(5, "unit"), LinearLoss(5, "l2"), DistanceLoss(5)])
def test_zero_tilt_draws_exactly_the_untilted_losses(loss):
    a = _draws(StochasticAdversary(), Ball(5), loss, horizon=50, seed=3)
    b = _draws(StochasticAdversary(tilt=0.0), Ball(5), loss, horizon=50, seed=3)
    assert np.array_equal(a, b)  # the option draws nothing when off: seeded games unchanged


@pytest.mark.parametrize("loss", [DistanceLoss(5), AbsoluteLinearLoss(5)])
def test_planted_box_mean_sits_near_a_vertex_and_is_exact(loss):
    adv = PlantedAdversary(tilt=0.9)
    draws = _draws(adv, Ball(5), loss, seed=4)
    mu = adv.mean_param
    low, high = loss.param_space.low, loss.param_space.high
    # every coordinate within 10% of the box width from one of its ends
    frac = (mu - low) / (high - low)
    assert np.all(np.minimum(frac, 1.0 - frac) <= 0.1 + 1e-12)
    se = draws.std(axis=0) / np.sqrt(len(draws)) + 1e-12
    assert np.all(np.abs(draws.mean(axis=0) - mu) < 5 * se)
    assert np.all((draws == low) | (draws == high))  # still two-point draws


def test_planted_vertex_differs_across_seeds_and_repeats_within_one():
    loss = DistanceLoss(6)
    signs = []
    for seed in (0, 0, 1, 2):
        adv = PlantedAdversary()
        _draws(adv, Ball(6), loss, horizon=5, seed=seed)
        signs.append(tuple(np.sign(adv.mean_param)))
    assert signs[0] == signs[1] and len(set(signs)) > 1


def test_planted_symmetric_mean_is_pushed_to_the_boundary():
    loss = LinearLoss(5, "l2")
    adv = PlantedAdversary(tilt=1.0, spread=0.5)
    _draws(adv, Ball(5), loss, horizon=5)
    # a boundary point of the unit l2 ball, shrunk into (1 - spread) K
    assert np.linalg.norm(adv.mean_param) == pytest.approx(0.5)


@pytest.mark.parametrize("name", ["stochastic", "planted"])
def test_labelled_losses_get_admissible_labels(name):
    from dp_online_envs.losses import HingeLoss

    loss = HingeLoss(4)
    draws = _draws(make_adversary(name), Ball(4), loss, horizon=300)
    assert set(np.unique(draws[:, -1])) <= {-1.0, 1.0}  # a label, never 0 or +-1/2
    for th in draws[:50]:
        np.testing.assert_array_equal(loss.clip_param(th), th)  # no learner clips it


@pytest.mark.parametrize("tilt", [-0.1, 1.5, True, "0.5"])
def test_tilt_out_of_range_is_refused(tilt):
    with pytest.raises(ValueError, match="tilt"):
        StochasticAdversary(tilt=tilt)


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


# --------------------------------------------------------------- seeded replay
#: Every registered adversary, and whether its losses depend on the seed.
RANDOM = {"oblivious": True, "stochastic": True, "planted": True, "planted-vertex": True,
          "switching": True, "drifting": True, "lower-bound": True, "punish-favorite": True, "alternating": False}
REPLAY_ENVS = ["DPFullInfo-Experts-v0", "DPBandit-MAB-v0"]


def _seeded_game(env_id, adversary, seed, global_seed, horizon=40):
    """One game through the public API, with a play that reacts to the observations.

    The learner's action depends on everything it has observed, so an adaptive
    adversary sees the same points exactly when the losses so far are the same. The
    global numpy generator is seeded to ``global_seed`` first (and restored after): an
    adversary that draws from it instead of the env's seed gives a different game.
    """
    # planted-vertex needs parameters in a box [-w, w]
    kw = {"loss_kwargs": {"theta_set": "linf"}} if adversary == "planted-vertex" else {}
    env = gym.make(env_id, horizon=horizon, adversary=adversary, record_losses=True, **kw)
    state = np.random.get_state()
    np.random.seed(global_seed)
    try:
        obs, _ = env.reset(seed=seed)
        k = env.action_space.n if hasattr(env.action_space, "n") else env.action_space.shape[0]
        seen = np.zeros(k)
        observations, rewards, terminated, t = [], [], False, 0
        while not terminated:
            t += 1
            if env_id.startswith("DPBandit"):  # an arm picked from the losses seen so far
                action = int(np.floor(1e3 * abs(seen.sum()) + 3 * t)) % k
                obs, reward, terminated, _, _ = env.step(action)
                seen[action] += obs[0]
            else:  # weights on the experts from the summed losses
                w = np.exp(-2.0 * (seen - seen.min()))
                obs, reward, terminated, _, _ = env.step(w / w.sum())
                seen += obs
            observations.append(obs.copy())
            rewards.append(reward)
    finally:
        np.random.set_state(state)
    return env.unwrapped.played_losses().thetas, np.array(observations), np.array(rewards)


def test_every_adversary_is_listed_for_replay():
    assert set(RANDOM) == set(ADVERSARIES)


@pytest.mark.parametrize("env_id", REPLAY_ENVS)
@pytest.mark.parametrize("adversary", sorted(RANDOM))
def test_same_seed_replays_the_game_bit_for_bit(env_id, adversary):
    """Same env seed: identical losses, observations and rewards, whatever the global
    numpy generator holds; another seed: another game (for the random adversaries)."""
    thetas, obs, rewards = _seeded_game(env_id, adversary, seed=21, global_seed=1)
    again = _seeded_game(env_id, adversary, seed=21, global_seed=2)
    assert np.array_equal(thetas, again[0])
    assert np.array_equal(obs, again[1]) and np.array_equal(rewards, again[2])
    other = _seeded_game(env_id, adversary, seed=22, global_seed=1)[0]
    assert np.array_equal(thetas, other) != RANDOM[adversary]


@pytest.mark.parametrize("family", ["graph-cut", "concave-modular"])
def test_punish_favorite_on_a_submodular_family_punishes_the_played_set(family):
    """Through the feature map, the set played every round gets the largest loss of
    all 2^n sets for the graph cut (linear features of the set) and one of the top
    15% for the concave-of-modular family (sqrt features; brute force)."""
    import itertools

    base = gym.make("DPFullInfo-Submodular-v1", loss=family, n=6).unwrapped
    domain, loss = base.domain, base.loss
    adv = PunishFavoriteAdversary(noise=0.0)
    adv.reset(np.random.default_rng(0), domain, loss, 10)
    played = np.array([1, 1, 0, 1, 0, 0], dtype=float)
    for t in range(1, 5):
        adv.observe(played, adv.next_loss(t))
    theta = adv.next_loss(5)
    masks = np.array(list(itertools.product([0, 1], repeat=6)), dtype=bool)
    values = loss.set_values(theta, masks)
    mine = loss.set_value(theta, played.astype(bool))
    if family == "graph-cut":
        assert mine == pytest.approx(values.max())
    assert np.mean(values > mine + 1e-12) <= 0.15
    assert mine > np.median(values) + 0.1 * (values.max() - np.median(values))


def test_punish_favorite_refuses_a_family_without_features():
    odd = LinearLoss(4, "unit")
    odd.param_dim = 3  # a linear family whose parameter is not a point, without features
    with pytest.raises(ValueError, match="param_dim=3"):
        PunishFavoriteAdversary().reset(np.random.default_rng(0), Arms(4), odd, 10)


# ------------------------------------------------------------ planted vertex
def _planted_vertex(domain, seed, gap=0.9):
    adv = make_adversary("planted-vertex", gap=gap)
    adv.reset(np.random.default_rng(seed), domain, LinearLoss(domain.dim), 100)
    return adv


def _zero_one_polytopes():
    from dp_online_envs import domains as dom

    return [dom.UniformMatroid(10, 4), dom.Birkhoff(4), dom.FlowPolytope.grid(3, 4),
            dom.GraphicMatroid(5, [(i, j) for i in range(5) for j in range(i + 1, 5)]),
            dom.PartitionMatroid([[0, 2, 4, 6], [1, 3, 5, 7]], [2, 1])]


@pytest.mark.parametrize("domain", _zero_one_polytopes(), ids=repr)
def test_planted_vertex_on_a_zero_one_polytope_is_best_by_gap_times_the_hamming_distance(domain):
    """Brute force over every vertex: ``<mu, v - x*> = gap |v xor x*|``, so the planted
    vertex is the unique best with margin ``gap``; the mean is exact."""
    for seed in range(5):
        adv = _planted_vertex(domain, seed)
        verts = domain.vertices()
        x = adv.planted
        assert np.any(np.all(verts == x, axis=1))  # a vertex
        mu = adv.mean_param
        np.testing.assert_array_equal(mu, 0.9 * (1.0 - 2.0 * x))
        excess = verts @ mu - x @ mu
        np.testing.assert_allclose(excess, 0.9 * np.abs(verts - x).sum(axis=1), atol=1e-12)
        assert np.sort(excess)[1] >= 0.9 - 1e-12
        center = domain.center
        assert center @ mu - x @ mu == pytest.approx(0.9 * np.abs(center - x).sum())


def test_planted_vertex_on_the_base_polytope_has_the_stated_margin():
    """Base polytope of ``sqrt(|S|)``: brute force over its 5040 vertices, the greedy
    vertex of ``mu`` is the unique best and the margin is
    ``(2 gap / (n - 1)) min_k (2 g(k) - g(k-1) - g(k+1))``."""
    from dp_online_envs.domains import SubmodularBasePolytope

    n, gap = 7, 0.9
    domain = SubmodularBasePolytope.concave_cardinality(n)
    g = np.sqrt(np.arange(n + 1))
    stated = 2 * gap / (n - 1) * np.min(2 * g[1:-1] - g[:-2] - g[2:])
    for seed in range(3):
        adv = _planted_vertex(domain, seed, gap)
        mu = adv.mean_param
        np.testing.assert_allclose(np.sort(mu), gap * np.linspace(-1, 1, n), atol=1e-15)
        values = domain.vertices() @ mu
        order = np.argsort(values)
        np.testing.assert_allclose(domain.vertices()[order[0]], adv.planted, atol=1e-12)
        assert values[order[1]] - values[order[0]] == pytest.approx(stated, rel=1e-9)


def test_planted_vertex_draws_are_two_point_with_the_exact_mean():
    from dp_online_envs.domains import UniformMatroid

    adv = _planted_vertex(UniformMatroid(10, 4), 3)
    draws = np.array([adv.next_loss(t) for t in range(1, 4001)])
    assert set(np.unique(draws)) == {-1.0, 1.0}
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - adv.mean_param) < 5 * se)


@pytest.mark.parametrize("theta_set", ["unit", "l2", "l1"])
def test_planted_vertex_refuses_parameters_outside_a_symmetric_box(theta_set):
    with pytest.raises(ValueError, match="planted-vertex needs loss parameters in a box"):
        make_adversary("planted-vertex").reset(np.random.default_rng(0), Ball(3),
                                               LinearLoss(3, theta_set), 10)


@pytest.mark.parametrize("gap", [0.0, -0.5, 1.5])
def test_planted_vertex_gap_out_of_range_is_refused(gap):
    with pytest.raises(ValueError, match="gap"):
        make_adversary("planted-vertex", gap=gap)


# ------------------------------------------------------- planted set (submodular)
def _all_masks(n):
    import itertools

    return np.array(list(itertools.product([0, 1], repeat=n)), dtype=bool)


@pytest.mark.parametrize("n", [6, 8, 10])
def test_planted_set_of_a_concave_modular_loss_is_best_by_the_stated_margin(n):
    """Brute force over all 2^n sets: the planted set is the unique minimizer of the
    mean loss and every other set is worse by at least the stated margin."""
    from dp_online_envs.domains import GroundSet
    from dp_online_envs.losses import ConcaveModularLoss

    domain, loss = GroundSet(n), ConcaveModularLoss(n)
    masks = _all_masks(n)
    for seed in range(4):
        adv = make_adversary("planted-vertex")
        adv.reset(np.random.default_rng(seed), domain, loss, 100)
        assert adv.planted.sum() == n // 2
        values = loss.set_values(adv.mean_param, masks)
        order = np.argsort(values)
        np.testing.assert_array_equal(masks[order[0]], adv.planted.astype(bool))
        assert values[order[1]] - values[order[0]] >= adv.margin - 1e-12 > 0.0


def test_planted_mean_margin_is_tight_over_every_planted_set():
    """n = 8, default groups, gap = 0.9: the stated margin
    ``(m_min / (2 + m_min) - 0.05) / 8 = 0.01877`` is the least margin over all 256
    planted sets (a lower bound that is attained), and each of them is its mean's unique
    minimizer; the adversary's sets of size 4 have 0.0214."""
    from dp_online_envs.losses import ConcaveModularLoss

    loss = ConcaveModularLoss(8)
    masks = _all_masks(8)
    m_min = np.sqrt(3) - np.sqrt(2) + np.sqrt(8) - np.sqrt(7)
    formula = (m_min / (2 + m_min) - 0.05) / 8
    margins = []
    for planted in masks:
        mu, stated = loss.planted_mean(planted, 0.9)
        assert stated == pytest.approx(formula, rel=1e-12)
        assert np.all((mu >= 0.0) & (mu <= 1.0))
        values = loss.set_values(mu, masks)
        order = np.argsort(values)
        np.testing.assert_array_equal(masks[order[0]], planted)
        margins.append(values[order[1]] - values[order[0]])
    margins = np.array(margins)
    assert margins.min() == pytest.approx(formula, rel=1e-9)
    assert margins[masks.sum(axis=1) == 4].min() == pytest.approx(0.0214, abs=5e-5)


def test_planted_set_gap_too_small_for_a_margin_is_refused():
    """n = 8, default groups: c_max = 2, m_min = sqrt(3) - sqrt(2) + sqrt(8) - sqrt(7),
    so a gap must exceed (c_max - m_min) / (c_max + m_min) = 0.5997."""
    from dp_online_envs.domains import GroundSet
    from dp_online_envs.losses import ConcaveModularLoss

    m_min = np.sqrt(3) - np.sqrt(2) + np.sqrt(8) - np.sqrt(7)
    least = (2 - m_min) / (2 + m_min)
    adv = make_adversary("planted-vertex", gap=least - 1e-3)
    with pytest.raises(ValueError, match=r"plants no unique best set.*expected gap > 0\.5997"):
        adv.reset(np.random.default_rng(0), GroundSet(8), ConcaveModularLoss(8), 10)
    adv = make_adversary("planted-vertex", gap=least + 1e-3)
    adv.reset(np.random.default_rng(0), GroundSet(8), ConcaveModularLoss(8), 10)
    assert 0.0 < adv.margin < 1e-3 / 8


def test_planted_set_needs_a_ground_set_of_the_loss_size():
    from dp_online_envs.domains import Cube, GroundSet
    from dp_online_envs.losses import ConcaveModularLoss

    for domain in (GroundSet(6), Cube(8)):
        with pytest.raises(ValueError, match="plants a set of .* on a ground set of 8"):
            make_adversary("planted-vertex").reset(np.random.default_rng(0), domain,
                                                   ConcaveModularLoss(8), 10)


def test_planted_vertex_on_a_graph_cut_loss_names_the_families_it_plants():
    from dp_online_envs.domains import GroundSet
    from dp_online_envs.losses import GraphCutLoss

    with pytest.raises(ValueError, match="concave-modular loss on a ground set.*'stochastic'"):
        make_adversary("planted-vertex").reset(np.random.default_rng(0), GroundSet(4),
                                               GraphCutLoss(4), 10)


def test_planted_vertex_on_the_cube_has_the_stated_margin():
    """Cube [-1, 1]^10, brute force over its 1024 vertices: ``-sign(c)`` is the unique
    best with margin ``2 gap / 9`` and the center loses ``gap ||c||_1 = 0.9 * 50/9 = 5``."""
    from dp_online_envs.domains import Cube

    domain, gap = Cube(10), 0.9
    for seed in range(3):
        adv = _planted_vertex(domain, seed, gap)
        mu = adv.mean_param
        values = domain.vertices() @ mu
        order = np.argsort(values)
        np.testing.assert_array_equal(domain.vertices()[order[0]], -np.sign(mu))
        np.testing.assert_array_equal(adv.planted, -np.sign(mu))
        assert values[order[1]] - values[order[0]] == pytest.approx(2 * gap / 9, rel=1e-12)
        assert -values[order[0]] == pytest.approx(5.0, rel=1e-12)
