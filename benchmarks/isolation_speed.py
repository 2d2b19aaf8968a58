"""Rounds per second of isolated play (agent in its own process) against in-process play.

Plays ``private-exp2`` on ``DPBandit-MAB-v0`` (K=10, epsilon=1) through the one game
loop, in this process and through :class:`~dp_online_envs.lab.isolation.IsolatedLearner`,
several times each, and reports the medians and their ratio (a ratio measured in the
same process, not a wall-clock assert). Both games must end with the same regret.

    python benchmarks/isolation_speed.py [--horizon 20000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import gymnasium as gym

import agents
import dp_online_envs  # noqa: F401  (registers the ids)
from dp_online_envs.lab.isolation import IsolatedLearner
from dp_online_envs.loop import run_rounds

ENV, AGENT, EPSILON = "DPBandit-MAB-v0", "private-exp2", 1.0


def rounds_per_second(horizon: int, isolated: bool) -> tuple[float, float]:
    """``(rounds/s, final regret)`` of one game (agent start-up not counted)."""
    env = gym.make(ENV, horizon=horizon)
    problem = env.get_wrapper_attr("problem")
    factory = functools.partial(agents.make, AGENT, epsilon=EPSILON, seed=1)
    learner = IsolatedLearner(factory, problem, env.action_space) if isolated else factory(problem)
    try:
        learner.reset(1)
        env.reset(seed=2)
        start = time.perf_counter()
        info = run_rounds(env, learner)
        seconds = time.perf_counter() - start
    finally:
        if isolated:
            learner.close()
    return horizon / seconds, info["regret"].regret


def main(horizon: int = 20_000, repeats: int = 5) -> float:
    local, isolated, regrets = [], [], set()
    for _ in range(repeats):
        rate, regret = rounds_per_second(horizon, isolated=False)
        local.append(rate)
        regrets.add(regret)
        rate, regret = rounds_per_second(horizon, isolated=True)
        isolated.append(rate)
        regrets.add(regret)
    if len(regrets) != 1:
        raise SystemExit(f"isolated and in-process games differ: regrets {sorted(regrets)}")
    lo, iso = statistics.median(local), statistics.median(isolated)
    print(f"{AGENT} on {ENV}, T={horizon}, {repeats} games each (median):")
    print(f"  in-process: {lo:9.0f} rounds/s")
    print(f"  isolated:   {iso:9.0f} rounds/s  (target >= 20000)")
    print(f"  ratio isolated / in-process: {iso / lo:.2f}")
    return iso / lo


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    ns = parser.parse_args()
    main(ns.horizon, ns.repeats)
