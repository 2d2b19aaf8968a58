"""Regret against T up to 2^30 on the real-size polytope defaults, in the compiled loop.

Plays ``garber-kretzu`` and ``private-projection-free`` (epsilon 1, Laplace, the tree
counter with the exact discrete Laplace noise) on ``--env`` at its defaults -- one of
``DPBandit-Matroid-v2`` (the default: uniform matroid n=10, rank 4),
``DPBandit-Flow-v2`` (monotone paths of the 3 x 4 grid), ``DPBandit-SubmodularBase-v2``
(the concave cardinality function on n=7) and ``DPBandit-Birkhoff-v2`` (n=4), all with
planted-vertex linear losses -- with :mod:`agents.compiled`, at
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
the Python path (:func:`agents.play`) and one of ``--speed-long`` rounds (default
2^24) in the compiled loop, in this process, and prints both rates (rounds per second
of process CPU time and of wall time); the compiled loop also plays the Python game,
whose regret must be the same.

``--law`` first runs the two-sample test of the law: ``private-projection-free`` at
``T = 2^12`` and epsilon 4 in the Python path on seeds 1..200 against the compiled loop
on seeds 201..400 (disjoint), and the compiled loop at epsilon 2 and 8 (twice and half
the noise scale, the radius clamped either way) on seeds 201..400: Kolmogorov-Smirnov
and Mann-Whitney p-values of the regrets.

Every game is appended as one JSON line to ``--out`` (if given, with its env id); a
rerun with the same file skips the games it holds, so a long run can be resumed, and one
file can hold several envs (the table shows ``--env``'s; a line without an env id is a
``DPBandit-Matroid-v2`` game).

Usage::

    nice -n 10 python benchmarks/long_horizon_polytope.py --speed 16384 \\
        --exps 12,14,16,18,20,22,24,26,28,30 --seeds 8,8,8,8,8,8,8,4,2,1 \\
        --out /tmp/long_horizon.jsonl
    python benchmarks/long_horizon_polytope.py --env DPBandit-Birkhoff-v2 --exps 10,12 \\
        --seeds 2,2   # a quick look
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
from dp_online_envs.loop import game_seeds  # noqa: E402

ENV_ID = "DPBandit-Matroid-v2"
#: The real-size polytope defaults the compiled loop plays.
ENV_IDS = ("DPBandit-Matroid-v2", "DPBandit-Flow-v2", "DPBandit-SubmodularBase-v2",
           "DPBandit-Birkhoff-v2")
LEARNERS = {"garber-kretzu": {}, "private-projection-free": {"epsilon": 1.0}}


def explicit_bound(agent: str, horizon: int, agent_kw: dict, env_id: str = ENV_ID) -> float:
    """The learner's explicit regret bound with the implemented constants at its radius."""
    env = build_env(env_id, horizon=horizon)
    a = make(agent, env.get_wrapper_attr("problem"), seed=0, **agent_kw)
    p, g = a.problem, a.geometry
    return blocked_regret_bound(a.zeta, horizon, g.rank, p.diameter, p.lipschitz, p.bound,
                                g.radius, oco_constant=a._oco_constant(),
                                noise_norm=a._noise_norm())


