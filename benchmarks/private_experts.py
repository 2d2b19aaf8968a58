"""Regret and switch counts of the private experts learners on ``DPFullInfo-Experts-v0``
under an oblivious and an adaptive adversary (issue 15, part 2).

Plays each learner through :func:`dp_online_envs.experiments.game.play_game` (so the
numbers are those of the game records, ``regret`` and ``switches``: how many rounds'
actions differ from the previous round's), ``--seeds`` games each, and prints mean
regret and mean switches:

* ``private-ftrl`` with every continual counter (Laplace for the pure-DP counters,
  Gaussian at ``delta = --delta`` for the Gaussian-only ``factorization`` and ``blt``),
  ``private-ftpl`` (Gaussian), and the non-private ``hedge``;
* adversaries: the env's default (``oblivious``) and ``punish-favorite`` (adaptive).

The low-switching private experts learner of the issue (Asi-Koren-Liu-Talwar NeurIPS
2024, or Asi-Feldman-Koren-Talwar COLT 2023) is NOT implemented yet; this table is the
baseline it is to be compared with. Usage::

    python benchmarks/private_experts.py                  # T = 2000, 3 seeds, eps 1
    python benchmarks/private_experts.py --T 500 --seeds 2 --eps 0.5
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import dp_online_envs  # noqa: E402,F401  (registers the env ids)
from agents.privacy import COUNTERS, GAUSSIAN_ONLY  # noqa: E402
from dp_online_envs.experiments.game import GameSpec, play_game  # noqa: E402

ENV = "DPFullInfo-Experts-v0"
ADVERSARIES = {"oblivious": {}, "punish-favorite (adaptive)": {"adversary": "punish-favorite"}}


def learners(eps: float, delta: float):
    """(label, agent, epsilon, delta, options) of every learner of the table."""
    out = []
    for c in COUNTERS:
        d = delta if c in GAUSSIAN_ONLY else None  # factorization, blt
        out.append((f"private-ftrl counter={c}" + (" (Gaussian)" if d else ""),
                    "private-ftrl", eps, d, {"counter": c}))
    out.append(("private-ftpl (Gaussian)", "private-ftpl", eps, delta, {}))
    out.append(("hedge (non-private)", "hedge", None, None, {}))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--T", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-6)
    args = ap.parse_args(argv)
    start = time.perf_counter()
    print(f"### Private experts on `{ENV}`: regret and switches (T = {args.T}, "
          f"epsilon = {args.eps:g}, delta = {args.delta:g} where Gaussian, "
          f"{args.seeds} seeds)\n")
    print(f"Printed by `python benchmarks/private_experts.py --T {args.T} --seeds "
          f"{args.seeds} --eps {args.eps:g} --delta {args.delta:g}`.\n")
    print("| learner | " + " | ".join(f"{a}: regret | {a}: switches" for a in ADVERSARIES)
          + " |")
    print("|---|" + "---|---|" * len(ADVERSARIES))
    for label, agent, eps, delta, kw in learners(args.eps, args.delta):
        cells = []
        for env_kw in ADVERSARIES.values():
            recs = [play_game(GameSpec(ENV, agent, eps, delta, args.T, i, env_kwargs=env_kw,
                                       agent_kwargs=kw)) for i in range(args.seeds)]
            cells.append(f"{np.mean([r['regret'] for r in recs]):.1f}")
            cells.append(f"{np.mean([r['switches'] for r in recs]):.0f}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print(f"\n(wall time {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
