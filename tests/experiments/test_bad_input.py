"""Bad input named in one clear error (value and what was expected), or accepted on
purpose: the cases of the command line, sweep and assignment files, the grader, the
results tables, the vector play and the real-data ids."""

from __future__ import annotations

import copy
import json
import math
import pathlib

import gymnasium as gym
import pytest

import agents
import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs import build_env
from dp_online_envs.lab import cli
from dp_online_envs.lab.experiments import run_sweep
from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.sweep import load_sweep, parse_sweep
from dp_online_envs.lab.experiments.table import export_results, load_curves, load_results
from dp_online_envs.lab.grading import grader, load_assignment, parse_assignment
from dp_online_envs.lab.isolation import IsolationLimits

ASSIGNMENT = {"name": "t", "envs": ["DPBandit-MAB-v0"], "horizons": [40], "seeds": 2,
              "secret": {"env": "SOME_VAR"}, "privacy": {"epsilon": 1},
              "references": ["private-exp2", "exp3"]}
SWEEP = {"name": "s", "envs": ["DPFullInfo-Experts-v0"], "agents": ["hedge"],
         "horizons": [30], "seeds": 2}


def _one_line_error(capsys, argv) -> str:
    assert cli.main(argv) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ----------------------------------------------------------------- files of settings
def test_one_horizon_may_be_given_as_a_number_on_purpose():
    """Documented: any list key of a sweep or an assignment takes one value as is."""
    assert parse_assignment({**ASSIGNMENT, "horizons": 40}).horizons == (40,)
    assert [g.horizon for g in parse_sweep({**SWEEP, "horizons": 30}).games] == [30, 30]
    with pytest.raises(ExperimentError, match=r"horizon=40\.5 rejected: expected an integer"):
        parse_assignment({**ASSIGNMENT, "horizons": 40.5})


@pytest.mark.parametrize("name", ["a/b", "../up", "a\\b", "", ".", ".."])
def test_a_name_that_is_no_directory_name_is_refused(name):
    """The name names the default results and grades directories."""
    for parse, data, where in ((parse_assignment, ASSIGNMENT, "assignment"),
                               (parse_sweep, SWEEP, "sweep")):
        with pytest.raises(ExperimentError) as caught:
            parse({**data, "name": name})
        assert str(caught.value) == (
            f"{where}: name: name={name!r} rejected: expected a name without '/', '\\' or "
            "NUL, not empty, '.' or '..' (it names a directory)")


def test_an_unreadable_settings_file_is_one_error(tmp_path, monkeypatch):
    path = tmp_path / "a.yaml"
    path.write_text("name: t\n")
    real = pathlib.Path.read_text

    def refuse(self, *args, **kwargs):
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "read_text", refuse)
    for load, what in ((load_assignment, "assignment file"), (load_sweep, "sweep file")):
        with pytest.raises(ExperimentError, match=(
                rf"^{what} '{path}' cannot be read: Permission denied \(expected a file this "
                r"user can read\)$")):
            load(path)
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(ExperimentError, match=r"is not UTF-8 text \(byte 0\)"):
        load_sweep(binary)


# ------------------------------------------------------------------------ outputs
@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad-input") / "results"
    run_sweep(SWEEP, results=root, backend="serial", quiet=True)
    return root


def test_export_refuses_one_file_for_both_tables(results, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ExperimentError, match=r"^the games table and the curves table would "
                                              r"both be written to 'same\.csv': give --curves "
                                              r"another file$"):
        export_results(results, "same.csv", curves=tmp_path / "same.csv")
    line = _one_line_error(capsys, ["export", str(results), "-o", "x.csv", "--curves", "x.csv"])
    assert line.startswith("dp-online export: error: the games table and the curves table")
    assert not (tmp_path / "same.csv").exists() and not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("command", [["report", "-o", "{f}/r.html"], ["plot", "-o", "{f}/p"],
                                     ["export", "-o", "{f}/e.csv"]])
def test_an_output_under_a_regular_file_is_one_line(results, tmp_path, capsys, command,
                                                   monkeypatch):
    """Refused before any game is played (the report's reference games would print
    progress before the error)."""
    from dp_online_envs.lab.experiments import report

    monkeypatch.setattr(report, "run_games", lambda *a, **k: pytest.fail("played games"))
    plain = tmp_path / "plain"
    plain.write_text("a file, not a directory")
    name, flag, out = command
    line = _one_line_error(capsys, [name, str(results), flag, out.format(f=plain)])
    assert line.startswith(f"dp-online {name}: error: cannot write '{plain}")
    assert line.endswith("choose another path")
    assert plain.read_text() == "a file, not a directory"


def test_a_sweep_under_a_regular_file_is_one_line(tmp_path, capsys):
    plain = tmp_path / "plain"
    plain.write_text("x")
    sweep = tmp_path / "s.json"
    sweep.write_text(json.dumps(SWEEP))
    line = _one_line_error(capsys, ["sweep", str(sweep), "--results", str(plain / "r")])
    assert line == (f"dp-online sweep: error: results directory '{plain / 'r'}' is not usable: "
                    f"'{plain}' is not a directory (expected a writable directory)")


def test_grading_into_a_path_under_a_regular_file_is_refused_before_playing(
        tmp_path, capsys, monkeypatch):
    plain = tmp_path / "plain"
    plain.write_text("x")
    assignment = tmp_path / "a.json"
    assignment.write_text(json.dumps(ASSIGNMENT))
    submission = tmp_path / "sub.py"
    submission.write_text("")
    monkeypatch.setenv("SOME_VAR", "a secret of some length")
    import dp_online_envs.lab.grading  # the command imports it when it runs

    monkeypatch.setattr(dp_online_envs.lab.grading, "grade",
                        lambda *a, **k: pytest.fail("graded anyway"))
    line = _one_line_error(capsys, ["grade", str(assignment), str(submission), "-o",
                                    str(plain / "g")])
    assert line == (f"dp-online grade: error: output directory '{plain / 'g'}' is not usable: "
                    f"'{plain}' is not a directory (expected a writable directory)")


