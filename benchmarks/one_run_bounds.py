"""The one-run audit's two bounds side by side on the counts its audits produce.

For ``m`` canary rounds (the course's 16 games of T = 16384 by default), ``r`` guesses of
which a share ``acc`` are right, at the confidence one of the three arm rules is scored
at (``1 - 0.05 / 3``): the binomial bound of Steinke, Nasr and Jagielski (exact at
``delta = 0``), the f-DP bound of Mahloujifar, Melis and Chaudhuri
(:func:`~dp_online_envs.lab.audit.one_run.fdp_eps_lower_bound`), and, with ``delta > 0``,
the audit's bound (the larger of the two). Prints a markdown table and the CPU
seconds of the slowest f-DP bound::

    python benchmarks/one_run_bounds.py [--canaries M] [--delta D]
"""

from __future__ import annotations

import argparse
import math
import time

from scipy import optimize

from dp_online_envs.lab.audit.one_run import (
    fdp_eps_lower_bound,
    one_run_eps_lower_bound,
    one_run_p_value,
)


def steinke(r: int, v: int, delta: float, m: int, alpha: float) -> float:
    """Steinke et al.'s bound alone (the root of their p-value at ``alpha``)."""
    def excess(e: float) -> float:
        return one_run_p_value(r, v, e, delta=delta, canaries=m) - alpha

    if v == 0 or excess(0.0) > 0:
        return 0.0
    return float(optimize.brentq(excess, 0.0, 200.0, xtol=1e-10))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--canaries", type=int, default=16 * 16384)
    parser.add_argument("--delta", type=float, default=1e-6)
    args = parser.parse_args(argv)
    m, delta, level = args.canaries, args.delta, 1.0 - 0.05 / 3
    print(f"m = {m} canaries, confidence {level:.4f} (one rule of three); delta = 0 "
          f"columns, then delta = {delta:g}")
    print("| r | right | binomial (delta 0) | f-DP (delta 0) | Steinke et al. | f-DP | "
          "audit |")
    print("|---|---|---|---|---|---|---|")
    slowest = 0.0
    for r in (10, 30, 100, 300, 1000, 3000):
        for acc in (0.6, 0.7, 0.8, 0.9, 1.0):
            v = math.ceil(acc * r)
            binom = one_run_eps_lower_bound(r, v, confidence=level)
            start = time.process_time()
            fdp0 = fdp_eps_lower_bound(r, v, confidence=level, canaries=m)
            fdp = fdp_eps_lower_bound(r, v, confidence=level, delta=delta, canaries=m)
            slowest = max(slowest, (time.process_time() - start) / 2)
            snj = steinke(r, v, delta, m, 1.0 - level)
            audit = one_run_eps_lower_bound(r, v, confidence=level, delta=delta, canaries=m)
            print(f"| {r} | {v} | {binom:.3f} | {fdp0:.3f} | {snj:.3f} | {fdp:.3f} | "
                  f"{audit:.3f} |")
    print(f"slowest f-DP bound: {slowest:.3f} s CPU")


if __name__ == "__main__":
    main()