def speed(horizon: int, long_horizon: int, seed: int = 1, env_id: str = ENV_ID) -> dict:
    """Rounds per second of private-projection-free in the Python path (a game of
    ``horizon`` rounds) and compiled (a game of ``long_horizon`` rounds), in this process;
    the compiled loop also plays the Python game's horizon, to check the regrets agree."""
    kw = LEARNERS["private-projection-free"]
    env = build_env(env_id, horizon=horizon)
    a = make("private-projection-free", env.get_wrapper_attr("problem"), seed=seed, **kw)
    w, c = time.perf_counter(), time.process_time()
    python = play(env, a, seed=seed, agent_seed=game_seeds(seed)[1]).regret  # as compiled
    py_wall, py_cpu = time.perf_counter() - w, time.process_time() - c
    compiled = play_compiled(env_id, "private-projection-free", horizon, seed,
                             agent_kw=kw).regret  # (and compiles the loop)
    w, c = time.perf_counter(), time.process_time()
    play_compiled(env_id, "private-projection-free", long_horizon, seed, agent_kw=kw)
    co_wall, co_cpu = time.perf_counter() - w, time.process_time() - c
    out = {"env": env_id, "T": horizon, "python_regret": python, "compiled_regret": compiled,
           "compiled_T": long_horizon,
           "python_rounds_per_cpu_s": horizon / py_cpu,
           "python_rounds_per_wall_s": horizon / py_wall,
           "compiled_rounds_per_cpu_s": long_horizon / co_cpu,
           "compiled_rounds_per_wall_s": long_horizon / co_wall}
    out["ratio_cpu"] = out["compiled_rounds_per_cpu_s"] / out["python_rounds_per_cpu_s"]
    return out


def law(horizon: int = 2**12, epsilon: float = 4.0, n: int = 200) -> list[str]:
    """The two-sample test of the law (module docstring): one line per comparison."""
    from scipy import stats

    from agents.compiled import play_compiled_seeds

    python = []
    for seed in range(1, n + 1):
        env = build_env(ENV_ID, horizon=horizon)
        a = make("private-projection-free", env.get_wrapper_attr("problem"), seed=seed,
                 epsilon=epsilon)
        python.append(play(env, a, seed=seed).regret)
    python = np.array(python)
    lines = [f"python path, eps={epsilon:g}, seeds 1..{n}: mean regret {python.mean():.1f} "
             f"(sd {python.std(ddof=1):.1f})"]
    for eps in (epsilon, epsilon / 2, epsilon * 2):
        games = play_compiled_seeds(ENV_ID, "private-projection-free", horizon,
                                    range(n + 1, 2 * n + 1), agent_kw={"epsilon": eps})
        r = np.array([g.regret for g in games])
        lines.append(f"compiled, eps={eps:g} (noise scale x{epsilon / eps:g}), seeds "
                     f"{n + 1}..{2 * n}: mean {r.mean():.1f} (sd {r.std(ddof=1):.1f}); "
                     f"KS p = {stats.ks_2samp(python, r).pvalue:.3g}, Mann-Whitney p = "
                     f"{stats.mannwhitneyu(python, r).pvalue:.3g}")
    return lines


def bound_rows(trivial_per_round: float, exps: range = range(12, 41, 2),
               env_id: str = ENV_ID) -> list[str]:
    """Where the explicit bounds cross trivial play: per ``T = 2^e``, each learner's
    unclamped radius ``zeta*`` against the clamp ``r/2`` and its bound (at the radius it
    uses) over ``trivial_per_round x T`` (trivial play's regret is linear)."""
    rows = ["| T | " + " | ".join(f"{a}: zeta* (clamp r/2) | bound / trivial" for a in LEARNERS)
            + " |", "|---:|" + "---:|---:|" * len(LEARNERS)]
    for e in exps:
        horizon = 2**e
        cells = []
        for agent, kw in LEARNERS.items():
            env = build_env(env_id, horizon=horizon)
            a = make(agent, env.get_wrapper_attr("problem"), seed=0, **kw)
            cells.append(f"{a.params.zeta_formula:.4f} ({a.geometry.radius / 2:.4f}"
                         f"{', clamped' if a.params.zeta_clamped else ''})")
            bound = explicit_bound(agent, horizon, kw, env_id)
            cells.append(f"{bound / (trivial_per_round * horizon):.3g}")
        rows.append(f"| 2^{e} | " + " | ".join(cells) + " |")
    return rows


def _ci(values: list[float]) -> str:
    m, lo, hi = mean_ci(values)
    return f"{m:.4g}" if len(values) < 2 else f"{m:.4g} [{lo:.4g}, {hi:.4g}]"


