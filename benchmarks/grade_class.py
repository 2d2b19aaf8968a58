"""Wall time of grading a class of 30 submissions on the course assignment as shipped.

Builds a class in a temporary directory from the course's samples and the grader's test
submissions (by default 12 honest, 8 noise-free cheats, 6 that crash in round 3 and 4
that dodge an audit unlike the graded games), grades it with ``dp-online grade
--workers N`` on ``examples/course/assignment.yaml`` (T = 16384, 5 hidden seeds, 16 audit
games), sandboxed, and prints the wall time with the load average, the CPU time (this
process and its finished children, plus every submission's grading CPU as its report
counts it, the sandboxed processes included: ``RUSAGE_CHILDREN`` alone misses them),
the time of a rerun that keeps every grade, and how many submissions were refuted or
failed; then, per kind of submission, the sandboxed processes and rounds a submission
plays (one process per game, one for the probe) and its mean grading CPU, in all and
per round::

    python benchmarks/grade_class.py [--workers 2] [--honest 12 --cheats 8 --crashes 6 \\
        --dodgers 4] [--secret S]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import resource
import shutil
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from dp_online_envs.lab.grading import grade, load_assignment  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
COURSE = ROOT / "examples" / "course"
TESTS = ROOT / "tests" / "experiments" / "grade_submissions"
KINDS = {"honest": COURSE / "submissions" / "honest.py",
         "cheats": COURSE / "submissions" / "cheat.py",
         "crashes": TESTS / "crashes.py",
         "dodgers": TESTS / "dodges_late_rounds.py"}


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children."""
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def per_kind(assignment: Any, grades: list[Any]) -> None:
    """Per kind of submission (the file's stem before ``_``): the sandboxed processes and
    rounds of one (a probe, then a process per graded and per audit game, the twin's
    included; a failed game is one process and no rounds counted), its mean grading CPU
    (the grader's and its sandboxes'), of which the audit, and that CPU per round."""
    kinds: dict[str, list[Any]] = {}
    for g in grades:
        kinds.setdefault(g.submission.rsplit("_", 1)[0], []).append(g)
    for kind, gs in kinds.items():
        g = gs[0]
        # the audit's games per setting: twice over when its noise-free twin was played
        audit = 0 if g.audit is None else assignment.audit.settings.games * (
            2 if g.audit.get("twin") else 1)
        processes = 1 + sum(s.games + audit for s in g.settings)
        rounds = sum((s.games - len(s.failed) + audit) * s.horizon for s in g.settings)
        cpu = sum(x.cpu_seconds or 0.0 for x in gs) / len(gs)
        audit = sum(x.audit_cpu_seconds or 0.0 for x in gs) / len(gs)
        print(f"  {kind} ({len(gs)}): {processes} sandboxed processes, {rounds} rounds "
              f"each; {cpu:.1f} s CPU each ({audit:.1f} s of it the audit)"
              + (f", {1e6 * cpu / rounds:.0f} us per round with its share of start-ups"
                 if rounds else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--secret", default="a class benchmark")
    for kind, n in (("honest", 12), ("cheats", 8), ("crashes", 6), ("dodgers", 4)):
        parser.add_argument(f"--{kind}", type=int, default=n)
    args = parser.parse_args()
    assignment = load_assignment(COURSE / "assignment.yaml")
    work = pathlib.Path(tempfile.mkdtemp(prefix="grade-class-"))
    try:
        files = []
        for kind, source in KINDS.items():
            for i in range(getattr(args, kind)):
                path = work / "class" / f"{kind}_{i:02d}.py"
                path.parent.mkdir(exist_ok=True)
                shutil.copyfile(source, path)
                files.append(path)
        out = work / "grades"
        load = os.getloadavg()[0]
        times = []
        for _ in range(2):  # the grading, then a rerun that keeps every grade
            wall, cpu = time.perf_counter(), cpu_seconds()
            result = grade(assignment, files, out_dir=out, secret=args.secret,
                           backend="local", workers=args.workers,
                           progress=lambda line: print(line, flush=True))
            times.append((time.perf_counter() - wall, cpu_seconds() - cpu))
        graded_cpu = sum(g.cpu_seconds or 0.0 for g in result.grades)  # of the first run
        refuted = sum(bool((g.audit or {}).get("refuted")) for g in result.grades)
        failed = sum(any(s.failed for s in g.settings) or g.learner is None
                     for g in result.grades)
        per_kind(assignment, result.grades)
        print(f"{len(files)} submissions, --workers {args.workers}, {os.cpu_count()} CPUs: "
              f"graded in {times[0][0]:.0f} s wall ({times[0][1]:.0f} s CPU of this process "
              f"and its reaped children, {graded_cpu:.0f} s CPU of the submissions' grading "
              f"with their sandboxes; the two share the workers' own CPU, so between "
              f"{max(times[0][1], graded_cpu) / times[0][0]:.2f} and "
              f"{(times[0][1] + graded_cpu) / times[0][0]:.2f} cores busy); a rerun "
              f"keeping every grade {times[1][0]:.1f} s; {refuted} refuted, {failed} with "
              f"failed games; mean score "
              f"{sum(g.score for g in result.grades) / len(files):.1f}; load average "
              f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
