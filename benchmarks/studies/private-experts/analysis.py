"""The private experts learners on ``DPFullInfo-Experts-v0``: regret and switches (the
analysis)

Reads the stored results of ``sweep.yaml`` (next to this file) and writes the markdown
of the ``private-experts`` section of ``docs/results.md``:

1. per learner and epsilon, under each adversary: the mean regret [Student-t 95%
   interval] and the mean switches (rounds whose action differs from the previous
   round's), at the horizon with the most learners (:func:`regret_rows`);
2. ``private-lazy-mw`` minus every other private learner, paired on the seeds: mean
   [Student-t 95% interval] and the one with the lower regret where the interval
   excludes 0 (``~``: the interval holds the null, neither side shown) (:func:`difference_rows`);
3. ``private-lazy-mw``'s and ``hedge``'s regret against ``T`` (slope of the means and mean
   per-seed slope [95% interval]) and the bound ``private-lazy-mw``'s calibration
   minimizes (:func:`slope_block`).
"""

from __future__ import annotations

import pathlib
import sys
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import paired_stats as ps  # noqa: E402

from dp_online_envs.lab.experiments.rates import loglog_slope  # noqa: E402

STUDY = ps.Study(__file__)
ENV = "DPFullInfo-Experts-v0"
L2P = "private-lazy-mw"
#: The non-private rows: the reference learner and trivial play (the uniform mixture).
NON_PRIVATE = {"hedge": "hedge (non-private)",
               "center": "center (trivial: the uniform mixture)"}
#: The env's default adversary (i.i.d. losses: oblivious) first, then the adaptive one.
ADVERSARIES = ("stochastic", "punish-favorite")
#: How the tables name them.
SHOWN = {"stochastic": "stochastic (default, oblivious)",
         "punish-favorite": "punish-favorite (adaptive)"}


def short(frame: Any, label: str) -> str:
    """A learner's column name: ``ftrl-tree`` for ``private-ftrl(counter=tree)``, with
    `` (idealized)`` where its guarantee is idealized."""
    name = label.replace("private-ftrl(counter=", "ftrl-").rstrip(")")
    return name + (" (idealized)" if idealized(frame, label) else "")


#: The order of the private learners' rows and columns (others follow, by name).
ORDER = (L2P, *(f"private-ftrl(counter={c})" for c in
                ("tree", "agarwal-singh", "honaker", "factorization", "blt")), "private-ftpl")


def private_labels(frame: Any) -> list[str]:
    """The private learners (``agent_label``) in :data:`ORDER`, then the others by name."""
    labels = set(frame[frame.epsilon.notna()].agent_label)
    return sorted(labels, key=lambda x: (ORDER.index(x) if x in ORDER else len(ORDER), x))


def idealized(frame: Any, label: str) -> bool:
    """Whether the learner's guarantee holds for the real-valued mechanism only."""
    return bool(frame[frame.agent_label == label].privacy.str.contains("idealized").any())


def main_horizon(frame: Any) -> int:
    """The horizon at which the most learners played (the largest on ties)."""
    counts = frame.groupby("horizon").agent_label.nunique()
    return int(max(counts.index, key=lambda t: (counts[t], t)))


def adversaries_of(frame: Any) -> list[str]:
    """The adversaries in the results, those of :data:`ADVERSARIES` first."""
    found = list(frame["env_options.adversary"].unique())
    return sorted(found, key=lambda a: (ADVERSARIES.index(a) if a in ADVERSARIES
                                        else len(ADVERSARIES), a))


def regret_rows(frame: Any, horizon: int) -> list[list[str]]:
    """Rows ``learner, ε, (regret [CI], switches) per adversary``; the non-private ones
    last."""
    advs = adversaries_of(frame)
    epsilons = sorted(float(e) for e in frame[frame.horizon == horizon].epsilon.dropna()
                      .unique())
    rows = []
    cells = [(label, eps) for eps in epsilons for label in private_labels(frame)]
    cells += [(label, None) for label in NON_PRIVATE]
    for label, eps in cells:
        row = []
        for adv in advs:
            reg = ps.regrets(frame, label, horizon, eps, adv)
            sw = ps.regrets(frame, label, horizon, eps, adv, column="switches")
            row += [ps.mean_text(reg), f"{sum(sw.values()) / len(sw):.0f}" if sw else "n/a"]
        if any(c != "n/a" for c in row):
            name = NON_PRIVATE.get(label, label + (" (idealized)" if idealized(frame, label)
                                                   else ""))
            rows.append([name, "-" if eps is None else f"{eps:g}", *row])
    return rows


