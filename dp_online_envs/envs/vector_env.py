"""Vector games: B seeds of one linear-loss id played in one numpy pass.

:class:`LinearVectorEnv` is what a learner holds: a Gymnasium ``VectorEnv`` of
``B = num_envs`` games of the same configuration that differ only in their seeds,
behind the vector form of the :class:`~dp_online_envs.wrappers.FeedbackGuard`.
The games and their regret ledger are :class:`LinearVectorGames` (the experimenter's
env, ``venv.unwrapped``). Every sub-game is the scalar game of
:func:`~dp_online_envs.envs.registry.build_env` with the same options and its own seed,
round for round:

* Seeding: ``reset(seed=[s_1, ..., s_B])`` seeds game ``b`` as ``env.reset(seed=s_b)``
  seeds the scalar env (the adversary's generator ``PCG64(SeedSequence(s_b))`` and its
  ``reset`` on that generator; the learner's ``np_random`` is fresh entropy, never
  derived from a seed, as the scalar guard's). An integer seed ``s`` means ``[s, s + 1, ...]`` (Gymnasium's convention);
  a ``None`` seed (or entry) keeps that game's generators running from where the scalar
  game's are, as the scalar env's ``reset()`` does (a game stopped mid-way first takes
  back the rounds drawn ahead for it), and gives fresh entropy to a game that has none
  yet.
* One clock per game: every game has its own round counter, horizon end, checkpoints
  and regret curve, comparator and summary, pseudo-regret, adversary and seed, as B
  independent scalar games. ``reset(options={"reset_mask": mask})`` restarts the games
  of ``mask`` only (the others play on; their rows of the returned observations are
  their last ones, and their seeds in ``seed`` are ignored), exactly as
  ``SyncVectorEnv`` resets its scalar envs; without a mask every game restarts.
* Losses: each game's adversary draws ``block`` rounds of parameters at a time with
  :meth:`~dp_online_envs.adversaries.Adversary.next_losses` (the same generator calls
  as round-by-round play; the last block of a game stops at its round T), into a ring
  of ``block`` slots per game where the round a game plays at step ``c`` sits at slot
  ``c % block``, so one step reads every game's round at one slot, whatever round each
  game is in. For the box-parameter stochastic adversaries (the defaults of MAB, Experts
  and the matroid) the ring holds the uniforms of one ``random((n, K))`` per game and
  block, and the round's parameters are computed for all games at once
  (:class:`~dp_online_envs.adversaries.stochastic.BoxLossRing`).
* Feedback: the observation row ``b`` is what the scalar
  :class:`~dp_online_envs.wrappers.FeedbackGuard` emits: ``theta_t`` (clipped to the
  parameter box) under full information, ``[f_t(x_t)]`` under bandit feedback
  (``feedback="bandit"`` downgrades a full-information id, as in the scalar env);
  ``info`` is empty but in a step where some game plays its last round, where
  ``info["regret"]`` holds that game's
  :class:`~dp_online_envs.wrappers.RegretSummary` (``None`` for the other games) and
  ``info["_regret"]`` Gymnasium's mask of the games that ended.
* Episodes: each game ends after its round T (``terminated`` True in its row). What
  follows is Gymnasium's ``autoreset_mode`` (``metadata["autoreset_mode"]``), per game
  as in ``SyncVectorEnv``: ``NEXT_STEP`` (the default) starts that game's next game in
  the next step (its generators running on), which returns a zero observation row,
  reward ``0.0`` and ``terminated`` False for it and ignores its action while the other
  games play; ``SAME_STEP`` restarts it in the step of its last round (the last
  observation and ``info`` in ``info["final_obs"]`` and ``info["final_info"]``, with
  masks); ``DISABLED`` refuses every step (``RuntimeError`` naming the games, nothing
  played) until those games are reset, e.g. ``reset(options={"reset_mask":
  terminated})``.
* Regret: the ledger of :class:`~dp_online_envs.wrappers.RegretRecorder`, one row
  per game:
  the cumulative parameter ``(B, P)``, the learner's loss, the comparator at the same
  checkpoints (per game, the same ``linear_minimizer`` and product as
  :class:`~dp_online_envs.hindsight.Comparator`; on the simplex the row minimum, which
  that product is exactly), and the pseudo-regret.
* Speed: a step in which no game draws a block, records a checkpoint, ends or restarts
  is one numpy pass over the B rows; the other steps go game by game where they must.

Equality with the scalar game: actions, feedback, learner loss and regret are
bit-identical on arms (``DPBandit-MAB-v0``: the loss of arm ``a`` is ``theta[a]``, no
arithmetic). On point domains the round's loss ``<theta_t, x_t>`` is ``np.vecdot`` of
the rows, which runs numpy's float64 dot kernel per row -- the kernel of the scalar
``np.dot`` in :class:`~dp_online_envs.losses.LinearLoss` -- so it is bit-identical too;
the feedback (``theta_t``) never depends on that arithmetic.

``gym.make_vec(id, num_envs=B)`` is Gymnasium's ``SyncVectorEnv`` of B scalar games for
every id (no id registers a vector entry point, since Gymnasium 1.4 would make it the
default mode); the vector games are the opt-in ``LinearVectorEnv(id, B, ...)`` (or
:func:`make_vector_env`), and ``gym.make_vec(venv.spec)`` remakes one.

What is not offered (``ValueError`` naming it): adaptive adversaries (their losses
depend on the play), non-linear losses, rendering and ``record_losses``. The vector
learners and the loop (:mod:`agents.vector`,
:func:`dp_online_envs.loop.run_vector_rounds`, ``agents.play_batch``) play B games
started together (``play_batch`` resets every game); staggered games are for loops
that handle each game's end themselves, as with ``SyncVectorEnv``.
``docs/vector.md`` describes the interface.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Sequence
from typing import Any, ClassVar, NoReturn

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from dp_online_envs.adversaries.stochastic import BoxLossRing
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

#: The ids with a vector path (their linear-loss configurations).
VECTOR_ENV_IDS: tuple[str, ...] = (
    "DPFullInfo-Experts-v0", "DPBandit-MAB-v0", "DPFullInfo-Sphere-v1",
    "DPFullInfo-Cube-v2", "DPFullInfo-Cube-v1", "DPFullInfo-Matroid-v2",
    "DPFullInfo-Matroid-v1",
)

#: The vector entry point in the spec of every vector env (a string, so that
#: ``venv.spec.to_json()`` works): ``gym.make_vec(venv.spec)`` remakes ``venv``. The
#: registered ids do not list it (see the module docstring).
VECTOR_ENTRY_POINT = "dp_online_envs.envs.vector_env:make_vector_env"

#: Rounds of losses drawn per adversary call.
LOSS_BLOCK = 256

#: The names ``get_attr`` and ``call`` answer through the vector guard, one value per
#: game, as ``SyncVectorEnv.get_attr`` answers them through B scalar guards: the public
#: ``Problem``, the single spaces, the game's metadata and render mode, the public
#: spec of one game, the learner's own generator of each game, ``np_random_seed``
#: (``-1``, not handed out) and ``summary`` (each game's regret summary, once no game
#: is running).
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
    """Why ``env_id`` with these options has no vector path, or ``None`` if it has.

    Raises:
        ValueError, TypeError: The options are invalid for the id (as ``build_env``).
    """
    if env_id not in VECTOR_ENV_IDS:
        return f"{env_id} has no vector path (only {list(VECTOR_ENV_IDS)})"
    env = _scalar_env(env_id, options)
    return _refusal(env.unwrapped, options)


def _refusal(base: Any, options: dict[str, Any]) -> str | None:
    if not isinstance(base.loss, LinearLoss):
        return f"the vector games need linear losses, got {base.loss!r}"
    if base.adversary.adaptive:
        return (f"adversary {base.adversary.name!r} is adaptive (its losses depend on the "
                "play): no vector path")
    if options.get("render_mode") is not None or options.get("record_losses"):
        return "render_mode and record_losses are not offered by the vector games"
    return None


def make_vector_env(num_envs: int = 1, env_id: str = "DPBandit-MAB-v0",
                    **options: Any) -> LinearVectorEnv:
    """``LinearVectorEnv(env_id, num_envs, **options)``: the vector entry point in every
    vector env's spec, so that ``gym.make_vec(venv.spec)`` remakes ``venv``.

    ``options`` are those of ``gym.make(env_id, ...)`` plus ``block`` and
    ``autoreset_mode``; gymnasium's ``max_episode_steps`` is refused (the games last
    ``horizon`` rounds).

    Raises:
        ValueError: ``max_episode_steps``, or a setting the vector games do not offer
            (an adaptive adversary, a non-linear loss, rendering, ``record_losses``):
            the message names it and points to ``gym.make_vec(id, num_envs=B)`` (B
            scalar envs), which plays every setting.
        TypeError: An option the id does not accept (as ``gym.make``).
    """
    if options.pop("max_episode_steps", None) is not None:
        raise ValueError("max_episode_steps is not offered by the vector games: pass "
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


def _reset_mask(options: dict[str, Any] | None, num_envs: int) -> np.ndarray | None:
    """The games ``reset`` restarts: ``None`` for every game (no options, no mask), else
    the ``reset_mask`` (a copy), checked as ``SyncVectorEnv`` checks it.

    Raises:
        TypeError, ValueError: As ``SyncVectorEnv`` for a mask that is not a boolean
            array of shape ``(num_envs,)`` with a True value; ``ValueError`` for any
            other option.
    """
    if not options:
        return None
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
    if not mask.any():
        raise ValueError("`options['reset_mask']` must contain a boolean array with at "
                         f"least one True value, got reset_mask={mask}")
    return mask.copy()


@functools.lru_cache(maxsize=1024)
def _spans(slot: int, n: int, width: int) -> tuple[tuple[slice, slice], ...]:
    """The ring slots of ``n`` rounds drawn at ``slot`` (wrapping at ``width``), each
    paired with its positions in the block, in order."""
    first = min(n, width - slot)
    if first == n:
        return ((slice(slot, slot + n), slice(0, n)),)
    return ((slice(slot, width), slice(0, first)), (slice(0, n - first), slice(first, n)))


class _RoundLossRing:
    """Rings of drawn rounds for any non-adaptive adversary: ``thetas[slot, b]`` is game
    ``b``'s parameter of the round it plays at that slot, from
    :meth:`~dp_online_envs.adversaries.Adversary.next_losses` (the same generator calls
    as round-by-round play). The interface of
    :class:`~dp_online_envs.adversaries.stochastic.BoxLossRing`, which holds the box
    adversaries' uniforms instead."""

    def __init__(self, num_envs: int, width: int, param_dim: int) -> None:
        self._thetas = np.zeros((width, num_envs, param_dim))

    def start(self, b: int, adversary: Any) -> None:
        """Nothing to note: the drawn rows are the parameters."""

    def fill(self, b: int, adversary: Any, t: int,
             spans: tuple[tuple[slice, slice], ...]) -> None:
        """Draw game ``b``'s next rounds (from round ``t``) into the slots of ``spans``."""
        rows = adversary.next_losses(t, spans[-1][1].stop)
        for slots, part in spans:
            self._thetas[slots, b] = rows[part]

    def thetas(self, slot: int) -> np.ndarray:
        """Every game's parameters ``(B, P)`` at ``slot`` (a view)."""
        return self._thetas[slot]

    def rewind(self, b: int, generator: np.random.Generator, rounds: int) -> bool:
        """False: the draws of a general adversary cannot be taken back one by one (the
        games replay them from the game's start instead)."""
        return False


