"""The batched env keeps Gymnasium's vector-env conventions, and keeps them exactly as
``gym.make_vec(id, num_envs=B)`` (a ``SyncVectorEnv`` of B scalar games) does.

Each test plays the same seeds and actions through :class:`LinearVectorEnv` and the
``SyncVectorEnv`` and compares every returned value (observations, rewards, flags,
``info`` with its masks, across episode ends), under each autoreset mode and under
Gymnasium's vector wrappers; the doors that differ by design are named where tested.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import NormalizeObservation, RecordEpisodeStatistics

from dp_online_envs.envs.vector_env import VECTOR_ENV_IDS, LinearVectorEnv

T, B = 6, 3


def _pair(env_id: str, mode: AutoresetMode = AutoresetMode.NEXT_STEP, **options):
    """(batched, sync) of the same games."""
    batched = LinearVectorEnv(env_id, B, horizon=T, autoreset_mode=mode, **options)
    sync = gym.make_vec(env_id, num_envs=B, horizon=T, vector_kwargs={"autoreset_mode": mode},
                        **options)
    return batched, sync


def _same(a, b) -> bool:
    """Equal values, recursively (dicts, object arrays of arrays or summaries)."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            _same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) and a.dtype == object:
        return a.shape == b.shape and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == np.asarray(b).dtype and np.array_equal(a, b)
    return a == b


def _play_both(envs, steps: int, seed=7, actions_seed: int = 0) -> list[list]:
    """Every value ``reset`` and ``steps`` steps return, for each env."""
    out = []
    for env in envs:
        env.action_space.seed(actions_seed)
        values = [env.reset(seed=seed)]
        values += [env.step(env.action_space.sample()) for _ in range(steps)]
        out.append(values)
    return out


def _assert_same_runs(runs: list[list]) -> None:
    for t, (a, b) in enumerate(zip(*runs)):
        assert len(a) == len(b)
        for i, (x, y) in enumerate(zip(a, b)):
            assert _same(x, y), f"step {t}, value {i}: {x!r} != {y!r}"


# --------------------------------------------------------------- shapes and autoreset
@pytest.mark.parametrize("mode", list(AutoresetMode))
@pytest.mark.parametrize("env_id", VECTOR_ENV_IDS)
def test_every_value_equals_the_sync_vector_env_across_episode_ends(env_id, mode):
    """Three episodes under NEXT_STEP and SAME_STEP (the new games continue each game's
    generators, as a scalar ``reset()``); one under DISABLED."""
    batched, sync = _pair(env_id, mode)
    assert batched.metadata["autoreset_mode"] is mode is sync.metadata["autoreset_mode"]
    steps = T if mode is AutoresetMode.DISABLED else 3 * T + 2
    runs = _play_both((batched, sync), steps)
    _assert_same_runs(runs)
    for obs, reward, terminated, truncated, _ in runs[0][1:]:
        assert batched.observation_space.contains(obs) and obs.dtype == np.float64
        assert reward.shape == (B,) and reward.dtype == np.float64
        assert terminated.dtype == truncated.dtype == np.bool_ and not truncated.any()
    ends = [t for t, step in enumerate(runs[0][1:], 1) if step[2].all()]
    if mode is AutoresetMode.NEXT_STEP:  # T, then a reset step, T rounds, ...
        assert ends == [T, 2 * T + 1, 3 * T + 2]
        assert runs[0][T + 1][4] == {} and not runs[0][T + 1][1].any()
    elif mode is AutoresetMode.SAME_STEP:
        assert ends == [T, 2 * T, 3 * T]
        assert set(runs[0][T][4]) == {"final_obs", "_final_obs", "final_info", "_final_info"}
        assert not runs[0][T][0].any()  # the new games' first observations
    else:
        assert ends == [T]
        with pytest.raises(RuntimeError, match="call reset"):
            batched.step(batched.action_space.sample())


def test_a_new_episode_differs_from_the_first_and_is_reproducible():
    batched, _ = _pair("DPFullInfo-Experts-v0")
    first = _play_both((batched,), 2 * T + 1)[0]
    again = _play_both((batched,), 2 * T + 1)[0]
    episode_1 = np.stack([s[0] for s in first[1:T + 1]])
    episode_2 = np.stack([s[0] for s in first[T + 2:]])
    assert not np.array_equal(episode_1, episode_2)
    _assert_same_runs([first, again])


# ------------------------------------------------------------------------ reset_mask
def test_an_all_true_reset_mask_resets_like_the_sync_vector_env():
    batched, sync = _pair("DPBandit-MAB-v0")
    mask = np.ones(B, dtype=bool)
    runs = []
    for env in (batched, sync):
        env.action_space.seed(1)
        values = [env.reset(seed=3)] + [env.step(env.action_space.sample()) for _ in range(2)]
        values.append(env.reset(seed=11, options={"reset_mask": mask.copy()}))
        values += [env.step(env.action_space.sample()) for _ in range(T + 1)]
        runs.append(values)
    _assert_same_runs(runs)
    fresh = _play_both((LinearVectorEnv("DPBandit-MAB-v0", B, horizon=T),), 1, seed=11)[0]
    assert _same(runs[0][3], fresh[0])


