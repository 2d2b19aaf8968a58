"""Vector learners: B seeds of a scalar learner played in one numpy pass per round.

``make_vector(name, problem, epsilon=..., delta=..., **options)`` builds the vector
form of a registered learner; :func:`vector_refusal` says why a configuration has
none (the callers then play the scalar path). Game ``b`` of a vector learner reset
with ``seeds`` is the scalar learner reset with ``seeds[b]``, round for round (see
:mod:`agents.vector.base`); the vector env is
:class:`~dp_online_envs.envs.vector_env.LinearVectorEnv` and the loop
:func:`~dp_online_envs.loop.run_vector_rounds`.

=================  ====================================================  ==============
learner            vector class                                          plays
=================  ====================================================  ==============
``exp3``, ``exp2``  :class:`~agents.vector.arms.VectorArms`             arms
``private-exp2``   :class:`~agents.vector.arms.VectorPrivateEXP2`      arms
``hedge``          :class:`~agents.vector.hedge.VectorHedge`           simplex points
``ftrl``           :class:`~agents.vector.ftrl.VectorFTRL`             points
``private-ftrl``   :class:`~agents.vector.ftrl.VectorPrivateFTRL`      points
``private-ftpl``   :class:`~agents.vector.ftpl.VectorPrivateFTPL`      points
=================  ====================================================  ==============

``make_audit_vector`` builds what the privacy audit plays (``audit_power``'s vector
references, through the registry's ``audit_vector``): where :data:`AUDIT_VECTOR` has
a class, B independent runs drawn from one generator (``private-exp2``:
:class:`~agents.vector.arms.SharedStreamPrivateEXP2`, not the scalar game of each
seed), else the per-seed vector form of ``make_vector``.
"""

from __future__ import annotations

from typing import Any

from agents.base import Agent, agent_class
from agents.vector.arms import SharedStreamPrivateEXP2, VectorArms, VectorPrivateEXP2
from agents.vector.base import VectorAgent
from agents.vector.ftpl import VectorPrivateFTPL
from agents.vector.ftrl import VectorFTRL, VectorPrivateFTRL
from agents.vector.hedge import VectorHedge
from dp_online_envs._former_paths import former_names
from dp_online_envs.problem import Problem

__all__ = ["AUDIT_VECTOR", "VECTOR", "VectorAgent", "vector_refusal",
           "make_audit_vector", "make_vector"]

#: The vector class of each learner name.
VECTOR: dict[str, type[VectorAgent]] = {
    name: cls
    for cls in (VectorArms, VectorPrivateEXP2, VectorHedge, VectorFTRL,
                VectorPrivateFTRL, VectorPrivateFTPL)
    for name in cls.names
}

#: The audit's form of a learner where it differs from :data:`VECTOR`'s: independent
#: runs from one generator (faster; a run is not the scalar game of its seed).
AUDIT_VECTOR: dict[str, type[VectorAgent]] = {
    name: cls for cls in (SharedStreamPrivateEXP2,) for name in cls.names
}


def _prototype(name: str | type[Agent], problem: Problem, epsilon: float | None,
               delta: float, options: dict[str, Any]) -> Agent:
    cls = agent_class(name) if isinstance(name, str) else name
    return cls(problem, epsilon=epsilon, delta=delta, seed=0, **options)


def vector_refusal(name: str | type[Agent], problem: Problem, *,
                    epsilon: float | None = None, delta: float = 0.0,
                    **options: Any) -> str | None:
    """Why ``name`` with these settings has no vector form, or ``None`` if it has.

    Raises:
        ValueError, TypeError: Settings the scalar learner itself refuses.
    """
    key = name if isinstance(name, str) else getattr(name, "name", None)
    cls = VECTOR.get(key)
    if cls is None or (not isinstance(name, str) and agent_class(key) is not name):
        return f"{key!r} has no vector form (those with one: {sorted(VECTOR)})"
    return cls.refusal(_prototype(name, problem, epsilon, delta, options))


def make_vector(name: str | type[Agent], problem: Problem, *,
                 epsilon: float | None = None, delta: float = 0.0,
                 **options: Any) -> VectorAgent:
    """The vector form of a registered learner for ``problem`` (reset it with
    ``reset_batch(seeds)`` before playing).

    Raises:
        ValueError: A learner without vector form, or a configuration its vector
            form does not play (the message says which), or settings the scalar
            learner refuses.
    """
    key = name if isinstance(name, str) else getattr(name, "name", None)
    if key not in VECTOR:
        raise ValueError(f"{key!r} has no vector form; those with one: {sorted(VECTOR)}")
    proto = _prototype(name, problem, epsilon, delta, options)
    cls = VECTOR[key]
    why = cls.refusal(proto)
    if why is not None:
        raise ValueError(why)
    return cls(proto)


def make_audit_vector(name: str | type[Agent], problem: Problem, *,
                       epsilon: float | None = None, delta: float = 0.0,
                       **options: Any) -> VectorAgent:
    """The vector form the privacy audit plays: :data:`AUDIT_VECTOR`'s class for
    ``name`` (B independent runs from one generator; reset with ``reset_batch(seeds)``)
    if it has one, else :func:`make_vector`'s.

    Raises:
        ValueError: As :func:`make_vector`.
    """
    vector = make_vector(name, problem, epsilon=epsilon, delta=delta, **options)
    cls = AUDIT_VECTOR.get(vector.name)
    if cls is None or not issubclass(cls, type(vector)):
        return vector
    return cls(vector.prototype)

#: Former names of this module (one release, with a ``DeprecationWarning``).
__getattr__ = former_names(globals(), {
    "AUDIT_BATCHED": "AUDIT_VECTOR",
    "BATCHED": "VECTOR",
    "BatchedAgent": "VectorAgent",
    "BatchedArms": "VectorArms",
    "BatchedFTRL": "VectorFTRL",
    "BatchedHedge": "VectorHedge",
    "BatchedPrivateEXP2": "VectorPrivateEXP2",
    "BatchedPrivateFTPL": "VectorPrivateFTPL",
    "BatchedPrivateFTRL": "VectorPrivateFTRL",
    "batched_refusal": "vector_refusal",
    "make_audit_batched": "make_audit_vector",
    "make_batched": "make_vector",
})
