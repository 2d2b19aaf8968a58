"""private-batched-htinf (Asi-Raman-Talwar ICML 2025, Alg. 1 + Cor. 2) against
private-exp2 (Agarwal-Singh ICML 2017, Thm. 4.1) on ``DPBandit-MAB-v0``.

Three measurements, each the mean regret (``summary.regret``, against the best fixed
arm in hindsight) over ``--seeds`` games (game seeds 0, 1, ...; both learners play the
same loss streams), +- its standard error (sample standard deviation / sqrt(seeds)):

1. regret of both learners across epsilons at ``T = --T``, under the env's default
   (oblivious) adversary (``--seeds`` games) and the K-armed lower-bound adversary
   (``lower-bound``, Auer et al. 2002 Thm. 5.1; ``--lb-seeds`` games, more since its
   regret is small against its seed-to-seed spread), with the ratio of the means
   htinf / exp2 and the paired difference htinf - exp2 (same game seeds) +- its
   standard error;
2. where private-batched-htinf has the smaller mean regret: the epsilons of the grid,
   and the largest epsilon below which it wins at every grid point (if any); trivial
   play (``uniform``: a uniformly random arm) is printed alongside, since where both
   learners are at trivial play's regret the comparison says nothing;
3. the log-log slope in T of private-batched-htinf's regret at each ``--slope-eps``
   (least squares over ``--slope-T``; theory: 1/2 once past trivial play), next to
   private-exp2's and trivial play's (1).

Prints markdown (the block of the ``newer-learners`` section of ``docs/results.md``;
its heading and prose are in ``benchmarks/results_template.md``). Usage::

    python benchmarks/private_bandits.py                  # the defaults of docs/results.md
    python benchmarks/private_bandits.py --T 2000 --seeds 2 --lb-seeds 2 --eps 0.1,1
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import dp_online_envs  # noqa: E402,F401  (registers the env ids)
from agents import make, play  # noqa: E402
from dp_online_envs import build_env  # noqa: E402

ENV = "DPBandit-MAB-v0"
LEARNERS = ("private-batched-htinf", "private-exp2")
ADVERSARIES = {"oblivious (default)": {}, "lower-bound": {"adversary": "lower-bound"}}


def regrets(name: str, eps: float | None, T: int, env_kw: dict, seeds: int) -> np.ndarray:
    """Regret of ``name`` in the games of seeds ``0 .. seeds-1`` (agent seed = game seed)."""
    env = build_env(ENV, horizon=T, **env_kw)
    problem = env.unwrapped.problem
    out = []
    kw = {} if eps is None else {"epsilon": eps}
    for s in range(seeds):
        agent = make(name, problem, seed=s, **kw)
        out.append(float(play(env, agent, seed=s).regret))
    return np.asarray(out)


def mean_regret(name: str, eps: float | None, T: int, env_kw: dict, seeds: int) -> float:
    return float(np.mean(regrets(name, eps, T, env_kw, seeds)))


def stderr(x: np.ndarray) -> float:
    """Standard error of the mean: sample standard deviation / sqrt(n) (0 for n = 1)."""
    return float(np.std(x, ddof=1) / math.sqrt(x.size)) if x.size > 1 else 0.0


def pm(x: np.ndarray) -> str:
    return f"{np.mean(x):.1f} +- {stderr(x):.1f}"


def slope(xs, ys) -> float:
    """Least-squares slope of log y on log x."""
    return float(np.polyfit(np.log(xs), np.log(np.maximum(ys, 1e-9)), 1)[0])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--T", type=int, default=32000)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--lb-seeds", type=int, default=20,
                    help="games per point under the lower-bound adversary")
    ap.add_argument("--eps", default="0.01,0.03,0.1,0.3,1,3")
    ap.add_argument("--slope-eps", default="0.1,1")
    ap.add_argument("--slope-T", default="1000,4000,16000,64000")
    args = ap.parse_args(argv)
    epsilons = [float(e) for e in args.eps.split(",")]
    horizons = [int(t) for t in args.slope_T.split(",")]
    slope_eps = [float(e) for e in args.slope_eps.split(",")]
    start = time.perf_counter()
    print(f"Printed by `python benchmarks/private_bandits.py --T {args.T} --seeds {args.seeds} "
          f"--lb-seeds {args.lb_seeds} --eps {args.eps} --slope-eps {args.slope_eps} "
          f"--slope-T {args.slope_T}`.\n")
    print(f"### private-batched-htinf vs private-exp2 on `{ENV}` (K = "
          f"{build_env(ENV, horizon=10).unwrapped.problem.dim}), T = {args.T}, "
          f"mean regret +- standard error\n")
    for adv, env_kw in ADVERSARIES.items():
        seeds = args.lb_seeds if env_kw.get("adversary") == "lower-bound" else args.seeds
        print(f"**Adversary: {adv}** ({seeds} seeds)\n")
        trivial = regrets("uniform", None, args.T, env_kw, seeds)
        print(f"Trivial play (`uniform`): {pm(trivial)}\n")
        print("| epsilon | tau | private-batched-htinf | private-exp2 | ratio | "
              "difference (paired) |")
        print("|---|---|---|---|---|---|")
        wins, clear = [], []
        for eps in epsilons:
            r = {n: regrets(n, eps, args.T, env_kw, seeds) for n in LEARNERS}
            tau = min(args.T, max(1, math.ceil(1 / eps)))
            ratio = float(np.mean(r[LEARNERS[0]]) / np.mean(r[LEARNERS[1]]))
            wins.append(ratio < 1.0)
            diff = r[LEARNERS[0]] - r[LEARNERS[1]]
            if seeds > 1 and abs(float(np.mean(diff))) > 2 * stderr(diff):
                clear.append(f"{eps:g} ({'htinf' if np.mean(diff) < 0 else 'exp2'})")
            print(f"| {eps:g} | {tau} | {pm(r[LEARNERS[0]])} | {pm(r[LEARNERS[1]])} | "
                  f"{ratio:.3f} | {pm(r[LEARNERS[0]] - r[LEARNERS[1]])} |")
        below = None
        for eps, win in zip(epsilons, wins):
            if not win:
                break
            below = eps
        print()
        won = [f"{e:g}" for e, w in zip(epsilons, wins) if w]
        print(f"private-batched-htinf has the smaller mean regret at epsilon in "
              f"{{{', '.join(won)}}}.")
        print(f"Paired difference beyond 2 standard errors (the smaller regret in "
              f"parentheses) at epsilon in {{{', '.join(clear)}}}; elsewhere within noise.")
        if below is None:
            print(f"Crossover: private-batched-htinf does not beat private-exp2 at the "
                  f"smallest epsilon of the grid ({epsilons[0]:g}).\n")
        elif below == epsilons[-1]:
            print(f"Crossover: private-batched-htinf has the smaller regret at every "
                  f"epsilon of the grid (up to {below:g}).\n")
        else:
            print(f"Crossover: private-batched-htinf has the smaller regret at every "
                  f"epsilon <= {below:g} of the grid (not at the next, "
                  f"{epsilons[epsilons.index(below) + 1]:g}).\n")
    for seps in slope_eps:
        print(f"### Slope in T at epsilon = {seps:g} (oblivious adversary, "
              f"{args.seeds} seeds)\n")
        print("| learner | " + " | ".join(f"T={t}" for t in horizons) + " | log-log slope |")
        print("|---|" + "---|" * (len(horizons) + 1))
        for name in (*LEARNERS, "uniform"):
            e = None if name == "uniform" else seps
            ys = [mean_regret(name, e, t, {}, args.seeds) for t in horizons]
            print(f"| {name} | " + " | ".join(f"{y:.1f}" for y in ys)
                  + f" | {slope(horizons, ys):.3f} |")
        print()
    print(f"\n(wall time {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
