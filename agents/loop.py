"""Playing an agent on an environment."""

from __future__ import annotations

import gymnasium as gym

from agents.base import Agent
from dp_online_envs.loop import game_seeds, run_rounds
from dp_online_envs.wrappers import RegretSummary, regret_summary


def play(env: gym.Env, agent: Agent, seed: int | None = None) -> RegretSummary:
    """Play one complete game and return the regret summary.

    ``seed`` is the game's seed: the env and the agent are reset with two independent
    seeds drawn from it (:func:`dp_online_envs.loop.game_seeds`), so the agent does not
    hold the seed of the env's loss stream. The rounds are played by the one game loop,
    :func:`dp_online_envs.loop.run_rounds`.
    """
    env_seed, agent_seed = game_seeds(seed)
    agent.reset(agent_seed)
    env.reset(seed=env_seed)
    info = run_rounds(env, agent)
    if "regret" in info:
        return info["regret"]
    return regret_summary(env)  # stopped early (a TimeLimit): the experimenter's door
