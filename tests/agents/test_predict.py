"""Agents run under stable-baselines3's evaluate_policy through ``Agent.predict``."""

import gymnasium as gym
import numpy as np
import pytest

import dp_online_envs  # noqa: F401
from agents import make

T = 120


def _manual_return(agent, seed):
    env = gym.make("DPFullInfo-Experts-v0", horizon=T)
    obs, _ = env.reset(seed=seed)
    total, done = 0.0, False
    agent.reset(0)
    while not done:
        a = agent.act()
        obs, r, done, _, _ = env.step(a)
        agent.update(a, obs)
        total += r
    return total


def test_evaluate_policy_plays_the_same_game_as_the_loop():
    """Hedge is deterministic given the losses: predict must feed it the same feedback."""
    from stable_baselines3.common.evaluation import evaluate_policy  # torch: where used
    from stable_baselines3.common.vec_env import DummyVecEnv

    problem = gym.make("DPFullInfo-Experts-v0", horizon=T).get_wrapper_attr("problem")
    venv = DummyVecEnv([lambda: gym.make("DPFullInfo-Experts-v0", horizon=T)])
    venv.seed(5)
    rewards, lengths = evaluate_policy(make("hedge", problem, seed=0), venv, n_eval_episodes=1,
                                       return_episode_rewards=True, warn=False)
    assert lengths == [T]
    assert rewards[0] == pytest.approx(_manual_return(make("hedge", problem, seed=0), 5),
                                       rel=1e-6)


def test_predict_rejects_observations_without_a_batch_axis():
    # a batch of several envs is played by independent copies (tests/test_peers.py)
    problem = gym.make("DPBandit-MAB-v0", horizon=T).get_wrapper_attr("problem")
    agent = make("exp3", problem, seed=0)
    with pytest.raises(ValueError, match="one row per env"):
        agent.predict(np.float64(0.0), episode_start=np.ones(1, bool))
    assert agent.predict(np.zeros((2, 1)), episode_start=np.ones(2, bool))[0].shape == (2,)
