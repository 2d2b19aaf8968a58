"""A cheating student's submissions, graded end to end by ``dp-online grade``.

Each attack is a real submission file (written here with the grader's real paths in it,
as a student who knows them would) graded by the command in a process of its own whose
environment holds the secret from its start, so ``/proc/<grader>/environ`` shows it.
In the sandbox every attack fails or earns nothing, with the reason, and nothing
outside the sandbox changes. The same submissions graded with ``--unsafe-no-sandbox``
(bubblewrap hidden from the grader) succeed, which shows that each test can fail.
Attacks that can share a process share one submission (every submission costs a probe
and a game, each a sandboxed process); its reason reports each attack's outcome.
"""

from __future__ import annotations

import html
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys

import pytest

from dp_online_envs.lab.sandbox import Sandbox

ROOT = pathlib.Path(__file__).resolve().parents[2]
VAR = "DP_ONLINE_ATTACK_TEST_SECRET"
SECRET = "the-instructors-secret-7f3a91"
TOKEN = "dp-online-attack-daemon-5c1e"  # the argv[0] of the daemon an attack leaves behind
ASSIGNMENT = {
    "name": "attacked", "envs": ["DPBandit-MAB-v0"], "horizons": [40], "seeds": 1,
    "secret": {"env": VAR}, "privacy": {"epsilon": 1}, "references": ["private-exp2"],
    "limits": {"timeout": 20, "startup_timeout": 600},
    "audit": {"games": 1, "power_factors": [10]},
    "grading": {"regret": {"points": 50, "reference": "private-exp2", "factor": 1.5,
                           "zero_at": 3}},
}

HEAD = '''import os
import agents


class Attack(agents.Agent):
    name = "attack"
    feedback = "bandit"

    def act(self):
        return 0

    def update(self, action, feedback):
        self.t += 1
'''

ATTACKS = {
    # the secret: the environment of the process and of every ancestor, any process in
    # /proc, the assignment file, the output directory
    "steal_secret": '''
    def setup(self):
        found = [k for k in os.environ if "SECRET" in k]
        # any process's files last: the grade's reason is cut short, and on a busy host
        # other processes may carry a secret of their own
        procs = []
        for pid in os.listdir("/proc"):
            for part in ("environ", "cmdline"):
                try:
                    with open(f"/proc/{pid}/{part}", "rb") as f:
                        if b"SECRET" in f.read():
                            procs.append(f"/proc/{pid}/{part}")
                except OSError:
                    pass
        pid = os.getpid()
        while pid > 1:
            try:
                with open(f"/proc/{pid}/status") as f:
                    pid = int(next(l for l in f if l.startswith("PPid:")).split()[1])
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if b"SECRET" in f.read():
                        found.append(f"ancestor {pid}")
            except (OSError, StopIteration):
                break
        for path in (<<assignment>>, <<out>>):
            try:
                os.listdir(path) if os.path.isdir(path) else open(path).read()
                found.append(path)
            except OSError:
                pass
        raise PermissionError(f"stolen: {sorted(set(found)) + sorted(set(procs))}")
''',
    # out of the sandbox (one submission, one process): another student's file (read it,
    # change it, write next to it); the network (a TCP listener of the grader's host, and
    # the internet); a daemon that outlives the game (double fork, new session, renamed)
    "escape": '''
    def setup(self):
        import socket
        tampered = []
        for what, action in (
                ("read", lambda: open(<<victim>>).read()),
                ("append", lambda: open(<<victim>>, "a").write("# pwned")),
                ("create", lambda: open(<<victim>> + ".new", "w").write("pwned"))):
            try:
                action()
                tampered.append(what)
            except OSError:
                pass
        connected = []
        for what, address in (("host", ("127.0.0.1", <<port>>)), ("internet", ("1.1.1.1", 53))):
            try:
                socket.create_connection(address, timeout=3).close()
                connected.append(what)
            except OSError as exc:
                connected.append(f"{what}: {exc.strerror}")
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                null = os.open("/dev/null", os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                os.closerange(3, 4096)
                os.execv("/usr/bin/sleep", [<<token>>, "300"])
            os._exit(0)
        os.wait()
        raise RuntimeError(f"tampered: {tampered}; connected: {connected}; daemon started")
''',
    # the limits (one submission, one process): as many processes as possible, every
    # file descriptor (closed again), one big file in the working directory and files
    # outside it
    "exhaust": '''
    def setup(self):
        import time
        forked, why_fork = 0, "no limit hit"
        while forked < 64:
            try:
                if os.fork() == 0:
                    time.sleep(5)
                    os._exit(0)
            except OSError as exc:
                why_fork = exc.strerror
                break
            forked += 1
        kept, why_fd = [], "no limit hit"
        while len(kept) < 1000:
            try:
                kept.append(open("/dev/null"))
            except OSError as exc:
                why_fd = exc.strerror
                break
        opened = len(kept)
        for f in kept:
            f.close()
        written, why_disk = 0, "no limit hit"
        try:
            with open("fill", "wb") as f:
                while written < 100 * 2**20:
                    f.write(b"x" * 2**20)
                    f.flush()
                    written += 2**20
        except OSError as exc:
            why_disk = exc.strerror
        outside = []
        for path in (<<out>> + "/pwned", "/tmp/dp-online-attack-pwned"):
            try:
                open(path, "w").write("pwned")
                outside.append(path)
            except OSError:
                pass
        os.remove("fill")
        raise RuntimeError(f"forked {forked}: {why_fork}; opened {opened}: {why_fd}; "
                           f"wrote {written >> 20} MiB: {why_disk}; outside: {outside}")
''',
    # a pickle instead of the end-of-game summary
    "game_pickle": '''
    def update(self, action, feedback):
        self.t += 1
        if self.t == self.problem.horizon:
            import gc, pickle
            from multiprocessing.connection import Connection

            class Payload:
                def __reduce__(self):
                    return os.mkdir, (<<marker>>,)

            conn = next(o for o in gc.get_objects() if isinstance(o, Connection))
            conn.send_bytes(pickle.dumps(Payload()))
            os._exit(0)
''',
    # a malformed summary
    "bad_summary": '''
    def update(self, action, feedback):
        self.t += 1
        if self.t == self.problem.horizon:
            import gc
            from multiprocessing.connection import Connection

            conn = next(o for o in gc.get_objects() if isinstance(o, Connection))
            conn.send_bytes(b's{"clipped_feedback": 0, "privacy": [-1, 0, "x"]}')
            os._exit(0)
''',
}

