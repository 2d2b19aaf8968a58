"""Reference agents that do not learn: what a game costs a player who ignores the losses.

A regret number means something only next to the regret of not learning. Two
non-private agents that never look at their feedback give that baseline:

``center`` -- :class:`CenterAgent`: plays the domain's center (the center of
:meth:`~dp_online_envs.domains.Domain.inner_ball`, :attr:`Domain.center`) every round.
On ``Box`` action spaces the action is exactly that point. Where the center is not an
action (arms, subsets), it plays the center in expectation: an arm drawn from the
center's distribution on the simplex (uniform) or a subset containing each element
independently with the center's coordinate (``1/2``), i.e. the same play as ``uniform``.

``uniform`` -- :class:`UniformAgent`: a uniformly random arm (``Discrete``), a uniformly
random subset (``MultiBinary``), and on ``Box`` action spaces a uniformly random vertex
of the domain when it enumerates its vertices (:meth:`Domain.vertices`), else the
vertex the linear oracle returns for a uniformly random direction (on a ball: a
uniformly random point of the sphere). Its expected loss on linear losses is that of
the vertices' average; on convex losses it is at least that (Jensen).

Both accept any feedback kind (they ignore it) and draw all randomness from
``self.rng``, so one seed gives one sequence of actions.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from agents.base import Agent, register
from agents.full_info.ftrl import env_action

__all__ = ["REFERENCE_AGENTS", "CenterAgent", "UniformAgent"]

#: Names of the reference (non-learning) agents, in the order reports draw them.
REFERENCE_AGENTS: tuple[str, ...] = ("center", "uniform")


class _Reference(Agent):
    """Shared part of the reference agents: no options, feedback ignored."""

    feedback = "bandit"  # needs nothing: plays full-information envs too
    private = False
    paper = "reference play (no learning)"

    def update(self, action, feedback) -> None:
        """Count the round; the feedback is clipped (and counted) like any agent's, then
        ignored."""
        self.clip_feedback(feedback)
        self.t += 1


@register
class CenterAgent(_Reference):
    """Plays the domain's center every round (in expectation on arms and subsets).

    Raises (at construction): nothing beyond :class:`Agent`'s checks; every domain has
    a center.
    """

    name = "center"
    description = ("reference: plays the domain's center (inner-ball center) every round; "
                   "no learning")

    def setup(self) -> None:
        self._center = np.array(self.problem.domain.center, dtype=np.float64)

    def act(self):
        """The center (Box), or an arm / subset drawn with the center as its mean."""
        domain = self.problem.domain
        space = domain.action_space
        if isinstance(space, gym.spaces.MultiBinary):
            return (self.rng.random(domain.dim) < self._center).astype(np.int8)
        return env_action(domain, self._center, self.rng)


@register
class UniformAgent(_Reference):
    """Plays a uniformly random arm, subset or vertex every round.

    On ``Box`` action spaces: a uniformly random row of :meth:`Domain.vertices`, or,
    when the domain does not enumerate its vertices, ``linear_minimizer(u)`` for ``u``
    uniform on the unit sphere.
    """

    name = "uniform"
    description = "reference: a uniformly random arm / subset / vertex every round; no learning"

    def setup(self) -> None:
        domain = self.problem.domain
        space = domain.action_space
        self._vertices = None
        if not isinstance(space, (gym.spaces.Discrete, gym.spaces.MultiBinary)):
            v = domain.vertices()
            self._vertices = None if v is None else np.asarray(v, dtype=np.float64)

    def act(self):
        """A uniformly random arm / subset / vertex (see the class docstring)."""
        domain = self.problem.domain
        space = domain.action_space
        if isinstance(space, gym.spaces.Discrete):
            return int(self.rng.integers(space.n))
        if isinstance(space, gym.spaces.MultiBinary):
            return self.rng.integers(0, 2, size=domain.dim).astype(np.int8)
        if self._vertices is not None:
            return self._vertices[int(self.rng.integers(len(self._vertices)))].copy()
        u = self.rng.standard_normal(domain.dim)
        return np.array(domain.linear_minimizer(u), dtype=np.float64)
