"""Playing many seeds of one setting at once: the ``vectorize`` option of the runner.

:func:`split_batchable` groups the games that differ only in their seed index and have
a vector path -- an id of :data:`~dp_online_envs.envs.vector_env.VECTOR_ENV_IDS`
with a linear loss and a non-adaptive adversary, a learner whose vector form (one
learner object playing the seeds at once) the agent resolver's ``vector`` method builds
(the ``agents`` registry's: ``agents.vector.make_vector``), in process (no isolation) --
and :func:`play_batch` plays such a group in one
:class:`~dp_online_envs.envs.vector_env.LinearVectorEnv`. Each record equals the one
:func:`~dp_online_envs.lab.experiments.game.play_game` writes for that game (same seeds,
same outcome bit for bit; only the volatile fields differ: ``vectorized`` is true,
and ``wall_time`` is the group's time divided by its size). Everything else is played one game at a time.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from dp_online_envs.envs.vector_env import VECTOR_ENV_IDS, LinearVectorEnv
from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.game import (
    BatchSwitchCounter,
    GameSpec,
    feedback_option,
    game_record,
    plain,
)
from dp_online_envs.lab.experiments.resolver import (
    AgentResolver,
    default_resolver,
    vector_method,
)
from dp_online_envs.loop import run_vector_rounds
from dp_online_envs.wrappers import REGRET_INFO_KEY

__all__ = ["batch_refusal", "play_batch", "split_batchable"]


def _settings(spec: GameSpec) -> tuple[Any, ...]:
    return (spec.env_id, repr(plain(spec.env_kwargs)), spec.agent,
            repr(plain(spec.agent_kwargs)), spec.epsilon, spec.delta, spec.horizon,
            spec.agent_cls, spec.sweep)


def _resolver(resolver: AgentResolver | None) -> Any:
    return default_resolver() if resolver is None else resolver


def batch_refusal(spec: GameSpec, resolver: AgentResolver | None = None) -> str | None:
    """Why ``spec``'s setting has no vector path, or ``None`` if it has one.

    The vector learner comes from the resolver's ``vector`` method (the ``agents``
    registry has one; a resolver without it has no vector path).
    """
    if spec.isolation is not None:
        return "isolated games are played one by one"
    if spec.env_id not in VECTOR_ENV_IDS:
        return f"{spec.env_id} has no vector path"
    try:
        res = _resolver(resolver)
        vector = vector_method(res, "vector")
        if vector is None:
            return "the agent resolver offers no vector learners"
        cls = spec.agent_class(res)
        venv = _vector_env(spec, cls, 1)
        vector(cls, venv.problem, epsilon=spec.epsilon, delta=spec.delta or 0.0,
               **spec.agent_kwargs)
    except (ValueError, TypeError, ExperimentError) as exc:
        return str(exc)
    return None


def _vector_env(spec: GameSpec, cls: type, num_envs: int) -> LinearVectorEnv:
    feedback = feedback_option(spec.env_id, cls)
    extra = {"feedback": feedback} if feedback else {}
    return LinearVectorEnv(spec.env_id, num_envs, horizon=spec.horizon, **extra,
                           **spec.env_kwargs)


def split_batchable(specs: Sequence[GameSpec], resolver: AgentResolver | None = None
                    ) -> tuple[list[list[GameSpec]], list[GameSpec]]:
    """``(groups, rest)``: groups of at least two games of one setting that have a
    vector path, and the games to play one by one (in their order)."""
    groups: dict[tuple[Any, ...], list[GameSpec]] = {}
    for spec in specs:
        groups.setdefault(_settings(spec), []).append(spec)
    together, rest = [], []
    verdicts: dict[tuple[Any, ...], bool] = {}
    for key, group in groups.items():
        if len(group) > 1:
            if key not in verdicts:
                verdicts[key] = batch_refusal(group[0], resolver) is None
            if verdicts[key]:
                together.append(group)
                continue
        rest.extend(group)
    return together, rest


def play_batch(specs: Sequence[GameSpec], resolver: AgentResolver | None = None
               ) -> list[dict[str, Any]]:
    """Play games of one setting (differing only in the seed index) together and
    return their records, in order.

    Raises:
        ValueError: Games of different settings, or a setting without vector path.
    """
    specs = list(specs)
    if len({_settings(s) for s in specs}) != 1:
        raise ValueError("play_batch needs games that differ only in their seed index")
    start = time.perf_counter()
    first = specs[0]
    res = _resolver(resolver)
    vector = vector_method(res, "vector")
    if vector is None:
        raise ValueError("the agent resolver offers no vector learners")
    cls = first.agent_class(res)
    venv = _vector_env(first, cls, len(specs))
    learner = vector(cls, venv.problem, epsilon=first.epsilon, delta=first.delta or 0.0,
                     **first.agent_kwargs)
    learner.reset_batch([s.agent_seed for s in specs])
    venv.reset(seed=[s.env_seed for s in specs])
    counter = BatchSwitchCounter(len(specs))
    info = run_vector_rounds(venv, learner, counter)
    guarantee = learner.privacy
    claim = None if guarantee is None else (
        float(guarantee.epsilon), float(guarantee.delta), str(guarantee))
    per_game = (time.perf_counter() - start) / len(specs)
    records = []
    for b, spec in enumerate(specs):
        record = game_record(spec, cls, venv.problem, info[REGRET_INFO_KEY][b],
                             int(learner.clipped_feedback[b]), claim,
                             time.perf_counter() - per_game, int(counter.switches[b]),
                             vectorized=True)
        records.append(record)
    return records