#: A pickle as the probe's reply: sent while the grader imports the file.
PROBE_PICKLE = '''import gc
import os
import pickle
from multiprocessing.connection import Connection


class Payload:
    def __reduce__(self):
        return os.mkdir, (<<marker>>,)


next(o for o in gc.get_objects() if isinstance(o, Connection)).send_bytes(
    pickle.dumps(Payload()))
os._exit(0)
'''


def _write(tmp: pathlib.Path, port: int) -> tuple[list[pathlib.Path], dict[str, pathlib.Path]]:
    subs = tmp / "submissions"
    subs.mkdir()
    paths = {"assignment": tmp / "assignment.json", "out": tmp / "out",
             "victim": subs / "victim.py", "marker": tmp / "payload-ran"}
    paths["assignment"].write_text(json.dumps(ASSIGNMENT))
    paths["victim"].write_text("# another student's learner\n")
    fill = {f"<<{k}>>": repr(str(v)) for k, v in paths.items()}
    fill |= {"<<port>>": str(port), "<<token>>": repr(TOKEN)}

    def source(template: str) -> str:
        for key, value in fill.items():
            template = template.replace(key, value)
        return template

    files = []
    for name, body in [*ATTACKS.items(), ("probe_pickle", PROBE_PICKLE)]:
        files.append(subs / f"{name}.py")
        files[-1].write_text(source(body if name == "probe_pickle" else HEAD + body))
    return files, paths


def _grade(tmp: pathlib.Path, files: list[pathlib.Path], paths: dict[str, pathlib.Path],
           *extra: str, path_env: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, VAR: SECRET, "PYTHONPATH": str(ROOT)}
    if path_env is not None:
        env["PATH"] = path_env
    return subprocess.run(
        [sys.executable, "-m", "dp_online_envs.lab.cli", "grade",
         str(paths["assignment"]), *map(str, files), "-o", str(paths["out"]), "--quiet",
         *extra], env=env, cwd=tmp, capture_output=True, text=True, timeout=3600)


def _reasons(out: pathlib.Path) -> dict[str, str]:
    return {d.name: json.loads((d / "grade.json").read_text())["parts"][0]["reason"]
            for d in out.iterdir() if (d / "grade.json").is_file()}


def _daemons() -> list[int]:
    """Host processes whose command line carries the attack's token."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if TOKEN.encode() in pathlib.Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.fixture
def listener():
    """A TCP listener on the grader's host: an attack that reaches it shows up here."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        server.setblocking(False)
        yield server


def _connections(server: socket.socket) -> int:
    count = 0
    while True:
        try:
            server.accept()[0].close()
            count += 1
        except BlockingIOError:
            return count


