"""Run the speed harness and compare its ratios with the stored baseline.

Usage (from the checkout's root; ``pip install -e ".[bench]"``)::

    python -m benchmarks.speed                      # every case, compared with baseline.json
    python -m benchmarks.speed -k "counter or env"  # some cases (a pytest -k expression)
    python -m benchmarks.speed --rounds 3           # fewer timed rounds (noisier)
    python -m benchmarks.speed --json run.json      # also keep pytest-benchmark's report
    python -m benchmarks.speed --compare run.json   # compare a kept report, run nothing
    python -m benchmarks.speed --save-baseline      # run every case, write baseline.json

Prints a table (case, stored ratio, fresh ratio, fresh / stored, the case's limit, the
verdict) and the load average before and after the run. A case that looks slower than
its limit is run again (``--reruns``, default 1) before the verdict, and keeps the best
of its ratios: a moment of load on a shared machine does not fail the run, a regression
is slower every time. Exit status 1 when a case is still more than its threshold times
slower, relative to its reference, than stored.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from benchmarks.speed.cases import CASES
from benchmarks.speed.compare import (
    BASELINE,
    compare,
    load_baseline,
    ratios_of_run,
    regressions,
    table,
)
from benchmarks.stored import release, versions

ROOT = Path(__file__).resolve().parents[2]
BENCH = Path(__file__).with_name("bench_speed.py")
COMMAND = "python -m benchmarks.speed"


def run_benchmarks(report: Path, rounds: int, select: str | None) -> tuple[float, float]:
    """Runs ``bench_speed.py`` in a fresh interpreter, its report written to ``report``;
    returns the 1-minute load average before and after.

    Raises:
        SystemExit: When pytest-benchmark is not installed, or pytest fails (its status).
    """
    if importlib.util.find_spec("pytest_benchmark") is None:
        raise SystemExit('the speed harness needs pytest-benchmark: pip install -e ".[bench]"')
    argv = [sys.executable, "-m", "pytest", str(BENCH.relative_to(ROOT)), "-p", "no:xdist",
            "-p", "no:cacheprovider", "-o", "addopts=", "-q",
            "--benchmark-columns=median,iqr,rounds",
            "--benchmark-sort=name", f"--benchmark-json={report}", f"--speed-rounds={rounds}"]
    if select:
        argv += ["-k", select]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    before = os.getloadavg()[0]
    status = subprocess.run(argv, cwd=ROOT, env=env, check=False).returncode
    after = os.getloadavg()[0]
    if status != 0:
        raise SystemExit(f"the benchmarks failed (pytest exit status {status})")
    return before, after


def select_cases(names: list[str]) -> str:
    """A pytest ``-k`` expression selecting exactly the cases ``names`` (their test ids
    ``test_speed[NAME]``, so ``counter-tree`` does not also select a longer name)."""
    return " or ".join(f"test_speed[{name}]" for name in names)


def confirm_slower(fresh: Mapping[str, float], baseline: Mapping[str, Mapping[str, float]],
                   rerun: Callable[[list[str]], Mapping[str, float]], reruns: int = 1
                   ) -> tuple[dict[str, float], list[str]]:
    """The ratios after rerunning the cases that look ``SLOWER``.

    Each case slower than its limit in ``fresh`` is run again (``rerun(names)`` returns
    their new ratios), up to ``reruns`` times while any still looks slower, and keeps
    the lowest of its ratios.

    Returns:
        The ratios (``fresh`` with the confirmed ones) and a line per rerun case.
    """
    ratios = dict(fresh)
    notes: list[str] = []
    for _ in range(reruns):
        suspects = [row.name for row in regressions(compare(ratios, baseline))]
        if not suspects:
            break
        again = rerun(suspects)
        for name in suspects:
            before = ratios[name]
            ratios[name] = min(before, again[name])
            notes.append(f"{name}: {before:.3f} looked slower, rerun {again[name]:.3f}")
    return ratios, notes


def machine(run: dict[str, Any]) -> dict[str, Any]:
    """The machine of a pytest-benchmark report, without its host name."""
    info = run.get("machine_info", {})
    cpu = info.get("cpu", {})
    return {"cpu": cpu.get("brand_raw"), "logical cpus": cpu.get("count"),
            "system": f"{info.get('system')} {info.get('release')} {info.get('machine')}",
            "versions": versions()}


def baseline_document(run: dict[str, Any], load: tuple[float, float], rounds: int
                      ) -> dict[str, Any]:
    """The baseline file's content from a report of every case."""
    benches = {b["extra_info"]["case"]: b["extra_info"] for b in run["benchmarks"]}

    def us(seconds: list[float], units: int) -> float:
        return round(sorted(seconds)[len(seconds) // 2] / units * 1e6, 4)

    return {
        "about": ("Ratios of the speed harness: the product's time per unit over its "
                  f"reference's, measured in the same run. Written by `{COMMAND} "
                  "--save-baseline`; compared by `" + COMMAND + "`. The absolute times "
                  "(us per unit, median) are for information only."),
        "release": release(),
        "date": datetime.date.today().isoformat(),
        "machine": machine(run),
        "load average (1 min) before, after": [round(x, 2) for x in load],
        "rounds": rounds,
        "size": "full",
        "benchmarks": {name: {"ratio": round(info["ratio"], 4),
                              "threshold": CASES[name].threshold,
                              "product": info["product"], "reference": info["reference"],
                              "unit": info["unit"],
                              "product us": us(info["product_s"], info["units"]),
                              "reference us": us(info["reference_s"], info["units"])}
                       for name, info in benches.items()},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", dest="select", default=None, help="run the cases a pytest -k selects")
    ap.add_argument("--rounds", type=int, default=7, help="timed rounds per side (default 7)")
    ap.add_argument("--json", type=Path, default=None, help="keep pytest-benchmark's report here")
    ap.add_argument("--compare", type=Path, default=None, metavar="REPORT",
                    help="compare a kept report with the baseline; run nothing")
    ap.add_argument("--baseline", type=Path, default=BASELINE, help="the baseline file")
    ap.add_argument("--save-baseline", action="store_true",
                    help="write the baseline file from this run (every case)")
    ap.add_argument("--reruns", type=int, default=1,
                    help="runs again of a case that looks slower, before the verdict "
                         "(default 1; 0: none)")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds={args.rounds} rejected: expected at least 1")
    if args.reruns < 0:
        ap.error(f"--reruns={args.reruns} rejected: expected at least 0")
    if args.save_baseline and (args.select or args.compare):
        ap.error("--save-baseline writes the baseline from a fresh run of every case: "
                 "drop -k / --compare")
    load = None
    if args.compare is not None:
        run = json.loads(args.compare.read_text())
    else:
        with tempfile.TemporaryDirectory() as tmp:
            report = args.json or Path(tmp) / "speed.json"
            load = run_benchmarks(report, args.rounds, args.select)
            run = json.loads(report.read_text())
    fresh = ratios_of_run(run)
    if args.save_baseline:
        doc = baseline_document(run, load, args.rounds)
        args.baseline.write_text(json.dumps(doc, indent=2) + "\n")
        print(f"wrote {args.baseline}: {len(doc['benchmarks'])} cases")
    baseline = load_baseline(args.baseline)
    notes: list[str] = []
    if args.compare is None and not args.save_baseline:

        def rerun(names: list[str]) -> dict[str, float]:
            with tempfile.TemporaryDirectory() as tmp:
                report = Path(tmp) / "rerun.json"
                run_benchmarks(report, args.rounds, select_cases(names))
                return ratios_of_run(json.loads(report.read_text()))

        fresh, notes = confirm_slower(fresh, baseline["benchmarks"], rerun, args.reruns)
    rows = compare(fresh, baseline["benchmarks"])
    print(f"\nSpeed ratios (product time / reference time per unit; lower is better), "
          f"against {args.baseline.name} ({baseline.get('release')}, {baseline.get('date')}, "
          f"{baseline.get('machine', {}).get('cpu')})")
    print(table(rows))
    for note in notes:
        print(f"rerun {note}")
    if load is not None:
        print(f"load average (1 min): {load[0]:.2f} before, {load[1]:.2f} after")
    slower = regressions(rows)
    if slower:
        print(f"{len(slower)} case(s) slower than their limit: "
              f"{', '.join(r.name for r in slower)}")
    return 1 if slower else 0


if __name__ == "__main__":
    raise SystemExit(main())
