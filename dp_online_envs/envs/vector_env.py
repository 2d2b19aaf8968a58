"""Seed-vectorized games: B games of one linear-loss id played in one numpy pass.

:class:`LinearVectorEnv` is what a learner holds: a Gymnasium ``VectorEnv`` of
``B = num_envs`` games of the same configuration that differ only in their seeds,
behind the batched form of the :class:`~dp_online_envs.wrappers.FeedbackGuard`.
The games and their regret ledger are :class:`LinearVectorGames` (the experimenter's
env, ``venv.unwrapped``). Every sub-game is the scalar game of
:func:`~dp_online_envs.envs.registry.build_env` with the same options and its own seed,
round for round:

* Seeding: ``reset(seed=[s_1, ..., s_B])`` seeds game ``b`` as ``env.reset(seed=s_b)``
  seeds the scalar env (the adversary's generator ``PCG64(SeedSequence(s_b))``, its
  ``reset`` on that generator, the learner's ``np_random`` spawned from the same
  sequence). An integer seed ``s`` means ``[s, s + 1, ...]`` (Gymnasium's convention);
  a ``None`` seed (or entry) keeps that game's generators running, as the scalar env's
  ``reset()`` does, and gives fresh entropy to a game that has none yet.
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
  :class:`~dp_online_envs.wrappers.RegretSummary` per game (and ``info["_regret"]``
  Gymnasium's mask).
* Episodes: all games end together after round T. What follows is Gymnasium's
  ``autoreset_mode`` (``metadata["autoreset_mode"]``), ``NEXT_STEP`` by default as in
  ``SyncVectorEnv``: the next ``step`` resets every game (its generators running on)
  and returns zero observations, zero rewards and no ``info``; ``SAME_STEP`` resets in
  the last step (the last observations and ``info`` in ``info["final_obs"]`` and
  ``info["final_info"]``); ``DISABLED`` refuses to step until ``reset``.
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

``gym.make_vec(id, num_envs=B)`` is Gymnasium's ``SyncVectorEnv`` of B scalar games for
every id (no id registers a vector entry point, since Gymnasium 1.4 would make it the
default mode); the batched games are the opt-in ``LinearVectorEnv(id, B, ...)`` (or
:func:`make_vector_env`), and ``gym.make_vec(venv.spec)`` remakes one.

What is not offered (``ValueError`` naming it): adaptive adversaries (their losses
depend on the play), non-linear losses, rendering and ``record_losses``, and a
``reset_mask`` that resets some games but not all (the games run in lockstep). The
batched learners and the loop are :mod:`agents.batched` and
:func:`dp_online_envs.loop.run_batched_rounds`; ``docs/vectorized.md`` describes the
interface.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from typing import Any, ClassVar, NoReturn

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
from dp_online_envs.wrappers.feedback import public_spec
from dp_online_envs.wrappers.regret import REGRET_INFO_KEY, find_recorder

__all__ = ["VECTOR_ENTRY_POINT", "VECTOR_ENV_IDS", "VECTOR_LEARNER_ATTRIBUTES",
           "LinearVectorEnv", "LinearVectorGames", "make_vector_env", "vector_support"]

#: The ids with a seed-vectorized path (their linear-loss configurations).
VECTOR_ENV_IDS: tuple[str, ...] = (
    "DPFullInfo-Experts-v0", "DPBandit-MAB-v0", "DPFullInfo-Sphere-v1",
    "DPFullInfo-Cube-v1", "DPFullInfo-Matroid-v1",
)

#: The vector entry point in the spec of every batched env (a string, so that
#: ``venv.spec.to_json()`` works): ``gym.make_vec(venv.spec)`` remakes ``venv``. The
#: registered ids do not list it (see the module docstring).
VECTOR_ENTRY_POINT = "dp_online_envs.envs.vector_env:make_vector_env"

#: Rounds of losses drawn per adversary call.
LOSS_BLOCK = 256

#: The names ``get_attr`` and ``call`` answer through the batched guard, one value per
#: game, as ``SyncVectorEnv.get_attr`` answers them through B scalar guards: the public
#: ``Problem``, the single spaces, the game's metadata and render mode, the public
#: spec of one game, the learner's own generator of each game, ``np_random_seed``
#: (``-1``, not handed out) and ``summary`` (each game's regret summary, once the games
#: are over).
VECTOR_LEARNER_ATTRIBUTES: frozenset[str] = frozenset({
    "problem", "action_space", "observation_space", "metadata", "render_mode", "spec",
    "np_random", "np_random_seed", "summary",
})

#: The vectorizer's own keys in a vector env's spec (``gym.make_vec`` adds them).
_VECTOR_SPEC_KEYS = ("num_envs", "vectorization_mode", "vector_kwargs", "wrappers",
                     "block", "autoreset_mode")

_UNPROTECTED = ("venv.unwrapped and venv.env are not protected in-process (README, "
                "'What the learner sees'); run untrusted learners in their own process")


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
    """``LinearVectorEnv(env_id, num_envs, **options)``: the vector entry point in every
    batched env's spec, so that ``gym.make_vec(venv.spec)`` remakes ``venv``.

    ``options`` are those of ``gym.make(env_id, ...)`` plus ``block`` and
    ``autoreset_mode``; gymnasium's ``max_episode_steps`` is refused (the games last
    ``horizon`` rounds).

    Raises:
        ValueError: ``max_episode_steps``, or a setting the batched games do not offer
            (an adaptive adversary, a non-linear loss, rendering, ``record_losses``):
            the message names it and points to ``gym.make_vec(id, num_envs=B)`` (B
            scalar envs), which plays every setting.
        TypeError: An option the id does not accept (as ``gym.make``).
    """
    if options.pop("max_episode_steps", None) is not None:
        raise ValueError("max_episode_steps is not offered by the vectorized games: pass "
                         "horizon=T")
    scalar = {k: v for k, v in options.items() if k not in ("block", "autoreset_mode")}
    why = vector_support(env_id, **scalar)
    if why is not None:
        raise ValueError(f"{why}; gym.make_vec({env_id!r}, num_envs={num_envs}, ...) "
                         "plays it as B scalar games")
    return LinearVectorEnv(env_id, num_envs, **options)


def _row_dots(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``float(np.dot(a_b, x_b))`` for every row: ``np.vecdot`` runs numpy's float64
    dot kernel (BLAS ``ddot`` on contiguous rows) per row, the kernel ``np.dot`` runs
    on two 1-D arrays, so the values are the scalar env's (``tests/vector`` checks)."""
    return np.vecdot(np.ascontiguousarray(a), np.ascontiguousarray(x))


