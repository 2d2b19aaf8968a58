"""``dp-online grade``: submissions graded isolated on secret-keyed seeds, failures scored
zero with their reason, the cheat caught by the audit, reports written.

Every submission plays in spawned processes (a couple of seconds each on a busy
machine), so the assignments here are tiny: one env, T = 40, one or two hidden seeds.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import html
import json
import os
import pathlib

import pytest

import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs.lab.cli import main
from dp_online_envs.lab.grading import grade, load_assignment, parse_assignment
from dp_online_envs.lab.grading.assignment import DEFAULT_SECRET_ENV

ROOT = pathlib.Path(__file__).resolve().parents[2]
COURSE = ROOT / "examples" / "course"
HONEST = COURSE / "submissions" / "honest.py"
CHEAT = COURSE / "submissions" / "cheat.py"
BAD = pathlib.Path(__file__).resolve().parent / "grade_submissions"
VAR = "DP_ONLINE_TEST_GRADE_SECRET"

TINY = {
    "name": "tiny",
    "envs": ["DPBandit-MAB-v0"],
    "horizons": [40],
    "seeds": 2,
    "secret": {"env": VAR},
    "privacy": {"epsilon": 1},
    "references": ["private-exp2", "exp3"],
    "limits": {"timeout": 5, "startup_timeout": 600},  # imports are slow on a busy machine
    "audit": {"games": 6, "power_factors": [10]},  # 6 games of T = 40: a crash in half
    "grading": {"regret": {"points": 50, "reference": "private-exp2", "factor": 1.5,
                           "zero_at": 3}},
}


def tiny(**changes) -> dict:
    data = copy.deepcopy(TINY)
    data.update(changes)
    return data


def sample(tmp_path: pathlib.Path) -> pathlib.Path:
    """:data:`HONEST` copied as ``honest.py`` (graded under that name)."""
    path = tmp_path / "sample" / "honest.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(HONEST.read_text())
    return path


def numbers(grade_dict: dict) -> dict:
    """The numbers of a grade (what a re-grade must reproduce)."""
    return {"score": grade_dict["score"], "parts": grade_dict["parts"],
            "settings": grade_dict["settings"], "declared": grade_dict["declared"],
            "audit": grade_dict["audit"],
            "regrets": [(r["seed_index"], r["regret"], r["regret_curve_hi"])
                        for r in grade_dict["records"]]}


@pytest.mark.end_to_end
def test_a_regrade_with_the_same_secret_is_identical_and_another_secret_changes_it(tmp_path):
    # two audit games: the finding's guess counts still hang on the secret's audit seed,
    # with a third of the processes of the default six
    assignment = parse_assignment(tiny(seeds=1, audit={"games": 2, "power_factors": [10]}))
    honest = sample(tmp_path)
    first = grade(assignment, [honest], secret="instructor-secret-1", out_dir=tmp_path / "a")
    isolated = dataclasses.replace(assignment, isolate_references=True)
    again = grade(isolated, [honest], secret="instructor-secret-1", out_dir=tmp_path / "b")
    other = grade(assignment, [honest], secret="instructor-secret-2")
    a, b = (json.loads((d / "honest" / "grade.json").read_text())
            for d in (tmp_path / "a", tmp_path / "b"))
    assert a == b  # the JSON record, byte for byte the same data
    assert first.references == again.references  # references isolated or not: same records
    mine = first.grades[0].to_dict()
    assert [r["regret"] for r in mine["records"]] != [
        r["regret"] for r in other.grades[0].to_dict()["records"]]
    assert [r["regret"] for r in first.references] != [r["regret"] for r in other.references]
    # the hidden seeds never reach a report
    assert all("env_seed" not in r and "agent_seed" not in r
               for r in mine["records"] + first.references)
    assert numbers(mine) == numbers(a)
    # the references and the submission faced the same loss sequences: same comparator
    ref = {(r["seed_index"]): r["comparator_hi"] for r in first.references
           if r["agent"] == "exp3"}
    assert {r["seed_index"]: r["comparator_hi"] for r in mine["records"]} == ref


FAILURES = {  # submission -> what its regret part's reason must say
    "crashes": "ZeroDivisionError: the learner divided by zero in round 3",
    "hangs": "agent timed out: no answer to act within 5 s",
    "nan_action": "expected integers",
    "bad_arm": "arm index 99 out of range",
    "snoops": "secret variables visible to the submission: []; game objects in the "
              "submission's process: []",
    "two_learners": "expected exactly one agents.Agent subclass (with act and update) defined "
                    "in the file, found 2: ['First', 'Second']",
    "no_learner": "found 0",
    "deep_json": "malformed reply from the process importing the submission: JSON nested "
                 "too deep to decode",
}


@pytest.mark.end_to_end
def test_misbehaving_submissions_get_zero_with_the_reason_and_the_others_are_graded(
        tmp_path, monkeypatch):
    monkeypatch.setenv(VAR, "a-secret-in-the-environment")
    assignment = parse_assignment(tiny(seeds=1))
    files = [BAD / f"{name}.py" for name in FAILURES] + [BAD / "fails_under_audit.py",
                                                         sample(tmp_path)]
    # two grading processes: the hanging and crashing submissions' waits overlap
    result = grade(assignment, files, out_dir=tmp_path, workers=2)
    assert os.environ[VAR] == "a-secret-in-the-environment"  # hidden only while grading
    by_name = {g.submission: g for g in result.grades}
    for name, reason in FAILURES.items():
        regret = by_name[name].parts[0]
        assert regret.name == "regret" and regret.earned == 0.0, name
        assert reason in regret.reason, (name, regret.reason)
        assert by_name[name].score == 0.0, name
        page = (tmp_path / name / "report.html").read_text()
        assert html.escape(reason.split(":")[0]) in page
    audited = by_name["fails_under_audit"]  # crashes in about half of all its games
    assert audited.audit is None and audited.parts[2].earned == 0.0
    assert ("the learner failed under audit: agent raised during act: RuntimeError: crashing "
            "in round 4 of a doomed game") in audited.parts[2].reason
    honest = by_name["honest"]
    (setting,) = honest.settings  # graded as usual (its points on one game of 40 rounds
    assert setting.regret is not None and not setting.failed  # are the luck of that game)
    assert honest.declared[:2] == (1.0, 0.0)
    assert honest.parts[1].earned == 20 and honest.audit is not None
    with open(tmp_path / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["submission"] for r in rows) == sorted([*FAILURES, "fails_under_audit",
                                                            "honest"])
    # the CSV holds the score rounded to 6 decimals (grading/report.py)
    assert float(next(r for r in rows if r["submission"] == "honest")["score"]) == round(
        honest.score, 6)
    table = (tmp_path / "grades.html").read_text()
    assert all(f"href='{name}/report.html'" in table for name in [*FAILURES, "honest"])


@pytest.mark.end_to_end
def test_the_command_grades_the_starter_low_and_writes_the_reports(tmp_path, monkeypatch,
                                                                    capsys):
    monkeypatch.setenv("DP_ONLINE_GRADE_SECRET", "course-secret")
    # one hidden seed: the starter's regret is ~1.48x private-exp2's on it (zero points
    # from 1.35x); averaging over seeds is tested in test_grade_rules.py
    data = tiny(horizons=[16384], seeds=1, secret={}, references=["private-exp2"],
                grading={"regret": {"factor": 1.15, "zero_at": 1.35}})
    (tmp_path / "a.json").write_text(json.dumps(data))
    code = main(["grade", str(tmp_path / "a.json"), str(COURSE / "starter_agent.py"), "-o",
                 str(tmp_path / "out"), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    record = json.loads((tmp_path / "out" / "starter_agent" / "grade.json").read_text())
    # uniform play: regret ~1.4x private-exp2's, no budget declared, nothing audited
    regret, declared, audit = record["parts"]
    assert record["total"] == 100.0 and record["score"] == regret["earned"]
    assert regret["earned"] < 0.25 * regret["points"]
    assert "mean regret" in regret["reason"] and "private-exp2" in regret["reason"]
    assert declared["earned"] == audit["earned"] == 0.0
    assert "declared no privacy budget" in declared["reason"]
    assert f"starter_agent  {record['score']:6.3g} / 100" in out
    assert (tmp_path / "out" / "grades.csv").read_text().count("\n") == 2


def test_the_command_refuses_a_missing_secret_before_playing(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(VAR, raising=False)
    (tmp_path / "a.json").write_text(json.dumps(tiny()))
    code = main(["grade", str(tmp_path / "a.json"), str(HONEST), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert f"environment variable {VAR} is not set or empty" in err
    assert not (tmp_path / "out").exists()


def test_the_default_secret_variable_is_documented_in_the_course_assignment():
    course = load_assignment(COURSE / "assignment.yaml")
    assert course.secret.env == DEFAULT_SECRET_ENV and course.secret.salt is None
    assert course.epsilon == 1.0 and course.delta == 0.0
    assert [r.label for r in course.references] == ["private-exp2", "exp3",
                                                    "private-bandit(base=exp3)", "uniform"]
    assert course.audit.reference == "private-bandit(base=exp3)"
    assert course.references[0].epsilon == 1.0  # a private reference plays the budget


def test_the_honest_sample_noises_each_loss_with_the_exact_discrete_laplace_sampler():
    """Its noisy loss is (round(l / g) + Z) * g with Z the exact sampler's next integer
    from the learner's own generator: replayed here, bit for bit."""
    import gymnasium as gym
    import numpy as np

    from agents.common import NoiseQueue
    from dp_online_envs.lab.grading.submission import learner_class

    cls = learner_class(str(HONEST))
    problem = gym.make("DPBandit-MAB-v0", horizon=300).get_wrapper_attr("problem")
    learner = cls(problem, epsilon=1.0, delta=0.0, seed=11)
    learner.reset(11)
    assert not learner.privacy.idealized
    assert (learner.privacy.epsilon, learner.privacy.delta) == (1.0, 0.0)
    losses = np.random.default_rng(0).random(300)
    for t, loss in enumerate(losses):
        arm = learner.act()
        replay = np.random.Generator(np.random.PCG64())
        replay.bit_generator.state = learner.rng.bit_generator.state
        queue = NoiseQueue(learner.noise)
        queue._block, queue._i = list(learner.draws._block), learner.draws._i
        g = learner.noise.grid
        expected = learner.totals[arm] + (round(loss / g) + queue.next(replay, 300 - t)) * g \
            / learner.p[arm]
        learner.update(arm, np.array([loss]))
        assert learner.totals[arm] == expected
        assert learner.rng.bit_generator.state == replay.bit_generator.state
