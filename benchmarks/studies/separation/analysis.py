"""Do the registered ids' defaults separate learning from not learning? (the analysis)

Reads the stored results of ``sweep.yaml`` (next to this file) and writes the markdown
tables of ``docs/results.md``. :func:`render`: for every id, trivial play's regret at the
largest horizon ``T`` and the slope of its regret from the smallest ``T0``, then, for
each learner of the id's family at every horizon above ``T0``, its regret and its ratio
to trivial play's on the same games, each with a 95% interval over the paired seeds.
The criteria:

1. ``slope``: trivial play's regret is linear: the mean over seeds of its per-seed
   log-log slope (seed ``i`` at ``T0`` against seed ``i`` at ``T``) has its Student-t
   interval above 0.9;
2. a non-private learner has at most half of trivial play's regret: the Fieller
   interval of the paired ratio (:func:`~dp_online_envs.lab.experiments.analysis.
   ratio_ci`) lies below 0.5;
3. a private learner has less regret than trivial play: that interval lies below 1.

A criterion is ``ok`` where its interval supports it, ``FAIL`` where the interval
supports the opposite, and ``~`` where it contains the threshold (or is unbounded), on
each seed set apart (the discovery and the replication seeds of the sweep): where the
two differ the criterion is ``not replicated`` and both intervals are given
(:func:`paired_stats.on_both`).

:func:`render_rates`: for the smoothed learners of the polytope ids, the regret at every
horizon split into the shrink's cost ``alpha x trivial`` and the remainder, with their
slopes and where the slope may be called the theorem's (:func:`rate_rows`).

Usage::

    python benchmarks/studies/separation/analysis.py [RESULTS_DIR]
"""

from __future__ import annotations

import functools
import math
import pathlib
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from agents import make  # noqa: E402
from dp_online_envs.envs.registry import ENV_IDS, build_env  # noqa: E402
from dp_online_envs.lab.experiments.analysis import mean_ci, ratio_ci  # noqa: E402
from dp_online_envs.lab.experiments.table import load_results  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import paired_stats as ps  # noqa: E402

SWEEP = pathlib.Path(__file__).resolve().parent / "sweep.yaml"
#: The trivial reference, and the slope its regret must exceed.
TRIVIAL, LINEAR = "center", 0.9
#: The most a non-private learner may have of trivial play's regret.
NON_PRIVATE_SHARE = 0.5


def interval_verdict(lo: float | None, hi: float | None, threshold: float,
                     below: bool) -> str:
    """``ok`` when the interval ``[lo, hi]`` lies below (``below``) or above
    ``threshold``, ``FAIL`` when it lies on the other side, ``~`` otherwise (an
    unbounded end is ``None``)."""
    lo_v = -math.inf if lo is None or not math.isfinite(lo) else lo
    hi_v = math.inf if hi is None or not math.isfinite(hi) else hi
    under, over = hi_v < threshold, lo_v > threshold
    if below:
        return "ok" if under else "FAIL" if over else "~"
    return "ok" if over else "FAIL" if under else "~"


def paired(frame: Any, env_id: str, agent: str, horizon: int) -> dict[int, float]:
    """``{seed_index: regret}`` of one learner's games of ``env_id`` at ``horizon``."""
    rows = frame[(frame.env_id == env_id) & (frame.agent == agent)
                 & (frame.horizon == horizon)]
    return dict(zip(rows.seed_index.astype(int), rows.regret.astype(float)))


def per_seed_slopes(r0: dict[int, float], r1: dict[int, float], t0: int,
                    t1: int) -> np.ndarray:
    """Per seed in both, ``log(r1 / r0) / log(t1 / t0)`` (nan unless both are > 0)."""
    seeds = sorted(set(r0) & set(r1))
    a, b = (np.array([r[s] for s in seeds]) for r in (r0, r1))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(b / a) / math.log(t1 / t0)
    return np.where((a > 0) & (b > 0), out, math.nan)


def _fmt(m: float, lo: float | None, hi: float | None, digits: int = 3) -> str:
    """``m [lo, hi]`` (``[unbounded]`` when an end is ``None``)."""
    if lo is None or hi is None:
        return f"{m:.{digits}g} [unbounded]"
    return f"{m:.{digits}g} [{lo:.{digits}g}, {hi:.{digits}g}]"


