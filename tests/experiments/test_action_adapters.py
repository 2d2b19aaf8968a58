"""Action adapters for RL agents (dp_online_envs/wrappers/action_adapters.py)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs.wrappers.action_adapters import LogitsToArm, LogitsToSimplex, adapt, softmax


def test_logits_pick_an_arm():
    env = adapt(gym.make("DPBandit-MAB-v0", horizon=5))
    assert isinstance(env, LogitsToArm)
    assert env.action_space == gym.spaces.Box(-5.0, 5.0, shape=(10,), dtype=np.float32)
    assert env.action(np.eye(10)[3]) == 3
    env.reset(seed=0)
    for _ in range(5):
        obs, _, terminated, _, info = env.step(env.action_space.sample())
    assert terminated and info["regret"].rounds == 5 and obs.shape == (1,)


def test_sampled_arms_use_their_own_seeded_generator():
    def arms(seed):
        env = LogitsToArm(gym.make("DPBandit-MAB-v0", horizon=50), mode="sample")
        env.reset(seed=seed)
        return [env.action(np.zeros(10)) for _ in range(50)]

    assert arms(1) == arms(1) != arms(2)
    assert set(arms(1)) <= set(range(10)) and len(set(arms(1))) > 3


def test_logits_to_a_point_of_the_simplex():
    env = adapt(gym.make("DPFullInfo-Experts-v0", horizon=3))
    assert isinstance(env, LogitsToSimplex)
    x = env.action(np.array([0.0] * 9 + [50.0]))  # clipped to the Box: logit 5
    assert x.sum() == pytest.approx(1.0)
    assert x[-1] == pytest.approx(np.exp(5) / (np.exp(5) + 9))
    env.reset(seed=0)
    env.step(np.zeros(10, dtype=np.float32))
    assert np.allclose(softmax(np.zeros(4)), 0.25)


def test_adapters_refuse_other_decision_sets():
    with pytest.raises(TypeError, match="simplex"):
        adapt(gym.make("DPFullInfo-Sphere-v1"))
    with pytest.raises(ValueError, match="mode"):
        LogitsToArm(gym.make("DPBandit-MAB-v0"), mode="greedy")


def test_stable_baselines3_accepts_the_adapted_env():
    from stable_baselines3.common.env_checker import check_env

    check_env(adapt(gym.make("DPBandit-MAB-v0", horizon=20)), warn=False)
    check_env(adapt(gym.make("DPFullInfo-Experts-v0", horizon=20)), warn=False)
