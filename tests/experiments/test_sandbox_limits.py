"""Limits on the whole of what a submission runs: wall-clock budgets per game and per
submission, memory and processes per sandbox (not per process)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pathlib
import time

import gymnasium as gym
import pytest

import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs.lab.experiments.game import GameSpec, play_game
from dp_online_envs.lab.grading import grade, parse_assignment
from dp_online_envs.lab.grading.assignment import default_game_seconds
from dp_online_envs.lab.grading.submission import SubmissionInfo, SubmissionLoader
from dp_online_envs.lab.isolation import AgentFailure, IsolatedLearner, IsolationLimits
from dp_online_envs.lab.sandbox import Sandbox

MOD = "experiments.isolated_agents"
#: The honest sample without the accountant's import (tests/experiments/test_grade.py: the
#: same play and budget): what is under test here is what the grader charges and stops.
HONEST = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "course" / "submissions"
          / "honest.py")


def test_a_slow_learner_is_stopped_at_the_games_wall_clock_budget():
    limits = IsolationLimits(timeout=5.0, game_seconds=1.5)
    spec = GameSpec("DPBandit-MAB-v0", f"{MOD}:SlowToAnswer", None, None, 40, 0,
                    isolation=limits)
    # each call takes 0.3 s, under the 5 s timeout: only the budget ends the game
    with pytest.raises(AgentFailure, match=r"^agent over the game's wall-clock budget of "
                                           r"1\.5 s: it ran out waiting for act$"):
        play_game(spec)


def test_after_the_submissions_deadline_no_call_is_waited_for_and_no_process_starts():
    limits = IsolationLimits(timeout=5.0, deadline=time.monotonic() + 1.5)
    spec = GameSpec("DPBandit-MAB-v0", f"{MOD}:SlowToAnswer", None, None, 40, 0,
                    isolation=limits)
    with pytest.raises(AgentFailure, match=r"^agent over the submission's wall-clock "
                                           r"budget: it ran out waiting for (act|starting "
                                           r"the agent)$"):  # (a loaded machine starts slowly)
        play_game(spec)
    start = time.monotonic()
    with pytest.raises(AgentFailure, match=r"^the submission's wall-clock budget ran out "
                                           r"before this process could start$"):
        play_game(spec)
    assert time.monotonic() - start < 0.5  # refused before spawning an interpreter


def test_the_default_budgets_grow_with_the_horizon_and_the_games():
    a = parse_assignment({"envs": ["DPBandit-MAB-v0"], "horizons": [1000, 4000], "seeds": 2,
                          "privacy": {"epsilon": 1}, "references": ["private-exp2"],
                          "audit": {"games": 3}})
    assert a.limits.game_seconds == default_game_seconds(4000) == 60 + 0.004 * 4000
    assert a.submission_seconds == pytest.approx(60 + 15 * (2 + 3) * 2
                                                 + 0.004 * (2 + 3) * (1000 + 4000))
    assert a.processes == 4
    b = parse_assignment({"envs": ["DPBandit-MAB-v0"], "horizons": [40],
                          "privacy": {"epsilon": 1}, "references": ["private-exp2"],
                          "limits": {"game_seconds": 7, "submission_seconds": 30,
                                     "processes": 2, "memory_mb": 512}})
    assert (b.limits.game_seconds, b.submission_seconds, b.processes) == (7, 30, 2)


# A learner that forks as many children as it may (up to 31), each allocating up to
# 600 MB, and raises with what the processes held at their peak (VmPeak, their address
# spaces). Before the sandbox bounded the whole, 32 processes of RLIMIT_AS each held
# 32 x the limit.
HOG = '''import os
import agents


def peak_mb():
    with open("/proc/self/status") as f:
        return int(next(l for l in f if l.startswith("VmPeak")).split()[1]) // 1024


class Hog(agents.Agent):
    name = "hog"
    feedback = "bandit"

    def act(self):
        read, write = os.pipe()
        children = 0
        for _ in range(31):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                held = []
                try:
                    for _ in range(600 // 16):
                        held.append(b"x" * 2**24)
                except MemoryError:
                    pass
                os.write(write, b"%d\\n" % peak_mb())
                os._exit(0)
            children += 1
        os.close(write)
        for _ in range(children):
            os.wait()
        peaks = [int(x) for x in os.read(read, 2**16).split()]
        raise RuntimeError("HOG " + str([peak_mb(), *peaks]))

    def update(self, action, feedback):
        self.t += 1
'''


def _sandboxed(tmp_path: pathlib.Path, name: str, code: str, limits: IsolationLimits,
               processes: int) -> tuple[SubmissionLoader, IsolationLimits]:
    """A submission file's learner class and its sandboxed limits (no probe needed)."""
    path = tmp_path / f"{name}.py"
    path.write_text(code)
    info = SubmissionInfo(str(path), name.title(), name, "bandit", False, "",
                          hashlib.sha256(code.encode()).hexdigest())
    return SubmissionLoader(info), dataclasses.replace(
        limits, sandbox=Sandbox(files=(str(path),), processes=processes))


