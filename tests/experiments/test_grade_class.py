"""Grading a class: submissions graded in parallel with the same grades as serially, each
grade written as soon as it is done, a rerun keeping what is unchanged (by the file's
and the grading's digests), every submission's output in its own capped log.

The assignment is tiny (T = 40, one hidden seed, one audit game): what is under test
is the bookkeeping, not the games.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import subprocess
import sys

import pytest

import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs.lab.cli import main
from dp_online_envs.lab.grading import grade, grader, parse_assignment
from dp_online_envs.lab.grading.grades import Grade
from dp_online_envs.lab.isolation import IsolationLimits, drain_to_log

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: The honest sample without the accountant's import (tests/experiments/test_grade.py:
#: the same play and budget): what is under test here is the bookkeeping.
HONEST = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "course" / "submissions"
          / "honest.py")
VAR = "DP_ONLINE_TEST_GRADE_SECRET"
TINY = {
    "name": "tiny-class",
    "envs": ["DPBandit-MAB-v0"],
    "horizons": [40],
    "seeds": 1,
    "secret": {"env": VAR},
    "privacy": {"epsilon": 1},
    "references": ["private-exp2"],
    "limits": {"timeout": 60, "startup_timeout": 600},
    "audit": {"games": 1, "power_factors": [10]},
    "grading": {"regret": {"points": 50, "reference": "private-exp2", "factor": 1.5,
                           "zero_at": 3}},
}
#: A learner that prints a line in every round (its log is capped).
CHATTY = '''
import sys
import agents


class Chatty(agents.Agent):
    name = "chatty"
    feedback = "bandit"

    def act(self):
        print("round", self.t, "of a chatty learner " * 100)
        print("to stderr", file=sys.stderr)
        return 0

    def update(self, action, feedback):
        self.t += 1
'''


@pytest.fixture
def klass(tmp_path):
    """Two submissions: the honest sample and a chatty learner."""
    files = []
    for name, text in (("alice", HONEST.read_text()), ("carol", CHATTY)):
        path = tmp_path / "in" / f"{name}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        files.append(path)
    return files


def counting(monkeypatch) -> list[str]:
    """The stems of the submissions graded (not kept) from now on, in this process."""
    graded: list[str] = []
    real = grader._grade_one

    def grade_one(job, path):
        graded.append(path.stem)
        return real(job, path)

    monkeypatch.setattr(grader, "_grade_one", grade_one)
    return graded


def test_a_stored_grade_reads_back_as_the_same_grade():
    g = Grade(submission="a", path="a.py", sha256="ff", learner={"class_name": "A"},
              parts=[grader.Part("regret", 50.0, 12.5, "why")],
              settings=[grader.SettingResult("E", 40, 2, ("crash",), 0, None, {"r": 1.5},
                                             50.0, 12.5)],
              declared=(float("inf"), 0.0, "text"), audit={"eps_lb": "inf"}, power=None,
              power_text="p", records=[{"regret": 1.0}], sandbox="s",
              audit_cpu_seconds=3.0)
    back = Grade.from_dict(json.loads(json.dumps(g.to_dict())), 3.0)
    assert back == g
    with pytest.raises(ValueError, match=r"^not a stored grade: KeyError: 'parts'"):
        Grade.from_dict({k: v for k, v in g.to_dict().items() if k != "parts"})


@pytest.mark.end_to_end
def test_a_class_graded_serially_then_in_parallel_then_resumed(tmp_path, klass, monkeypatch,
                                                              capsys):
    """Serially: each grade on disk when its line is printed, the class table last, the
    chatty learner's output in its capped log. In two processes: the same grades. A
    rerun: every unchanged grade kept; an edited file graded again, by the command, which
    prints a line per submission graded or kept."""
    assignment = parse_assignment(TINY)
    serial_out, out = tmp_path / "serial", tmp_path / "parallel"
    seen = []

    def progress(line):  # when a submission is reported, its grade is on disk
        seen.append((line.split(":")[0], sorted(p.parent.name for p in
                                                serial_out.glob("*/grade.json")),
                     (serial_out / "grades.csv").exists()))

    serial = grade(assignment, klass, secret="s1", out_dir=serial_out, progress=progress)
    assert seen == [("[1/2] alice", ["alice"], False), ("[2/2] carol", ["alice", "carol"],
                                                          False)]
    assert (serial_out / "grades.csv").exists()  # the class table comes last
    assert sorted(os.listdir(serial_out / "alice")) == ["grade.json", "log.txt",
                                                        "report.html", "run.json"]
    log = (serial_out / "carol" / "log.txt").read_bytes()
    cap = assignment.limits.log_bytes
    assert b"round 0 of a chatty learner" in log and b"to stderr" in log
    marker = f"\n[log cut at {cap} bytes: the rest is dropped]\n".encode()
    assert log.endswith(marker) and len(log) == cap + len(marker)
    assert (serial_out / "alice" / "log.txt").read_bytes() == b""  # the sample is silent
    assert "log.txt" in (serial_out / "carol" / "report.html").read_text()

    lines: list[str] = []
    parallel = grade(assignment, klass, secret="s1", out_dir=out, workers=2,
                     progress=lines.append)
    assert [g.to_dict() for g in parallel.grades] == [g.to_dict() for g in serial.grades]
    assert sorted(line.split(" ")[1] for line in lines) == ["alice:", "carol:"]
    stored = {f.stem: (out / f.stem / "grade.json").read_bytes() for f in klass}

    graded = counting(monkeypatch)
    lines.clear()
    again = grade(assignment, klass, secret="s1", out_dir=out, progress=lines.append)
    assert graded == []  # nothing changed: every grade kept
    assert [g.to_dict() for g in again.grades] == [g.to_dict() for g in serial.grades]
    assert [line.split(":")[0] for line in lines] == ["alice", "carol"]
    assert all("unchanged since its stored grade, kept" in line for line in lines)
    assert {f.stem: (out / f.stem / "grade.json").read_bytes() for f in klass} == stored
    klass[1].write_text(klass[1].read_text() + "\n# edited\n")
    spec = tmp_path / "tiny.json"
    spec.write_text(json.dumps(TINY))
    monkeypatch.setenv(VAR, "s1")
    capsys.readouterr()
    assert main(["grade", str(spec), *map(str, klass), "-o", str(out)]) == 0
    assert graded == ["carol"]
    err = capsys.readouterr().err
    assert "alice: unchanged since its stored grade, kept" in err
    assert "[2/2] carol: " in err


def test_a_stored_grade_is_kept_only_for_the_same_file_and_grading(tmp_path, klass,
                                                                    monkeypatch):
    """What decides a rerun, without playing: the file's digest, the grading key (the
    assignment, the secret's seeds, the sandbox mode, the release), an intact record."""
    assignment = parse_assignment(TINY)
    key = grader.grading_key(assignment, grader.seed_secret(assignment, "s"), "mode")
    assert key == grader.grading_key(assignment, grader.seed_secret(assignment, "s"), "mode")
    for other in (grader.grading_key(assignment, grader.seed_secret(assignment, "t"), "mode"),
                  grader.grading_key(assignment, grader.seed_secret(assignment, "s"), "m2"),
                  grader.grading_key(parse_assignment({**TINY, "seeds": 2}),
                                     grader.seed_secret(assignment, "s"), "mode")):
        assert other != key
    g = Grade(submission="alice", path=str(klass[0]), sha256=grader.file_sha256(klass[0]),
              learner=None, parts=[], settings=[], declared=None, audit=None, power=None,
              power_text="", records=[], sandbox="mode")
    page = tmp_path / "out" / "alice"
    page.mkdir(parents=True)
    (page / "grade.json").write_text(json.dumps(g.to_dict()))
    (page / "run.json").write_text(json.dumps({"key": key, "sha256": g.sha256,
                                               "audit_cpu_seconds": 1.5}))
    kept = grader.stored_grade(tmp_path / "out", klass[0], key)
    assert kept == dataclasses.replace(g, audit_cpu_seconds=1.5)
    assert grader.stored_grade(tmp_path / "out", klass[0], "another key") is None
    assert grader.stored_grade(tmp_path / "out", klass[1], key) is None  # no record
    (page / "grade.json").write_text("{")
    assert grader.stored_grade(tmp_path / "out", klass[0], key) is None  # damaged
    klass[0].write_text("# changed")
    (page / "grade.json").write_text(json.dumps(g.to_dict()))
    assert grader.stored_grade(tmp_path / "out", klass[0], key) is None


