"""The bandit submodular minimizers on ``DPBandit-Submodular-v2``'s defaults (the analysis)

Reads the stored results of ``sweep.yaml`` (next to this file) and writes the
``bandit-submodular`` block of ``docs/results.md``, every interval over the paired seeds
(the same games at every horizon and for every learner):

1. per learner, the mean regret at every ``T`` [Student-t 95% interval]; per horizon
   range (:func:`slope_ranges`: fewer seeds were played at the largest ``T``), the
   slope of the means and the mean per-seed least-squares log-log slope [Student-t 95%
   interval], next to the theorem's exponent (Hazan-Kale 2012: ``2/3``; Cardoso-Cummings
   2019, Thm 2 / Thm 9: ``3/4``; trivial play: 1). "within 0.1" is ``yes`` where the
   per-seed slope's interval lies within ``exponent +- 0.1``, ``no`` where it lies
   outside, ``~`` where it straddles an edge (:func:`paired_stats.exponent_verdict`);
   the last column is the horizon from which Cardoso-Cummings' leading term
   ``M n^{3/2} T^{3/4} / eps`` (constants and logs dropped: a lower estimate of their
   bound) is below trivial play's regret taken linear at its measured rate at the
   largest ``T``, and in brackets at the ends of that rate's 95% interval
   (:func:`crossing`);
2. the exploration schedule split off (:func:`split_rows`, from the stored split of
   :func:`store_splits`, ``python benchmarks/studies/bandit-submodular/analysis.py
   --split RESULTS_DIR``): both learners sample ``S_t`` on the chain of ``x_t`` with
   ``rho_k = (1 - gamma) mu_k + gamma / (n + 1)``, so given ``x_t`` the round's expected
   loss is ``f^_t(x_t) + gamma (mean_k f_t(B_k) - f^_t(x_t))`` (``f^`` the Lovász
   extension, ``mu`` the chain's weights). Each game is replayed (the same seeds: its
   realized regret is checked against the record's, exactly) and the second term, the
   exploration's cost, summed per round; the remainder is the Lovász points' own
   regret. Per learner and ``T``: the expected regret, the exploration's part (and its
   share), the remainder and their per-seed slopes from the previous ``T``; the regime
   column says ``theorem's regime`` only where ``gamma < 1`` at both horizons (the
   schedule free), the remainder is the larger part at both and its slope interval lies
   within the exponent +- 0.1, on both seed sets (:func:`paired_stats.regime`, the rule
   of every split);
3. per epsilon and ``T``, the paired ratio ``mean(private) / mean(non-private)``
   (``bandit-submod-pftal`` over ``hazan-kale-submodular-bandit``) with Fieller's 95%
   interval, and the side it supports: ``private higher`` where it lies above 1,
   ``private lower`` where below, ``~`` where it contains 1 (:func:`ratio_rows`).
"""

from __future__ import annotations

import math
import pathlib
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import paired_stats as ps  # noqa: E402

from dp_online_envs.lab.experiments.analysis import mean_ci  # noqa: E402
from dp_online_envs.lab.experiments.rates import below_from  # noqa: E402

STUDY = ps.Study(__file__)
#: The theorem's-slope cell of a chain learner once its exploration is split off.
SPLIT_DECIDES = ps.SPLIT_DECIDES
ENV = "DPBandit-Submodular-v2"
TRIVIAL = "center"
NON_PRIVATE = "hazan-kale-submodular-bandit"
PRIVATE = "bandit-submod-pftal"
#: The rows: (agent label, epsilon, theorem's exponent, source).
ROWS = (
    (TRIVIAL, None, 1.0, "linear"),
    (NON_PRIVATE, None, 2 / 3, "HK12"),
    (PRIVATE, 1.0, 0.75, "CC19 Thm 2/9"),
    (PRIVATE, 10.0, 0.75, "CC19 Thm 2/9"),
    (PRIVATE, 100.0, 0.75, "CC19 Thm 2/9"),
)


