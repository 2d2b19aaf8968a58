"""Regret against T up to 2^30 on the real-size matroid default, in the compiled loop.

Plays ``garber-kretzu`` and ``private-projection-free`` (epsilon 1, Laplace, the tree
counter with the exact discrete Laplace noise) on ``DPBandit-Matroid-v2`` (uniform
matroid n=10, rank 4, planted-vertex linear losses) with :mod:`agents.compiled`, at
``T = 2^e`` for the exponents ``--exps``, on game seeds ``1..s`` where ``--seeds``
gives ``s`` per exponent (fewer seeds at the longest horizons). Trivial play (the
domain's center) is measured in the same games (its loss is kept in the same loop).

For each T and learner it reports the mean regret over seeds with its Student-t 95%
interval (none with one seed), the ratio to trivial play, whether the smoothing radius
is clamped at ``r/2``, the shrink cost ``alpha x trivial`` and the remainder, the
explicit regret bound with the implemented constants
(:func:`agents.bandit.smoothing.blocked_regret_bound` at the learner's radius), and the
log-log slope of the mean regret from the previous T.

``--speed T`` first times one game of ``private-projection-free`` at horizon ``T`` in
the Python path (:func:`agents.play`) and in the compiled loop, in this process, and
prints both rates (rounds per second of process CPU time and of wall time).

Every game is appended as one JSON line to ``--out`` (if given); a rerun with the same
file skips the games it holds, so a long run can be resumed.

Usage::

    nice -n 10 python benchmarks/long_horizon_polytope.py --speed 16384 \\
        --exps 12,14,16,18,20,22,24,26,28,30 --seeds 8,8,8,8,8,8,8,4,2,1 \\
        --out /tmp/long_horizon.jsonl
    python benchmarks/long_horizon_polytope.py --exps 10,12 --seeds 2,2   # a quick look
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from agents import make, play  # noqa: E402
from agents.bandit.smoothing import blocked_regret_bound  # noqa: E402
from agents.compiled import play_compiled  # noqa: E402
from dp_online_envs.envs.registry import build_env  # noqa: E402
from dp_online_envs.lab.experiments.analysis import mean_ci  # noqa: E402

ENV_ID = "DPBandit-Matroid-v2"
LEARNERS = {"garber-kretzu": {}, "private-projection-free": {"epsilon": 1.0}}


def explicit_bound(agent: str, horizon: int, agent_kw: dict) -> float:
    """The learner's explicit regret bound with the implemented constants at its radius."""
    env = build_env(ENV_ID, horizon=horizon)
    a = make(agent, env.get_wrapper_attr("problem"), seed=0, **agent_kw)
    p, g = a.problem, a.geometry
    return blocked_regret_bound(a.zeta, horizon, g.rank, p.diameter, p.lipschitz, p.bound,
                                g.radius, oco_constant=a._oco_constant(),
                                noise_norm=a._noise_norm())


def speed(horizon: int, seed: int = 1) -> dict:
    """Rounds per second of private-projection-free in the Python path and compiled."""
    kw = LEARNERS["private-projection-free"]
    env = build_env(ENV_ID, horizon=horizon)
    a = make("private-projection-free", env.get_wrapper_attr("problem"), seed=seed, **kw)
    w, c = time.perf_counter(), time.process_time()
    python = play(env, a, seed=seed).regret
    py_wall, py_cpu = time.perf_counter() - w, time.process_time() - c
    play_compiled(ENV_ID, "private-projection-free", 64, seed, agent_kw=kw)  # compile
    w, c = time.perf_counter(), time.process_time()
    compiled = play_compiled(ENV_ID, "private-projection-free", horizon, seed,
                             agent_kw=kw).regret
    co_wall, co_cpu = time.perf_counter() - w, time.process_time() - c
    out = {"T": horizon, "python_regret": python, "compiled_regret": compiled,
           "python_rounds_per_cpu_s": horizon / py_cpu,
           "python_rounds_per_wall_s": horizon / py_wall,
           "compiled_rounds_per_cpu_s": horizon / co_cpu,
           "compiled_rounds_per_wall_s": horizon / co_wall}
    out["ratio_cpu"] = out["compiled_rounds_per_cpu_s"] / out["python_rounds_per_cpu_s"]
    return out


