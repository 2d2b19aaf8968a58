"""Do the registered ids' defaults separate learning from not learning? (a quick probe)

The published table is the study ``benchmarks/studies/separation/`` (a sweep file
played by ``dp-online sweep`` and its analysis of the stored results); this script is a
quick probe of one id or option at a time, with one learner per role.

For every registered id, at its defaults, this plays

* trivial play -- the ``center`` reference agent (the domain's center on ``Box``
  actions, a uniformly random arm or subset otherwise) -- at ``T0`` and ``T``, and the
  log-log slope of its regret between them;
* the family's non-private reference learner at ``T``;
* the family's private learner at ``epsilon`` (default 1) at ``T``;

on game seeds ``0 .. --seeds - 1`` for every learner (paired: the same games), with the
regret ``summary.regret`` against the best fixed action in hindsight, and checks the
three separation criteria, each on a Student-t 95% interval over the seeds:

1. ``slope``: trivial play's regret is linear: the mean over seeds of its per-seed
   log-log slope between ``T0`` and ``T`` has its interval above 0.9;
2. ``np<=tr/2``: the non-private learner has at most half of trivial play's regret: the
   interval of the paired difference ``np - tr/2`` lies below 0;
3. ``p<tr``: the private learner has less regret than trivial play: the interval of the
   paired difference ``p - tr`` lies below 0.

A criterion is ``ok`` where its interval supports it, ``FAIL`` where the interval
supports the opposite, and ``~`` (not shown either way) where it contains the threshold.

Usage::

    python benchmarks/separation.py                      # every id, T = 2^14, 8 seeds
    python benchmarks/separation.py --ids Matroid --T 4096 --T0 1024 --seeds 1
    python benchmarks/separation.py --ids DPBandit-Matroid-v1 \
        --env-kw '{"loss": "linear"}' --only trivial,private

``--env-kw`` (a JSON object) is passed to every selected id, so try alternatives with
one id at a time. ``--eps`` changes the private learner's epsilon.

Where a blocked one-point learner (Ene-Nguyen-Vladu's ``private-projection-free``) fails
a criterion, a note gives its scale-aware smoothing radius against the clamp of
:mod:`agents.bandit.smoothing`, the shrink ``alpha`` it costs, and the epsilon (at this
T) or the T (at this epsilon) at which Theorem 1.1's leading term falls below trivial
play's regret.

The run ends with the markdown table of ``docs/results.md`` ("Do the defaults
separate?") for the ids measured.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import dp_online_envs  # noqa: E402,F401  (registers the env ids)
from agents import make, play  # noqa: E402
from dp_online_envs.envs.registry import ENV_IDS, build_env  # noqa: E402
from dp_online_envs.lab.experiments.analysis import mean_ci  # noqa: E402
from dp_online_envs.lab.leaderboard.score import TRIVIAL, family  # noqa: E402

#: Ids whose data bound the horizon (a window of consecutive trading days).
MAX_HORIZON = {"DPFullInfo-Portfolio-v1": 8312}

def learners(env_id: str) -> tuple[str, dict, str, dict]:
    """``(non-private learner, its options, private learner, its options without
    epsilon)`` of an id: the first non-private reference and the private learner of its
    family (:data:`dp_online_envs.lab.leaderboard.score.FAMILIES`, the one mapping)."""
    fam = family(env_id)
    return fam.nonprivate[0], {}, fam.private, dict(fam.private_kwargs)


def regrets(env_id: str, agent: str, horizon: int, seeds: int | Sequence[int], env_kw: dict,
            agent_kw: dict) -> np.ndarray:
    """The regret of one agent at one horizon in the games of seeds ``0..seeds-1`` (or of
    the given seeds)."""
    out = []
    for seed in (range(seeds) if isinstance(seeds, int) else seeds):
        # build_env: the same game as gym.make, and it also builds the unlisted games
        # (registry.UNLISTED_IDS) that benchmarks/real_data.py reports.
        env = build_env(env_id, horizon=horizon, **env_kw)
        a = make(agent, env.get_wrapper_attr("problem"), seed=seed, **agent_kw)
        s = play(env, a, seed=seed)
        if s.projected_actions:
            raise RuntimeError(f"{agent} played {s.projected_actions} infeasible actions")
        out.append(s.regret)
        env.close()
    return np.array(out)


def verdict(values: np.ndarray, below: bool, threshold: float = 0.0) -> tuple[str, str]:
    """``("ok" | "FAIL" | "~", "mean [lo, hi]")``: whether the Student-t 95% interval of
    the mean of ``values`` lies below (``below``) or above ``threshold``, the opposite,
    or contains it."""
    m, lo, hi = mean_ci(values)
    if values.size < 2 or not np.all(np.isfinite(values)):
        return "~", f"{m:.3g}"
    good, bad = (hi < threshold, lo > threshold) if below else (lo > threshold, hi < threshold)
    return ("ok" if good else "FAIL" if bad else "~"), f"{m:.3g} [{lo:.3g}, {hi:.3g}]"


def clamp_note(env_id: str, agent: str, horizon: int, eps: float, env_kw: dict, agent_kw: dict,
               trivial: float) -> str | None:
    """For the blocked one-point learners (Ene-Nguyen-Vladu, Garber-Kretzu): the
    scale-aware smoothing radius against the clamp ``r/2`` and the shrink ``alpha`` it
    costs (about ``alpha`` x trivial play's regret), and where Theorem 1.1's leading term
    ``T^{3/4} n^{3/2} / eps`` (000, Laplace; constants and logs dropped, so a lower
    estimate of the bound) falls below trivial play's measured regret (assumed linear,
    ``trivial / T`` per round). ``None`` for other learners."""
    env = gym.make(env_id, horizon=horizon, **env_kw)
    a = make(agent, env.get_wrapper_attr("problem"), seed=0, **agent_kw)
    params = getattr(a, "params", None)
    if params is None or not hasattr(params, "zeta_clamped"):
        return None
    g = a.geometry
    n, r, diameter = g.rank, g.radius, env.get_wrapper_attr("problem").diameter
    lead = horizon ** 0.75 * n ** 1.5 / eps
    per_round = trivial / horizon
    t_bound = (n ** 1.5 / (per_round * eps)) ** 4 if per_round > 0 else math.inf
    eps_bound = lead * eps / trivial if trivial > 0 else math.inf
    return (f"    {agent}: n={n}, r={r:.3f}, D={diameter:.3f}: scale-aware zeta "
            f"{params.zeta_formula:.3f} {'> clamp' if params.zeta_clamped else '<='} r/2 = "
            f"{r / 2:.3f}, shrink alpha = {params.alpha:.2f} (costs about alpha x trivial; "
            f"Alg. 1's own zeta D sqrt(n)/T^(1/4) = {params.zeta_paper:.3f}). Thm 1.1 leading "
            f"term T^(3/4) n^(3/2)/eps = {lead:.0f} vs trivial {trivial:.0f}: below it for "
            f"eps >= {eps_bound:.2g} at this T, or T >= {t_bound:.2g} at eps = {eps:g}")


def slope(t0: int, r0: np.ndarray, t1: int, r1: np.ndarray) -> np.ndarray:
    """Per seed, ``log(r1/r0) / log(t1/t0)`` (nan unless both regrets are positive)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(r1 / r0) / math.log(t1 / t0)
    return np.where((r0 > 0) & (r1 > 0), out, math.nan)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ids", default="", help="comma-separated substrings of ids (default: all)")
    p.add_argument("--T", type=int, default=2 ** 14, help="horizon of the comparison")
    p.add_argument("--T0", type=int, default=2 ** 12, help="smaller horizon for the slope")
    p.add_argument("--seeds", type=int, default=8)
    p.add_argument("--eps", type=float, default=1.0, help="the private learner's epsilon")
    p.add_argument("--env-kw", default="{}", help="JSON options passed to every selected id")
    p.add_argument("--only", default="trivial,nonprivate,private",
                   help="which columns to measure (comma-separated)")
    args = p.parse_args(argv)
    keys = [k for k in args.ids.split(",") if k]
    ids = [i for i in ENV_IDS if not keys or any(k in i for k in keys)]
    env_kw = json.loads(args.env_kw)
    only = set(args.only.split(","))
    head = (f"{'id':30s} {'trivial':>9s} {'slope':>6s} {'non-private':>34s} "
            f"{'private (eps=' + format(args.eps, 'g') + ')':>38s}  criteria")
    print(f"T = {args.T} (slope from T0 = {args.T0}), {args.seeds} seed(s), env options {env_kw}")
    print(head)
    print("-" * len(head))
    failures = 0
    rows = []
    for env_id in ids:
        npa, np_kw, pa, p_kw = learners(env_id)
        t_start = time.perf_counter()
        nan = np.full(args.seeds, math.nan)
        tr = tr0 = r_np = r_p = nan
        max_t = MAX_HORIZON.get(env_id)
        if max_t is not None and args.T > max_t:
            print(f"{env_id:30s} skipped: T = {args.T} exceeds its data's {max_t} rounds")
            continue
        if "trivial" in only:
            tr0 = regrets(env_id, TRIVIAL, args.T0, args.seeds, env_kw, {})
            tr = regrets(env_id, TRIVIAL, args.T, args.seeds, env_kw, {})
        if "nonprivate" in only:
            r_np = regrets(env_id, npa, args.T, args.seeds, env_kw, np_kw)
        if "private" in only:
            r_p = regrets(env_id, pa, args.T, args.seeds, env_kw, {**p_kw, "epsilon": args.eps})
        checks = {"slope": verdict(slope(args.T0, tr0, args.T, tr), below=False, threshold=0.9),
                  "np<=tr/2": verdict(r_np - 0.5 * tr, below=True),
                  "p<tr": verdict(r_p - tr, below=True)}
        mark = " ".join(f"{k}:{v}" for k, (v, _) in checks.items())
        failures += sum(v != "ok" for v, _ in checks.values())
        print(f"{env_id:30s} {tr.mean():9.1f} {checks['slope'][1].split()[0]:>6s} "
              f"{npa:>24s} {r_np.mean():9.1f} {pa:>28s} {r_p.mean():9.1f}  {mark}  "
              f"({time.perf_counter() - t_start:.0f}s)", flush=True)
        note = clamp_note(env_id, pa, args.T, args.eps, env_kw,
                          {**p_kw, "epsilon": args.eps}, float(tr.mean()))
        if note is not None and any(v != "ok" for v, _ in checks.values()):
            print(note)
        rows.append(markdown_row(env_id, tr, npa, r_np, pa, p_kw, r_p, checks))
    print(f"{failures} criterion not supported by its interval (FAIL or ~)")
    print(f"\n{markdown_table(rows, args.eps)}")
    return 0


def markdown_row(env_id: str, trivial: np.ndarray, npa: str, r_np: np.ndarray, pa: str,
                 p_kw: dict, r_p: np.ndarray, checks: dict[str, tuple[str, str]]) -> str:
    """One row of the markdown table (``docs/results.md``): mean regrets, and each
    criterion's verdict with the mean and 95% interval it rests on."""
    delta = f" (δ = {p_kw['delta']:g})" if "delta" in p_kw else ""
    cells = "; ".join(f"{k} {v} ({ci})" for k, (v, ci) in checks.items())
    return (f"| {env_id} | {trivial.mean():.0f} | {npa} {r_np.mean():.0f} | "
            f"{pa}{delta} {r_p.mean():.0f} | {cells} |")


def markdown_table(rows: list[str], eps: float) -> str:
    """The markdown table of the measured ids."""
    head = (f"| id | trivial | non-private | private (ε = {eps:g}) | criteria: verdict "
            "(mean [95% interval]: slope; np - tr/2; p - tr) |\n|---|---:|---:|---:|---|")
    return "\n".join([head, *rows])


if __name__ == "__main__":
    raise SystemExit(main())
