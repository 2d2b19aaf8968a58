"""Run-steps per second of seed-vectorized games against the scalar path and a lean loop.

What is timed (one run-step = one round of one seed's game)
-----------------------------------------------------------
* batched: ``LinearVectorEnv("DPBandit-MAB-v0", B)`` and the batched learner
  (``agents.batched.make_batched``) played by ``dp_online_envs.loop.run_batched_rounds``:
  the stochastic adversary's losses (drawn in blocks per seed), the feedback, the regret
  ledger (checkpoints included) and the learner; each seed's game equals the scalar
  game with that seed, bit for bit (``tests/vector``).
* scalar: ``agents.play`` on ``build_env("DPBandit-MAB-v0")`` for a few seeds (the
  registered env with its wrappers, one seed after the other).
* lean: a numpy EXP3 over B seeds written here -- one shared generator, Bernoulli
  losses drawn per round, exponential weights with ``np.exp``, inverse-CDF sampling --
  no env, no regret ledger, no per-seed streams: the floor a batched numpy loop can
  reach on this machine.

Each side is timed ``repeats`` times in the same process (interleaved) and the median
is reported with the ratios batched / lean and batched / scalar. The machine is shared
(2 cores, several jobs): absolute rates move between runs, the ratios less.

Usage::

    PYTHONPATH=. python benchmarks/vectorized_games.py [--seeds 1000] [--horizon 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import agents
from agents.batched import make_batched
from dp_online_envs.envs.registry import build_env
from dp_online_envs.envs.vector_env import LinearVectorEnv
from dp_online_envs.loop import run_batched_rounds

ENV_ID = "DPBandit-MAB-v0"


def batched_rate(agent: str, seeds: int, horizon: int, epsilon: float | None) -> float:
    venv = LinearVectorEnv(ENV_ID, seeds, horizon=horizon)
    learner = make_batched(agent, venv.problem, epsilon=epsilon)
    start = time.perf_counter()
    learner.reset_batch(list(range(1000, 1000 + seeds)))
    venv.reset(seed=list(range(seeds)))
    run_batched_rounds(venv, learner)
    return seeds * horizon / (time.perf_counter() - start)


def scalar_rate(agent: str, seeds: int, horizon: int, epsilon: float | None) -> float:
    env = build_env(ENV_ID, horizon=horizon)
    learner = agents.make(agent, env.get_wrapper_attr("problem"), epsilon=epsilon)
    start = time.perf_counter()
    for s in range(seeds):
        agents.play(env, learner, seed=s)
    return seeds * horizon / (time.perf_counter() - start)


def lean_rate(seeds: int, horizon: int, k: int = 10) -> float:
    """A lean numpy EXP3 over ``seeds`` games (module docstring)."""
    start = time.perf_counter()
    rng = np.random.default_rng(0)
    mu = rng.uniform(0.3, 0.7, size=(seeds, k))
    eta = np.sqrt(2.0 * np.log(k) / (horizon * k))
    lw = np.zeros((seeds, k))
    rows = np.arange(seeds)
    total = np.zeros(seeds)
    for _ in range(horizon):
        w = np.exp(lw - lw.max(axis=1, keepdims=True))
        cdf = np.cumsum(w, axis=1)
        u = rng.random(seeds) * cdf[:, -1]
        arm = np.minimum(np.count_nonzero(cdf <= u[:, None], axis=1), k - 1)
        p = w[rows, arm] / cdf[:, -1]
        loss = (rng.random(seeds) < mu[rows, arm]).astype(np.float64)
        total += loss
        lw[rows, arm] -= eta * loss / p
    return seeds * horizon / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=1000)
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--scalar-seeds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for agent, eps in (("exp3", None), ("private-exp2", 1.0)):
        runs: dict[str, list[float]] = {"batched": [], "lean": [], "scalar": []}
        for _ in range(args.repeats):
            runs["batched"].append(batched_rate(agent, args.seeds, args.horizon, eps))
            runs["lean"].append(lean_rate(args.seeds, args.horizon))
            runs["scalar"].append(scalar_rate(agent, args.scalar_seeds, args.horizon, eps))
        med = {k: statistics.median(v) for k, v in runs.items()}
        print(f"{agent:13s} B={args.seeds} T={args.horizon}: batched {med['batched']:,.0f} "
              f"run-steps/s, lean numpy EXP3 {med['lean']:,.0f}, scalar {med['scalar']:,.0f}"
              f" | batched/lean {med['batched'] / med['lean']:.2f}, batched/scalar "
              f"{med['batched'] / med['scalar']:.1f}")


if __name__ == "__main__":
    main()