def seed_list(seed: int | Sequence[int | None] | None, num_envs: int) -> list[int | None]:
    """One seed per game, Gymnasium's convention: ``None`` for every game, an integer
    ``s`` as ``[s, s + 1, ...]``, or a sequence of ``num_envs`` integers or ``None``.

    Raises:
        ValueError: A sequence of another length, or a seed that is not a non-negative
            integer (or ``None``).
    """
    if seed is None:
        return [None] * num_envs
    if not isinstance(seed, Sequence) and not isinstance(seed, np.ndarray):
        first = check_int("seed", seed, 0)
        return [first + i for i in range(num_envs)]
    seeds = [None if s is None else check_int("seed", s, 0) for s in seed]
    if len(seeds) != num_envs:
        raise ValueError(f"got {len(seeds)} seeds for num_envs={num_envs}")
    return seeds


def _autoreset_mode(value: AutoresetMode | str) -> AutoresetMode:
    try:
        return value if isinstance(value, AutoresetMode) else AutoresetMode(value)
    except ValueError:
        raise ValueError(f"autoreset_mode={value!r}, expected one of "
                         f"{[m.value for m in AutoresetMode]}") from None


def _reset_mask(options: dict[str, Any] | None, num_envs: int) -> None:
    """Check ``reset``'s options: none, or ``reset_mask`` alone, selecting every game.

    Raises:
        TypeError, ValueError: As ``SyncVectorEnv`` for a mask that is not a boolean
            array of shape ``(num_envs,)`` with a True value; ``ValueError`` for a mask
            that selects some games but not all, and for any other option.
    """
    if not options:
        return
    rest = sorted(k for k in options if k != "reset_mask")
    if rest:
        raise ValueError(f"reset takes no options but reset_mask, got {rest}: a game is "
                         "configured when the env is made")
    mask = options["reset_mask"]
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
    if mask.shape != (num_envs,):
        raise ValueError(f"`options['reset_mask']` must have shape `({num_envs},)`, got "
                         f"{mask.shape}")
    if mask.dtype != np.bool_:
        raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got "
                        f"{mask.dtype}")
    if not mask.all():
        raise ValueError(
            f"reset_mask={mask.tolist()} resets some games but not all: the batched games "
            "run in lockstep (one round counter), so a reset restarts every game; pass an "
            "all-True mask, or play B scalar games with gym.make_vec(id, num_envs=B)")


