"""Regret rates of the follow-the-approximate-leader learners against the papers' rates.

For every learner and several horizons T it plays a few seeds, and fits the log-log
slope of the mean regret against T (least squares over the whole grid, and over the
three largest T). Each fitted slope is printed next to

* the slope, over the same grid, of the explicit bound the paper's proof gives for the
  parameters the agent uses (so a polylog bound such as ``log^2.5 T`` shows its real
  local slope ``2.5 / ln T``, not 0), and
* the asymptotic exponent of the paper's stated rate.

Learners (all with their default, theorem-derived parameters unless stated):

* ``pftal`` on ``DPFullInfo-StronglyConvex-v0`` -- Smith-Thakurta Thm. 4,
  ``O(p (L + H||C||)^2 log^2.5 T / (eps H))``: polylog (exponent 0). Proof bound:
  ``2 K ln T + 4 p K ln^2.5 T / eps``, ``K = (L + H||C||)^2 / H`` (Lemma 8, Fact 9,
  Claim 10).
* ``ftal`` on the same env -- ``2 K ln T`` (Fact 9 + Claim 10): exponent 0.
* ``pftal`` / ``ftal`` on ``DPFullInfo-Convex-v0`` (distance loss) -- App. C eq. (17)
  with the agent's ``lam``: ``4 p K ln^2.5 T / eps + 2 K ln T + lam T ||C||^2 / 2``
  (``K = (L + lam ||C||)^2 / lam``); Thm. 11: ``O~(sqrt(T))`` (exponent 0.5).
* ``submod-pftal`` on ``DPFullInfo-Submodular-v0`` -- Cardoso-Cummings Thm. 7,
  ``O~(n^1.5 M sqrt(T) / eps)``; proof bound (Lemmas 7, 9, 11 with the correct bias
  ``T H D^2 / 2``): ``8 n (4M + 2HD)^2 ln^2.5 T / (H eps) + 2 (4M + 2HD)^2 ln T / H
  + T H D^2 / 2``, ``D = sqrt(n)``.
* ``hazan-kale-submodular`` -- ``4 M sqrt(n T)`` (exponent 0.5).

The environments use the ``stochastic`` adversary (i.i.d. losses around a random
mean, so a learner that does not learn pays linear regret). The regret is the
midpoint of the recorder's bracket (exact for the quadratic and submodular losses).

Usage::

    python benchmarks/full_info_pftal_rates.py [--seeds 3] [--min-exp 9] [--max-exp 15]

(the default grid T = 2^9 .. 2^15 with 3 seeds runs in under two minutes;
``--max-exp 16`` in about four).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym

import dp_online_envs  # noqa: F401  (registers the env ids)
from agents import Agent, make, play


# ------------------------------------------------------------------- proof bounds
def _bound_ftal(agent: Agent, T: int) -> float:
    """Smith-Thakurta Lemma 8 + Fact 9 + Claim 10 (+ App. C bias when regularized)."""
    p = agent.problem
    d, L, H, lam = p.dim, p.lipschitz, agent.H, agent.regularization
    C = p.domain.norm_bound(2)
    lg = math.log(T)
    K = (L + H * C) ** 2 / H
    priv = 4.0 * d * K * lg**2.5 / agent.epsilon if agent.private else 0.0
    return 2.0 * K * lg + priv + lam * T * C**2 / 2.0


def _bound_submod(agent: Agent, T: int) -> float:
    """Cardoso-Cummings Lemmas 7, 9, 11 (full information: no gamma terms)."""
    n, M, H = agent.problem.dim, agent.scale, agent.H
    D = math.sqrt(n)
    lg = math.log(T)
    G = 4.0 * M + 2.0 * H * D
    return (8.0 * n * G**2 * lg**2.5 / (H * agent.epsilon) + 2.0 * G**2 * lg / H
            + T * H * D**2 / 2.0)


def _bound_hazan_kale(agent: Agent, T: int) -> float:
    return agent.regret_bound


@dataclass
class Case:
    """One learner on one env."""

    label: str
    agent: str
    env_id: str
    bound: Callable[[Agent, int], float]
    exponent: float
    rate: str
    env_kw: dict = field(default_factory=dict)
    agent_kw: dict = field(default_factory=dict)


SC, CVX, SUB = "DPFullInfo-StronglyConvex-v0", "DPFullInfo-Convex-v0", "DPFullInfo-Submodular-v0"
STOCH = {"adversary": "stochastic"}
CASES = [
    Case("pftal  strongly convex eps=1", "pftal", SC, _bound_ftal, 0.0,
         "ST Thm 4: p(L+H|C|)^2 log^2.5 T/(eps H)", STOCH, {"epsilon": 1.0}),
    Case("pftal  strongly convex eps=10", "pftal", SC, _bound_ftal, 0.0,
         "ST Thm 4: p(L+H|C|)^2 log^2.5 T/(eps H)", STOCH, {"epsilon": 10.0}),
    Case("ftal   strongly convex", "ftal", SC, _bound_ftal, 0.0,
         "HAK07 / ST Claim 10: (L+H|C|)^2 log T/H", STOCH),
    Case("pftal  convex (App. C) eps=1", "pftal", CVX, _bound_ftal, 0.5,
         "ST Thm 11: sqrt(p T log^2.5 T/eps)", {**STOCH, "loss": "distance"}, {"epsilon": 1.0}),
    Case("ftal   convex (regularized)", "ftal", CVX, _bound_ftal, 0.5,
         "L|C| sqrt(T log T)", {**STOCH, "loss": "distance"}),
    Case("submod-pftal eps=1 (Thm 7 defaults)", "submod-pftal", SUB, _bound_submod, 0.5,
         "CC Thm 7: n^1.5 M sqrt(T)/eps", STOCH, {"epsilon": 1.0}),
    Case("submod-pftal eps=100 family bound", "submod-pftal", SUB, _bound_submod, 0.5,
         "CC Thm 7: n^1.5 M sqrt(T)/eps", STOCH, {"epsilon": 100.0, "gradient_bound": "family"}),
    Case("hazan-kale-submodular", "hazan-kale-submodular", SUB, _bound_hazan_kale, 0.5,
         "HK12: 4M sqrt(nT)", STOCH),
]


def slope(ts, values) -> float:
    """Least-squares slope of ``log values`` against ``log ts``."""
    x, y = np.log(np.asarray(ts, float)), np.log(np.maximum(np.asarray(values, float), 1e-12))
    return float(np.polyfit(x, y, 1)[0])


def run_case(case: Case, horizons: list[int], seeds: int) -> dict:
    means, sds, bounds = [], [], []
    for T in horizons:
        env = gym.make(case.env_id, horizon=T, checkpoints=[T], **case.env_kw)
        agent = make(case.agent, env.get_wrapper_attr("problem"), **case.agent_kw)
        regrets = []
        for s in range(seeds):
            summary = play(env, agent, seed=1000 * s + 7)
            assert summary.projected_actions == 0
            regrets.append(summary.regret)
        means.append(float(np.mean(regrets)))
        sds.append(float(np.std(regrets)))
        bounds.append(case.bound(agent, T))
    return {"means": means, "sds": sds, "bounds": bounds}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--min-exp", type=int, default=9)
    parser.add_argument("--max-exp", type=int, default=15)
    args = parser.parse_args(argv)
    horizons = [2**k for k in range(args.min_exp, args.max_exp + 1)]
    start = time.time()
    summary_rows = []
    for case in CASES:
        t0 = time.time()
        res = run_case(case, horizons, args.seeds)
        print(f"\n### {case.label}  ({case.agent} on {case.env_id}, {case.agent_kw or 'defaults'})")
        print("| T | mean regret | sd | proof bound | regret / T |")
        print("|---:|---:|---:|---:|---:|")
        for T, m, s, b in zip(horizons, res["means"], res["sds"], res["bounds"]):
            print(f"| {T} | {m:.2f} | {s:.2f} | {b:.4g} | {m / T:.4f} |")
        fit_all = slope(horizons, res["means"])
        fit_tail = slope(horizons[-3:], res["means"][-3:])
        fit_bound = slope(horizons, res["bounds"])
        summary_rows.append((case, fit_all, fit_tail, fit_bound))
        print(f"slope: all {fit_all:.3f}, largest three T {fit_tail:.3f}; proof bound "
              f"{fit_bound:.3f}; paper exponent {case.exponent}  ({time.time() - t0:.1f} s)")
    print("\n## Summary: log-log slopes of mean regret vs T "
          f"(T = {horizons[0]}..{horizons[-1]}, {args.seeds} seeds)")
    print("| learner | measured (all T) | measured (3 largest T) | proof bound, same T | "
          "paper rate | paper exponent |")
    print("|---|---:|---:|---:|---|---:|")
    for case, a, t, b in summary_rows:
        print(f"| {case.label} | {a:.3f} | {t:.3f} | {b:.3f} | {case.rate} | {case.exponent} |")
    print(f"\ntotal {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
