"""Steps 1 and 2 of an audit: record a loss sequence, build its neighbours, replay them.

* :class:`Game` -- what an audit needs of the game (domain, loss family, native and
  permitted feedback, horizon, adversary), read off a ``Problem`` or an env
  (:meth:`Game.of`).
* :func:`record_sequence` -- ``S``: the losses of one game played through
  :func:`~dp_online_envs.loop.run_rounds`.
* :class:`NeighbourPair` -- ``S`` and ``S' = S.replace(tau, theta')``;
  :func:`neighbour_param` is the default ``theta'`` (far from ``theta_tau``).
* :func:`replay_env` -- the deterministic replay of a sequence behind a
  :class:`~dp_online_envs.wrappers.FeedbackGuard`.

Contextual games (a :class:`~dp_online_envs.losses.contextual.ContextualLinearLoss`
problem, the contextual ids): :func:`record_sequence` records each round's context
with its loss vector (:class:`ContextualLossSequence`), a neighbour changes round
``tau``'s loss vector only and keeps every context, and :func:`replay_env` replays
both through a :class:`~dp_online_envs.envs.contextual.ContextualBanditEnv`
(:class:`ContextReplay`), so the learner sees the contexts it saw when recording.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from dp_online_envs.adversaries import LossSequence, ReplayAdversary
from dp_online_envs.adversaries.contextual import ContextRecord, ContextualAdversary
from dp_online_envs.envs.contextual import ContextualBanditEnv, observation_layout
from dp_online_envs.envs.online_env import OnlineLearningEnv
from dp_online_envs.loop import Learner, run_rounds
from dp_online_envs.losses.contextual import ContextualLinearLoss
from dp_online_envs.problem import Problem
from dp_online_envs.validation import check_int
from dp_online_envs.wrappers import FeedbackGuard

__all__ = ["ContextReplay", "ContextualLossSequence", "Game", "NeighbourPair", "is_admissible",
           "is_contextual", "neighbour_param", "record_sequence", "replay_env"]


@dataclass(frozen=True)
class Game:
    """What an audit needs of a game.

    Attributes:
        problem: The native public problem (domain, loss family, native feedback, T).
        adversary: The env's adversary (copied before recording), or ``None`` for a
            ``Problem`` given alone (then an oblivious one is drawn).
        permitted: The feedback the env's outermost guard passes on.
    """

    problem: Problem
    adversary: Any
    permitted: str

    @classmethod
    def of(cls, env: Problem | gym.Env | Callable[[], Problem | gym.Env]) -> Game:
        """The game of a ``Problem``, a gymnasium env wrapping an ``OnlineLearningEnv``, or
        a zero-argument callable returning either.

        Raises:
            TypeError: Any other kind of env.
        """
        if callable(env) and not isinstance(env, (gym.Env, Problem)):
            env = env()
        if isinstance(env, Problem):
            return cls(env, None, env.feedback)
        if isinstance(env, gym.Env):
            base = env.unwrapped
            if not isinstance(base, OnlineLearningEnv):
                raise TypeError(f"the env must wrap an OnlineLearningEnv, got {type(base).__name__}")
            try:
                outer = env.get_wrapper_attr("problem").feedback
            except AttributeError:  # pragma: no cover - OnlineLearningEnv has .problem
                outer = base.feedback
            return cls(base.problem, base.adversary, outer)
        raise TypeError("env must be a Problem, a gymnasium env wrapping an OnlineLearningEnv, "
                        f"or a zero-argument callable returning one; got {type(env).__name__}")

    def feedback_for(self, learner: Any) -> str:
        """The feedback a learner gets: ``"bandit"`` if the learner, its problem or the
        env's guard asks for it, else ``"full"``."""
        wants = getattr(learner, "feedback", "full")
        own = getattr(getattr(learner, "problem", None), "feedback", "full")
        return "bandit" if "bandit" in (wants, self.permitted, own) else "full"


