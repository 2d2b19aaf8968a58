"""Step 3 of an audit: play one run and collect what is observed of the learner.

A view is a type with ``play(env, learner) -> features``: it plays an already reset
``env`` with an already reset ``learner`` through the one game loop
(:func:`~dp_online_envs.loop.run_rounds`) and returns a flat feature vector. It only
*observes*: the actions through the loop's ``on_round`` hook, the releases through the
release channel (:mod:`dp_online_envs.release_tap`). Nothing is set on the learner or
patched, so any object with ``act``/``update`` (a frozen proxy, an ``__slots__`` class,
an isolated process) can be audited.

* :class:`ActionsView` -- the points ``domain.to_point(a_t)`` of rounds ``t > tau``
  (the action of round ``tau`` is chosen before ``theta_tau``).
* :class:`ReleasesView` -- the values released once ``t >= tau - 1`` rounds were
  completed: everything that can depend on ``theta_tau`` (an agent may release before
  or after counting the round; earlier values are identically distributed on both
  sides and are dropped, which is post-processing).
* :func:`stack_rows` -- runs of unequal length as one matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from dp_online_envs.domains.base import Domain
from dp_online_envs.loop import Learner, run_rounds
from dp_online_envs.release_tap import listening

__all__ = ["VIEWS", "ActionsView", "ReleasesView", "stack_rows", "view_of"]


@dataclass(frozen=True)
class ActionsView:
    """The played points of rounds ``t > tau``, concatenated.

    Attributes:
        tau: The round in which the two sequences differ.
        domain: Maps an env action to its point (``domain.to_point``).
    """

    tau: int
    domain: Domain
    name = "actions"

    def play(self, env: gym.Env, learner: Learner) -> np.ndarray:
        """Play the game; the points of the rounds after ``tau``."""
        points: list[np.ndarray] = []
        tau, to_point = self.tau, self.domain.to_point

        def keep(t: int, action: Any, _feedback: np.ndarray) -> None:
            if t > tau:
                points.append(to_point(action))

        run_rounds(env, learner, keep)
        return np.concatenate(points) if points else np.zeros(0)


@dataclass(frozen=True)
class ReleasesView:
    """The values the learner released from round ``tau`` on, concatenated.

    Attributes:
        tau: The round in which the two sequences differ.
    """

    tau: int
    name = "releases"

    def play(self, env: gym.Env, learner: Learner) -> np.ndarray:
        """Play the game while listening to the learner's releases."""
        values: list[np.ndarray] = []
        first = self.tau - 1

        def keep(completed: int, value: Any) -> None:
            if completed >= first:
                values.append(np.array(value, dtype=np.float64).reshape(-1))

        with listening(keep):
            run_rounds(env, learner)
        return np.concatenate(values) if values else np.zeros(0)


#: The views by name.
VIEWS = {"releases": ReleasesView, "actions": ActionsView}


def view_of(name: str, tau: int, domain: Domain) -> ActionsView | ReleasesView:
    """The view called ``name`` for a pair differing in round ``tau``.

    Raises:
        ValueError: An unknown name.
    """
    if name == "actions":
        return ActionsView(tau, domain)
    if name == "releases":
        return ReleasesView(tau)
    raise ValueError(f"view={name!r}, expected one of {tuple(VIEWS)}")


def stack_rows(rows: list[np.ndarray]) -> np.ndarray:
    """One ``(runs, d)`` matrix: rows of unequal length are zero-padded and their length
    appended as a last column."""
    lengths = {r.size for r in rows}
    if len(lengths) == 1:
        return np.stack(rows)
    width = max(lengths)
    out = np.zeros((len(rows), width + 1))
    for i, r in enumerate(rows):
        out[i, : r.size] = r
        out[i, width] = r.size
    return out
