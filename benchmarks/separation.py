"""Do the registered ids' defaults separate learning from not learning?

For every registered id, at its defaults, this plays

* trivial play -- the ``center`` reference agent (the domain's center on ``Box``
  actions, a uniformly random arm or subset otherwise) -- at ``T0`` and ``T``, and the
  log-log slope of its regret between them;
* the family's non-private reference learner at ``T``;
* the family's private learner at ``epsilon`` (default 1) at ``T``;

averaging the regret (``summary.regret``, against the best fixed action in hindsight)
over the seeds, and checks the three separation criteria:

1. ``slope``: trivial play's regret is linear, slope ``>= 0.9``;
2. ``np<=tr/2``: the non-private learner has at most half of trivial play's regret;
3. ``p<tr``: the private learner has less regret than trivial play.

Usage::

    python benchmarks/separation.py                      # every id, T = 2^14, 2 seeds
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym  # noqa: E402

import dp_online_envs  # noqa: E402,F401  (registers the env ids)
from agents import make, play  # noqa: E402
from dp_online_envs.envs.registry import ENV_IDS, build_env  # noqa: E402

DELTA = 1e-6
TRIVIAL = "center"
#: Ids whose data bound the horizon (a window of consecutive trading days).
MAX_HORIZON = {"DPFullInfo-Portfolio-v1": 8312}

#: id -> (non-private learner, its options, private learner, its options without epsilon)
LEARNERS: dict[str, tuple[str, dict, str, dict]] = {
    "DPFullInfo-Experts-v0": ("hedge", {}, "private-ftrl", {}),
    "DPBandit-MAB-v0": ("exp3", {}, "private-exp2", {}),
    "DPFullInfo-Sphere-v1": ("ftrl", {}, "private-ftrl", {}),
    "DPFullInfo-Cube-v1": ("ftrl", {}, "private-ftrl", {}),
    "DPBandit-Linear-v1": ("scrible", {}, "private-scrible", {}),
    "DPFullInfo-Convex-v1": ("ftal", {}, "pftal", {}),
    "DPFullInfo-StronglyConvex-v1": ("ftal", {}, "pftal", {}),
    "DPBandit-Convex-v1": ("fkm", {}, "bandit-pftal", {}),
    "DPBandit-StronglyConvex-v1": ("fkm", {}, "bandit-pftal", {}),
    "DPBandit-Matroid-v1": ("garber-kretzu", {}, "private-projection-free", {}),
    "DPBandit-Flow-v1": ("garber-kretzu", {}, "private-projection-free", {}),
    "DPBandit-SubmodularBase-v1": ("garber-kretzu", {}, "private-projection-free", {}),
    "DPBandit-Birkhoff-v1": ("garber-kretzu", {}, "private-projection-free", {}),
    "DPFullInfo-Matroid-v1": ("online-fw", {}, "private-ftpl", {"delta": DELTA}),
    "DPFullInfo-Submodular-v1": ("hazan-kale-submodular", {}, "submod-pftal", {}),
    "DPBandit-Submodular-v1": ("hazan-kale-submodular-bandit", {}, "bandit-submod-pftal", {}),
    # real data (benchmarks/real_data.py runs them at their default horizons)
    "DPFullInfo-Classification-v0": ("ftal", {}, "pftal", {}),
    "DPBandit-Classes-v0": ("exp3", {}, "private-exp2", {}),
    "DPFullInfo-Portfolio-v1": ("ons", {}, "pftal", {}),
}


def mean_regret(env_id: str, agent: str, horizon: int, seeds: int, env_kw: dict,
                agent_kw: dict) -> float:
    """Mean over seeds ``0..seeds-1`` of the regret of one agent at one horizon."""
    total = 0.0
    for seed in range(seeds):
        # build_env: the same game as gym.make, and it also builds the unlisted games
        # (registry.UNLISTED_IDS) that benchmarks/real_data.py reports.
        env = build_env(env_id, horizon=horizon, **env_kw)
        a = make(agent, env.get_wrapper_attr("problem"), seed=seed, **agent_kw)
        s = play(env, a, seed=seed)
        if s.projected_actions:
            raise RuntimeError(f"{agent} played {s.projected_actions} infeasible actions")
        total += s.regret
        env.close()
    return total / seeds


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


def slope(t0: int, r0: float, t1: int, r1: float) -> float:
    """``log(r1/r0) / log(t1/t0)`` (nan unless both regrets are positive)."""
    if r0 <= 0 or r1 <= 0:
        return math.nan
    return math.log(r1 / r0) / math.log(t1 / t0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ids", default="", help="comma-separated substrings of ids (default: all)")
    p.add_argument("--T", type=int, default=2 ** 14, help="horizon of the comparison")
    p.add_argument("--T0", type=int, default=2 ** 12, help="smaller horizon for the slope")
    p.add_argument("--seeds", type=int, default=2)
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
        npa, np_kw, pa, p_kw = LEARNERS[env_id]
        t_start = time.perf_counter()
        nan = math.nan
        tr = tr0 = r_np = r_p = nan
        max_t = MAX_HORIZON.get(env_id)
        if max_t is not None and args.T > max_t:
            print(f"{env_id:30s} skipped: T = {args.T} exceeds its data's {max_t} rounds")
            continue
        if "trivial" in only:
            tr0 = mean_regret(env_id, TRIVIAL, args.T0, args.seeds, env_kw, {})
            tr = mean_regret(env_id, TRIVIAL, args.T, args.seeds, env_kw, {})
        if "nonprivate" in only:
            r_np = mean_regret(env_id, npa, args.T, args.seeds, env_kw, np_kw)
        if "private" in only:
            r_p = mean_regret(env_id, pa, args.T, args.seeds, env_kw,
                              {**p_kw, "epsilon": args.eps})
        s = slope(args.T0, tr0, args.T, tr)
        checks = {"slope": s >= 0.9, "np<=tr/2": r_np <= 0.5 * tr, "p<tr": r_p < tr}
        mark = " ".join(f"{k}:{'ok' if v else 'FAIL'}" for k, v in checks.items())
        failures += sum(not v for v in checks.values())
        print(f"{env_id:30s} {tr:9.1f} {s:6.2f} {npa:>24s} {r_np:9.1f} "
              f"{pa:>28s} {r_p:9.1f}  {mark}  ({time.perf_counter() - t_start:.0f}s)",
              flush=True)
        note = clamp_note(env_id, pa, args.T, args.eps, env_kw,
                          {**p_kw, "epsilon": args.eps}, tr)
        if note is not None and not all(checks.values()):
            print(note)
        rows.append(markdown_row(env_id, tr, s, npa, r_np, pa, p_kw, r_p, checks))
    print(f"{failures} criterion failure(s)")
    print(f"\n{markdown_table(rows, args.eps)}")
    return 0


def markdown_row(env_id: str, trivial: float, s: float, npa: str, r_np: float, pa: str,
                 p_kw: dict, r_p: float, checks: dict[str, bool]) -> str:
    """One row of the markdown table (``docs/results.md``)."""
    delta = f" (δ = {p_kw['delta']:g})" if "delta" in p_kw else ""
    failed = [k for k, ok in checks.items() if not ok]
    verdict = "all" if not failed else "fails " + ", ".join(failed)
    return (f"| {env_id} | {trivial:.0f} ({s:.2f}) | {npa} {r_np:.0f} | {pa}{delta} {r_p:.0f} "
            f"| {verdict} |")


def markdown_table(rows: list[str], eps: float) -> str:
    """The markdown table of the measured ids."""
    head = (f"| id | trivial (slope) | non-private | private (ε = {eps:g}) | criteria |\n"
            "|---|---:|---:|---:|---|")
    return "\n".join([head, *rows])


if __name__ == "__main__":
    raise SystemExit(main())