def test_bad_reset_masks_are_refused_as_by_the_sync_vector_env():
    batched, sync = _pair("DPBandit-MAB-v0")
    bad = [([True] * B, TypeError, "numpy array"),
           (np.ones(B + 1, dtype=bool), ValueError, "shape"),
           (np.ones(B, dtype=int), TypeError, "dtype"),
           (np.zeros(B, dtype=bool), ValueError, "reset_mask")]
    for mask, error, words in bad:
        for env in (batched, sync):
            with pytest.raises(error, match=words):
                env.reset(options={"reset_mask": mask})


def test_a_partial_reset_mask_is_refused_by_the_lockstep_games():
    """The one reset the batched games do not offer (sync resets game 0 alone)."""
    batched, sync = _pair("DPBandit-MAB-v0")
    batched.reset(seed=0)
    mask = np.array([True, False, False])
    with pytest.raises(ValueError, match=r"some games but not all.*lockstep.*make_vec"):
        batched.reset(options={"reset_mask": mask})
    sync.reset(seed=0)
    sync.reset(options={"reset_mask": mask})
    with pytest.raises(ValueError, match=r"no options but reset_mask, got \['horizon'\]"):
        batched.reset(options={"horizon": 3})


# ------------------------------------------------------------------------------ seeds
def test_seeds_follow_gymnasiums_convention_and_the_scalar_games():
    batched, sync = _pair("DPFullInfo-Sphere-v1")
    runs = []
    for seed in (5, [5, 6, 7], [5, None, 7]):
        runs.append(_play_both((batched,), 3, seed=seed)[0])
    _assert_same_runs(runs[:2])  # 5 means [5, 6, 7]
    assert _same(runs[0][1][0][0], runs[2][1][0][0]) and _same(runs[0][1][0][2], runs[2][1][0][2])
    assert not np.array_equal(runs[0][1][0][1], runs[2][1][0][1])  # None: fresh entropy
    with pytest.raises(ValueError, match="2 seeds for num_envs=3"):
        batched.reset(seed=[1, 2])
    with pytest.raises(ValueError, match="seed"):
        batched.reset(seed=-1)
    batched.reset(seed=[4, 5, 6])
    sync.reset(seed=[4, 5, 6])
    for mine, theirs in zip(batched.np_random, sync.np_random):  # the learner's own
        assert np.array_equal(mine.random(4), theirs.random(4))
    assert batched.np_random_seed == sync.np_random_seed == (-1,) * B
    assert batched.unwrapped.np_random_seed == (4, 5, 6)  # the experimenter's record


# ------------------------------------------------------------- get_attr, call, close
def test_get_attr_and_call_answer_as_the_sync_vector_env_of_guards():
    batched, sync = _pair("DPBandit-MAB-v0")
    for env in (batched, sync):
        env.reset(seed=2)
    for name in ("problem", "np_random_seed", "render_mode", "action_space",
                 "observation_space"):  # Problem compares its domain by identity
        assert repr(batched.get_attr(name)) == repr(sync.get_attr(name))
    assert batched.get_attr("problem") == (batched.problem,) * B
    assert [s.kwargs["horizon"] for s in batched.get_attr("spec")] == [T] * B
    for env in (batched, sync):
        with pytest.raises(RuntimeError, match="withholds the regret summary|have not ended"):
            env.get_attr("summary")
        with pytest.raises(AttributeError):
            env.get_attr("adversary")
        with pytest.raises(AttributeError):
            env.set_attr("horizon", [3] * B)
    _assert_same_runs(_play_both((batched, sync), T, seed=2))
    assert [s.as_dict() for s in batched.call("summary")] == [
        s.as_dict() for s in sync.call("summary")]
    assert batched.get_attr("summary") == tuple(batched.summaries())


def test_close_and_render_as_the_sync_vector_env():
    batched, sync = _pair("DPBandit-MAB-v0")
    for env in (batched, sync):
        env.reset(seed=0)
        with pytest.warns(UserWarning, match="render"):
            assert env.render() == (None,) * B
        env.close()
        assert env.closed


# -------------------------------------------------------------- Gymnasium's wrappers
def test_record_episode_statistics_counts_the_same_episodes():
    envs = [RecordEpisodeStatistics(e) for e in _pair("DPFullInfo-Experts-v0")]
    runs = _play_both(envs, 2 * T + 1)
    ends = [[step[4] for step in run[1:] if "episode" in step[4]] for run in runs]
    assert len(ends[0]) == len(ends[1]) == 2
    for mine, theirs in zip(*ends):
        assert np.array_equal(mine["episode"]["r"], theirs["episode"]["r"])
        assert np.array_equal(mine["episode"]["l"], [T] * B)
        assert _same(mine["regret"], theirs["regret"])
    assert list(envs[0].return_queue) == list(envs[1].return_queue)


def test_normalize_observation_sees_the_same_observations():
    envs = [NormalizeObservation(e) for e in _pair("DPFullInfo-Cube-v1")]
    runs = _play_both(envs, T + 2)
    _assert_same_runs(runs)
    assert np.array_equal(envs[0].obs_rms.mean, envs[1].obs_rms.mean)
