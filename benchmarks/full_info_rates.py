"""Regret rates of the full-information learners, "privacy for free", tree vs factorization.

Four reports, all measured by playing the registered envs end to end:

0. **Rates at T up to ``--T-max``**: on
   ``DPFullInfo-Experts-v0`` and ``DPBandit-MAB-v0`` at their defaults (trivial play
   is linear there: the ``center`` rows) the log-log slope of ``hedge`` and
   ``private-ftrl`` (eps = 1, 10, 100), ``exp2`` and ``private-exp2`` (eps = 1, 10; the
   same paper's bandit reduction, Thm. 4.1) over ``T = T_max / 100 .. T_max``. For
   ``private-exp2`` the bound is Lemma 4.4 with Thm. 4.1's parameters (``exp2_bound``);
   for ``private-ftrl`` it is the explicit bound of
   ``docs/algorithms/private-ftrl.md``: ``E[regret] <= sqrt(T ln N / 2) + E[D_Z]``, with
   ``D_Z = max_i Z_i - min_i Z_i`` for one release of the Agarwal-Singh counter
   (``R = ceil(log2 T)`` Laplace draws of scale ``levels N / eps`` per coordinate,
   ``levels = floor(log2 T) + 1``); ``E[D_Z]`` is taken as ``kappa_N sd`` with
   ``kappa_N`` the expected range of ``N`` standard normals (the sum of ``R`` Laplace
   draws is close to normal; ``sd`` is checked against the counter's own
   ``max_noise_variance``). The table gives the bound's local slope at ``T_max``, the
   horizon from which it stays within 0.1 of 0.5 (the noise term no longer dominates),
   and the horizon from which the bound is below trivial play's (linear) regret.

1. **Slopes.** For each learner on its env, the mean regret (against the best fixed
   action in hindsight, ``summary.regret_hi``) over several seeds for
   ``T = 256 .. 8192``, and the least-squares slope of ``log regret`` against ``log T``,
   next to the exponent the theory promises (``sqrt(T)`` -> 0.5; online Frank-Wolfe's
   bound is ``T^{3/4}`` -> 0.75; for the private learners Agarwal-Singh promise
   ``sqrt(T) + polylog(T) / eps``, so the measured slope is 0.5 only once ``T`` is large
   enough for the additive privacy term to be negligible). The slope of the
   pseudo-regret (regret against the mean loss, less noisy) is printed as well.
2. **Privacy for free** (Agarwal-Singh Sec. 1.1): experts with K = 10, eps = 1: the
   ratio of the regret of ``private-ftrl`` (Laplace, pure DP) and ``private-ftpl``
   (Gaussian, delta = 1e-6) to ``hedge`` as T grows; and ``private-ftrl`` over the same
   FTRL without noise (``hedge`` run with private-ftrl's learning rate), which isolates
   the cost of the noise from the learning-rate constant; then the same ratios for
   T = 2^14 .. 2^16 (4 seeds), where the additive privacy term starts to lose weight.
3. **Tree vs factorization** at equal (eps, delta): ``private-ftrl`` with Gaussian noise
   (delta > 0) in a noise-dominated setting (small eps), with every counter.

Usage::

    python benchmarks/full_info_rates.py [--seeds 4] [--T-max 100000] [--quick]
        [--only rates,slopes,free,counters]

Stdout is markdown (the block ``benchmarks/make_results.py`` puts in docs/results.md).
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
from agents.bandit.exp2 import theorem_4_1_parameters
from agents.privacy import GAUSSIAN_ONLY
from dp_online_envs.lab.experiments.rates import (
    below_from,
    geometric_horizons,
    local_slope,
    loglog_slope,
    slope_reached,
)

DELTA = 1e-6

#: (label, agent, env id, env options, agent options, promised exponent)
LEARNERS = [
    ("hedge", "hedge", "DPFullInfo-Experts-v0", {}, {}, 0.5),
    ("private-ftrl eps=1", "private-ftrl", "DPFullInfo-Experts-v0", {}, {"epsilon": 1.0}, 0.5),
    ("private-ftrl eps=10", "private-ftrl", "DPFullInfo-Experts-v0", {}, {"epsilon": 10.0}, 0.5),
    ("private-ftpl eps=1", "private-ftpl", "DPFullInfo-Experts-v0", {},
     {"epsilon": 1.0, "delta": DELTA}, 0.5),
    ("ftrl", "ftrl", "DPFullInfo-Sphere-v1", {"adversary": "stochastic"}, {}, 0.5),
    ("private-ftrl eps=1", "private-ftrl", "DPFullInfo-Sphere-v1", {"adversary": "stochastic"},
     {"epsilon": 1.0}, 0.5),
    ("ftrl", "ftrl", "DPFullInfo-Cube-v1", {"adversary": "stochastic"}, {}, 0.5),
    ("private-ftrl eps=1", "private-ftrl", "DPFullInfo-Cube-v1", {"adversary": "stochastic"},
     {"epsilon": 1.0}, 0.5),
    ("private-ftpl eps=1", "private-ftpl", "DPFullInfo-Matroid-v1", {"adversary": "stochastic"},
     {"epsilon": 1.0, "delta": DELTA}, 0.5),
    ("online-fw", "online-fw", "DPFullInfo-Matroid-v1", {"adversary": "stochastic"}, {}, 0.75),
]


def run(agent: str, env_id: str, horizon: int, seed: int, env_kw: dict, agent_kw: dict):
    """One game: returns ``(regret, pseudo_regret, the agent)``."""
    env = gym.make(env_id, horizon=horizon, checkpoints=[horizon], **env_kw)
    a = make(agent, env.get_wrapper_attr("problem"), seed=seed, **agent_kw)
    s = play(env, a, seed=seed)
    assert s.projected_actions == 0, f"{agent} played {s.projected_actions} infeasible actions"
    pseudo = math.nan if s.pseudo_regret is None else s.pseudo_regret
    return s.regret_hi, pseudo, a


slope = loglog_slope


def expected_normal_range(n: int) -> float:
    """``E[max - min]`` of ``n`` i.i.d. standard normals (numerical integral)."""
    from scipy import integrate, stats

    def integrand(x: float) -> float:
        return 1.0 - stats.norm.cdf(x) ** n - stats.norm.sf(x) ** n

    return float(integrate.quad(integrand, -np.inf, np.inf)[0])


def ftrl_noise_sd(T: float, n: int, epsilon: float, smooth: bool = False) -> float:
    """Per-coordinate noise std of one Agarwal-Singh release (Laplace, l1 sensitivity
    ``n`` of the experts' loss set ``[0, 1]^n``): ``sqrt(2 R) levels n / eps`` with
    ``R = ceil(log2 T)`` draws and ``levels = floor(log2 T) + 1``; ``smooth=True``
    drops the integer parts (``log2 T``, ``log2 T + 1``) so that the bound has a
    local slope (the steps at powers of two would dominate a numerical derivative)."""
    if smooth:
        lg = math.log2(T)
        return math.sqrt(2.0 * lg) * (lg + 1.0) * n / epsilon
    t = max(round(T), 2)
    levels = t.bit_length()  # floor(log2 t) + 1
    draws = max((t - 1).bit_length(), (t + 1).bit_length() - 1)
    return math.sqrt(2.0 * draws) * levels * n / epsilon


def _fmt_t(t: float) -> str:
    if math.isinf(t):
        return "> 1e30"
    return f"{t:.2g}" if t >= 1e4 else f"{t:.0f}"


def exp2_bound(T: float, n: int, noise_scale: float) -> float:
    """Agarwal-Singh Lemma 4.4 with Theorem 4.1's parameters (``N`` arms, Laplace scale
    ``lambda`` on the ``[0, 1]`` loss scale): ``2 gamma T + ln N / eta + eta N T c + 1``,
    ``c = 1 + 2 lambda^2 ln(N T)`` (the bound on ``E[sum_i p_i l~_i^2]`` per round given
    the noise event, plus 1 for its complement), ``gamma`` clamped to 1."""
    eta, gamma = theorem_4_1_parameters(max(int(T), 1), n, noise_scale)
    c = 1.0 + 2.0 * noise_scale**2 * math.log(n * T)
    return 2.0 * min(gamma, 1.0) * T + math.log(n) / eta + eta * n * T * c + 1.0


#: Section 0: (env id, theorem exponent, [(label, agent, options, epsilon or None)], bound
#: name). ``bound(T, n, eps)`` is the explicit bound of the learner's theorem.
RATE_BLOCKS = [
    ("DPFullInfo-Experts-v0", "ftrl", [
        ("hedge", "hedge", {}, None),
        *[(f"private-ftrl ε={e:g}", "private-ftrl", {"epsilon": e}, e) for e in (1.0, 10.0, 100.0)],
    ]),
    ("DPBandit-MAB-v0", "exp2", [
        ("exp2", "exp2", {}, None),
        *[(f"private-exp2 ε={e:g}", "private-exp2", {"epsilon": e}, e) for e in (1.0, 10.0)],
    ]),
]


def theory_rates(t_max: int, seeds) -> None:
    """Section 0: slopes at T up to ``t_max`` against the explicit bounds."""
    ts = geometric_horizons(t_max)
    print(f"## 0. Rates at T = {ts[0]} .. {ts[-1]} (ids at their defaults, {len(seeds)} "
          "seeds): theorem exponent 0.5\n")
    print("| env | learner | " + " | ".join(f"T={T}" for T in ts) + " | slope | "
          "within 0.1 of 0.5 | bound's slope at T_max | bound's slope within 0.1 from T | "
          "bound < trivial from T |")
    print("|---|---|" + "---:|" * (len(ts) + 1) + "---|---:|---:|---:|")
    notes = []
    for env_id, kind, rows in RATE_BLOCKS:
        short = env_id.split("-")[1]
        n = gym.make(env_id).get_wrapper_attr("problem").dim
        kappa = expected_normal_range(n)
        trivial = [float(np.mean([run("center", env_id, T, s, {}, {})[0] for s in seeds]))
                   for T in ts]
        per_round = trivial[-1] / ts[-1]
        fit = slope(ts, trivial)
        print(f"| {short} | trivial (center) | " + " | ".join(f"{v:.0f}" for v in trivial)
              + f" | {fit:.2f} | (linear: {'yes' if fit >= 0.9 else 'no'}) | | | |")
        for label, agent, kw, eps in rows:
            means = []
            for T in ts:
                res = [run(agent, env_id, T, s, {}, kw) for s in seeds]
                means.append(float(np.mean([r for r, _, _ in res])))
                if kind == "ftrl" and eps is not None:  # the analytic sd is the counter's
                    sd = math.sqrt(res[0][2]._counter.max_noise_variance())
                    assert abs(sd / ftrl_noise_sd(T, n, eps) - 1) < 0.02, (sd, T, eps)

            if kind == "ftrl":
                def bound(T, eps=eps, n=n, kappa=kappa):
                    b = math.sqrt(T * math.log(n) / 2.0)
                    return b + (kappa * ftrl_noise_sd(T, n, eps, smooth=True)
                                if eps is not None else 0.0)
            else:
                def bound(T, eps=eps, n=n):
                    return exp2_bound(T, n, 0.0 if eps is None else 1.0 / eps)

            fit = slope(ts, means)
            print(f"| {short} | {label} | " + " | ".join(f"{v:.1f}" for v in means)
                  + f" | {fit:.2f} | {'yes' if abs(fit - 0.5) <= 0.1 else 'no'} | "
                  f"{local_slope(bound, ts[-1]):.2f} | {_fmt_t(slope_reached(bound, 0.5))} | "
                  f"{_fmt_t(below_from(bound, lambda T, c=per_round: c * T))} |", flush=True)
        notes.append(f"{short}: trivial play taken as {per_round:.3f} T (its rate at T_max)")
        if kind == "ftrl":
            notes.append(f"Experts bound `sqrt(T ln N / 2) + kappa_N sd_T` "
                         f"(docs/algorithms/private-ftrl.md), kappa_{n} = {kappa:.3f}, "
                         f"sd_T = sqrt(2 log2 T) (log2 T + 1) N / eps "
                         f"(at T_max: {ftrl_noise_sd(ts[-1], n, 1.0):.0f} at ε = 1)")
        else:
            notes.append("MAB bound: Lemma 4.4 with Theorem 4.1's eta, gamma: "
                         "`2 gamma T + ln N / eta + eta N T (1 + 2 lambda^2 ln NT) + 1`, "
                         "lambda = 1/ε")
    print("\n" + ";\n".join(notes) + ".\n")


def rates(horizons, seeds) -> dict:
    """Mean regrets of every learner (section 1); also returns them for section 2."""
    print("\n## 1. Regret vs T (mean over seeds) and log-log slopes\n")
    head = " | ".join(f"T={t}" for t in horizons)
    print(f"| learner | env | {head} | slope | pseudo slope | paper |")
    print("|---|---|" + "---:|" * (len(horizons) + 3))
    table = {}
    for label, agent, env_id, env_kw, agent_kw, paper in LEARNERS:
        means, pseudos = [], []
        for T in horizons:
            res = [run(agent, env_id, T, s, env_kw, agent_kw) for s in seeds]
            means.append(float(np.mean([r for r, _, _ in res])))
            pseudos.append(float(np.mean([p for _, p, _ in res])))
        table[(label, env_id)] = means
        cells = " | ".join(f"{m:.1f}" for m in means)
        short = env_id.replace("DPFullInfo-", "").replace("-v0", "")
        print(f"| {label} | {short} | {cells} | {slope(horizons, means):.2f} | "
              f"{slope(horizons, pseudos):.2f} | {paper} |", flush=True)
    return table


def privacy_for_free(horizons, seeds, table) -> None:
    print("\n## 2. Privacy for free? experts K=10, eps=1: regret ratios\n")
    hedge = table[("hedge", "DPFullInfo-Experts-v0")]
    ftrl = table[("private-ftrl eps=1", "DPFullInfo-Experts-v0")]
    ftrl10 = table[("private-ftrl eps=10", "DPFullInfo-Experts-v0")]
    ftpl = table[("private-ftpl eps=1", "DPFullInfo-Experts-v0")]
    same_eta = []
    for T in horizons:
        eta = make("private-ftrl", gym.make("DPFullInfo-Experts-v0", horizon=T)
                   .get_wrapper_attr("problem"), epsilon=1.0).eta
        same_eta.append(float(np.mean([run("hedge", "DPFullInfo-Experts-v0", T, s, {},
                                           {"eta": eta})[0] for s in seeds])))
    print("| T | hedge | private-ftrl | ftrl/hedge | ftrl/(hedge at ftrl's eta) | "
          "private-ftrl eps=10 / hedge | private-ftpl | ftpl/hedge |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for i, T in enumerate(horizons):
        print(f"| {T} | {hedge[i]:.1f} | {ftrl[i]:.1f} | {ftrl[i] / hedge[i]:.2f} | "
              f"{ftrl[i] / same_eta[i]:.2f} | {ftrl10[i] / hedge[i]:.2f} | {ftpl[i]:.1f} | "
              f"{ftpl[i] / hedge[i]:.2f} |")


def crossover(horizons, seeds) -> None:
    print("\n## 2b. Longer horizons (experts K=10, eps=1): does the ratio turn down?\n")
    print("| T | hedge | private-ftrl | ftrl/hedge | private-ftpl | ftpl/hedge |")
    print("|---:|---:|---:|---:|---:|---:|")
    env = "DPFullInfo-Experts-v0"
    for T in horizons:
        h = np.mean([run("hedge", env, T, s, {}, {})[0] for s in seeds])
        f = np.mean([run("private-ftrl", env, T, s, {}, {"epsilon": 1.0})[0] for s in seeds])
        g = np.mean([run("private-ftpl", env, T, s, {}, {"epsilon": 1.0, "delta": DELTA})[0]
                     for s in seeds])
        print(f"| {T} | {h:.1f} | {f:.1f} | {f / h:.2f} | {g:.1f} | {g / h:.2f} |", flush=True)


def tree_vs_factorization(horizons, seeds, epsilon: float) -> None:
    print(f"\n## 3. Gaussian private-ftrl on experts K=10, eps={epsilon}, delta={DELTA}: "
          "counters at equal privacy\n")
    counters = ["tree", "agarwal-singh", "honaker", "factorization"]
    # the factorization's real-valued Gaussian: its guarantee is idealized
    shown = [c + (" (idealized)" if c in GAUSSIAN_ONLY else "") for c in counters]
    print("| T | " + " | ".join(f"{c} regret (worst noise std)" for c in shown)
          + " | tree / factorization |")
    print("|---:|" + "---:|" * (len(counters) + 1))
    for T in horizons:
        cells, mean = [], {}
        for c in counters:
            kw = {"epsilon": epsilon, "delta": DELTA, "counter": c}
            res = [run("private-ftrl", "DPFullInfo-Experts-v0", T, s, {}, kw) for s in seeds]
            r = np.array([x for x, _, _ in res])
            mean[c] = r.mean()
            std = math.sqrt(res[0][2]._counter.max_noise_variance())
            cells.append(f"{r.mean():.1f} ± {r.std(ddof=1) / math.sqrt(len(r)):.1f} ({std:.0f})")
        print(f"| {T} | " + " | ".join(cells) + f" | {mean['tree'] / mean['factorization']:.2f} |",
              flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--quick", action="store_true",
                        help="T <= 2048, 2 seeds, no long horizons")
    parser.add_argument("--epsilon-small", type=float, default=0.2)
    parser.add_argument("--T-max", type=int, default=100_000,
                        help="largest horizon of section 0 (grid T_max/100 .. T_max)")
    parser.add_argument("--rate-seeds", type=int, default=2, help="seeds of section 0")
    parser.add_argument("--only", default="rates,slopes,free,counters",
                        help="sections to run (comma-separated)")
    args = parser.parse_args(argv)
    horizons = [256, 512, 1024, 2048, 4096, 8192]
    seeds = list(range(args.seeds))
    t_max, rate_seeds = args.T_max, list(range(args.rate_seeds))
    if args.quick:
        horizons, seeds = horizons[:4], seeds[:2]
        t_max, rate_seeds = min(t_max, 4000), rate_seeds[:1]
    only = set(args.only.split(","))
    start = time.perf_counter()
    if "rates" in only:
        theory_rates(t_max, rate_seeds)
    if only & {"slopes", "free"}:
        table = rates(horizons, seeds)
    if "free" in only:
        privacy_for_free(horizons, seeds, table)
        if not args.quick:
            crossover([16384, 32768, 65536], seeds[:4])
    if "counters" in only:
        tree_vs_factorization([horizons[-3], horizons[-1]], seeds, args.epsilon_small)
    print(f"\n(total {time.perf_counter() - start:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
