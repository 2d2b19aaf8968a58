"""Oblivious adversaries that replay rows of a real dataset.

Both build, at reset, a :class:`~dp_online_envs.adversaries.LossSequence` from the rows
(each passed through the loss family's ``clip_param``, so every replayed parameter is
admissible whatever the data) and then replay it with
:class:`~dp_online_envs.adversaries.ReplayAdversary`. The order depends on the
adversary's own generator alone (never on the learner), so one reset seed fixes the
whole game.
"""

from __future__ import annotations

import math

import numpy as np

from dp_online_envs.adversaries.base import LossSequence
from dp_online_envs.adversaries.oblivious import ReplayAdversary


class _RowsAdversary(ReplayAdversary):
    """Replays rows of a dataset chosen at each reset by :meth:`_select`, clipped into
    the loss family's parameter set.

    Args:
        rows: ``(n, param_dim)`` loss parameters.
    """

    name = "data"

    def __init__(self, rows: np.ndarray) -> None:
        self.rows = LossSequence(rows)
        self.sequence = self.rows
        self._clipped: tuple[object, np.ndarray] | None = None

    def _select(self, np_random, horizon: int) -> np.ndarray:
        """The row indices of one game, in play order."""
        raise NotImplementedError

    def reset(self, np_random, domain, loss, horizon) -> None:
        index = self._select(np_random, horizon)
        self.sequence = LossSequence(self._clipped_rows(loss)[index])
        super().reset(np_random, domain, loss, horizon)

    def _clipped_rows(self, loss) -> np.ndarray:
        """Every row passed through ``loss.clip_param``, once for a loss family: the
        rows do not change, so each game indexes the same clipped rows (a horizon of
        many passes, or many games, costs one clip per row)."""
        if self._clipped is None or self._clipped[0] is not loss:
            rows = np.array([loss.clip_param(r) for r in self.rows.thetas], dtype=np.float64)
            self._clipped = (loss, rows.reshape(len(self.rows), -1))
        return self._clipped[1]


class ShuffledRowsAdversary(_RowsAdversary):
    """Rows of a labelled dataset in a seeded random order: round t replays row
    ``pi(t)``, where the order is a concatenation of independent uniform permutations
    of the ``n`` rows (one per pass, ``ceil(T / n)`` passes), truncated to T rounds.

    Args:
        rows: ``(n, param_dim)`` loss parameters, one per example.
    """

    def _select(self, np_random, horizon: int) -> np.ndarray:
        n = len(self.rows)
        self.order = np.concatenate([np_random.permutation(n)
                                     for _ in range(math.ceil(horizon / n))])[:horizon]
        return self.order


class DateWindowAdversary(_RowsAdversary):
    """A window of T consecutive rows of a time series, in date order: rounds
    ``1..T`` replay rows ``s, s+1, ..., s+T-1`` with the start ``s`` uniform in
    ``{0, ..., n - T}``.

    Args:
        rows: ``(n, param_dim)`` loss parameters in date order.

    Raises:
        ValueError: At reset, if the horizon exceeds the ``n`` rows.
    """

    def _select(self, np_random, horizon: int) -> np.ndarray:
        n = len(self.rows)
        if horizon > n:
            raise ValueError(f"horizon={horizon} exceeds the {n} rows of the series")
        self.start = int(np_random.integers(0, n - horizon + 1))
        return np.arange(self.start, self.start + horizon)
