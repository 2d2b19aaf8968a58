"""What one round and one game are, as the env tells its wrappers: the round's
:class:`RoundRecord` (in the unwrapped env's ``info``) and the game's running
:class:`PlayTotals`.

The env (:mod:`dp_online_envs.envs`) makes them and the wrappers
(:mod:`dp_online_envs.wrappers`) read them; both import them from here, below both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

#: The one ``info`` key of the unwrapped env's ``step``: its :class:`RoundRecord`.
ROUND_INFO_KEY = "round"


class RoundRecord(NamedTuple):
    """What the env tells the wrappers about one round; never shown to a learner.

    The :class:`~dp_online_envs.wrappers.FeedbackGuard` strips it from ``info``. A
    named tuple, so that Gymnasium's checkers compare two records field by field.

    Attributes:
        theta: The adversary's loss parameter ``theta_t``.
        point: The point ``x_t`` played (after projection).
        loss: ``f(theta_t, x_t)``.
        projected: Whether the action lay outside the domain and was projected.
    """

    theta: np.ndarray
    point: np.ndarray
    loss: float
    projected: bool

    @staticmethod
    def of(info: Mapping[str, Any]) -> RoundRecord:
        """The record in the ``info`` of an :class:`~dp_online_envs.envs.online_env.OnlineLearningEnv` step.

        Raises:
            TypeError: ``info`` holds no record (the env below is not an
                ``OnlineLearningEnv``, or a wrapper dropped it).
        """
        record = info.get(ROUND_INFO_KEY)
        if not isinstance(record, RoundRecord):
            raise TypeError(f"info[{ROUND_INFO_KEY!r}] holds no RoundRecord (got "
                            f"{type(record).__name__}): the wrapped env must be an "
                            f"OnlineLearningEnv whose info reaches this wrapper unchanged")
        return record


@dataclass
class PlayTotals:
    """The running totals of the learner's play in the current game.

    The env is their one owner (it needs the round to end the game) and makes new
    ones at every ``reset()``; the :class:`~dp_online_envs.wrappers.RegretRecorder`
    reads them (``env.unwrapped.totals``) for its summary and keeps no copy.

    Attributes:
        rounds: Rounds played.
        learner_loss: ``sum_{s<=t} f_s(x_s)``, added round by round.
        projected_actions: Actions that lay outside the domain and were projected.
    """

    rounds: int = 0
    learner_loss: float = 0.0
    projected_actions: int = 0

    def add(self, loss: float, projected: bool) -> None:
        """Count one round of loss ``loss``."""
        self.rounds += 1
        self.learner_loss += loss
        self.projected_actions += int(projected)
