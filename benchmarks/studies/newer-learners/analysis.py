"""private-batched-htinf against private-exp2 on ``DPBandit-MAB-v0`` (the analysis)

Reads the stored results of ``sweep.yaml`` (next to this file) and writes the markdown
of the ``newer-learners`` section of ``docs/results.md``:

1. per adversary, at the horizon with the most epsilons: trivial play's regret, then per
   epsilon both learners' regret [Student-t 95% interval], the paired ratio htinf / exp2
   [Fieller's interval], the paired difference htinf - exp2 [Student-t interval] and the
   learner with the lower regret where that interval excludes 0 (``~``: the interval
   holds the null, neither side shown),
   and each learner's paired ratio to trivial play (:func:`comparison_rows`);
2. per epsilon played at three horizons or more (default adversary): each learner's
   mean regret at every ``T``, the slope of the means and the mean per-seed slope
   [95% interval], and htinf's slope minus exp2's, paired by seed (:func:`slope_block`).
"""

from __future__ import annotations

import pathlib
import sys
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import paired_stats as ps  # noqa: E402

STUDY = ps.Study(__file__)
ENV = "DPBandit-MAB-v0"
HTINF, EXP2, TRIVIAL = "private-batched-htinf", "private-exp2", "uniform"
LEARNERS = (HTINF, EXP2)
#: The env's default adversary.
DEFAULT = "stochastic"


def batch_of(epsilon: float, horizon: int) -> int:
    """private-batched-htinf's batch ``tau`` at its defaults (``ceil(1/epsilon)``,
    clamped to ``[1, T]``)."""
    from agents.bandit.private_batched_htinf import batch_size

    return batch_size(epsilon, horizon)


def epsilons_at(frame: Any, adversary: str, horizon: int) -> list[float]:
    """The epsilons both learners played under ``adversary`` at ``horizon``."""
    rows = frame[(frame["env_options.adversary"] == adversary) & (frame.horizon == horizon)
                 & frame.agent_label.isin(LEARNERS)]
    return sorted(float(e) for e in rows.epsilon.dropna().unique())


def main_horizon(frame: Any, adversary: str) -> int | None:
    """The horizon with the most epsilons under ``adversary`` (the largest on ties)."""
    horizons = sorted(int(t) for t in frame[frame["env_options.adversary"]
                                            == adversary].horizon.unique())
    if not horizons:
        return None
    return max(horizons, key=lambda t: (len(epsilons_at(frame, adversary, t)), t))


def comparison_rows(frame: Any, adversary: str, horizon: int,
                    batch: Any = batch_of) -> list[dict[str, Any]]:
    """One row per epsilon: the learners' regret, their paired ratio and difference,
    the verdict, and each one's ratio to trivial play (``batch(epsilon, T)``: the
    batch column, default :func:`batch_of`)."""
    trivial = ps.regrets(frame, TRIVIAL, horizon, adversary=adversary)
    rows = []
    for eps in epsilons_at(frame, adversary, horizon):
        r = {n: ps.regrets(frame, n, horizon, eps, adversary) for n in LEARNERS}
        ratio_text, _ = ps.ratio(r[HTINF], r[EXP2])
        diff_text, verdict = ps.difference(r[HTINF], r[EXP2], LEARNERS)
        rows.append({"epsilon": eps, "tau": batch(eps, horizon), "seeds": len(r[HTINF]),
                     HTINF: ps.mean_text(r[HTINF]), EXP2: ps.mean_text(r[EXP2]),
                     "ratio": ratio_text, "difference": diff_text, "lower": verdict,
                     **{f"{n}/trivial": ps.ratio(r[n], trivial) for n in LEARNERS}})
    return rows


