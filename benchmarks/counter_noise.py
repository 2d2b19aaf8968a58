"""Worst-case noise of the continual counters at equal privacy.

For T = 2^10 .. 2^20 a markdown table of ``sqrt(max_{t<=T} Var(eta_t))`` (per
coordinate) for every counter of :mod:`agents.privacy.counters` (the BLT with its
default 4 buffers), all calibrated to the same Gaussian (epsilon, delta)-DP guarantee
for streams whose inputs change by at most ``Delta_2`` in l2 norm between neighbours,
the ratios tree / factorization and blt / factorization, and the time to optimize the
BLT's parameters for that T (uncached; median of 3, wall time). Everything but that
time is analytic (``max_noise_variance``): nothing is simulated; each calibration is
confirmed by the accountant. ``--save FILE`` stores the rows (:mod:`benchmarks.stored`);
:func:`render` draws the block of ``docs/results.md`` from them.

The counters' speed (adds per second against a plain running sum) is a case of the
speed harness (``python -m benchmarks.speed -k counter``), which builds its counters with
:func:`counter_adds`.

Usage::

    python benchmarks/counter_noise.py [--epsilon 1] [--delta 1e-6] [--sensitivity 1]
        [--min-exp 10] [--max-exp 20] [--step 2] [--save FILE]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable

import numpy as np

from agents.privacy import COUNTERS, GAUSSIAN_ONLY, make_counter
from agents.privacy.counters.blt import DEFAULT_BUFFERS, blt_parameters
from benchmarks import stored


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


def render(doc: dict) -> str:
    """The markdown block of a stored document (:func:`main`'s ``--save``)."""
    cfg = doc["settings"]
    return (f"Worst-case per-coordinate noise std, Gaussian ({cfg['epsilon']:g}, "
            f"{cfg['delta']:g})-DP, l2 sensitivity {cfg['sensitivity']:g}\n\n"
            f"{markdown(doc['data']['rows'])}\n\n"
            "Adds per second of each counter against a plain running sum: the speed "
            "harness's `counter-*` cases (`python -m benchmarks.speed -k counter`; stored "
            "ratios in `benchmarks/speed/baseline.json`, tabled in "
            "[the performance guide](guides/performance.md)).")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--sensitivity", type=float, default=1.0)
    parser.add_argument("--min-exp", type=int, default=10)
    parser.add_argument("--max-exp", type=int, default=20)
    parser.add_argument("--step", type=int, default=2, help="exponent step of T")
    stored.add_save_argument(parser)
    args = parser.parse_args(argv)
    exponents = range(args.min_exp, args.max_exp + 1, args.step)
    run = stored.Measurement("counter-noise", {
        "epsilon": args.epsilon, "delta": args.delta, "sensitivity": args.sensitivity,
        "T": [2**k for k in exponents], "blt buffers": DEFAULT_BUFFERS})
    doc = run.document({"rows": noise_table(args.epsilon, args.delta, args.sensitivity,
                                            exponents)})
    stored.save(args.save, doc)
    print(render(doc))


if __name__ == "__main__":
    main()
