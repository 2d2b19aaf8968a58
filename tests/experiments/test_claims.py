"""Claims: two sweeps on one results directory never play the same game twice."""

from __future__ import annotations

import collections
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from dp_online_envs.lab.experiments import ResultsStore, parse_sweep, run_games, stable_view
from dp_online_envs.lab.experiments import store as store_module

CLI = [sys.executable, "-m", "dp_online_envs.lab.cli"]

#: Hedge that says "at the gate" on stderr and waits for a gate file before its first
#: action, and logs each game it plays.
GATED = textwrap.dedent('''
    import os, time
    from agents.full_info.hedge import Hedge

    class GatedHedge(Hedge):
        def __init__(self, *args, seed=None, **kwargs):
            self._game_seed = seed
            self._started = False
            super().__init__(*args, seed=seed, **kwargs)

        def act(self):
            if not self._started:
                self._started = True
                os.write(2, b"at the gate\\n")
                while not os.path.exists(os.environ["GATE"]):
                    time.sleep(0.02)
                fd = os.open(os.environ["PLAYS"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
                os.write(fd, f"{self._game_seed}\\n".encode())
                os.close(fd)
            return super().act()
''')


def _sweep_file(path, seeds):
    path.write_text(json.dumps({"name": path.stem, "envs": ["DPFullInfo-Experts-v0"],
                                "agents": ["gated:GatedHedge"], "horizons": [50, 80],
                                "seeds": seeds}))
    return path