class LinearVectorGames(gym.vector.VectorEnv):
    """``num_envs`` seeds of one linear-loss game and their regret ledger, stepped
    together (module docstring): the experimenter's env, ``venv.unwrapped`` of a
    :class:`LinearVectorEnv`. Its attributes (the adversaries, the cumulative loss
    parameters, the drawn block of coming losses) are not for learners; they hold the
    guard.

    ## Action Space

    ``Discrete(K)`` rows (an int array of shape ``(B,)``) on arms, else points of
    ``R^dim`` (shape ``(B, dim)``); a point outside the domain is projected and counted
    (or raises :class:`~dp_online_envs.errors.InvalidActionError` with
    ``invalid_action="raise"``), as in the scalar env.

    ## Observation Space

    ``(B, 1)`` losses under bandit feedback, ``(B, P)`` parameters under full
    information (float64).

    ## Episode End

    All games end together after round T (``terminated`` all True, ``truncated`` never);
    then ``autoreset_mode`` applies (module docstring).

    Args:
        env_id: One of :data:`VECTOR_ENV_IDS`.
        num_envs: ``B >= 1``.
        block: Rounds of losses drawn per adversary call (default :data:`LOSS_BLOCK`).
        autoreset_mode: Gymnasium's :class:`~gymnasium.vector.AutoresetMode` (or its
            value), default ``NEXT_STEP``.
        **options: The id's options (as ``gym.make``).

    Raises:
        ValueError: An id without vectorized path, an adaptive adversary, a non-linear
            loss, rendering, ``record_losses`` or an unknown ``autoreset_mode`` (the
            message says which).
    """

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.NEXT_STEP,
                                          "render_modes": []}

    def __init__(self, env_id: str, num_envs: int, *, block: int = LOSS_BLOCK,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 **options: Any) -> None:
        if env_id not in VECTOR_ENV_IDS:
            raise ValueError(f"env_id={env_id!r} has no vectorized path; expected one of "
                             f"{list(VECTOR_ENV_IDS)}")
        self.num_envs = check_int("num_envs", num_envs, 1)
        self.block = check_int("block", block, 1)
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.metadata = {"autoreset_mode": self.autoreset_mode, "render_modes": []}
        template = _scalar_env(env_id, options)
        base = template.unwrapped
        why = _refusal(base, options)
        if why is not None:
            raise ValueError(why)
        self.env_id = env_id
        self.problem = template.get_wrapper_attr("problem")
        self.game_metadata = dict(template.metadata)
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
        self.spec = self._own_spec(options)
        self._rows = np.arange(self.num_envs)
        self._generators: list[np.random.Generator | None] = [None] * self.num_envs
        self._seeds: list[int | None] = [None] * self.num_envs
        self._needs_reset = True
        self._autoreset = False
        self._summaries: list[RegretSummary] | None = None
        template.close()

    def _own_spec(self, options: dict[str, Any]) -> gym.envs.registration.EnvSpec | None:
        """The spec ``gym.make_vec`` remakes these games from: the id's, with the vector
        entry point and the options (``gym.make_vec`` replaces it by its own, which
        says the same)."""
        if self.env_id not in gym.registry:
            return None
        kwargs = {**gym.spec(self.env_id).kwargs, **options, "num_envs": self.num_envs,
                  "vectorization_mode": "vector_entry_point"}
        if self.block != LOSS_BLOCK:
            kwargs["block"] = self.block
        if self.autoreset_mode is not AutoresetMode.NEXT_STEP:
            kwargs["autoreset_mode"] = self.autoreset_mode.value
        return dataclasses.replace(gym.spec(self.env_id), kwargs=kwargs,
                                   vector_entry_point=VECTOR_ENTRY_POINT)

    # ---------------------------------------------------------------- Gym API
    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start B new games; game ``b`` is seeded with ``seed[b]`` (see the module
        docstring; ``None``: its generators run on, or fresh entropy for a first game).

        Raises:
            ValueError: A seed list of the wrong length, a bad seed, an option other
                than ``reset_mask``, or a mask that does not select every game.
            TypeError: A ``reset_mask`` that is not a boolean numpy array.
        """
        _reset_mask(options, self.num_envs)
        self._start(seed_list(seed, self.num_envs))
        return np.zeros(self.observation_space.shape, dtype=np.float64), {}

    def _start(self, seeds: list[int | None]) -> None:
        """Round 0 of every game: each adversary (a fresh copy of the configured one)
        reset on its generator, new for a game with a seed, running on otherwise."""
        self._advs = []
        for b, s in enumerate(seeds):
            if s is not None or self._generators[b] is None:
                root = np.random.SeedSequence(s)
                self._generators[b] = np.random.Generator(np.random.PCG64(root))
                self._seeds[b] = int(root.entropy) if s is None else s
            adv = copy.copy(self._adversary)  # configured, not yet reset: nothing shared is mutated
            adv.reset(self._generators[b], self.domain, self.loss, self.horizon)
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
        self._autoreset = False
        self._summaries = None

    @property
    def np_random_seed(self) -> tuple[int | None, ...]:
        """Every game's reset seed (its drawn entropy when it had none; ``None`` before
        the first reset): the experimenter's record, not the learner's."""
        return tuple(self._seeds)

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
        """Play one round of every game (after the last round with ``NEXT_STEP``
        autoreset: start new games, ignoring ``actions``).

        Raises:
            RuntimeError: Before ``reset``, or after the last round with autoreset
                ``DISABLED``.
            ValueError: Actions of the wrong shape, out of range or not finite.
            InvalidActionError: A point outside the domain with ``invalid_action="raise"``.
        """
        if self._autoreset:
            self._start([None] * self.num_envs)
            B = self.num_envs
            return (np.zeros(self.observation_space.shape, dtype=np.float64), np.zeros(B),
                    np.zeros(B, dtype=bool), np.zeros(B, dtype=bool), {})
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
            obs, info = self._end(obs)
        done = np.full(self.num_envs, terminated)
        return obs, -loss, done, np.zeros(self.num_envs, dtype=bool), info

    def _end(self, obs: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        """The last round's observations and ``info`` under the autoreset mode."""
        self._summaries = self._make_summaries()
        every = np.ones(self.num_envs, dtype=bool)
        info = {REGRET_INFO_KEY: np.array(self._summaries, dtype=object),
                "_" + REGRET_INFO_KEY: every}
        if self.autoreset_mode is AutoresetMode.NEXT_STEP:
            self._autoreset = True
        elif self.autoreset_mode is AutoresetMode.DISABLED:
            self._needs_reset = True
        else:  # SAME_STEP: SyncVectorEnv's layout, the new games' observations
            final_obs = np.empty(self.num_envs, dtype=object)
            for b in range(self.num_envs):
                final_obs[b] = obs[b]
            info = {"final_obs": final_obs, "_final_obs": every.copy(),
                    "final_info": info, "_final_info": every.copy()}
            self._start([None] * self.num_envs)
            obs = np.zeros(self.observation_space.shape, dtype=np.float64)
        return obs, info

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


