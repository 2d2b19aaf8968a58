"""The real-data envs: do their defaults separate, and what does
privacy cost on real examples?

1. For each real-data id at its default horizon T (and T0 = T/4 for the slope), the
   separation row of ``benchmarks/separation.py``: trivial play (``center``), the
   family's non-private learner and its private learner at epsilon = 1, regret
   averaged over the seeds, and the separation criteria (slope >= 0.9, np <= tr/2, p < tr).
2. For ``DPFullInfo-Classification-v0`` (logistic and hinge losses): ``ftal`` and
   ``ftrl`` (non-private) against ``pftal`` and the linearized Agarwal-Singh learners
   ``private-ftrl-grad`` (Laplace, and Gaussian at ``delta = DELTA``) and
   ``private-ftpl-grad`` (Gaussian) at several epsilons, with ``private-ftrl-grad``'s
   regret bounds (``docs/algorithms/private-ftrl-grad.md``): the adaptive-gradient bound
   (any convex losses) and, for hinge losses (oblivious once linearized on the unit
   ball), Thm. 3.4's one-shot bound ``D L sqrt(T) + 2 E||Z||``. ``private-ftrl`` and
   ``private-ftpl`` themselves take linear losses only: the row records their refusal.
3. ``private-ftrl-grad``'s step: the default (the non-private ``eta``) against the
   noise-balanced ``eta/2 = D / sqrt(T (L^2 + 2 L E||Z||))`` (logistic, Gaussian), and
   how far ``private-ftpl-grad``'s points are from ``private-ftrl-grad``'s.
4. For ``DPFullInfo-Portfolio-v1`` (its own section: its default horizon is the whole
   data, one window, so only the windows of ``T/4`` vary with the seed, and trivial
   play's regret there is averaged over ``--windows`` seeds): how its default pair was
   chosen (every pair of the 20 stocks, the uniform portfolio's regret over the whole
   range, and ``ons``'s on the candidates), the separation row (``center``, ``ons``,
   ``ftal``, ``hedge`` -- on a convex loss it is exponentiated gradient, Helmbold et al.
   1998 --, ``pftal`` at several epsilons), and the former 20-stock game.

Usage::

    python benchmarks/real_data.py                # 2 seeds
    python benchmarks/real_data.py --seeds 1 --eps 0.5,2
    python benchmarks/real_data.py --only epsilon,step   # the classification parts only
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
from separation import TRIVIAL, learners, regrets  # noqa: E402

import dp_online_envs  # noqa: E402,F401  (registers the env ids)
from agents import make  # noqa: E402
from dp_online_envs.lab.leaderboard.score import BENCHMARK_DELTA as DELTA  # noqa: E402
from dp_online_envs.loop import run_rounds  # noqa: E402

#: The real-data ids of the separation rows (the portfolio has its own section).
IDS = ("DPFullInfo-Classification-v0", "DPBandit-Classes-v0")
CLS = "DPFullInfo-Classification-v0"
PF = "DPFullInfo-Portfolio-v1"



def mean_regret(env_id: str, agent: str, horizon: int, seeds: int, env_kw: dict,
                agent_kw: dict) -> float:
    """The mean regret over game seeds ``0..seeds-1`` (:func:`separation.regrets`)."""
    return float(regrets(env_id, agent, horizon, seeds, env_kw, agent_kw).mean())


def slope(t0: int, r0: float, t1: int, r1: float) -> float:
    """``log(r1/r0) / log(t1/t0)`` of two mean regrets (nan unless both are positive)."""
    if r0 <= 0 or r1 <= 0:
        return math.nan
    return math.log(r1 / r0) / math.log(t1 / t0)

def separation_rows(seeds: int) -> None:
    print(f"1. Separation at each id's default horizon, {seeds} seed(s), private eps = 1")
    head = (f"{'id':30s} {'T':>5s} {'trivial':>8s} {'slope':>6s} {'non-private':>18s} "
            f"{'private':>22s}  criteria")
    print(head)
    print("-" * len(head))
    for env_id in IDS:
        t_start = time.perf_counter()
        horizon = dp_online_envs.ENV_CONFIGS[env_id].options()["horizon"]
        npa, np_kw, pa, p_kw = learners(env_id)
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


#: The private learners of part 2: (row label, agent, options besides epsilon).
CLS_PRIVATE = (("pftal", "pftal", {}),
               ("ftrl-grad Lap", "private-ftrl-grad", {}),
               ("ftrl-grad Gauss", "private-ftrl-grad", {"delta": DELTA}),
               ("ftpl-grad Gauss", "private-ftpl-grad", {"delta": DELTA}))


#: Epsilons searched for the first one where a bound falls below trivial play.
BOUND_GRID = (0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000)


def _ftrl_grad(loss: str, horizon: int, epsilon: float, **kw):
    problem = dp_online_envs.build_env(CLS, horizon=horizon, loss=loss).get_wrapper_attr(
        "problem")
    return make("private-ftrl-grad", problem, seed=0, epsilon=epsilon, **kw)


def epsilon_rows(seeds: int, epsilons: list[float]) -> None:
    horizon = dp_online_envs.ENV_CONFIGS[CLS].options()["horizon"]
    print(f"\n2. {CLS}, T = {horizon}, {seeds} seed(s): regret by learner and epsilon "
          f"(Gauss: delta = {DELTA:g})")
    head = f"    {'':24s}" + "".join(f"{'eps=' + format(e, 'g'):>10s}" for e in epsilons)
    for loss in ("logistic", "hinge"):
        kw = {"loss": loss}
        row = {"center": mean_regret(CLS, "center", horizon, seeds, kw, {}),
               "ftal": mean_regret(CLS, "ftal", horizon, seeds, kw, {}),
               "ftrl": mean_regret(CLS, "ftrl", horizon, seeds, kw, {})}
        print(f"  loss={loss}: " + ", ".join(f"{k} {v:.2f}" for k, v in row.items()))
        print(head)
        for label, name, extra in CLS_PRIVATE:
            cells = [mean_regret(CLS, name, horizon, seeds, kw, {**extra, "epsilon": e})
                     for e in epsilons]
            print(f"    {label:24s}" + "".join(f"{c:10.2f}" for c in cells), flush=True)
        bounds = [("bound ftrl-grad Gauss", lambda a: a.regret_bound())]
        if loss == "hinge":  # oblivious once linearized: Thm. 3.4's one-shot bound
            bounds.append(("Thm3.4 ftrl-grad Gauss",
                           lambda a: a.problem.diameter * a.gradient_bound
                           * math.sqrt(a.problem.horizon) + 2.0 * a.noise_norm()))
        for label, bound in bounds:
            cells = [bound(_ftrl_grad(loss, horizon, e, delta=DELTA)) for e in epsilons]
            print(f"    {label:24s}" + "".join(f"{c:10.0f}" for c in cells))
            first = next((e for e in BOUND_GRID
                          if bound(_ftrl_grad(loss, horizon, e, delta=DELTA)) < row["center"]),
                         None)
            print(f"      below trivial play ({row['center']:.2f}) from eps = {first} "
                  f"(first of the grid {', '.join(map(str, BOUND_GRID))})")
    problem = gym.make(CLS, horizon=10).get_wrapper_attr("problem")
    for name, extra in (("private-ftrl", {}), ("private-ftpl", {"delta": DELTA})):
        try:
            make(name, problem, seed=0, epsilon=1.0, **extra)
            print(f"  {name}: accepted the logistic loss")
        except ValueError as exc:
            print(f"  {name}: refuses: {exc}")


def step_rows(seeds: int, epsilons: list[float]) -> None:
    horizon = dp_online_envs.ENV_CONFIGS[CLS].options()["horizon"]
    print(f"\n3. private-ftrl-grad's step on {CLS} (logistic, Gaussian delta = {DELTA:g}), "
          f"T = {horizon}, {seeds} seed(s): regret (eta)")
    kw = {"loss": "logistic"}
    for e in epsilons:
        a = _ftrl_grad("logistic", horizon, e, delta=DELTA)
        D, L, T = a.problem.diameter, a.gradient_bound, a.problem.horizon
        balanced = 2.0 * D / math.sqrt(T * (L * L + 2.0 * L * a.noise_norm()))
        r_def = mean_regret(CLS, "private-ftrl-grad", horizon, seeds, kw,
                            {"epsilon": e, "delta": DELTA})
        r_bal = mean_regret(CLS, "private-ftrl-grad", horizon, seeds, kw,
                            {"epsilon": e, "delta": DELTA, "eta": balanced})
        gap = np.abs(_points("private-ftrl-grad", horizon, e) - _points("private-ftpl-grad",
                                                                          horizon, e)).max()
        print(f"  eps={e:g}: default {r_def:.2f} (eta {a.eta:.4f}), "
              f"balanced {r_bal:.2f} (eta {balanced:.4f}); "
              f"max |x_t(ftrl-grad) - x_t(ftpl-grad)| = {gap:.2g} (seed 0)", flush=True)


def _points(name: str, horizon: int, epsilon: float) -> np.ndarray:
    """The points a learner plays in one logistic game (seed 0, Gaussian)."""
    env = dp_online_envs.build_env(CLS, horizon=horizon, loss="logistic")
    problem = env.get_wrapper_attr("problem")
    agent = make(name, problem, seed=0, epsilon=epsilon, delta=DELTA)
    agent.reset(0)
    env.reset(seed=0)
    points = []
    run_rounds(env, agent, lambda t, a, fb: points.append(problem.domain.to_point(a)))
    return np.stack(points)


def _pair_screen(threshold: float = 1.5) -> list[tuple[float, tuple[str, str], tuple]]:
    """Every pair of the 20 stocks over the whole range: the uniform portfolio's regret
    against the certified best constant-rebalanced portfolio (upper end of the interval,
    so a lower estimate of the regret), for the pairs above ``threshold``, with each
    pair's declared range: the data's extremes rounded out to a multiple of 0.05."""
    import itertools

    import numpy as np

    from dp_online_envs import datasets
    from dp_online_envs.losses.portfolio import best_rebalanced_portfolio

    d = datasets.load_sp500()
    rel = d.relatives()
    out = []
    for i, j in itertools.combinations(range(len(d.tickers)), 2):
        rows = rel[:, [i, j]]
        _, hi, _ = best_rebalanced_portfolio(rows)
        trivial = float(-np.log(rows.mean(axis=1)).sum() - hi)
        if trivial > threshold:
            rng = (math.floor(rows.min() * 20) / 20, math.ceil(rows.max() * 20) / 20)
            out.append((trivial, (d.tickers[i], d.tickers[j]), rng))
    return sorted(out, reverse=True)


def portfolio_rows(seeds: int, windows: int, epsilons: list[float]) -> None:
    horizon = dp_online_envs.ENV_CONFIGS[PF].options()["horizon"]
    quarter = horizon // 4
    print(f"\n4. {PF}: T = {horizon} (every trading day, one window), slope from "
          f"T0 = {quarter} (trivial play averaged over {windows} seeded windows)")
    print("  a. Pairs whose uniform portfolio trails the best CRP by > 1.5 over the whole "
          "range (of 190), with ons at the pair's range:")
    for trivial, pair, (lo, hi) in _pair_screen():
        kw = {"tickers": pair, "loss_kwargs": {"r_min": lo, "r_max": hi}}
        r_ons = mean_regret(PF, "ons", horizon, 1, kw, {})
        r0 = mean_regret(PF, TRIVIAL, quarter, windows, kw, {})
        print(f"     {'-'.join(pair):9s} range [{lo:.2f}, {hi:.2f}]: trivial {trivial:.3f} "
              f"(slope {slope(quarter, r0, horizon, trivial):.2f}), ons {r_ons:.3f} "
              f"= {r_ons / trivial:.2f} x trivial", flush=True)
    print("  b. The default (GE-MSFT, relatives in [0.8, 1.2]):")
    tr0 = mean_regret(PF, TRIVIAL, quarter, windows, {}, {})
    tr = mean_regret(PF, TRIVIAL, horizon, 1, {}, {})
    row = {a: mean_regret(PF, a, horizon, 1, {}, {}) for a in ("ons", "ftal", "hedge")}
    r_ons = row["ons"]
    s = slope(quarter, tr0, horizon, tr)
    print(f"     trivial {tr:.3f} (T0: {tr0:.3f}, slope {s:.2f}); "
          + "; ".join(f"{a} {v:.3f} ({v / tr:.2f} x trivial)" for a, v in row.items()))
    r_p = {e: mean_regret(PF, "pftal", horizon, seeds, {}, {"epsilon": e}) for e in epsilons}
    print(f"     pftal ({seeds} seeds) " + ", ".join(f"eps={e:g}: {v:.3f}" for e, v in r_p.items()))
    p_ok = "ok" if r_p.get(1.0, math.inf) < tr else "FAIL"
    print(f"     criteria: slope:{'ok' if s >= 0.9 else 'FAIL'} "
          f"np<=tr/2:{'ok' if r_ons <= tr / 2 else 'FAIL'} p<tr (eps=1):{p_ok}", flush=True)
    print("  c. The former game (all 20 stocks, relatives clipped to [0.5, 2]):")
    from dp_online_envs import datasets
    kw = {"tickers": datasets.SP500_TICKERS, "loss_kwargs": {"r_min": 0.5, "r_max": 2.0}}
    tr0 = mean_regret(PF, TRIVIAL, quarter, windows, kw, {})
    tr = mean_regret(PF, TRIVIAL, horizon, 1, kw, {})
    row = {a: mean_regret(PF, a, horizon, 1, kw, {}) for a in ("ons", "ftal", "hedge")}
    print(f"     trivial {tr:.3f} (T0: {tr0:.3f}, slope {slope(quarter, tr0, horizon, tr):.2f}); "
          + "; ".join(f"{a} {v:.3f} ({v / tr:.2f} x trivial)" for a, v in row.items()),
          flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--eps", default="0.1,0.5,1,2,10",
                   help="the private learners' epsilons (classification)")
    p.add_argument("--step-eps", default="1,10", help="epsilons of part 3")
    p.add_argument("--windows", type=int, default=16,
                   help="seeds (windows of T/4) for the portfolio's trivial play at T/4")
    p.add_argument("--pf-eps", default="0.5,1,2,8", help="pftal's epsilons on the portfolio")
    p.add_argument("--only", default="separation,epsilon,step,portfolio")
    args = p.parse_args(argv)
    only = set(args.only.split(","))
    if "separation" in only:
        separation_rows(args.seeds)
    if "epsilon" in only:
        epsilon_rows(args.seeds, [float(e) for e in args.eps.split(",")])
    if "step" in only:
        step_rows(args.seeds, [float(e) for e in args.step_eps.split(",")])
    if "portfolio" in only:
        portfolio_rows(max(args.seeds, 4), args.windows,
                       [float(e) for e in args.pf_eps.split(",")])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
