"""Worst-case noise and speed of the continual counters at equal privacy.

Noise: for T = 2^10 .. 2^20 prints a markdown table of ``sqrt(max_{t<=T} Var(eta_t))``
(per coordinate) for every counter of :mod:`agents.privacy.counters` (the BLT with its
default 4 buffers), all calibrated to the same Gaussian (epsilon, delta)-DP guarantee
for streams whose inputs change by at most ``Delta_2`` in l2 norm between neighbours,
the ratios tree / factorization and blt / factorization, and the time to optimize the
BLT's parameters for that T (uncached; median of 3). Everything is analytic
(``max_noise_variance``): nothing is simulated.

Speed: adds per second (``counter.add`` on Gaussian noise; counters built before the
clock starts) over the first ``min(T, --adds)`` inputs, which is each counter's rate
for the whole game except the factorization's (its step ``t`` costs ``O(t dim)``): its
column is the rate over a WHOLE game, measured where ``T <= --max-factorization``
(above, a game is ``O(T^2)``: hours at 2^20). The whole run took about 6 minutes on the
shared 2-core machine (most of it the factorization games at dim 64). Every counter is
timed ``--repeats`` times, interleaved, and the median is reported; the ratio blt / tree
compares medians taken in the same process (no absolute wall-clock claim).

Usage::

    python benchmarks/counter_noise.py [--epsilon 1] [--delta 1e-6] [--sensitivity 1]
        [--min-exp 10] [--max-exp 20] [--step 2] [--dims 1 64] [--adds 16384] [--repeats 5]
        [--max-factorization 16384] [--no-speed]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.privacy import COUNTERS, GAUSSIAN_ONLY, make_counter
from agents.privacy.counters.blt import DEFAULT_BUFFERS, blt_parameters


def noise_table(epsilon: float, delta: float, sensitivity: float,
                exponents: range) -> list[dict[str, float]]:
    """Rows ``{"T": T, name: worst-case std, ..., "blt setup s": seconds}``."""
    rows = []
    for k in exponents:
        row: dict[str, float] = {"T": 2**k}
        for name in COUNTERS:
            counter = make_counter(name, 2**k, 1, noise="gaussian", epsilon=epsilon,
                                   delta=delta, sensitivity=sensitivity)
            counter.guarantee()  # the accountant must confirm (epsilon, delta)
            row[name] = math.sqrt(counter.max_noise_variance())
        times = []
        for _ in range(3):
            start = time.perf_counter()
            blt_parameters.__wrapped__(2**k, DEFAULT_BUFFERS)  # uncached optimization
            times.append(time.perf_counter() - start)
        row["blt setup s"] = statistics.median(times)
        rows.append(row)
    return rows


def counter_adds(name: str, horizon: int, dim: int, adds: int, seed: int, budget: dict
                 ) -> Callable[[], None]:
    """A fresh counter (Gaussian noise) and ``adds`` random inputs drawn beforehand:
    calling the result feeds them to ``counter.add``. Building it is outside any timed
    region."""
    counter = make_counter(name, horizon, dim, noise="gaussian",
                           rng=np.random.default_rng(seed), **budget)
    stream = np.random.default_rng(seed + 1).uniform(-1.0, 1.0, size=(adds, dim))
    add = counter.add

    def feed() -> None:
        for z in stream:
            add(z)

    return feed


def adds_per_second(name: str, horizon: int, dim: int, adds: int, seed: int, budget: dict
                    ) -> float:
    """Inputs per second of :func:`counter_adds`."""
    feed = counter_adds(name, horizon, dim, adds, seed, budget)
    start = time.perf_counter()
    feed()
    return adds / (time.perf_counter() - start)


def speed_table(exponents: range, dim: int, adds: int, repeats: int, max_factorization: int,
                budget: dict) -> list[dict[str, float]]:
    """Rows ``{"T": T, name: median adds/s, ...}``; the factorization only where
    ``T <= max_factorization`` (a whole game, once)."""
    names = [n for n in COUNTERS if n != "factorization"]
    rows = []
    for k in exponents:
        horizon = 2**k
        n = min(horizon, adds)
        rates: dict[str, list[float]] = {name: [] for name in names}
        for rep in range(repeats):
            for name in names:
                rates[name].append(adds_per_second(name, horizon, dim, n, rep, budget))
        row: dict[str, float] = {"T": horizon}
        row.update({name: statistics.median(r) for name, r in rates.items()})
        row["factorization"] = (adds_per_second("factorization", horizon, dim, horizon, 0, budget)
                                if horizon <= max_factorization else math.nan)
        rows.append(row)
    return rows


def _shown(name: str) -> str:
    """A counter's column name; the real-valued Gaussian ones (``factorization``,
    ``blt``) are labelled idealized: their guarantee holds for the real-valued
    mechanism, not for its float64 computation."""
    return name + (" (idealized)" if name in GAUSSIAN_ONLY else "")


def _exp(t: float) -> str:
    return f"2^{int(math.log2(t))}"


def markdown(rows: list[dict[str, float]]) -> str:
    """Formats :func:`noise_table` rows as a markdown table."""
    names = list(COUNTERS)
    lines = ["| T | " + " | ".join(map(_shown, names))
             + " | tree / factorization | blt / factorization | blt setup (s) |",
             "|---:|" + "---:|" * (len(names) + 3)]
    for row in rows:
        cells = [_exp(row["T"])] + [f"{row[n]:.2f}" for n in names]
        cells.append(f"{row['tree'] / row['factorization']:.2f}")
        cells.append(f"{row['blt'] / row['factorization']:.4f}")
        cells.append(f"{row['blt setup s']:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def speed_markdown(rows: list[dict[str, float]]) -> str:
    """Formats :func:`speed_table` rows (adds/s in thousands) as a markdown table."""
    names = [n for n in COUNTERS if n != "factorization"]
    lines = ["| T | " + " | ".join(map(_shown, names))
             + " | factorization (idealized; whole game) | blt / tree |",
             "|---:|" + "---:|" * (len(names) + 2)]
    for row in rows:
        cells = [_exp(row["T"])] + [f"{row[n] / 1e3:.1f}k" for n in names]
        fact = row["factorization"]
        cells.append("-" if math.isnan(fact) else f"{fact / 1e3:.1f}k")
        cells.append(f"{row['blt'] / row['tree']:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--sensitivity", type=float, default=1.0)
    parser.add_argument("--min-exp", type=int, default=10)
    parser.add_argument("--max-exp", type=int, default=20)
    parser.add_argument("--step", type=int, default=2, help="exponent step of T")
    parser.add_argument("--dims", type=int, nargs="+", default=[1, 64])
    parser.add_argument("--adds", type=int, default=16384)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-factorization", type=int, default=2**14)
    parser.add_argument("--no-speed", action="store_true")
    args = parser.parse_args(argv)
    exponents = range(args.min_exp, args.max_exp + 1, args.step)
    budget = {"epsilon": args.epsilon, "delta": args.delta, "sensitivity": args.sensitivity}
    rows = noise_table(args.epsilon, args.delta, args.sensitivity, exponents)
    print(f"Worst-case per-coordinate noise std, Gaussian ({args.epsilon:g}, {args.delta:g})-DP, "
          f"l2 sensitivity {args.sensitivity:g}\n")
    print(markdown(rows))
    if args.no_speed:
        return
    for dim in args.dims:
        print(f"\nAdds per second, dim = {dim}, first min(T, {args.adds}) inputs, median of "
              f"{args.repeats} interleaved runs\n")
        print(speed_markdown(speed_table(exponents, dim, args.adds, args.repeats,
                                         args.max_factorization, budget)))


if __name__ == "__main__":
    main()