@pytest.mark.end_to_end
def test_every_attack_fails_in_the_sandbox_and_nothing_outside_changes(tmp_path, listener):
    files, paths = _write(tmp_path, listener.getsockname()[1])
    victim = paths["victim"].read_bytes()
    done = _grade(tmp_path, files, paths)
    assert done.returncode == 0, done.stderr
    assert f"graded in: {Sandbox().describe()}" in done.stdout
    mode = Sandbox(files=(str(files[0]),)).describe()
    assert json.loads((paths["out"] / "escape" / "grade.json").read_text())["sandbox"] == mode
    assert f"Graded in: {html.escape(mode)}" in (paths["out"] / "grades.html").read_text()
    reasons = _reasons(paths["out"])
    limits = Sandbox()
    assert "stolen: []" in reasons["steal_secret"]
    assert "tampered: []" in reasons["escape"]
    assert "connected: ['host: Connection refused', 'internet: Network is " \
           "unreachable']" in reasons["escape"]
    assert "daemon started" in reasons["escape"]
    forked = int(reasons["exhaust"].split("forked ")[1].split(":")[0])
    assert 0 < forked < limits.processes and "forked " + str(forked) + \
        ": Resource temporarily unavailable;" in reasons["exhaust"]
    opened = int(reasons["exhaust"].split("opened ")[1].split(":")[0])
    assert 0 < opened < limits.open_files and "opened " + str(opened) + \
        ": Too many open files;" in reasons["exhaust"]
    assert f"wrote {limits.file_bytes >> 20} MiB: File too large; outside: []" in \
        reasons["exhaust"]
    assert "(malformed reply b'\\x80\\x04" in reasons["game_pickle"]
    assert "to finish: expected a summary frame" in reasons["game_pickle"]
    assert "epsilon=-1, expected a number >= 0" in reasons["bad_summary"]
    assert "malformed reply from the process importing the submission: b'\\x80\\x04" in \
        reasons["probe_pickle"]
    # nothing outside the sandbox changed
    assert paths["victim"].read_bytes() == victim
    assert sorted(p.name for p in paths["victim"].parent.iterdir()) == sorted(
        [f.name for f in files] + ["victim.py"])
    assert not paths["marker"].exists() and not (paths["out"] / "pwned").exists()
    assert not pathlib.Path("/tmp/dp-online-attack-pwned").exists()
    assert _connections(listener) == 0
    assert _daemons() == []
    # the secret is nowhere in what the grader wrote
    for page in paths["out"].rglob("*"):
        if page.is_file():
            assert SECRET not in page.read_text(errors="replace"), page


@pytest.mark.end_to_end
def test_without_the_sandbox_grading_is_refused_unless_unsafe_and_then_the_attacks_work(
        tmp_path, listener):
    files, paths = _write(tmp_path, listener.getsockname()[1])
    # the malformed summary is the protocol's to refuse, sandbox or not: not graded here
    files = [f for f in files if f.stem != "bad_summary"]
    hidden = "/nonexistent"  # no bwrap on the grader's PATH: the sandbox cannot start
    refused = _grade(tmp_path, files, paths, path_env=hidden)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "dp-online grade: error: grading refused: the submissions' sandbox cannot start "
        "(bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)); "
        "--unsafe-no-sandbox grades without one"]
    assert not paths["out"].exists()
    try:
        done = _grade(tmp_path, files, paths, "--unsafe-no-sandbox", path_env=hidden)
        assert done.returncode == 0, done.stderr
        assert "graded in: no sandbox (--unsafe-no-sandbox)" in done.stdout
        assert json.loads((paths["out"] / "escape" / "grade.json").read_text())[
            "sandbox"].startswith("no sandbox (--unsafe-no-sandbox)")
        reasons = _reasons(paths["out"])
        stolen = reasons["steal_secret"]
        assert "ancestor" in stolen and str(paths["assignment"]) in stolen
        assert "tampered: ['read', 'append', 'create']" in reasons["escape"]
        assert "connected: ['host'" in reasons["escape"]
        assert _connections(listener) == 1
        assert _daemons() != []
        assert "forked 64: no limit hit" in reasons["exhaust"]
        assert "opened 1000: no limit hit" in reasons["exhaust"]
        # the protocol holds without the sandbox: no pickle is loaded
        assert not paths["marker"].exists()
        assert "(malformed reply b'\\x80\\x04" in reasons["game_pickle"]
    finally:
        for pid in _daemons():  # the daemons this test's unsafe run left behind
            os.kill(pid, signal.SIGKILL)
        pathlib.Path("/tmp/dp-online-attack-pwned").unlink(missing_ok=True)
