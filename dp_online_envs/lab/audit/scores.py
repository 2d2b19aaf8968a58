"""What the action audit counts: statistics of one run's plays, and of many runs' arms.

A :class:`Statistic` is a scalar of the plays in rounds ``tau + 1 .. tau + window`` of
one run (:func:`run_scores` computes every statistic of one run from its played
points). :func:`arm_scores` computes the same numbers for many runs on arms at once
(``(runs, T)`` arm indices), with the same floating-point operations per run, so the
scores -- and every count the audit takes of them -- are the per-run ones bit for bit
(``tests/audit/test_vector_audit.py`` checks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from dp_online_envs.domains.base import Domain
from dp_online_envs.lab.audit.sequences import NeighbourPair

__all__ = ["Statistic", "arm_scores", "points_of", "run_scores", "statistics_for"]


@dataclass(frozen=True)
class Statistic:
    """A scalar of one run's plays in rounds ``tau + 1 .. tau + window``.

    Attributes:
        kind: ``"replays"`` -- ``sum <x_t, x_tau>``, on arms the plays of the arm played
            in round ``tau``; ``"exposure"`` -- ``sum f(theta'_tau, x_t) - f(theta_tau,
            x_t)``, how the later plays meet the changed loss.
        window: How many rounds after ``tau`` count (a learner's reaction to one loss
            may fade: a short window keeps the rounds that carry it).
    """

    kind: str
    window: int

    def describe(self, discrete: bool, horizon: int, tau: int) -> str:
        """One line: what is counted."""
        last = min(tau + self.window, horizon)
        rounds = f"rounds tau+1..{last}" if last < horizon else "rounds tau+1..T"
        if self.kind == "exposure":
            return f"sum over {rounds} of f(theta'_tau, x_t) - f(theta_tau, x_t)"
        if discrete:
            return f"plays of the arm played in round tau, in {rounds}"
        return f"sum over {rounds} of <x_t, x_tau>"


def statistics_for(pair: NeighbourPair) -> tuple[Statistic, ...]:
    """Both kinds, windows ``1, 2, 4, ...`` and the whole rest of the game."""
    rest = len(pair) - pair.tau
    windows = sorted({*(2 ** i for i in range(rest.bit_length()) if 2 ** i < rest), rest})
    return tuple(Statistic(kind, w) for kind in ("replays", "exposure") for w in windows)


def points_of(actions: list[Any], domain: Domain, space: gym.Space) -> np.ndarray:
    """The ``T`` played points of one run, one a row (arms as unit vectors)."""
    if isinstance(space, gym.spaces.Discrete):
        return np.eye(domain.dim)[np.asarray(actions, dtype=np.int64) - int(space.start)]
    return np.stack([domain.to_point(a) for a in actions])


def run_scores(points: np.ndarray, pair: NeighbourPair, loss: Any,
               stats: tuple[Statistic, ...]) -> list[float]:
    """Every statistic of one run (``points``: the ``T`` played points, one a row)."""
    tau = pair.tau
    after = points[tau:]
    per_round = {"replays": np.cumsum(after @ points[tau - 1])}
    if any(st.kind == "exposure" for st in stats):
        per_round["exposure"] = np.cumsum(loss.values(pair.neighbour_theta, after)
                                          - loss.values(pair.theta, after))
    return [float(per_round[st.kind][st.window - 1]) for st in stats]


def arm_scores(arms: np.ndarray, pair: NeighbourPair, loss: Any, n_arms: int,
               stats: tuple[Statistic, ...]) -> np.ndarray:
    """Every statistic of many runs on arms: ``(runs, len(stats))``.

    ``arms`` is ``(runs, T)``, 0-based arm indices. The values are
    :func:`run_scores`' on each run's unit vectors, bit for bit: ``<e_a, e_b>`` is
    exactly ``1.0`` or ``0.0``; ``loss.values`` of a unit vector ``e_a`` depends on
    that row alone, so its value on ``np.eye(K)``'s row ``a`` is the one the run's
    rows give; the differences are taken elementwise as there, and ``np.cumsum`` along
    the rounds adds in the same order as on one run.
    """
    tau = pair.tau
    after = arms[:, tau:]
    per_round = {"replays": np.cumsum((after == arms[:, tau - 1:tau]).astype(np.float64),
                                      axis=1)}
    if any(st.kind == "exposure" for st in stats):
        eye = np.eye(n_arms)
        diff = loss.values(pair.neighbour_theta, eye) - loss.values(pair.theta, eye)
        per_round["exposure"] = np.cumsum(diff[after], axis=1)
    out = np.empty((arms.shape[0], len(stats)))
    for j, st in enumerate(stats):
        out[:, j] = per_round[st.kind][:, st.window - 1]
    return out
