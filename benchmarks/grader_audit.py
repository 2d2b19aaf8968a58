"""The grader's privacy audit at the course assignment's default settings.

Grades the course's sample submissions (honest, a noise-free cheat), the three
dodging test submissions, the two that keep every arm in play (noise-free EXP3 or
greedy with a round-robin arm every 64th round) and one the audit cannot read
(noise-free EXP3 at a thirtieth of its learning rate) on ``examples/course/assignment.yaml``
as it is (T = 16384, 5 hidden seeds, 16 audit games), sandboxed, and reports, per
submission, its score, the audit's verdict (with its power on that learner) and its CPU
time (the grader's and the learner's processes), then the audit's power against noise
cuts of the reference. ``--save FILE`` stores the numbers
(:mod:`benchmarks.stored`); :func:`render` draws the block of ``docs/results.md`` from
them::

    python benchmarks/grader_audit.py [SECRET] [--workers N] [--save FILE]
"""

from __future__ import annotations

import argparse
import pathlib
import time
from typing import Any

from benchmarks import stored
from dp_online_envs.lab.grading import grade, load_assignment

ROOT = pathlib.Path(__file__).resolve().parents[1]
HERE = ROOT / "examples" / "course"
DODGERS = ROOT / "tests" / "experiments" / "grade_submissions"
SECRET = "measure-the-audit"


def measure(secret: str, workers: int) -> dict[str, Any]:
    """Grades the eight submissions; their scores, audit findings and CPU times, the
    audit's power and the wall time of the whole run."""
    assignment = load_assignment(HERE / "assignment.yaml")
    files = [HERE / "submissions" / "honest.py", HERE / "submissions" / "cheat.py",
             *(DODGERS / f"dodges_{n}.py" for n in ("horizon", "resets", "late_rounds")),
             *(DODGERS / f"forced_{n}.py" for n in ("exp3", "greedy")), DODGERS / "unseen.py"]
    start = time.perf_counter()
    result = grade(assignment, files, secret=secret, backend="local", workers=workers)
    wall = time.perf_counter() - start
    rows = []
    for g in result.grades:
        audit = g.audit or {}
        rows.append({"submission": g.submission, "score": g.score, "total": g.total,
                     "refuted": audit.get("refuted"), "eps_lb": audit.get("eps_lb"),
                     "correct": audit.get("correct"), "guesses": audit.get("guesses"),
                     "verdict": audit.get("verdict"), "power": audit.get("power"),
                     "audit cpu s": g.audit_cpu_seconds})
    return {"grades": rows, "power": result.power, "power text": result.power_text,
            "sandbox": result.sandbox, "wall s": wall}


def _cell(value: Any, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def render(doc: dict[str, Any]) -> str:
    """The markdown block of a stored document of :func:`measure`."""
    data = doc["data"]
    lines = ["| submission | score | audit verdict | eps lower bound | right guesses "
             "| audit CPU (s) |", "|---|---:|---|---:|---:|---:|"]
    powers = []
    for r in data["grades"]:
        guesses = ("-" if r["guesses"] is None else f"{r['correct']} of {r['guesses']}")
        verdict = r.get("verdict") or ("-" if r["refuted"] is None else
                                        "refuted" if r["refuted"] else "not refuted")
        lines.append(f"| `{r['submission']}` | {r['score']:.1f} / {r['total']:g} | "
                     f"{verdict} | {_cell(r['eps_lb'], '.3f')} | {guesses} | "
                     f"{_cell(r['audit cpu s'], '.1f')} |")
        if r.get("power") and verdict != "refuted":
            powers.append(f"- `{r['submission']}`: {verdict}; power on it: {r['power']}.")
    if powers:
        lines += ["", "The power on each learner not refuted:", "", *powers]
    lines += ["", f"Power: the audit {data['power text']}.",
              f"Sandbox: {data['sandbox']}. Wall clock of the whole grading run "
              f"({doc['settings']['workers']} workers): {data['wall s']:.0f} s."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("secret", nargs="?", default=SECRET)
    parser.add_argument("--workers", type=int, default=2)
    stored.add_save_argument(parser)
    args = parser.parse_args(argv)
    run = stored.Measurement("grader-audit", {
        "assignment": "examples/course/assignment.yaml", "workers": args.workers,
        "secret": "the default" if args.secret == SECRET else "given"})
    doc = run.document(measure(args.secret, args.workers))
    stored.save(args.save, doc)
    print(render(doc))


if __name__ == "__main__":
    main()
