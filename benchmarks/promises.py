"""The time promises of the README and the examples, measured.

Every time the README or an example states is a case here (:data:`PROMISES`): the job
it describes, run as a user runs it, timed on the CPU clock (this process and its
waited-for children: ``resource.getrusage``), which the other jobs of a shared machine
do not inflate the way they inflate the wall clock. The wall time a user waits on an
idle machine is the CPU time divided by the cores the job keeps busy (``cores``: 2 for a
sweep on the default local backend of a 2-core machine, whose 2 workers play 1.96x the
games per second of one, ``benchmarks/sweep_throughput.py``; 1 for a single process).

    python -m benchmarks.promises                 # every case
    python -m benchmarks.promises main-job        # some
    python -m benchmarks.promises --json out.json

Each case prints the promise, the CPU seconds, the wall seconds of this run (and the
load average around it), the idle-machine estimate ``cpu / cores`` and a verdict:
``kept`` when the estimate is within the promise's bound (``seconds``), else ``BROKEN``
(exit status 1). The figures written in the README, the examples and
``docs/guides/performance.md`` come from a run of this script.

The sweep of ``main-job`` is played serially in this process (``backend="serial"``,
so that every game's CPU time is counted in this process), into a temporary results
directory; the records do not depend on the backend.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

ROOT = pathlib.Path(__file__).resolve().parents[1]


@dataclasses.dataclass(frozen=True)
class Promise:
    """A time stated to users, and the job it is stated for.

    Attributes:
        name: The case's name.
        where: The files that state it (paths from the repository's root).
        text: What they say (each of them holds this text: ``tests/test_promises.py``).
        seconds: The wall time it allows on an idle machine.
        cores: Cores the job keeps busy there (the idle-machine wall time is
            ``cpu / cores``).
        job: Runs the job (in a temporary directory, the current directory).
    """

    name: str
    where: tuple[str, ...]
    text: str
    seconds: float
    cores: float
    job: Callable[[], None]


def _main_job() -> None:
    """The README's main job: the price-of-privacy sweep, then its report (which plays
    the reference agent's games the sweep lacks)."""
    from dp_online_envs.lab.experiments import run_sweep
    from dp_online_envs.lab.experiments.report import write_report

    sweep = ROOT / "examples" / "sweeps" / "price_of_privacy.yaml"
    report = run_sweep(sweep, results="results", backend="serial", quiet=True)
    assert report.ok and report.played == 594, (report.played, report.failures[:1])
    write_report("results", "report.html", backend="serial", quiet=True)


def _sb3_ppo() -> None:
    """``python examples/sb3_ppo.py`` with its defaults, in a child process as a user
    runs it (its interpreter start, imports and the comparison games' local workers
    counted: the example waits for them)."""
    subprocess.run([sys.executable, str(ROOT / "examples" / "sb3_ppo.py")], check=True,
                   stdout=subprocess.DEVNULL)


PROMISES = {p.name: p for p in (
    Promise("main-job", ("README.md", "docs/experiments.md", "docs/getting-started.md",
                         "examples/sweeps/price_of_privacy.yaml"),
            "a minute and a half on two idle cores", 100.0, 2.0, _main_job),
    Promise("sb3-ppo", ("examples/sb3_ppo.py", "docs/experiments.md"),
            "a minute and a half on one core", 100.0, 1.0, _sb3_ppo),
)}


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def measure(promise: Promise) -> dict:
    """Run one case in a fresh temporary directory; its figures."""
    cwd = os.getcwd()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            cpu, wall = _cpu(), time.perf_counter()
            promise.job()
            cpu, wall = _cpu() - cpu, time.perf_counter() - wall
        finally:
            os.chdir(cwd)
    idle = cpu / promise.cores
    return {"case": promise.name, "where": list(promise.where), "promise": promise.text,
            "bound_s": promise.seconds, "cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
            "cores": promise.cores, "idle_estimate_s": round(idle, 3),
            "load_before": load_before, "load_after": os.getloadavg()[0],
            "verdict": "kept" if idle <= promise.seconds else "BROKEN"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", metavar="CASE",
                        help=f"cases to run (default all: {', '.join(PROMISES)})")
    parser.add_argument("--json", metavar="FILE", help="also write the figures here")
    args = parser.parse_args(argv)
    unknown = [c for c in args.cases if c not in PROMISES]
    if unknown:
        parser.error(f"unknown case(s) {unknown}; valid: {list(PROMISES)}")
    rows = []
    for name in args.cases or list(PROMISES):
        row = measure(PROMISES[name])
        rows.append(row)
        print(f"{row['case']:<9} {row['verdict']:<6} cpu {row['cpu_s']:7.1f} s  idle estimate "
              f"{row['idle_estimate_s']:6.1f} s (bound {row['bound_s']:.0f} s, "
              f"{row['cores']:g} cores)  wall here {row['wall_s']:.1f} s at load "
              f"{row['load_before']:.1f}-{row['load_after']:.1f}  [{row['promise']}]",
              flush=True)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(
            {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
             "python": platform.python_version(), "cases": rows}, indent=2))
    return 1 if any(r["verdict"] != "kept" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