def test_the_log_drain_copies_up_to_the_cap_and_drops_the_rest(tmp_path):
    path = tmp_path / "log.txt"
    path.write_bytes(b"before\n")
    for text, cap in ((b"x" * 10, 100), (b"y" * 200, 100), (b"z" * 5, 100)):
        child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdout.buffer."
                                  f"write({text!r})"], stdout=subprocess.PIPE)
        drain_to_log(child.stdout, str(path), cap)
        child.wait()
    marker = b"\n[log cut at 100 bytes: the rest is dropped]\n"
    assert path.read_bytes() == b"before\n" + b"x" * 10 + b"y" * 83 + marker
    with pytest.raises(TypeError, match=r"^log=3 rejected: expected a file path"):
        IsolationLimits(log=3)
    with pytest.raises(ValueError, match="log_bytes"):
        IsolationLimits(log_bytes=-1)


def test_the_command_help_names_the_secret_variable(capsys):
    with pytest.raises(SystemExit):
        main(["grade", "--help"])
    from dp_online_envs.lab.grading.assignment import DEFAULT_SECRET_ENV

    assert f"(default {DEFAULT_SECRET_ENV})" in capsys.readouterr().out.replace("\n", " ")


@pytest.mark.end_to_end
def test_a_grading_process_keeps_games_at_once_sandboxed_games_in_flight(tmp_path, monkeypatch):
    """A game's two sides take turns, so one game at a time leaves the CPUs idle much of
    the time: a grading process plays its graded games, then its audit's, games_at_once
    at a time (the CPUs it may use, shared by the processes grading at once); the
    records keep the games' order (a class graded serially and in parallel gets the same
    grades: test_a_class_graded_serially_then_in_parallel_then_resumed)."""
    import threading

    from dp_online_envs.lab.experiments import game

    assert grader.GAMES_PER_CPU == 1 and grader.MIN_GAMES_AT_ONCE == 2
    monkeypatch.setattr(grader.os, "sched_getaffinity", lambda pid: set(range(5)))
    assert [grader.games_at_once(n) for n in (1, 2, 3, 4, 6, 7)] == [5, 3, 2, 2, 2, 2]
    assignment = parse_assignment({**TINY, "seeds": 3, "audit": {"games": 3,
                                                                 "power_factors": [10]}})
    lock = threading.Lock()
    live = {"graded": [0, 0], "audit": [0, 0]}

    def counted(base, kind):
        class Counted(base):
            def __init__(self, *args, **kwargs):
                with lock:
                    live[kind][0] += 1
                    live[kind][1] = max(live[kind][1], live[kind][0])
                super().__init__(*args, **kwargs)

            def close(self):
                super().close()
                with lock:
                    live[kind][0] -= 1
        return Counted

    monkeypatch.setattr(grader, "games_at_once", lambda processes=1: 3)
    monkeypatch.setattr(grader, "IsolatedLearner", counted(grader.IsolatedLearner, "audit"))
    monkeypatch.setattr(game, "IsolatedLearner", counted(game.IsolatedLearner, "graded"))
    (g,) = grade(assignment, [HONEST], secret="s1").grades
    assert g.audit is not None and g.audit["guesses"] is not None
    assert live == {"graded": [0, 3], "audit": [0, 3]}
    assert [r["seed_index"] for r in g.records] == [0, 1, 2]  # in the games' order


