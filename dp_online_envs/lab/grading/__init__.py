"""Course assignments: grade student learners in isolation, on hidden seeds.

``dp-online grade ASSIGNMENT SUBMISSIONS... -o OUT`` (or :func:`grade`): every
submission (a ``.py`` file with one ``agents.Agent`` subclass) plays in its own process
under the assignment's limits, on seeds derived from the instructor's secret, next to
the reference learners; its declared privacy budget is audited from its actions; the
score and its reasons go to a page and a JSON record per submission and one class table.

Modules: :mod:`.assignment` (the assignment file), :mod:`.submission` (finding and
loading a submission's learner in its own process), :mod:`.grader` (playing, auditing,
scoring), :mod:`.grades` (what it produces), :mod:`.report` (pages and tables), :mod:`.audit_step` (the one door to the
action audit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dp_online_envs.lab import lazy_exports

if TYPE_CHECKING:  # what static readers see; at run time :func:`__getattr__` imports each
    # name from its module on first use
    from dp_online_envs.lab.grading.assignment import (
        Assignment,
        load_assignment,
        parse_assignment,
    )
    from dp_online_envs.lab.grading.grader import grade
    from dp_online_envs.lab.grading.grades import ClassGrades, Grade, Part
    from dp_online_envs.lab.grading.submission import SubmissionError, find_submissions

#: Where each public name lives. The modules are imported when a name is first used: a
#: submission's sandboxed process imports :mod:`.submission` (to load the learner) and
#: none of the grader, the audit or SciPy (a second of CPU per game).
_HOME = {
    "Assignment": "assignment", "load_assignment": "assignment",
    "parse_assignment": "assignment", "grade": "grader", "ClassGrades": "grades",
    "Grade": "grades", "Part": "grades", "SubmissionError": "submission",
    "find_submissions": "submission",
}

__all__ = ["Assignment", "ClassGrades", "Grade", "Part", "SubmissionError", "find_submissions",
           "grade", "load_assignment", "parse_assignment"]

#: The public names, imported from their module on first use.
__getattr__, __dir__ = lazy_exports(globals(), _HOME)
