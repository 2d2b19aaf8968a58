"""Private -> non-private as epsilon grows (the analysis)

Reads the stored results of ``sweep.yaml`` (next to this file) and writes the markdown
of the ``privacy-limit`` section of ``docs/results.md``: per pair of a private learner
and the non-private learner it declares as its counterpart (``private-ftrl`` and
``hedge`` on ``DPFullInfo-Experts-v0``, ``private-exp2`` and ``exp2`` on
``DPBandit-MAB-v0``), at the sweep's large epsilon:

* both learners' mean regret [Student-t 95% interval] and trivial play's, for scale;
* the paired difference ``private - non-private`` [paired t 95% interval];
* the paired ratio ``mean(private) / mean(non-private)`` [Fieller's 95% interval] and
  the verdict on the target ``ratio <= 1.15`` (:data:`TARGET`): ``yes`` where the
  interval lies at or below it, ``no`` where it lies above, ``~`` where it straddles it
  or is unbounded (:func:`target_verdict`).

Every interval is over the paired seeds: the learners of one env play the same games
(the env's seed derives from its settings and the seed index only).
"""

from __future__ import annotations

import math
import pathlib
import sys
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import paired_stats as ps  # noqa: E402

STUDY = ps.Study(__file__)
#: ``(env id, private learner, its non-private counterpart, trivial play)``.
PAIRS = (("DPFullInfo-Experts-v0", "private-ftrl", "hedge", "center"),
         ("DPBandit-MAB-v0", "private-exp2", "exp2", "uniform"))
#: The largest private / non-private ratio the limit may show.
TARGET = 1.15


def target_verdict(lo: float | None, hi: float | None, target: float = TARGET) -> str:
    """``yes`` where ``[lo, hi]`` lies at or below ``target``, ``no`` where it lies
    above, :data:`paired_stats.NOISE` where it straddles it (or an end is missing)."""
    return ps.band(lo, hi, -math.inf, target)


def pair_row(frame: Any, env_id: str, private: str, other: str, trivial: str,
             horizon: int, epsilon: float) -> list[str] | None:
    """One table row (``None`` when the results hold no paired games of the pair)."""
    games = frame[frame.env_id == env_id]
    mine = ps.regrets(games, private, horizon, epsilon)
    theirs = ps.regrets(games, other, horizon)
    if ps.paired_ratio(mine, theirs) is None:
        return None
    text, verdict = ps.ratio_verdict(mine, theirs, target_verdict, spec=".3f")
    diff, _ = ps.difference(mine, theirs, (private, other))
    return [f"{private} / {other}", env_id, str(ps.seed_count(set(mine) & set(theirs))),
            ps.mean_text(mine), ps.mean_text(theirs),
            ps.mean_text(ps.regrets(games, trivial, horizon), ".0f"), diff,
            text, verdict]


HEAD = ("private / non-private", "env", "seeds", "private regret [95% CI]",
        "non-private regret [95% CI]", "trivial play [95% CI]",
        "difference [paired t 95% CI]", "ratio [Fieller 95% CI]", f"ratio <= {TARGET}")


def summary(rows: list[list[str]]) -> str:
    """What the verdicts say about the target, in a sentence."""
    said = {"yes": "the interval (of each seed set, where both were played) lies at or below",
            "no": "the interval (of each seed set, where both were played) lies above",
            ps.NOISE: "the interval straddles",
            ps.NOT_REPLICATED: "not replicated (the two seed sets disagree) on"}
    return " ".join(f"`{row[0]}`: {said[row[-1]]} {TARGET}." for row in rows)


def render(results: str | pathlib.Path) -> str:
    """The section's block: one row per pair of :data:`PAIRS`, and the verdicts."""
    frame = STUDY.load(results)
    private = frame[frame.epsilon.notna()]
    horizon = int(private.horizon.max())
    epsilon = float(private.epsilon.max())
    deltas = sorted({float(d) for d in private.delta})
    rows = [row for env_id, mine, other, trivial in PAIRS
            if (row := pair_row(frame, env_id, mine, other, trivial, horizon, epsilon))]
    return "\n\n".join([
        f"ε = {epsilon:g}, δ = {', '.join(f'{d:g}' for d in deltas)}, T = {horizon}, the "
        f"ids' defaults; every learner of an env on the same games (paired seeds), regret "
        f"against the best fixed action in hindsight. Trivial play (`center`: the uniform "
        f"mixture; `uniform`: a uniform arm) for scale.",
        ps.table(HEAD, rows), summary(rows)])


if __name__ == "__main__":
    STUDY.main(render)
