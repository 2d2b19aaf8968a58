"""What the black-box auditor plays: a *session*.

A session is anything with ``reset(seed)``, ``act()`` and ``update(action, feedback)``:
:class:`~dp_online_envs.lab.isolation.IsolatedLearner` (an agent in its own process) is
one; :class:`AgentSession` makes one of an in-process agent factory (a fresh agent
every game), :class:`ResettingSession` of one in-process agent whose ``reset(seed)``
starts a game afresh (as an isolated process does; cheaper when building is slow). The auditor never
needs the agent object: it sees the actions and nothing else.

A :class:`VectorSession` plays B runs at once (``reset_batch(seeds)``, ``act_batch()``,
``update_batch(actions, feedback)``: the vector learners of ``agents.vector`` are
ones); either run ``b`` is the game a session reset with ``seeds[b]`` plays, so the
audit's statistics are the same on either (:mod:`~dp_online_envs.lab.audit.vector`), or
(the audit's form of a learner, e.g. ``agents.vector.SharedStreamPrivateEXP2``) the
runs are independent games of the learner drawn from one stream seeded with all the
seeds. :func:`run_seeds` gives the seeds of the runs, for both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np

from dp_online_envs._former_paths import former_names
from dp_online_envs.problem import Problem

__all__ = ["AgentSession", "VectorSession", "VectorSessionFactory", "ResettingSession",
           "Session", "SessionFactory", "run_seeds"]


@runtime_checkable
class Session(Protocol):
    """A learner that can be started afresh: the black box an action audit plays."""

    def reset(self, seed: int) -> None:
        """Start a new game with ``seed`` (all the learner's randomness comes from it)."""

    def act(self) -> Any:
        """The action of the next round."""

    def update(self, action: Any, feedback: np.ndarray) -> None:
        """The round's permitted feedback."""


@runtime_checkable
class VectorSession(Protocol):
    """B runs of a learner at once (the ``VectorLearner`` of
    :func:`~dp_online_envs.loop.run_vector_rounds`, restartable with seeds).

    The audit's bound assumes what it assumes of a session: the runs are independent
    games of the learner, and the same seeds give the same runs. Either each game's
    randomness comes from its own seed alone (the vector learners of
    ``agents.vector``: one generator set per game, game ``b`` the scalar game of
    ``seeds[b]``), or one generator seeded with all the seeds gives every game its own
    positions of one i.i.d. stream (never a value used by two games; ``agents.vector.
    SharedStreamPrivateEXP2``: each run a game of the calibrated mechanism, not the
    scalar game of its seed). Two games reading the same draws would not be
    independent runs.
    """

    def reset_batch(self, seeds: Sequence[int]) -> None:
        """Start ``len(seeds)`` independent games (class docstring): game ``b`` the
        learner reset with ``seeds[b]``, or run ``b`` of one stream seeded with
        ``seeds``."""

    def act_batch(self) -> np.ndarray:
        """The actions of the next round, one row per game."""

    def update_batch(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        """The round's permitted feedback of every game."""


#: ``make_session(problem, action_space) -> Session``, called once per audit.
SessionFactory = Callable[[Problem, gym.Space], Session]
#: ``make_session(problem, action_space) -> VectorSession``, called once per audit.
VectorSessionFactory = Callable[[Problem, gym.Space], VectorSession]


def run_seeds(seeds: np.random.SeedSequence, runs: int) -> list[int]:
    """The ``runs`` seeds (63-bit integers) a session is reset with, from ``seeds``."""
    return (seeds.generate_state(runs, np.uint64) >> np.uint64(1)).tolist()


class AgentSession:
    """An in-process session: ``reset(seed)`` rebuilds the learner as ``factory(seed)``.

    Args:
        factory: ``factory(seed) -> learner`` with ``act`` and ``update`` (e.g.
            ``lambda seed: agents.make("exp3", problem, seed=seed)``).

    Example:
        ``make_session = lambda problem, space: AgentSession(
        lambda seed: MyAgent(problem, epsilon=1.0, seed=seed))``
    """

    __slots__ = ("_factory", "_learner")

    def __init__(self, factory: Callable[[int], Any]) -> None:
        if not callable(factory):
            raise TypeError(f"factory must be callable (seed -> learner), got {factory!r}")
        self._factory = factory
        self._learner: Any = None

    def reset(self, seed: int) -> None:
        """Build a fresh learner with ``seed``."""
        self._learner = self._factory(seed)

    def act(self) -> Any:
        """The learner's action.

        Raises:
            RuntimeError: Before the first :meth:`reset`.
        """
        if self._learner is None:
            raise RuntimeError("AgentSession.act before reset(seed): no learner yet")
        return self._learner.act()

    def update(self, action: Any, feedback: np.ndarray) -> None:
        """Pass the round's feedback on."""
        self._learner.update(action, feedback)


class ResettingSession:
    """An in-process session around one learner whose ``reset(seed)`` starts afresh.

    The learner's own ``reset`` must restore everything a game depends on (the agents
    of this package do: building with ``seed`` and resetting with ``seed`` give the
    same games); this is what :class:`~dp_online_envs.lab.isolation.IsolatedLearner` does
    in the agent's process. Use :class:`AgentSession` for a learner not trusted to.

    Args:
        learner: The learner (``reset(seed)``, ``act()``, ``update(action, feedback)``).
    """

    __slots__ = ("_learner",)

    def __init__(self, learner: Any) -> None:
        if not isinstance(learner, Session):
            raise TypeError(f"learner must have reset(seed), act() and update(action, "
                            f"feedback), got {type(learner).__name__}")
        self._learner = learner

    def reset(self, seed: int) -> None:
        """``learner.reset(seed)``."""
        self._learner.reset(seed)

    def act(self) -> Any:
        """The learner's action."""
        return self._learner.act()

    def update(self, action: Any, feedback: np.ndarray) -> None:
        """Pass the round's feedback on."""
        self._learner.update(action, feedback)

#: Former names of this module (one release, with a ``DeprecationWarning``).
__getattr__ = former_names(globals(), {
    "BatchedSession": "VectorSession",
    "BatchedSessionFactory": "VectorSessionFactory",
})
