"""Regret rates of the bandit convex learners, private vs non-private.

Plays the registered envs end to end for several horizons T and seeds and reports

1. **Slopes**: the least-squares slope of ``log(mean regret)`` against ``log T`` for
   ``bandit-pftal`` and ``fkm`` (l2 ball: ``DPBandit-Convex-v1``,
   ``DPBandit-StronglyConvex-v1``) and ``private-projection-free`` and ``garber-kretzu``
   (the four polytope envs), next to the exponent the theory promises:
   Smith-Thakurta Table 2 / Thm. 6 / Thm. 17 (``T^{3/4}``; ``T^{2/3}`` for strongly
   convex losses and an oblivious adversary), FKM Thm. 3.3 (``T^{3/4}``), Ene-Nguyen-
   Vladu Thm. 1.1 (``T^{3/4}``), Garber-Kretzu (``T^{3/4}``). Each row also says whether
   the smoothing radius was clamped (``zeta`` / ``beta`` > r/2) at the smallest and the
   largest T: while it is, the learner plays a half-size copy of the domain and its
   regret grows linearly, whatever the theorem's exponent.
2. **Theory regime**: the same learners on a 2-dimensional l2 ball (``DPBandit-Convex-v1``
   with ``dim=2``, distance losses), where ``D sqrt(n) / T^{1/4} <= r/2`` from T = 1024
   on, so Ene-Nguyen-Vladu's radius is used unclamped.
3. **Price of privacy**: mean regret of each private learner at ``epsilon = 1`` over its
   non-private counterpart (bandit-pftal / fkm, private-projection-free / garber-kretzu).
The polytope ids at their current defaults are the separation study's
(``benchmarks/studies/separation``, its ``render_rates``).

The l2-ball part (``--only ball``) plays ``DPBandit-Convex-v1`` and
``DPBandit-StronglyConvex-v1`` at their current defaults (dimension 2, planted losses:
trivial play, the ``center`` rows, is linear) for ``T = T_max / 100 .. T_max``
(``--T-max``, default ``1e5``), at eps = 1 and 10, and gives the horizon from which
Smith-Thakurta's leading term ``p T^a chi`` is below trivial play's regret.

Regret is ``summary.regret`` (the midpoint of the recorder's bracket when the
comparator is not exact). Usage::

    python benchmarks/bandit_convex_rates.py [--seeds 3] [--jobs 2] [--quick] [--T-max 100000]
        [--only ball,former,theory]

``--only`` picks the parts: ``ball`` (the l2-ball ids at their defaults, above),
``former`` (sections 1 and 3 on the polytope ids' v0 instances, pinned in
:data:`PRE_2026_11`) and ``theory`` (section 2). Each part prints a markdown block.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym  # noqa: E402

import dp_online_envs  # noqa: E402,F401  (registers the env ids)
from agents import make, play  # noqa: E402
from dp_online_envs.lab.experiments.rates import (  # noqa: E402
    below_from,
    geometric_horizons,
    loglog_slope,
)

DELTA = 1e-5
#: The ids' defaults before 2026-11, pinned so the numbers in docs/results.md
#: stay reproducible (the current defaults are separating instances).
#: The l2-ball ids (``BALL_IDS``) are played at their current (separating) defaults.
PRE_2026_11 = {
    "DPBandit-Matroid-v1": {"n": 8, "rank": 3, "loss": "distance", "adversary": "oblivious"},
    "DPBandit-Flow-v1": {"grid": (3, 4), "loss": "distance", "adversary": "oblivious"},
    "DPBandit-SubmodularBase-v1": {"n": 6, "loss": "distance", "adversary": "oblivious"},
    "DPBandit-Birkhoff-v1": {"n": 4, "loss": "distance", "adversary": "oblivious"},
}
POLYTOPES = ["DPBandit-Matroid-v1", "DPBandit-Flow-v1", "DPBandit-SubmodularBase-v1",
             "DPBandit-Birkhoff-v1"]
#: The theory regime's 2-d ball (the oblivious adversary its numbers were measured with).
BALL2 = ("DPBandit-Convex-v1", (("dim", 2), ("loss", "distance"), ("adversary", "oblivious")))

BALL_IDS = ["DPBandit-Convex-v1", "DPBandit-StronglyConvex-v1"]

#: (label, agent, env id, env options, agent options, promised exponent, source)
BALL_LEARNERS = [
    ("trivial (center)", "center", "DPBandit-Convex-v1", (), (), 1.0, "linear"),
    ("bandit-pftal eps=1", "bandit-pftal", "DPBandit-Convex-v1", (), (("epsilon", 1.0),),
     0.75, "ST13 Thm 17"),
    ("bandit-pftal eps=10", "bandit-pftal", "DPBandit-Convex-v1", (), (("epsilon", 10.0),),
     0.75, "ST13 Thm 17"),
    ("fkm", "fkm", "DPBandit-Convex-v1", (), (), 0.75, "FKM05 Thm 3.3"),
    ("trivial (center)", "center", "DPBandit-StronglyConvex-v1", (), (), 1.0, "linear"),
    ("bandit-pftal eps=1 adaptive", "bandit-pftal", "DPBandit-StronglyConvex-v1", (),
     (("epsilon", 1.0),), 0.75, "ST13 Thm 6.2"),
    ("bandit-pftal eps=10 adaptive", "bandit-pftal", "DPBandit-StronglyConvex-v1", (),
     (("epsilon", 10.0),), 0.75, "ST13 Thm 6.2"),
    ("bandit-pftal eps=1 oblivious", "bandit-pftal", "DPBandit-StronglyConvex-v1", (),
     (("epsilon", 1.0), ("adversary", "oblivious")), 2 / 3, "ST13 Thm 6.1"),
    ("fkm", "fkm", "DPBandit-StronglyConvex-v1", (), (), 0.75, "FKM05 Thm 3.3"),
]
LEARNERS = []
for _env in POLYTOPES:
    LEARNERS += [
        ("private-projection-free eps=1 laplace", "private-projection-free", _env, (),
         (("epsilon", 1.0),), 0.75, "ENV21 Thm 1.1"),
        ("garber-kretzu", "garber-kretzu", _env, (), (), 0.75, "GK20"),
    ]
THEORY = [
    ("private-projection-free eps=1 laplace", "private-projection-free", *BALL2,
     (("epsilon", 1.0),), 0.75, "ENV21 Thm 1.1"),
    ("private-projection-free eps=1 gaussian", "private-projection-free", *BALL2,
     (("epsilon", 1.0), ("delta", DELTA), ("noise", "gaussian")), 0.75, "ENV21 Thm 1.1"),
    ("garber-kretzu", "garber-kretzu", *BALL2, (), 0.75, "GK20"),
    ("fkm", "fkm", *BALL2, (), 0.75, "FKM05 Thm 3.3"),
]
PAIRS = [  # (private label, non-private label) on the same env
    ("bandit-pftal eps=1", "fkm"),
    ("bandit-pftal eps=1 adaptive", "fkm"),
    ("bandit-pftal eps=1 oblivious", "fkm"),
    ("private-projection-free eps=1 laplace", "garber-kretzu"),
    ("private-projection-free eps=1 gaussian", "garber-kretzu"),
]


def st_leading_term(agent, T: float) -> float:
    """Smith-Thakurta's leading term ``p T^a chi`` (logs and constants dropped, so a lower
    estimate of the bound). Thm. 6 (strongly convex): ``a = 2/3`` against an oblivious
    adversary, else ``3/4``, ``chi = B R + (1 + R/r) L + (H ||C|| + B)^2 / H (1 + B / eps)``
    with the agent's ``H``. Thm. 17 (convex, ``H = 1/T^{1/4}``): ``a = 3/4``,
    ``chi = B R + (1 + R/r) L + B^3 / eps`` (as printed in App. E.3)."""
    prob = agent.problem
    p, r = agent.geometry.rank, agent.geometry.radius
    B, L, R = prob.bound, prob.lipschitz, prob.domain.norm_bound(2)
    par = agent.params
    base = B * R + (1 + R / r) * L
    if par.mode == "strongly-convex":
        a = 2 / 3 if par.adversary == "oblivious" else 0.75
        chi = base + (par.H * R + B) ** 2 / par.H * (1 + B / agent.epsilon)
    else:
        a, chi = 0.75, base + B**3 / agent.epsilon
    return p * T**a * chi


def run_one(job):
    """One game: returns (key, T, seed, regret, clamped, seconds)."""
    label, agent_name, env_id, env_kw, agent_kw, _, _, T, seed = job
    env = gym.make(env_id, horizon=T, **{**PRE_2026_11.get(env_id, {}), **dict(env_kw)})
    agent = make(agent_name, env.get_wrapper_attr("problem"), seed=seed, **dict(agent_kw))
    t0 = time.perf_counter()
    summary = play(env, agent, seed=seed)
    params = getattr(agent, "params", None)
    if isinstance(params, dict):
        clamped = bool(params.get("delta_clamped"))
    else:
        clamped = bool(getattr(params, "zeta_clamped", getattr(params, "beta_clamped", False)))
    return ((label, env_id, env_kw), T, seed, float(summary.regret), clamped,
            time.perf_counter() - t0)


def within(fit: float, expo: float, clamped: bool) -> str:
    """Whether the slope is within 0.1 of the theorem's exponent; ``n/a (clamped)`` where
    the radius is clamped at either end (the slope is then the shrink's, not the
    theorem's)."""
    if clamped:
        return "n/a (clamped)"
    return "yes" if abs(fit - expo) <= 0.1 else "no"


def ball_crossings(results, horizons, seeds) -> None:
    """For each bandit-pftal row: the horizon from which Thm. 6 / 17's leading term is
    below trivial play's regret (the ``center`` row of the same id, taken linear)."""
    print("\nbandit-pftal: horizon from which Smith-Thakurta's leading term `p T^a chi` "
          "(Thm 6 on StronglyConvex, Thm 17 on Convex) "
          "(logs and constants dropped) is below trivial play's regret, taken linear at "
          f"its measured rate at T = {horizons[-1]}:\n")
    print("| learner | env | chi | leading term at T max | trivial at T max | "
          "leading term < trivial from T |")
    print("|---|---|---:|---:|---:|---:|")
    for label, agent_name, env_id, env_kw, agent_kw, _, _ in BALL_LEARNERS:
        if agent_name != "bandit-pftal":
            continue
        triv_key = ("trivial (center)", env_id, ())
        triv = np.mean([results[(triv_key, horizons[-1], s)][0] for s in seeds])
        env = gym.make(env_id, horizon=horizons[-1], **dict(env_kw))
        agent = make(agent_name, env.get_wrapper_attr("problem"), seed=0, **dict(agent_kw))
        lead = st_leading_term(agent, horizons[-1])
        chi = lead / (agent.geometry.rank * horizons[-1] ** (
            2 / 3 if agent.params.adversary == "oblivious"
            and agent.params.mode == "strongly-convex" else 0.75))  # the chi of the theorem
        rate = triv / horizons[-1]
        cross = below_from(lambda T, a=agent: st_leading_term(a, T),
                           lambda T, c=rate: c * T, t_max=1e30)
        print(f"| {label} | {env_name(env_id, env_kw)} | {chi:.3g} | {lead:.3g} | "
              f"{triv:.0f} | {'> 1e30' if math.isinf(cross) else f'{cross:.2g}'} |")


def env_name(env_id: str, env_kw) -> str:
    short = env_id.replace("DPBandit-", "").replace("-v0", "")
    return short + ("" if not env_kw else "(" + ",".join(f"{k}={v}" for k, v in env_kw) + ")")


def report(title, learners, results, horizons, seeds):
    print(f"\n## {title}\n")
    head = "| learner | env | " + " | ".join(f"T={t}" for t in horizons)
    print(head + " | slope | theory | within 0.1 | clamped (T min/max) |")
    print("|" + "---|" * (len(horizons) + 6))
    means = {}
    for label, _, env_id, env_kw, _, expo, src in learners:
        key = (label, env_id, env_kw)
        row = [np.mean([results[(key, t, s)][0] for s in seeds]) for t in horizons]
        means[key] = row
        cl = [results[(key, t, seeds[0])][1] for t in (horizons[0], horizons[-1])]
        print(f"| {label} | {env_name(env_id, env_kw)} | "
              + " | ".join(f"{v:.1f}" for v in row)
              + f" | {loglog_slope(horizons, row):.2f} | {expo:.2f} ({src}) | "
              + f"{within(loglog_slope(horizons, row), expo, any(cl))} | "
              + "/".join("yes" if c else "no" for c in cl) + " |")
    return means


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--quick", action="store_true", help="shorter horizons, at most 2 seeds")
    ap.add_argument("--T-max", type=int, default=100_000,
                    help="largest horizon of the l2-ball part (grid T_max/100 .. T_max)")
    ap.add_argument("--only", default="ball,former,theory",
                    help="parts to run (comma-separated): ball, former (the polytope ids' "
                         "v0 instances), theory")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    unknown = only - {"ball", "former", "theory"}
    if unknown:
        ap.error(f"unknown part(s) {sorted(unknown)}; expected ball, former, theory")
    horizons = [1000, 2000, 4000, 8000, 16000]
    theory_h = [2000, 4000, 8000, 16000]
    ball_h = geometric_horizons(args.T_max)
    seeds = list(range(args.seeds))
    if args.quick:
        horizons, theory_h = [500, 1000, 2000, 4000], [1000, 2000, 4000]
        seeds = seeds[:2]
        ball_h = geometric_horizons(min(args.T_max, 4000))
    jobs = []
    if "ball" in only:
        jobs += [(*lrn, t, s) for lrn in BALL_LEARNERS for t in ball_h for s in seeds]
    if "former" in only:
        jobs += [(*lrn, t, s) for lrn in LEARNERS for t in horizons for s in seeds]
    if "theory" in only:
        jobs += [(*lrn, t, s) for lrn in THEORY for t in theory_h for s in seeds]
    jobs.sort(key=lambda j: -j[-2])  # long games first for load balance
    t0 = time.perf_counter()
    results = {}
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            out = list(pool.map(run_one, jobs, chunksize=1))
    else:
        out = [run_one(j) for j in jobs]
    for key, t, s, reg, clamped, _ in out:
        results[(key, t, s)] = (reg, clamped)
    print(f"# Bandit convex learners: regret vs T ({len(seeds)} seeds, "
          f"{len(jobs)} games, {time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    means, theory = {}, {}
    if "ball" in only:
        means.update(report("l2 balls at the ids' defaults (dimension 2, planted losses; "
                            "slopes vs Smith-Thakurta Thm 6 / 17, FKM)", BALL_LEARNERS,
                            results, ball_h, seeds))
        ball_crossings(results, ball_h, seeds)
    if "former" in only:
        means.update(report("Polytope ids at their v0 defaults (slopes vs Thm 1.1 "
                            "of Ene-Nguyen-Vladu)", LEARNERS, results, horizons, seeds))
    if "theory" in only:
        theory = report("2-d l2 ball, distance losses (the last column says where zeta "
                        "is clamped)", THEORY, results, theory_h, seeds)
    if means or theory:
        print("\n## Price of privacy: mean regret private (eps=1) / non-private\n")
    for title, mm in (("registered envs", means), ("2-d ball", theory)):
        if not mm:
            continue
        hh = len(next(iter(mm.values())))
        print(f"\n{title}:\n")
        for (label, env_id, env_kw), row in mm.items():
            for priv, base in PAIRS:
                other = mm.get((base, env_id, env_kw))
                if label == priv and other is not None:
                    print(f"- {priv} / {base} on {env_name(env_id, env_kw)}: "
                          + ", ".join(f"{a / b:.1f}" for a, b in zip(row, other))
                          + f" (the {hh} horizons above)")
    print(f"\n(total {time.perf_counter() - t0:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
