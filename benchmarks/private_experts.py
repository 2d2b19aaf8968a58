"""Regret and switch counts of the private experts learners on ``DPFullInfo-Experts-v0``
under an oblivious and an adaptive adversary.

Plays each learner through :func:`dp_online_envs.lab.experiments.game.play_game` (so the
numbers are those of the game records, ``regret`` and ``switches``: how many rounds'
actions differ from the previous round's), on game seeds ``0 .. --seeds - 1`` for
every learner (paired), and prints:

1. mean regret [Student-t 95% interval] and mean switches at each epsilon of ``--eps`` of
   ``private-lazy-mw`` (an L2P-style learner: Algorithm 1 of Asi-Koren-Liu-Talwar
   NeurIPS 2024 on MW with this project's privacy proof and parameters; (epsilon,
   delta)-DP at ``delta = --delta``), ``private-ftrl`` with every continual counter
   (Laplace for the pure-DP counters, Gaussian at ``--delta`` for the Gaussian-only
   ``factorization`` and ``blt``), ``private-ftpl`` (Gaussian), and once the
   non-private ``hedge`` and trivial play (``center``, the uniform mixture);
   adversaries: the env's default (``oblivious``) and
   ``punish-favorite`` (adaptive: it reacts to the learner's plays, outside L2P's
   guarantee, which is for oblivious adversaries only);
2. at each epsilon, ``private-lazy-mw`` against every ``private-ftrl`` counter and
   ``private-ftpl``: the paired difference of regret on the same seeds with its 95%
   interval, and the side it supports (``~`` where the interval contains 0);
3. the log-log slope in T of ``private-lazy-mw``'s regret (oblivious) at
   ``--slope-eps`` over ``--slope-T`` (least squares; ``hedge``'s for reference), and
   that of the bound its calibration minimizes.

Usage::

    python benchmarks/private_experts.py                  # the defaults of docs/results.md
    python benchmarks/private_experts.py --T 500 --seeds 2 --eps 0.5 --slope-T 250,500
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from private_stochastic import ci, paired  # noqa: E402  (one interval format)

import dp_online_envs  # noqa: E402,F401  (registers the env ids)
from agents import make  # noqa: E402
from agents.privacy import COUNTERS, GAUSSIAN_ONLY  # noqa: E402
from dp_online_envs import build_env  # noqa: E402
from dp_online_envs.lab.experiments.game import GameSpec, play_game  # noqa: E402
from dp_online_envs.lab.experiments.rates import loglog_slope  # noqa: E402

ENV = "DPFullInfo-Experts-v0"
ADVERSARIES = {"oblivious": {}, "punish-favorite (adaptive)": {"adversary": "punish-favorite"}}
L2P = "private-lazy-mw"


def learners(eps: float, delta: float):
    """(label, agent, epsilon, delta, options) of the private learners at ``eps``."""
    out = [(f"{L2P} (L2P)", L2P, eps, delta, {})]
    for c in COUNTERS:
        # factorization, blt: real-valued Gaussian, their guarantee is idealized
        d = delta if c in GAUSSIAN_ONLY else None
        out.append((f"private-ftrl counter={c}" + (" (Gaussian, idealized)" if d else ""),
                    "private-ftrl", eps, d, {"counter": c}))
    out.append(("private-ftpl (Gaussian)", "private-ftpl", eps, delta, {}))
    return out


def games(agent, eps, delta, T, seeds, env_kw, kw) -> tuple[np.ndarray, float]:
    """The regret of each game seed ``0 .. seeds - 1`` and the mean switches."""
    recs = [play_game(GameSpec(ENV, agent, eps, delta, T, i, env_kwargs=env_kw,
                               agent_kwargs=kw)) for i in range(seeds)]
    return (np.array([r["regret"] for r in recs]),
            float(np.mean([r["switches"] for r in recs])))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--T", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=16)
    ap.add_argument("--eps", default="0.1,0.3,1")
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--slope-eps", type=float, default=0.1)
    ap.add_argument("--slope-T", default="1000,4000,16000")
    args = ap.parse_args(argv)
    eps_grid = [float(e) for e in args.eps.split(",")]
    horizons = [int(t) for t in args.slope_T.split(",")]
    start = time.perf_counter()
    print(f"### Private experts on `{ENV}`: regret and switches (T = {args.T}, "
          f"delta = {args.delta:g} where (epsilon, delta), game seeds 0..{args.seeds - 1}, "
          "paired)\n")
    print(f"Printed by `python benchmarks/private_experts.py --T {args.T} --seeds "
          f"{args.seeds} --eps {args.eps} --delta {args.delta:g} --slope-eps "
          f"{args.slope_eps:g} --slope-T {args.slope_T}`.\n")
    print("| learner | epsilon | " + " | ".join(f"{a}: regret | {a}: switches"
                                               for a in ADVERSARIES) + " |")
    print("|---|---|" + "---|---|" * len(ADVERSARIES))
    compare = {}
    for eps in eps_grid:
        for label, agent, e, d, kw in learners(eps, args.delta):
            cells = []
            for adv, env_kw in ADVERSARIES.items():
                reg, sw = games(agent, e, d, args.T, args.seeds, env_kw, kw)
                cells += [ci(reg), f"{sw:.0f}"]
                compare.setdefault((eps, adv), {})[label] = reg
            print(f"| {label} | {eps:g} | " + " | ".join(cells) + " |")
    for label, agent in (("hedge (non-private)", "hedge"),
                         ("center (trivial: the uniform mixture)", "center")):
        cells = []
        for env_kw in ADVERSARIES.values():
            reg, sw = games(agent, None, None, args.T, args.seeds, env_kw, {})
            cells += [ci(reg), f"{sw:.0f}"]
        print(f"| {label} | - | " + " | ".join(cells) + " |")

    print(f"\n{L2P} minus each other private learner, paired on the game seeds: mean "
          "[95% interval] and the side with the lower regret where the interval excludes 0 "
          "(`~`: within noise):\n")
    others = [label for label, *_ in learners(1.0, args.delta)][1:]
    short = [o.replace("private-ftrl counter=", "ftrl-").replace(" (Gaussian, idealized)", " (idealized)")
             .replace(" (Gaussian)", "") for o in others]
    print("| epsilon | adversary | " + " | ".join(short) + " |")
    print("|---|---|" + "---|" * len(others))
    for (eps, adv), regs in compare.items():
        mine = regs[f"{L2P} (L2P)"]
        cells = [paired(mine, regs[o], (L2P, name)) for o, name in zip(others, short)]
        print(f"| {eps:g} | {adv} | " + " | ".join(cells) + " |")
    print("\n(idealized: Gaussian counters whose guarantee holds for the real-valued "
          "mechanism, not its float64 computation)")

    print(f"\nSlope in T (oblivious, epsilon = {args.slope_eps:g}, mean of game seeds "
          f"0..{args.seeds - 1}):\n")
    print("| learner | " + " | ".join(f"T={t}" for t in horizons) + " | log-log slope |")
    print("|---|" + "---|" * len(horizons) + "---|")
    for label, agent, e, d in ((L2P, L2P, args.slope_eps, args.delta),
                               ("hedge (non-private)", "hedge", None, None)):
        ys = [float(games(agent, e, d, t, args.seeds, {}, {})[0].mean()) for t in horizons]
        print(f"| {label} | " + " | ".join(f"{y:.1f}" for y in ys)
              + f" | {loglog_slope(horizons, ys):.3f} |")
    bounds = []
    for t in horizons:
        problem = build_env(ENV, horizon=t).get_wrapper_attr("problem")
        bounds.append(make(L2P, problem, epsilon=args.slope_eps, delta=args.delta).regret_bound)
    print(f"| {L2P}: its calibration's bound w (ln d / eta + eta T B / 8) | "
          + " | ".join(f"{b:.1f}" for b in bounds) + f" | {loglog_slope(horizons, bounds):.3f} |")
    print(f"\n(wall time {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
