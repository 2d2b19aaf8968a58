"""Regret rates of the full-information learners, "privacy for free", tree vs factorization.

Three reports, all measured by playing the registered envs end to end:

1. **Slopes.** For each learner on its env, the mean regret (against the best fixed
   action in hindsight, ``summary.regret_hi``) over several seeds for
   ``T = 256 .. 8192``, and the least-squares slope of ``log regret`` against ``log T``,
   next to the exponent the theory promises (``sqrt(T)`` -> 0.5; online Frank-Wolfe's
   bound is ``T^{3/4}`` -> 0.75; for the private learners Agarwal-Singh promise
   ``sqrt(T) + polylog(T) / eps``, so the measured slope is 0.5 only once ``T`` is large
   enough for the additive privacy term to be negligible). The slope of the
   pseudo-regret (regret against the mean loss, less noisy) is printed as well.
2. **Privacy for free** (Agarwal-Singh Sec. 1.1): experts with K = 10, eps = 1: the
   ratio of the regret of ``private-ftrl`` (Laplace, pure DP) and ``private-ftpl``
   (Gaussian, delta = 1e-6) to ``hedge`` as T grows; and ``private-ftrl`` over the same
   FTRL without noise (``hedge`` run with private-ftrl's learning rate), which isolates
   the cost of the noise from the learning-rate constant; then the same ratios for
   T = 2^14 .. 2^16 (4 seeds), where the additive privacy term starts to lose weight.
3. **Tree vs factorization** at equal (eps, delta): ``private-ftrl`` with Gaussian noise
   (delta > 0) in a noise-dominated setting (small eps), with every counter.

Usage::

    python benchmarks/full_info_rates.py [--seeds 4] [--quick]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym  # noqa: E402

import dp_online_envs  # noqa: E402,F401  (registers the env ids)
from agents import make, play  # noqa: E402

DELTA = 1e-6

#: (label, agent, env id, env options, agent options, promised exponent)
LEARNERS = [
    ("hedge", "hedge", "DPFullInfo-Experts-v0", {}, {}, 0.5),
    ("private-ftrl eps=1", "private-ftrl", "DPFullInfo-Experts-v0", {}, {"epsilon": 1.0}, 0.5),
    ("private-ftrl eps=10", "private-ftrl", "DPFullInfo-Experts-v0", {}, {"epsilon": 10.0}, 0.5),
    ("private-ftpl eps=1", "private-ftpl", "DPFullInfo-Experts-v0", {},
     {"epsilon": 1.0, "delta": DELTA}, 0.5),
    ("ftrl", "ftrl", "DPFullInfo-Sphere-v0", {"adversary": "stochastic"}, {}, 0.5),
    ("private-ftrl eps=1", "private-ftrl", "DPFullInfo-Sphere-v0", {"adversary": "stochastic"},
     {"epsilon": 1.0}, 0.5),
    ("ftrl", "ftrl", "DPFullInfo-Cube-v0", {"adversary": "stochastic"}, {}, 0.5),
    ("private-ftrl eps=1", "private-ftrl", "DPFullInfo-Cube-v0", {"adversary": "stochastic"},
     {"epsilon": 1.0}, 0.5),
    ("private-ftpl eps=1", "private-ftpl", "DPFullInfo-Matroid-v0", {"adversary": "stochastic"},
     {"epsilon": 1.0, "delta": DELTA}, 0.5),
    ("online-fw", "online-fw", "DPFullInfo-Matroid-v0", {"adversary": "stochastic"}, {}, 0.75),
]


def run(agent: str, env_id: str, horizon: int, seed: int, env_kw: dict, agent_kw: dict):
    """One game: returns ``(regret, pseudo_regret, the agent)``."""
    env = gym.make(env_id, horizon=horizon, **env_kw)
    a = make(agent, env.get_wrapper_attr("problem"), seed=seed, **agent_kw)
    s = play(env, a, seed=seed)
    assert s.projected_actions == 0, f"{agent} played {s.projected_actions} infeasible actions"
    pseudo = math.nan if s.pseudo_regret is None else s.pseudo_regret
    return s.regret_hi, pseudo, a


def slope(ts, values) -> float:
    """Least-squares slope of log(values) on log(ts) (nan if a value is <= 0)."""
    v = np.asarray(values, dtype=float)
    if np.any(~np.isfinite(v)) or np.any(v <= 0):
        return math.nan
    return float(np.polyfit(np.log(ts), np.log(v), 1)[0])


def rates(horizons, seeds) -> dict:
    """Mean regrets of every learner (section 1); also returns them for section 2."""
    print("## 1. Regret vs T (mean over seeds) and log-log slopes\n")
    head = " | ".join(f"T={t}" for t in horizons)
    print(f"| learner | env | {head} | slope | pseudo slope | paper |")
    print("|---|---|" + "---:|" * (len(horizons) + 3))
    table = {}
    for label, agent, env_id, env_kw, agent_kw, paper in LEARNERS:
        means, pseudos = [], []
        for T in horizons:
            res = [run(agent, env_id, T, s, env_kw, agent_kw) for s in seeds]
            means.append(float(np.mean([r for r, _, _ in res])))
            pseudos.append(float(np.mean([p for _, p, _ in res])))
        table[(label, env_id)] = means
        cells = " | ".join(f"{m:.1f}" for m in means)
        short = env_id.replace("DPFullInfo-", "").replace("-v0", "")
        print(f"| {label} | {short} | {cells} | {slope(horizons, means):.2f} | "
              f"{slope(horizons, pseudos):.2f} | {paper} |", flush=True)
    return table


def privacy_for_free(horizons, seeds, table) -> None:
    print("\n## 2. Privacy for free? experts K=10, eps=1: regret ratios\n")
    hedge = table[("hedge", "DPFullInfo-Experts-v0")]
    ftrl = table[("private-ftrl eps=1", "DPFullInfo-Experts-v0")]
    ftrl10 = table[("private-ftrl eps=10", "DPFullInfo-Experts-v0")]
    ftpl = table[("private-ftpl eps=1", "DPFullInfo-Experts-v0")]
    same_eta = []
    for T in horizons:
        eta = make("private-ftrl", gym.make("DPFullInfo-Experts-v0", horizon=T)
                   .get_wrapper_attr("problem"), epsilon=1.0).eta
        same_eta.append(float(np.mean([run("hedge", "DPFullInfo-Experts-v0", T, s, {},
                                           {"eta": eta})[0] for s in seeds])))
    print("| T | hedge | private-ftrl | ftrl/hedge | ftrl/(hedge at ftrl's eta) | "
          "private-ftrl eps=10 / hedge | private-ftpl | ftpl/hedge |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for i, T in enumerate(horizons):
        print(f"| {T} | {hedge[i]:.1f} | {ftrl[i]:.1f} | {ftrl[i] / hedge[i]:.2f} | "
              f"{ftrl[i] / same_eta[i]:.2f} | {ftrl10[i] / hedge[i]:.2f} | {ftpl[i]:.1f} | "
              f"{ftpl[i] / hedge[i]:.2f} |")


def crossover(horizons, seeds) -> None:
    print("\n## 2b. Longer horizons (experts K=10, eps=1): does the ratio turn down?\n")
    print("| T | hedge | private-ftrl | ftrl/hedge | private-ftpl | ftpl/hedge |")
    print("|---:|---:|---:|---:|---:|---:|")
    env = "DPFullInfo-Experts-v0"
    for T in horizons:
        h = np.mean([run("hedge", env, T, s, {}, {})[0] for s in seeds])
        f = np.mean([run("private-ftrl", env, T, s, {}, {"epsilon": 1.0})[0] for s in seeds])
        g = np.mean([run("private-ftpl", env, T, s, {}, {"epsilon": 1.0, "delta": DELTA})[0]
                     for s in seeds])
        print(f"| {T} | {h:.1f} | {f:.1f} | {f / h:.2f} | {g:.1f} | {g / h:.2f} |", flush=True)


def tree_vs_factorization(horizons, seeds, epsilon: float) -> None:
    print(f"\n## 3. Gaussian private-ftrl on experts K=10, eps={epsilon}, delta={DELTA}: "
          "counters at equal privacy\n")
    counters = ["tree", "agarwal-singh", "honaker", "factorization"]
    print("| T | " + " | ".join(f"{c} regret (worst noise std)" for c in counters)
          + " | tree / factorization |")
    print("|---:|" + "---:|" * (len(counters) + 1))
    for T in horizons:
        cells, mean = [], {}
        for c in counters:
            kw = {"epsilon": epsilon, "delta": DELTA, "counter": c}
            res = [run("private-ftrl", "DPFullInfo-Experts-v0", T, s, {}, kw) for s in seeds]
            r = np.array([x for x, _, _ in res])
            mean[c] = r.mean()
            std = math.sqrt(res[0][2]._counter.max_noise_variance())
            cells.append(f"{r.mean():.1f} ± {r.std(ddof=1) / math.sqrt(len(r)):.1f} ({std:.0f})")
        print(f"| {T} | " + " | ".join(cells) + f" | {mean['tree'] / mean['factorization']:.2f} |",
              flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--quick", action="store_true",
                        help="T <= 2048, 2 seeds, no long horizons")
    parser.add_argument("--epsilon-small", type=float, default=0.2)
    args = parser.parse_args(argv)
    horizons = [256, 512, 1024, 2048, 4096, 8192]
    seeds = list(range(args.seeds))
    if args.quick:
        horizons, seeds = horizons[:4], seeds[:2]
    start = time.perf_counter()
    table = rates(horizons, seeds)
    privacy_for_free(horizons, seeds, table)
    if not args.quick:
        crossover([16384, 32768, 65536], seeds[:4])
    tree_vs_factorization([horizons[-3], horizons[-1]], seeds, args.epsilon_small)
    print(f"\n(total {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
