"""A leaderboard with audited privacy: one score per learner, rendered as a page.

``dp-online leaderboard LEARNERS... --results DIR -o OUT`` (or :func:`build_board` then
:func:`write_board`): every learner (a registered name, or a ``.py`` file played
sandboxed and isolated as in grading) plays the benchmark's games on hidden seeds; its
normalized score (0: trivial play, 1: the best non-private reference) is computed per id
and over the ids of its feedback kind, with its 95% interval, next to its declared
privacy budget and the verdict of the one-run privacy audit.

Modules: :mod:`.score` (the definition, :data:`~.score.SCORE_VERSION`), :mod:`.board`
(playing, auditing, the rows), :mod:`.page` (the HTML page, CSV and Parquet).
"""

from dp_online_envs.lab.leaderboard.board import Board, Learner, Row, build_board, load_learners
from dp_online_envs.lab.leaderboard.page import write_board
from dp_online_envs.lab.leaderboard.score import (
    SCORE_VERSION,
    Benchmark,
    default_benchmark,
    family,
)

__all__ = ["SCORE_VERSION", "Benchmark", "Board", "Learner", "Row", "build_board",
           "default_benchmark", "family", "load_learners", "write_board"]
