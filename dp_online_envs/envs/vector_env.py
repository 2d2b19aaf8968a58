"""Seed-vectorized games: B games of one linear-loss id played in one numpy pass.

:class:`LinearVectorEnv` is a Gymnasium ``VectorEnv`` holding ``B = num_envs`` games
of the same configuration that differ only in their seeds. Every sub-game is the
scalar game of :func:`~dp_online_envs.envs.registry.build_env` with the same options
and its own seed, round for round:

* Seeding: ``reset(seed=[s_1, ..., s_B])`` seeds game ``b`` as ``env.reset(seed=s_b)``
  seeds the scalar env (the adversary's generator ``PCG64(SeedSequence(s_b))``, its
  ``reset`` on that generator). An integer seed ``s`` means ``[s, s + 1, ...]``
  (Gymnasium's convention).
* Losses: every ``block`` rounds each game's adversary draws the next block of
  parameters with :meth:`~dp_online_envs.adversaries.Adversary.next_losses`, which
  makes the same generator calls as round-by-round play; for the box-parameter
  stochastic adversaries (the defaults of MAB, Experts and the matroid) one
  ``random((n, K))`` per game and block, the round's parameters computed for all games
  at once (:func:`~dp_online_envs.adversaries.stochastic.next_losses_batch`).
* Feedback: the observation row ``b`` is what the scalar
  :class:`~dp_online_envs.wrappers.FeedbackGuard` emits: ``theta_t`` (clipped to the
  parameter box) under full information, ``[f_t(x_t)]`` under bandit feedback
  (``feedback="bandit"`` downgrades a full-information id, as in the scalar env);
  ``info`` is empty until the last round, where ``info["regret"]`` holds one
  :class:`~dp_online_envs.wrappers.RegretSummary` per game.
* Regret: the ledger of :class:`~dp_online_envs.wrappers.RegretRecorder`, batched:
  the cumulative parameter ``(B, P)``, the learner's loss, the comparator at the same
  checkpoints (per game, the same ``linear_minimizer`` and product as
  :class:`~dp_online_envs.hindsight.Comparator`; on the simplex the row minimum, which
  that product is exactly), and the pseudo-regret.

Equality with the scalar game: actions, feedback, learner loss and regret are
bit-identical on arms (``DPBandit-MAB-v0``: the loss of arm ``a`` is ``theta[a]``, no
arithmetic). On point domains the round's loss ``<theta_t, x_t>`` is ``np.vecdot`` of
the rows, which runs numpy's float64 dot kernel per row -- the kernel of the scalar
``np.dot`` in :class:`~dp_online_envs.losses.LinearLoss` -- so it is bit-identical too;
the feedback (``theta_t``) never depends on that arithmetic.

What is not offered (``ValueError`` naming it): adaptive adversaries (their losses
depend on the play), non-linear losses, rendering and ``record_losses``. The batched
learners and the loop are :mod:`agents.batched` and
:func:`dp_online_envs.loop.run_batched_rounds`; ``docs/vectorized.md`` describes the
interface.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from dp_online_envs.adversaries.stochastic import next_losses_batch
from dp_online_envs.domains import Ball, Box, Simplex
from dp_online_envs.envs.registry import build_env
from dp_online_envs.errors import InvalidActionError
from dp_online_envs.hindsight import Comparator
from dp_online_envs.losses import LinearLoss
from dp_online_envs.validation import check_int
from dp_online_envs.wrappers import RegretSummary
from dp_online_envs.wrappers.regret import REGRET_INFO_KEY, find_recorder

__all__ = ["VECTOR_ENTRY_POINT", "VECTOR_ENV_IDS", "LinearVectorEnv", "make_vector_env",
           "vector_support"]

#: The ids with a seed-vectorized path (their linear-loss configurations).
VECTOR_ENV_IDS: tuple[str, ...] = (
    "DPFullInfo-Experts-v0", "DPBandit-MAB-v0", "DPFullInfo-Sphere-v0",
    "DPFullInfo-Cube-v0", "DPFullInfo-Matroid-v0",
)

#: The vector entry point of those ids, registered by
#: :func:`~dp_online_envs.envs.registry.register_all` (a string, so that
#: ``gym.spec(id).to_json()`` works): ``gym.make_vec(id, num_envs=B)``.
VECTOR_ENTRY_POINT = "dp_online_envs.envs.vector_env:make_vector_env"

#: Rounds of losses drawn per adversary call.
LOSS_BLOCK = 256


def _scalar_env(env_id: str, options: dict[str, Any]) -> gym.Env:
    return build_env(env_id, **options)


def vector_support(env_id: str, **options: Any) -> str | None:
    """Why ``env_id`` with these options has no vectorized path, or ``None`` if it has.

    Raises:
        ValueError, TypeError: The options are invalid for the id (as ``build_env``).
    """
    if env_id not in VECTOR_ENV_IDS:
        return f"{env_id} has no vectorized path (only {list(VECTOR_ENV_IDS)})"
    env = _scalar_env(env_id, options)
    return _refusal(env.unwrapped, options)


def _refusal(base: Any, options: dict[str, Any]) -> str | None:
    if not isinstance(base.loss, LinearLoss):
        return f"the vectorized games need linear losses, got {base.loss!r}"
    if base.adversary.adaptive:
        return (f"adversary {base.adversary.name!r} is adaptive (its losses depend on the "
                "play): no vectorized path")
    if options.get("render_mode") is not None or options.get("record_losses"):
        return "render_mode and record_losses are not offered by the vectorized games"
    return None


def make_vector_env(num_envs: int = 1, env_id: str = "DPBandit-MAB-v0",
                    **options: Any) -> LinearVectorEnv:
    """The vector entry point of the ids in :data:`VECTOR_ENV_IDS`:
    ``LinearVectorEnv(env_id, num_envs, **options)``.

    ``gym.make_vec(id, num_envs=B, **options)`` calls it (``register_all`` lists it as
    their ``vector_entry_point``, so it is Gymnasium's default mode for them, and
    ``vectorization_mode="vector_entry_point"`` asks for it explicitly). ``options``
    are those of ``gym.make(env_id, ...)``; gymnasium's ``max_episode_steps`` is
    refused (the games last ``horizon`` rounds).

    Raises:
        ValueError: ``max_episode_steps``, or a setting the batched games do not offer
            (an adaptive adversary, a non-linear loss, rendering, ``record_losses``):
            the message names it and points to ``vectorization_mode="sync"`` (B scalar
            envs), which plays every setting.
        TypeError: An option the id does not accept (as ``gym.make``).
    """
    if options.pop("max_episode_steps", None) is not None:
        raise ValueError("max_episode_steps is not offered by the vectorized games: pass "
                         "horizon=T")
    why = vector_support(env_id, **{k: v for k, v in options.items() if k != "block"})
    if why is not None:
        raise ValueError(f"{why}; gym.make_vec({env_id!r}, num_envs={num_envs}, "
                         "vectorization_mode='sync', ...) plays it as B scalar games")
    return LinearVectorEnv(env_id, num_envs, **options)


def _row_dots(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``float(np.dot(a_b, x_b))`` for every row: ``np.vecdot`` runs numpy's float64
    dot kernel (BLAS ``ddot`` on contiguous rows) per row, the kernel ``np.dot`` runs
    on two 1-D arrays, so the values are the scalar env's (``tests/vector`` checks)."""
    return np.vecdot(np.ascontiguousarray(a), np.ascontiguousarray(x))


class LinearVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` seeds of one linear-loss game, stepped together (module docstring).

    ## Action Space

    ``Discrete(K)`` rows (an int array of shape ``(B,)``) on arms, else points of
    ``R^dim`` (shape ``(B, dim)``); a point outside the domain is projected and counted
    (or raises :class:`~dp_online_envs.errors.InvalidActionError` with
    ``invalid_action="raise"``), as in the scalar env.

    ## Observation Space

    ``(B, 1)`` losses under bandit feedback, ``(B, P)`` parameters under full
    information.

    ## Episode End

    All games end together after round T (``terminated`` all True); the env must then
    be reset (no autoreset).

    Args:
        env_id: One of :data:`VECTOR_ENV_IDS`.
        num_envs: ``B >= 1``.
        block: Rounds of losses drawn per adversary call (default :data:`LOSS_BLOCK`).
        **options: The id's options (as ``gym.make``).

    Raises:
        ValueError: An id without vectorized path, an adaptive adversary, a non-linear
            loss, rendering or ``record_losses`` (the message says which).
    """

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.DISABLED,
                                          "render_modes": []}

    def __init__(self, env_id: str, num_envs: int, *, block: int = LOSS_BLOCK,
                 **options: Any) -> None:
        if env_id not in VECTOR_ENV_IDS:
            raise ValueError(f"env_id={env_id!r} has no vectorized path; expected one of "
                             f"{list(VECTOR_ENV_IDS)}")
        self.num_envs = check_int("num_envs", num_envs, 1)
        self.block = check_int("block", block, 1)
        template = _scalar_env(env_id, options)
        base = template.unwrapped
        why = _refusal(base, options)
        if why is not None:
            raise ValueError(why)
        self.env_id = env_id
        self.problem = template.get_wrapper_attr("problem")
        self.domain, self.loss, self.horizon = base.domain, base.loss, base.horizon
        self.invalid_action = base.invalid_action
        self._adversary = base.adversary
        recorder = find_recorder(template)
        self._checkpoints = recorder._checkpoints
        self._arms = isinstance(base.action_space, gym.spaces.Discrete)
        self._simplex = type(self.domain).linear_minimizer is Simplex.linear_minimizer
        self._bandit = self.problem.feedback == "bandit"
        self._downgrade = self._bandit and base.feedback != "bandit"
        self._high = max(base.problem.bound, 1e-12)  # the guard's clip of a downgrade
        self._obs_low = np.asarray(base.observation_space.low)
        self._obs_high = np.asarray(base.observation_space.high)
        self.single_action_space = base.action_space
        self.single_observation_space = (
            gym.spaces.Box(-self._high, self._high, shape=(1,), dtype=np.float64)
            if self._downgrade else base.observation_space)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space,
                                                         self.num_envs)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space,
                                                              self.num_envs)
        self.render_mode = None
        self._rows = np.arange(self.num_envs)
        self._needs_reset = True
        self._summaries: list[RegretSummary] | None = None
        template.close()

    # ---------------------------------------------------------------- Gym API
    def reset(self, *, seed: int | Sequence[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start B new games; game ``b`` is seeded with ``seed[b]`` (see the module
        docstring; ``None``: fresh entropy for each).

        Raises:
            ValueError: A seed list of the wrong length, or non-empty ``options``.
        """
        if options:
            raise ValueError(f"reset takes no options, got {sorted(options)}")
        seeds = self._seed_list(seed)
        self._advs = []
        for s in seeds:
            root = np.random.SeedSequence(s)
            adv = copy.copy(self._adversary)  # configured, not yet reset: nothing shared is mutated
            adv.reset(np.random.Generator(np.random.PCG64(root)), self.domain, self.loss,
                      self.horizon)
            self._advs.append(adv)
        B, P = self.num_envs, self.loss.param_dim
        self.t = 0
        self._losses = np.empty((0, B, P))
        self._j = 0
        self.cumulative = np.zeros((B, P))
        self.learner_loss = np.zeros(B)
        self.projected_actions = np.zeros(B, dtype=np.int64)
        means = [a.mean_param for a in self._advs]
        self._pseudo = all(m is not None for m in means)
        self._mu = np.stack(means) if self._pseudo else None
        self._pseudo_loss = np.zeros(B)
        self._curve_t: list[int] = []
        self._curve: list[np.ndarray] = []
        self._needs_reset = False
        self._summaries = None
        obs = np.zeros(self.observation_space.shape, dtype=np.float64)
        return obs, {}

    def _seed_list(self, seed: int | Sequence[int] | None) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, (int, np.integer)):
            return [int(seed) + i for i in range(self.num_envs)]
        seeds = [int(s) for s in seed]
        if len(seeds) != self.num_envs:
            raise ValueError(f"got {len(seeds)} seeds for num_envs={self.num_envs}")
        return seeds

    def _next_thetas(self) -> np.ndarray:
        """Round ``t + 1``'s parameters ``(B, P)`` from the block (an ``(n, B, P)``
        array, or the box adversaries' :class:`BoxLossBlock`)."""
        if self._j == len(self._losses):
            n = min(self.block, self.horizon - self.t)
            block = next_losses_batch(self._advs, n, reuse=self._losses)
            if block is None:
                block = np.stack([a.next_losses(self.t + 1, n) for a in self._advs], axis=1)
            self._losses = block
            self._j = 0
        theta = self._losses[self._j]
        self._j += 1
        return theta

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        """Play one round of every game.

        Raises:
            RuntimeError: Before ``reset`` or after the last round.
            ValueError: Actions of the wrong shape, out of range or not finite.
            InvalidActionError: A point outside the domain with ``invalid_action="raise"``.
        """
        if self._needs_reset:
            raise RuntimeError("the games are over or have not started: call reset() first")
        points = self._points(actions)
        theta = self._next_thetas()
        self.t += 1
        if self._arms:
            loss = theta[self._rows, points]
            pseudo = self._mu[self._rows, points] if self._pseudo else None
        else:
            loss = _row_dots(theta, points)
            pseudo = _row_dots(self._mu, points) if self._pseudo else None
        self.learner_loss += loss
        if pseudo is not None:
            self._pseudo_loss += pseudo
        self.cumulative += theta
        terminated = self.t >= self.horizon
        if self.t in self._checkpoints or terminated:
            best = self._comparator()
            self._curve_t.append(self.t)
            self._curve.append(self.learner_loss - best)
            self._best = best
        if self._downgrade:
            obs = np.clip(loss, -self._high, self._high)[:, None]
        elif self._bandit:  # np.clip's values (losses are finite), without its overhead
            obs = np.minimum(np.maximum(loss, self._obs_low[0]), self._obs_high[0])[:, None]
        else:
            obs = np.clip(theta, self._obs_low, self._obs_high)
        info: dict[str, Any] = {}
        if terminated:
            self._needs_reset = True
            self._summaries = self._make_summaries()
            info = {REGRET_INFO_KEY: np.array(self._summaries, dtype=object),
                    "_" + REGRET_INFO_KEY: np.ones(self.num_envs, dtype=bool)}
        done = np.full(self.num_envs, terminated)
        return obs, -loss, done, np.zeros(self.num_envs, dtype=bool), info

    def _points(self, actions: Any) -> np.ndarray:
        """The arms (int array ``(B,)``) or the points ``(B, dim)`` played, projected
        where needed."""
        a = np.asarray(actions)
        if self._arms:
            if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
                raise ValueError(f"actions must be {self.num_envs} arm indices (an integer "
                                 f"array of shape ({self.num_envs},)), got shape {a.shape} "
                                 f"dtype {a.dtype}")
            k = self.single_action_space.n
            if a.size and (a.min() < 0 or a.max() >= k):
                raise ValueError(f"arm indices must lie in [0, {k}), got {a.tolist()}")
            return a.astype(np.intp)
        x = np.array(a, dtype=np.float64)
        if x.shape != (self.num_envs, self.domain.dim):
            raise ValueError(f"actions must be {self.num_envs} points of R^{self.domain.dim} "
                             f"(shape ({self.num_envs}, {self.domain.dim})), got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError("actions must be finite")
        outside = np.flatnonzero(~self._contains(x)).tolist()
        if outside and self.invalid_action == "raise":
            b = outside[0]
            dist = self.domain.distance(x[b])
            raise InvalidActionError(
                f"action of game {b} lies {dist:.3g} (Euclidean) outside the "
                f"{self.domain.name} domain; project it or make the env with "
                "invalid_action='project'", dist)
        for b in outside:
            x[b] = self.domain.project(x[b])
            self.projected_actions[b] += 1
        return x

    def _contains(self, x: np.ndarray) -> np.ndarray:
        """``domain.contains(row, 1e-9)`` of every (finite) row: the simplex's, the box's
        and the l2 ball's tests on the rows (same reductions as on one row), else row
        by row."""
        kind, atol = type(self.domain).contains, 1e-9
        if kind is Simplex.contains:
            return (x.min(axis=1) >= -atol) & (np.abs(x.sum(axis=1) - 1.0) <= atol)
        if kind is Box.contains:
            return (np.all(x >= self.domain.low - atol, axis=1)
                    & np.all(x <= self.domain.high + atol, axis=1))
        if kind is Ball.contains:
            return np.sqrt(_row_dots(x, x)) <= self.domain.radius + atol
        return np.array([self.domain.contains(row, atol) for row in x], dtype=bool)

    # ------------------------------------------------------------- the ledger
    def _comparator(self) -> np.ndarray:
        """``min_x <sum_s theta_s, x>`` per game (the Comparator's linear branch)."""
        if self._simplex:
            # <s, e_i> is s_i exactly (the other products are zeros): the minimum
            return self.cumulative.min(axis=1)
        out = np.empty(self.num_envs)
        for b in range(self.num_envs):
            s = self.cumulative[b]
            out[b] = float(s @ self.domain.linear_minimizer(s))
        return out

    def _make_summaries(self) -> list[RegretSummary]:
        best = self._best
        out = []
        for b in range(self.num_envs):
            pseudo = None
            if self._pseudo:
                one_round = Comparator(self.domain, self.loss)
                one_round.add(self._mu[b])
                pseudo = float(self._pseudo_loss[b] - self.t * one_round.best()[0])
            curve = [float(c[b]) for c in self._curve]
            lo = hi = float(best[b])
            out.append(RegretSummary(
                rounds=self.t, learner_loss=float(self.learner_loss[b]),
                comparator_lo=lo, comparator_hi=hi,
                regret_lo=float(self.learner_loss[b]) - hi,
                regret_hi=float(self.learner_loss[b]) - lo, exact=True,
                pseudo_regret=pseudo, projected_actions=int(self.projected_actions[b]),
                checkpoints=list(self._curve_t), regret_curve_lo=curve,
                regret_curve_hi=list(curve)))
        return out

    def summaries(self) -> list[RegretSummary]:
        """The regret summary of every game of the last episode, once it is over.

        Raises:
            RuntimeError: While the games run (the summary reveals the losses of points
                not played) or before the first game.
        """
        if self._summaries is None:
            raise RuntimeError("the games have not ended: the summaries arrive in "
                               "info['regret'] at the last round")
        return list(self._summaries)
