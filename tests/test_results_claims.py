"""Every ratio or range of measured regret quoted in prose (docs/results.md, whose prose
comes from benchmarks/results_template.md, and docs/algorithms/*.md) names its interval
or its seed count: a point ratio is never given bare, and a range taken over games says
how many seeds it rests on ("one seed" where only one was affordable).

A statement is a sentence of prose (tables, code blocks and generated stamps are not:
their columns carry the intervals and seed counts) that speaks of regret, trivial play
or a ratio and quotes a ratio (``N times``, ``0.43 of trivial play``, ``0.56-0.70
of``) or a range of measured values (``0.76-0.77``, ``73-81%``). It passes where the
same sentence holds an interval ``[lo, hi]`` or a seed count (``8 seeds``, ``one
seed``, ``16 paired seeds``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "docs" / "results.md", ROOT / "benchmarks" / "results_template.md",
        *sorted((ROOT / "docs" / "algorithms").glob("*.md"))]

#: A ratio: ``2.4 times``, ``1.95-2.4 times``, ``0.10-0.37 of``, ``0.43 of trivial
#: play``, ``a ratio of 0.9``.
RATIO = re.compile(r"\d+(?:\.\d+)?(?:\s*(?:-|–|to)\s*\d+(?:\.\d+)?)?\s*times\b"
                   r"|(?<![\w.^])\d*\.\d+\s*(?:-|–|to)\s*\d*\.\d+\s+of\b"
                   r"|(?<!within )\b\d\.\d+\s+of\s+(?:trivial|its|the|their)\b"
                   r"|\bratios?\s+(?:is|was|of)\s+(?:about\s+)?\d")
#: A range of measured values: ``0.76-0.77``, ``73-81%``.
RANGE = re.compile(r"(?<![\w.^/])\d*\.\d+\s*(?:-|–)\s*\d*\.\d+(?![\w^.])"
                   r"|(?<![\w.^/])\d+\s*(?:-|–)\s*\d+%")
#: What the statement must name.
INTERVAL = re.compile(r"\[\s*[-+−]?\d[\d.,  e+−-]*\s*,\s*[-+−]?\d[\d.,  e+−-]*\s*\]")
SEEDS = re.compile(r"\b(?:one|two|three|four|\d+)\s+(?:\w+\s+){0,2}seeds?\b"
                   r"|\bseeds?\s+\d+\s*(?:-|–|\.\.)\s*\d+", re.I)
#: The subject: measured regret.
TOPIC = re.compile(r"regret|trivial|ratio", re.I)
#: Not measurements: citations of a paper's lemmas and sections, speed-ups of a
#: timing (their own rules: docs/guides/performance.md), privacy parameters.
NOT_MEASURED = re.compile(r"\b(?:Lemmas?|Sections?|Thms?\.?|Theorems?|Eq\.|arXiv:?)\s*"
                          r"\d[\d.]*(?:\s*(?:-|–)\s*\d[\d.]*)?"
                          r"|\d+(?:\s*to\s*\d+)?\s*times\s+(?:faster|slower|the epsilon"
                          r"|the games per|our (?:node )?sigma)", re.I)


def sentences(text: str) -> list[str]:
    """The prose sentences of a markdown text (tables, code blocks, HTML comments and
    the generated stamps left out)."""
    kept, fence = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
            kept.append("")
            continue
        skip = (fence or line.lstrip().startswith("|") or line.startswith("<!--")
                or line.startswith("_Numbers generated"))
        kept.append("" if skip else line)
    out = []
    for para in "\n".join(kept).split("\n\n"):
        para = " ".join(para.split())
        out += [s for s in re.split(r"(?<=[.;])\s+(?=[A-Z`*(])|\s(?=[-*] )", para) if s]
    return out


def unsupported(text: str) -> list[str]:
    """The statements of ``text`` that quote a ratio or a range of regret without its
    interval or its seed count."""
    out = []
    for s in sentences(text):
        measured = NOT_MEASURED.sub("", s)
        if not TOPIC.search(s) or not (RATIO.search(measured) or RANGE.search(measured)):
            continue
        if INTERVAL.search(s) or SEEDS.search(s):
            continue
        out.append(s)
    return out


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_ratio_and_range_names_its_interval_or_its_seeds(path):
    bad = unsupported(path.read_text(encoding="utf-8"))
    assert not bad, "\n\n".join(bad)


@pytest.mark.parametrize("statement", [
    "L2P's regret under punish-favorite is 1.95-2.4 times its default regret.",
    "The compiled path plays to 2^30, where its regret falls to 0.10-0.37 of trivial "
    "play's.",
    "`ons` has 0.43 of trivial play's regret on the default pair.",
    "Beyond the clamp the shrink cost carries 73-81% of the regret.",
    "Its regret grows with slope 0.76-0.77 from 2^20 to 2^30.",
])
def test_a_bare_ratio_or_range_is_flagged(statement):
    assert unsupported(statement) == [statement]


@pytest.mark.parametrize("statement", [
    "L2P's regret under punish-favorite is 2.05 [1.91, 2.19] times its default regret.",
    "At 2^30 its regret is 0.073 of trivial play's (one seed).",
    "The shrink cost carries 73-81% of the regret (8 seeds to 2^22, one seed beyond).",
    "The counters are Lemmas 5.2-5.4 of the paper.",
    "The compiled loop is 108 times faster than the Python path.",
    "| a table row | 0.43 of trivial play | its columns carry the interval |",
])
def test_a_ratio_or_range_with_its_interval_or_seeds_or_no_measurement_passes(statement):
    assert unsupported(statement) == []
