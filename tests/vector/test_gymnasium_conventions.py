"""The vector env keeps Gymnasium's vector-env conventions, and keeps them exactly as
``gym.make_vec(id, num_envs=B)`` (a ``SyncVectorEnv`` of B scalar games) does.

Each test plays the same seeds and actions through :class:`LinearVectorEnv` and the
``SyncVectorEnv`` and compares every returned value (observations, rewards, flags,
``info`` with its masks, across episode ends), under each autoreset mode and under
Gymnasium's vector wrappers; the doors that differ by design are named where tested.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import NormalizeObservation, RecordEpisodeStatistics

from dp_online_envs.envs.registry import build_env
from dp_online_envs.envs.vector_env import VECTOR_ENV_IDS, LinearVectorEnv

T, B = 6, 3


def _pair(env_id: str, mode: AutoresetMode = AutoresetMode.NEXT_STEP, num_envs: int = B,
          horizon: int = T, block: int | None = None, **options):
    """(vector, sync) of the same games (``block``: the vector env's loss block)."""
    blocks = {} if block is None else {"block": block}
    vector = LinearVectorEnv(env_id, num_envs, horizon=horizon, autoreset_mode=mode,
                              **blocks, **options)
    sync = gym.make_vec(env_id, num_envs=num_envs, horizon=horizon, autoreset_mode=mode,
                        **options)
    return vector, sync


def _same(a, b) -> bool:
    """Equal values, recursively (dicts, object arrays of arrays or summaries), zeros
    of the same sign."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            _same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) and a.dtype == object:
        return a.shape == b.shape and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):  # bit for bit: the sign of a zero counts too
        b = np.asarray(b)
        return (a.dtype == b.dtype and np.array_equal(a, b)
                and (a.dtype.kind != "f" or np.array_equal(np.signbit(a), np.signbit(b))))
    return a == b and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b))


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
    vector, sync = _pair(env_id, mode)
    assert vector.metadata["autoreset_mode"] is mode is sync.metadata["autoreset_mode"]
    steps = T if mode is AutoresetMode.DISABLED else 3 * T + 2
    runs = _play_both((vector, sync), steps)
    _assert_same_runs(runs)
    for obs, reward, terminated, truncated, _ in runs[0][1:]:
        assert vector.observation_space.contains(obs) and obs.dtype == np.float64
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
            vector.step(vector.action_space.sample())


def test_a_new_episode_differs_from_the_first_and_is_reproducible():
    vector, _ = _pair("DPFullInfo-Experts-v0")
    first = _play_both((vector,), 2 * T + 1)[0]
    again = _play_both((vector,), 2 * T + 1)[0]
    episode_1 = np.stack([s[0] for s in first[1:T + 1]])
    episode_2 = np.stack([s[0] for s in first[T + 2:]])
    assert not np.array_equal(episode_1, episode_2)
    _assert_same_runs([first, again])


# ------------------------------------------------------------------------ reset_mask
def test_an_all_true_reset_mask_resets_like_the_sync_vector_env():
    vector, sync = _pair("DPBandit-MAB-v0")
    mask = np.ones(B, dtype=bool)
    runs = []
    for env in (vector, sync):
        env.action_space.seed(1)
        values = [env.reset(seed=3)] + [env.step(env.action_space.sample()) for _ in range(2)]
        values.append(env.reset(seed=11, options={"reset_mask": mask.copy()}))
        values += [env.step(env.action_space.sample()) for _ in range(T + 1)]
        runs.append(values)
    _assert_same_runs(runs)
    fresh = _play_both((LinearVectorEnv("DPBandit-MAB-v0", B, horizon=T),), 1, seed=11)[0]
    assert _same(runs[0][3], fresh[0])


def test_bad_reset_masks_are_refused_as_by_the_sync_vector_env():
    vector, sync = _pair("DPBandit-MAB-v0")
    bad = [([True] * B, TypeError, "numpy array"),
           (np.ones(B + 1, dtype=bool), ValueError, "shape"),
           (np.ones(B, dtype=int), TypeError, "dtype"),
           (np.zeros(B, dtype=bool), ValueError, "reset_mask")]
    for mask, error, words in bad:
        for env in (vector, sync):
            with pytest.raises(error, match=words):
                env.reset(options={"reset_mask": mask})


def test_reset_takes_no_other_option():
    vector, _ = _pair("DPBandit-MAB-v0")
    with pytest.raises(ValueError, match=r"no options but reset_mask, got \['horizon'\]"):
        vector.reset(options={"horizon": 3})


# -------------------------------------------------- partial resets, staggered games
#: Staggered play: 4 games of 11 rounds, losses drawn 3 rounds at a time (so a game
#: stopped mid-way has rounds drawn ahead, and the rings wrap).
STAGGER_B, STAGGER_T, STAGGER_BLOCK = 4, 11, 3


def _mask(*games: int) -> np.ndarray:
    mask = np.zeros(STAGGER_B, dtype=bool)
    mask[list(games)] = True
    return mask


def _staggered(env, mode: AutoresetMode, steps: int = 40) -> list:
    """Every value ``reset`` and ``step`` return in a staggered play: games 0 and 2
    restarted at round 5 with new seeds (the seeds given to games 1 and 3 are ignored),
    game 1 at round 7 without a seed (mid-game: its stream continues as the scalar
    game's), every game without a seed at step 30 (mid-game, each at its own round);
    under ``DISABLED`` the games that end are restarted by mask right away."""
    env.action_space.seed(5)
    values = [env.reset(seed=[1, 2, 3, 4])]
    for i in range(steps):
        if i == 5:
            values.append(env.reset(seed=[100, 7, 102, 8], options={"reset_mask": _mask(0, 2)}))
        if i == 7:
            values.append(env.reset(options={"reset_mask": _mask(1)}))
        if i == 30:
            values.append(env.reset())
        values.append(env.step(env.action_space.sample()))
        done = values[-1][2] | values[-1][3]
        if mode is AutoresetMode.DISABLED and done.any():
            values.append(env.reset(options={"reset_mask": done.copy()}))
    return values


@pytest.mark.parametrize("mode", list(AutoresetMode))
@pytest.mark.parametrize("env_id", VECTOR_ENV_IDS)
def test_staggered_games_equal_the_sync_vector_env(env_id, mode):
    """Partial resets with and without seeds, mid-game and after the end, under each
    autoreset mode: every value equals the ``SyncVectorEnv``'s (each game's horizon,
    regret summary, autoreset and seeds its own), and so do the rounds each game has
    played."""
    vector, sync = _pair(env_id, mode, STAGGER_B, STAGGER_T, STAGGER_BLOCK)
    runs = [_staggered(env, mode) for env in (vector, sync)]
    _assert_same_runs(runs)
    steps = [v for v in runs[0] if len(v) == 5]
    ends = [tuple(np.flatnonzero(v[2]).tolist()) for v in steps if v[2].any()]
    assert {(3,), (0, 2), (1,)} <= set(ends)  # the games end at different steps
    if mode is AutoresetMode.NEXT_STEP:  # the step after game 1's end: it alone resets
        k = next(k for k, v in enumerate(steps) if v[2].tolist() == [False, True, False, False])
        after = steps[k + 1]
        assert after[1][1] == 0.0 and not after[0][1].any() and not after[2][1]
    assert vector.unwrapped.rounds.tolist() == [e.unwrapped.totals.rounds for e in sync.envs]
    assert vector.unwrapped.np_random_seed == tuple(  # the experimenter's record
        e.unwrapped.np_random_seed for e in sync.envs) == (100, 2, 102, 4)


@pytest.mark.parametrize("env_id", VECTOR_ENV_IDS)
def test_games_restarted_mid_way_are_the_scalar_games_of_their_seeds(env_id):
    """Games 0 and 2 restarted at round 5 with seeds 100 and 102: each sub-game's whole
    trajectory (observations, rewards, flags) and summary is that of the scalar env's
    game (``build_env``) with its seed, bit for bit, as is every later game (the
    autoreset continues each game's generators, as a scalar ``reset()``)."""
    T_ = STAGGER_T
    venv = LinearVectorEnv(env_id, STAGGER_B, horizon=T_, block=STAGGER_BLOCK)
    scalars = [build_env(env_id, horizon=T_) for _ in range(STAGGER_B)]
    venv.action_space.seed(3)
    obs, _ = venv.reset(seed=[1, 2, 3, 4])
    for b, env in enumerate(scalars):
        assert np.array_equal(obs[b], env.reset(seed=b + 1)[0])
    pending = np.zeros(STAGGER_B, dtype=bool)
    summaries = {b: [] for b in range(STAGGER_B)}
    for i in range(3 * T_ + 4):
        if i == 5:
            obs, _ = venv.reset(seed=[100, None, 102, None], options={"reset_mask": _mask(0, 2)})
            for b in (0, 2):
                assert np.array_equal(obs[b], scalars[b].reset(seed=100 + b)[0])
        actions = venv.action_space.sample()
        obs, reward, terminated, truncated, info = venv.step(actions)
        for b, env in enumerate(scalars):
            if pending[b]:  # NEXT_STEP: this step starts the game's next game
                row, r, done, info_b = env.reset()[0], 0.0, False, {}
            else:
                row, r, done, _, info_b = env.step(actions[b])
            assert np.array_equal(obs[b], row) and reward[b] == r and terminated[b] == done
            assert not truncated[b]
            if done:
                assert info_b["regret"].as_dict() == info["regret"][b].as_dict()
                summaries[b].append((i, info_b["regret"]))
            pending[b] = done
    assert [i for i, _ in summaries[1]] == [i for i, _ in summaries[3]] == [
        T_ - 1, 2 * T_, 3 * T_ + 1]
    assert [i for i, _ in summaries[0]] == [i for i, _ in summaries[2]] == [
        T_ + 4, 2 * T_ + 5]


def test_a_partial_reset_shows_the_last_observations_whatever_the_caller_did_to_them():
    """The rows of the games a mask leaves are their last observations, as the sync env
    keeps them, even after the caller wrote into the arrays it was given."""
    runs = []
    for env in _pair("DPFullInfo-Experts-v0", horizon=100):  # plain rounds and events
        env.action_space.seed(2)
        values = [env.reset(seed=1)]
        for _ in range(12):
            values.append(env.step(env.action_space.sample()))
            values[-1][0][:] = 9.0  # the caller's array
        values.append(env.reset(options={"reset_mask": np.array([True, False, False])}))
        runs.append(values)
    _assert_same_runs(runs)
    assert not runs[0][-1][0][0].any() and not (runs[0][-1][0][1:] == 9.0).any()


def test_a_stopped_game_blocks_the_step_until_it_is_reset():
    """Under ``DISABLED`` a step with a game over is refused, naming it, and plays
    nothing; resetting that game alone lets the others play on."""
    venv = LinearVectorEnv("DPBandit-MAB-v0", 3, horizon=4,
                           autoreset_mode=AutoresetMode.DISABLED)
    with pytest.raises(RuntimeError, match=r"games \[0, 1, 2\] .*have not started"):
        venv.step(np.zeros(3, dtype=int))
    venv.reset(seed=0)
    for _ in range(2):
        venv.step(np.zeros(3, dtype=int))
    venv.reset(options={"reset_mask": np.array([False, True, False])})
    for _ in range(2):
        terminated = venv.step(np.zeros(3, dtype=int))[2]
    assert terminated.tolist() == [True, False, True]
    before = venv.unwrapped.rounds.tolist()
    with pytest.raises(RuntimeError, match=r"games \[0, 2\] are over.*reset_mask"):
        venv.step(np.zeros(3, dtype=int))
    assert venv.unwrapped.rounds.tolist() == before == [4, 2, 4]
    venv.reset(options={"reset_mask": np.array([True, False, True])})
    assert venv.step(np.zeros(3, dtype=int))[2].tolist() == [False, False, False]
    assert venv.unwrapped.rounds.tolist() == [1, 3, 1]


def test_summaries_wait_for_every_game_as_the_sync_vector_env():
    vector, sync = _pair("DPBandit-MAB-v0", num_envs=3)
    _assert_same_runs(_play_both((vector, sync), T, seed=4))
    assert [s.as_dict() for s in vector.call("summary")] == [
        s.as_dict() for s in sync.call("summary")]
    for env in (vector, sync):
        env.reset(options={"reset_mask": np.array([False, True, False])})
        with pytest.raises(RuntimeError, match="withholds the regret summary|have not ended"):
            env.call("summary")
    with pytest.raises(RuntimeError, match="have not ended"):
        vector.summaries()


def test_actions_of_games_that_do_not_play_are_ignored():
    """The step after game 0's end autoresets it: its action is not checked nor played
    (an out-of-range arm, a point outside the domain), as in ``SyncVectorEnv``."""
    venv = LinearVectorEnv("DPBandit-MAB-v0", 2, horizon=3, n_arms=4)
    venv.reset(seed=0)
    venv.step(np.array([0, 0]))
    venv.reset(options={"reset_mask": np.array([False, True])})
    venv.step(np.array([0, 0]))
    assert venv.step(np.array([0, 0]))[2].tolist() == [True, False]
    assert venv.step(np.array([99, 1]))[2].tolist() == [False, True]  # game 0 resets
    with pytest.raises(ValueError, match=r"\[0, 4\), got \[99\]"):  # game 0 plays
        venv.step(np.array([99, 0]))
    assert venv.step(np.array([0, 99]))[1][1] == 0.0  # game 1 resets
    ball = LinearVectorEnv("DPFullInfo-Sphere-v1", 2, horizon=1, invalid_action="raise")
    ball.reset(seed=0)
    ball.step(np.zeros((2, 10)))
    far = np.stack([np.full(10, 5.0), np.zeros(10)])
    ball.reset(options={"reset_mask": np.array([False, True])})
    assert ball.step(far)[2].tolist() == [False, True]  # game 0 autoresets: not checked
    assert ball.unwrapped.projected_actions.tolist() == [0, 0]


# ------------------------------------------------------------------------------ seeds
def test_seeds_follow_gymnasiums_convention_and_the_scalar_games():
    vector, sync = _pair("DPFullInfo-Sphere-v1")
    runs = []
    for seed in (5, [5, 6, 7], [5, None, 7]):
        runs.append(_play_both((vector,), 3, seed=seed)[0])
    _assert_same_runs(runs[:2])  # 5 means [5, 6, 7]
    assert _same(runs[0][1][0][0], runs[2][1][0][0]) and _same(runs[0][1][0][2], runs[2][1][0][2])
    assert not np.array_equal(runs[0][1][0][1], runs[2][1][0][1])  # None: fresh entropy
    with pytest.raises(ValueError, match="2 seeds for num_envs=3"):
        vector.reset(seed=[1, 2])
    with pytest.raises(ValueError, match="seed"):
        vector.reset(seed=-1)
    vector.reset(seed=[4, 5, 6])
    sync.reset(seed=[4, 5, 6])
    for mine, theirs in zip(vector.np_random, sync.np_random):  # the learner's own:
        assert not np.array_equal(mine.random(4), theirs.random(4))  # not from the seeds
    assert vector.np_random_seed == sync.np_random_seed == (-1,) * B
    assert vector.unwrapped.np_random_seed == (4, 5, 6)  # the experimenter's record


# ------------------------------------------------------------- get_attr, call, close
def test_get_attr_and_call_answer_as_the_sync_vector_env_of_guards():
    vector, sync = _pair("DPBandit-MAB-v0")
    for env in (vector, sync):
        env.reset(seed=2)
    for name in ("problem", "np_random_seed", "render_mode", "action_space",
                 "observation_space"):  # Problem compares its domain by identity
        assert repr(vector.get_attr(name)) == repr(sync.get_attr(name))
    assert [repr(p) for p in vector.get_attr("problem")] == [repr(vector.problem)] * B
    assert [s.kwargs["horizon"] for s in vector.get_attr("spec")] == [T] * B
    for env in (vector, sync):
        with pytest.raises(RuntimeError, match="withholds the regret summary|have not ended"):
            env.get_attr("summary")
        with pytest.raises(AttributeError):
            env.get_attr("adversary")
        with pytest.raises(AttributeError):
            env.set_attr("horizon", [3] * B)
    _assert_same_runs(_play_both((vector, sync), T, seed=2))
    assert [s.as_dict() for s in vector.call("summary")] == [
        s.as_dict() for s in sync.call("summary")]
    assert vector.get_attr("summary") == tuple(vector.summaries())


def test_close_and_render_as_the_sync_vector_env():
    vector, sync = _pair("DPBandit-MAB-v0")
    for env in (vector, sync):
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


def test_normalize_observation_refuses_partial_resets_alike():
    """Gymnasium's wrapper keeps one running mean over all games and refuses a partial
    reset itself, above either env."""
    for env in (NormalizeObservation(e) for e in _pair("DPFullInfo-Cube-v1")):
        env.reset(seed=0)
        with pytest.raises(ValueError, match="does not support partial resets"):
            env.reset(options={"reset_mask": np.array([True, False, False])})


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_record_episode_statistics_counts_each_games_own_episodes(mode):
    """Staggered games: each reported episode is one game's T rounds, its return the sum
    of that game's last T rewards (in order, as the wrapper adds them), and a partial
    reset restarts the statistics of the games it restarts only. (Gymnasium 1.4's
    ``SyncVectorEnv`` pops ``reset_mask`` from the options, so the wrapper above it
    restarts every game's statistics on a partial reset; the vector env leaves the
    options alone.)"""
    def make():
        return LinearVectorEnv("DPFullInfo-Experts-v0", STAGGER_B, horizon=STAGGER_T,
                               block=STAGGER_BLOCK, autoreset_mode=mode)

    raw = [v for v in _staggered(make(), mode) if len(v) == 5]
    wrapped = RecordEpisodeStatistics(make())
    recorded = [v for v in _staggered(wrapped, mode) if len(v) == 5]
    _assert_same_runs([[v[:4] for v in raw], [v[:4] for v in recorded]])
    episodes = 0
    for k, (step, seen) in enumerate(zip(raw, recorded)):
        ended = np.flatnonzero(step[2])
        assert ("episode" in seen[4]) == bool(ended.size)
        for b in ended:
            expected = 0.0
            for earlier in raw[k - STAGGER_T + 1:k + 1]:
                expected += earlier[1][b]
            assert seen[4]["episode"]["l"][b] == STAGGER_T
            assert seen[4]["episode"]["r"][b] == expected
            episodes += 1
    assert episodes == wrapped.episode_count >= 8
