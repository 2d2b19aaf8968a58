"""Regret rates of the follow-the-approximate-leader learners against the papers' rates.

For every learner and several horizons T it plays a few seeds, and fits the log-log
slope of the mean regret against T (least squares over the whole grid, and over the
three largest T). Each fitted slope is printed next to

* the slope, over the same grid, of the explicit bound the paper's proof gives for the
  parameters the agent uses (so a polylog bound such as ``log^2.5 T`` shows its real
  local slope ``2.5 / ln T``, not 0), and
* the asymptotic exponent of the paper's stated rate.

Learners (all with their default, theorem-derived parameters unless stated):

* ``pftal`` on ``DPFullInfo-StronglyConvex-v1`` -- Smith-Thakurta Thm. 4,
  ``O(p (L + H||C||)^2 log^2.5 T / (eps H))``: polylog (exponent 0). Proof bound:
  ``2 K ln T + 4 p K ln^2.5 T / eps``, ``K = (L + H||C||)^2 / H`` (Lemma 8, Fact 9,
  Claim 10).
* ``ftal`` on the same env -- ``2 K ln T`` (Fact 9 + Claim 10): exponent 0.
* ``pftal`` / ``ftal`` on ``DPFullInfo-Convex-v1`` (distance loss) -- App. C eq. (17)
  with the agent's ``lam``: ``4 p K ln^2.5 T / eps + 2 K ln T + lam T ||C||^2 / 2``
  (``K = (L + lam ||C||)^2 / lam``); Thm. 11: ``O~(sqrt(T))`` (exponent 0.5).
* ``submod-pftal`` on ``DPFullInfo-Submodular-v1`` -- Cardoso-Cummings Thm. 7,
  ``O~(n^1.5 M sqrt(T) / eps)``; proof bound (Lemmas 7, 9, 11 with the correct bias
  ``T H D^2 / 2``): ``8 n (4M + 2HD)^2 ln^2.5 T / (H eps) + 2 (4M + 2HD)^2 ln T / H
  + T H D^2 / 2``, ``D = sqrt(n)``.
* ``hazan-kale-submodular`` -- ``4 M sqrt(n T)`` (exponent 0.5).

The environments use the ``stochastic`` adversary (i.i.d. losses around a random
mean, so a learner that does not learn pays linear regret). The regret is the
midpoint of the recorder's bracket (exact for the quadratic and submodular losses).

The ``id defaults`` cases play ``DPFullInfo-Convex-v1`` at its registered defaults
(planted absolute-value losses, dimension 5: trivial play is linear there).

Usage::

    python benchmarks/full_info_pftal_rates.py [--seeds 2] [--min-exp 10] [--T-max 100000]
        [--quick] [--details] [--cases convex,submod]

Stdout is markdown (the block ``benchmarks/make_results.py`` puts in docs/results.md).
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
from agents.full_info.pftal import ftal_regularization, pftal_regularization
from agents.full_info.submod_pftal import submod_pftal_regularization
from dp_online_envs.lab.experiments.rates import (
    below_from,
    local_slope,
    loglog_slope,
    slope_reached,
)


# ------------------------------------------------------------------- proof bounds
def _bound_ftal(agent: Agent, T: float) -> float:
    """Smith-Thakurta Lemma 8 + Fact 9 + Claim 10 (+ App. C bias when regularized).

    The agent's parameters are those of its own horizon; in regularized mode ``lam``
    (= ``H``) is recomputed at ``T`` (App. C / Thm. 11), so the bound can be evaluated at
    any horizon."""
    p = agent.problem
    d, L, H, lam = p.dim, p.lipschitz, agent.H, agent.regularization
    C = p.domain.norm_bound(2)
    if lam > 0:
        lam = (pftal_regularization(int(T), d, agent.epsilon, L, C) if agent.private
               else ftal_regularization(int(T), L, C))
        H = lam
    lg = math.log(T)
    K = (L + H * C) ** 2 / H
    priv = 4.0 * d * K * lg**2.5 / agent.epsilon if agent.private else 0.0
    return 2.0 * K * lg + priv + lam * T * C**2 / 2.0


def _bound_submod(agent: Agent, T: float) -> float:
    """Cardoso-Cummings Lemmas 7, 9, 11 (full information: no gamma terms), with the
    default ``H = M / sqrt(n T)`` at ``T`` unless the agent's ``H`` was given."""
    n, M = agent.problem.dim, agent.scale
    H = submod_pftal_regularization(M, n, int(T))
    D = math.sqrt(n)
    lg = math.log(T)
    G = 4.0 * M + 2.0 * H * D
    return (8.0 * n * G**2 * lg**2.5 / (H * agent.epsilon) + 2.0 * G**2 * lg / H
            + T * H * D**2 / 2.0)


def _bound_hazan_kale(agent: Agent, T: float) -> float:
    """Hazan-Kale ``4 M sqrt(n T)`` (the agent's ``regret_bound`` at its own horizon)."""
    return agent.regret_bound * math.sqrt(T / agent.problem.horizon)


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


