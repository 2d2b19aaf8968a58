"""Smith-Thakurta's private follow-the-approximate-leader on the convex full-information
game: regret slopes in T against the proof's bound and trivial play (the analysis)

Reads the stored results of ``sweep.yaml`` (next to this file) and writes the markdown
of the ``full-info-pftal`` section of ``docs/results.md``, for ``pftal`` (epsilon 1 and
10), its non-private counterpart ``ftal`` and trivial play (``center``) on
``DPFullInfo-Convex-v1`` at the id's defaults and under the ``stochastic`` adversary
with distance losses:

1. per learner (:func:`slope_rows`): the mean regret at the smallest and the largest
   ``T``, the log-log slope of the means and the mean per-seed slope [Student-t 95%
   interval] on the seeds held at every ``T``, whether that interval lies within 0.1 of
   the theorem's exponent 0.5 (``yes``; ``no`` where it lies outside, ``~`` where it
   straddles an edge), and three figures of the explicit bound of the proof for the
   parameters the learner uses (:func:`proof_bound`, computed, not measured): its local
   slope at the largest ``T``, the horizon from which that slope stays within 0.1 of
   0.5, the horizon from which it is below trivial play's regret taken linear at its
   measured rate;
2. per learner and ``T`` (:func:`trivial_rows`): the paired ratio of its regret to
   trivial play's on the same games [Fieller's 95% interval], with ``below`` /
   ``above`` where the interval excludes 1 (``~``: the
interval holds the null, neither side shown).
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

from agents.full_info.pftal import ftal_regularization, pftal_regularization  # noqa: E402
from dp_online_envs.lab.experiments.rates import (  # noqa: E402
    below_from,
    local_slope,
    slope_reached,
)

STUDY = ps.Study(__file__)
ENV = "DPFullInfo-Convex-v1"
TRIVIAL = "center"
#: Smith-Thakurta Thm. 11 (and FTAL's regularized bound): ``O~(sqrt(T))``.
EXPONENT = 0.5
#: How far a slope may be from :data:`EXPONENT` to be called the theorem's.
TOLERANCE = 0.1
#: The horizon up to which the bound's crossings are searched.
T_LIMIT = 1e15
#: The instances, as ``env_options.adversary`` reads them, and how the tables name them.
INSTANCES = {"planted": "id defaults (planted absolute-value losses)",
             "stochastic": "stochastic adversary, loss=distance"}
#: The learners' rows: ``(agent, epsilon, paper rate)``.
LEARNERS = (("pftal", 1.0, "ST13 Thm 11: sqrt(p T log^2.5 T / eps)"),
            ("pftal", 10.0, "ST13 Thm 11: sqrt(p T log^2.5 T / eps)"),
            ("ftal", None, "L ‖C‖ sqrt(T log T)"))


def proof_bound(agent: Any, T: float) -> float:
    """Smith-Thakurta's explicit regret bound for ``agent``'s parameters at horizon ``T``:
    ``2 K ln T + 4 p K ln^2.5 T / eps + lam T ||C||^2 / 2`` with ``K = (L + H ||C||)^2 / H``
    (Lemma 8, Fact 9, Claim 10, App. C eq. (17); the noise term for ``pftal`` only).

    In regularized mode (``lam > 0``) ``lam = H`` is recomputed at ``T`` as the agent
    would at that horizon (App. C / Thm. 11), so the bound can be evaluated at any ``T``.
    """
    p = agent.problem
    d, L, H, lam = p.dim, p.lipschitz, agent.H, agent.regularization
    C = p.domain.norm_bound(2)
    if lam > 0:
        lam = (pftal_regularization(int(T), d, agent.epsilon, L, C) if agent.private
               else ftal_regularization(int(T), L, C))
        H = lam
    lg = math.log(T)
    K = (L + H * C) ** 2 / H
    noise = 4.0 * d * K * lg**2.5 / agent.epsilon if agent.private else 0.0
    return 2.0 * K * lg + noise + lam * T * C**2 / 2.0


def learner_at(adversary: str, agent: str, epsilon: float | None, horizon: int) -> Any:
    """The row's learner as the sweep built it at ``horizon`` (its parameters depend on
    the problem, ``T`` and the privacy only)."""
    from agents import make
    from dp_online_envs.envs.registry import build_env
    from dp_online_envs.lab.experiments.sweep import load_sweep

    part = next(p for p in load_sweep(STUDY.sweep).parts
                if p.agent == agent and adversary_of(p.env_id, p.env_kwargs) == adversary)
    problem = build_env(ENV, horizon=horizon, **part.env_kwargs).get_wrapper_attr("problem")
    privacy = {} if epsilon is None else {"epsilon": float(epsilon), "delta": 0.0}
    return make(agent, problem, seed=0, **privacy, **part.agent_kwargs)


def adversary_of(env_id: str, env_kwargs: dict[str, Any]) -> str:
    """The adversary an entry of the sweep plays (the id's default where unset)."""
    from dp_online_envs.lab.experiments.game import env_options

    return str(env_options(env_id, env_kwargs)["adversary"])


def by_horizon(frame: Any, adversary: str, agent: str,
               epsilon: float | None) -> dict[int, dict[int, float]]:
    """``{T: {seed_index: regret}}`` of one learner on one instance, on the seed indices
    held at every ``T``."""
    games = frame[frame["env_options.adversary"] == adversary]
    horizons = sorted(int(t) for t in games[games.agent_label == agent].horizon.unique())
    found = {t: ps.regrets(games, agent, t, epsilon) for t in horizons}
    return ps.on_common_seeds({t: r for t, r in found.items() if r})


def _t(value: float) -> str:
    return "> 1e15" if math.isinf(value) else (f"{value:.2g}" if value >= 1e4
                                                else f"{value:.0f}")


def slope_rows(frame: Any, learner: Callable[..., Any] = learner_at) -> list[list[str]]:
    """One row per instance and learner (trivial play first): regret at the smallest and
    largest ``T``, the slopes, the verdict on :data:`EXPONENT`, the proof bound's three
    figures (``learner(adversary, agent, epsilon, T)`` builds the learner whose bound it
    is, default :func:`learner_at`)."""
    out = []
    for adv in instances_of(frame):
        trivial = by_horizon(frame, adv, TRIVIAL, None)
        for agent, eps, paper in ((TRIVIAL, None, "linear"), *LEARNERS):
            data = by_horizon(frame, adv, agent, eps)
            if len(data) < 2:
                continue
            horizons = sorted(data)
            of_means, _ = ps.slope_texts(data)
            per_seed, in_band = ps.slope_verdict(
                data, lambda lo, hi: ps.band(lo, hi, EXPONENT - TOLERANCE, EXPONENT + TOLERANCE))
            name = agent + ("" if eps is None else f" ε={eps:g}")
            cells = [INSTANCES.get(adv, adv), name, str(ps.seed_count(data[horizons[0]])),
                     ps.mean_text(data[horizons[0]]), ps.mean_text(data[horizons[-1]]),
                     of_means, per_seed]
            if agent == TRIVIAL:
                out.append([*cells, "", "", "", "", paper])
                continue
            t_max = horizons[-1]
            lrn = learner(adv, agent, eps, t_max)

            def bound(T: float, a: Any = lrn) -> float:
                return proof_bound(a, T)

            rate = float(np.mean(list(trivial[t_max].values()))) / t_max if trivial else math.nan
            crossing = (below_from(bound, lambda T, c=rate: c * T, t_max=T_LIMIT)
                        if math.isfinite(rate) else math.nan)
            out.append([*cells,
                        in_band,
                        f"{local_slope(bound, t_max):.2f}",
                        _t(slope_reached(bound, EXPONENT, tol=TOLERANCE, t_max=T_LIMIT)),
                        "n/a" if math.isnan(crossing) else _t(crossing), paper])
    return out


SLOPE_HEAD = ("instance", "learner", "seeds", "regret at T min [95% CI]",
              "regret at T max [95% CI]", "slope of the means", "per-seed slope [95% CI]",
              f"within {TOLERANCE} of {EXPONENT}", "proof bound's slope at T max",
              f"its slope within {TOLERANCE} from T", "bound < trivial from T", "paper rate")


def trivial_rows(frame: Any) -> tuple[list[int], list[list[str]]]:
    """``(horizons, rows)``: per instance and learner, the paired ratio to trivial play
    at each ``T`` [Fieller] and its side (``below``/``above``/``~``)."""
    horizons = sorted(int(t) for t in frame.horizon.unique())
    out = []
    for adv in instances_of(frame):
        trivial = {t: ps.regrets(frame[frame["env_options.adversary"] == adv], TRIVIAL, t)
                   for t in horizons}
        for agent, eps, _ in LEARNERS:
            games = frame[frame["env_options.adversary"] == adv]
            cells = []
            for t in horizons:
                text, verdict = ps.ratio(ps.regrets(games, agent, t, eps), trivial[t], ".3g")
                cells.append(f"{text} {verdict}")
            out.append([INSTANCES.get(adv, adv),
                        agent + ("" if eps is None else f" ε={eps:g}"), *cells])
    return horizons, out


def instances_of(frame: Any) -> list[str]:
    """The adversaries in the results, those of :data:`INSTANCES` first."""
    found = set(frame["env_options.adversary"])
    return [a for a in INSTANCES if a in found] + sorted(found - set(INSTANCES))


def seed_counts(frame: Any) -> str:
    """``8 seeds at T = 1024 .. 100000`` (one clause per seed count)."""
    counts = frame.groupby("horizon").seed_index.nunique()
    parts = []
    for n in sorted(set(counts), reverse=True):
        ts = sorted(int(t) for t in counts.index if counts[t] == n)
        parts.append(f"{n} seeds at T = {', '.join(map(str, ts))}")
    return "; ".join(parts)


def render(results: str | pathlib.Path, learner: Callable[..., Any] = learner_at) -> str:
    """The section's block: the slopes and proof-bound figures, the ratios to trivial
    play."""
    frame = STUDY.load(results)
    frame = frame[frame.env_id == ENV]
    horizons, rows = trivial_rows(frame)
    return "\n\n".join([
        f"`{ENV}`, {seed_counts(frame)}; every learner of an instance and horizon on the "
        "same games (paired seeds). Slopes over every T on the seeds held at every T; the "
        "proof bound's figures are computed for the learner's parameters, not measured "
        "(trivial play taken linear at its mean rate at T max).",
        ps.table(SLOPE_HEAD, slope_rows(frame, learner)),
        "**Ratio to trivial play** (`center`) on the same games, per T: mean(learner) / "
        "mean(trivial) [Fieller's 95% interval], `below` / `above` where the interval "
        "excludes 1 " + ps.LEGEND + ":",
        ps.table(["instance", "learner", *(f"T={t}" for t in horizons)], rows)])


if __name__ == "__main__":
    STUDY.main(render)