def _ci(values: list[float]) -> str:
    m, lo, hi = mean_ci(values)
    return f"{m:.4g}" if len(values) < 2 else f"{m:.4g} [{lo:.4g}, {hi:.4g}]"


def table(games: list[dict]) -> str:
    """The markdown table of the games (one row per T and learner)."""
    rows = ["| T | seeds | trivial (mean [95%]) | learner | regret (mean [95%]) | ratio to "
            "trivial | radius | shrink cost alpha x trivial | remainder | explicit bound | "
            "slope from previous T |", "|---:|---:|---:|---|---:|---:|---|---:|---:|---:|---:|"]
    prev: dict[str, tuple[int, float]] = {}
    for horizon in sorted({g["T"] for g in games}):
        for agent in LEARNERS:
            gs = sorted((g for g in games if g["T"] == horizon and g["agent"] == agent),
                        key=lambda g: g["seed"])
            if not gs:
                continue
            r = [g["regret"] for g in gs]
            tr = [g["trivial_regret"] for g in gs]
            m, mt = float(np.mean(r)), float(np.mean(tr))
            g0 = gs[0]
            shrink = g0["alpha"] * mt
            slope = ""
            if agent in prev and prev[agent][1] > 0 and m > 0:
                t0, m0 = prev[agent]
                slope = f"{math.log(m / m0) / math.log(horizon / t0):.3f}"
            prev[agent] = (horizon, m)
            radius = (f"zeta={g0['zeta']:.4f} "
                      f"{'(clamp r/2)' if g0['zeta_clamped'] else '(unclamped)'}")
            rows.append(f"| 2^{int(math.log2(horizon))} | {len(gs)} | {_ci(tr)} | {agent} | "
                        f"{_ci(r)} | {m / mt:.3f} | {radius} | {shrink:.4g} | "
                        f"{m - shrink:.4g} | {g0['bound']:.4g} | {slope} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--exps", default="12,14,16,18,20", help="exponents e of T = 2^e")
    p.add_argument("--seeds", default="8", help="seeds per exponent (one value: all)")
    p.add_argument("--agents", default=",".join(LEARNERS))
    p.add_argument("--speed", type=int, default=0, help="horizon of the speed comparison")
    p.add_argument("--out", default="", help="JSON lines file (appended; resumes)")
    args = p.parse_args(argv)
    exps = [int(e) for e in args.exps.split(",")]
    counts = [int(s) for s in args.seeds.split(",")]
    counts = counts * len(exps) if len(counts) == 1 else counts
    if len(counts) != len(exps):
        raise SystemExit(f"--seeds: {len(counts)} counts for {len(exps)} exponents")
    agents = [a for a in args.agents.split(",") if a]
    if args.speed:
        s = speed(args.speed)
        print("speed:", json.dumps(s), flush=True)
    out = Path(args.out) if args.out else None
    games: list[dict] = []
    if out is not None and out.exists():
        games = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    done = {(g["T"], g["agent"], g["seed"]) for g in games}
    for e, count in zip(exps, counts):
        horizon = 2**e
        for agent in agents:
            kw = LEARNERS[agent]
            bound = explicit_bound(agent, horizon, kw)
            for seed in range(1, count + 1):
                if (horizon, agent, seed) in done:
                    continue
                w, c = time.perf_counter(), time.process_time()
                r = play_compiled(ENV_ID, agent, horizon, seed, agent_kw=kw)
                g = {"T": horizon, "agent": agent, "seed": seed, "regret": r.regret,
                     "trivial_regret": r.trivial_regret, "zeta": r.zeta, "alpha": r.alpha,
                     "zeta_clamped": r.zeta_clamped, "bound": bound,
                     "lmo_calls": r.lmo_calls, "fw_cap_hits": r.fw_cap_hits,
                     "wall_s": time.perf_counter() - w, "cpu_s": time.process_time() - c}
                games.append(g)
                print(json.dumps(g), flush=True)
                if out is not None:
                    with out.open("a") as f:
                        f.write(json.dumps(g) + "\n")
    print(table(games))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