class LinearVectorEnv(gym.vector.VectorWrapper):
    """What a learner holds when it plays seed-batched games: :class:`LinearVectorGames`
    behind the batched :class:`~dp_online_envs.wrappers.FeedbackGuard`.

    Built from the id and options (``LinearVectorEnv(id, B, horizon=T, ...)``, as
    :class:`LinearVectorGames`); its public names give the batch's permitted feedback,
    the public :class:`~dp_online_envs.problem.Problem`, the spaces and the learner's
    own generators, and nothing of the games' state, door by door as the scalar guard:

    * ``reset``/``step``: the games' (module docstring); ``info`` is empty until the
      last round, then carries only the regret summaries (``info["regret"]``, or under
      ``SAME_STEP`` autoreset ``info["final_info"]["regret"]``). ``reset`` accepts
      ``options={"reset_mask": mask}`` with an all-True mask and no other option.
    * ``problem``, ``num_envs``, the four spaces, ``metadata`` (with
      ``"autoreset_mode"``), ``render_mode`` (``None``), ``closed``, ``close``.
    * ``summaries()``: each game's regret summary once the games are over
      (``RuntimeError`` while they run: it reveals the losses of points not played).
    * ``np_random``: a tuple of the learner's own generators, game ``b``'s spawned from
      its reset seed as the scalar guard's (``SeedSequence(s_b).spawn(2)[1]``), so it is
      the generator ``env.np_random`` of the scalar game with that seed; it cannot be
      replaced. ``np_random_seed`` is ``(-1,) * B`` (Gymnasium's "seed not known"): the
      reset seeds are not handed out.
    * ``spec``: the public spec (the adversary options given read
      ``adversary="<withheld by FeedbackGuard>", adversary_kwargs=None``).
    * ``get_attr(name)`` and ``call(name)`` answer, one value per game, only the names
      in :data:`VECTOR_LEARNER_ATTRIBUTES` (``AttributeError`` for any other);
      ``set_attr`` is refused (``AttributeError``): a game is configured when made.
    * ``render()`` has no picture (no render mode): a tuple of ``None``, one per game,
      with a warning, as ``SyncVectorEnv`` of scalar guards without a render mode.
    * Any other name raises ``AttributeError``; ``copy.copy``, ``copy.deepcopy`` and
      ``pickle`` refuse (``TypeError``): a copy would hold the adversaries.

    What it cannot do: in-process Python cannot stop a learner that walks
    ``venv.unwrapped`` or ``venv.env`` (the :class:`LinearVectorGames`), ``vars(venv)``,
    stack frames or ``gc.get_objects()``. Process isolation is the boundary for
    untrusted learners.

    Args:
        env_id: One of :data:`VECTOR_ENV_IDS`.
        num_envs: ``B >= 1``.
        **options: As :class:`LinearVectorGames` (``block``, ``autoreset_mode`` and the
            id's options).
    """

    def __init__(self, env_id: str, num_envs: int, **options: Any) -> None:
        super().__init__(LinearVectorGames(env_id, num_envs, **options))
        self.problem = self.env.problem
        # Per game: the learner's generator, or the seed it is spawned from when first
        # read (None: fresh entropy). Spawning B generators at every reset would cost.
        self._learner_rngs: list[np.random.Generator | int | None] = [None] * num_envs

    # ---------------------------------------------------------------- Gym API
    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start B new games (:meth:`LinearVectorGames.reset`); a seeded game's learner
        generator restarts from its seed, as the scalar guard's."""
        obs, info = self.env.reset(seed=seed, options=options)
        for b, s in enumerate(seed_list(seed, self.num_envs)):
            if s is not None:
                self._learner_rngs[b] = s
        return obs, info

    def render(self) -> tuple[None, ...]:
        """No picture: the batched games have no render mode (``gym.make_vec(id,
        num_envs=B, render_mode=...)`` renders B scalar games)."""
        gym.logger.warn("render() called without a render_mode: the batched games do not "
                        "render; gym.make_vec(id, num_envs=B, render_mode=...) does")
        return (None,) * self.num_envs

    # ------------------------------------------------------- the learner's doors
    def summaries(self) -> list[RegretSummary]:
        """The regret summary of every game of the last episode, once it is over.

        Raises:
            RuntimeError: While the games run (the summaries reveal the losses of points
                not played) or before the first game.
        """
        return self.env.summaries()

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """One value per game for a name in :data:`VECTOR_LEARNER_ATTRIBUTES`, as
        ``SyncVectorEnv.get_attr`` answers it through B scalar guards (``summary``:
        the summaries, called).

        Raises:
            AttributeError: For every other name.
            RuntimeError: ``summary`` while the games run.
        """
        return self.call(name)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """``get_attr(name)``; only ``summary`` is callable, and takes no arguments.

        Raises:
            AttributeError: A name not in :data:`VECTOR_LEARNER_ATTRIBUTES`.
            TypeError: Arguments given to ``summary``.
            RuntimeError: ``summary`` while the games run.
        """
        if name not in VECTOR_LEARNER_ATTRIBUTES:
            raise AttributeError(
                f"LinearVectorEnv withholds {name!r} from the learner: get_attr and call "
                f"answer only {sorted(VECTOR_LEARNER_ATTRIBUTES)} ({_UNPROTECTED})")
        if name == "summary":
            if args or kwargs:
                raise TypeError("summary takes no arguments")
            return tuple(self.summaries())
        one = {"problem": self.problem, "action_space": self.single_action_space,
               "observation_space": self.single_observation_space,
               "metadata": self.env.game_metadata, "render_mode": None,
               "np_random_seed": -1}
        if name == "np_random":
            return self.np_random
        if name == "spec":
            return tuple(self._game_spec() for _ in range(self.num_envs))
        return tuple(copy.copy(one[name]) for _ in range(self.num_envs))

    def set_attr(self, name: str, values: Any) -> NoReturn:
        """Refused: a game is configured when the env is made.

        Raises:
            AttributeError: Always.
        """
        raise AttributeError(
            f"LinearVectorEnv refuses set_attr({name!r}, ...): a game is configured when "
            f"the env is made; make a new env instead (LinearVectorEnv(id, B, {name}=...))")

    def _game_spec(self) -> gym.envs.registration.EnvSpec | None:
        """The public spec of one game: the batch's, without the vectorizer's keys."""
        spec = self.spec
        if spec is None:
            return None
        kwargs = {k: v for k, v in spec.kwargs.items() if k not in _VECTOR_SPEC_KEYS}
        return dataclasses.replace(spec, kwargs=kwargs, vector_entry_point=None)

    @property
    def np_random(self) -> tuple[np.random.Generator, ...]:
        """The learner's own generators, one per game (class docstring)."""
        for b, source in enumerate(self._learner_rngs):
            if not isinstance(source, np.random.Generator):
                child = np.random.SeedSequence(source).spawn(2)[1]
                self._learner_rngs[b] = np.random.Generator(np.random.PCG64(child))
        return tuple(self._learner_rngs)

    @np_random.setter
    def np_random(self, value: Any) -> NoReturn:
        raise AttributeError(
            "LinearVectorEnv refuses to set np_random: the games' generators are not the "
            "learner's to replace (np_random is the learner's own generators)")

    @property
    def np_random_seed(self) -> tuple[int, ...]:
        """``-1`` for every game (Gymnasium's "seed not known"): the reset seeds are not
        handed out."""
        return (-1,) * self.num_envs

    @property
    def spec(self) -> gym.envs.registration.EnvSpec | None:
        """The public spec: the games' spec with the adversary options withheld."""
        return public_spec(self.env.spec)

    def __getattr__(self, name: str) -> NoReturn:
        raise AttributeError(
            f"LinearVectorEnv has no attribute {name!r}; the learner sees the observations, "
            "rewards, problem, spaces, np_random, spec, summaries() and get_attr("
            f"{sorted(VECTOR_LEARNER_ATTRIBUTES)}) ({_UNPROTECTED})")

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError(
            "a LinearVectorEnv cannot be copied or pickled: the copy would hold the "
            "adversaries (stepping it foresees the losses); make a new one from its id")

    def __deepcopy__(self, memo: dict) -> NoReturn:
        self.__reduce_ex__(4)
