"""Do the registered ids' defaults separate learning from not learning? (the analysis)

Reads the stored results of ``sweep.yaml`` (next to this file) and writes the markdown
table of ``docs/results.md``: for every id, trivial play's regret at the larger horizon
``T`` and the slope of its regret between the two horizons, then, for each learner of the
id's family at ``T``, its regret and its ratio to trivial play's on the same games, each
with a 95% interval over the paired seeds. The criteria:

1. ``slope``: trivial play's regret is linear: the mean over seeds of its per-seed
   log-log slope (seed ``i`` at ``T0`` against seed ``i`` at ``T``) has its Student-t
   interval above 0.9;
2. a non-private learner has at most half of trivial play's regret: the Fieller
   interval of the paired ratio (:func:`~dp_online_envs.lab.experiments.analysis.
   ratio_ci`) lies below 0.5;
3. a private learner has less regret than trivial play: that interval lies below 1.

A criterion is ``ok`` where its interval supports it, ``FAIL`` where the interval
supports the opposite, and ``~`` where it contains the threshold (or is unbounded).

Usage::

    python benchmarks/studies/separation/analysis.py [RESULTS_DIR]
"""

from __future__ import annotations

import math
import pathlib
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from dp_online_envs.envs.registry import ENV_IDS  # noqa: E402
from dp_online_envs.lab.experiments.analysis import mean_ci, ratio_ci  # noqa: E402
from dp_online_envs.lab.experiments.table import load_results  # noqa: E402

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
    slopes = per_seed_slopes(tr0, tr, t0, t)
    finite = slopes[np.isfinite(slopes)]
    sm, slo, shi = mean_ci(finite) if finite.size else (math.nan, None, None)
    tm, tlo, thi = mean_ci(list(tr.values()))
    rows = [{"id": env_id, "learner": f"{TRIVIAL} (trivial)", "privacy": "",
             "T": t, "seeds": len(tr), "regret": _fmt(tm, tlo, thi),
             "ratio": f"slope {_fmt(sm, slo, shi, 2)}",
             "criterion": f"slope > {LINEAR:g}: "
                          f"{interval_verdict(slo, shi, LINEAR, below=False)}"}]
    learners = [a for a in dict.fromkeys(games.agent) if a != TRIVIAL]
    for agent in learners:
        mine = games[(games.agent == agent) & (games.horizon == t)]
        eps = mine.epsilon.dropna()
        private = not eps.empty
        r = paired(frame, env_id, agent, t)
        seeds = sorted(set(r) & set(tr))
        if not seeds:
            continue
        a, b = [r[s] for s in seeds], [tr[s] for s in seeds]
        m, lo, hi = mean_ci(a)
        ratio, rlo, rhi = ratio_ci(a, b)
        threshold = 1.0 if private else NON_PRIVATE_SHARE
        rows.append({
            "id": env_id, "learner": agent,
            "privacy": f"ε = {eps.iloc[0]:g}" if private else "non-private",
            "T": t, "seeds": len(seeds), "regret": _fmt(m, lo, hi),
            "ratio": _fmt(ratio, rlo, rhi, 2),
            "criterion": ("< trivial: " if private else "<= trivial/2: ")
                         + interval_verdict(rlo, rhi, threshold, below=True)})
    return rows


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
    counts = {v: verdicts.count(v) for v in ("ok", "FAIL", "~")}
    missing = [i for i in ENV_IDS if i not in set(frame.env_id)]
    return (table(frame, rows=rows) + f"\n\n{counts['ok']} criteria ok, {counts['FAIL']} "
            f"FAIL, {counts['~']} not shown either way (`~`)."
            + (f" Not in these results: {', '.join(missing)}." if missing else ""))


if __name__ == "__main__":
    print(render(sys.argv[1] if len(sys.argv) > 1 else ROOT / "results" / "studies" /
                 "separation"))
