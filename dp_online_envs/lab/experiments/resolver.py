"""Where the experiments meet the learners: agent names resolved through a resolver.

Direction of the dependencies: the ``agents`` package depends on ``dp_online_envs``,
never the other way round. The experiments (this package) play learners they do not
import: every function that turns an agent *name* into a learner takes an
:class:`AgentResolver` (``resolver=``), and the learners themselves travel as classes
(an agent class is its own factory: ``cls(problem, epsilon=..., delta=..., seed=...,
**options)``), which pickle by reference to worker and isolated processes.

``resolver=None`` means :func:`default_resolver`, the ``agents`` registry: the single
place in ``dp_online_envs`` that names the ``agents`` package. It is imported when a
name is first resolved, not when this package is: the learners need the ``privacy``
extra (dp-accounting), while reading, tabulating, plotting and reporting stored
records does not. ``tests/experiments/test_import_direction.py`` enforces the rule.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any, Protocol, runtime_checkable

from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.validation import did_you_mean


@runtime_checkable
class AgentResolver(Protocol):
    """Agent names to agent classes: what the experiments need from a registry.

    Attributes:
        base: The class every agent subclasses (``agents.Agent``); a class passed
            directly instead of a name must subclass it.
    """

    base: type

    def resolve(self, name: str) -> type:
        """The agent class registered under ``name``.

        Raises:
            ValueError: ``name`` is not registered.
        """
        ...

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        ...


#: The optional methods of a resolver that build vector learners (one object playing many
#: seeds of one game at once) and the names they had in the previous release.
VECTOR_METHODS = {"vector": "batched", "audit_vector": "audit_batched"}


def vector_method(resolver: Any, name: str) -> Any:
    """The resolver's optional method ``name`` (a key of :data:`VECTOR_METHODS`:
    ``vector`` or ``audit_vector``), or ``None`` if it has none.

    A resolver without the attribute but with its former name (``batched``,
    ``audit_batched``: a resolver written for the previous release) gets that one, with a
    ``DeprecationWarning``; an attribute set to ``None`` means no such method.
    """
    if hasattr(resolver, name):
        return getattr(resolver, name)
    former = VECTOR_METHODS[name]
    if getattr(resolver, former, None) is None:
        return None
    warnings.warn(f"the resolver's method {former!r} is now {name!r}; the old name goes "
                  f"away in the next release", DeprecationWarning, stacklevel=3)
    return getattr(resolver, former)


def default_resolver() -> AgentResolver:
    """The ``agents`` registry (``agents.registry``), imported on first use.

    Raises:
        ImportError: The ``agents`` package cannot be imported (it needs the ``privacy``
            extra); the message says what to install.
    """
    # Lazy on purpose: an optional layer above this package (see the module docstring).
    import agents

    return agents.registry


def resolve_agent(agent: Any, resolver: AgentResolver | None = None) -> type:
    """The agent class for a registered name, ``"module:Class"`` or a class.

    Args:
        agent: A name registered with ``resolver``, ``"module:Class"`` (importable), or
            an agent class (returned as is).
        resolver: Where names are looked up and what an agent class must subclass;
            ``None`` for :func:`default_resolver`.

    Returns:
        A subclass of ``resolver.base``.

    Raises:
        ExperimentError: An unknown name (the message suggests the closest and lists the
            registered ones), an import that fails, or a class of the wrong kind.
    """
    resolver = default_resolver() if resolver is None else resolver
    if isinstance(agent, type):
        if not issubclass(agent, resolver.base):
            base = resolver.base  # named as its package exports it: agents.Agent
            raise ExperimentError(f"{agent!r} is not a subclass of "
                                  f"{base.__module__.partition('.')[0]}.{base.__qualname__}")
        return agent
    if not isinstance(agent, str) or not agent:
        raise ExperimentError(f"agent={agent!r}: expected an agent name; valid: "
                              f"{resolver.names()}")
    if ":" in agent:
        module, _, qualname = agent.partition(":")
        try:
            obj: Any = importlib.import_module(module)
            for part in qualname.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise ExperimentError(f"agent {agent!r} cannot be imported: {exc}") from None
        return resolve_agent(obj, resolver)
    try:
        return resolver.resolve(agent)
    except ValueError:
        names = resolver.names()
        raise ExperimentError(
            f"unknown agent {agent!r};{did_you_mean(agent, names)} valid: {names} "
            "(or 'module:Class' for your own)") from None


__all__ = ["AgentResolver", "default_resolver", "resolve_agent"]
