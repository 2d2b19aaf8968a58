"""Private -> non-private as epsilon grows: regret ratios and build times.

Two measurements:

1. **Regret ratio** at a large epsilon (default 1e3, T = 1e4): mean final regret over
   seeds of each private learner divided by that of its non-private counterpart
   (``Agent.counterpart_for``: ``private-ftrl`` -> ``hedge`` on the experts,
   ``private-exp2`` -> ``exp2`` on the arms). Both play the same loss sequences (same
   env seeds). The target is <= 1.15.
2. **Build time** of every case's private learner at epsilon in {1, 300, 1e3, 1e6}
   (``delta = 0``, Laplace, and ``delta = 1e-6``, Gaussian where the learner offers it),
   as a ratio to epsilon = 1 (median of ``--repeats`` builds, the calibration and
   accounting caches cleared before each).

Every case is ``AGENT ENV_ID [JSON env options]``, so the measurement can be rerun on
other instances of the envs::

    python benchmarks/privacy_limit.py
    python benchmarks/privacy_limit.py --seeds 10 --horizon 10000 \\
        --case private-ftrl DPFullInfo-Experts-v0 '{"n_arms": 20}' \\
        --case private-exp2 DPBandit-MAB-v0 '{"adversary": "stochastic"}'

Prints a table and, with ``--json FILE``, writes the numbers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import agents
from agents import agent_class, make, play
from agents.privacy import calibration
from dp_online_envs import build_env

DEFAULT_CASES = [("private-ftrl", "DPFullInfo-Experts-v0", {}),
                 ("private-exp2", "DPBandit-MAB-v0", {})]
BUILD_EPSILONS = (1.0, 300.0, 1e3, 1e6)


def regret_ratio(agent: str, env_id: str, env_kw: dict, *, epsilon: float, delta: float,
                 horizon: int, seeds: int) -> dict:
    """Mean final regret of ``agent`` and of its counterpart over ``seeds`` games."""
    env = build_env(env_id, horizon=horizon, **env_kw)
    problem = env.unwrapped.problem
    other = agent_class(agent).counterpart_for(problem)
    if other is None:
        raise SystemExit(f"{agent} declares no non-private counterpart")
    mine, theirs = [], []
    for s in range(seeds):
        a = make(agent, problem, epsilon=epsilon, delta=delta, seed=s)
        mine.append(play(env, a, seed=s).regret)
        b = make(other, problem, seed=s)
        theirs.append(play(env, b, seed=s).regret)
    m, o = float(np.mean(mine)), float(np.mean(theirs))
    return {"agent": agent, "counterpart": other, "env": env_id, "env_kwargs": env_kw,
            "epsilon": epsilon, "delta": delta, "horizon": horizon, "seeds": seeds,
            "regret": m, "counterpart_regret": o, "ratio": m / o if o > 0 else float("nan"),
            "regret_per_seed": mine, "counterpart_regret_per_seed": theirs}


def _clear_caches() -> None:
    calibration._accountant_epsilon.cache_clear()
    calibration._unit_gaussian_sigma.cache_clear()


def build_times(agent: str, env_id: str, env_kw: dict, *, horizon: int, delta: float,
                repeats: int) -> dict:
    """Median build time of ``agent`` at each epsilon of :data:`BUILD_EPSILONS`."""
    problem = build_env(env_id, horizon=horizon, **env_kw).unwrapped.problem
    out = {}
    for eps in BUILD_EPSILONS:
        times = []
        for r in range(repeats):
            _clear_caches()  # time the calibration and accounting, not a cache hit
            start = time.perf_counter()
            try:
                make(agent, problem, epsilon=eps, delta=delta, seed=r)
            except ValueError as exc:  # e.g. a Laplace-only learner asked for delta > 0
                return {"error": str(exc)}
            times.append(time.perf_counter() - start)
        out[eps] = statistics.median(times)
    return {"seconds": out, "ratio_to_eps1": {e: t / out[1.0] for e, t in out.items()}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", nargs="+", action="append", metavar="AGENT ENV_ID [JSON]",
                    help="a private agent, an env id and optional JSON env options")
    ap.add_argument("--epsilon", type=float, default=1e3)
    ap.add_argument("--delta", type=float, default=0.0)
    ap.add_argument("--horizon", type=int, default=10_000)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3, help="builds per epsilon (median)")
    ap.add_argument("--skip-regret", action="store_true")
    ap.add_argument("--json", help="write the results to this file")
    args = ap.parse_args(argv)
    cases = DEFAULT_CASES
    if args.case:
        cases = [(c[0], c[1], json.loads(c[2]) if len(c) > 2 else {}) for c in args.case]
    result = {"agents_version": getattr(agents, "__version__", None), "ratios": [],
              "build": []}
    for agent, env_id, env_kw in cases:
        if not args.skip_regret:
            r = regret_ratio(agent, env_id, env_kw, epsilon=args.epsilon, delta=args.delta,
                             horizon=args.horizon, seeds=args.seeds)
            result["ratios"].append(r)
            print(f"{agent} / {r['counterpart']} on {env_id} {env_kw or ''} eps={args.epsilon:g} "
                  f"T={args.horizon} seeds={args.seeds}: {r['regret']:.2f} / "
                  f"{r['counterpart_regret']:.2f} = {r['ratio']:.3f}", flush=True)
        for delta in (0.0, 1e-6):
            b = build_times(agent, env_id, env_kw, horizon=args.horizon, delta=delta,
                            repeats=args.repeats)
            b.update(agent=agent, env=env_id, delta=delta)
            result["build"].append(b)
            if "error" in b:
                print(f"  build {agent} delta={delta:g}: {b['error']}")
                continue
            cells = ", ".join(f"eps={e:g}: {s * 1e3:.1f} ms (x{b['ratio_to_eps1'][e]:.2f})"
                              for e, s in b["seconds"].items())
            print(f"  build {agent} delta={delta:g}: {cells}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2, default=str)


if __name__ == "__main__":
    main()
