"""The grader's privacy audit at the course assignment's default settings.

Grades the course's sample submissions (honest, a noise-free cheat) and the three
dodging test submissions on ``examples/course/assignment.yaml`` as it is (T = 16384, 5
hidden seeds, 16 audit games), sandboxed, and prints, per submission, the audit's
finding and its CPU time (the grader's and the learner's processes), then the audit's
power against noise cuts of the reference::

    python benchmarks/grader_audit.py [SECRET] [--workers N]
"""

from __future__ import annotations

import argparse
import pathlib
import time

from dp_online_envs.lab.grading import grade, load_assignment

ROOT = pathlib.Path(__file__).resolve().parents[1]
HERE = ROOT / "examples" / "course"
DODGERS = ROOT / "tests" / "experiments" / "grade_submissions"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("secret", nargs="?", default="measure-the-audit")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    assignment = load_assignment(HERE / "assignment.yaml")
    files = [HERE / "submissions" / "honest.py", HERE / "submissions" / "cheat.py",
             *(DODGERS / f"dodges_{n}.py" for n in ("horizon", "resets", "late_rounds"))]
    start = time.perf_counter()
    result = grade(assignment, files, secret=args.secret, backend="local",
                   workers=args.workers)
    for g in result.grades:
        audit = g.audit or {}
        print(f"{g.submission:20s} score {g.score:5.1f}  refuted={audit.get('refuted')}  "
              f"eps_lb={audit.get('eps_lb')}  right {audit.get('correct')} of "
              f"{audit.get('guesses')}  audit CPU {g.audit_cpu_seconds:.1f} s")
    print(f"power: {result.power_text}")
    print(f"wall clock of the whole grading run: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
