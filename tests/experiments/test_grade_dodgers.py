"""Submissions that dodge an audit whose games differ from the graded ones are refuted by
the one-run audit, which plays its games as graded games are played; the honest course
sample is not. Graded end to end: every submission in its own sandboxed processes.
"""

from __future__ import annotations

import dataclasses
import pathlib

import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs.lab.grading import grade, load_assignment

ROOT = pathlib.Path(__file__).resolve().parents[2]
COURSE = ROOT / "examples" / "course"
HONEST = COURSE / "submissions" / "honest.py"
BAD = pathlib.Path(__file__).resolve().parent / "grade_submissions"


#: Learners that dodge an audit which plays games unlike the graded ones
#: (``grade_submissions/dodges_*.py``): each is plain EXP3 in every graded game.
DODGERS = ("dodges_horizon", "dodges_resets", "dodges_late_rounds")


def test_dodgers_are_refuted_and_the_honest_learner_is_not():
    """The course assignment with its default audit settings (16 audit games per env
    and horizon), but graded at T = 4096 instead of 16384 and on one hidden seed: an
    isolated round costs about 0.25 ms of CPU, so the default's 21 games of T = 16384 per
    submission take over a minute of CPU each (``examples/course/measure_audit.py`` measures
    the default). The late-rounds dodger is noise-free from round 1001, a quarter of
    these games."""
    course = load_assignment(COURSE / "assignment.yaml")
    audit = dataclasses.replace(course.audit, power_factors=(10.0,))  # one power audit
    # no verdict may hang on the machine's load: the calls' timeouts far above their time
    limits = dataclasses.replace(course.limits, startup_timeout=600.0, timeout=600.0)
    assignment = dataclasses.replace(course, horizons=(4096,), seeds=1, audit=audit,
                                     limits=limits)
    assert assignment.audit.settings.games == 16 and assignment.audit.settings.ratio == 6
    # (the course's cheat.py is EXP3 too: dodges_horizon is it in games this long)
    files = [HONEST, *(BAD / f"{name}.py" for name in DODGERS)]
    result = grade(assignment, files, secret="course-secret", backend="local", workers=2)
    by_name = {g.submission: g for g in result.grades}
    for name in DODGERS:
        g = by_name[name]
        assert g.declared[:2] == (1.0, 0.0) and g.parts[1].earned == 0.0, name  # refuted
        assert g.audit["refuted"] is True and g.parts[2].earned == 0.0, (name, g.audit)
        assert g.audit["eps_lb"] > 1.0 and g.audit["games"] == 16, name
        assert g.audit["horizons"] == [4096], name  # the graded horizon, not a short one
        assert "refuted" in g.parts[2].reason, name
        assert g.audit_cpu_seconds is not None and g.audit_cpu_seconds > 0, name
    honest = by_name["honest"]
    assert honest.audit is not None, honest.parts[2].reason
    assert honest.audit["refuted"] is False and honest.parts[2].earned == 30
    assert result.power["reference"] == "private-exp2" and result.power["factors"] == [10.0]
    assert result.power_text and result.grades[0].power_text == result.power_text
