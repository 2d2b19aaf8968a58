"""The real-data envs (issue 15, part 3): do their defaults separate, and what does
privacy cost on real examples?

1. For each real-data id at its default horizon T (and T0 = T/4 for the slope), the
   separation row of ``benchmarks/separation.py``: trivial play (``center``), the
   family's non-private learner and its private learner at epsilon = 1, regret
   averaged over the seeds, and issue 10's criteria (slope >= 0.9, np <= tr/2, p < tr).
2. For ``DPFullInfo-Classification-v0`` (logistic and hinge losses): ``ftal`` and
   ``ftrl`` (non-private) against ``pftal`` at several epsilons. ``private-ftrl`` and
   ``private-ftpl`` are online *linear* optimization learners: the row records that they
   refuse these losses (their message), rather than silently linearizing them.

Usage::

    python benchmarks/real_data.py                # 2 seeds
    python benchmarks/real_data.py --seeds 1 --eps 0.5,2
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import gymnasium as gym  # noqa: E402

import dp_online_envs  # noqa: E402,F401  (registers the env ids)
from agents import make  # noqa: E402
from separation import DELTA, LEARNERS, TRIVIAL, mean_regret, slope  # noqa: E402

IDS = ("DPFullInfo-Classification-v0", "DPBandit-Classes-v0", "DPFullInfo-Portfolio-v0")
CLS = "DPFullInfo-Classification-v0"


def separation_rows(seeds: int) -> None:
    print(f"1. Separation at each id's default horizon, {seeds} seed(s), private eps = 1")
    head = (f"{'id':30s} {'T':>5s} {'trivial':>8s} {'slope':>6s} {'non-private':>18s} "
            f"{'private':>22s}  criteria")
    print(head)
    print("-" * len(head))
    for env_id in IDS:
        t_start = time.perf_counter()
        horizon = gym.spec(env_id).kwargs.get("horizon") or dp_online_envs.ENV_CONFIGS[
            env_id].options()["horizon"]
        npa, np_kw, pa, p_kw = LEARNERS[env_id]
        tr0 = mean_regret(env_id, TRIVIAL, horizon // 4, seeds, {}, {})
        tr = mean_regret(env_id, TRIVIAL, horizon, seeds, {}, {})
        r_np = mean_regret(env_id, npa, horizon, seeds, {}, np_kw)
        r_p = mean_regret(env_id, pa, horizon, seeds, {}, {**p_kw, "epsilon": 1.0})
        s = slope(horizon // 4, tr0, horizon, tr)
        checks = {"slope": s >= 0.9, "np<=tr/2": r_np <= 0.5 * tr, "p<tr": r_p < tr}
        mark = " ".join(f"{k}:{'ok' if v else 'FAIL'}" for k, v in checks.items())
        print(f"{env_id:30s} {horizon:5d} {tr:8.2f} {s:6.2f} {npa:>8s} {r_np:9.2f} "
              f"{pa:>12s} {r_p:9.2f}  {mark}  ({time.perf_counter() - t_start:.0f}s)",
              flush=True)


def epsilon_rows(seeds: int, epsilons: list[float]) -> None:
    horizon = dp_online_envs.ENV_CONFIGS[CLS].options()["horizon"]
    print(f"\n2. {CLS}, T = {horizon}, {seeds} seed(s): regret by learner and epsilon")
    for loss in ("logistic", "hinge"):
        kw = {"loss": loss}
        row = {"center": mean_regret(CLS, "center", horizon, seeds, kw, {}),
               "ftal": mean_regret(CLS, "ftal", horizon, seeds, kw, {}),
               "ftrl": mean_regret(CLS, "ftrl", horizon, seeds, kw, {})}
        print(f"  loss={loss}: " + ", ".join(f"{k} {v:.2f}" for k, v in row.items()))
        cells = [f"eps={e:g}: {mean_regret(CLS, 'pftal', horizon, seeds, kw, {'epsilon': e}):.2f}"
                 for e in epsilons]
        print("    pftal  " + ", ".join(cells), flush=True)
    problem = gym.make(CLS, horizon=10).get_wrapper_attr("problem")
    for name, extra in (("private-ftrl", {}), ("private-ftpl", {"delta": DELTA})):
        try:
            make(name, problem, seed=0, epsilon=1.0, **extra)
            print(f"  {name}: accepted the logistic loss")
        except ValueError as exc:
            print(f"  {name}: refuses: {exc}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--eps", default="0.25,0.5,1,2,4,8", help="pftal's epsilons")
    p.add_argument("--only", default="separation,epsilon")
    args = p.parse_args(argv)
    only = set(args.only.split(","))
    if "separation" in only:
        separation_rows(args.seeds)
    if "epsilon" in only:
        epsilon_rows(args.seeds, [float(e) for e in args.eps.split(",")])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
