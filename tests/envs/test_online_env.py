"""OnlineLearningEnv: bad input, projection, recording and replay."""

import numpy as np
import pytest

from dp_online_envs import InvalidActionError, OnlineLearningEnv
from dp_online_envs.adversaries import ObliviousAdversary, ReplayAdversary
from dp_online_envs.domains import Arms, Ball, GroundSet, UniformMatroid
from dp_online_envs.envs.online_env import ROUND_INFO_KEY, RoundRecord
from dp_online_envs.losses import DistanceLoss, LinearLoss


def _env(**kw):
    return OnlineLearningEnv(Ball(3), LinearLoss(3, "l2"), "oblivious", feedback="full",
                             horizon=10, **kw)


@pytest.mark.parametrize("bad", [np.array([np.nan, 0, 0]), np.array([np.inf, 0, 0]),
                                 np.zeros(4), np.zeros((3, 1)), np.array([0.5j, 0, 0]),
                                 [0j, 0j, 0j]])
def test_nan_inf_and_shape_always_raise_and_change_nothing(bad):
    env = _env()
    env.reset(seed=0)
    env.step(np.zeros(3))
    def state():
        totals = env.totals
        return (totals.rounds, totals.learner_loss, totals.projected_actions,
                env.adversary.np_random.bit_generator.state)

    before = state()
    with pytest.raises(ValueError):
        env.step(bad)
    assert state() == before


def test_outside_action_projected_and_counted_by_default():
    env = _env()
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.array([3.0, 4.0, 0.0]))
    assert info.keys() == {ROUND_INFO_KEY}
    record = RoundRecord.of(info)
    assert record.projected and env.totals.projected_actions == 1
    np.testing.assert_allclose(record.point, [0.6, 0.8, 0.0])


def test_outside_action_raises_with_distance_when_asked():
    env = _env(invalid_action="raise")
    env.reset(seed=0)
    with pytest.raises(InvalidActionError, match="4") as err:
        env.step(np.array([3.0, 4.0, 0.0]))
    assert err.value.distance == pytest.approx(4.0)
    assert env.round == 0


def test_bad_arm_index_raises():
    env = OnlineLearningEnv(Arms(4), LinearLoss(4, "unit"), horizon=5)
    env.reset(seed=0)
    for bad in (4, -1, 1.5):
        with pytest.raises(ValueError):
            env.step(bad)
    assert env.round == 0


def test_bad_subset_raises():
    from dp_online_envs.losses import ConcaveModularLoss

    env = OnlineLearningEnv(GroundSet(4), ConcaveModularLoss(4), horizon=5)
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step(np.array([0, 1, 2, 0]))


def test_constructor_errors_name_the_bad_value():
    with pytest.raises(ValueError, match="invalid_action"):
        _env(invalid_action="ignore")
    with pytest.raises(ValueError, match="feedback"):
        OnlineLearningEnv(Ball(3), LinearLoss(3), feedback="partial")
    with pytest.raises(ValueError, match="unknown adversary"):
        OnlineLearningEnv(Ball(3), LinearLoss(3), adversary="nasty")


def test_step_after_end_raises():
    env = _env()
    env.reset(seed=0)
    for _ in range(10):
        *_, term, _, _ = env.step(np.zeros(3))
    assert term
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(3))


def test_record_and_replay_reproduce_losses_exactly():
    domain, loss = UniformMatroid(6, 2), DistanceLoss(6)
    env = OnlineLearningEnv(domain, loss, ObliviousAdversary(), horizon=30, record_losses=True)
    env.reset(seed=7)
    actions = [domain.center + 0.01 * k * np.ones(6) / 6 for k in range(30)]
    losses = [RoundRecord.of(env.step(a)[4]).loss for a in actions]
    seq = env.played_losses()
    assert len(seq) == 30

    replay = OnlineLearningEnv(domain, loss, ReplayAdversary(seq), horizon=30)
    replay.reset(seed=999)  # the seed does not matter for a replay
    assert [RoundRecord.of(replay.step(a)[4]).loss for a in actions] == losses

    neighbour = seq.replace(5, np.zeros(loss.param_dim))
    diff = np.flatnonzero(np.any(neighbour.thetas != seq.thetas, axis=1))
    assert diff.tolist() == [4]
    with pytest.raises(ValueError):
        seq.replace(31, np.zeros(loss.param_dim))


def test_adversary_draws_come_from_its_own_generator_seeded_at_reset():
    env = _env()
    env.reset(seed=3)
    a = [RoundRecord.of(env.step(np.zeros(3))[4]).theta.copy() for _ in range(5)]
    np.random.seed(0)  # the global generator must not matter
    env.reset(seed=3)
    assert env.adversary.np_random is not env.np_random
    env.np_random.random(100)  # nor the env's public generator
    b = [RoundRecord.of(env.step(np.zeros(3))[4]).theta.copy() for _ in range(5)]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    # the adversary's stream is PCG64(SeedSequence(seed)), as it always was
    twin = np.random.Generator(np.random.PCG64(np.random.SeedSequence(3)))
    expected = [env.loss.sample_param(twin) for _ in range(5)]
    assert all(np.array_equal(x, y) for x, y in zip(a, expected))


def test_the_env_owns_the_totals_and_they_are_the_exact_sums():
    """The totals are the env's PlayTotals: made in __init__, renewed by reset, and equal
    to the round-by-round sums of the records (same order of additions)."""
    env = _env()
    assert (env.round, env.totals.learner_loss, env.totals.projected_actions) == (0, 0.0, 0)
    env.reset(seed=1)
    records = [RoundRecord.of(env.step(a)[4])
               for a in (np.zeros(3), np.array([2.0, 0, 0]), np.full(3, 0.1), np.ones(3))]
    loss = 0.0
    for r in records:
        loss += r.loss
    assert env.totals.rounds == env.round == 4
    assert env.totals.learner_loss == loss
    assert env.totals.projected_actions == 2
    env.reset(seed=1)
    assert (env.round, env.totals.learner_loss, env.totals.projected_actions) == (0, 0.0, 0)


def test_a_wrapper_without_the_round_record_is_named():
    with pytest.raises(TypeError, match="RoundRecord.*OnlineLearningEnv"):
        RoundRecord.of({"loss": 1.0})
