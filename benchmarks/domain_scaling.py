"""Per-round cost of every registered domain kind at its default size, 4x and 16x.

For each domain kind a registered env uses, the env is built with
``dp_online_envs.build_env(id, **size_option)`` (its default loss and adversary; the
oracle polytopes at their pre-issue-10 sizes with distance losses, :data:`_D`) and

* **step**: ``env.step(a)`` with a fixed feasible action ``a`` (a vertex: the oracle's
  answer to the zero cost vector; arm 0; the empty subset), horizon large enough that
  no checkpoint falls inside the timed steps; the median over repeats of the mean
  time per step;
* **checkpoint**: after ``--rounds`` steps, one regret checkpoint, i.e. the
  recorder's comparator ``min_x sum_s f_s(x)`` (``regret_summary(env)``, cold: the
  first call, with no warm start), median over repeats; the domain's one-time
  geometry (inner ball, affine hull) is computed before the clock starts; also its
  CPU time (``time.process_time``), less sensitive than the wall time to a loaded
  machine;
* **construction**: ``build_env`` plus that one-time geometry, once (wall).

On a shared machine, multithreaded BLAS calls wait for a free core; run with
``OPENBLAS_NUM_THREADS=1`` to time the single-threaded work.

Times are reported in microseconds and as a ratio to the default size measured in the
same process, next to a reference operation measured in the same process
(``CartPole-v1``'s ``step``, unwrapped). "Size" per domain: ``n_arms`` (simplex, arms),
``dim`` (ball, cube), ``n`` (uniform and partition matroids, submodular base polytope,
ground set), the number of edges (graphic matroid: the complete graph K_m), the
number of grid nodes (flow: ``rows x cols``), ``n^2`` (Birkhoff: n x n matrices).
A checkpoint above ``--budget`` seconds stops the larger sizes of that row (shown as
``skipped``): they would only be slower. The l1 ball is not used by any registered
env, so it is not here.

    nice python benchmarks/domain_scaling.py [--rounds 50] [--budget 10] [--only flow --only Birkhoff]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym  # noqa: E402

import dp_online_envs  # noqa: E402
from dp_online_envs.wrappers.regret import regret_summary  # noqa: E402


def _complete(m: int) -> tuple[int, list[tuple[int, int]]]:
    return m, [(i, j) for i in range(m) for j in range(i + 1, m)]


#: (label, env id, size meaning, [(size, options), ...] at default, ~4x, ~16x, extras)
#: The oracle polytopes are measured at their pre-issue-10 instances with distance losses
#: (the checkpoint is then the certified convex comparator; the ids' current defaults are
#: smaller polytopes with linear / absolute losses).
_D = {"loss": "distance"}

ROWS: list[tuple[str, str, str, list[tuple[str, dict]]]] = [
    ("simplex (experts)", "DPFullInfo-Experts-v0", "n_arms",
     [("10", {}), ("40", {"n_arms": 40}), ("160", {"n_arms": 160})]),
    ("arms (MAB)", "DPBandit-MAB-v0", "n_arms",
     [("10", {}), ("40", {"n_arms": 40}), ("160", {"n_arms": 160})]),
    ("ball, linear", "DPFullInfo-Sphere-v0", "dim",
     [("10", {}), ("40", {"dim": 40}), ("160", {"dim": 160})]),
    ("cube, linear", "DPFullInfo-Cube-v0", "dim",
     [("10", {}), ("40", {"dim": 40}), ("160", {"dim": 160})]),
    ("ball, absolute", "DPFullInfo-Convex-v0", "dim",
     [("5", {}), ("20", {"dim": 20}), ("80", {"dim": 80})]),
    ("ball, quadratic", "DPBandit-StronglyConvex-v0", "dim",
     [("5", {}), ("20", {"dim": 20}), ("80", {"dim": 80})]),
    ("uniform matroid", "DPBandit-Matroid-v0", "n (rank n/8*3)",
     [("8", {"n": 8, "rank": 3, **_D}), ("32", {"n": 32, "rank": 12, **_D}),
      ("128", {"n": 128, "rank": 48, **_D})]),
    ("partition matroid", "DPBandit-Matroid-v0", "n (2 blocks)",
     [("8", {"matroid": "partition", "n": 8, "rank": 3, **_D}),
      ("32", {"matroid": "partition", "n": 32, "rank": 12, **_D}),
      ("128", {"matroid": "partition", "n": 128, "rank": 48, **_D})]),
    ("graphic matroid", "DPBandit-Matroid-v0", "edges of K_m",
     [("10 (K5)", {"matroid": "graphic", **_D}),
      ("36 (K9)", {"matroid": "graphic", "graph": _complete(9), **_D}),
      ("153 (K18)", {"matroid": "graphic", "graph": _complete(18), **_D})]),
    ("flow", "DPBandit-Flow-v0", "grid nodes",
     [("12 (3x4)", {"grid": (3, 4), **_D}), ("48 (6x8)", {"grid": (6, 8), **_D}),
      ("192 (12x16)", {"grid": (12, 16), **_D}), ("768 (24x32)", {"grid": (24, 32), **_D})]),
    ("flow, linear loss", "DPBandit-Flow-v0", "grid nodes",
     [("12 (3x4)", {"grid": (3, 4), "loss": "linear"}), ("48 (6x8)", {"grid": (6, 8), "loss": "linear"}),
      ("192 (12x16)", {"grid": (12, 16), "loss": "linear"}),
      ("768 (24x32)", {"grid": (24, 32), "loss": "linear"})]),
    ("submodular base", "DPBandit-SubmodularBase-v0", "n",
     [("6", {"n": 6, **_D}), ("24", {"n": 24, **_D}), ("96", {"n": 96, **_D})]),
    ("Birkhoff", "DPBandit-Birkhoff-v0", "n^2",
     [("16 (n=4)", {"n": 4, **_D}), ("64 (n=8)", {"n": 8, **_D}),
      ("256 (n=16)", {"n": 16, **_D})]),
    ("ground set", "DPFullInfo-Submodular-v0", "n",
     [("8", {}), ("32", {"n": 32}), ("128", {"n": 128})]),
]


def _action(env: gym.Env):
    domain = env.unwrapped.domain
    space = env.action_space
    if isinstance(space, gym.spaces.Discrete):
        return 0
    if isinstance(space, gym.spaces.MultiBinary):
        return np.zeros(space.n, dtype=space.dtype)
    return domain.linear_minimizer(np.zeros(domain.dim))


def time_step(env_id: str, opts: dict, steps: int, repeats: int) -> float:
    """Median over ``repeats`` of the mean seconds per ``env.step``."""
    env = dp_online_envs.build_env(env_id, horizon=10**7, checkpoints=[10**7], **opts)
    env.reset(seed=0)
    action = _action(env)
    for _ in range(10):  # warm-up: caches, first-call costs
        env.step(action)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            env.step(action)
        times.append((time.perf_counter() - start) / steps)
    return statistics.median(times)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=50, help="rounds before the checkpoint")
    parser.add_argument("--steps", type=int, default=300, help="timed steps per repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget", type=float, default=10.0,
                        help="seconds; a slower checkpoint skips the larger sizes")
    parser.add_argument("--only", action="append", default=None,
                        help="substring of the row labels to run (repeatable)")
    args = parser.parse_args()
    ref = cartpole_step()
    print(f"reference: CartPole-v1 step (unwrapped) {_us(ref)} us; "
          f"checkpoint after {args.rounds} rounds\n")
    print("| domain | env id | size | step (us) | step / default | step / CartPole "
          "| checkpoint (us) | checkpoint / default | checkpoint CPU (us) | construction (us) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, env_id, meaning, sizes in ROWS:
        if args.only and not any(o.lower() in label.lower() for o in args.only):
            continue
        base_step = base_cp = None
        over = False
        for i, (size, opts) in enumerate(sizes):
            build = time_construction(env_id, opts)
            step = time_step(env_id, opts, args.steps, args.repeats)
            cp, cp_cpu = (None, None) if over else time_checkpoint(env_id, opts, args.rounds,
                                                                   args.repeats)
            if i == 0:
                base_step, base_cp = step, cp
            over = over or (cp is not None and cp > args.budget)
            cp_cell = "skipped" if cp is None else _us(cp)
            cpu_cell = "" if cp_cpu is None else _us(cp_cpu)
            cp_ratio = "" if cp is None or not base_cp else f"{cp / base_cp:.1f}x"
            name = f"{label} ({meaning})" if i == 0 else ""
            print(f"| {name} | {env_id if i == 0 else ''} | {size} | {_us(step)} | "
                  f"{step / base_step:.1f}x | {step / ref:.1f}x | {cp_cell} | {cp_ratio} | "
                  f"{cpu_cell} | {_us(build)} |",
                  flush=True)


if __name__ == "__main__":
    main()
