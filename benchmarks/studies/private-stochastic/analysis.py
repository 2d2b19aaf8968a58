"""Private stochastic bandits against the adversarial private learners on
``DPBandit-MAB-v0`` (the analysis)

Reads the stored results of ``sweep.yaml`` (next to this file) and writes the markdown
of the ``private-stochastic`` section of ``docs/results.md``, every interval over the
paired seeds (the same games for every learner):

1. the non-private references per adversary: mean regret [Student-t 95% interval] and
   the paired ratio to trivial play (``uniform``) [Fieller's interval]; then each
   stochastic learner minus each adversarial one, paired (:func:`reference_rows`,
   :func:`reference_differences`);
2. per adversary, per epsilon: the four private learners' mean regret [95% interval],
   where each is below trivial play (Fieller interval of the paired ratio below 1), and
   the paired differences ``AdaP - baseline`` [Student-t interval] with the learner of
   lower regret where the interval excludes 0 (``~``: the interval holds the null,
   neither side shown) (:func:`private_block`);
3. the reading (:func:`reading`): every ordering the tables support, written from their
   verdicts on both seed sets (never by hand): per pair, the epsilons at which each side
   is lower, at which neither is shown, and at which the two seed sets disagree (``not
   replicated``); and, where no side is shown, whether the pair is equivalent within the
   stated margin :data:`EQUIVALENCE_SHARE` of trivial play's mean regret
   (:func:`paired_stats.equivalence`: the whole interval within the margin, on both
   sets), the only way a "within noise" is claimed.
"""

from __future__ import annotations

import pathlib
import sys
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import paired_stats as ps  # noqa: E402

STUDY = ps.Study(__file__)
ENV = "DPBandit-MAB-v0"
ADAP = ("adap-ucb", "adap-klucb")
BASELINES = ("private-exp2", "private-batched-htinf")
STOCHASTIC = ("ucb1", "kl-ucb", "thompson")
ADVERSARIAL = ("exp3", "htinf")
TRIVIAL = "uniform"
#: The default (i.i.d.) adversary first.
ADVERSARIES = ("stochastic", "switching", "lower-bound")
#: The equivalence margin of the reading, as a share of trivial play's mean regret.
EQUIVALENCE_SHARE = 0.05


def adversaries_of(frame: Any) -> list[str]:
    """The adversaries in the results, in the order of :data:`ADVERSARIES`."""
    found = set(frame["env_options.adversary"])
    return [a for a in ADVERSARIES if a in found] + sorted(found - set(ADVERSARIES))


def horizon_of(frame: Any) -> int:
    """The (largest) horizon of the results."""
    return int(frame.horizon.max())


def reference_rows(frame: Any, horizon: int) -> list[list[str]]:
    """Per adversary and non-private learner: regret [CI], ratio to trivial [Fieller]
    and whether it is below trivial play."""
    rows = []
    for adv in adversaries_of(frame):
        trivial = ps.regrets(frame, TRIVIAL, horizon, adversary=adv)
        for name in (*STOCHASTIC, *ADVERSARIAL, TRIVIAL):
            r = ps.regrets(frame, name, horizon, adversary=adv)
            if not r:
                continue
            text, verdict = ps.ratio(r, trivial) if name != TRIVIAL else ("1", "")
            rows.append([adv, name, ps.mean_text(r), text,
                         {"below": "yes", "above": "no (above)", "~": "~",
                          ps.NOT_REPLICATED: ps.NOT_REPLICATED}.get(verdict, "")])
    return rows


def reference_differences(frame: Any, horizon: int) -> list[list[str]]:
    """Per adversary, each stochastic learner minus each adversarial one, paired."""
    rows = []
    for adv in adversaries_of(frame):
        cells = []
        for s in STOCHASTIC:
            for a in ADVERSARIAL:
                text, verdict = ps.difference(ps.regrets(frame, s, horizon, adversary=adv),
                                           ps.regrets(frame, a, horizon, adversary=adv), (s, a))
                cells.append(f"{text} {verdict}")
        rows.append([adv, *cells])
    return rows


def epsilons_of(frame: Any) -> list[float]:
    """The private learners' epsilons."""
    return sorted(float(e) for e in frame.epsilon.dropna().unique())


def private_block(frame: Any, adversary: str, horizon: int) -> str:
    """The private learners under ``adversary``: regret, below trivial, differences."""
    epsilons = epsilons_of(frame)
    learners = (*ADAP, *BASELINES)
    r = {(n, e): ps.regrets(frame, n, horizon, e, adversary) for n in learners for e in epsilons}
    trivial = ps.regrets(frame, TRIVIAL, horizon, adversary=adversary)
    regret_table = ps.table(["ε", *learners],
                         [[f"{e:g}", *(ps.mean_text(r[n, e]) for n in learners)]
                          for e in epsilons])
    below = {n: [e for e in epsilons if ps.ratio(r[n, e], trivial)[1] == "below"]
             for n in learners}
    pairs = [(a, b) for a in ADAP for b in BASELINES]
    diff_table = ps.table(["ε", *(f"{a} − {b}" for a, b in pairs)],
                       [[f"{e:g}", *(" ".join(ps.difference(r[a, e], r[b, e], (a, b)))
                                     for a, b in pairs)] for e in epsilons])
    return "\n\n".join([
        f"**Adversary: {adversary}**", regret_table,
        "Below trivial play (Fieller interval of the paired ratio to `uniform` below 1): "
        + "; ".join(f"`{n}` at ε ∈ {ps.listed(below[n])}" for n in learners) + ".",
        "Paired differences (AdaP minus baseline): mean [95% paired t interval] and the "
        "learner with the lower regret where the interval excludes 0 " + ps.LEGEND + ":",
        diff_table])