def by_horizon(frame: Any, label: str, epsilon: float | None) -> dict[int, dict[int, float]]:
    """``{T: {seed_index: regret}}`` of one learner's games (``T`` where it has any)."""
    horizons = sorted(int(t) for t in frame[frame.agent_label == label].horizon.unique())
    out = {t: ps.regrets(frame, label, t, epsilon) for t in horizons}
    return {t: r for t, r in out.items() if r}


def learner_at(epsilon: float, horizon: int) -> Any:
    """``bandit-submod-pftal`` as the sweep builds it at ``horizon`` on the id's defaults
    (seed 0: its parameters depend on the problem, ``T`` and ``epsilon`` only)."""
    from agents import make
    from dp_online_envs.envs.registry import build_env

    problem = build_env(ENV, horizon=horizon).get_wrapper_attr("problem")
    return make(PRIVATE, problem, seed=0, epsilon=float(epsilon))


def leading_term(agent: Any) -> Callable[[float], float]:
    """Cardoso-Cummings' leading term ``T -> M n^{3/2} T^{3/4} / eps`` of a
    ``bandit-submod-pftal`` learner (``M`` its scale, ``n`` the ground set's size)."""
    n, m, eps = agent.problem.dim, agent.scale, agent.privacy.epsilon
    return lambda T: m * n**1.5 * T**0.75 / eps


def crossing(lead: Callable[[float], float], trivial: dict[int, float],
             horizon: int) -> str:
    """The horizon from which ``lead`` is below trivial play's regret, taken linear at
    its mean rate at ``horizon`` (``trivial``: its per-seed regrets there), then in
    brackets the same at the ends of the rate's Student-t 95% interval (the higher rate
    crosses first)."""
    m, lo, hi = mean_ci(list(trivial.values()))

    def cross(rate: float) -> str:
        if not (math.isfinite(rate) and rate > 0):
            return "> 1e30"
        t = below_from(lead, lambda T, c=rate / horizon: c * T, t_max=1e30)
        return "> 1e30" if math.isinf(t) else f"{t:.2g}"

    return f"{cross(m)} [{cross(hi)}, {cross(lo)}]"


def slope_ranges(frame: Any) -> list[list[int]]:
    """The horizon ranges of the slopes: the horizons at which trivial play holds as
    many seeds as at the smallest ``T``, then, if fewer seeds were played at the largest
    horizons, every horizon (on the seeds held at all of them)."""
    counts = {t: len(r) for t, r in by_horizon(frame, TRIVIAL, None).items()}
    if not counts:
        return []
    horizons = sorted(counts)
    full = [t for t in horizons if counts[t] >= counts[horizons[0]]]
    return [full] + ([horizons] if full != horizons else [])


def slope_rows(frame: Any, lead_of: Callable[[float, int], Callable[[float], float]]
               = lambda eps, t: leading_term(learner_at(eps, t)),
               split: bool = False) -> list[list[Any]]:
    """Per learner of :data:`ROWS` and horizon range of :func:`slope_ranges`: the
    seeds, the slope of the means, the per-seed slope [95% interval] (on the seeds held
    at every horizon of the range; no row where the learner misses one), the exponent and
    the verdict, whether the slope may be the theorem's (``split``: the exploration split
    is stored, and decides); on a private learner's last row, the leading term's crossing
    (``lead_of(epsilon, T_max)``: its leading term, default the learner's own)."""
    trivial = by_horizon(frame, TRIVIAL, None)
    out = []
    for label, eps, exponent, source in ROWS:
        everywhere = by_horizon(frame, label, eps)
        mine = []
        for horizons in slope_ranges(frame):
            if not set(horizons) <= set(everywhere):
                continue  # the learner misses a horizon of the range
            data = ps.on_common_seeds({t: everywhere[t] for t in horizons})
            if not next(iter(data.values())):
                continue
            of_means, _ = ps.slope_texts(data)
            per_seed, verdict = ps.slope_verdict(
                data, lambda lo, hi, e=exponent: ps.exponent_verdict(lo, hi, e))
            mine.append([label + ("" if eps is None else f" ε={eps:g}"),
                         f"{min(data):,} .. {max(data):,}", ps.seed_count(next(iter(data.values()))),
                         of_means, per_seed, f"{exponent:.2f} ({source})", verdict,
                         SPLIT_DECIDES if split and label in CHAIN_LEARNERS
                         else ps.theorem_cell(label), ""])
        if mine and eps is not None and trivial:
            t_max = max(trivial)
            mine[-1][-1] = crossing(lead_of(eps, t_max), trivial[t_max], t_max)
        out += mine
    return out


