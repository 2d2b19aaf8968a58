"""The price of privacy on the contextual ids (the analysis)

Reads the stored results of ``sweep.yaml`` (next to this file) and writes the markdown
of the ``contextual`` section of ``docs/results.md``: per contextual id (at its defaults
and the sweep's horizon), every learner on the same games (paired seeds), on the
discovery seeds and the replication seeds apart (:mod:`paired_stats`):

1. the instances (:func:`instance_line`): trivial play's (``uniform``) regret per round on
   each seed, its smallest and largest, and the seeds where it is below
   :data:`DEGENERATE` (a game a uniformly random arm nearly wins, where every learner
   looks good);
2. the non-private references (:func:`reference_rows`): mean regret [Student-t 95%
   interval] per seed set, and ``linucb``'s paired ratio to trivial play [Fieller's 95%
   interval];
3. the private learners by epsilon (:func:`private_rows`): mean regret per seed set, the
   paired ratio to ``linucb`` (the price of privacy) and to trivial play, each with its
   Fieller interval on each seed set;
4. ``jdp-linucb`` minus ``ldp-linucb`` by epsilon (:func:`difference_rows`): the paired
   difference [Student-t 95% interval] on each seed set.

A comparison ("lower", "higher") is written only where the interval on BOTH seed sets
supports it (:func:`paired_stats.on_both`); where the two disagree it reads ``not
replicated`` and both intervals are given; ``~`` where both intervals hold the null
(neither side shown; that two learners are equal is never claimed); ``one seed set
only`` where the games hold one set (:func:`on_both_sets`). Every ratio is given with
its interval.
"""

from __future__ import annotations

import pathlib
import sys
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import paired_stats as ps  # noqa: E402

STUDY = ps.Study(__file__)
#: The contextual ids the study plays, with what their defaults are.
ENVS = {
    "DPBandit-ContextualLinear-v0": "K = 5 arms, d = 5, the stochastic linear adversary",
    "DPBandit-ContextualClasses-v0": "the wine data replayed as bandit feedback: K = 3 "
                                     "classes, d = 14",
}
PRIVATE = ("jdp-linucb", "ldp-linucb")
NON_PRIVATE = "linucb"
TRIVIAL = "uniform"
#: Trivial play's regret per round below which a game is called degenerate (a uniformly
#: random arm loses little more than the per-context best arm).
DEGENERATE = 0.05
#: How the ratio verdicts read against a reference.
RATIO_WORDS = {"below": "lower", "above": "higher"}
#: The verdict of a comparison whose games hold one seed set only: none is written.
ONE_SET = "one seed set only"


def on_both_sets(found: tuple[str, str], *values: dict[int, float]) -> tuple[str, str]:
    """``found`` (a :mod:`paired_stats` ``(text, verdict)`` of ``values``) where the
    games of ``values`` hold both seed sets; the text and :data:`ONE_SET` where they hold
    one only (a comparison is written only where both seed sets support it)."""
    text, verdict = found
    if len(ps.by_seed_set(*values)) < len(ps.SEED_SETS) and text != "n/a":
        return text, ONE_SET
    return text, verdict


def word(verdict: str, reference: str) -> str:
    """A ratio's verdict as text: ``lower than X``/``higher than X`` where both seed sets
    support it; ``~`` and ``not replicated`` as they are."""
    return f"{RATIO_WORDS[verdict]} than `{reference}`" if verdict in RATIO_WORDS else verdict


def per_set_means(values: dict[int, float], spec: str = ".1f") -> str:
    """Mean [Student-t 95% interval] on each seed set (``<discovery>; replication
    <replication>``; one set: its own)."""
    return ps.on_both(lambda v: (ps.mean_text(v, spec), ps.NOISE), values)[0]


def seeds_text(values: dict[int, float]) -> str:
    """``discovery seeds 0-7 (8) and replication seeds 5000-5007 (8)``."""
    parts = []
    for name in ps.SEED_SETS:
        seeds = sorted(s for s in values if ps.seed_set(s) == name)
        if seeds:
            parts.append(f"{name} seeds {seeds[0]}-{seeds[-1]} ({len(seeds)})")
    return " and ".join(parts) or "no seeds"


def instance_line(trivial: dict[int, float], horizon: int) -> str:
    """Trivial play's regret per round over the seeds and the degenerate seeds."""
    if not trivial:
        return "No games of trivial play in these results."
    per_round = {s: r / horizon for s, r in trivial.items()}
    low, high = min(per_round, key=per_round.get), max(per_round, key=per_round.get)
    degenerate = sorted(s for s, v in per_round.items() if v < DEGENERATE)
    return (f"Instances: trivial play's regret per round is {per_round[low]:.3f} (seed "
            f"{low}) to {per_round[high]:.3f} (seed {high}); seeds below {DEGENERATE:g} "
            f"(degenerate: a uniformly random arm nearly as good as the per-context best "
            f"arm): {', '.join(map(str, degenerate)) if degenerate else 'none'}.")