def id_rows(frame: Any, env_id: str) -> list[dict[str, Any]]:
    """The table's rows of one id: trivial play first, then each learner at ``T``."""
    games = frame[frame.env_id == env_id]
    horizons = sorted(int(h) for h in games.horizon.unique())
    if not horizons or TRIVIAL not in set(games.agent):
        return []
    t0, t = horizons[0], horizons[-1]
    tr, tr0 = paired(frame, env_id, TRIVIAL, t), paired(frame, env_id, TRIVIAL, t0)

    def slope(r0: dict[int, float], r1: dict[int, float]) -> tuple[str, str]:
        finite = per_seed_slopes(r0, r1, t0, t)
        finite = finite[np.isfinite(finite)]
        sm, slo, shi = mean_ci(finite) if finite.size else (math.nan, None, None)
        return _fmt(sm, slo, shi, 2), interval_verdict(slo, shi, LINEAR, below=False)

    slope_text, slope_verdict = ps.on_both(slope, tr0, tr)
    tm, tlo, thi = mean_ci(list(tr.values()))
    rows = [{"id": env_id, "learner": f"{TRIVIAL} (trivial)", "privacy": "",
             "T": t, "seeds": _seeds(tr), "regret": _fmt(tm, tlo, thi),
             "ratio": f"slope {slope_text}",
             "criterion": f"slope > {LINEAR:g}: {slope_verdict}"}]
    learners = [a for a in dict.fromkeys(games.agent) if a != TRIVIAL]
    for agent in learners:
        for h in horizons[1:]:
            row = learner_row(frame, env_id, agent, h)
            if row is not None:
                rows.append(row)
    return rows


def learner_row(frame: Any, env_id: str, agent: str, t: int) -> dict[str, Any] | None:
    """One learner's row at ``T = t``: its regret and its paired ratio to trivial play's,
    with the criterion of its kind (``None`` without paired games)."""
    tr, r = paired(frame, env_id, TRIVIAL, t), paired(frame, env_id, agent, t)
    seeds = sorted(set(r) & set(tr))
    if not seeds:
        return None
    mine = frame[(frame.env_id == env_id) & (frame.agent == agent) & (frame.horizon == t)]
    eps = mine.epsilon.dropna()
    private = not eps.empty
    m, lo, hi = mean_ci([r[s] for s in seeds])
    threshold = 1.0 if private else NON_PRIVATE_SHARE

    def one(mine_: dict[int, float], trivial: dict[int, float]) -> tuple[str, str]:
        common = sorted(set(mine_) & set(trivial))
        if len(common) < 2:
            return "n/a", "~"
        ratio, rlo, rhi = ratio_ci([mine_[s] for s in common], [trivial[s] for s in common])
        return _fmt(ratio, rlo, rhi, 2), interval_verdict(rlo, rhi, threshold, below=True)

    ratio_text, verdict = ps.on_both(one, {s: r[s] for s in seeds}, {s: tr[s] for s in seeds})
    return {"id": env_id, "learner": agent,
            "privacy": f"ε = {eps.iloc[0]:g}" if private else "non-private",
            "T": t, "seeds": _seeds(seeds), "regret": _fmt(m, lo, hi),
            "ratio": ratio_text,
            "criterion": ("< trivial: " if private else "<= trivial/2: ") + verdict}


def _seeds(seeds: Any) -> str:
    """How many seeds: ``n`` of one set, ``d + r`` of the discovery and the replication
    sets."""
    sets = [sum(ps.seed_set(s) == name for s in seeds) for name in ps.SEED_SETS]
    return str(sets[0] or sets[1]) if not all(sets) else f"{sets[0]} + {sets[1]}"


COLUMNS = ("id", "learner", "privacy", "T", "seeds", "regret", "ratio", "criterion")


def rows_of(frame: Any, ids: Sequence[str] = ENV_IDS) -> list[dict[str, Any]]:
    """The table's rows of every id in ``ids`` that ``frame`` holds, in that order."""
    return [row for env_id in ids for row in id_rows(frame, env_id)]


def table(frame: Any, ids: Sequence[str] = ENV_IDS,
          rows: list[dict[str, Any]] | None = None) -> str:
    """The markdown table of :func:`rows_of` (``rows`` when already computed)."""
    rows = rows_of(frame, ids) if rows is None else rows
    head = ("| id | learner | privacy | T | seeds | regret [95% CI] | / trivial [95% CI] | "
            "criterion |\n|---|---|---|---|---|---|---|---|")
    return "\n".join([head, *("| " + " | ".join(str(r[k]) for k in COLUMNS) + " |"
                              for r in rows)])


def render(results: str | pathlib.Path) -> str:
    """The section's block: the table and a count of the criteria per verdict."""
    frame = load_results(results)
    rows = rows_of(frame)
    verdicts = [r["criterion"].rsplit(": ", 1)[-1] for r in rows]
    counts = {v: verdicts.count(v) for v in ("ok", "FAIL", "~", ps.NOT_REPLICATED)}
    missing = [i for i in ENV_IDS if i not in set(frame.env_id)]
    return (table(frame, rows=rows) + f"\n\n{counts['ok']} criteria ok, {counts['FAIL']} "
            f"FAIL, {counts['~']} not shown either way (`~`), "
            f"{counts[ps.NOT_REPLICATED]} not replicated (the two seed sets disagree)."
            + (f" Not in these results: {', '.join(missing)}." if missing else ""))


#: The smoothed (shrinking) learners whose regret :func:`rate_rows` splits.
SMOOTHED = ("garber-kretzu", "garber-kretzu-tuned", "private-projection-free",
            "private-projection-free-tuned")
#: The theorem's exponent of T and the distance from it a slope may have to be called
#: the theorem's regime.
THEOREM_SLOPE, SLOPE_TOLERANCE = 0.75, 0.1


