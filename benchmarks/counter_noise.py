"""Worst-case noise of the continual counters at equal privacy.

For T = 2^10 .. 2^20 prints a markdown table of ``sqrt(max_{t<=T} Var(eta_t))``
(per coordinate) for every counter of :mod:`agents.privacy.counters`, all
calibrated to the same Gaussian (epsilon, delta)-DP guarantee for streams whose
inputs change by at most ``Delta_2`` in l2 norm between neighbours, plus the
ratio tree / factorization.  Everything is analytic (``max_noise_variance``):
nothing is simulated, so T = 2^20 takes about a second.

Usage::

    python benchmarks/counter_noise.py [--epsilon 1] [--delta 1e-6] [--sensitivity 1]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.privacy import COUNTERS, make_counter  # noqa: E402


def noise_table(epsilon: float, delta: float, sensitivity: float,
                exponents: range) -> list[dict[str, float]]:
    """Rows ``{"T": T, name: worst-case std, ...}`` for every counter."""
    rows = []
    for k in exponents:
        row: dict[str, float] = {"T": 2**k}
        for name in COUNTERS:
            counter = make_counter(name, 2**k, 1, noise="gaussian", epsilon=epsilon,
                                   delta=delta, sensitivity=sensitivity)
            counter.guarantee()  # the accountant must confirm (epsilon, delta)
            row[name] = math.sqrt(counter.max_noise_variance())
        rows.append(row)
    return rows


def markdown(rows: list[dict[str, float]]) -> str:
    """Formats :func:`noise_table` rows as a markdown table."""
    names = list(COUNTERS)
    lines = ["| T | " + " | ".join(names) + " | tree / factorization |",
             "|---:|" + "---:|" * (len(names) + 1)]
    for row in rows:
        cells = [f"2^{int(math.log2(row['T']))}"] + [f"{row[n]:.2f}" for n in names]
        cells.append(f"{row['tree'] / row['factorization']:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--sensitivity", type=float, default=1.0)
    parser.add_argument("--min-exp", type=int, default=10)
    parser.add_argument("--max-exp", type=int, default=20)
    args = parser.parse_args(argv)
    rows = noise_table(args.epsilon, args.delta, args.sensitivity,
                       range(args.min_exp, args.max_exp + 1))
    print(f"Worst-case per-coordinate noise std, Gaussian ({args.epsilon:g}, {args.delta:g})-DP, "
          f"l2 sensitivity {args.sensitivity:g}\n")
    print(markdown(rows))


if __name__ == "__main__":
    main()
