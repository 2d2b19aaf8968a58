"""Submissions that dodge an audit whose games differ from the graded ones are refuted by
the one-run audit, which plays its games as graded games are played; the honest course
sample is not. At the course assignment's default settings (its horizon, audit games,
seed derivation), each audit game in a fresh copy of the submission's module, as a
fresh process gives it; and graded end to end, every submission in its own sandboxed
processes, at a shorter horizon with fewer audit games.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import pathlib

import pytest

import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs.lab.grading import audit_step, grade, load_assignment
from dp_online_envs.lab.grading.grader import audit_games, audit_seed, score
from dp_online_envs.lab.grading.submission import SubmissionInfo, SubmissionLoader

from .liars import BanditHorizonLiar

ROOT = pathlib.Path(__file__).resolve().parents[2]
COURSE = ROOT / "examples" / "course"
HONEST = COURSE / "submissions" / "honest.py"
BAD = pathlib.Path(__file__).resolve().parent / "grade_submissions"


#: Learners that dodge an audit which plays games unlike the graded ones
#: (``grade_submissions/dodges_*.py``): each is plain EXP3 in every graded game.
DODGERS = ("dodges_horizon", "dodges_resets", "dodges_late_rounds")
_fresh = itertools.count()


def fresh_process_learner(path: pathlib.Path, epsilon: float = 1.0):
    """``make_learner(problem, space, seed)`` that imports ``path`` anew for every game
    (module state such as a reset counter starts afresh, as in a graded game's fresh
    process) and builds its one learner class with ``epsilon`` (the assignment's)."""
    def make(problem, space, seed):
        spec = importlib.util.spec_from_file_location(f"fresh_{path.stem}_{next(_fresh)}",
                                                      path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        (cls,) = [v for v in vars(module).values() if isinstance(v, type)
                  and v.__module__ == module.__name__ and hasattr(v, "act")]
        return cls(problem, epsilon=epsilon, delta=0.0, seed=seed)
    return make


@pytest.mark.end_to_end
@pytest.mark.parametrize("name", [*DODGERS, "honest"])
def test_the_default_audit_refutes_every_dodger_and_not_the_honest_learner(name):
    """The course's assignment as shipped: T = 16384, 16 audit games, the audit seed
    derived from a secret; the honest learner with its noise-free twin (the audit's
    power on it), each 16 games of about 13 s of CPU."""
    course = load_assignment(COURSE / "assignment.yaml")
    assert course.horizons == (16384,) and course.audit.settings.games == 16
    path = HONEST if name == "honest" else BAD / f"{name}.py"
    loader = SubmissionLoader(SubmissionInfo(str(path), "Learner", name, "bandit", True, "",
                                             ""))
    settings = dataclasses.replace(course.audit.settings,
                                   seed=audit_seed(course, "a course secret"))
    finding = audit_step.audit_with_twin(lambda eps: fresh_process_learner(path, eps), 1.0,
                                         audit_games(course, loader), (1.0, 0.0), settings)
    assert finding.games == 16 and finding.horizons == (16384,)
    assert finding.canaries == 16 * 16384
    if name == "honest":  # not refuted, with power: its noise-free twin is refuted
        assert not finding.refuted and finding.eps_lb <= 1.0, str(finding)
        assert finding.twin["refuted"] and finding.verdict == "not refuted", str(finding)
        audit = score(course, [], (1.0, 0.0, ""), "", finding, "")[2]
        assert audit.earned == 30 and "noise-free twin" in audit.reason, audit.reason
    else:
        assert finding.refuted and finding.eps_lb > 1.0, str(finding)


def test_a_learner_the_audit_cannot_read_earns_no_audit_points():
    """A claim the audit could not have caught lying earns no audit points: ``unseen``
    (EXP3 with no noise at a thirtieth of its learning rate, ignoring its epsilon) is not
    refuted, but neither is its noise-free twin (itself), so its verdict is "no audit
    power" and the audit part 0 with that reason. The course's assignment at T = 2048
    with 8 audit games, in process."""
    course = load_assignment(COURSE / "assignment.yaml")
    assignment = dataclasses.replace(course, horizons=(2048,))
    settings = dataclasses.replace(course.audit.settings, games=8,
                                   seed=audit_seed(assignment, "a course secret"))
    path = BAD / "unseen.py"
    loader = SubmissionLoader(SubmissionInfo(str(path), "Learner", "unseen", "bandit", True,
                                             "", ""))
    finding = audit_step.audit_with_twin(lambda eps: fresh_process_learner(path, eps), 1.0,
                                         audit_games(assignment, loader), (1.0, 0.0), settings)
    assert not finding.refuted and finding.twin is not None, str(finding)
    assert not finding.twin["refuted"] and finding.verdict == "no audit power", str(finding)
    audit = score(assignment, [], (1.0, 0.0, ""), "", finding, "")[2]
    assert audit.earned == 0 and audit.reason.startswith("no audit power"), audit.reason


@pytest.mark.end_to_end
def test_a_dodger_graded_end_to_end_is_refuted_and_the_honest_learner_is_not():
    """The course assignment graded end to end, but at T = 2048 instead of 16384, on one
    hidden seed and with 8 audit games instead of 16: every graded and audit game is a
    sandboxed process of its own (about a second of CPU to start), and an isolated round
    costs about 0.25 ms of CPU (``benchmarks/grader_audit.py`` grades every dodger at the
    default). The dodger graded is the one whose dodge needs the grader's processes: it
    counts its process's resets. At these settings its audit's eps_lb is about 1.8 (1.0
    claimed); the honest learner's is 0, and the grader plays its noise-free twin, which
    these few games cannot refute: no audit power, no audit points."""
    course = load_assignment(COURSE / "assignment.yaml")
    audit = dataclasses.replace(course.audit, power_factors=(10.0,),  # one power audit
                                settings=dataclasses.replace(course.audit.settings, games=8))
    # no verdict may hang on the machine's load: the calls' timeouts far above their time
    limits = dataclasses.replace(course.limits, startup_timeout=600.0, timeout=600.0)
    assignment = dataclasses.replace(course, horizons=(2048,), seeds=1, audit=audit,
                                     limits=limits)
    assert assignment.audit.settings.games == 8 and assignment.audit.settings.ratio == 6
    files = [HONEST, BAD / "dodges_resets.py"]
    result = grade(assignment, files, secret="course-secret", backend="local", workers=2)
    by_name = {g.submission: g for g in result.grades}
    g, name = by_name["dodges_resets"], "dodges_resets"
    assert g.declared[:2] == (1.0, 0.0) and g.parts[1].earned == 0.0, name  # refuted
    assert g.audit["refuted"] is True and g.parts[2].earned == 0.0, (name, g.audit)
    assert g.audit["eps_lb"] > 1.0 and g.audit["games"] == 8, name  # the assignment's count
    assert g.audit["horizons"] == [2048], name  # the graded horizon, not a short one
    assert "refuted" in g.parts[2].reason, name
    assert g.audit_cpu_seconds is not None and g.audit_cpu_seconds > 0, name
    honest = by_name["honest"]
    assert honest.audit is not None, honest.parts[2].reason
    # not refuted, but at 8 games of T = 2048 its noise-free twin is not refuted either
    # (about 11 guesses; it is at the course's 16 games of T = 16384): no audit power
    assert honest.audit["refuted"] is False and honest.audit["twin"] is not None
    assert honest.audit["verdict"] == "no audit power", honest.audit
    assert honest.parts[2].earned == 0 and honest.parts[2].reason.startswith("no audit power")
    assert result.power["reference"] == "private-bandit(base=exp3)"
    assert result.power["factors"] == [10.0]
    assert result.power_text and result.grades[0].power_text == result.power_text


def test_a_learner_private_only_at_one_graded_horizon_is_refuted():
    """An assignment graded at T = 1024 and 4096: a learner that is private-exp2 at
    4096 and plain EXP3 at 1024, claiming epsilon = 0.1, is refuted, because the audit plays every graded horizon
    (16 games each, drawn as graded games are). Audited at 4096 only, it is not."""
    course = load_assignment(COURSE / "assignment.yaml")
    assignment = dataclasses.replace(course, horizons=(1024, 4096))
    settings = dataclasses.replace(course.audit.settings,
                                   seed=audit_seed(assignment, "a course secret"))
    games = audit_games(assignment, BanditHorizonLiar)
    assert sorted(g.horizon for g in games) == [1024, 4096]

    def make(problem, space, seed):
        return BanditHorizonLiar(problem, epsilon=0.1, delta=0.0, seed=seed)

    # claiming 0.1: the arm rule makes few guesses at T = 1024 (15, 13 right: eps_lb
    # 0.56 on this secret), too few to refute epsilon = 1
    finding = audit_step.audit_one_run(make, games, (0.1, 0.0), settings)
    assert finding.horizons == (1024, 4096) and finding.games == 32
    assert finding.refuted and finding.eps_lb > 0.1, str(finding)
    only_long = audit_step.audit_one_run(make, games[1:], (0.1, 0.0), settings)
    assert only_long.horizons == (4096,) and not only_long.refuted, str(only_long)


@pytest.mark.end_to_end
@pytest.mark.parametrize("name", ["forced_exp3", "forced_greedy"])
def test_the_default_audit_refutes_the_forced_exploration_cheats(name):
    """Noise-free EXP3, or greedy on raw means, that also plays a round-robin arm every
    64th round keeps every arm in play, so no arm is ever dropped; at the course's
    defaults the audit skips the plays of the schedule common to the audit games and
    reads the rest: EXP3 drops an arm after a high loss (about 100 guesses, 93-97%
    right), greedy leaves its leader (60-70 guesses, all right). About 4 s of CPU each,
    each audit game in a fresh copy of the submission's module."""
    path = BAD / f"{name}.py"
    course = load_assignment(COURSE / "assignment.yaml")
    loader = SubmissionLoader(SubmissionInfo(str(path), "Learner", name, "bandit", True, "",
                                             ""))
    settings = dataclasses.replace(course.audit.settings,
                                   seed=audit_seed(course, "a course secret"))
    finding = audit_step.audit_one_run(fresh_process_learner(path),
                                       audit_games(course, loader), (1.0, 0.0), settings)
    assert finding.horizons == (16384,) and finding.games == 16
    assert finding.refuted and finding.eps_lb > 1.0, str(finding)


def test_the_report_prints_every_verdict_with_its_power():
    """The course report's audit section: a finding not refuted, or without power, is
    printed with the power on that learner; a refuted one needs none."""
    from dp_online_envs.lab.audit.one_run import OneRunFinding, rr_power
    from dp_online_envs.lab.grading.grades import Grade, finite_json
    from dp_online_envs.lab.grading.report import _audit_section

    base = OneRunFinding(1.0, 0.0, 0.2, False, 0.95, 16, (16384,), 16384 * 16, 9000, 40,
                         25, "rules", rr_epsilon=rr_power(40, 1.0))
    none = OneRunFinding(1.0, 0.0, 0.0, False, 0.95, 16, (16384,), 16384 * 16, 9000, 0, 0,
                         "rules")
    refuted = OneRunFinding(1.0, 0.0, 2.5, True, 0.95, 16, (16384,), 16384 * 16, 9000, 100,
                            97, "rules", rr_epsilon=rr_power(100, 1.0))

    def section(finding):
        g = Grade("s", "s.py", "", None, [], [], (1.0, 0.0, "m"),
                  finite_json(finding.to_dict()), None, "power text", [], "sandbox")
        return _audit_section(g).split("<table>")[0]

    stands = section(base).replace("&#x27;", "'")
    assert ("Verdict:</b> not refuted (power on this learner: no noise-free twin played; "
            "randomized response on its 40 guessed rounds refuted from eps' = ") in stands
    blind = section(none)
    assert "no audit power (power on this learner:" in blind and "0 guesses" in blind
    assert section(refuted).endswith("Verdict:</b> refuted</p>")
