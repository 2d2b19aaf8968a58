"""The agent registry as the lab's resolver: :data:`registry` and :data:`per_seed_registry`.

What :mod:`dp_online_envs.lab` needs to turn agent names into learners (an
:class:`~dp_online_envs.lab.experiments.resolver.AgentResolver`): the registered classes
(:mod:`agents.base`) and their vector forms (:mod:`agents.vector`: one learner object
playing many seeds of one game at once). It sits above both, so neither imports it. The
vector forms are imported when one is first asked
for (``import agents`` does not pay for them).
"""

from __future__ import annotations

import warnings
from typing import Any

from agents.base import Agent, agent_class, list_agents
from dp_online_envs.problem import Problem

__all__ = ["PerSeedRegistry", "Registry", "per_seed_registry", "registry"]


def _former(old: str, new: str) -> None:
    warnings.warn(f"Registry.{old} is now Registry.{new}; the old name goes away in the "
                  f"next release", DeprecationWarning, stacklevel=3)


class Registry:
    """The agent registry seen from the experiments: an
    :class:`~dp_online_envs.lab.experiments.resolver.AgentResolver` (what ``dp-online`` and
    :mod:`dp_online_envs.lab.experiments` use to turn agent names into classes).

    It reads the live registry, so agents registered later are found. It pickles by
    reference (as :data:`registry`), so a copy in another process is that process's own
    registry.

    Attributes:
        base: :class:`Agent`, which every agent subclasses.
    """

    base = Agent

    def resolve(self, name: str) -> type[Agent]:
        """:func:`agent_class`: the class registered under ``name`` (``ValueError`` if none)."""
        return agent_class(name)

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return [info.name for info in list_agents()]

    def vector(self, agent: str | type[Agent], problem: Problem, *,
               epsilon: float | None = None, delta: float = 0.0, **options: Any) -> Any:
        """The vector form of a learner (:func:`agents.vector.make_vector`): what the
        experiments' ``vectorize`` option plays.

        Raises:
            ValueError: The learner or its configuration has no vector form.
        """
        from agents.vector import make_vector

        return make_vector(agent, problem, epsilon=epsilon, delta=delta, **options)

    def audit_vector(self, agent: str | type[Agent], problem: Problem, *,
                     epsilon: float | None = None, delta: float = 0.0,
                     **options: Any) -> Any:
        """The vector form the privacy audit plays
        (:func:`agents.vector.make_audit_vector`: independent runs from one generator
        where a learner has such a form, else :meth:`vector`'s).

        Raises:
            ValueError: The learner or its configuration has no vector form.
        """
        from agents.vector import make_audit_vector

        return make_audit_vector(agent, problem, epsilon=epsilon, delta=delta, **options)

    def batched(self, *args: Any, **kwargs: Any) -> Any:
        """Former name of :meth:`vector` (one release, with a ``DeprecationWarning``)."""
        _former("batched", "vector")
        return self.vector(*args, **kwargs)

    def audit_batched(self, *args: Any, **kwargs: Any) -> Any:
        """Former name of :meth:`audit_vector` (one release, with a
        ``DeprecationWarning``)."""
        _former("audit_batched", "audit_vector")
        return self.audit_vector(*args, **kwargs)

    def __reduce__(self) -> str:
        return "registry"

    def __repr__(self) -> str:
        return "agents.registry"


class PerSeedRegistry(Registry):
    """:class:`Registry` without the audit's shared-stream vector forms: a privacy audit
    through this resolver plays every learner's per-seed vector form (run ``b`` is the
    scalar game of its seed), to compare the two forms."""

    audit_vector = None  # audit_power then falls back to :meth:`Registry.vector`
    audit_batched = None  # the former name, as it was

    def __reduce__(self) -> str:
        return "per_seed_registry"

    def __repr__(self) -> str:
        return "agents.per_seed_registry"


#: The agent registry as an experiments resolver.
registry = Registry()
#: The same without the audit's shared-stream forms (:class:`PerSeedRegistry`).
per_seed_registry = PerSeedRegistry()
