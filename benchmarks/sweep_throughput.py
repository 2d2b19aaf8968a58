"""Sweep throughput on local worker processes, as a ratio to one process.

The same games (a sweep of private FTRL and Hedge on DPFullInfo-Experts-v0) are played
serially in this process and then by the ``local`` backend (one worker per CPU by
default); the report is games per second for each and their ratio. The parallel time
includes starting the workers. Nothing is written to disk (no results directory), so
the ratio measures the backend, not the file system. The records of both runs are
checked to be identical (apart from timing fields).

    python benchmarks/sweep_throughput.py [--workers N] [--games N] [--horizon T]

With 2 idle cores expect close to 2x; other load on the machine lowers it.
"""

from __future__ import annotations

import argparse
import os
import time

from dp_online_envs.lab.experiments import parse_sweep, run_games, stable_view
from dp_online_envs.lab.experiments.backends import default_workers


def games(n: int, horizon: int):
    """About ``n`` games: private FTRL at 4 epsilons and Hedge, ``n // 5`` seeds each."""
    seeds = max(1, n // 5)
    return parse_sweep({
        "name": "throughput", "envs": ["DPFullInfo-Experts-v0"],
        "agents": ["hedge", "private-ftrl"], "epsilons": [0.5, 1, 2, 4],
        "horizons": [horizon], "seeds": seeds,
    }).games


def main(workers: int | None = None, n_games: int = 100, horizon: int = 3000,
         repeats: int = 2) -> float:
    specs = games(n_games, horizon)
    workers = workers or default_workers()
    best_serial = best_local = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        serial = run_games(specs, backend="serial")
        best_serial = min(best_serial, time.perf_counter() - t)
        t = time.perf_counter()
        local = run_games(specs, backend="local", workers=workers)
        best_local = min(best_local, time.perf_counter() - t)
        assert [stable_view(r) for r in serial.records] == [stable_view(r) for r in local.records]
    n = len(specs)
    ratio = best_serial / best_local
    print(f"{n} games (DPFullInfo-Experts-v0, T={horizon}), best of {repeats}")
    print(f"serial, 1 process:      {n / best_serial:6.2f} games/s  ({best_serial:.1f} s)")
    print(f"local, {workers} processes:   {n / best_local:6.2f} games/s  ({best_local:.1f} s, "
          "including worker start-up)")
    print(f"throughput ratio:       {ratio:6.2f}x  (ideal {workers}x; "
          f"load average now {os.getloadavg()[0]:.1f})")
    print("records identical on both backends: yes")
    return ratio


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--horizon", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    main(args.workers, args.games, args.horizon, args.repeats)
