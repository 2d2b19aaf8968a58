"""Per-round cost of every registered domain kind at its default size, 4x and 16x.

Two tables. **Current defaults** (:data:`CURRENT`): for each domain kind a registered
env uses, the env built with ``dp_online_envs.build_env(id)`` (the id's defaults: its
size, loss and adversary) and with its size option at about 4x and 16x. **Former
defaults** (:data:`FORMER`): the oracle polytopes at their v0 default
instances with distance losses (:data:`_D`; the checkpoint is then the certified convex
comparator), and the flow grid up to 24x32, where the flow targets (:data:`TARGETS`:
a step <= 100 us, a regret checkpoint <= 50 ms) are checked and printed as CPU and wall
verdicts. For each size:

* **step**: ``env.step(a)`` with a fixed feasible action ``a`` (a vertex: the oracle's
  answer to the zero cost vector; arm 0; the empty subset), horizon large enough that
  no checkpoint falls inside the timed steps; the median over repeats of the mean
  wall and CPU (``time.process_time``) time per step;
* **checkpoint**: after ``--rounds`` steps, one regret checkpoint, i.e. the
  recorder's comparator ``min_x sum_s f_s(x)`` (``regret_summary(env)``, cold: the
  first call, with no warm start), median over repeats; the domain's one-time
  geometry (inner ball, affine hull) is computed before the clock starts; also its
  CPU time (``time.process_time``), less sensitive than the wall time to a loaded
  machine;
* **construction**: ``build_env`` plus that one-time geometry, once (wall).

On a shared machine, multithreaded BLAS calls wait for a free core; run with
``OPENBLAS_NUM_THREADS=1`` to time the single-threaded work. The load average is
printed at the start and the end, and the CartPole reference at both (its ratio says
how much the load inflates the wall times).

Times are reported in microseconds and as a ratio to the default size measured in the
same process, next to a reference operation measured in the same process
(``CartPole-v1``'s ``step``, unwrapped). "Size" per domain: ``n_arms`` (simplex, arms),
``dim`` (ball, cube), ``n`` (uniform and partition matroids, submodular base polytope,
ground set), the number of edges (graphic matroid: the complete graph K_m), the
number of grid nodes (flow: ``rows x cols``), ``n^2`` (Birkhoff: n x n matrices).
A checkpoint above ``--budget`` seconds stops the larger sizes of that row (shown as
``skipped``): they would only be slower. The l1 ball is not used by any registered
env, so it is not here.

``--save FILE`` stores the times (:mod:`benchmarks.stored`); :func:`render` draws the
block of ``docs/results.md`` from them.

    OPENBLAS_NUM_THREADS=1 nice python benchmarks/domain_scaling.py [--rounds 50] [--budget 10] \\
        [--only flow --only Birkhoff] [--save FILE]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np

import dp_online_envs
from benchmarks import stored
from dp_online_envs.wrappers.regret import regret_summary


def _complete(m: int) -> tuple[int, list[tuple[int, int]]]:
    return m, [(i, j) for i in range(m) for j in range(i + 1, m)]


#: (label, env id, size meaning, [(size, options), ...] at default, ~4x, ~16x, extras).
#: ``CURRENT``: every domain kind of the registered ids at the id's current default
#: (the first size is ``{}``: the id's defaults, loss and adversary included), 4x and
#: 16x. ``FORMER``: the oracle polytopes at their v0 default instances with
#: distance losses (the checkpoint is then the certified convex comparator) and the
#: flow grid up to 24x32, the size of the flow targets (:data:`TARGETS`).
_D = {"loss": "distance"}

CURRENT: list[tuple[str, str, str, list[tuple[str, dict]]]] = [
    ("simplex (experts)", "DPFullInfo-Experts-v0", "n_arms",
     [("10", {}), ("40", {"n_arms": 40}), ("160", {"n_arms": 160})]),
    ("arms (MAB)", "DPBandit-MAB-v0", "n_arms",
     [("10", {}), ("40", {"n_arms": 40}), ("160", {"n_arms": 160})]),
    ("ball, linear", "DPFullInfo-Sphere-v1", "dim",
     [("10", {}), ("40", {"dim": 40}), ("160", {"dim": 160})]),
    ("cube, linear", "DPFullInfo-Cube-v2", "dim",
     [("10", {}), ("40", {"dim": 40}), ("160", {"dim": 160})]),
    ("ball, absolute", "DPFullInfo-Convex-v1", "dim",
     [("5", {}), ("20", {"dim": 20}), ("80", {"dim": 80})]),
    ("ball, quadratic", "DPBandit-StronglyConvex-v1", "dim",
     [("2", {}), ("8", {"dim": 8}), ("32", {"dim": 32})]),
    ("uniform matroid, linear (full info)", "DPFullInfo-Matroid-v2", "n (rank 2n/5)",
     [("10", {}), ("40", {"n": 40, "rank": 16}), ("160", {"n": 160, "rank": 64})]),
    ("uniform matroid, linear (bandit)", "DPBandit-Matroid-v2", "n (rank 2n/5)",
     [("10", {}), ("40", {"n": 40, "rank": 16}), ("160", {"n": 160, "rank": 64})]),
    ("flow, linear", "DPBandit-Flow-v2", "grid nodes",
     [("12 (3x4)", {}), ("48 (6x8)", {"grid": (6, 8)}), ("192 (12x16)", {"grid": (12, 16)})]),
    ("submodular base, linear", "DPBandit-SubmodularBase-v2", "n",
     [("7", {}), ("28", {"n": 28}), ("112", {"n": 112})]),
    ("Birkhoff, linear", "DPBandit-Birkhoff-v2", "n^2",
     [("16 (n=4)", {}), ("64 (n=8)", {"n": 8}), ("256 (n=16)", {"n": 16})]),
    ("ground set", "DPFullInfo-Submodular-v2", "n",
     [("8", {}), ("32", {"n": 32}), ("128", {"n": 128})]),
]

FORMER: list[tuple[str, str, str, list[tuple[str, dict]]]] = [
    ("former: uniform matroid, distance", "DPBandit-Matroid-v1", "n (rank 3n/8)",
     [("8", {"n": 8, "rank": 3, **_D}), ("32", {"n": 32, "rank": 12, **_D}),
      ("128", {"n": 128, "rank": 48, **_D})]),
    ("former: partition matroid, distance", "DPBandit-Matroid-v1", "n (2 blocks)",
     [("8", {"matroid": "partition", "n": 8, "rank": 3, **_D}),
      ("32", {"matroid": "partition", "n": 32, "rank": 12, **_D}),
      ("128", {"matroid": "partition", "n": 128, "rank": 48, **_D})]),
    ("former: graphic matroid, distance", "DPBandit-Matroid-v1", "edges of K_m",
     [("10 (K5)", {"matroid": "graphic", **_D}),
      ("36 (K9)", {"matroid": "graphic", "graph": _complete(9), **_D}),
      ("153 (K18)", {"matroid": "graphic", "graph": _complete(18), **_D})]),
    ("former: flow, distance", "DPBandit-Flow-v1", "grid nodes",
     [("12 (3x4)", {"grid": (3, 4), **_D}), ("48 (6x8)", {"grid": (6, 8), **_D}),
      ("192 (12x16)", {"grid": (12, 16), **_D}), ("768 (24x32)", {"grid": (24, 32), **_D})]),
    ("former: flow, linear", "DPBandit-Flow-v1", "grid nodes",
     [("12 (3x4)", {"grid": (3, 4), "loss": "linear"}),
      ("48 (6x8)", {"grid": (6, 8), "loss": "linear"}),
      ("192 (12x16)", {"grid": (12, 16), "loss": "linear"}),
      ("768 (24x32)", {"grid": (24, 32), "loss": "linear"})]),
    ("former: submodular base, distance", "DPBandit-SubmodularBase-v1", "n",
     [("6", {"n": 6, **_D}), ("24", {"n": 24, **_D}), ("96", {"n": 96, **_D})]),
    ("former: Birkhoff, distance", "DPBandit-Birkhoff-v1", "n^2",
     [("16 (n=4)", {"n": 4, **_D}), ("64 (n=8)", {"n": 8, **_D}),
      ("256 (n=16)", {"n": 16, **_D})]),
]

ROWS = CURRENT + FORMER

#: The flow targets at grid 24x32: (row label, size) -> a step <= 100 us and a
#: regret checkpoint <= 50 ms.
TARGETS = {("former: flow, distance", "768 (24x32)"), ("former: flow, linear", "768 (24x32)")}
STEP_TARGET, CHECKPOINT_TARGET = 100e-6, 50e-3


def _action(env: gym.Env):
    domain = env.unwrapped.domain
    space = env.action_space
    if isinstance(space, gym.spaces.Discrete):
        return 0
    if isinstance(space, gym.spaces.MultiBinary):
        return np.zeros(space.n, dtype=space.dtype)
    return domain.linear_minimizer(np.zeros(domain.dim))


def time_step(env_id: str, opts: dict, steps: int, repeats: int) -> tuple[float, float]:
    """Medians over ``repeats`` of the mean wall and CPU (``time.process_time``)
    seconds per ``env.step``."""
    env = dp_online_envs.build_env(env_id, horizon=10**7, checkpoints=[10**7], **opts)
    env.reset(seed=0)
    action = _action(env)
    for _ in range(10):  # warm-up: caches, first-call costs
        env.step(action)
    times, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(steps):
            env.step(action)
        times.append((time.perf_counter() - start) / steps)
        cpu.append((time.process_time() - start_cpu) / steps)
    return statistics.median(times), statistics.median(cpu)


def time_construction(env_id: str, opts: dict) -> float:
    """Seconds to build the env and the domain's one-time geometry (inner ball, affine
    hull: what learners and the comparator's cold start read), once."""
    start = time.perf_counter()
    env = dp_online_envs.build_env(env_id, horizon=10**7, checkpoints=[10**7], **opts)
    domain = env.unwrapped.domain
    domain.inner_ball()
    domain.affine_hull  # noqa: B018 - a cached property, computed here
    return time.perf_counter() - start


