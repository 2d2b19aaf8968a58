"""Submission names: a file's stem never becomes a path or a formula.

Each submission's report directory and table row come from a safe, unique name
(:func:`~dp_online_envs.lab.grading.submission.submission_names`); every text cell of
``grades.csv`` that a spreadsheet would read as a formula is escaped.
"""

from __future__ import annotations

import csv
import json

import pytest

import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs.lab.grading import grade, parse_assignment
from dp_online_envs.lab.grading.report import FORMULA_START, spreadsheet_safe
from dp_online_envs.lab.grading.submission import safe_name, submission_names

ASSIGNMENT = {
    "name": "names", "envs": ["DPBandit-MAB-v0"], "horizons": [40], "seeds": 1,
    "secret": {"salt": "a-salt-for-the-names-test"}, "privacy": {"epsilon": 1},
    "references": ["private-exp2"], "limits": {"timeout": 20, "startup_timeout": 600},
    "audit": {"games": 1, "power_factors": [10]},
}
# imported by the probe: prints a line (its log) and defines no learner (zero, fast)
NO_LEARNER = 'print("x" * 1000)\n'
# a learner whose class name is a formula (the table's "learner" cell)
FORMULA_LEARNER = '''import agents


class Learner(agents.Agent):
    name = "formula"
    feedback = "bandit"

    def act(self):
        return 0

    def update(self, action, feedback):
        self.t += 1


Learner.__name__ = "=HYPERLINK(\\"http://evil.example\\",\\"click\\")"
'''
HOSTILE = ["...", "grades.csv", '=HYPERLINK("evil.example","x")', "new\nline", "a b", "a_b",
           "-cmd", "@SUM(A1)"]


@pytest.mark.parametrize("stem, name", [
    ("alice_smith", "alice_smith"), ("Bob-2", "Bob-2"), ("...", "submission"),
    ("..", "submission"), ("grades.csv", "grades_csv"), ("new\nline", "new_line"),
    ('=HYPERLINK("evil.example","x")', "HYPERLINK_evil_example_x"), ("-cmd", "cmd"),
    ("@SUM(A1)", "SUM_A1"), ("élève", "l_ve"), ("x" * 65, "x" * 48), ("_x_", "x"),
])
def test_a_stem_is_kept_only_when_safe(stem, name):
    assert safe_name(stem) == name


def test_names_that_collide_get_the_digest_of_their_path(tmp_path):
    paths = [tmp_path / "a b.py", tmp_path / "a_b.py", tmp_path / "A_B.py", tmp_path / "c.py"]
    names = submission_names(paths)
    assert names[3] == "c"
    assert len({n.casefold() for n in names}) == 4
    assert all(n.startswith(("a_b-", "A_B-")) and len(n) == len("a_b-") + 8 for n in names[:3])
    assert submission_names(paths) == names  # the same files, the same names


@pytest.mark.parametrize("cell, escaped", [
    ("=1+1", "'=1+1"), ("+1", "+1"), ("+A1", "'+A1"), ("-2", "-2"), ("-inf", "-inf"),
    ("-cmd", "'-cmd"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("plain", "plain"),
    (-3.5, -3.5), (0, 0),
])
def test_a_cell_a_spreadsheet_would_run_is_escaped(cell, escaped):
    assert spreadsheet_safe(cell) == escaped


@pytest.mark.end_to_end
def test_hostile_file_names_land_under_the_output_and_the_class_is_graded(tmp_path):
    given = tmp_path / "given"
    given.mkdir()
    files = [given / f"{stem}.py" for stem in HOSTILE]
    for f in files:
        f.write_text(NO_LEARNER)
    files.append(given / "formula.py")
    files[-1].write_text(FORMULA_LEARNER)
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "log.txt").write_text("the instructor's own log\n")
    assignment = parse_assignment(ASSIGNMENT)
    for _ in range(2):  # the second run re-grades into a directory that has the table
        result = grade(assignment, files, out_dir=out)
    assert (tmp_path / "log.txt").read_text() == "the instructor's own log\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["given", "log.txt", "out"]
    names = [g.submission for g in result.grades]
    assert names == submission_names(files) and len(set(names)) == len(files)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [*names, "grades.csv", "grades.html", "audit_power.json"])
    for name in names:
        assert sorted(p.name for p in (out / name).iterdir()) == [
            "grade.json", "log.txt", "report.html", "run.json"]
    assert "x" * 1000 in (out / "submission" / "log.txt").read_text()
    formula = result.grades[-1]
    assert formula.learner["class_name"].startswith("=HYPERLINK")
    assert formula.parts[0].earned > 0  # graded after every hostile name
    with open(out / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["submission"] for r in rows] == names
    cells = [v for r in rows for v in r.values()]
    assert not any(v.startswith(FORMULA_START) and not _number(v) for v in cells)
    assert rows[-1]["learner"] == "'" + formula.learner["class_name"]
    assert json.loads((out / "formula" / "grade.json").read_text())["submission"] == "formula"


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("name", ["..", "../x", "a/b", "", "-x", "grades.csv"])
def test_a_report_is_never_written_under_a_name_that_is_a_path(tmp_path, name):
    from dp_online_envs.lab.grading.grades import Grade
    from dp_online_envs.lab.grading.report import write_submission

    g = Grade(submission=name, path="x.py", sha256="", learner=None, parts=[], settings=[],
              declared=None, audit=None, power=None, power_text="", records=[], sandbox="")
    with pytest.raises(ValueError, match="rejected: expected a name matching"):
        write_submission(g, None, tmp_path / "out")
    assert not (tmp_path / "out").exists()