SC, CVX, SUB = "DPFullInfo-StronglyConvex-v1", "DPFullInfo-Convex-v1", "DPFullInfo-Submodular-v1"
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
    Case("pftal  convex, id defaults, eps=1", "pftal", CVX, _bound_ftal, 0.5,
         "ST Thm 11: sqrt(p T log^2.5 T/eps)", {}, {"epsilon": 1.0}),
    Case("pftal  convex, id defaults, eps=10", "pftal", CVX, _bound_ftal, 0.5,
         "ST Thm 11: sqrt(p T log^2.5 T/eps)", {}, {"epsilon": 10.0}),
    Case("ftal   convex, id defaults", "ftal", CVX, _bound_ftal, 0.5,
         "L|C| sqrt(T log T)", {}),
    Case("submod-pftal eps=1 (Thm 7 defaults)", "submod-pftal", SUB, _bound_submod, 0.5,
         "CC Thm 7: n^1.5 M sqrt(T)/eps", STOCH, {"epsilon": 1.0}),
    Case("submod-pftal eps=100 family bound", "submod-pftal", SUB, _bound_submod, 0.5,
         "CC Thm 7: n^1.5 M sqrt(T)/eps", STOCH, {"epsilon": 100.0, "gradient_bound": "family"}),
    Case("hazan-kale-submodular", "hazan-kale-submodular", SUB, _bound_hazan_kale, 0.5,
         "HK12: 4M sqrt(nT)", STOCH),
]


slope = loglog_slope


def _fmt_t(t: float) -> str:
    return "> 1e15" if math.isinf(t) else (f"{t:.2g}" if t >= 1e4 else f"{t:.0f}")


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
    return {"means": means, "sds": sds, "bounds": bounds, "agent": agent}


_TRIVIAL: dict[tuple, float] = {}


def trivial_rate(case: Case, T: int, seeds: int) -> float:
    """Trivial play's (the ``center`` agent's) mean regret per round at ``T`` on the
    case's instance (cached per instance)."""
    key = (case.env_id, tuple(sorted((k, repr(v)) for k, v in case.env_kw.items())), T)
    if key not in _TRIVIAL:
        env = gym.make(case.env_id, horizon=T, checkpoints=[T], **case.env_kw)
        agent = make("center", env.get_wrapper_attr("problem"))
        _TRIVIAL[key] = float(np.mean([play(env, agent, seed=1000 * s + 7).regret
                                       for s in range(seeds)])) / T
    return _TRIVIAL[key]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--min-exp", type=int, default=10)
    parser.add_argument("--T-max", type=int, default=100_000,
                        help="largest horizon: the grid is 2^min_exp, ... below T_max, T_max")
    parser.add_argument("--quick", action="store_true", help="T = 2^8 .. 2^11, 1 seed")
    parser.add_argument("--details", action="store_true", help="per-T tables of every case")
    parser.add_argument("--cases", default="",
                        help="comma-separated substrings of the case labels to run (default: all)")
    args = parser.parse_args(argv)
    keys = [k for k in args.cases.split(",") if k]
    cases = [c for c in CASES if not keys or any(k in c.label for k in keys)]
    min_exp, t_max, seeds = args.min_exp, args.T_max, args.seeds
    if args.quick:
        min_exp, t_max, seeds = 8, 2048, 1
    horizons = [2**k for k in range(min_exp, 64) if 2**k < t_max] + [t_max]
    start = time.time()
    summary_rows = []
    for case in cases:
        t0 = time.time()
        res = run_case(case, horizons, seeds)
        if args.details:
            print(f"\n### {case.label}  ({case.agent} on {case.env_id}, "
                  f"{case.agent_kw or 'defaults'})")
            print("| T | mean regret | sd | proof bound | regret / T |")
            print("|---:|---:|---:|---:|---:|")
            for T, m, s, b in zip(horizons, res["means"], res["sds"], res["bounds"]):
                print(f"| {T} | {m:.2f} | {s:.2f} | {b:.4g} | {m / T:.4f} |")
        fit_all = slope(horizons, res["means"])
        fit_tail = slope(horizons[-3:], res["means"][-3:])
        agent = res["agent"]

        def bound(T, case=case, agent=agent):
            return case.bound(agent, T)

        trivial = trivial_rate(case, horizons[-1], seeds)
        summary_rows.append((case, res["means"], fit_all, fit_tail,
                             local_slope(bound, horizons[-1]),
                             slope_reached(bound, case.exponent, t_max=1e15),
                             below_from(bound, lambda T, c=trivial: c * T, t_max=1e15),
                             trivial * horizons[-1]))
        print(f"{case.label}: {time.time() - t0:.1f} s", file=sys.stderr, flush=True)
    print(f"Log-log slopes of the mean regret, T = {horizons[0]} .. {horizons[-1]} "
          f"({seeds} seeds); trivial play (the `center` agent) at T = {horizons[-1]} on "
          "the same instance; the proof bound's local slope at the largest T, the horizon "
          "from which that slope stays within 0.1 of the paper's exponent, and the horizon "
          "from which the bound is below trivial play's regret (taken linear).\n")
    print("| learner | env options | regret at T max | trivial at T max | slope (all T) | "
          "slope (3 largest T) | within 0.1 | proof bound's slope | its slope within 0.1 "
          "from T | bound < trivial from T | paper rate | exponent |")
    print("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---|---:|")
    for case, means, a, t, b, t_rate, t_triv, triv in summary_rows:
        ok = "yes" if abs(a - case.exponent) <= 0.1 else "no"
        opts = ", ".join(f"{k}={v}" for k, v in case.env_kw.items()
                         if k != "adversary_kwargs") or "defaults"
        print(f"| {case.label.strip()} | {opts} | {means[-1]:.1f} | {triv:.0f} | {a:.3f} | "
              f"{t:.3f} | {ok} | {b:.3f} | {_fmt_t(t_rate)} | {_fmt_t(t_triv)} | "
              f"{case.rate} | {case.exponent} |")
    print(f"\n(total {time.time() - start:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