def test_the_memory_of_a_sandbox_is_bounded_as_a_whole_whatever_it_forks(tmp_path):
    memory = 2048 * 2**20
    loader, limits = _sandboxed(tmp_path, "hog", HOG,
                                IsolationLimits(timeout=60.0, memory_bytes=memory), 4)
    env = gym.make("DPBandit-MAB-v0", horizon=10)
    with IsolatedLearner(loader, env.get_wrapper_attr("problem"), env.action_space,
                         limits) as proxy:
        proxy.reset(0)
        with pytest.raises(AgentFailure, match="HOG") as caught:
            proxy.act()
    peaks = json.loads(caught.value.reason.split("HOG ", 1)[1])
    assert 1 <= len(peaks) <= 4  # the learner and at most 3 children
    assert all(p <= memory // 4 // 2**20 for p in peaks)  # each within its share
    assert sum(peaks) <= memory // 2**20
    assert max(peaks[1:], default=0) > 0.8 * memory // 4 // 2**20  # each did try


SLOW = '''import time
import agents


class Slow(agents.Agent):
    name = "slow"
    feedback = "bandit"

    def act(self):
        time.sleep(0.3)
        return 0

    def update(self, action, feedback):
        self.t += 1
'''


@pytest.mark.end_to_end
def test_a_slow_submission_and_a_hog_get_zero_with_the_reason_and_the_class_goes_on(
        tmp_path):
    """Beside them, the honest sample that also burns 0.6 s of CPU each time it is built,
    0.5 s of it in two children: graded as the sample is, and that CPU charged to its
    grading (without its children's, each build would count about 0.3 s)."""
    (tmp_path / "slow.py").write_text(SLOW)
    (tmp_path / "hog.py").write_text(HOG)
    marker = "    def setup(self) -> None:\n"
    burner = BURN + HONEST.read_text().replace(
        marker, marker + "        burn_in_children(0.25, 0.1)\n")
    (tmp_path / "burner.py").write_text(burner.replace("from __future__ import annotations\n",
                                                       ""))
    assignment = parse_assignment({
        "name": "budgets", "envs": ["DPBandit-MAB-v0"], "horizons": [40], "seeds": 1,
        "secret": {"salt": "a-salt-for-the-budgets"}, "privacy": {"epsilon": 1},
        "references": ["private-exp2"],
        "limits": {"timeout": 20, "startup_timeout": 600, "game_seconds": 8,
                   "memory_mb": 2048},  # the slow one needs 12 s; the hog, seconds if loaded
        "audit": {"games": 2, "power_factors": [10]}})
    # one grading process each: the slow one's wait beside the others' work
    result = grade(assignment, [tmp_path / f"{n}.py" for n in ("slow", "hog", "burner")],
                   out_dir=tmp_path / "out", workers=3)
    slow, hog, honest = result.grades
    assert slow.score == 0 and hog.score == 0
    assert ("1 of 1 games failed (agent over the game's wall-clock budget of 8 s: it ran "
            "out waiting for act)") in slow.parts[0].reason
    peaks = json.loads(hog.parts[0].reason.split("HOG ", 1)[1].split("]")[0] + "]")
    assert len(peaks) <= 4 and sum(peaks) <= 2048
    assert honest.parts[0].earned > 0 and honest.parts[1].earned == 20
    assert honest.audit is not None
    # two audit games and two of its noise-free twin, 0.6 s burned in each
    assert honest.audit_cpu_seconds >= 4 * 0.6
    assert honest.cpu_seconds >= honest.audit_cpu_seconds + 0.6  # and its graded game's
    page = (tmp_path / "out" / "burner" / "report.html").read_text()
    assert f"CPU time of its grading: {honest.cpu_seconds:.1f} s" in page
    assert "8 s of wall clock per game" in page and "s of wall clock per submission" in page
    assert ("2048 MB of memory for each sandbox as a whole (at most 4 processes and threads, "
            "512 MB of address space each)") in page


def test_a_memory_too_small_to_share_among_the_processes_is_refused():
    from dp_online_envs.lab.experiments.errors import ExperimentError

    with pytest.raises(ExperimentError, match=r"limits: memory_mb=128 shared by processes=4 "
                                              r"leaves 32 MB per process, expected at least 64"):
        parse_assignment({"envs": ["DPBandit-MAB-v0"], "horizons": [40],
                          "privacy": {"epsilon": 1}, "references": ["private-exp2"],
                          "limits": {"memory_mb": 128}})
    with pytest.raises(ExperimentError, match=r"game_seconds=0 rejected"):
        parse_assignment({"envs": ["DPBandit-MAB-v0"], "horizons": [40],
                          "privacy": {"epsilon": 1}, "references": ["private-exp2"],
                          "limits": {"game_seconds": 0}})


# Burns a known amount of CPU: two forked children 0.6 s each and the learner 0.3 s
# (process_time: the CPU of the process itself), in its first call.
BURN = '''import os
import time


def burn(seconds):
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


def burn_in_children(each=0.6, own=0.3):
    pids = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            burn(each)
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    burn(own)
'''
BURNER = BURN + '''
import agents


class Burner(agents.Agent):
    name = "burner"
    feedback = "bandit"

    def act(self):
        if self.t == 0 and BURNS:
            burn_in_children()
        return 0

    def update(self, action, feedback):
        self.t += 1
'''


def _cpu_of_a_game(tmp_path: pathlib.Path, burns: bool) -> tuple[float, float]:
    """``(CPU seconds the proxy counted, the rise of isolated_cpu_seconds())`` of a
    sandboxed game of 10 rounds."""
    from dp_online_envs.lab.isolation import isolated_cpu_seconds

    name = "burner" if burns else "idle"
    loader, limits = _sandboxed(tmp_path, name, f"BURNS = {burns}\n" + BURNER,
                                IsolationLimits(timeout=60.0), 4)
    env = gym.make("DPBandit-MAB-v0", horizon=10)
    before = isolated_cpu_seconds()
    with IsolatedLearner(loader, env.get_wrapper_attr("problem"), env.action_space,
                         limits) as proxy:
        proxy.reset(0)
        for _ in range(10):
            proxy.update(proxy.act(), [0.5])
        proxy.finish()
    return proxy._process.cpu_seconds, isolated_cpu_seconds() - before


def test_the_cpu_of_a_sandbox_counts_every_process_in_it(tmp_path):
    idle, idle_total = _cpu_of_a_game(tmp_path, burns=False)
    burner, burner_total = _cpu_of_a_game(tmp_path, burns=True)
    assert idle > 0.1  # the interpreter's start is counted too
    assert idle_total == pytest.approx(idle) and burner_total == pytest.approx(burner)
    # 1.5 s burned, give or take the start's variation from one process to the next
    assert 1.5 - 0.4 < burner - idle < 1.5 + 0.4, (idle, burner)


def test_a_trees_cpu_is_read_the_same_with_or_without_the_kernels_children_lists(
        monkeypatch):
    import os
    import signal
    import subprocess
    import sys

    from dp_online_envs.lab import isolation

    # the child and its own child burn, say so, and sleep: their CPU stays put
    code = BURN + ("pid = os.fork()\nburn(0.35 if pid == 0 else 0.25)\n"
                   "os.write(1, b'burnt\\n')\ntime.sleep(30)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                             start_new_session=True)
    try:
        assert child.stdout.readline() + child.stdout.readline() == b"burnt\nburnt\n"
        with_lists = isolation.tree_cpu_seconds(child.pid)
        real = pathlib.Path.read_text

        def no_children_lists(self, *args, **kwargs):
            if self.name == "children":
                raise FileNotFoundError(self)
            return real(self, *args, **kwargs)

        monkeypatch.setattr(pathlib.Path, "read_text", no_children_lists)
        scanned = isolation.tree_cpu_seconds(child.pid)
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # the child and its own
        child.wait()
    assert scanned == with_lists >= 0.5


# Forks as many children as it may (up to 30) that spin until they are killed, waits
# until they have burnt 1.5 s of CPU together (read from its own /proc), then plays on;
# its summary's clipped_feedback carries how many it got.
THIEF = BURN + '''
import agents


def children_cpu(pids):
    total = 0
    for pid in pids:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


class Thief(agents.Agent):
    name = "thief"
    feedback = "bandit"

    def act(self):
        if self.t == 0:
            pids = []
            for _ in range(30):
                try:
                    pid = os.fork()
                except OSError:
                    break
                if pid == 0:
                    while True:
                        pass
                pids.append(pid)
            self.clipped_feedback = len(pids)
            while children_cpu(pids) < 1.5:
                time.sleep(0.05)
        return 0

    def update(self, action, feedback):
        self.t += 1
'''


def test_a_cpu_thief_gets_three_children_and_their_cpu_is_charged(tmp_path):
    loader, limits = _sandboxed(tmp_path, "thief", THIEF, IsolationLimits(timeout=120.0), 4)
    env = gym.make("DPBandit-MAB-v0", horizon=10)
    with IsolatedLearner(loader, env.get_wrapper_attr("problem"), env.action_space,
                         limits) as proxy:
        proxy.reset(0)
        for _ in range(10):
            proxy.update(proxy.act(), [0.5])
        summary = proxy.finish()
    assert summary["clipped_feedback"] == 3  # the learner and 3 children: 4 processes
    assert proxy._process.cpu_seconds >= 1.5
