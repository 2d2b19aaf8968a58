"""The agent registry as the lab's resolver: :data:`registry` and :data:`per_seed_registry`.

What :mod:`dp_online_envs.lab` needs to turn agent names into learners (an
:class:`~dp_online_envs.lab.experiments.resolver.AgentResolver`): the registered classes
(:mod:`agents.base`) and their seed-batched forms (:mod:`agents.vectorized`). It sits above
both, so neither imports it. The seed-batched forms are imported when one is first asked
for (``import agents`` does not pay for them).
"""

from __future__ import annotations

from typing import Any

from agents.base import Agent, agent_class, list_agents
from dp_online_envs.problem import Problem

__all__ = ["PerSeedRegistry", "Registry", "per_seed_registry", "registry"]


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

    def batched(self, agent: str | type[Agent], problem: Problem, *,
                epsilon: float | None = None, delta: float = 0.0, **options: Any) -> Any:
        """The batched form of a learner (:func:`agents.vectorized.make_batched`): what the
        experiments' ``vectorize`` option plays.

        Raises:
            ValueError: The learner or its configuration has no batched form.
        """
        from agents.vectorized import make_batched

        return make_batched(agent, problem, epsilon=epsilon, delta=delta, **options)

    def audit_batched(self, agent: str | type[Agent], problem: Problem, *,
                      epsilon: float | None = None, delta: float = 0.0,
                      **options: Any) -> Any:
        """The batched form the privacy audit plays
        (:func:`agents.vectorized.make_audit_batched`: independent runs from one generator
        where a learner has such a form, else :meth:`batched`'s).

        Raises:
            ValueError: The learner or its configuration has no batched form.
        """
        from agents.vectorized import make_audit_batched

        return make_audit_batched(agent, problem, epsilon=epsilon, delta=delta, **options)

    def __reduce__(self) -> str:
        return "registry"

    def __repr__(self) -> str:
        return "agents.registry"


class PerSeedRegistry(Registry):
    """:class:`Registry` without the audit's shared-stream batched forms: a privacy audit
    through this resolver plays every learner's per-seed batched form (run ``b`` is the
    scalar game of its seed), to compare the two forms."""

    audit_batched = None  # audit_power then falls back to :meth:`Registry.batched`

    def __reduce__(self) -> str:
        return "per_seed_registry"

    def __repr__(self) -> str:
        return "agents.per_seed_registry"


#: The agent registry as an experiments resolver.
registry = Registry()
#: The same without the audit's shared-stream forms (:class:`PerSeedRegistry`).
per_seed_registry = PerSeedRegistry()
