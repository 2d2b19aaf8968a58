"""Registered specs serialize; unknown env ids and agents get a suggestion."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec

import agents
from dp_online_envs import ENV_IDS, build_env
from dp_online_envs.lab.experiments import ExperimentError
from dp_online_envs.lab.experiments.sweep import parse_sweep
from dp_online_envs.validation import did_you_mean


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_spec_to_json_round_trips_and_makes_the_same_game(env_id):
    spec = gym.spec(env_id)
    assert isinstance(spec.entry_point, str)
    again = EnvSpec.from_json(spec.to_json())
    assert again == spec
    envs = [gym.make(s, horizon=5) for s in (spec, again)]
    for env in envs:
        env.reset(seed=3)
        env.action_space.seed(4)
    rewards = [[env.step(env.action_space.sample())[1] for _ in range(5)] for env in envs]
    assert rewards[0] == rewards[1]
    assert [e.get_wrapper_attr("problem").horizon for e in envs] == [5, 5]


def test_made_env_spec_records_the_options_and_serializes():
    env = gym.make("DPBandit-MAB-v0", horizon=7, n_arms=4)
    assert env.spec.kwargs == {"env_id": "DPBandit-MAB-v0", "horizon": 7, "n_arms": 4}
    again = gym.make(EnvSpec.from_json(env.spec.to_json()))
    for e in (env, again):
        e.reset(seed=1)
    rewards = [[e.step(a)[1] for a in (0, 1, 2)] for e in (env, again)]
    np.testing.assert_array_equal(*rewards)


def test_did_you_mean_picks_the_closest_name_or_nothing():
    assert did_you_mean("DPFullInfo-Expert-v0", ENV_IDS) == " did you mean 'DPFullInfo-Experts-v0'?"
    assert did_you_mean("dpbandit-mab-v0", ENV_IDS) == " did you mean 'DPBandit-MAB-v0'?"
    assert did_you_mean("Nope-v0", ENV_IDS) == ""
    assert did_you_mean(3, ENV_IDS) == ""


def test_gym_make_suggests_for_an_unknown_id():
    with pytest.raises(gym.error.NameNotFound, match="Did you mean: `DPBandit-MAB`"):
        gym.make("DPBandit-MABB-v0")


def test_build_env_suggests_for_an_unknown_id():
    with pytest.raises(ValueError, match=r"unknown env id 'DPBandit-Mab-v0'; did you mean "
                                         r"'DPBandit-MAB-v0'\? valid: \["):
        build_env("DPBandit-Mab-v0")


def test_sweep_suggests_for_an_unknown_env_id_and_agent():
    data = {"envs": ["DPFullInfo-Expert-v0"], "agents": ["hedge"], "horizons": [10]}
    with pytest.raises(ExperimentError, match="did you mean 'DPFullInfo-Experts-v0'"):
        parse_sweep(data)
    data = {"envs": ["DPFullInfo-Experts-v0"], "agents": ["hedg"], "horizons": [10]}
    with pytest.raises(ExperimentError, match="did you mean 'hedge'"):
        parse_sweep(data)


def test_agents_make_suggests_for_an_unknown_agent():
    problem = gym.make("DPFullInfo-Experts-v0", horizon=5).get_wrapper_attr("problem")
    with pytest.raises(ValueError, match=r"unknown agent 'private_ftrl'; did you mean "
                                         r"'private-ftrl'\? registered: \["):
        agents.make("private_ftrl", problem, epsilon=1.0)
    with pytest.raises(ValueError, match="did you mean 'factorization'"):
        agents.make("private-ftrl", problem, epsilon=1.0, counter="factorisation")


def test_a_hand_made_game_spec_with_an_unknown_env_id_gets_a_suggestion():
    from dp_online_envs.lab.experiments.game import GameSpec, play_game

    with pytest.raises(ExperimentError, match="did you mean 'DPBandit-MAB-v0'"):
        play_game(GameSpec("DPBandit-MAB-v1", "exp3", None, None, 10, 0))


def test_an_unknown_linear_bandit_domain_is_named_with_the_choices():
    with pytest.raises(ValueError, match=r"domain='sphere', expected 'ball' or 'cube'"):
        build_env("DPBandit-Linear-v1", domain="sphere")
