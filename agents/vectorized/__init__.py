"""Batched learners: B seeds of a scalar learner played in one numpy pass per round.

``make_batched(name, problem, epsilon=..., delta=..., **options)`` builds the batched
form of a registered learner; :func:`batched_refusal` says why a configuration has
none (the callers then play the scalar path). Game ``b`` of a batched learner reset
with ``seeds`` is the scalar learner reset with ``seeds[b]``, round for round (see
:mod:`agents.vectorized.base`); the vector env is
:class:`~dp_online_envs.envs.vector_env.LinearVectorEnv` and the loop
:func:`~dp_online_envs.loop.run_batched_rounds`.

=================  ====================================================  ==============
learner            batched class                                          plays
=================  ====================================================  ==============
``exp3``, ``exp2``  :class:`~agents.vectorized.arms.BatchedArms`             arms
``private-exp2``   :class:`~agents.vectorized.arms.BatchedPrivateEXP2`      arms
``hedge``          :class:`~agents.vectorized.hedge.BatchedHedge`           simplex points
``ftrl``           :class:`~agents.vectorized.ftrl.BatchedFTRL`             points
``private-ftrl``   :class:`~agents.vectorized.ftrl.BatchedPrivateFTRL`      points
``private-ftpl``   :class:`~agents.vectorized.ftpl.BatchedPrivateFTPL`      points
=================  ====================================================  ==============

``make_audit_batched`` builds what the privacy audit plays (``audit_power``'s batched
references, through the registry's ``audit_batched``): where :data:`AUDIT_BATCHED` has
a class, B independent runs drawn from one generator (``private-exp2``:
:class:`~agents.vectorized.arms.SharedStreamPrivateEXP2`, not the scalar game of each
seed), else the per-seed batched form of ``make_batched``.
"""

from __future__ import annotations

from typing import Any

from agents.base import Agent, agent_class
from agents.vectorized.arms import BatchedArms, BatchedPrivateEXP2, SharedStreamPrivateEXP2
from agents.vectorized.base import BatchedAgent
from agents.vectorized.ftpl import BatchedPrivateFTPL
from agents.vectorized.ftrl import BatchedFTRL, BatchedPrivateFTRL
from agents.vectorized.hedge import BatchedHedge
from dp_online_envs.problem import Problem

__all__ = ["AUDIT_BATCHED", "BATCHED", "BatchedAgent", "batched_refusal",
           "make_audit_batched", "make_batched"]

#: The batched class of each learner name.
BATCHED: dict[str, type[BatchedAgent]] = {
    name: cls
    for cls in (BatchedArms, BatchedPrivateEXP2, BatchedHedge, BatchedFTRL,
                BatchedPrivateFTRL, BatchedPrivateFTPL)
    for name in cls.names
}

#: The audit's form of a learner where it differs from :data:`BATCHED`'s: independent
#: runs from one generator (faster; a run is not the scalar game of its seed).
AUDIT_BATCHED: dict[str, type[BatchedAgent]] = {
    name: cls for cls in (SharedStreamPrivateEXP2,) for name in cls.names
}


def _prototype(name: str | type[Agent], problem: Problem, epsilon: float | None,
               delta: float, options: dict[str, Any]) -> Agent:
    cls = agent_class(name) if isinstance(name, str) else name
    return cls(problem, epsilon=epsilon, delta=delta, seed=0, **options)


def batched_refusal(name: str | type[Agent], problem: Problem, *,
                    epsilon: float | None = None, delta: float = 0.0,
                    **options: Any) -> str | None:
    """Why ``name`` with these settings has no batched form, or ``None`` if it has.

    Raises:
        ValueError, TypeError: Settings the scalar learner itself refuses.
    """
    key = name if isinstance(name, str) else getattr(name, "name", None)
    cls = BATCHED.get(key)
    if cls is None or (not isinstance(name, str) and agent_class(key) is not name):
        return f"{key!r} has no batched form (those with one: {sorted(BATCHED)})"
    return cls.refusal(_prototype(name, problem, epsilon, delta, options))


def make_batched(name: str | type[Agent], problem: Problem, *,
                 epsilon: float | None = None, delta: float = 0.0,
                 **options: Any) -> BatchedAgent:
    """The batched form of a registered learner for ``problem`` (reset it with
    ``reset_batch(seeds)`` before playing).

    Raises:
        ValueError: A learner without batched form, or a configuration its batched
            form does not play (the message says which), or settings the scalar
            learner refuses.
    """
    key = name if isinstance(name, str) else getattr(name, "name", None)
    if key not in BATCHED:
        raise ValueError(f"{key!r} has no batched form; those with one: {sorted(BATCHED)}")
    proto = _prototype(name, problem, epsilon, delta, options)
    cls = BATCHED[key]
    why = cls.refusal(proto)
    if why is not None:
        raise ValueError(why)
    return cls(proto)


def make_audit_batched(name: str | type[Agent], problem: Problem, *,
                       epsilon: float | None = None, delta: float = 0.0,
                       **options: Any) -> BatchedAgent:
    """The batched form the privacy audit plays: :data:`AUDIT_BATCHED`'s class for
    ``name`` (B independent runs from one generator; reset with ``reset_batch(seeds)``)
    if it has one, else :func:`make_batched`'s.

    Raises:
        ValueError: As :func:`make_batched`.
    """
    batched = make_batched(name, problem, epsilon=epsilon, delta=delta, **options)
    cls = AUDIT_BATCHED.get(batched.name)
    if cls is None or not issubclass(cls, type(batched)):
        return batched
    return cls(batched.prototype)