def _slope(t0: int, r0: float, t1: int, r1: float) -> str:
    """The log-log slope ``log(r1/r0) / log(t1/t0)`` (empty unless both are positive)."""
    return f"{math.log(r1 / r0) / math.log(t1 / t0):.3f}" if r0 > 0 and r1 > 0 else ""


def table(games: list[dict]) -> str:
    """The markdown table of the games (one row per T and learner)."""
    rows = ["| T | seeds | trivial (mean [95%]) | learner | regret (mean [95%]) | ratio to "
            "trivial | radius | shrink cost alpha x trivial | remainder | explicit bound | "
            "slope from previous T | remainder's slope |",
            "|---:|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    prev: dict[str, tuple[int, float, float]] = {}
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
            slope = rest_slope = ""
            if agent in prev:
                t0, m0, rest0 = prev[agent]
                slope = _slope(t0, m0, horizon, m)
                rest_slope = _slope(t0, rest0, horizon, m - shrink)
            prev[agent] = (horizon, m, m - shrink)
            radius = (f"zeta={g0['zeta']:.4f} "
                      f"{'(clamp r/2)' if g0['zeta_clamped'] else '(unclamped)'}")
            rows.append(f"| 2^{int(math.log2(horizon))} | {len(gs)} | {_ci(tr)} | {agent} | "
                        f"{_ci(r)} | {m / mt:.3f} | {radius} | {shrink:.4g} | "
                        f"{m - shrink:.4g} | {g0['bound']:.4g} | {slope} | {rest_slope} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--env", default=ENV_ID, choices=ENV_IDS, help="the game (at its defaults)")
    p.add_argument("--exps", default="12,14,16,18,20", help="exponents e of T = 2^e")
    p.add_argument("--seeds", default="8", help="seeds per exponent (one value: all)")
    p.add_argument("--agents", default=",".join(LEARNERS))
    p.add_argument("--speed", type=int, default=0,
                   help="horizon of the Python game of the speed comparison")
    p.add_argument("--speed-long", type=int, default=2**24,
                   help="horizon of the compiled game of the speed comparison")
    p.add_argument("--bounds", action="store_true",
                   help="print where the explicit bounds cross trivial play (T up to 2^40)")
    p.add_argument("--law", action="store_true", help="run the two-sample test of the law")
    p.add_argument("--out", default="", help="JSON lines file (appended; resumes)")
    args = p.parse_args(argv)
    exps = [int(e) for e in args.exps.split(",")]
    counts = [int(s) for s in args.seeds.split(",")]
    counts = counts * len(exps) if len(counts) == 1 else counts
    if len(counts) != len(exps):
        raise SystemExit(f"--seeds: {len(counts)} counts for {len(exps)} exponents")
    agents = [a for a in args.agents.split(",") if a]
    if args.speed:
        s = speed(args.speed, args.speed_long, env_id=args.env)
        print("speed:", json.dumps(s), flush=True)
    if args.law:
        for line in law():
            print("law:", line, flush=True)
    out = Path(args.out) if args.out else None
    games: list[dict] = []
    if out is not None and out.exists():
        games = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
        games = [g for g in games if g.get("env", ENV_ID) == args.env]
    done = {(g["T"], g["agent"], g["seed"]) for g in games}
    for e, count in zip(exps, counts):
        horizon = 2**e
        for agent in agents:
            kw = LEARNERS[agent]
            bound = explicit_bound(agent, horizon, kw, args.env)
            for seed in range(1, count + 1):
                if (horizon, agent, seed) in done:
                    continue
                w, c = time.perf_counter(), time.process_time()
                r = play_compiled(args.env, agent, horizon, seed, agent_kw=kw)
                g = {"env": args.env, "T": horizon, "agent": agent, "seed": seed, "regret": r.regret,
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
    if args.bounds and games:
        per_round = float(np.mean([g["trivial_regret"] / g["T"] for g in games]))
        print(f"\ntrivial play: {per_round:.4f} a round (mean over the games above)")
        print("\n".join(bound_rows(per_round, env_id=args.env)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