def shrink_of(env_id: str, agent: str, horizon: int, epsilon: float | None) -> tuple[float, bool]:
    """``(alpha, clamped)``: the shrink the learner uses at ``horizon`` on the id's
    default, and whether its smoothing radius is clamped at ``r / 2`` (from the learner
    itself: its parameters depend on the problem and ``T`` only)."""
    problem = build_env(env_id, horizon=horizon).get_wrapper_attr("problem")
    kw = {} if epsilon is None or math.isnan(epsilon) else {"epsilon": float(epsilon)}
    learner = make(agent, problem, seed=0, **kw)
    return float(learner.alpha), bool(learner.params.zeta_clamped)


def rate_rows(frame: Any, env_id: str, shrink_at: Any = shrink_of) -> list[dict[str, Any]]:
    """Per smoothed learner and ``T``: the regret split into the shrink cost and the rest.

    A learner that plays ``(1 - alpha) x_t + alpha c + zeta u_t`` on linear losses has
    regret ``alpha R_c + (1 - alpha) R_x + Z`` on every game, ``R_c`` trivial play's
    regret on the same losses, ``R_x`` the unshrunk points' and ``Z`` the perturbations'
    (mean 0). So ``alpha R_c`` is the shrink's cost, exactly, seed by seed; the remainder
    is what the learning leaves. Slopes are per-seed log-log slopes from the previous
    ``T`` (mean and Student-t interval). The regime column says ``theorem's regime`` only
    where the radius is free (unclamped at both horizons), the remainder is the larger
    part at both, and the remainder's slope interval lies within ``0.75 +- 0.1``
    (:func:`paired_stats.regime`, the rule of every split); a tuned learner's shrink is
    fixed, so its slope is not the theorem's.

    ``shrink_at(env_id, agent, horizon, epsilon) -> (alpha, clamped)`` gives each
    learner's shrink (default :func:`shrink_of`, the learner's own).
    """
    games = frame[frame.env_id == env_id]
    horizons = sorted(int(h) for h in games.horizon.unique())
    rows: list[dict[str, Any]] = []
    for agent in SMOOTHED:
        mine = games[games.agent == agent]
        if mine.empty:
            continue
        eps = mine.epsilon.dropna()
        epsilon = float(eps.iloc[0]) if not eps.empty else None
        previous = None
        for t in horizons:
            tr, r = paired(frame, env_id, TRIVIAL, t), paired(frame, env_id, agent, t)
            seeds = sorted(set(r) & set(tr))
            if not seeds:
                continue
            alpha, clamped = shrink_at(env_id, agent, t, epsilon)
            regret = {s: r[s] for s in seeds}
            shrink = {s: alpha * tr[s] for s in seeds}
            rest = {s: regret[s] - shrink[s] for s in seeds}
            row = {"id": env_id, "learner": agent, "T": t, "seeds": _seeds(seeds),
                   "alpha": f"{alpha:.3g}" + (" (clamped)" if clamped else ""),
                   "regret": f"{np.mean(list(regret.values())):,.0f}",
                   "shrink": f"{np.mean(list(shrink.values())):,.0f} "
                             f"({ps.on_both(ps.share_text, shrink, regret)[0]})",
                   "rest": f"{np.mean(list(rest.values())):,.0f}",
                   "slope": "", "rest_slope": "", "regime": ""}
            if previous is not None:
                t0, regret0, rest0, shrink0, clamped0 = previous
                row["slope"] = ps.slope_verdict({t0: regret0, t: regret},
                                                lambda lo, hi: "")[0]
                row["rest_slope"], row["regime"] = ps.on_both(
                    functools.partial(ps.step_regime, THEOREM_SLOPE, t0, t,
                                      clamped=clamped0 or clamped,
                                      fixed=agent.endswith("-tuned")),
                    rest0, rest, shrink0, regret0, shrink, regret)
            rows.append(row)
            previous = (t, regret, rest, shrink, clamped)
    return rows


RATE_COLUMNS = ("id", "learner", "T", "seeds", "alpha", "regret", "shrink", "rest", "slope",
                "rest_slope", "regime")


def render_rates(results: str | pathlib.Path) -> str:
    """The polytope rates block: :func:`rate_rows` of every id with smoothed learners."""
    frame = load_results(results)
    ids = [i for i in ENV_IDS if i in set(frame.env_id)
           and set(frame[frame.env_id == i].agent) & set(SMOOTHED)]
    rows = [row for env_id in ids for row in rate_rows(frame, env_id)]
    head = ("| id | learner | T | seeds | α | regret | shrink cost α × trivial (share) | "
            "remainder | slope [95% CI] | remainder's slope [95% CI] | regime |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|")
    return "\n".join([head, *("| " + " | ".join(str(r[k]) for k in RATE_COLUMNS) + " |"
                              for r in rows)])


if __name__ == "__main__":
    where = sys.argv[1] if len(sys.argv) > 1 else ROOT / "results" / "studies" / "separation"
    print(render(where) + "\n\n" + render_rates(where))
