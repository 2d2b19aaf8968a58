"""Do the projection-free bandit learners separate from trivial play on the real-size
polytope defaults?

For each polytope bandit id (``DPBandit-Matroid-v2``, ``-Flow-v2``,
``-SubmodularBase-v2``, ``-Birkhoff-v2`` by default) at its defaults this plays, on the
same game seeds (paired):

* trivial play (``center``);
* the non-private learners ``garber-kretzu`` (theorem parameters) and
  ``garber-kretzu-tuned``;
* the private learners ``private-projection-free`` and ``private-projection-free-tuned``
  at ``epsilon`` (default 1, Laplace, tree counter);

and reports for each learner its mean regret, its ratio to trivial play's with
Fieller's paired 95% interval (:func:`~dp_online_envs.lab.experiments.analysis.ratio_ci`),
and the two criteria, each on the Student-t 95% interval of a paired difference
(:func:`benchmarks.separation.verdict`): non-private ``np - tr/2 < 0``, private
``p - tr < 0`` (``ok``: the interval lies below 0; ``FAIL``: above; ``~``: it contains
0). For each blocked learner it also splits the regret: the shrink cost
``alpha x trivial`` (the App. D shrink towards the center, which a learner pays even
at the optimum) and the remainder, and says whether its smoothing radius was clamped.

The tuned variants' defaults were chosen on game seed 0 (module docstring of
:mod:`agents.bandit.tuned_projection_free`); the default seeds here are 1..8.

Usage::

    nice -n 10 python benchmarks/polytope_separation.py            # T = 2^16, seeds 1..8
    python benchmarks/polytope_separation.py --ids Matroid --T 4096 --seeds 1,2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from separation import TRIVIAL, regrets, verdict  # noqa: E402

from agents import make  # noqa: E402
from dp_online_envs.envs.registry import build_env  # noqa: E402
from dp_online_envs.lab.experiments.analysis import ratio_ci  # noqa: E402

IDS = ("DPBandit-Matroid-v2", "DPBandit-Flow-v2", "DPBandit-SubmodularBase-v2",
       "DPBandit-Birkhoff-v2")
NON_PRIVATE = ("garber-kretzu", "garber-kretzu-tuned")
PRIVATE = ("private-projection-free", "private-projection-free-tuned")


def _bound(v: float | None) -> str:
    """An interval end (``None``: unbounded)."""
    return "unbounded" if v is None else f"{v:.3f}"


def shrink_of(env_id: str, agent: str, horizon: int, env_kw: dict, agent_kw: dict):
    """``(alpha, clamped?)`` of a blocked learner at this horizon."""
    env = build_env(env_id, horizon=horizon, **env_kw)
    params = make(agent, env.get_wrapper_attr("problem"), seed=0, **agent_kw).params
    return params.alpha, params.zeta_clamped


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ids", default="", help="comma-separated substrings of ids (default: all)")
    p.add_argument("--T", type=int, default=2 ** 16)
    p.add_argument("--seeds", default="1,2,3,4,5,6,7,8", help="comma-separated game seeds")
    p.add_argument("--eps", type=float, default=1.0)
    p.add_argument("--env-kw", default="{}", help="JSON options passed to every selected id")
    p.add_argument("--agents", default=",".join(NON_PRIVATE + PRIVATE))
    args = p.parse_args(argv)
    keys = [k for k in args.ids.split(",") if k]
    ids = [i for i in IDS if not keys or any(k in i for k in keys)]
    seeds = [int(s) for s in args.seeds.split(",")]
    env_kw = json.loads(args.env_kw)
    print(f"T = {args.T}, seeds {seeds}, eps = {args.eps:g}, env options {env_kw}")
    rows = []
    for env_id in ids:
        t0 = time.perf_counter()
        tr = regrets(env_id, TRIVIAL, args.T, seeds, env_kw, {})
        print(f"{env_id}: trivial {tr.mean():.0f} ({tr.mean() / args.T:.3f}/round) "
              f"per seed {np.round(tr).astype(int).tolist()}", flush=True)
        for agent in args.agents.split(","):
            private = agent in PRIVATE
            kw = {"epsilon": args.eps} if private else {}
            r = regrets(env_id, agent, args.T, seeds, env_kw, kw)
            ratio, lo, hi = ratio_ci(r, tr)
            crit, ci = (verdict(r - tr, below=True) if private
                        else verdict(r - 0.5 * tr, below=True))
            alpha, clamped = shrink_of(env_id, agent, args.T, env_kw, kw)
            shrink_cost = alpha * tr.mean()
            name = "p<tr" if private else "np<=tr/2"
            print(f"  {agent:31s} {r.mean():9.0f}  ratio {ratio:.3f} [{_bound(lo)}, {_bound(hi)}]  "
                  f"{name}: {crit} ({ci})  alpha {alpha:.3f}{' (clamped)' if clamped else ''}: "
                  f"shrink cost {shrink_cost:.0f}, remainder {r.mean() - shrink_cost:.0f}  "
                  f"per seed {np.round(r).astype(int).tolist()}", flush=True)
            rows.append(f"| {env_id} | {tr.mean():.0f} | {agent} | {r.mean():.0f} | "
                        f"{ratio:.2f} [{_bound(lo)}, {_bound(hi)}] | {name} {crit} ({ci}) | "
                        f"{alpha:.3f}{' (clamp)' if clamped else ''} | {shrink_cost:.0f} | "
                        f"{r.mean() - shrink_cost:.0f} |")
        print(f"  ({time.perf_counter() - t0:.0f}s)", flush=True)
    print("\n| id | trivial | learner | regret | ratio to trivial [95%] | criterion "
          "(mean [95%] of the paired difference) | alpha | shrink cost alpha x trivial "
          "| remainder |\n|---|---:|---|---:|---|---|---:|---:|---:|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