SLOPE_HEAD = ("learner", "T range", "seeds", "slope of the means", "per-seed slope [95% CI]",
              "theorem", "within 0.1", "the theorem's slope?",
              "leading term < trivial from T [at trivial's rate CI]")


def mean_rows(frame: Any) -> list[list[Any]]:
    """Per learner of :data:`ROWS`, its mean regret [95% interval] at every ``T``."""
    horizons = sorted(by_horizon(frame, TRIVIAL, None))
    out = []
    for label, eps, _, _ in ROWS:
        data = by_horizon(frame, label, eps)
        if data:
            out.append([label + ("" if eps is None else f" ε={eps:g}"),
                        *(ps.mean_text(data.get(t, {}), ",.0f") for t in horizons)])
    return out


def ratio_rows(frame: Any) -> list[list[Any]]:
    """Per private epsilon and ``T``: the paired ratio private / non-private [Fieller's
    95% interval] and the side it supports."""
    base = by_horizon(frame, NON_PRIVATE, None)
    out = []
    for label, eps, _, _ in ROWS:
        if eps is None:
            continue
        priv = by_horizon(frame, label, eps)
        for t in sorted(set(priv) & set(base)):
            text, side = ps.ratio(priv[t], base[t])
            out.append([f"ε={eps:g}", f"{t:,}", ps.seed_count(set(priv[t]) & set(base[t])),
                        ps.mean_text(priv[t], ",.0f"), ps.mean_text(base[t], ",.0f"), text,
                        {"above": "private higher", "below": "private lower"}.get(side, side)])
    return out


RATIO_HEAD = ("private ε", "T", "seeds", f"{PRIVATE} [95% CI]", f"{NON_PRIVATE} [95% CI]",
              "ratio [Fieller 95% CI]", "verdict")


#: The file of the exploration split, in the results directory (:func:`store_splits`).
SPLIT_FILE = ps.Study.SPLIT_FILE
#: The learners that sample on the chain with an exploration probability.
CHAIN_LEARNERS = (NON_PRIVATE, PRIVATE)


def exploration_split(spec: Any) -> dict[str, float]:
    """Replay one game of a chain learner (the seeds of ``spec``, a
    :class:`~dp_online_envs.lab.experiments.game.GameSpec`) and split its expected
    regret, round by round, into the exploration's cost and the rest.

    Returns:
        ``regret`` (realized: the record's, to check the replay), ``expected`` (``sum_t
        E[f_t(S_t) | x_t]`` minus the comparator's loss), ``exploration`` (``sum_t gamma
        (mean_k f_t(B_k) - f^_t(x_t))``), ``remainder`` (``expected - exploration``: the
        Lovász points' regret) and ``gamma``.
    """
    from agents.lovasz import lovasz_chain

    fixed: dict[str, Any] = {}  # the learner's gamma and the chain masks, set once
    sums = {"exploration": 0.0, "points": 0.0}

    def before_act(agent: Any) -> Any:
        if not fixed:
            n = agent.problem.dim
            fixed.update(gamma=float(agent.gamma), n=n, masks=np.zeros((n + 1, n)))
        return lovasz_chain(agent.point_played)

    def after_step(chain: Any, record: Any, loss: Any) -> None:
        order, mu = chain
        masks = fixed["masks"]
        masks[:] = 0.0
        for k in range(1, fixed["n"] + 1):
            masks[k, order[:k]] = 1.0
        ps.explore_round(sums, fixed["gamma"], mu, np.asarray(loss.values(record.theta, masks)))

    summary = ps.replay_below_guard(spec, before_act, after_step)
    return ps.explore_parts(summary, sums, fixed["gamma"])