# A game's state: not started, playing, over and waiting for the next step's autoreset
# (NEXT_STEP), over and waiting for reset() (DISABLED).
_OFF, _PLAYING, _PENDING, _OVER = 0, 1, 2, 3


class LinearVectorGames(gym.vector.VectorEnv):
    """``num_envs`` seeds of one linear-loss game and their regret ledger, stepped
    together, each game on its own clock (module docstring): the experimenter's env,
    ``venv.unwrapped`` of a :class:`LinearVectorEnv`. Its attributes (the adversaries,
    the cumulative loss parameters, the drawn rounds to come) are not for learners;
    they hold the guard.

    ## Action Space

    ``Discrete(K)`` rows (an int array of shape ``(B,)``) on arms, else points of
    ``R^dim`` (shape ``(B, dim)``); a point outside the domain is projected and counted
    (or raises :class:`~dp_online_envs.errors.InvalidActionError` with
    ``invalid_action="raise"``), as in the scalar env. The action of a game that does
    not play in a step (it is autoreset there) is ignored, as ``SyncVectorEnv`` ignores
    it.

    ## Observation Space

    ``(B, 1)`` losses under bandit feedback, ``(B, P)`` parameters under full
    information (float64).

    ## Episode End

    Each game ends after its own round T (``terminated`` True in that row, ``truncated``
    never); then ``autoreset_mode`` applies to that game (module docstring).

    Args:
        env_id: One of :data:`VECTOR_ENV_IDS`.
        num_envs: ``B >= 1``.
        block: Rounds of losses drawn per adversary call (default :data:`LOSS_BLOCK`).
        autoreset_mode: Gymnasium's :class:`~gymnasium.vector.AutoresetMode` (or its
            value), default ``NEXT_STEP``.
        **options: The id's options (as ``gym.make``).

    Raises:
        ValueError: An id without vector path, an adaptive adversary, a non-linear
            loss, rendering, ``record_losses`` or an unknown ``autoreset_mode`` (the
            message says which).
    """

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.NEXT_STEP,
                                          "render_modes": []}

    def __init__(self, env_id: str, num_envs: int, *, block: int = LOSS_BLOCK,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 **options: Any) -> None:
        if env_id not in VECTOR_ENV_IDS:
            raise ValueError(f"env_id={env_id!r} has no vector path; expected one of "
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
        # The rounds each game records R(t) at (the recorder's checkpoints, and T).
        records = sorted(find_recorder(template)._checkpoints | {self.horizon})
        self._records = np.array(records, dtype=np.int64)
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
        B, P = self.num_envs, self.loss.param_dim
        probe = copy.copy(self._adversary)
        probe.reset(np.random.Generator(np.random.PCG64(0)), self.domain, self.loss,
                    self.horizon)
        ring = BoxLossRing if BoxLossRing.accepts(probe) else _RoundLossRing
        self._ring = ring(B, self.block, P)
        self._rows = np.arange(B)
        self._generators: list[np.random.Generator | None] = [None] * B
        self._seeds: list[int | None] = [None] * B
        self._start_states: list[dict | None] = [None] * B
        self._advs: list[Any] = [None] * B
        # Per game: its state, the clock value of its round 0, the rounds drawn.
        self._phase = np.full(B, _OFF, dtype=np.int8)
        self._t0 = np.zeros(B, dtype=np.int64)
        self._drawn = np.zeros(B, dtype=np.int64)
        self._clock = 0  # steps taken; game b plays round clock - t0[b]
        self._next_due = 1  # the first step at which some game needs more than a round
        self.cumulative = np.zeros((B, P))
        self.learner_loss = np.zeros(B)
        self.projected_actions = np.zeros(B, dtype=np.int64)
        self._mu = np.zeros((B, P))
        self._has_mu = np.zeros(B, dtype=bool)
        self._pseudo_loss = np.zeros(B)
        self._curve = np.zeros((B, len(records)))
        self._summaries: list[RegretSummary | None] = [None] * B
        self._obs = np.zeros(self.observation_space.shape, dtype=np.float64)
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
        """Start new games: every game, or those of ``options["reset_mask"]`` (the
        others keep playing, their rows of the observations are their last ones, as in
        ``SyncVectorEnv``). Game ``b`` is seeded with ``seed[b]`` (module docstring;
        ``None``: its generators run on from where its scalar game's are, or fresh
        entropy for a first game); the seeds of games the mask leaves are ignored.

        Raises:
            ValueError: A seed list of the wrong length, a bad seed, an option other
                than ``reset_mask``, or a mask without a True value.
            TypeError: A ``reset_mask`` that is not a boolean numpy array.
        """
        mask = _reset_mask(options, self.num_envs)
        seeds = seed_list(seed, self.num_envs)
        if mask is None or mask.all():
            self._start(self._rows, seeds)
            obs = np.zeros(self.observation_space.shape, dtype=np.float64)
        else:
            games = np.flatnonzero(mask)
            self._start(games, seeds)
            obs = self._obs.copy()
            obs[games] = 0.0
        self._obs = obs.copy()
        self._schedule()
        return obs, {}

    def _start(self, games: np.ndarray, seeds: list[int | None]) -> None:
        """Round 0 of the games ``games`` at the current clock: each adversary (a fresh
        copy of the configured one) reset on its game's generator -- new for a seed,
        running on otherwise (taken back first to where the scalar game's is, if the
        game stops mid-way with rounds drawn ahead)."""
        for b in games.tolist():
            s, gen = seeds[b], self._generators[b]
            if s is not None or gen is None:
                root = np.random.SeedSequence(s)
                gen = self._generators[b] = np.random.Generator(np.random.PCG64(root))
                self._seeds[b] = int(root.entropy) if s is None else s
            elif self._phase[b] == _PLAYING:
                played = self._clock - int(self._t0[b])
                ahead = int(self._drawn[b]) - played
                if ahead and not self._ring.rewind(b, gen, ahead):
                    self._replay(b, played)
            if not isinstance(self._ring, BoxLossRing):
                self._start_states[b] = gen.bit_generator.state
            adv = copy.copy(self._adversary)  # configured, not yet reset: nothing shared is mutated
            adv.reset(gen, self.domain, self.loss, self.horizon)
            self._advs[b] = adv
            self._ring.start(b, adv)
            mean = adv.mean_param
            self._has_mu[b] = mean is not None
            self._mu[b] = 0.0 if mean is None else mean
            self._summaries[b] = None
        self._phase[games] = _PLAYING
        self._t0[games] = self._clock
        self._drawn[games] = 0
        self.cumulative[games] = 0.0
        self.learner_loss[games] = 0.0
        self.projected_actions[games] = 0
        self._pseudo_loss[games] = 0.0
        self._curve[games] = 0.0

    def _replay(self, b: int, played: int) -> None:
        """Put game ``b``'s generator where the scalar game's is after ``played``
        rounds: back to the game's start, then its adversary's draws of those rounds."""
        gen = self._generators[b]
        gen.bit_generator.state = self._start_states[b]
        again = copy.copy(self._adversary)
        again.reset(gen, self.domain, self.loss, self.horizon)
        if played:
            again.next_losses(1, played)

    def _schedule(self) -> None:
        """The next step at which some game needs more than a plain round: its next
        block of losses, a checkpoint or its last round, or (not playing) any step."""
        played = self._clock - self._t0
        k = np.minimum(np.searchsorted(self._records, played, side="right"),
                       len(self._records) - 1)
        due = self._t0 + np.minimum(self._drawn + 1, self._records[k])
        due = np.where(self._phase == _PLAYING, due, self._clock + 1)
        self._next_due = int(due.min())

    @property
    def np_random_seed(self) -> tuple[int | None, ...]:
        """Every game's reset seed (its drawn entropy when it had none; ``None`` before
        the first reset): the experimenter's record, not the learner's."""
        return tuple(self._seeds)

    @property
    def rounds(self) -> np.ndarray:
        """The rounds each game has played in its current game (T once it is over)."""
        return np.where(self._phase == _PLAYING, self._clock - self._t0, self._drawn)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        """Play one round of every game (a game over under ``NEXT_STEP`` autoreset
        starts a new game instead, ignoring its action).

        Raises:
            RuntimeError: A game not started, or over with autoreset ``DISABLED``
                (nothing is played: reset it, with a ``reset_mask`` for some games).
            ValueError: Actions of the wrong shape, out of range or not finite.
            InvalidActionError: A point outside the domain with ``invalid_action="raise"``.
        """
        c = self._clock + 1
        if c >= self._next_due:
            return self._step_with_events(actions, c)
        # Every game plays a plain round: no block to draw, nothing to record.
        points = self._points(actions)
        self._clock = c
        theta = self._ring.thetas(c % self.block)
        loss = self._play(theta, points)
        obs = self._observe(theta, loss)
        self._obs = obs.copy()
        B = self.num_envs
        return obs, -loss, np.zeros(B, dtype=bool), np.zeros(B, dtype=bool), {}

    def _step_with_events(self, actions: Any, c: int) -> tuple[
            np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """A step in which some game draws a block, records its regret, ends, or is
        autoreset (the general step, game by game as ``SyncVectorEnv``)."""
        stopped = np.flatnonzero((self._phase == _OFF) | (self._phase == _OVER))
        if stopped.size:
            raise RuntimeError(
                f"games {stopped.tolist()} are over or have not started: call reset() "
                "first (reset(options={'reset_mask': mask}) restarts some games)")
        restart = np.flatnonzero(self._phase == _PENDING)
        rows = np.flatnonzero(self._phase == _PLAYING)
        points = self._points(actions, rows)
        self._clock = c
        if restart.size:  # NEXT_STEP: these games start anew instead of playing
            self._start(restart, [None] * self.num_envs)
        t = c - self._t0[rows]  # the round each playing game plays
        low = rows[self._drawn[rows] < t]
        if low.size:
            self._refill(low, c)
        theta = self._ring.thetas(c % self.block)
        loss = np.zeros(self.num_envs)
        loss[rows] = self._play(theta, points, rows)
        obs = self._observe(theta, loss)
        obs[restart] = 0.0
        reward = -loss
        reward[restart] = 0.0
        terminated = np.zeros(self.num_envs, dtype=bool)
        info: dict[str, Any] = {}
        k = np.minimum(np.searchsorted(self._records, t), len(self._records) - 1)
        recorded = self._records[k] == t
        if recorded.any():
            ended = self._record(rows[recorded], k[recorded])
            if ended.size:
                terminated[ended] = True
                obs, info = self._end(ended, obs)
        self._obs = obs.copy()
        self._schedule()
        return obs, reward, terminated, np.zeros(self.num_envs, dtype=bool), info

    def _refill(self, games: np.ndarray, c: int) -> None:
        """Draw the next block of the games ``games`` (about to play round ``drawn + 1``
        at step ``c``) into their rings: ``min(block, T - drawn)`` rounds, as the
        scalar game's ``next_losses`` calls would draw them."""
        n = np.minimum(self.block, self.horizon - self._drawn[games])
        slot = c % self.block
        for b, nb, done in zip(games.tolist(), n.tolist(), self._drawn[games].tolist()):
            self._ring.fill(b, self._advs[b], done + 1, _spans(slot, nb, self.block))
        self._drawn[games] += n

    def _play(self, theta: np.ndarray, points: np.ndarray,
              rows: np.ndarray | None = None) -> np.ndarray:
        """One round of the games ``rows`` (every game if ``None``) on their parameters
        ``theta`` (rows of all games): their losses, added to their ledgers."""
        mu = self._mu
        if rows is not None:
            theta, points, mu = theta[rows], points[rows], mu[rows]
        if self._arms:
            r = self._rows[:len(points)]
            loss, pseudo = theta[r, points], mu[r, points]
        else:
            loss, pseudo = _row_dots(theta, points), _row_dots(mu, points)
        if rows is None:
            self.learner_loss += loss
            self._pseudo_loss += pseudo
            self.cumulative += theta
        else:
            self.learner_loss[rows] += loss
            self._pseudo_loss[rows] += pseudo
            self.cumulative[rows] += theta
        return loss

    def _observe(self, theta: np.ndarray, loss: np.ndarray) -> np.ndarray:
        """The scalar guard's feedback of every game: the clipped loss (bandit) or the
        clipped parameters (full information)."""
        if self._downgrade:
            return np.clip(loss, -self._high, self._high)[:, None]
        if self._bandit:  # np.clip's values (losses are finite), without its overhead
            return np.minimum(np.maximum(loss, self._obs_low[0]), self._obs_high[0])[:, None]
        return np.clip(theta, self._obs_low, self._obs_high)

    def _record(self, games: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """``R(t)`` of the games ``games`` at their recorded rounds (``columns``: the
        rounds' places in the curve); the games that played their last round, with
        their summaries made."""
        best = self._comparator(games)
        self._curve[games, columns] = self.learner_loss[games] - best
        last = columns == len(self._records) - 1
        for b, value in zip(games[last].tolist(), best[last].tolist()):
            self._summaries[b] = self._make_summary(b, value)
        return games[last]

    def _end(self, ended: np.ndarray, obs: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        """The games ``ended`` played their last round: the observations and ``info``
        under the autoreset mode, as ``SyncVectorEnv`` builds them."""
        mask = np.zeros(self.num_envs, dtype=bool)
        mask[ended] = True
        summaries = np.full(self.num_envs, None, dtype=object)
        for b in ended.tolist():
            summaries[b] = self._summaries[b]
        info = {REGRET_INFO_KEY: summaries, "_" + REGRET_INFO_KEY: mask}
        if self.autoreset_mode is AutoresetMode.NEXT_STEP:
            self._phase[ended] = _PENDING
        elif self.autoreset_mode is AutoresetMode.DISABLED:
            self._phase[ended] = _OVER
        else:  # SAME_STEP: the last observations aside, the new games' observations
            final_obs = np.full(self.num_envs, None, dtype=object)
            for b in ended.tolist():
                final_obs[b] = obs[b].copy()
            info = {"final_obs": final_obs, "_final_obs": mask.copy(),
                    "final_info": info, "_final_info": mask.copy()}
            self._start(ended, [None] * self.num_envs)
            obs[ended] = 0.0
        return obs, info

    def _points(self, actions: Any, rows: np.ndarray | None = None) -> np.ndarray:
        """The arms (int array ``(B,)``) or the points ``(B, dim)`` played, checked and
        projected where needed in the rows ``rows`` (every row if ``None``; the other
        games do not play)."""
        a = np.asarray(actions)
        if self._arms:
            if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
                raise ValueError(f"actions must be {self.num_envs} arm indices (an integer "
                                 f"array of shape ({self.num_envs},)), got shape {a.shape} "
                                 f"dtype {a.dtype}")
            k = self.single_action_space.n
            played = a if rows is None else a[rows]
            if played.size and (played.min() < 0 or played.max() >= k):
                raise ValueError(f"arm indices must lie in [0, {k}), got {played.tolist()}")
            return a.astype(np.intp)
        if a.dtype.kind == "c":  # float64 conversion would drop the imaginary parts
            raise ValueError(f"actions are complex ({a.dtype}); expected real points of "
                             f"R^{self.domain.dim}")
        x = np.array(a, dtype=np.float64)
        if x.shape != (self.num_envs, self.domain.dim):
            raise ValueError(f"actions must be {self.num_envs} points of R^{self.domain.dim} "
                             f"(shape ({self.num_envs}, {self.domain.dim})), got {x.shape}")
        games = self._rows if rows is None else rows
        played = x if rows is None else x[rows]
        if not np.all(np.isfinite(played)):
            raise ValueError("actions must be finite")
        outside = games[~self._contains(played)].tolist()
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
    def _comparator(self, games: np.ndarray) -> np.ndarray:
        """``min_x <sum_s theta_s, x>`` of the games ``games`` (the Comparator's linear
        branch)."""
        cumulative = self.cumulative[games]
        if self._simplex:
            # <s, e_i> is s_i exactly (the other products are zeros): the minimum
            return cumulative.min(axis=1)
        out = np.empty(len(cumulative))
        for i, s in enumerate(cumulative):
            out[i] = float(s @ self.domain.linear_minimizer(s))
        return out

    def _make_summary(self, b: int, best: float) -> RegretSummary:
        """Game ``b``'s summary at its last round (``best``: the comparator)."""
        pseudo = None
        if self._has_mu[b]:
            one_round = Comparator(self.domain, self.loss)
            one_round.add(self._mu[b])
            pseudo = float(self._pseudo_loss[b] - self.horizon * one_round.best()[0])
        loss = float(self.learner_loss[b])
        curve = self._curve[b].tolist()
        return RegretSummary(
            rounds=self.horizon, learner_loss=loss, comparator_lo=best, comparator_hi=best,
            regret_lo=loss - best, regret_hi=loss - best, exact=True, pseudo_regret=pseudo,
            projected_actions=int(self.projected_actions[b]),
            checkpoints=self._records.tolist(), regret_curve_lo=curve,
            regret_curve_hi=list(curve))

    def summaries(self) -> list[RegretSummary]:
        """The regret summary of every game's last game, once no game is running (as
        ``SyncVectorEnv.call("summary")`` of the scalar guards).

        Raises:
            RuntimeError: While a game runs (the summary reveals the losses of points
                not played) or before every game has ended once.
        """
        if any(s is None for s in self._summaries):  # a game starting clears its own
            raise RuntimeError("the games have not ended: each summary arrives in "
                               "info['regret'] at the game's last round")
        return list(self._summaries)


class LinearVectorEnv(gym.vector.VectorWrapper):
    """What a learner holds when it plays vector games: :class:`LinearVectorGames`
    behind the vector :class:`~dp_online_envs.wrappers.FeedbackGuard`.

    Built from the id and options (``LinearVectorEnv(id, B, horizon=T, ...)``, as
    :class:`LinearVectorGames`); its public names give the batch's permitted feedback,
    the public :class:`~dp_online_envs.problem.Problem`, the spaces and the learner's
    own generators, and nothing of the games' state, door by door as the scalar guard:

    * ``reset``/``step``: the games' (module docstring); ``info`` is empty but in a
      step where some game ends, then carries only the regret summaries of the games
      that ended (``info["regret"]`` with its mask, or under ``SAME_STEP`` autoreset
      ``info["final_info"]["regret"]``). ``reset`` accepts
      ``options={"reset_mask": mask}`` (restarting the games of ``mask``) and no other
      option.
    * ``problem``, ``num_envs``, the four spaces, ``metadata`` (with
      ``"autoreset_mode"``), ``render_mode`` (``None``), ``closed``, ``close``. The
      problem is a fresh copy at every access, and the spaces and ``metadata`` are the
      wrapper's own copies (``get_attr`` hands out copies too): a learner that changes
      them changes no game.
    * ``summaries()``: each game's regret summary once no game is running
      (``RuntimeError`` while one runs: it reveals the losses of points not played).
    * ``np_random``: a tuple of the learner's own generators, one per game, from fresh
      OS entropy when first read and never from the reset seeds (as the scalar
      guard's: no search over seeds leads from them to the games); it cannot be
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
        # The learner's problem, spaces and metadata are copies: nothing it holds is an
        # object the games or their ledger use, so changing them changes no game.
        self._public = self.env.problem.public_copy()
        self.single_action_space = copy.deepcopy(self.env.single_action_space)
        self.single_observation_space = copy.deepcopy(self.env.single_observation_space)
        self.action_space = copy.deepcopy(self.env.action_space)
        self.observation_space = copy.deepcopy(self.env.observation_space)
        self.metadata = copy.deepcopy(self.env.metadata)
        # Per game: the learner's generator, made from fresh OS entropy when first read.
        self._learner_rngs: tuple[np.random.Generator, ...] | None = None

    # ---------------------------------------------------------------- Gym API
    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start new games, every game or those of ``options["reset_mask"]``
        (:meth:`LinearVectorGames.reset`); the seeds never reach the learner's
        generators (``np_random``), as in the scalar guard.

        Raises:
            ValueError, TypeError: As :meth:`LinearVectorGames.reset`.
        """
        return self.env.reset(seed=seed, options=options)

    def render(self) -> tuple[None, ...]:
        """No picture: the vector games have no render mode (``gym.make_vec(id,
        num_envs=B, render_mode=...)`` renders B scalar games)."""
        gym.logger.warn("render() called without a render_mode: the vector games do not "
                        "render; gym.make_vec(id, num_envs=B, render_mode=...) does")
        return (None,) * self.num_envs

    # ------------------------------------------------------- the learner's doors
    def summaries(self) -> list[RegretSummary]:
        """The regret summary of every game's last game, once no game is running.

        Raises:
            RuntimeError: While a game runs (the summaries reveal the losses of points
                not played) or before every game has ended once.
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
        if name == "np_random":
            return self.np_random
        if name == "spec":
            return tuple(self._game_spec() for _ in range(self.num_envs))
        if name == "problem":
            return tuple(self.problem for _ in range(self.num_envs))
        one = {"action_space": self.single_action_space,
               "observation_space": self.single_observation_space,
               "metadata": self.env.game_metadata, "render_mode": None,
               "np_random_seed": -1}
        return tuple(copy.deepcopy(one[name]) for _ in range(self.num_envs))

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
    def problem(self) -> Any:
        """The public :class:`~dp_online_envs.problem.Problem`: a fresh copy at every
        access, sharing no object with the games, their ledger or another caller's."""
        return self._public.public_copy()

    @property
    def np_random(self) -> tuple[np.random.Generator, ...]:
        """The learner's own generators, one per game (class docstring)."""
        if self._learner_rngs is None:
            children = np.random.SeedSequence().spawn(self.num_envs)
            self._learner_rngs = tuple(np.random.Generator(np.random.PCG64(c))
                                       for c in children)
        return self._learner_rngs

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
