"""How fast a ``dp-online sweep`` on local worker processes stops on SIGINT.

A real sweep (``python -m dp_online_envs.lab.cli sweep``) is started in its own
session, and once at least one game is written it gets SIGINT, in one of two ways:

* ``group``: to the whole process group, as a terminal's Ctrl-C does;
* ``main``: to the main process alone, with stdout and stderr going to pipes.

Each try reports the time from the signal to the exit of the main process, its exit
status, whether stderr shows a traceback, and how many processes of the group (the
fork server, workers) are still alive 5 s after the main process exited. A second
SIGINT 0.2 s after the first is sent with ``--double``.

    python benchmarks/interrupt_exit_time.py [--tries 5] [--double] [--backend local]

The aim is an exit within 2 s of Ctrl-C and within a few seconds of a SIGINT
to the main process alone, with no process left behind.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from tests.experiments.conftest import live_members  # noqa: E402  (one /proc scan)

SWEEP = """\
name: interrupt-bench
envs: [DPFullInfo-Experts-v0]
agents: [hedge, private-ftrl]
epsilons: [0.5, 1, 2, 4]
horizons: [4000]
seeds: 12
"""


def one_try(workdir: pathlib.Path, mode: str, double: bool, backend: str = "local") -> dict:
    """Start a sweep, SIGINT it once a game is written; what happened.

    Returns:
        ``seconds`` from the (first) signal to the exit, the exit ``code``, whether
        stderr holds a ``traceback``, how many processes of the group were ``left``
        5 s later, and the last line of ``stderr``; ``seconds`` is ``inf`` (and the
        rest ``None``) when the sweep did not exit within 60 s.
    """
    sweep = workdir / "sweep.yaml"
    sweep.write_text(SWEEP)
    results = pathlib.Path(tempfile.mkdtemp(dir=workdir))
    cmd = [sys.executable, "-m", "dp_online_envs.lab.cli", "sweep", str(sweep),
           "--results", str(results), "--workers", "2", "--quiet", "--backend", backend]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    games = results / "games"
    try:
        while not (games.is_dir() and any(games.glob("*.json"))):
            if proc.poll() is not None:
                raise RuntimeError(proc.stderr.read().decode())
            time.sleep(0.01)
        t0 = time.monotonic()
        send = (lambda: os.killpg(proc.pid, signal.SIGINT)) if mode == "group" else (
            lambda: os.kill(proc.pid, signal.SIGINT))
        send()
        if double:
            time.sleep(0.2)
            if proc.poll() is None:
                send()
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            return {"seconds": float("inf"), "code": None, "traceback": None, "left": None}
        seconds = time.monotonic() - t0
        deadline = time.monotonic() + 5
        while live_members(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        return {"seconds": seconds, "code": proc.returncode,
                "traceback": b"Traceback" in err, "left": len(live_members(proc.pid)),
                "stderr": err.decode(errors="replace").strip().splitlines()[-1:]}
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tries", type=int, default=5)
    ap.add_argument("--double", action="store_true", help="a second SIGINT 0.2 s later")
    ap.add_argument("--backend", default="local", choices=["local", "serial", "dask"])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("group", "main"):
            rows = [one_try(pathlib.Path(tmp), mode, args.double, args.backend)
                    for _ in range(args.tries)]
            times = [r["seconds"] for r in rows]
            print(f"{args.backend}: SIGINT to {mode:<5}{' (twice)' if args.double else ''}: "
                  f"median {statistics.median(times):.2f} s, max {max(times):.2f} s over "
                  f"{len(rows)} tries; "
                  f"exit codes {sorted({r['code'] for r in rows}, key=str)}, "
                  f"{sum(bool(r['traceback']) for r in rows)} with a traceback, "
                  f"{sum(r['left'] or 0 for r in rows)} processes left behind")
            for r in rows:
                print(f"  {r['seconds']:6.2f} s  exit {r['code']}  traceback {r['traceback']}  "
                      f"left behind {r['left']}  {r.get('stderr')}")
    print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