def reference_rows(frame: Any, horizon: int) -> list[list[str]]:
    """``linucb`` and trivial play: regret per seed set, ``linucb`` / trivial [Fieller]."""
    trivial = ps.regrets(frame, TRIVIAL, horizon)
    mine = ps.regrets(frame, NON_PRIVATE, horizon)
    text, verdict = on_both_sets(ps.ratio(mine, trivial, ".3f"), mine, trivial)
    return [[f"`{NON_PRIVATE}`", per_set_means(mine), text, word(verdict, TRIVIAL)],
            [f"`{TRIVIAL}`", per_set_means(trivial), "1", ""]]


def epsilons_of(frame: Any) -> list[float]:
    """The private learners' epsilons."""
    return sorted(float(e) for e in frame.epsilon.dropna().unique())


def private_rows(frame: Any, horizon: int) -> list[list[str]]:
    """Per private learner and epsilon: regret per seed set, the paired ratio to
    ``linucb`` and to trivial play [Fieller] with their verdicts."""
    trivial = ps.regrets(frame, TRIVIAL, horizon)
    reference = ps.regrets(frame, NON_PRIVATE, horizon)
    rows = []
    for name in PRIVATE:
        for eps in epsilons_of(frame):
            mine = ps.regrets(frame, name, horizon, eps)
            if not mine:
                continue
            price, price_verdict = on_both_sets(ps.ratio(mine, reference), mine, reference)
            against, against_verdict = on_both_sets(ps.ratio(mine, trivial, ".3f"), mine,
                                                    trivial)
            rows.append([f"`{name}`", f"{eps:g}", per_set_means(mine), price,
                         word(price_verdict, NON_PRIVATE), against,
                         word(against_verdict, TRIVIAL)])
    return rows


def difference_rows(frame: Any, horizon: int) -> list[list[str]]:
    """Per epsilon: ``jdp-linucb - ldp-linucb``, paired [Student-t], with the learner of
    the lower regret where both seed sets show it."""
    a, b = PRIVATE
    rows = []
    for eps in epsilons_of(frame):
        mine, theirs = ps.regrets(frame, a, horizon, eps), ps.regrets(frame, b, horizon, eps)
        text, verdict = on_both_sets(ps.difference(mine, theirs, (a, b)), mine, theirs)
        shown = f"`{verdict}` lower" if verdict in PRIVATE else verdict
        rows.append([f"{eps:g}", text, shown])
    return rows


def verdict_summary(rows: list[list[str]]) -> str:
    """Which private settings are lower than trivial play, higher, not replicated."""
    groups: dict[str, list[str]] = {}
    for learner, eps, *_, verdict in rows:
        groups.setdefault(verdict, []).append(f"{learner} at ε = {eps}")
    said = [(word("below", TRIVIAL), "lower regret than trivial play on both seed sets"),
            (word("above", TRIVIAL), "higher regret than trivial play on both seed sets"),
            (ps.NOT_REPLICATED, "not replicated (the two seed sets disagree)"),
            (ps.NOISE, "neither side shown on either seed set"),
            (ONE_SET, "no comparison (the games hold one seed set only)")]
    return " ".join(f"{text.capitalize()}: {', '.join(groups[key])}." for key, text in said
                    if groups.get(key)) or "No private games in these results."


def env_block(frame: Any, env_id: str) -> str:
    """One id's block (its largest horizon)."""
    games = frame[frame.env_id == env_id]
    horizon = int(games.horizon.max())
    trivial = ps.regrets(games, TRIVIAL, horizon)
    rows = private_rows(games, horizon)
    return "\n\n".join([
        f"**`{env_id}`** ({ENVS.get(env_id, 'its defaults')}), T = {horizon}, "
        f"{seeds_text(trivial)}; regret against the per-context best arm.",
        instance_line(trivial, horizon),
        "Non-private references: mean regret [Student-t 95% interval] on each seed set "
        "(discovery; replication), and the paired ratio to trivial play [Fieller's 95% "
        "interval] on each " + ps.LEGEND + ":",
        ps.table(["learner", "regret [95% CI]", "/ trivial [Fieller]", "verdict"],
                 reference_rows(games, horizon)),
        f"Private learners (δ = 1e-5): mean regret, the paired ratio to `{NON_PRIVATE}` "
        "(the price of privacy) and to trivial play, each with Fieller's 95% interval on "
        "each seed set:",
        ps.table(["learner", "ε", "regret [95% CI]", f"/ {NON_PRIVATE} [Fieller]",
                  f"vs {NON_PRIVATE}", "/ trivial [Fieller]", "vs trivial"], rows),
        verdict_summary(rows),
        f"`{PRIVATE[0]}` minus `{PRIVATE[1]}`, paired: mean [95% paired t interval] on "
        "each seed set, and the learner with the lower regret where both exclude 0:",
        ps.table(["ε", f"{PRIVATE[0]} − {PRIVATE[1]}", "verdict"],
                 difference_rows(games, horizon))])


def render(results: str | pathlib.Path) -> str:
    """The section's block: one block per contextual id in the results."""
    frame = STUDY.load(results)
    found = [e for e in ENVS if e in set(frame.env_id)]
    return "\n\n".join(env_block(frame, e) for e in found) or "No games in these results."


if __name__ == "__main__":
    STUDY.main(render)