def time_checkpoint(env_id: str, opts: dict, rounds: int,
                    repeats: int) -> tuple[float, float]:
    """Medians over ``repeats`` of the wall and the CPU (``time.process_time``: all the
    process's threads) seconds of one cold regret checkpoint after ``rounds`` rounds.

    Cold: the first call, no warm start; the domain's one-time geometry (the center the
    comparator starts from) is computed before the clock starts (it is construction,
    timed by :func:`time_construction`)."""
    times, cpu = [], []
    for rep in range(repeats):
        env = dp_online_envs.build_env(env_id, horizon=10**7, checkpoints=[10**7], **opts)
        env.reset(seed=rep)
        domain = env.unwrapped.domain
        domain.inner_ball()
        domain.affine_hull  # noqa: B018
        action = _action(env)
        for _ in range(rounds):
            env.step(action)
        start, start_cpu = time.perf_counter(), time.process_time()
        regret_summary(env)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        if times[-1] > 1.0:  # one sample is enough for a slow checkpoint
            break
    return statistics.median(times), statistics.median(cpu)


def cartpole_step(steps: int = 20_000, repeats: int = 5) -> float:
    env = gym.make("CartPole-v1").unwrapped
    env.reset(seed=0)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            _, _, terminated, _, _ = env.step(0)
            if terminated:
                env.reset()
        times.append((time.perf_counter() - start) / steps)
    return statistics.median(times)


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f}" if seconds >= 1e-5 else f"{seconds * 1e6:.1f}"


