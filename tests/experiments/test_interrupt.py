"""Ctrl-C and SIGINT stop a real ``dp-online sweep`` on local workers cleanly.

Each test starts the sweep in its own session (so its process group holds the sweep,
the fork server and the workers), waits for the first finished game, and sends SIGINT
either to the whole group (what a terminal's Ctrl-C does) or to the main process alone
with its output going to pipes. The sweep must exit with status 130, print no
traceback, leave no process of its group alive, and keep every finished game; running
it again plays only the missing games. Timeouts are generous (a loaded machine); the
time to exit itself is measured by ``benchmarks/interrupt_exit_time.py``. Workers of a
sweep killed outright exit on their own, even while the dead sweep is an unreaped
zombie (``os.kill(pid, 0)`` still succeeds then; ``os.getppid()`` changes).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dp_online_envs.lab.experiments import run_sweep

from .conftest import live_members

#: 9 games of about 0.1 s each (more on a busy machine).
SWEEP = ("name: interrupt\nenvs: [DPFullInfo-Experts-v0]\nagents: [hedge, private-ftrl]\n"
         "epsilons: [1, 4]\nhorizons: [2000]\nseeds: 3\n")
TOTAL = 3 + 2 * 3
EXIT_TIMEOUT = 20.0


def _sweep_cmd(sweep: Path, results: Path, backend: str = "local") -> list[str]:
    return [sys.executable, "-m", "dp_online_envs.lab.cli", "sweep", str(sweep),
            "--results", str(results), "--workers", "2", "--quiet", "--backend", backend]


def _as_from_a_shell() -> None:
    """The sweep starts with SIGINT's default disposition, as a shell starts a command:
    a test process may hold SIGINT ignored (an earlier test's interrupted command in the
    same worker), and an ignored disposition is inherited across ``exec``."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _finished(results: Path) -> list[Path]:
    games = results / "games"
    return sorted(games.glob("*.json")) if games.is_dir() else []


def _start(tmp_path: Path, backend: str = "local") -> tuple[subprocess.Popen, Path]:
    """Start the sweep in its own session and wait for its first game; it and its results."""
    sweep, results = tmp_path / "interrupt.yaml", tmp_path / "results"
    sweep.write_text(SWEEP)
    proc = subprocess.Popen(_sweep_cmd(sweep, results, backend), start_new_session=True,
                            preexec_fn=_as_from_a_shell, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not _finished(results):
        if proc.poll() is not None or time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"the sweep wrote nothing (exit {proc.poll()}):\n{proc.communicate()[1]}")
        time.sleep(0.005)
    return proc, results


def _wait_for_no_members(pgid: int, seconds: float = 5.0) -> list[int]:
    """Poll until no live process is left in the group; those still alive after ``seconds``."""
    deadline = time.monotonic() + seconds
    while live_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return live_members(pgid)