def _wait_until(condition, what, proc, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, f"the sweep ended before {what}"
        assert time.monotonic() < deadline, f"no {what} in {timeout} s"
        time.sleep(0.02)


def _read_until(proc, marker, what):
    """Read ``proc``'s stderr line by line until a line holds ``marker`` (the event
    waited for); return the lines read. Blocks on the pipe, with no time limit: it ends
    at the marker or when the process closes its stderr (it ended: the test fails)."""
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if marker in line:
            return lines
    raise AssertionError(f"the sweep ended before {what}: {''.join(lines)}")


def test_two_concurrent_sweeps_play_every_game_exactly_once(tmp_path):
    """Sweep A claims its 8 games and is held at the gate; sweep B, started then, finds
    them claimed, says so, and waits for them. Every wait is on an event (a line on a
    sweep's stderr, a process's exit), none on a fixed time, so a loaded machine only
    makes it slower. A watchdog kills both sweeps after 15 minutes so a hang fails."""
    (tmp_path / "gated.py").write_text(GATED)
    gate, plays, results = tmp_path / "gate", tmp_path / "plays.log", tmp_path / "results"
    env = {**os.environ, "GATE": str(gate), "PLAYS": str(plays),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    first = _sweep_file(tmp_path / "first.json", 4)   # 8 games
    second = _sweep_file(tmp_path / "second.json", 6)  # the same 8 and 4 more
    cmd = CLI + ["sweep", "--results", str(results), "--backend", "serial"]
    procs = []
    watchdog = threading.Timer(900, lambda: [p.kill() for p in procs])
    watchdog.start()
    try:
        a = subprocess.Popen(cmd + [str(first)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        procs.append(a)
        # a sweep claims its games before it plays any: at the gate, all 8 are claimed
        err_a = _read_until(a, "at the gate", "its first game")
        assert len(list((results / "claims").glob("*.claim"))) == 8
        b = subprocess.Popen(cmd + [str(second)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        procs.append(b)
        err_b = _read_until(b, "being played by another sweep", "its notice")
        assert not plays.exists()  # both sweeps are held at the gate
        gate.write_text("")
        out_a, rest_a = a.communicate()
        out_b, rest_b = b.communicate()
    finally:
        watchdog.cancel()
        for proc in procs:
            proc.kill()
            proc.wait()
    err_a, err_b = "".join(err_a) + rest_a, "".join(err_b) + rest_b
    assert a.returncode == 0 and b.returncode == 0, err_a + err_b
    assert "8 games played, 0 reused, 0 failed" in out_a
    assert "4 games played, 8 reused, 0 failed" in out_b
    assert (f"8 game(s) are being played by another sweep (pid {a.pid} on "
            f"{socket.gethostname()})") in err_b
    records = ResultsStore(results).load()
    counts = collections.Counter(plays.read_text().split())
    assert len(records) == 12 and set(counts.values()) == {1}  # each game played once
    assert set(counts) == {str(r["agent_seed"]) for r in records}
    assert list((results / "claims").glob("*.claim")) == []  # every claim released


def _write_claim(store, game_id, pid, host=None, **extra):
    store.claims_dir.mkdir(parents=True, exist_ok=True)
    path = store.claims_dir / f"{game_id}.claim"
    path.write_text(json.dumps({"pid": pid, "host": host or socket.gethostname(),
                                "since": time.time(), **extra}))
    return path


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture
def specs():
    return parse_sweep({"envs": ["DPFullInfo-Experts-v0"], "agents": ["hedge"],
                        "horizons": [60], "seeds": 3}).games


def test_a_stale_claim_is_taken_over(tmp_path, specs):
    store = ResultsStore(tmp_path)
    claim = _write_claim(store, specs[0].game_id, _dead_pid())
    report = run_games(specs, results=tmp_path, backend="serial")
    assert (report.played, report.reused) == (3, 0)
    assert store.finished() == {s.game_id for s in specs}
    assert not claim.exists()


def test_a_claim_from_another_host_or_a_live_process_is_respected(tmp_path, specs):
    store = ResultsStore(tmp_path)
    elsewhere = _write_claim(store, specs[0].game_id, _dead_pid(), host="elsewhere.invalid")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = _write_claim(store, specs[1].game_id, sleeper.pid)
        assert not store.claim(specs[0].game_id) and not store.claim(specs[1].game_id)
        assert store.claimant(specs[1].game_id)["pid"] == sleeper.pid
        assert store.claim(specs[2].game_id)  # free: ours now
        assert not store.claim(specs[2].game_id)  # held (by us)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert store.claimant(specs[1].game_id) is None  # its process is gone: stale
    assert store.claim(specs[1].game_id)
    assert json.loads(live.read_text())["pid"] == os.getpid()  # taken over
    assert json.loads(elsewhere.read_text())["host"] == "elsewhere.invalid"  # left alone


def test_a_sweep_waits_for_games_another_sweep_plays(tmp_path, specs, monkeypatch):
    """The other sweep is simulated: a live process's claim, then the record it writes."""
    monkeypatch.setattr(store_module, "CLAIM_POLL_SECONDS", 0.01)
    reference = {r["game_id"]: r for r in run_games(specs, backend="serial").records}
    store = ResultsStore(tmp_path)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        claim = _write_claim(store, specs[0].game_id, sleeper.pid)
        result = {}
        thread = threading.Thread(
            target=lambda: result.update(report=run_games(specs, results=tmp_path,
                                                          backend="serial")))
        thread.start()
        others = {s.game_id for s in specs[1:]}
        deadline = time.monotonic() + 60
        while store.finished() != others:
            assert thread.is_alive() and time.monotonic() < deadline
            time.sleep(0.01)
        assert thread.is_alive()  # its own games are done: it waits for the claimed one
        store.write(reference[specs[0].game_id])  # the other sweep finishes its game
        written = store.path(specs[0].game_id).read_bytes()
        claim.unlink()
        thread.join(60)
    finally:
        sleeper.kill()
        sleeper.wait()
    report = result["report"]
    assert (report.played, report.reused) == (2, 1)
    assert store.path(specs[0].game_id).read_bytes() == written  # not played again
    assert [stable_view(r) for r in report.records] == [
        stable_view(reference[s.game_id]) for s in specs]


def test_a_game_released_without_a_record_is_played_by_the_waiting_sweep(
        tmp_path, specs, monkeypatch):
    monkeypatch.setattr(store_module, "CLAIM_POLL_SECONDS", 0.01)
    store = ResultsStore(tmp_path)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    claim = _write_claim(store, specs[0].game_id, sleeper.pid)
    result = {}
    thread = threading.Thread(
        target=lambda: result.update(report=run_games(specs, results=tmp_path,
                                                      backend="serial")))
    try:
        thread.start()
        deadline = time.monotonic() + 60
        while len(store.finished()) < 2:
            assert thread.is_alive() and time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        sleeper.kill()  # the other sweep dies: its claim is stale
        sleeper.wait()
    thread.join(60)
    assert (result["report"].played, result["report"].reused) == (3, 0)
    assert not claim.exists() and store.finished() == {s.game_id for s in specs}


@pytest.mark.skipif(not os.path.exists(f"/proc/{os.getpid()}/stat"),
                    reason="process start times come from /proc (Linux)")
def test_a_claim_whose_pid_was_reused_is_stale(tmp_path, specs):
    """The claimant died and its pid now belongs to another process (simulated: a live
    process with another start time than the claim records): the claim is stale."""
    from dp_online_envs.lab.experiments.store import _start_time

    store = ResultsStore(tmp_path)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        start = _start_time(sleeper.pid)
        assert isinstance(start, int)
        _write_claim(store, specs[0].game_id, sleeper.pid, start=start)
        _write_claim(store, specs[1].game_id, sleeper.pid, start=start - 1)
        assert store.claimant(specs[0].game_id)["pid"] == sleeper.pid  # the claimant itself
        assert store.claimant(specs[1].game_id) is None  # a reused pid
        assert store.claim(specs[1].game_id) and not store.claim(specs[0].game_id)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert store.claim(specs[2].game_id)
    assert json.loads((store.claims_dir / f"{specs[2].game_id}.claim").read_text())["start"] \
        == _start_time(os.getpid())


#: A sweep's worker in miniature: read which games are unfinished, wait for a gate, then
#: claim, "play" (log and write the record) and release each. Two of these are the race
#: ``claim`` must settle: the second read its list before the first wrote any record.
WORKER = textwrap.dedent('''
    import json, os, sys, time
    from dp_online_envs.lab.experiments import ResultsStore

    root, records, gate, log, ready = sys.argv[1:6]
    store = ResultsStore(root)
    records = json.loads(open(records).read())
    todo = [r for r in records if r["game_id"] not in store.finished()]
    open(ready, "w").close()
    while not os.path.exists(gate):
        time.sleep(0.01)
    for record in todo:
        if store.claim(record["game_id"]):
            fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            os.write(fd, (str(os.getpid()) + " " + record["game_id"] + "\\n").encode())
            os.close(fd)
            store.write(record)
            store.release(record["game_id"])
''')


def test_a_game_finished_by_another_process_after_the_list_was_read_is_not_replayed(
        tmp_path, specs):
    """Two real processes: the late one read its to-do list (every game) before the
    early one played anything; when it gets to claim, each game has a record and no
    claim, so ``claim`` must look for the record (not only for a live claim)."""
    records = tmp_path / "records.json"
    records.write_text(json.dumps(run_games(specs, backend="serial").records))
    root, log = tmp_path / "results", tmp_path / "plays.log"
    ResultsStore(root).prepare()
    procs = {}
    for name in ("early", "late"):
        args = [str(root), str(records), str(tmp_path / f"gate-{name}"), str(log),
                str(tmp_path / f"ready-{name}")]
        procs[name] = subprocess.Popen([sys.executable, "-c", WORKER, *args])
    try:
        for name, proc in procs.items():
            _wait_until((tmp_path / f"ready-{name}").exists, f"{name} ready", proc)
        (tmp_path / "gate-early").touch()
        assert procs["early"].wait(60) == 0
        (tmp_path / "gate-late").touch()
        assert procs["late"].wait(60) == 0
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait()
    plays = [line.split() for line in log.read_text().splitlines()]
    assert sorted(g for _, g in plays) == sorted(s.game_id for s in specs)  # once each
    assert {int(pid) for pid, _ in plays} == {procs["early"].pid}
    assert not list(ResultsStore(root).claims_dir.glob("*.claim"))


def test_release_removes_this_process_claim_only(tmp_path, specs):
    """Without the owner check a sweep would free games other sweeps are playing; without
    the removal its own claims would outlive their games (and it would wait on itself)."""
    store = ResultsStore(tmp_path)
    mine, theirs = specs[0].game_id, specs[1].game_id
    assert store.claim(mine)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        other = _write_claim(store, theirs, sleeper.pid)
        store.release(mine)
        store.release(theirs)
        assert not (store.claims_dir / f"{mine}.claim").exists()
        assert other.exists() and store.claimant(theirs)["pid"] == sleeper.pid
        assert store.claim(mine)  # free again
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_claim_of_a_process_this_user_may_not_signal_is_respected(tmp_path, specs,
                                                                     monkeypatch):
    """``kill(pid, 0)`` answers EPERM for a live process of another user (a results
    directory shared by several users): that claim is live, not stale."""
    store = ResultsStore(tmp_path)
    pid = _dead_pid() + 10**6  # no such process here: only the patched kill answers
    real_kill = os.kill

    def kill(target, sig):
        if target == pid and sig == 0:
            raise PermissionError(1, "Operation not permitted")
        return real_kill(target, sig)

    monkeypatch.setattr(store_module.os, "kill", kill)
    monkeypatch.setattr(store_module, "_start_time", lambda p: None)
    _write_claim(store, specs[0].game_id, pid)
    assert store.claimant(specs[0].game_id)["pid"] == pid
    assert not store.claim(specs[0].game_id)
