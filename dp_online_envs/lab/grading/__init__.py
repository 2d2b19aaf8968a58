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

from dp_online_envs.lab.grading.assignment import (
           Assignment,
           load_assignment,
           parse_assignment,
)
from dp_online_envs.lab.grading.grader import grade
from dp_online_envs.lab.grading.grades import ClassGrades, Grade, Part
from dp_online_envs.lab.grading.submission import SubmissionError, find_submissions

__all__ = ["Assignment", "ClassGrades", "Grade", "Part", "SubmissionError", "find_submissions",
           "grade", "load_assignment", "parse_assignment"]
