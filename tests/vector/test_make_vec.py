"""``gym.make_vec``: the registered vector entry point of the linear-loss ids.

``gym.make_vec(id, num_envs=B, vectorization_mode="vector_entry_point")`` (and
Gymnasium's default mode, which picks a registered vector entry point) builds the
batched :class:`LinearVectorEnv`, whose games equal the scalar games seed by seed;
``"sync"`` still builds B scalar envs; ids without a batched path have no vector entry
point, and Gymnasium refuses that mode for them.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec
from test_vector_games import ENV_SEEDS, PAIRS, assert_same_games

from dp_online_envs import ENV_IDS
from dp_online_envs.envs.vector_env import (
    VECTOR_ENTRY_POINT,
    VECTOR_ENV_IDS,
    LinearVectorEnv,
    make_vector_env,
)

B = len(ENV_SEEDS)
#: One learner per id with a vectorized path: the first of its pairs.
FIRST_PAIR = {p[0]: p for p in reversed(PAIRS)}


def test_every_vectorized_id_has_a_pair():
    assert set(FIRST_PAIR) == set(VECTOR_ENV_IDS)


@pytest.mark.parametrize("mode", ["vector_entry_point", None])
@pytest.mark.parametrize("env_id", VECTOR_ENV_IDS)
def test_make_vec_builds_the_batched_env_whose_games_are_the_scalar_ones(env_id, mode):
    venv = gym.make_vec(env_id, num_envs=B, vectorization_mode=mode, horizon=40)
    assert type(venv) is LinearVectorEnv and venv.num_envs == B and venv.env_id == env_id
    assert venv.spec.kwargs["vectorization_mode"] == "vector_entry_point"
    _, name, eps, delta = FIRST_PAIR[env_id]
    assert_same_games(env_id, name, 40, eps, delta, venv=venv)


def test_make_vec_passes_the_options_on():
    venv = gym.make_vec("DPBandit-MAB-v0", num_envs=3, horizon=7, n_arms=4,
                        vectorization_mode="vector_entry_point")
    assert venv.horizon == 7 and venv.single_action_space == gym.spaces.Discrete(4)
    again = gym.make_vec(EnvSpec.from_json(venv.spec.to_json()))  # the spec remakes it
    assert type(again) is LinearVectorEnv and again.num_envs == 3 and again.horizon == 7


def test_sync_mode_still_builds_scalar_envs_playing_the_same_games():
    sync = gym.make_vec("DPBandit-MAB-v0", num_envs=2, vectorization_mode="sync", horizon=6,
                        n_arms=3)
    assert isinstance(sync, gym.vector.SyncVectorEnv)
    batched = gym.make_vec("DPBandit-MAB-v0", num_envs=2, horizon=6, n_arms=3)
    sync.reset(seed=[4, 9])
    batched.reset(seed=[4, 9])
    for t in range(6):
        arms = np.array([t % 3, (t + 1) % 3])
        obs_s, rew_s, term_s, *_ = sync.step(arms)
        obs_b, rew_b, term_b, *_ = batched.step(arms)
        assert np.array_equal(obs_s, obs_b) and np.array_equal(rew_s, rew_b)
        assert np.array_equal(term_s, term_b)
    assert term_b.all()


@pytest.mark.parametrize("env_id", sorted(set(ENV_IDS) - set(VECTOR_ENV_IDS)))
def test_ids_without_a_batched_path_have_no_vector_entry_point(env_id):
    assert gym.spec(env_id).vector_entry_point is None
    with pytest.raises(gym.error.Error, match="doesn't have a vector entry point"):
        gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")


def test_settings_the_batched_env_refuses_name_themselves_and_the_sync_mode():
    with pytest.raises(ValueError, match=r"adaptive.*vectorization_mode='sync'"):
        gym.make_vec("DPBandit-MAB-v0", num_envs=2, adversary="punish-favorite")
    with pytest.raises(ValueError, match=r"linear losses.*vectorization_mode='sync'"):
        gym.make_vec("DPFullInfo-Matroid-v0", num_envs=2, loss="distance")
    with pytest.raises(ValueError, match="max_episode_steps"):
        gym.make_vec("DPBandit-MAB-v0", num_envs=2, max_episode_steps=3)
    with pytest.raises(TypeError, match="unknown option"):
        make_vector_env(num_envs=2, env_id="DPBandit-MAB-v0", arms=3)
    sync = gym.make_vec("DPBandit-MAB-v0", num_envs=2, vectorization_mode="sync",
                        adversary="punish-favorite")
    assert isinstance(sync, gym.vector.SyncVectorEnv)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_specs_round_trip_through_json(env_id):
    spec = gym.spec(env_id)
    again = EnvSpec.from_json(spec.to_json())
    assert again == spec and again.additional_wrappers == ()
    assert again.vector_entry_point == (VECTOR_ENTRY_POINT if env_id in VECTOR_ENV_IDS
                                        else None)


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