def _sides(by_eps: dict[Any, tuple[str, str]], a: str, b: str,
           eq: dict[Any, tuple[str, str]]) -> str:
    """One pair's reading over the epsilons: ``by_eps`` maps an epsilon (``None``: no
    epsilon) to ``(difference text, verdict)``, ``eq`` to the equivalence's
    (:func:`paired_stats.equivalence`)."""
    at = {v: [e for e, (_, verdict) in by_eps.items() if verdict == v]
          for v in (a, b, ps.NOISE, ps.NOT_REPLICATED)}

    def where(eps: list) -> str:
        return "" if eps == [None] else f" at ε ∈ {ps.listed(eps)}"

    parts = [f"`{name}` lower{where(at[name])}" for name in (a, b) if at[name]]
    if at[ps.NOT_REPLICATED]:
        parts.append("not replicated" + where(at[ps.NOT_REPLICATED]) + " ("
                     + "; ".join(by_eps[e][0] + (f" at ε = {e:g}" if e is not None else "")
                                 for e in at[ps.NOT_REPLICATED]) + ")")
    if at[ps.NOISE]:
        within = [e for e, (_, v) in eq.items() if v.startswith("within")]
        rest = [e for e in at[ps.NOISE] if e not in within]
        if within:
            parts.append(f"equivalent {eq[within[0]][1]}"
                         f"{where(within)} (the whole interval inside the margin)")
        if rest:
            parts.append("neither side shown nor equivalence within the margin"
                         + where(rest))
    return f"`{a}` − `{b}`: " + ("; ".join(parts) if parts else "no games") + "."


def reading(frame: Any, horizon: int) -> str:
    """The reading: per adversary, each stochastic minus adversarial non-private pair
    and each AdaP minus baseline private pair, written from their verdicts on both seed
    sets (:func:`_sides`), the equivalence margin :data:`EQUIVALENCE_SHARE` of trivial
    play's mean regret."""
    lines = []
    for adv in adversaries_of(frame):
        trivial = ps.regrets(frame, TRIVIAL, horizon, adversary=adv)
        if not trivial:
            continue
        margin = max(EQUIVALENCE_SHARE * float(sum(trivial.values()) / len(trivial)), 1e-9)
        bullets = []
        for s in STOCHASTIC:
            for a in ADVERSARIAL:
                x = ps.regrets(frame, s, horizon, adversary=adv)
                y = ps.regrets(frame, a, horizon, adversary=adv)
                if x and y:
                    bullets.append(_sides({None: ps.difference(x, y, (s, a))}, s, a,
                                          {None: ps.equivalence(x, y, margin)}))
        for a in ADAP:
            for b in BASELINES:
                found = {e: (ps.regrets(frame, a, horizon, e, adv),
                             ps.regrets(frame, b, horizon, e, adv)) for e in epsilons_of(frame)}
                found = {e: xy for e, xy in found.items() if xy[0] and xy[1]}
                if found:
                    bullets.append(_sides(
                        {e: ps.difference(x, y, (a, b)) for e, (x, y) in found.items()}, a, b,
                        {e: ps.equivalence(x, y, margin) for e, (x, y) in found.items()}))
        lines.append(f"* **{adv}** (equivalence margin ±{margin:.1f}, "
                     f"{EQUIVALENCE_SHARE:.0%} of trivial play's mean regret):\n"
                     + "\n".join(f"  * {b}" for b in bullets))
    return ("**Reading**, written from the verdicts above (a side only where the paired "
            "interval excludes 0 on both seed sets):\n\n" + "\n".join(lines))


def render(results: str | pathlib.Path) -> str:
    """The section's block: the references, then one block per adversary."""
    frame = STUDY.load(results)
    frame = frame[frame.env_id == ENV]
    horizon = horizon_of(frame)
    seeds = sorted(set(frame[frame.horizon == horizon].groupby("agent_label")
                       .seed_index.nunique()))
    pairs = [f"{s} − {a}" for s in STOCHASTIC for a in ADVERSARIAL]
    parts = [
        f"`{ENV}`, T = {horizon}, {'/'.join(map(str, seeds))} paired seeds (the same games "
        f"for every learner), regret against the best fixed arm in hindsight.",
        "**Non-private references**: mean regret [Student-t 95% interval] and the paired "
        "ratio to trivial play [Fieller's 95% interval]",
        ps.table(["adversary", "learner", "regret [95% CI]", "/ trivial [Fieller]",
               "below trivial"], reference_rows(frame, horizon)),
        "Stochastic minus adversarial learners (non-private), paired: mean [95% paired t "
        "interval] and the one with the lower regret where the interval excludes 0:",
        ps.table(["adversary", *pairs], reference_differences(frame, horizon))]
    parts += [private_block(frame, adv, horizon) for adv in adversaries_of(frame)]
    parts.append(reading(frame, horizon))
    return "\n\n".join(parts)


if __name__ == "__main__":
    STUDY.main(render)
