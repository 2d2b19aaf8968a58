"""The results directory: atomic files, resuming, and surviving SIGKILL mid-sweep."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from dp_online_envs.lab.experiments import ResultsStore, load_records, run_sweep, stable_view

from .conftest import live_members


def test_rerunning_a_sweep_skips_finished_games(small_sweep, tmp_path):
    first = run_sweep(small_sweep, results=tmp_path, backend="serial", quiet=True)
    assert (first.played, first.reused) == (15, 0)
    files = sorted((tmp_path / "games").glob("*.json"))
    assert [p.stem for p in files] == sorted(r["game_id"] for r in first.records)
    assert json.loads((tmp_path / "sweep.json").read_text())["name"] == "small"
    mtimes = [p.stat().st_mtime_ns for p in files]
    small_sweep["seeds"] = 4  # one more seed: only the new games are played
    second = run_sweep(small_sweep, results=tmp_path, backend="serial", quiet=True)
    assert (second.played, second.reused) == (5, 15)
    assert [p.stat().st_mtime_ns for p in files] == mtimes  # finished files untouched
    assert len(load_records(tmp_path)) == 20


def test_temporary_files_are_ignored_and_dead_writers_cleaned(small_sweep, tmp_path):
    store = ResultsStore(tmp_path)
    store.prepare()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / "games" / f".abc.{dead.pid}.x1.tmp"
    stale.write_text('{"game_id": "abc", "trunc')
    live = tmp_path / "games" / f".def.{os.getpid()}.x2.tmp"
    live.write_text("{")
    assert store.finished() == set() and store.load() == []
    store.prepare()
    assert not stale.exists() and live.exists()


def test_sigkill_mid_sweep_then_resume_equals_an_uninterrupted_run(tmp_path):
    sweep = tmp_path / "kill.yaml"
    sweep.write_text("name: kill\nenvs: [DPFullInfo-Experts-v0]\nagents: [hedge, private-ftrl]\n"
                     "epsilons: [0.5, 1, 2, 4]\nhorizons: [500]\nseeds: 6\n")
    total = 6 + 4 * 6
    killed, reference = tmp_path / "killed", tmp_path / "reference"
    cmd = [sys.executable, "-m", "dp_online_envs.lab.cli", "sweep", str(sweep),
           "--results", str(killed), "--workers", "2", "--quiet"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    games = killed / "games"
    try:
        deadline = time.monotonic() + 60
        while len(list(games.glob("*.json")) if games.is_dir() else []) < 3:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the sweep wrote nothing in 60 s"
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)  # the sweep process only: workers must notice
        proc.wait()
        deadline = time.monotonic() + 15
        while live_members(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        orphans = live_members(proc.pid)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.stderr.close()
    assert orphans == [], "worker processes outlived the killed sweep"

    written = sorted(games.glob("*.json"))
    written_bytes = {p.name: p.read_bytes() for p in written}
    assert 3 <= len(written) < total, "kill the sweep while it runs"
    for path in written:  # nothing written is damaged
        assert json.loads(path.read_text())["game_id"] == path.stem

    # resume in place with the same command, then compare with an uninterrupted run
    done = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{total - len(written)} games played, {len(written)} reused" in done.stdout
    for name, data in written_bytes.items():  # finished games were not played again
        assert (games / name).read_bytes() == data
    run_sweep(sweep, results=reference, backend="serial", quiet=True)

    def view(root):
        return sorted((stable_view(r) for r in load_records(root)), key=lambda r: r["game_id"])

    assert len(view(killed)) == total
    assert view(killed) == view(reference)
    assert {p.name for p in games.iterdir()} == {
        p.name for p in (reference / "games").iterdir()}  # no temporary file left behind
