"""How long ``dp-online --help`` and ``dp-online --version`` take, next to ``import
gymnasium``.

Each round runs, as fresh interpreters, in alternation (so all see the same load):

* ``gymnasium``: ``python -c "import gymnasium"``, the floor of any Gymnasium tool;
* ``dp-online --help``: the console script's entry point,
  ``python -c "import sys; from dp_online_envs.lab.cli import main; sys.exit(main())" --help``;
* ``dp-online --version``: the console script itself (``python -m
  dp_online_envs.lab.cli`` in a checkout never installed), which answers before the
  package's imports (the speed harness's ``cli-version`` case measures the same).

It reports the median CPU time (user + system, of the child process) and wall time of
each, and their ratios to ``gymnasium``; the CPU ratio is the measure (wall time moves
with the load of a shared machine). The targets are CPU ratios of at most 2 for
``--help`` (the command line imports the heavy parts -- grading, the audit, matplotlib,
pandas, torch, the agents -- only in the commands that use them) and 1.2 for
``--version``. Exit status 1 when a CPU ratio is above its limit.

    python benchmarks/cli_startup.py [--rounds 7] [--limit 2] [--version-limit 1.2]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def dp_online_command() -> list[str]:
    """How a user starts ``dp-online``: its console script beside this interpreter, else
    ``python -m dp_online_envs.lab.cli`` (a checkout never installed)."""
    script = pathlib.Path(sys.executable).with_name("dp-online")
    if script.is_file():
        return [sys.executable, str(script)]
    return [sys.executable, "-m", "dp_online_envs.lab.cli"]


COMMANDS = {
    "gymnasium": [sys.executable, "-c", "import gymnasium"],
    "dp-online --help": [sys.executable, "-c", "import sys; from dp_online_envs.lab.cli "
                         "import main; sys.exit(main())", "--help"],
    "dp-online --version": [*dp_online_command(), "--version"],
}


def run_once(cmd: list[str]) -> tuple[float, float]:
    """``(cpu seconds, wall seconds)`` of one run of ``cmd`` (output discarded)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get(
        "PYTHONPATH", "")]).rstrip(os.pathsep)}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err}")
    return usage.ru_utime + usage.ru_stime, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--limit", type=float, default=2.0, help="of --help's CPU ratio")
    parser.add_argument("--version-limit", type=float, default=1.2,
                        help="of --version's CPU ratio")
    args = parser.parse_args()
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
    for cmd in COMMANDS.values():  # one warm-up each: the file cache
        run_once(cmd)
    for _ in range(args.rounds):
        for name, cmd in COMMANDS.items():
            times[name].append(run_once(cmd))
    med = {name: (statistics.median(c for c, _ in t), statistics.median(w for _, w in t))
           for name, t in times.items()}
    print(f"{'command':<21} {'CPU s (median)':>15} {'wall s (median)':>16}   "
          f"({args.rounds} rounds, load average {os.getloadavg()[0]:.2f})")
    for name, (cpu, wall) in med.items():
        print(f"{name:<21} {cpu:>15.3f} {wall:>16.3f}")
    within = True
    for name, limit in (("dp-online --help", args.limit),
                        ("dp-online --version", args.version_limit)):
        cpu_ratio = med[name][0] / med["gymnasium"][0]
        wall_ratio = med[name][1] / med["gymnasium"][1]
        print(f"{name}: CPU {cpu_ratio:.2f}x, wall {wall_ratio:.2f}x of gymnasium "
              f"(limit {limit:g}x on CPU)")
        within = within and cpu_ratio <= limit
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
