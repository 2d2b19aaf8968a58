"""Regret rates of the bandit submodular minimizers on ``DPBandit-Submodular-v0``.

Learners: ``hazan-kale-submodular-bandit`` (non-private, Hazan-Kale 2012: regret
``O(n M T^{2/3})`` -> exponent 2/3) and ``bandit-submod-pftal`` (Cardoso-Cummings 2019,
Alg. 2, Thm. 2 / Thm. 9: ``O~(M n^{3/2} T^{3/4} / eps)`` -> exponent 3/4), at eps = 1
and 10 with the noise calibrated to the real sensitivity of the one-point estimates,
and at eps = 1 with the paper's calibration (the paper's noise; the agent then declares
the epsilon that noise really achieves, printed).

For every learner and ``T = 2^10 .. 2^15`` (``--quick``: ``2^9 .. 2^13``) the mean
regret against the best fixed set in hindsight (``summary.regret_hi``, exact here) and
the mean pseudo-regret (against the mean loss of the i.i.d. adversary) over ``--seeds``
seeds (paired: seed s is the same instance for every T and learner), and the
least-squares slope of ``log(mean regret)`` on ``log T``. Then the ratio of the private
regret at eps = 1 to the non-private one for each T.

Instance: ``n = 4`` (so that the capped exploration rates are below 1 on the whole
grid: ``gamma = n / T^{1/4} < 1`` needs ``T > n^4 = 256``, Hazan-Kale's ``n / T^{1/3}``
needs ``T > 64``), the default concave-modular loss with ``M = 1``, the ``stochastic``
adversary (i.i.d. two-point draws) with the fixed mean ``alpha = 0.1``, ``beta = (0.9,
0.9, 0.1, 0.1)`` -- mean function ``(0.1 sum_j sqrt|S & G_j| - sum_{i in S} beta_i) / Z``,
minimized by ``S = {0, 1}``, an interior vertex of the chain. A random mean (the
adversary's default) gives Lovász gradients of a few hundredths of ``M``; the
worst-case tunings (``eta = 1/(4 M T^{2/3})``, ``H = M / (sqrt(n) T^{1/4})``) then do
not leave the starting region within ``T = 2^15`` and every learner is linear there.

The measured slopes are those of the pre-asymptotic regime and are expected ABOVE the
theoretical exponents (which are upper bounds): the "noise share" column is the
per-coordinate standard deviation of the counter noise in the last release divided by
``H T`` -- the noise's displacement of the final iterate ``x_T = Proj(-v_T / (H T))``;
above ~1 the private iterate is driven by the noise and the regret is near-linear.

Usage::

    python benchmarks/bandit_submodular_rates.py [--seeds 4] [--quick]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym

import dp_online_envs  # noqa: F401  (registers the env ids)
from agents import make, play

ENV_ID = "DPBandit-Submodular-v0"
MEAN = [0.1, 0.1, 0.1, 0.9, 0.9, 0.1, 0.1]
ENV_KW = {"n": 4, "adversary": "stochastic", "adversary_kwargs": {"mean": MEAN}}

#: (label, agent, options, theoretical exponent)
LEARNERS = [
    ("hazan-kale (non-private)", "hazan-kale-submodular-bandit", {}, 2 / 3),
    ("bandit-submod-pftal eps=1", "bandit-submod-pftal", {"epsilon": 1.0}, 3 / 4),
    ("bandit-submod-pftal eps=10", "bandit-submod-pftal", {"epsilon": 10.0}, 3 / 4),
    ("bandit-submod-pftal eps=100", "bandit-submod-pftal", {"epsilon": 100.0}, 3 / 4),
    ("  (paper calibration, eps=1 asked)", "bandit-submod-pftal",
     {"epsilon": 1.0, "calibration": "paper"}, 3 / 4),
]


def slope(ts: list[int], ys: list[float]) -> float:
    """Least-squares slope of log y on log T (nan if some y <= 0)."""
    y = np.asarray(ys, dtype=float)
    if np.any(y <= 0):
        return math.nan
    return float(np.polyfit(np.log(ts), np.log(y), 1)[0])


def run(name: str, kw: dict, horizon: int, seed: int):
    env = gym.make(ENV_ID, horizon=horizon, **ENV_KW)
    agent = make(name, env.get_wrapper_attr("problem"), seed=seed, **kw)
    summary = play(env, agent, seed=seed)
    return agent, summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--quick", action="store_true", help="T = 2^9 .. 2^13")
    args = ap.parse_args()
    ts = [2**k for k in (range(9, 14) if args.quick else range(10, 16))]
    start = time.perf_counter()
    print(f"{ENV_ID} {ENV_KW}, M = 1, T = {ts}, {args.seeds} seeds (paired)\n")
    results: dict[str, list[float]] = {}
    for label, name, kw, expo in LEARNERS:
        regrets, pseudos = [], []
        print(f"{label}  [theory: T^{expo:.3g}]")
        print(f"  {'T':>6} {'gamma':>6} {'mean regret':>12} {'+-se':>7} {'pseudo':>9} "
              f"{'regret/T':>9} {'noise share':>11}")
        for T in ts:
            r, ps = [], []
            for seed in range(args.seeds):
                agent, s = run(name, kw, T, seed)
                r.append(s.regret_hi)
                ps.append(s.pseudo_regret if s.pseudo_regret is not None else math.nan)
            share = ""
            if agent.private:
                sd = math.sqrt(agent._counter.max_noise_variance())
                share = f"{sd / (agent.H * T):11.3g}"
            m, se = float(np.mean(r)), float(np.std(r, ddof=1) / math.sqrt(len(r)))
            regrets.append(m)
            pseudos.append(float(np.mean(ps)))
            print(f"  {T:6d} {agent.gamma:6.3f} {m:12.2f} {se:7.2f} {pseudos[-1]:9.2f} "
                  f"{m / T:9.4f} {share}")
        results[label] = regrets
        extra = ""
        if kw.get("calibration") == "paper":
            extra = (f"; declares eps = {agent.privacy.epsilon:.3g} at T = {ts[-1]} "
                     f"(real sensitivity {agent.sensitivity:.3g} vs paper L = "
                     f"{agent.paper_lipschitz:.3g})")
        print(f"  slope of log regret: {slope(ts, regrets):.3f} (last doubling "
              f"{slope(ts[-2:], regrets[-2:]):.3f}), of log pseudo-regret: "
              f"{slope(ts, pseudos):.3f}; theory {expo:.3f}{extra}\n", flush=True)

    hk, pr = results[LEARNERS[0][0]], results[LEARNERS[1][0]]
    print("private (eps = 1, real calibration) / non-private regret:")
    print("  " + "  ".join(f"T={T}: {p / h:.2f}" for T, p, h in zip(ts, pr, hk)))
    print(f"\ntotal time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