def store_splits(results: str | pathlib.Path, log: Any = None) -> int:
    """Compute :func:`exploration_split` for every stored game of :data:`CHAIN_LEARNERS`
    not yet in ``RESULTS/`` :data:`SPLIT_FILE` (resumable: the file is rewritten after
    each game), checking each replay's realized regret against its record
    (:meth:`paired_stats.Study.store_splits`). Returns how many were computed.

    Raises:
        RuntimeError: A replay whose realized regret is not the record's (the split
            would not be of the stored game).
    """
    return STUDY.store_splits(
        results, lambda g: g.agent in CHAIN_LEARNERS, exploration_split,
        note=lambda split: f"{split['exploration'] / split['expected']:.0%} exploration",
        log=log)


load_splits = STUDY.load_splits


def split_rows(frame: Any, splits: dict[str, dict[str, float]],
               exponents: dict[tuple[str, float | None], float] | None = None
               ) -> list[list[str]]:
    """Per chain learner of :data:`ROWS` and ``T`` whose games are all split: the
    expected regret, the exploration's part (share), the remainder, the per-seed slopes
    of the regret and the remainder from the previous ``T`` [Student-t 95% interval]
    and the regime (module docstring), each on both seed sets
    (:func:`paired_stats.schedule_split_rows`)."""
    exponents = exponents or {(label, eps): e for label, eps, e, _ in ROWS}
    return ps.schedule_split_rows(
        frame, [(label, eps, exponents[label, eps]) for label, eps, _, _ in ROWS
                if label in CHAIN_LEARNERS], splits)


SPLIT_HEAD = ps.SPLIT_HEAD


def split_block(frame: Any, splits: dict[str, dict[str, float]]) -> str:
    """The exploration split's table (:func:`split_rows`), or what to run for it."""
    rows = split_rows(frame, splits)
    if not rows:
        return ("**The exploration schedule split off**: not computed for these results "
                "(`python benchmarks/studies/bandit-submodular/analysis.py --split "
                "RESULTS_DIR` replays the chain learners' games and stores it).")
    return ("**The exploration schedule split off** (every game replayed on its seeds, its "
            "realized regret checked against its record; per round, the exploration's "
            "expected cost γ (mean over the chain of f_t(B_k) − f̂_t(x_t)); the remainder "
            "is the Lovász points' own regret). A horizon is listed once every game of the "
            "learner there is split. " + ps.regime_rule(0.75, "γ") + " (the non-private "
            "learner against 2/3):\n\n" + ps.table(SPLIT_HEAD, rows))


def render(results: str | pathlib.Path) -> str:
    """The section's block: the slope table, then the price of privacy."""
    frame = STUDY.load(results)
    frame = frame[frame.env_id == ENV]
    trivial = by_horizon(frame, TRIVIAL, None)
    ratios = ratio_rows(frame)
    verdicts = [r[-1] for r in ratios]
    return "\n\n".join([
        f"`{ENV}` at its defaults, regret against the best fixed set in hindsight (exact "
        "here), paired seeds: mean [Student-t 95% interval]",
        ps.table(["learner", *(f"T={t:,} ({len(r)} seeds)" for t, r in trivial.items())],
                 mean_rows(frame)),
        "**Slopes**: of the means, and the mean of the per-seed least-squares log-log "
        "slopes [Student-t 95% interval], on the seeds held at every T of the range:",
        ps.table(SLOPE_HEAD, slope_rows(frame, split=bool(
            split_rows(frame, load_splits(results))))),
        split_block(frame, load_splits(results)),
        f"**Price of privacy**: `{PRIVATE}` over `{NON_PRIVATE}` on the same games:",
        ps.table(RATIO_HEAD, ratios),
        f"{verdicts.count('private higher')} ratios above 1 (privacy costs regret), "
        f"{verdicts.count('private lower')} below 1, {verdicts.count(ps.NOISE)} containing "
        f"1 (`~`), {verdicts.count(ps.NOT_REPLICATED)} not replicated (the two seed sets "
        "disagree)."])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--split"]:
        where = sys.argv[2] if len(sys.argv) > 2 else STUDY.results()
        print(f"{store_splits(where, log=sys.stderr)} games split into {where}/{SPLIT_FILE}")
    else:
        STUDY.main(render)
