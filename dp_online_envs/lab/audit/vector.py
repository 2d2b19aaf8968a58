"""The action audit's runs played B at a time: a vector session in a vector env.

:func:`vector_scores` is what :func:`~dp_online_envs.lab.audit.audit_actions` does with a
:class:`~dp_online_envs.lab.audit.sessions.VectorSession` in place of a session: the runs
of one side of a neighbour pair, in chunks of at most :data:`BATCH_GAMES`, each chunk
one :class:`~dp_online_envs.envs.vector_env.LinearVectorEnv` replaying the side's loss
sequence in every game (a :class:`~dp_online_envs.adversaries.ReplayAdversary`: no
randomness) and played by :func:`~dp_online_envs.loop.run_vector_rounds`. Game ``b``
of a chunk is reset with the ``b``-th of the chunk's run seeds
(:func:`~dp_online_envs.lab.audit.sessions.run_seeds`, the seeds the scalar path resets
its session with, in the same order). A vector session whose game ``b`` plays as the
scalar learner reset with ``seeds[b]`` (the contract of ``agents.vector``) therefore
gives the scalar path's scores, bit for bit, and so the same events, counts and
bound (:func:`~dp_online_envs.lab.audit.scores.arm_scores` on arms; the per-run
:func:`~dp_online_envs.lab.audit.scores.run_scores` on points). A vector session that
draws all B runs from one stream seeded with the chunk's seeds (the audit's form of
``private-exp2``, which :func:`~dp_online_envs.lab.audit.audit_power` plays) gives other,
equally valid runs: independent games, the same for the same audit seed (and
chunking), not the scalar path's.

Only the ids with a vector path (linear losses,
:data:`~dp_online_envs.envs.vector_env.VECTOR_ENV_IDS`) are played this way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from dp_online_envs._former_paths import former_names
from dp_online_envs.adversaries import ReplayAdversary
from dp_online_envs.lab.audit.scores import Statistic, arm_scores, points_of, run_scores
from dp_online_envs.lab.audit.sequences import NeighbourPair
from dp_online_envs.lab.audit.sessions import VectorSession, run_seeds
from dp_online_envs.loop import run_vector_rounds
from dp_online_envs.problem import Problem

__all__ = ["BATCH_GAMES", "vector_scores", "check_vector_env"]

#: Most games played in one vector pass (bounds the memory; the runs are split into
#: chunks of this size, in order).
BATCH_GAMES = 4096

#: Env options the audit replaces with its own (its horizon and its replayed sequence).
_REPLACED = ("horizon", "adversary", "adversary_kwargs")


def _vector_env(env_id: str, env_kwargs: Mapping[str, Any], sequence: Any,
                num_envs: int) -> Any:
    from dp_online_envs.envs.vector_env import LinearVectorEnv

    options = {k: v for k, v in env_kwargs.items() if k not in _REPLACED}
    return LinearVectorEnv(env_id, num_envs, horizon=len(sequence),
                           adversary=ReplayAdversary(sequence), **options)


def check_vector_env(env_id: str, env_kwargs: Mapping[str, Any], pair: NeighbourPair) -> None:
    """Refuse an env the vector runs cannot replay.

    Raises:
        ValueError: ``env_id`` (with these options) has no vector path; the message
            says why.
    """
    from dp_online_envs.envs.vector_env import VECTOR_ENV_IDS

    if env_id not in VECTOR_ENV_IDS:
        raise ValueError(f"a vector session needs an env id with a vector path "
                         f"({list(VECTOR_ENV_IDS)}), got {env_id!r}; pass a session instead")
    _vector_env(env_id, env_kwargs, pair.sequence, 1).close()


class _ActionsLog:
    """The ``on_round`` hook of :func:`run_vector_rounds` that keeps every round's
    actions (copied: a learner may reuse its buffers)."""

    __slots__ = ("rounds",)

    def __init__(self) -> None:
        self.rounds: list[np.ndarray] = []

    def __call__(self, t: int, actions: np.ndarray, feedback: np.ndarray) -> None:
        self.rounds.append(np.array(actions, copy=True))


def vector_scores(session: VectorSession, env_id: str, env_kwargs: Mapping[str, Any],
                   problem: Problem, space: gym.Space, pair: NeighbourPair,
                   stats: tuple[Statistic, ...],
                   seeds: tuple[np.random.SeedSequence, np.random.SeedSequence], runs: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """``(scores on S, scores on S')``, each ``(runs, len(stats))``: the scalar path's
    ``_play`` for a vector session (module docstring)."""
    discrete = isinstance(space, gym.spaces.Discrete)
    out = []
    for seq, ss in ((pair.sequence, seeds[0]), (pair.neighbour, seeds[1])):
        all_seeds = run_seeds(ss, runs)
        scores = np.empty((runs, len(stats)))
        venv = None
        for lo in range(0, runs, BATCH_GAMES):
            chunk = all_seeds[lo:lo + BATCH_GAMES]
            if venv is None or venv.num_envs != len(chunk):
                venv = _vector_env(env_id, env_kwargs, seq, len(chunk))
            session.reset_batch(chunk)
            venv.reset(seed=0)  # the replay is deterministic
            log = _ActionsLog()
            run_vector_rounds(venv, session, log)
            acts = np.stack(log.rounds, axis=1)  # (games, T) or (games, T, dim)
            if discrete:
                arms = acts.astype(np.int64) - int(space.start)
                scores[lo:lo + len(chunk)] = arm_scores(arms, pair, problem.loss,
                                                        problem.domain.dim, stats)
            else:
                for b, game in enumerate(acts):
                    points = points_of(list(game), problem.domain, space)
                    scores[lo + b] = run_scores(points, pair, problem.loss, stats)
        out.append(scores)
    return out[0], out[1]

#: Former names of this module (one release, with a ``DeprecationWarning``).
__getattr__ = former_names(globals(), {
    "batched_scores": "vector_scores",
})
