"""One submission never stops a grading run or a leaderboard: whatever its probe, import
or play does, its row or grade says why and the others go on."""

from __future__ import annotations

import dataclasses
import pathlib

import pytest

from dp_online_envs.lab.grading import submission
from dp_online_envs.lab.isolation import IsolationLimits
from dp_online_envs.lab.leaderboard import board
from dp_online_envs.lab.leaderboard.board import load_learners

BAD = pathlib.Path(__file__).resolve().parent / "grade_submissions"
HONEST = pathlib.Path(__file__).resolve().parents[2] / "examples/course/submissions/honest.py"


def test_the_leaderboard_records_a_deep_json_probe_reply_and_loads_the_rest():
    learners = load_learners(["exp3", str(BAD / "deep_json.py"), str(HONEST)],
                             limits=IsolationLimits(timeout=60.0), sandboxed=True)
    by_name = {learner.name: learner for learner in learners}
    deep = by_name["deep_json"]
    assert deep.cls is None and deep.error == (
        "deep_json.py: malformed reply from the process importing the submission: JSON "
        "nested too deep to decode")
    assert by_name["honest"].cls is not None and by_name["honest"].error == ""
    assert by_name["exp3"].cls is not None


@pytest.mark.parametrize("error", [MemoryError(), RecursionError("deep"),
                                   BrokenPipeError(32, "Broken pipe")])
def test_any_failure_of_a_probe_becomes_that_learners_reason(monkeypatch, error):
    def probe(path, limits):
        if path.name == "deep_json.py":
            raise error
        return real(path, limits)

    real = submission.probe_submission
    monkeypatch.setattr(board, "probe_submission", probe)
    learners = load_learners([str(BAD / "deep_json.py"), "exp3"],
                             limits=IsolationLimits(), sandboxed=False)
    assert learners[0].cls is None
    assert learners[0].error.startswith(f"probing the file failed: {type(error).__name__}")
    assert learners[1].cls is not None


@pytest.mark.parametrize("error", [RecursionError("deep"), MemoryError(),
                                   BrokenPipeError(32, "Broken pipe")])
def test_any_failure_of_a_files_audit_becomes_its_rows_note(tmp_path, monkeypatch, error):
    from dp_online_envs.lab.grading import audit_step

    def audit(*args, **kwargs):
        raise error

    monkeypatch.setattr(audit_step, "audit_with_twin", audit)
    info = submission.SubmissionInfo(str(HONEST), "NoisyEXP3", "noisy-exp3", "bandit", True,
                                     "", "")
    learner = board.Learner("honest", submission.SubmissionLoader(info), str(HONEST), "",
                            IsolationLimits())  # a file's learner, without its probe
    job = board._AuditJob(learner, "bandit", 1.0, 0.0, (1.0, 0.0), None,
                          (("DPBandit-MAB-v0", {}),), {}, (40,), tmp_path / "a.json", "k")
    note = board._audit_finding(job)["note"]
    assert note.startswith("not audited, so not ranked: the audit could not run the "
                           "learner on ") and f"{type(error).__name__}" in note
    registered = dataclasses.replace(job, learner=board.Learner("exp3", learner.cls),
                                     path=tmp_path / "b.json")
    with pytest.raises(type(error)):  # the code's own fault is raised, not hidden
        board._audit_finding(registered)


def test_a_probe_after_the_submissions_deadline_is_refused_with_the_reason():
    import time

    limits = IsolationLimits(deadline=time.monotonic() - 1.0)
    with pytest.raises(submission.SubmissionError, match=r"^honest\.py: the submission's "
                                                         r"wall-clock budget ran out"):
        submission.probe_submission(HONEST, limits)


@pytest.mark.end_to_end
def test_an_unreadable_submission_gets_its_row_and_the_class_table_is_written(tmp_path,
                                                                              monkeypatch):
    """A file the grader cannot read (mode 000, as a submission can arrive) is that
    submission's zero with the reason; the others are graded and the class table is
    written (it used to abort the run with no table)."""
    import csv
    import os

    from dp_online_envs.lab.grading import grade, grader, parse_assignment

    given = tmp_path / "in"
    given.mkdir()
    (given / "alice.py").write_text((BAD / "deep_json.py").read_text())
    (given / "bob.py").write_text("this file cannot be read by the grader\n")
    real_read, real_probe = pathlib.Path.read_bytes, grader.probe_submission

    def read_bytes(self):
        if self.name == "bob.py":
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self)

    def probe(path, limits):
        pathlib.Path(path).read_bytes()
        return real_probe(path, limits)

    monkeypatch.setattr(pathlib.Path, "read_bytes", read_bytes)
    monkeypatch.setattr(grader, "probe_submission", probe)
    monkeypatch.setenv("DP_ONLINE_TEST_GRADE_SECRET", "s")
    assignment = parse_assignment({
        "name": "unreadable", "envs": ["DPBandit-MAB-v0"], "horizons": [20], "seeds": 1,
        "secret": {"env": "DP_ONLINE_TEST_GRADE_SECRET"}, "privacy": {"epsilon": 1},
        "references": ["private-exp2"], "limits": {"timeout": 60, "startup_timeout": 600},
        "audit": {"games": 1, "power_factors": [10]},
        "grading": {"regret": {"points": 50, "reference": "private-exp2", "factor": 1.5,
                               "zero_at": 3}}})
    result = grade(assignment, sorted(given.glob("*.py")), out_dir=tmp_path / "out")
    by_name = {g.submission: g for g in result.grades}
    assert set(by_name) == {"alice", "bob"} and by_name["bob"].score == 0
    assert by_name["bob"].sha256 == ""
    assert any("PermissionError" in p.reason and "Permission denied" in p.reason
               for p in by_name["bob"].parts)
    with open(tmp_path / "out" / "grades.csv", newline="") as table:
        rows = list(csv.DictReader(table))
    assert sorted(r["submission"] for r in rows) == ["alice", "bob"]
    assert os.path.isfile(tmp_path / "out" / "bob" / "report.html")
