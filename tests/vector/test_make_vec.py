"""``gym.make_vec`` and the opt-in vector env.

``gym.make_vec(id, num_envs=B)`` is, for every id, Gymnasium's ``SyncVectorEnv`` of B
scalar games with its own doors guarded (:class:`GuardedSyncVectorEnv`, every id's
vector entry point, which Gymnasium 1.4 makes the default mode); Gymnasium's own
``SyncVectorEnv`` is ``vectorization_mode="sync"``. The vector games are the opt-in
:class:`LinearVectorEnv` (or :func:`make_vector_env`), whose games equal the scalar
games seed by seed and whose own spec remakes it through ``gym.make_vec``.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec
from gymnasium.vector import AutoresetMode
from test_vector_games import ENV_SEEDS, PAIRS, assert_same_games

from dp_online_envs import ENV_IDS
from dp_online_envs.envs.sync_vector import SYNC_ENTRY_POINT, GuardedSyncVectorEnv
from dp_online_envs.envs.vector_env import (
    VECTOR_ENTRY_POINT,
    VECTOR_ENV_IDS,
    LinearVectorEnv,
    make_vector_env,
)

B = len(ENV_SEEDS)
#: One learner per id with a vector path: the first of its pairs.
FIRST_PAIR = {p[0]: p for p in reversed(PAIRS)}


def test_every_id_with_a_vector_path_has_a_pair():
    assert set(FIRST_PAIR) == set(VECTOR_ENV_IDS)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_make_vec_default_is_the_guarded_sync_vector_env_for_every_id(env_id):
    envs = gym.make_vec(env_id, num_envs=2, horizon=5)
    assert type(envs) is GuardedSyncVectorEnv and isinstance(envs, gym.vector.SyncVectorEnv)
    assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert envs.spec.kwargs["vectorization_mode"] == "vector_entry_point"
    assert gym.spec(env_id).vector_entry_point == SYNC_ENTRY_POINT
    assert type(gym.make_vec(envs.spec)) is GuardedSyncVectorEnv  # its spec remakes it
    assert type(gym.make_vec(env_id, num_envs=2, vectorization_mode="sync")) is \
        gym.vector.SyncVectorEnv  # Gymnasium's own, one argument away


@pytest.mark.parametrize("mode", list(AutoresetMode))
def test_the_guarded_sync_env_plays_as_gymnasiums_sync_env(mode):
    """Same seeds and actions, every returned value equal (across episode ends)."""
    guarded = gym.make_vec("DPFullInfo-Sphere-v1", num_envs=3, horizon=4, autoreset_mode=mode)
    plain = gym.make_vec("DPFullInfo-Sphere-v1", num_envs=3, horizon=4,
                         vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode})
    assert guarded.metadata["autoreset_mode"] is plain.metadata["autoreset_mode"] is mode
    runs = []
    for envs in (guarded, plain):
        rng = np.random.default_rng(0)
        out = [envs.reset(seed=[5, 6, 7])]
        for _ in range(10):
            if mode is AutoresetMode.DISABLED and out[-1][2:3] and out[-1][2].any():
                out.append(envs.reset(options={"reset_mask": out[-1][2].copy()}))
            out.append(envs.step(rng.standard_normal((3, 10)) * 0.1))
        runs.append(repr(out))
    assert runs[0] == runs[1]


def test_the_guarded_sync_env_refuses_bad_settings_in_one_line():
    with pytest.raises(ValueError, match=r"num_envs=0 rejected: expected an integer >= 1"):
        gym.make_vec("DPBandit-MAB-v0", num_envs=0)
    with pytest.raises(ValueError, match=r"autoreset_mode='sometimes', expected one of"):
        gym.make_vec("DPBandit-MAB-v0", num_envs=2, autoreset_mode="sometimes")
    with pytest.raises(TypeError, match="colour"):
        gym.make_vec("DPBandit-MAB-v0", num_envs=2, colour=1)


@pytest.mark.parametrize("env_id", VECTOR_ENV_IDS)
def test_the_vector_entry_point_builds_the_vector_env_of_the_scalar_games(env_id):
    venv = make_vector_env(num_envs=B, env_id=env_id, horizon=40)
    assert type(venv) is LinearVectorEnv and venv.num_envs == B
    assert venv.spec.vector_entry_point == VECTOR_ENTRY_POINT
    _, name, eps, delta = FIRST_PAIR[env_id]
    assert_same_games(env_id, name, 40, eps, delta, venv=venv)


def test_the_vector_spec_remakes_the_vector_env():
    venv = LinearVectorEnv("DPBandit-MAB-v0", 3, horizon=7, n_arms=4, block=5,
                           autoreset_mode=AutoresetMode.SAME_STEP)
    assert venv.spec.kwargs["vectorization_mode"] == "vector_entry_point"
    again = gym.make_vec(EnvSpec.from_json(venv.spec.to_json()))  # the spec remakes it
    assert type(again) is LinearVectorEnv and again.num_envs == 3
    assert again.problem.horizon == 7
    assert again.single_action_space == gym.spaces.Discrete(4)
    assert again.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert again.unwrapped.block == 5
    twice = gym.make_vec(again.spec)  # gym.make_vec's own spec of it remakes it too
    assert type(twice) is LinearVectorEnv and twice.num_envs == 3


def test_settings_the_vector_env_refuses_name_themselves_and_the_default_mode():
    with pytest.raises(ValueError, match=r"adaptive.*gym.make_vec\('DPBandit-MAB-v0'"):
        make_vector_env(num_envs=2, env_id="DPBandit-MAB-v0", adversary="punish-favorite")
    with pytest.raises(ValueError, match=r"linear losses.*B scalar games"):
        make_vector_env(num_envs=2, env_id="DPFullInfo-Matroid-v1", loss="distance")
    with pytest.raises(ValueError, match="max_episode_steps"):
        make_vector_env(num_envs=2, env_id="DPBandit-MAB-v0", max_episode_steps=3)
    with pytest.raises(TypeError, match="unknown option"):
        make_vector_env(num_envs=2, env_id="DPBandit-MAB-v0", arms=3)
    with pytest.raises(ValueError, match=r"autoreset_mode='sometimes'.*NextStep"):
        LinearVectorEnv("DPBandit-MAB-v0", 2, autoreset_mode="sometimes")
    sync = gym.make_vec("DPBandit-MAB-v0", num_envs=2, adversary="punish-favorite")
    assert isinstance(sync, gym.vector.SyncVectorEnv)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_specs_round_trip_through_json(env_id):
    spec = gym.spec(env_id)
    again = EnvSpec.from_json(spec.to_json())
    assert again == spec and again.additional_wrappers == ()
    assert again.vector_entry_point == SYNC_ENTRY_POINT


def test_an_integer_seed_seeds_game_b_with_seed_plus_b():
    """Gymnasium's convention for ``reset(seed=s)`` of a vector env: sub-env ``b`` gets
    ``s + b`` (distinct games, not B copies of one), as the list form spells out."""
    venv = LinearVectorEnv("DPBandit-MAB-v0", num_envs=3, horizon=50)
    arms = np.zeros(3, dtype=np.int64)

    def losses(seed):
        venv.reset(seed=seed)
        return np.stack([venv.step(arms)[1] for _ in range(50)])

    by_int, by_list = losses(7), losses([7, 8, 9])
    np.testing.assert_array_equal(by_int, by_list)
    assert not np.array_equal(by_int[:, 0], by_int[:, 1])