class PidResolver:
    """The agents registry, writing the id of each process that looks a name up to
    ``path`` (it pickles: a worker process can use it)."""

    def __init__(self, path: pathlib.Path) -> None:
        import agents

        self.path, self.base = path, agents.registry.base

    def resolve(self, name: str) -> type:
        import agents

        with open(self.path, "a") as f:
            f.write(f"{os.getpid()}\n")
        return agents.registry.resolve(name)

    def names(self) -> list[str]:
        import agents

        return agents.registry.names()


def test_the_audit_power_is_measured_in_a_worker_while_the_submissions_are_graded(tmp_path):
    """The power (the assignment's reference audited at its noise cuts) is shown, never
    scored: it is measured in a process of its own while the grading goes on, and the
    grades carry the same power as one measured in process."""
    assignment = parse_assignment(TINY)
    pids = tmp_path / "pids.txt"
    resolver = PidResolver(pids)
    graded = grade(assignment, [HONEST], secret="s1", out_dir=tmp_path / "out",
                   resolver=resolver)
    looked_up = {int(line) for line in pids.read_text().split()}
    assert len(looked_up) == 2 and os.getpid() in looked_up  # references here, power there
    settings = dataclasses.replace(assignment.audit.settings,
                                   seed=grader.audit_seed(assignment, "s1"))
    inline = grader._measure_power((assignment, settings, None))
    assert graded.power == inline[0] and graded.power_text == inline[1]
    assert graded.grades[0].power == inline[0]
    stored = json.loads((tmp_path / "out" / "audit_power.json").read_text())
    assert stored["power"] == inline[0]
    assert "What this audit could detect" in (tmp_path / "out" / "honest" /
                                              "report.html").read_text()
    nothing = grade(assignment, [], secret="s2", resolver=resolver)  # nothing to grade:
    assert nothing.power is not None  # measured at once, in process
