"""The ``switches`` field of a game record: how often the played action changes,
checked against an exact count of a replay of the same game."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make
from dp_online_envs import build_env
from dp_online_envs.lab.experiments import analysis
from dp_online_envs.lab.experiments.game import GameSpec, SwitchCounter, play_game


def _replayed_actions(record):
    env = build_env(record["env_id"], horizon=record["horizon"], **record["env_kwargs"])
    problem = env.unwrapped.problem
    eps = record["epsilon"]
    kw = {} if eps is None else {"epsilon": eps}
    agent = make(record["agent"], problem, seed=record["agent_seed"], **kw,
                 **record["agent_kwargs"])
    agent.reset(record["agent_seed"])
    env.reset(seed=record["env_seed"])
    actions, done = [], False
    while not done:
        a = agent.act()
        actions.append(np.array(a, copy=True))
        obs, _, done, _, _ = env.step(a)
        agent.update(a, obs)
    return actions


@pytest.mark.parametrize("env_id,agent,eps", [
    ("DPBandit-MAB-v0", "exp3", None),                 # arm indices
    ("DPBandit-MAB-v0", "private-batched-htinf", 0.2),  # one arm per batch of 5
    ("DPFullInfo-Sphere-v1", "ftrl", None),            # points: every round moves
])
def test_switches_is_the_exact_count(env_id, agent, eps):
    record = play_game(GameSpec(env_id, agent, eps, None, 60, 0))
    actions = _replayed_actions(record)
    exact = sum(not np.array_equal(a, b) for a, b in zip(actions[1:], actions[:-1]))
    assert record["switches"] == exact
    if agent == "private-batched-htinf":  # 12 batches: at most 11 switches
        assert exact <= 11 and all(np.array_equal(actions[5 * j], actions[5 * j + i])
                                   for j in range(12) for i in range(5))
    if agent == "ftrl":
        assert exact > 0


def test_counter_counts_changes_only():
    c = SwitchCounter()
    for t, a in enumerate([1, 1, 2, 2, 2, 0, 1, 1], start=1):
        c(t, a, None)
    assert c.switches == 3
    v = SwitchCounter()
    for t, a in enumerate([np.array([0, 1]), np.array([0, 1]), np.array([1, 0])], start=1):
        v(t, a, None)
    assert v.switches == 1


def test_summary_averages_switches_and_tolerates_old_records():
    recs = [play_game(GameSpec("DPBandit-MAB-v0", "exp3", None, None, 40, i)) for i in range(2)]
    row = analysis.summary(recs)[0]
    assert row["switches_mean"] == pytest.approx(np.mean([r["switches"] for r in recs]))
    old = [{k: v for k, v in r.items() if k != "switches"} for r in recs]
    assert analysis.summary(old)[0]["switches_mean"] is None
