"""Playing an agent on an environment."""

from __future__ import annotations

import gymnasium as gym

from agents.base import Agent
from dp_online_envs.wrappers import RegretSummary, regret_summary


def play(env: gym.Env, agent: Agent, seed: int | None = None) -> RegretSummary:
    """Play one complete game and return the regret summary.

    The agent is reset with ``seed`` and the env with ``seed`` as well (their
    generators are independent objects, so this couples nothing but reproducibility).
    Each round: ``a = agent.act()``, ``obs = env.step(a)``, ``agent.update(a, obs)``.
    """
    agent.reset(seed)
    env.reset(seed=seed)
    terminated = truncated = False
    info: dict = {}
    while not (terminated or truncated):
        action = agent.act()
        obs, _, terminated, truncated, info = env.step(action)
        agent.update(action, obs)
    if "regret" in info:
        return info["regret"]
    return regret_summary(env)  # stopped early (a TimeLimit): the experimenter's door
