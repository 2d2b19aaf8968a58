"""Regret rates of the bandit submodular minimizers on ``DPBandit-Submodular-v1``.

Learners: ``hazan-kale-submodular-bandit`` (non-private, Hazan-Kale 2012: regret
``O(n M T^{2/3})`` -> exponent 2/3) and ``bandit-submod-pftal`` (Cardoso-Cummings 2019,
Alg. 2, Thm. 2 / Thm. 9: ``O~(M n^{3/2} T^{3/4} / eps)`` -> exponent 3/4), at eps = 1
and 10 with the noise calibrated to the real sensitivity of the one-point estimates,
and at eps = 1 with the paper's calibration (the paper's noise; the agent then declares
the epsilon that noise really achieves, printed).

A second instance is the id's own default (``DPBandit-Submodular-v1`` as registered:
trivial play is linear there, the ``center`` row). The table gives, per learner, the
horizon from which Cardoso-Cummings' leading term ``M n^{3/2} T^{3/4} / eps`` (constants
and logs dropped: a lower estimate of their bound) is below trivial play's regret,
taken linear at its measured rate: before it the theorem promises nothing better than
not learning.

For every learner and ``T = T_max / 100 .. T_max`` (two per decade; ``--T-max``,
default ``1e5``; ``--quick``: ``T_max = 4000``, 1 seed) the mean
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

    python benchmarks/bandit_submodular_rates.py [--seeds 2] [--T-max 100000] [--quick]
        [--details] [--instances "id defaults"]

Stdout is markdown (the block ``benchmarks/make_results.py`` puts in docs/results.md);
``--details`` adds the per-T tables (gamma, pseudo-regret, noise share).
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
from dp_online_envs.lab.experiments.rates import (
    below_from,
    geometric_horizons,
    loglog_slope,
)

ENV_ID = "DPBandit-Submodular-v1"
MEAN = [0.1, 0.1, 0.1, 0.9, 0.9, 0.1, 0.1]
ENV_KW = {"n": 4, "adversary": "stochastic", "adversary_kwargs": {"mean": MEAN}}
#: (instance label, env options, learner labels played on it)
INSTANCES = [
    ("n=4, fixed mean", ENV_KW, None),
    ("id defaults", {}, ("hazan-kale (non-private)", "bandit-submod-pftal eps=1",
                         "bandit-submod-pftal eps=10", "bandit-submod-pftal eps=100")),
]

#: (label, agent, options, theoretical exponent)
LEARNERS = [
    ("hazan-kale (non-private)", "hazan-kale-submodular-bandit", {}, 2 / 3),
    ("bandit-submod-pftal eps=1", "bandit-submod-pftal", {"epsilon": 1.0}, 3 / 4),
    ("bandit-submod-pftal eps=10", "bandit-submod-pftal", {"epsilon": 10.0}, 3 / 4),
    ("bandit-submod-pftal eps=100", "bandit-submod-pftal", {"epsilon": 100.0}, 3 / 4),
    ("  (paper calibration, eps=1 asked)", "bandit-submod-pftal",
     {"epsilon": 1.0, "calibration": "paper"}, 3 / 4),
]


slope = loglog_slope


def run(name: str, kw: dict, horizon: int, seed: int, env_kw: dict = ENV_KW):
    env = gym.make(ENV_ID, horizon=horizon, checkpoints=[horizon], **env_kw)
    agent = make(name, env.get_wrapper_attr("problem"), seed=seed, **kw)
    summary = play(env, agent, seed=seed)
    return agent, summary


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--T-max", type=int, default=100_000)
    ap.add_argument("--quick", action="store_true", help="T_max = 4000, 1 seed")
    ap.add_argument("--details", action="store_true", help="per-T tables")
    ap.add_argument("--instances", default="n=4, fixed mean;id defaults",
                    help="semicolon-separated instance labels to play")
    args = ap.parse_args(argv)
    wanted = [w.strip() for w in args.instances.split(";") if w.strip()]
    unknown = [w for w in wanted if w not in [i[0] for i in INSTANCES]]
    if unknown:
        ap.error(f"unknown instance(s) {unknown}; expected some of {[i[0] for i in INSTANCES]}")
    instances = [i for i in INSTANCES if i[0] in wanted]
    t_max, seeds = (4000, 1) if args.quick else (args.T_max, args.seeds)
    ts = geometric_horizons(t_max)
    start = time.perf_counter()
    out = sys.stdout if args.details else sys.stderr
    rows = []
    for inst, env_kw, names in instances:
        trivial = [float(np.mean([run("center", {}, T, s, env_kw)[1].regret_hi
                                  for s in range(seeds)])) for T in ts]
        rate = trivial[-1] / ts[-1]
        rows.append((inst, "trivial (center)", trivial, 1.0, None))
        for label, name, kw, expo in LEARNERS:
            if names is not None and label not in names:
                continue
            regrets, pseudos = [], []
            print(f"{inst}: {label}  [theory: T^{expo:.3g}]", file=out)
            for T in ts:
                r, ps = [], []
                for seed in range(seeds):
                    agent, s = run(name, kw, T, seed, env_kw)
                    r.append(s.regret_hi)
                    ps.append(s.pseudo_regret if s.pseudo_regret is not None else math.nan)
                share = ""
                if agent.private:
                    sd = math.sqrt(agent._counter.max_noise_variance())
                    share = f"{sd / (agent.H * T):11.3g}"
                regrets.append(float(np.mean(r)))
                pseudos.append(float(np.mean(ps)))
                print(f"  T={T:6d} gamma={agent.gamma:6.3f} regret={regrets[-1]:10.2f} "
                      f"pseudo={pseudos[-1]:9.2f} regret/T={regrets[-1] / T:7.4f} "
                      f"noise share={share}", file=out, flush=True)
            cross = None
            if agent.private:
                n, m, eps = agent.problem.dim, agent.scale, agent.privacy.epsilon

                def lead(T, n=n, m=m, eps=eps):
                    return m * n**1.5 * T**0.75 / eps

                cross = below_from(lead, lambda T, c=rate: c * T, t_max=1e30)
            rows.append((inst, label, regrets, expo, cross))
    print(f"{ENV_ID}: mean regret (`regret_hi`, exact here) over {seeds} seed(s), "
          f"T = {ts[0]} .. {ts[-1]}; slope = least-squares log-log slope over all T, "
          "last = over the last half-decade.\n")
    print("| instance | learner | " + " | ".join(f"T={T}" for T in ts)
          + " | slope | last | theory | within 0.1 | leading term < trivial from T |")
    print("|---|---|" + "---:|" * (len(ts) + 3) + "---|---:|")
    for inst, label, regrets, expo, cross in rows:
        fit = slope(ts, regrets)
        ok = "yes" if abs(fit - expo) <= 0.1 else "no"
        c = "" if cross is None else ("> 1e30" if math.isinf(cross) else f"{cross:.2g}")
        print(f"| {inst} | {label.strip()} | " + " | ".join(f"{v:.1f}" for v in regrets)
              + f" | {fit:.3f} | {slope(ts[-2:], regrets[-2:]):.3f} | {expo:.3g} | {ok} | "
              f"{c} |")
    print("\nprivate (eps = 1, real calibration) / non-private regret:\n")
    print("| instance | " + " | ".join(f"T={T}" for T in ts) + " |")
    print("|---|" + "---:|" * len(ts))
    for inst, _, _ in instances:
        hk = next(r for r in rows if r[0] == inst and r[1].startswith("hazan-kale"))[2]
        pr = next(r for r in rows if r[0] == inst and r[1] == "bandit-submod-pftal eps=1")[2]
        print(f"| {inst} | " + " | ".join(f"{p / h:.2f}" for p, h in zip(pr, hk)) + " |")
    print(f"\ntotal time {time.perf_counter() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