def is_admissible(loss: Any, theta: np.ndarray) -> bool:
    """Whether ``theta`` is an admissible parameter of ``loss`` (``clip_param`` keeps it)."""
    return bool(np.allclose(loss.clip_param(theta), theta, rtol=0.0, atol=1e-9))


def neighbour_param(loss, theta: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
    """An admissible parameter far (Euclidean) from ``theta``: the default ``theta'``.

    For a box parameter set (``loss.param_is_box``) it is the opposite corner: each
    coordinate goes to the end of its interval farther from ``theta``. Otherwise the
    farthest of a few admissible candidates: the family's ``opposite_param`` (margin
    losses: the flipped label), that corner clipped, ``clip_param`` of the reflection of
    ``theta`` through the box centre pushed far out (on a ball this is the antipodal
    boundary point), and 64 ``sample_param`` draws. "Farthest" is measured between the
    families' ``canonical_param`` forms, so a parameter that gives the same loss (a
    margin loss's ``(-a, -y)``) is at distance 0, never the neighbour.
    """
    theta = np.asarray(theta, dtype=np.float64)
    space = loss.param_space
    low = np.broadcast_to(np.asarray(space.low, np.float64), theta.shape)
    high = np.broadcast_to(np.asarray(space.high, np.float64), theta.shape)
    corner = np.where(theta - low >= high - theta, low, high)
    if getattr(loss, "param_is_box", False):
        return corner.copy()
    rng = np.random.default_rng(0) if rng is None else rng
    centre = 0.5 * (low + high)
    scale = 1e3 * max(1.0, float(np.max(high - low)))
    away = theta - centre
    norm = float(np.linalg.norm(away))
    candidates = [loss.clip_param(corner), loss.clip_param(-theta)]
    if norm > 0:
        candidates.append(loss.clip_param(centre - scale * away / norm))
    candidates += [loss.clip_param(loss.sample_param(rng)) for _ in range(64)]
    opposite = loss.opposite_param(theta)
    if opposite is not None:
        candidates.insert(0, loss.clip_param(opposite))
    # Distances between the losses, not the raw parameters: on a margin loss (a, y) and
    # (-a, -y) are one function, and the Euclidean-farthest candidate would be it.
    ref = loss.canonical_param(theta)
    dists = [float(np.linalg.norm(loss.canonical_param(c) - ref)) for c in candidates]
    return np.asarray(candidates[int(np.argmax(dists))], dtype=np.float64)


def is_contextual(problem: Problem) -> bool:
    """Whether ``problem`` is a contextual game (contextual linear losses)."""
    return isinstance(problem.loss, ContextualLinearLoss)


@dataclass(frozen=True)
class ContextualLossSequence(LossSequence):
    """A recorded contextual game: each round's loss vector and the context it came in.

    Attributes:
        thetas: ``(T, K)`` the per-arm losses of each round.
        contexts: ``(T, d)`` the context of each round (norm at most 1).

    :meth:`replace` changes one round's loss vector and keeps every context: the
    neighbouring relation of the contextual audits (one round's data, its loss vector
    changed, its context kept).
    """

    contexts: np.ndarray

    def __post_init__(self) -> None:
        super().__post_init__()
        c = np.array(self.contexts, dtype=np.float64)
        if c.ndim != 2 or c.shape[0] != self.thetas.shape[0] or not np.all(np.isfinite(c)):
            raise ValueError(f"contexts must be a finite ({self.thetas.shape[0]}, d) array "
                             f"(one context per round), got shape {c.shape}")
        norms = np.linalg.norm(c, axis=1)
        if np.any(norms > 1.0 + 1e-9):
            raise ValueError(f"contexts rejected: round {int(np.argmax(norms)) + 1} has norm "
                             f"{norms.max():.6g}; expected contexts of norm <= 1")
        c.setflags(write=False)
        object.__setattr__(self, "contexts", c)

    def replace(self, tau: int, theta: np.ndarray) -> ContextualLossSequence:
        """A copy whose round ``tau`` (1-based) has loss vector ``theta``, every context
        kept."""
        return ContextualLossSequence(super().replace(tau, theta).thetas, self.contexts)


class ContextReplay(ContextualAdversary):
    """Replays a :class:`ContextualLossSequence`: round ``t`` in context ``contexts[t-1]``
    with losses ``thetas[t-1]`` (deterministic: the round's mean losses are its losses).

    Raises:
        ValueError: At reset, a game whose arms or context dimension are not the
            sequence's.
    """

    name = "context-replay"

    def __init__(self, sequence: ContextualLossSequence) -> None:
        if not isinstance(sequence, ContextualLossSequence):
            raise TypeError(f"sequence must be a ContextualLossSequence, got "
                            f"{type(sequence).__name__}")
        self.sequence = sequence

    def reset(self, np_random: np.random.Generator, domain: Any, loss: Any,
              horizon: int) -> None:
        k, d = self.sequence.thetas.shape[1], self.sequence.contexts.shape[1]
        if domain.dim != k or getattr(loss, "context_dim", None) != d:
            raise ValueError(f"the sequence has {k} arms and contexts in R^{d}, the game "
                             f"{domain!r} with {loss!r}")
        super().reset(np_random, domain, loss, horizon)
        self._t = 0
        self._record = None

    def context(self) -> np.ndarray:
        """The context of the next round."""
        return self.sequence.contexts[min(self._t, len(self.sequence) - 1)].copy()

    def next_loss(self, t: int) -> np.ndarray:
        """Round ``t``'s recorded losses."""
        t = check_int("t", t, 1, len(self.sequence))
        if t != self._t + 1:
            raise ValueError(f"round {t} requested after round {self._t}: rounds are "
                             "replayed in order")
        theta = self.sequence.thetas[t - 1].copy()
        self._record = ContextRecord(self.sequence.contexts[t - 1].copy(), theta.copy())
        self._t = t
        return theta

    def __repr__(self) -> str:
        return f"{type(self).__name__}(T={len(self.sequence)})"


def replay_env(problem: Problem, sequence: LossSequence | np.ndarray,
               feedback: str | None = None) -> gym.Env:
    """``FeedbackGuard(OnlineLearningEnv(domain, loss, ReplayAdversary(sequence)))``.

    The env replays ``sequence`` exactly (``horizon = len(sequence)``) with the
    problem's native feedback, and the guard passes on only ``feedback`` (default: the
    problem's; ``"bandit"`` downgrades a full-information problem). A contextual
    problem replays a :class:`ContextualLossSequence` through a
    :class:`~dp_online_envs.envs.contextual.ContextualBanditEnv` (:class:`ContextReplay`:
    the learner sees each round's recorded context).

    Raises:
        ValueError: A contextual problem with a sequence that has no contexts, or
            contexts with a non-contextual problem.
    """
    seq = sequence if isinstance(sequence, LossSequence) else LossSequence(np.asarray(sequence))
    contextual = isinstance(seq, ContextualLossSequence)
    if contextual != is_contextual(problem):
        raise ValueError(
            "a contextual game replays a ContextualLossSequence (each round's context with "
            "its losses: record_sequence records them), got a sequence without contexts"
            if is_contextual(problem) else
            f"a sequence with contexts needs a contextual game, got {problem.loss!r}")
    env_class, adversary = ((ContextualBanditEnv, ContextReplay(seq)) if contextual
                            else (OnlineLearningEnv, ReplayAdversary(seq)))
    env = env_class(problem.domain, problem.loss, adversary, feedback=problem.feedback,
                    horizon=len(seq))
    return FeedbackGuard(env, problem.feedback if feedback is None else feedback)


def record_sequence(game: Game, learner: Learner, seed: int, feedback: str) -> LossSequence:
    """``S``: the losses of one game of ``game`` played by ``learner`` (already reset).

    The env's adversary is copied (an adaptive one reacts to this learner's plays; the
    recorded sequence is then replayed obliviously). A contextual game records each
    round's context too (a :class:`ContextualLossSequence`, read off the feedback the
    learner was shown); its adversary must be given (an env, not a bare ``Problem``).

    Raises:
        ValueError: A contextual game without its adversary.
    """
    p = game.problem
    if is_contextual(p):
        if game.adversary is None:
            raise ValueError("a contextual game is recorded with its own adversary: pass the "
                             "env (or a sequence), not a bare Problem")
        rec = ContextualBanditEnv(p.domain, p.loss, copy.deepcopy(game.adversary),
                                  feedback=p.feedback, horizon=p.horizon, record_losses=True)
        played = observation_layout(p.loss.context_dim)["played"]
        contexts: list[np.ndarray] = []
        guarded = FeedbackGuard(rec, feedback)
        guarded.reset(seed=seed)
        run_rounds(guarded, learner,
                   lambda t, action, obs: contexts.append(np.asarray(obs)[played].copy()))
        return ContextualLossSequence(rec.played_losses().thetas, np.stack(contexts))
    adv = "oblivious" if game.adversary is None else copy.deepcopy(game.adversary)
    rec = OnlineLearningEnv(p.domain, p.loss, adv, feedback=p.feedback, horizon=p.horizon,
                            record_losses=True)
    guarded = FeedbackGuard(rec, feedback)
    guarded.reset(seed=seed)
    run_rounds(guarded, learner)
    return rec.played_losses()


@dataclass(frozen=True)
class NeighbourPair:
    """Two loss sequences that differ in round ``tau`` only.

    Attributes:
        sequence: ``S``.
        neighbour: ``S'``.
        tau: The round (1-based) in which they differ.
        description: One line for reports.
    """

    sequence: LossSequence
    neighbour: LossSequence
    tau: int
    description: str = ""

    def __post_init__(self) -> None:
        if len(self.sequence) != len(self.neighbour):
            raise ValueError(f"the sequences have {len(self.sequence)} and "
                             f"{len(self.neighbour)} rounds, expected equal lengths")
        check_int("tau", self.tau, 1, len(self.sequence))
        differ = np.flatnonzero(np.any(self.sequence.thetas != self.neighbour.thetas, axis=1))
        if differ.size > 1 or (differ.size == 1 and int(differ[0]) + 1 != self.tau):
            raise ValueError(f"the sequences differ in rounds {(differ + 1).tolist()[:5]}, "
                             f"expected round tau={self.tau} only")
        kinds = {isinstance(s, ContextualLossSequence) for s in (self.sequence, self.neighbour)}
        if len(kinds) > 1:
            raise ValueError("one sequence has contexts and the other not, expected both "
                             "or neither")
        if True in kinds:
            moved = np.flatnonzero(np.any(self.sequence.contexts != self.neighbour.contexts,
                                          axis=1))
            if moved.size:
                raise ValueError(f"the contexts differ in rounds {(moved + 1).tolist()[:5]}, "
                                 f"expected the same contexts (a neighbour changes round "
                                 f"tau={self.tau}'s loss vector only)")

    @classmethod
    def replacing(cls, sequence: LossSequence, tau: int, theta: np.ndarray,
                  description: str = "") -> NeighbourPair:
        """``(S, S.replace(tau, theta))``."""
        return cls(sequence, sequence.replace(tau, theta), int(tau), description)

    @property
    def theta(self) -> np.ndarray:
        """``theta_tau`` of ``S``."""
        return self.sequence.thetas[self.tau - 1]

    @property
    def neighbour_theta(self) -> np.ndarray:
        """``theta'_tau`` of ``S'``."""
        return self.neighbour.thetas[self.tau - 1]

    def __len__(self) -> int:
        return len(self.sequence)