def comparison_block(frame: Any, adversary: str, batch: Any = batch_of) -> str:
    """The table of one adversary and what its intervals support, in words."""
    horizon = main_horizon(frame, adversary)
    if horizon is None:
        return ""
    rows = comparison_rows(frame, adversary, horizon, batch)
    trivial = ps.regrets(frame, TRIVIAL, horizon, adversary=adversary)
    name = f"{adversary} (default)" if adversary == DEFAULT else adversary
    seeds = sorted({r["seeds"] for r in rows})
    head = ["ε", "τ", f"{HTINF} [95% CI]", f"{EXP2} [95% CI]", "htinf / exp2 [Fieller]",
            "htinf − exp2 [paired t]", "lower regret", "htinf / trivial", "exp2 / trivial"]
    body = [[f"{r['epsilon']:g}", r["tau"], r[HTINF], r[EXP2], r["ratio"], r["difference"],
             r["lower"], *(r[f"{n}/trivial"][0] for n in LEARNERS)] for r in rows]
    wins = {n: [r["epsilon"] for r in rows if r["lower"] == n] for n in LEARNERS}
    noise = [r["epsilon"] for r in rows if r["lower"] == ps.NOISE]
    unreplicated = [r["epsilon"] for r in rows if r["lower"] == ps.NOT_REPLICATED]
    below = {n: [r["epsilon"] for r in rows if r[f"{n}/trivial"][1] == "below"]
             for n in LEARNERS}
    return "\n".join([
        f"**Adversary: {name}**, T = {horizon}, {'/'.join(map(str, seeds))} paired seeds. "
        f"Trivial play (`{TRIVIAL}`): {ps.mean_text(trivial)}.", "",
        ps.table(head, body), "",
        f"Lower regret where the paired interval of the difference excludes 0: "
        f"`{HTINF}` at ε ∈ {ps.listed(wins[HTINF])}, `{EXP2}` at ε ∈ {ps.listed(wins[EXP2])}; "
        f"neither side shown (the interval holds 0) at ε ∈ {ps.listed(noise)}"
        + (f"; not replicated (the two seed sets disagree) at ε ∈ {ps.listed(unreplicated)}"
           if unreplicated else "")
        + f". Below trivial play (Fieller interval of "
        f"the paired ratio below 1): `{HTINF}` at ε ∈ {ps.listed(below[HTINF])}, `{EXP2}` at "
        f"ε ∈ {ps.listed(below[EXP2])}."])


def slope_block(frame: Any, epsilon: float, adversary: str = DEFAULT) -> str:
    """Regret against ``T`` at ``epsilon``: the means, the slopes, the paired slope gap."""
    games = frame[frame["env_options.adversary"] == adversary]
    horizons = sorted(int(t) for t in games.horizon.unique()
                      if epsilon in epsilons_at(frame, adversary, int(t)))
    by = {}
    for name in (*LEARNERS, TRIVIAL):
        eps = None if name == TRIVIAL else epsilon
        by[name] = ps.on_common_seeds({t: ps.regrets(frame, name, t, eps, adversary)
                                       for t in horizons})
    body = []
    for name in (*LEARNERS, TRIVIAL):
        means = [ps.mean_text(by[name][t]).split(" [")[0] for t in horizons]
        body.append([name, *means, *ps.slope_texts(by[name])])
    head = ["learner", *(f"T={t}" for t in horizons), "slope of the means",
            "per-seed slope [95% CI]"]
    diff_text, verdict = ps.difference(ps.seed_slopes(by[HTINF]), ps.seed_slopes(by[EXP2]),
                                       ("htinf's", "exp2's"), spec="+.2f")
    seeds = len(by[HTINF][horizons[-1]])
    return "\n".join([
        f"**Slope in T at ε = {epsilon:g}** ({adversary}"
        f"{' (default)' if adversary == DEFAULT else ''} adversary, {seeds} seeds; mean "
        f"regret at each T)", "", ps.table(head, body), "",
        f"htinf's per-seed slope minus exp2's, paired: {diff_text} "
        + {ps.NOISE: "(neither side shown: the interval holds 0).",
           ps.NOT_REPLICATED: "(not replicated: the two seed sets disagree)."}
        .get(verdict, f"({verdict} is the smaller).")])


def slope_epsilons(frame: Any, adversary: str = DEFAULT) -> list[float]:
    """The epsilons both learners played at three horizons or more."""
    games = frame[frame["env_options.adversary"] == adversary]
    counts: dict[float, int] = {}
    for t in games.horizon.unique():
        for eps in epsilons_at(frame, adversary, int(t)):
            counts[eps] = counts.get(eps, 0) + 1
    return sorted(e for e, n in counts.items() if n >= 3)


def render(results: str | pathlib.Path) -> str:
    """The section's block: one comparison per adversary, then the slopes."""
    frame = STUDY.load(results)
    frame = frame[frame.env_id == ENV]
    adversaries = sorted(frame["env_options.adversary"].unique(),
                         key=lambda a: (a != DEFAULT, a))
    parts = [comparison_block(frame, a) for a in adversaries]
    parts += [slope_block(frame, e) for e in slope_epsilons(frame)]
    return "\n\n".join(p for p in parts if p)


if __name__ == "__main__":
    STUDY.main(render)