def measure_rows(rows: list, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The times of every size of ``rows`` (seconds; a skipped checkpoint is ``None``)."""
    out = []
    for label, env_id, meaning, sizes in rows:
        over, measured = False, []
        for size, opts in sizes:
            build = time_construction(env_id, opts)
            step, step_cpu = time_step(env_id, opts, args.steps, args.repeats)
            cp, cp_cpu = (None, None) if over else time_checkpoint(env_id, opts, args.rounds,
                                                                   args.repeats)
            over = over or (cp is not None and cp > args.budget)
            measured.append({"size": size, "step s": step, "step cpu s": step_cpu,
                             "checkpoint s": cp, "checkpoint cpu s": cp_cpu,
                             "construction s": build})
        out.append({"label": label, "env": env_id, "meaning": meaning, "sizes": measured})
    return out


def _table(rows: list[dict[str, Any]], ref: float) -> list[str]:
    """The markdown table of measured ``rows``, times per step and checkpoint against the
    default size (the first) and the CartPole step ``ref``."""
    lines = ["| domain | env id | size | step (us) | step CPU (us) | step / default "
             "| step / CartPole | checkpoint (us) | checkpoint / default | checkpoint CPU (us) "
             "| construction (us) |", "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        base_step, base_cp = row["sizes"][0]["step s"], row["sizes"][0]["checkpoint s"]
        for i, m in enumerate(row["sizes"]):
            step, cp, cp_cpu = m["step s"], m["checkpoint s"], m["checkpoint cpu s"]
            cp_ratio = "" if cp is None or not base_cp else f"{cp / base_cp:.1f}x"
            name = f"{row['label']} ({row['meaning']})" if i == 0 else ""
            lines.append(
                f"| {name} | {row['env'] if i == 0 else ''} | {m['size']} | {_us(step)} | "
                f"{_us(m['step cpu s'])} | {step / base_step:.1f}x | {step / ref:.1f}x | "
                f"{'skipped' if cp is None else _us(cp)} | {cp_ratio} | "
                f"{'' if cp_cpu is None else _us(cp_cpu)} | {_us(m['construction s'])} |")
    return lines


def _targets(rows: list[dict[str, Any]], ref: float) -> list[str]:
    """The verdicts of the :data:`TARGETS` sizes measured in ``rows``."""
    lines = []
    for row in rows:
        for m in row["sizes"]:
            if (row["label"], m["size"]) not in TARGETS or m["checkpoint s"] is None:
                continue
            step, step_cpu = m["step s"], m["step cpu s"]
            cp, cp_cpu = m["checkpoint s"], m["checkpoint cpu s"]
            lines.append(
                f"- {row['label']} at {m['size']}: step {_us(step_cpu)} us CPU, {_us(step)} us "
                f"wall ({step / ref:.1f}x CartPole; target <= {_us(STEP_TARGET)} us): "
                f"{_verdict(step_cpu, step, STEP_TARGET)}; checkpoint {cp_cpu * 1e3:.2f} ms "
                f"CPU, {cp * 1e3:.2f} ms wall (target <= {CHECKPOINT_TARGET * 1e3:.0f} ms): "
                f"{_verdict(cp_cpu, cp, CHECKPOINT_TARGET)}")
    return lines


def _verdict(cpu: float, wall: float, target: float) -> str:
    """Whether the CPU and the wall time are within ``target``."""
    return (f"CPU {'met' if cpu <= target else 'MISSED'}, "
            f"wall {'met' if wall <= target else 'MISSED'}")


TITLES = {"current": "Current defaults (the registered ids' defaults), 4x and 16x",
          "former": ("Former defaults (the v0 polytope instances, distance losses; flow up "
                     "to 24x32)")}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Both tables' times and the CartPole step at the start and at the end."""
    data: dict[str, Any] = {"cartpole step s, start": cartpole_step(), "tables": {}}
    for key, rows in (("current", CURRENT), ("former", FORMER)):
        rows = [r for r in rows
                if not args.only or any(o.lower() in r[0].lower() for o in args.only)]
        if rows:
            data["tables"][key] = measure_rows(rows, args)
    data["cartpole step s, end"] = cartpole_step()
    return data


def render(doc: dict[str, Any]) -> str:
    """The markdown block of a stored document of :func:`measure`."""
    cfg, data = doc["settings"], doc["data"]
    ref, end = data["cartpole step s, start"], data["cartpole step s, end"]
    lines = [f"reference: CartPole-v1 step (unwrapped) {_us(ref)} us at the start, {_us(end)} "
             f"us at the end (the ratios use the first); checkpoint after {cfg['rounds']} "
             f"rounds; OPENBLAS_NUM_THREADS={cfg['OPENBLAS_NUM_THREADS']}", ""]
    targets = []
    for key, rows in data["tables"].items():
        lines += [f"**{TITLES[key]}**", "", *_table(rows, ref), ""]
        targets += _targets(rows, ref)
    if targets:
        lines += ["The flow targets at grid 24x32:", "", *targets]
    return "\n".join(lines).rstrip("\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=50, help="rounds before the checkpoint")
    parser.add_argument("--steps", type=int, default=300, help="timed steps per repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget", type=float, default=10.0,
                        help="seconds; a slower checkpoint skips the larger sizes")
    parser.add_argument("--only", action="append", default=None,
                        help="substring of the row labels to run (repeatable)")
    stored.add_save_argument(parser)
    args = parser.parse_args(argv)
    run = stored.Measurement("domain-scaling", {
        "rounds": args.rounds, "steps": args.steps, "repeats": args.repeats,
        "budget s": args.budget, "only": args.only,
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "unset")})
    doc = run.document(measure(args))
    stored.save(args.save, doc)
    print(render(doc))


if __name__ == "__main__":
    main()