def _sigint_and_wait(proc: subprocess.Popen, *, group: bool, twice: bool,
                     gap: float) -> tuple[str, list[int]]:
    """SIGINT the sweep (its group, or its main process alone), again after ``gap``
    seconds if ``twice``; its stderr and the processes of its group still alive after
    it exited (the group is killed in any case)."""

    def sigint() -> None:
        with contextlib.suppress(ProcessLookupError):
            if group:
                os.killpg(proc.pid, signal.SIGINT)
            else:
                os.kill(proc.pid, signal.SIGINT)

    try:
        sigint()
        if twice:
            time.sleep(gap)
            sigint()
        try:
            _, err = proc.communicate(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the sweep did not exit within {EXIT_TIMEOUT} s of SIGINT")
        return err, _wait_for_no_members(proc.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _interrupt(tmp_path: Path, *, group: bool, twice: bool = False,
               backend: str = "local") -> tuple[Path, str]:
    """Run the sweep, SIGINT it after its first game; its results dir and stderr."""
    proc, results = _start(tmp_path, backend)
    err, left = _sigint_and_wait(proc, group=group, twice=twice, gap=0.1)
    assert left == [], "worker processes outlived the interrupted sweep"
    assert proc.returncode == 130, err
    # Dask's own workers may log a heartbeat error (with its traceback) when the local
    # cluster's scheduler closes first; what must never appear is a KeyboardInterrupt.
    assert ("KeyboardInterrupt" if backend == "dask" else "Traceback") not in err, err
    written = _finished(results)
    assert 1 <= len(written) < TOTAL, "interrupt the sweep while it runs"
    assert err.strip().splitlines()[-1] == (
        f"interrupted: {len(written)} of {TOTAL} games finished, results kept in {results}; "
        "re-run to resume")
    for path in written:  # finished records are complete
        assert json.loads(path.read_text())["game_id"] == path.stem
    assert not list((results / "games").glob(".*.tmp")), "a temporary file was left behind"
    return results, err


def test_ctrl_c_in_a_terminal_keeps_finished_games_and_resume_plays_the_rest(tmp_path):
    results, _ = _interrupt(tmp_path, group=True)
    kept = {p.name: p.read_bytes() for p in _finished(results)}
    resumed = run_sweep(tmp_path / "interrupt.yaml", results=results, backend="serial",
                        quiet=True)
    assert (resumed.played, resumed.reused) == (TOTAL - len(kept), len(kept))
    assert resumed.ok and len(_finished(results)) == TOTAL
    for name, data in kept.items():  # finished games were not played again
        assert (results / "games" / name).read_bytes() == data


def test_sigint_to_the_main_process_alone_with_piped_output(tmp_path):
    _interrupt(tmp_path, group=False)


def test_a_second_ctrl_c_is_ignored_silently(tmp_path):
    _interrupt(tmp_path, group=True, twice=True)


@pytest.mark.parametrize("backend", ["serial", "dask"])
def test_ctrl_c_on_the_other_backends(tmp_path, backend):
    _interrupt(tmp_path, group=True, backend=backend)


def test_workers_of_a_killed_sweep_exit_while_it_is_an_unreaped_zombie(tmp_path):
    proc, _ = _start(tmp_path)
    try:
        os.kill(proc.pid, signal.SIGKILL)  # and do not reap it yet
        left = _wait_for_no_members(proc.pid, seconds=10)
        assert Path(f"/proc/{proc.pid}").exists(), "the dead sweep was reaped too early"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert left == [], "worker processes outlived the killed sweep"


def _loaded(pid: int, library: str) -> bool:
    """Whether process ``pid`` has mapped a file whose path contains ``library``."""
    try:
        return library in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


#: When the SIGINT is sent: a condition on (process, results directory), checked every
#: few milliseconds from the start.
MOMENTS = {
    # importing numpy: the command line has not parsed its arguments yet
    "importing": lambda proc, results: _loaded(proc.pid, "numpy"),
    # the results directory exists, no worker yet
    "before workers": lambda proc, results: (results / "games").is_dir(),
    # the fork server or a worker exists, no game finished
    "workers starting": lambda proc, results: len(live_members(proc.pid)) >= 2,
    # a game finished, others are being played
    "mid-game": lambda proc, results: bool(_finished(results)),
}


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("moment, twice", [("importing", False), ("importing", True),
                                           ("before workers", True), ("workers starting", False),
                                           ("workers starting", True), ("mid-game", True)])
def test_sigint_to_the_main_process_at_any_moment_prints_no_traceback(tmp_path, moment, twice):
    """SIGINT (once, or twice 50 ms apart) to the main process alone, output to pipes, at
    each stage of a sweep's life: exit 130 with one ``interrupted`` line, no traceback
    (not even from a worker the fork server was starting), no process left, and every
    record written is complete."""
    sweep, results = tmp_path / "interrupt.yaml", tmp_path / "results"
    sweep.write_text(SWEEP)
    proc = subprocess.Popen(_sweep_cmd(sweep, results), start_new_session=True,
                            preexec_fn=_as_from_a_shell, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not MOMENTS[moment](proc, results):
        if proc.poll() is not None or time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"the sweep never reached {moment} (exit {proc.poll()}): "
                        f"{proc.communicate()[1]}")
        time.sleep(0.001)
    err, left = _sigint_and_wait(proc, group=False, twice=twice, gap=0.05)
    assert "Traceback" not in err and "Error" not in err, err
    assert proc.returncode == 130, err
    assert left == [], "processes outlived the interrupted sweep"
    [line] = err.strip().splitlines()
    assert line.startswith("interrupted"), line
    for path in _finished(results):
        assert json.loads(path.read_text())["game_id"] == path.stem