def difference_rows(frame: Any, horizon: int) -> list[dict[str, Any]]:
    """Per epsilon and adversary, ``private-lazy-mw`` minus each other private learner:
    ``{"epsilon", "adversary", <label>: (text, verdict)}``."""
    others = [x for x in private_labels(frame) if x != L2P]
    epsilons = sorted(float(e) for e in frame[(frame.horizon == horizon)
                                              & (frame.agent_label == L2P)].epsilon.unique())
    rows = []
    for eps in epsilons:
        for adv in adversaries_of(frame):
            mine = ps.regrets(frame, L2P, horizon, eps, adv)
            row: dict[str, Any] = {"epsilon": eps, "adversary": adv}
            for other in others:
                row[other] = ps.difference(mine, ps.regrets(frame, other, horizon, eps, adv),
                                        (L2P, short(frame, other)))
            rows.append(row)
    return rows


def calibration_bound(horizon: int, epsilon: float, delta: float) -> float:
    """The regret bound ``private-lazy-mw``'s calibration minimizes on the id's default
    at ``horizon`` (from the learner itself)."""
    from agents import make
    from dp_online_envs.envs.registry import build_env

    problem = build_env(ENV, horizon=horizon).get_wrapper_attr("problem")
    return float(make(L2P, problem, epsilon=epsilon, delta=delta).regret_bound)


def slope_block(frame: Any, bound: Any = calibration_bound) -> str:
    """``private-lazy-mw`` and ``hedge`` against ``T`` (oblivious), with the bound
    (``bound(T, epsilon, delta)``, default :func:`calibration_bound`)."""
    games = frame[(frame["env_options.adversary"] == ADVERSARIES[0])
                  & (frame.agent_label == L2P)]
    horizons = sorted(int(t) for t in games.horizon.unique())
    if len(horizons) < 3:
        return ""
    # the epsilon played at every horizon (the slope's)
    eps = min(float(e) for e in games.epsilon.unique()
              if set(games[games.epsilon == e].horizon) >= set(horizons))
    delta = float(games[games.epsilon == eps].delta.iloc[0])
    body = []
    for label, e in ((L2P, eps), ("hedge", None)):
        by = {t: ps.regrets(frame, label, t, e, ADVERSARIES[0]) for t in horizons}
        by = ps.on_common_seeds({t: r for t, r in by.items() if r})
        if len(by) < 2:
            continue
        means = [ps.mean_text(by[t]).split(" [")[0] if t in by else "n/a" for t in horizons]
        body.append([label if e is not None else NON_PRIVATE[label], *means,
                     *ps.slope_texts(by)])
    bounds = [bound(t, eps, delta) for t in horizons]
    body.append([f"{L2P}: its calibration's bound", *(f"{b:.1f}" for b in bounds),
                 f"{loglog_slope(horizons, bounds):.2f}", ""])
    seeds = len(ps.regrets(frame, L2P, horizons[-1], eps, ADVERSARIES[0]))
    head = ["learner", *(f"T={t}" for t in horizons), "slope of the means",
            "per-seed slope [95% CI]"]
    return (f"**Slope in T** ({SHOWN[ADVERSARIES[0]]}, ε = {eps:g}, δ = {delta:g}, {seeds} seeds; "
            f"mean regret at each T)\n\n" + ps.table(head, body))


def render(results: str | pathlib.Path, bound: Any = calibration_bound) -> str:
    """The section's block: the regret and switches table, the paired differences, the
    slope."""
    frame = STUDY.load(results)
    frame = frame[frame.env_id == ENV]
    horizon = main_horizon(frame)
    advs = adversaries_of(frame)
    seeds = frame[frame.horizon == horizon].groupby("agent_label").seed_index.nunique()
    head = ["learner", "ε", *(f"{SHOWN.get(a, a)}: {c}" for a in advs
                              for c in ("regret [95% CI]", "switches"))]
    deltas = sorted({float(d) for d in frame.delta.dropna() if d > 0})
    top = (f"**Regret and switches**, T = {horizon}, "
           f"{'/'.join(map(str, sorted(set(seeds))))} paired seeds"
           + (f", δ = {', '.join(f'{d:g}' for d in deltas)} for the (ε, δ) learners"
              if deltas else "") + " (idealized: a Gaussian counter whose guarantee holds "
           "for the real-valued mechanism, not its float64 computation)")
    diffs = difference_rows(frame, horizon)
    others = [x for x in private_labels(frame) if x != L2P]
    diff_head = ["ε", "adversary", *(short(frame, o) for o in others)]
    diff_body = [[f"{r['epsilon']:g}", SHOWN.get(r["adversary"], r["adversary"]),
                  *(f"{r[o][0]} {r[o][1]}" for o in others)] for r in diffs]
    parts = [top, ps.table(head, regret_rows(frame, horizon)),
             f"**{L2P} minus each other private learner**, paired on the seeds: mean [95% "
             f"paired t interval] and the one with the lower regret where the interval "
             "excludes 0 " + ps.LEGEND, ps.table(diff_head, diff_body)]
    slope = slope_block(frame, bound)
    return "\n\n".join(parts + ([slope] if slope else []))


if __name__ == "__main__":
    STUDY.main(render)