def test_records_missing_keys_are_named_not_a_key_error(results):
    from dp_online_envs.lab.experiments.store import load_records

    good = load_records(results)
    broken = copy.deepcopy(good)
    del broken[1]["regret"], broken[1]["game_id"]
    for load in (load_results, load_curves):
        with pytest.raises(ExperimentError, match=r"^records\[1\] is not a game record: missing "
                                                  r"key\(s\) \['game_id', 'regret'\]"):
            load(broken)
    assert len(load_results(good)) == len(good)


# ------------------------------------------------------------------ isolation limits
def test_an_address_space_limit_beyond_the_machine_word_is_refused(capsys):
    with pytest.raises(ValueError, match=r"^memory_bytes=9223372036854775808 rejected: "
                                         r"expected an integer in \[1, 4611686018427387904\]"):
        IsolationLimits(memory_bytes=2**63)
    with pytest.raises(SystemExit) as caught:  # argparse: usage, then the one error line
        cli.main(["run", "DPBandit-MAB-v0", "exp3", "--isolate", "--memory-mb", str(10**13)])
    assert caught.value.code == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].endswith(
        "argument --memory-mb: memory_mb=10000000000000 rejected: expected an integer in "
        "[1, 4398046511104]") and "Traceback" not in err
    with pytest.raises(ExperimentError, match=r"memory_mb=10000000000000 rejected: expected an "
                                              r"integer in \[64, 4398046511104\]"):
        parse_assignment({**ASSIGNMENT, "limits": {"memory_mb": 10**13}})
    assert IsolationLimits(memory_bytes=10**9 * 2**20).memory_bytes == 10**9 * 2**20


# ---------------------------------------------------------------------- the grader
def test_an_invalid_declared_budget_is_a_reason_not_an_abort():
    def rec(eps, delta):
        return {"privacy_epsilon": eps, "privacy_delta": delta, "privacy_mechanism": "m"}

    for eps, delta in ((math.nan, 0.0), (1.0, math.nan), (-1.0, 0.0), (1.0, 2.0)):
        budget, note = grader.declared_budget([rec(1.0, 0.0), rec(eps, delta)])
        assert budget is None
        assert note == (f"the learner declared an invalid budget (epsilon={eps!r}, "
                        f"delta={delta!r}); expected epsilon >= 0 and delta in [0, 1]")


def test_one_submission_the_grader_trips_on_does_not_stop_the_others(tmp_path, monkeypatch):
    """Whatever error grading one submission raises (StopIteration from a bug, say), that
    submission gets zero with the reason, and the others are graded (each with the
    audit's power filled in)."""
    from dp_online_envs.lab.grading.grades import Grade

    monkeypatch.setattr(grader, "_power_started",  # the audit's power, not measured here
                        lambda *args: lambda: ({"power": 1}, "its power"))
    files = [tmp_path / f"{n}.py" for n in ("first", "trips", "last")]
    for f in files:
        f.write_text("")
    graded = []

    def grade_one(job, path):
        if path.stem == "trips":
            raise StopIteration
        graded.append(path.stem)
        return Grade(submission=path.stem, path=str(path), power=None, power_text="",
                     sandbox="s", sha256="", learner=None, settings=[], declared=None,
                     audit=None, records=[], parts=[])

    monkeypatch.setattr(grader, "_grade_one", grade_one)
    result = grader.grade(parse_assignment(ASSIGNMENT), files, secret="s", quiet=True)
    assert graded == ["first", "last"]
    first, trips, last = result.grades
    assert (first.submission, last.submission) == ("first", "last")
    assert trips.submission == "trips" and sum(p.earned for p in trips.parts) == 0
    assert {p.reason for p in trips.parts} == {"grading failed: StopIteration: "}
    assert {g.power_text for g in result.grades} == {"its power"}


# --------------------------------------------------------------------- vector play
def test_play_batch_names_a_scalar_agent_or_env():
    env = build_env("DPBandit-MAB-v0", horizon=10)
    venv = gym.make_vec("DPBandit-MAB-v0", num_envs=2, horizon=10)
    scalar = agents.make("exp3", env.unwrapped.problem, seed=0)
    with pytest.raises(TypeError, match=r"^learner must be a vector learner \(agents\.vector"
                                        r"\.make_vector\), got EXP3: play a scalar agent"):
        agents.play_batch(venv, scalar, [0, 1])
    with pytest.raises(TypeError, match=r"^venv must be a vector env .*, got "
                                        r"FeedbackGuard: play one env with agents\.play"):
        agents.play_batch(env, scalar, [0, 1])


# ------------------------------------------------------------------ real-data ids
def test_a_real_data_horizon_longer_than_its_data():
    """The price series cannot repeat its days: refused when the env is built. The
    labelled data is cycled on purpose, one fresh permutation per pass."""
    with pytest.raises(ValueError, match=r"^horizon=1000000 rejected: the price series has "
                                         r"(\d+) days; expected a horizon <= \1$"):
        gym.make("DPFullInfo-Portfolio-v1", horizon=10**6)
    env = gym.make("DPBandit-Classes-v0", horizon=1500)
    env.reset(seed=0)
    order = env.unwrapped.adversary.order
    n = 569
    assert len(order) == 1500
    for start in (0, n):  # each full pass is a permutation of the rows
        assert sorted(order[start:start + n].tolist()) == list(range(n))
    assert len(set(order[2 * n:].tolist())) == 1500 - 2 * n
