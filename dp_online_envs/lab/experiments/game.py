"""One game: its settings (:class:`GameSpec`), its seeds, and playing it to a record.

A game is fully described by its settings: env id and version, the env's resolved
options, agent and options, epsilon, delta, horizon and seed index. Its seeds are
derived from a stable hash of those settings, so the same game gives the same record on
any machine, in any process, under any backend.

The env's part is what is played, not what was written: its options are resolved (the
id's defaults updated by the user's, :func:`~dp_online_envs.envs.registry.resolved_options`)
and its version (``-vN``) is hashed with them, so a game whose defaults change gets
another id, and a results directory never serves a record of the former game for the
new one (the store also refuses a record whose settings differ from the game asked for:
:func:`settings_mismatch`).

Seeding (scheme :data:`SEED_SCHEME`):
    * ``game_id`` is a SHA-256 of the canonical JSON of the settings (tags excluded:
      relabelling a game does not rerun it).
    * The agent is seeded from ``np.random.SeedSequence(entropy=<the game hash>)``.
    * The env is seeded from the hash of its own part of the settings (env id and
      version, resolved env options, horizon, seed index) only, so every agent and every
      epsilon with the same seed index faces the same loss sequence (common random
      numbers: the differences between learners and privacy levels are measured on
      paired games).
    * Both seeds are 63-bit hashes, neither derived from the other, so no search over
      small seeds leads from the agent's seed to the env's (unlike a hand loop's small
      ``reset(seed=s)``). Without a :attr:`GameSpec.seed_secret` both are public
      functions of the settings; with one, neither can be computed.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import hashlib
import json
import math
import socket
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dp_online_envs import __version__
from dp_online_envs.envs.registry import ENV_CONFIGS, build_env, env_config, resolved_options
from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.resolver import (
    AgentResolver,
    default_resolver,
    resolve_agent,
)
from dp_online_envs.lab.isolation import IsolatedLearner, IsolationLimits
from dp_online_envs.loop import RoundHook, run_rounds, seed_of
from dp_online_envs.wrappers import REGRET_INFO_KEY, regret_summary

#: Bumped when the meaning of the settings hash changes (it is part of the hash).
#: ``seed-v2``: the env's part is its id, version and resolved options (``seed-v1``
#: hashed only the options the user wrote).
SEED_SCHEME = "dp-online/seed-v2"
#: Version of the record layout written by :func:`play_game` (see :mod:`.store`: records
#: with another or no version are quarantined and their games replayed). Version 2 adds
#: ``seed_scheme``, ``env_version`` and ``env_options`` (:data:`IDENTITY_FIELDS`).
SCHEMA_VERSION = 2
#: The settings a record carries exactly as its game's :meth:`GameSpec.identity` has
#: them: a record is served for a game only if every one agrees
#: (:func:`settings_mismatch`).
IDENTITY_FIELDS = ("seed_scheme", "env_id", "env_version", "env_options", "agent",
                   "agent_kwargs", "epsilon", "delta", "horizon", "seed_index")
#: Options of an env that the runner sets itself (the horizon is a setting of its own,
#: the feedback follows from the agent): left out of ``env_options``.
RUNNER_OPTIONS = ("horizon", "feedback")
#: Record fields that differ between two runs of the same game (timing, host, and
#: whether it was played in a vector batch: the outcome is the same either way).
VOLATILE_FIELDS = ("wall_time", "finished_at", "host", "vectorized")


#: How a guarantee that holds for the idealized real-valued mechanism only (the float
#: outputs of the ``factorization`` and ``blt`` counters) is labelled wherever a
#: guarantee or a comparison of learners is shown: the record's ``privacy``, the
#: analysis' privacy labels, the report, the run summary, the plots.
IDEALIZED = "idealized"
#: What marks such a guarantee in its text (``str(PrivacyGuarantee)`` with
#: ``idealized=True``; the only form an isolated learner's claim crosses in).
IDEALIZED_MARK = "[IDEALIZED"
#: What the label means, in one sentence (the report's tooltip and notes).
IDEALIZED_NOTE = ("idealized: the (epsilon, delta) guarantee holds for the real-valued "
                  "mechanism, not for its float64 computation (the factorization and blt "
                  "counters' real-valued Gaussian noise)")


def is_idealized(record: dict[str, Any]) -> bool:
    """Whether a record's declared guarantee holds for the idealized real-valued
    mechanism only (its ``privacy_mechanism`` carries :data:`IDEALIZED_MARK`)."""
    return IDEALIZED_MARK in str(record.get("privacy_mechanism") or "")


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: the text that is hashed."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=jsonable,
                      allow_nan=True)


def jsonable(obj: Any) -> Any:
    """``json.dumps`` default: numpy scalars and arrays, tuples and sets."""
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (tuple, set, frozenset)):
        return list(obj)
    raise TypeError(f"{obj!r} ({type(obj).__name__}) cannot be written to a results file")


def plain(obj: Any) -> Any:
    """``obj`` as plain JSON types (tuples to lists, numpy scalars to Python)."""
    return json.loads(canonical_json(obj))


def stable_hash(obj: Any) -> str:
    """Hex SHA-256 of the canonical JSON of ``obj`` (stable across processes and hosts)."""
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()


def _seed_from(digest: str) -> int:
    """A 63-bit seed from ``SeedSequence(entropy=<128 bits of the digest>)``."""
    return seed_of(np.random.SeedSequence(int(digest[:32], 16)))


def feedback_option(env_id: str, agent_cls: type,
                    resolver: AgentResolver | None = None) -> str | None:
    """The ``feedback`` option the env needs for this agent (``"bandit"`` downgrades).

    Args:
        env_id: A registered env id.
        agent_cls: The agent class (its ``feedback`` is read).
        resolver: The registry whose bandit agents an error message lists; ``None`` for
            :func:`~.resolver.default_resolver`.

    Returns:
        ``"bandit"`` for a bandit agent on a full-information env, else ``None``.

    Raises:
        ExperimentError: An unknown env id, or a full-information agent on a bandit env
            (feedback cannot be upgraded); the message lists the agents that can play it.
    """
    try:
        native = env_config(env_id).feedback
    except ValueError as exc:
        raise ExperimentError(str(exc)) from None
    if agent_cls.feedback == "full" and native == "bandit":
        resolver = default_resolver() if resolver is None else resolver
        ok = [n for n in resolver.names() if resolver.resolve(n).feedback == "bandit"]
        raise ExperimentError(
            f"agent {agent_cls.name!r} needs full-information feedback but {env_id} gives "
            f"only bandit feedback (feedback can be downgraded, never upgraded); agents "
            f"that can play it: {ok}")
    return "bandit" if (agent_cls.feedback == "bandit" and native == "full") else None


def env_options(env_id: str, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Every option of a game's env as plain JSON: the id's defaults updated by
    ``env_kwargs`` (:func:`~dp_online_envs.envs.registry.resolved_options`), without the
    options the runner sets (:data:`RUNNER_OPTIONS`).

    Raises:
        ValueError: An unknown env id.
        TypeError, ValueError: An option the env refuses (as ``build_env``).
    """
    opts = resolved_options(env_id, **env_kwargs)
    return plain({k: v for k, v in opts.items() if k not in RUNNER_OPTIONS})


def agent_label(agent: str, agent_kwargs: dict[str, Any]) -> str:
    """``name`` or ``name(key=value, ...)``: how a configured agent is shown."""
    if not agent_kwargs:
        return agent
    inner = ", ".join(f"{k}={canonical_json(v).strip(chr(34))}"
                      for k, v in sorted(agent_kwargs.items()))
    return f"{agent}({inner})"


@dataclasses.dataclass(frozen=True)
class GameSpec:
    """The settings of one game.

    Attributes:
        env_id: A registered env id.
        agent: Registered agent name (or ``"module:Class"``).
        epsilon: Privacy parameter; ``None`` for a non-private agent.
        delta: Privacy parameter; ``None`` for a non-private agent.
        horizon: Number of rounds T.
        seed_index: Which repetition (0, 1, ...); the seeds are derived from it.
        env_kwargs: Options passed to the env (besides ``horizon`` and ``feedback``).
        agent_kwargs: Options passed to the agent.
        tags: Labels copied to the record (not part of the game's identity).
        sweep: Name of the sweep the game belongs to (not part of its identity).
        agent_cls: The agent class, which builds the agent; the games of
            :func:`~.sweep.parse_sweep` and :func:`~.sweep.make_games` carry it (it is
            needed when the class is not reachable by name, e.g. defined in a script).
            ``None``: resolved by name when played. Not part of the identity (``agent``
            is).
        isolation: Play the agent in its own process with these limits (``None``: in
            process). Not part of the identity.
        seed_secret: A secret mixed into the seeds (see :attr:`env_seed`). Not part of
            the identity (a digest of it is).
    """

    env_id: str
    agent: str
    epsilon: float | None
    delta: float | None
    horizon: int
    seed_index: int
    env_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    agent_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    tags: dict[str, Any] = dataclasses.field(default_factory=dict)
    sweep: str | None = None
    agent_cls: type | None = dataclasses.field(default=None, compare=False, repr=False)
    isolation: IsolationLimits | None = dataclasses.field(default=None, compare=False)
    seed_secret: str | None = dataclasses.field(default=None, compare=False, repr=False)

    def identity(self) -> dict[str, Any]:
        """The settings that define the game (and its seeds).

        The env's part is what is played: the id, its version and its resolved options
        (:meth:`env_options`), not only the options written in :attr:`env_kwargs`.
        With a :attr:`seed_secret`, the identity holds a digest of it (so secret-seeded
        games get their own ids) while the seeds are derived from the secret itself.

        Raises:
            ExperimentError: An unknown env id.
            TypeError, ValueError: An option the env refuses (as ``build_env``).
        """
        secret = {} if self.seed_secret is None else {
            "seed_secret_sha256": hashlib.sha256(self.seed_secret.encode()).hexdigest()[:16]}
        return {
            **secret,
            "seed_scheme": SEED_SCHEME,
            "env_id": self.env_id,
            "env_version": self._config().version,
            "env_options": self.env_options(),
            "agent": self.agent,
            "agent_kwargs": plain(self.agent_kwargs),
            "epsilon": None if self.epsilon is None else float(self.epsilon),
            "delta": None if self.delta is None else float(self.delta),
            "horizon": int(self.horizon),
            "seed_index": int(self.seed_index),
        }

    def _config(self) -> Any:
        try:
            return env_config(self.env_id)
        except ValueError as exc:
            raise ExperimentError(str(exc)) from None

    def env_options(self) -> dict[str, Any]:
        """Every option of the game's env, as plain JSON: the id's defaults updated by
        :attr:`env_kwargs` (:func:`~dp_online_envs.envs.registry.resolved_options`),
        without the options the runner sets (:data:`RUNNER_OPTIONS`).

        Raises:
            ExperimentError: An unknown env id.
            TypeError, ValueError: An option the env refuses (as ``build_env``).
        """
        self._config()
        return env_options(self.env_id, self.env_kwargs)

    @property
    def game_id(self) -> str:
        """Stable id (24 hex digits): the results file name."""
        return stable_hash(self.identity())[:24]

    @property
    def agent_seed(self) -> int:
        """The agent's seed, from the hash of all the settings (and the secret)."""
        return _seed_from(stable_hash(self._keyed(self.identity())))

    @property
    def env_seed(self) -> int:
        """The env's seed, from the hash of the env's settings and the seed index.

        Without a :attr:`seed_secret` it is public (computable from the settings): an
        agent that guesses the settings can rebuild the env. Against untrusted agents
        play isolated with a secret (see :mod:`dp_online_envs.lab.isolation`).
        """
        ident = self.identity()
        env_part = {k: ident[k] for k in ("seed_scheme", "env_id", "env_version",
                                          "env_options", "horizon", "seed_index")}
        return _seed_from(stable_hash(self._keyed(env_part)))

    def _keyed(self, part: dict[str, Any]) -> dict[str, Any]:
        return part if self.seed_secret is None else {**part, "seed_secret": self.seed_secret}

    @property
    def label(self) -> str:
        """The configured agent as shown in tables and legends."""
        return agent_label(self.agent, self.agent_kwargs)

    def agent_class(self, resolver: AgentResolver | None = None) -> type:
        """The agent class this game plays: :attr:`agent_cls`, else :attr:`agent` resolved
        by ``resolver`` (``None``: :func:`~.resolver.default_resolver`).

        Raises:
            ExperimentError: The name cannot be resolved.
        """
        return self.agent_cls if self.agent_cls is not None else resolve_agent(self.agent,
                                                                               resolver)


def _optional_float(x: Any) -> float | None:
    """``float(x)``, or ``None`` for ``None`` (a record's optional number)."""
    return None if x is None else float(x)


#: The outcome part of a record: the fields of the game's
#: :class:`~dp_online_envs.wrappers.RegretSummary` (``as_dict()``) and the learner's
#: ``clipped_feedback`` count, in record order, each with its JSON type.
OUTCOME_FIELDS: dict[str, Callable[[Any], Any]] = {
    "rounds": int,
    "regret": float,
    "regret_lo": float,
    "regret_hi": float,
    "exact": bool,
    "pseudo_regret": _optional_float,
    "learner_loss": float,
    "comparator_lo": float,
    "comparator_hi": float,
    "checkpoints": lambda cs: [int(c) for c in cs],
    "regret_curve_lo": lambda vs: [float(v) for v in vs],
    "regret_curve_hi": lambda vs: [float(v) for v in vs],
    "clipped_feedback": int,
    "projected_actions": int,
}


def outcome_fields(summary: Any, clipped_feedback: int) -> dict[str, Any]:
    """The outcome part of a record (:data:`OUTCOME_FIELDS`) from a regret summary.

    Args:
        summary: The game's :class:`~dp_online_envs.wrappers.RegretSummary`; every field
            of its ``as_dict()`` is used.
        clipped_feedback: How many feedback values the learner clipped.

    Raises:
        KeyError: The summary lacks a field of :data:`OUTCOME_FIELDS`. (A summary field
            the record has no place for is left out; the tests require none.)
    """
    fields = {**summary.as_dict(), "clipped_feedback": clipped_feedback}
    return {key: as_type(fields[key]) for key, as_type in OUTCOME_FIELDS.items()}


def play_game(spec: GameSpec, resolver: AgentResolver | None = None,
              progress: RoundHook | None = None) -> dict[str, Any]:
    """Play one complete game and return its record (a flat, JSON-ready dict).

    The env is ``build_env(env_id, horizon=T, **env_kwargs)`` (with ``feedback="bandit"``
    when a bandit agent plays a full-information env); the agent is built with the
    spec's epsilon/delta and options, and the rounds are played by the one game loop
    (:func:`dp_online_envs.loop.run_rounds`). With ``spec.isolation`` set, the agent is
    built and plays in its own spawned process (:class:`~dp_online_envs.lab.isolation.
    IsolatedLearner`) and receives only the problem, its seed and its feedback; the
    record is bit-identical to in-process play.

    Args:
        spec: The game.
        resolver: Resolves ``spec.agent`` when ``spec.agent_cls`` is ``None`` (``None``:
            :func:`~.resolver.default_resolver`).
        progress: A round hook called after every round (after the switch counter),
            how the backends report the rounds of a game in flight
            (:class:`~.backends.RoundTicker`). It is not part of the game: the record is
            the same with or without it.

    Returns:
        The record: the settings, the declared guarantee, :data:`OUTCOME_FIELDS`, the
        versions and the volatile :data:`VOLATILE_FIELDS`.

    Raises:
        ExperimentError: An agent that cannot be resolved, or one the env cannot serve.
        ValueError, TypeError: The env or agent refuses its options.
        AgentFailure: An isolated agent crashed, timed out, broke a limit or sent a
            malformed action.
    """
    start = time.perf_counter()
    cls = spec.agent_class(resolver)
    feedback = feedback_option(spec.env_id, cls, resolver)
    extra = {"feedback": feedback} if feedback else {}
    env = build_env(spec.env_id, horizon=spec.horizon, **extra, **spec.env_kwargs)
    agent_seed, env_seed = spec.agent_seed, spec.env_seed
    factory = functools.partial(cls, epsilon=spec.epsilon, delta=spec.delta or 0.0,
                                seed=agent_seed, **spec.agent_kwargs)
    try:
        problem = env.get_wrapper_attr("problem")  # the record's: the agent gets its own copy
        if spec.isolation is None:
            agent = factory(env.get_wrapper_attr("problem"))
            summary, switches = _played(env, agent, agent_seed, env_seed, progress)
            clipped = int(agent.clipped_feedback)
            guarantee = getattr(agent, "privacy", None)
            claim = None if guarantee is None else (
                float(guarantee.epsilon), float(guarantee.delta), str(guarantee))
        else:
            with IsolatedLearner(factory, problem, env.action_space, spec.isolation) as proxy:
                summary, switches = _played(env, proxy, agent_seed, env_seed, progress)
                after = proxy.finish()
            clipped, claim = after["clipped_feedback"], after["privacy"]
    finally:
        env.close()
    return game_record(spec, cls, problem, summary, clipped, claim, start, switches)


def game_record(spec: GameSpec, cls: type, problem: Any, summary: Any, clipped: int,
                claim: tuple[float, float, str] | None, start: float, switches: int,
                vectorized: bool = False) -> dict[str, Any]:
    """The record of a played game (what :func:`play_game` returns).

    Args:
        spec: The game.
        cls: Its agent class.
        problem: The public problem the agent played.
        summary: The game's :class:`~dp_online_envs.wrappers.RegretSummary`.
        clipped: The learner's ``clipped_feedback``.
        claim: ``(epsilon, delta, mechanism text)`` of the learner's guarantee, or
            ``None``.
        start: ``time.perf_counter()`` when the game started (for ``wall_time``).
        switches: How often the played action changed (:class:`SwitchCounter`).
        vectorized: Whether it was played with other seeds as one vector game (the record's
            ``vectorized`` field; :mod:`.vector`).

    Raises:
        FloatingPointError: A non-finite regret or loss.
    """
    env_seed, agent_seed = spec.env_seed, spec.agent_seed
    if claim is not None:
        p_eps, p_delta, mechanism = claim
        privacy = f"({p_eps:g}, {p_delta:g})-DP"
        if IDEALIZED_MARK in mechanism:
            privacy += f" {IDEALIZED}"
    elif cls.private:
        privacy = f"({spec.epsilon:g}, {spec.delta or 0.0:g})-DP (requested)"
        p_eps, p_delta, mechanism = spec.epsilon, spec.delta or 0.0, ""
    else:
        privacy, p_eps, p_delta, mechanism = "non-private", None, None, ""
    identity = spec.identity()
    record: dict[str, Any] = {
        "game_id": spec.game_id,
        "sweep": spec.sweep,
        "tags": plain(spec.tags),
        "seed_scheme": identity["seed_scheme"],
        # None without a secret; with one, its digest (the identity's): the game id can
        # then be recomputed from the record (record_id_mismatch)
        "seed_secret_sha256": identity.get("seed_secret_sha256"),
        "env_id": spec.env_id,
        "env_version": identity["env_version"],
        "env_feedback": ENV_CONFIGS[spec.env_id].feedback,
        "feedback": problem.feedback,
        "env_kwargs": plain(spec.env_kwargs),
        "env_options": identity["env_options"],
        "agent": spec.agent,
        "agent_label": spec.label,
        "agent_kwargs": plain(spec.agent_kwargs),
        # what was played: the agent's options with their defaults, the given ones applied
        "agent_options": plain({**dict(getattr(cls, "options", None) or {}),
                                **spec.agent_kwargs}),
        "agent_feedback": cls.feedback,
        "private": bool(cls.private),
        "counterpart": (cls.counterpart_for(problem, **spec.agent_kwargs)
                        if cls.private else None),
        "paper": cls.paper,
        "epsilon": _optional_float(spec.epsilon),
        "delta": _optional_float(spec.delta),
        "privacy": privacy,
        "privacy_epsilon": _optional_float(p_eps),
        "privacy_delta": _optional_float(p_delta),
        "privacy_mechanism": mechanism,
        "horizon": int(spec.horizon),
        "seed_index": int(spec.seed_index),
        "env_seed": env_seed,
        "agent_seed": agent_seed,
        **outcome_fields(summary, clipped),
        "switches": int(switches),
        "version": __version__,
        "schema_version": SCHEMA_VERSION,
        "wall_time": time.perf_counter() - start,
        "finished_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "vectorized": bool(vectorized),
    }
    for key in ("regret", "regret_lo", "regret_hi", "learner_loss"):
        if not math.isfinite(record[key]):
            raise FloatingPointError(f"game {spec.game_id}: {key} = {record[key]}")
    return record


class SwitchCounter:
    """A :data:`~dp_online_envs.loop.RoundHook` counting how often the played action
    changes: ``switches = #{t >= 2 : a_t != a_{t-1}}`` (an arm index, a 0/1 vector or a
    point, compared exactly), the figure the low-switching learners are judged by.

    Attributes:
        switches: The count so far.
    """

    def __init__(self) -> None:
        self.switches = 0
        self._last: np.ndarray | int | None = None

    def __call__(self, t: int, action: Any, feedback: Any) -> None:
        if type(action) is int:  # an arm: compared without numpy (the same count)
            last = self._last
            if last is not None and (type(last) is not int or action != last):
                if type(last) is int or not np.array_equal(action, last):
                    self.switches += 1
            self._last = action
            return
        a = np.array(action, copy=True)
        if self._last is not None and not np.array_equal(a, self._last):
            self.switches += 1
        self._last = a


class BatchSwitchCounter:
    """:class:`SwitchCounter` for B lockstep games (a
    :data:`~dp_online_envs.loop.BatchRoundHook`): ``switches[b]`` counts the rounds whose
    action of game ``b`` differs from its previous one.

    Attributes:
        switches: ``(B,)`` int64 counts so far.
    """

    def __init__(self, num_games: int) -> None:
        self.switches = np.zeros(num_games, dtype=np.int64)
        self._last: np.ndarray | None = None

    def __call__(self, t: int, actions: Any, feedback: Any) -> None:
        a = np.array(actions, copy=True)
        if self._last is not None:
            changed = a != self._last
            self.switches += changed.reshape(len(a), -1).any(axis=1)
        self._last = a


def _played(env: Any, learner: Any, agent_seed: int, env_seed: int,
            progress: RoundHook | None = None) -> Any:
    """Reset both sides with their seeds, play the game; return its regret summary and
    the number of action switches (:class:`SwitchCounter`). ``progress`` is called after
    the counter every round."""
    learner.reset(agent_seed)
    env.reset(seed=env_seed)
    counter = SwitchCounter()
    hook: RoundHook = counter
    if progress is not None:
        def hook(t: int, action: Any, feedback: Any) -> None:
            counter(t, action, feedback)
            progress(t, action, feedback)
    info = run_rounds(env, learner, hook)
    summary = info[REGRET_INFO_KEY] if REGRET_INFO_KEY in info else regret_summary(env)
    return summary, counter.switches


def settings_mismatch(record: dict[str, Any], spec: GameSpec) -> str | None:
    """Why ``record`` is not the record of the game ``spec``; ``None`` if it is.

    Compares every field of :data:`IDENTITY_FIELDS` (the resolved settings of the game
    that was played) with ``spec``'s identity: a record of another game (another
    version, or other defaults under the same id) is never served for this one.

    Returns:
        ``"resolved settings differ from the game asked for: ..."`` naming each field
        that differs (for ``env_options``, each option) with the record's value and the
        game's, or ``None``.
    """
    identity = spec.identity()
    diffs = []
    for key in IDENTITY_FIELDS:
        mine, theirs = record.get(key), identity[key]
        if key == "env_options" and isinstance(mine, dict):
            diffs += [f"env_options[{k!r}] {mine.get(k, '<absent>')!r} in the record, "
                      f"{theirs.get(k, '<absent>')!r} in the game"
                      for k in sorted(set(mine) | set(theirs)) if mine.get(k) != theirs.get(k)]
        elif mine != theirs:
            diffs.append(f"{key} {mine!r} in the record, {theirs!r} in the game")
    if not diffs:
        return None
    return "resolved settings differ from the game asked for: " + "; ".join(diffs)


def record_id_mismatch(record: dict[str, Any]) -> str | None:
    """Why ``record``'s settings are not those its ``game_id`` names; ``None`` if they
    are, or if the record cannot tell.

    The game id is a hash of the game's identity (:meth:`GameSpec.identity`): the
    :data:`IDENTITY_FIELDS` and, for a game seeded with a secret, the secret's digest
    ``seed_secret_sha256``. Records carry that digest (``None`` without a secret) since
    it was added; a record without the key (written before) cannot be checked, since its
    id may hash a digest it does not hold, and is taken as it is. A record that carries
    it is checked: its id recomputed from its settings, and, without a secret, its env
    and agent seeds recomputed too (they are public functions of the settings).

    Args:
        record: A record whose keys and types were checked (``store.check_record``).

    Returns:
        ``"game_id ... is not the hash of the record's settings ..."`` or
        ``"env_seed ... is not the seed of the record's settings"`` (likewise
        ``agent_seed``), else ``None``.
    """
    if "seed_secret_sha256" not in record:
        return None
    digest = record["seed_secret_sha256"]
    if digest is not None and not isinstance(digest, str):
        return f"seed_secret_sha256={digest!r}, expected a hex digest or null"
    identity = {k: record.get(k) for k in IDENTITY_FIELDS}
    if digest is not None:
        identity["seed_secret_sha256"] = digest
    try:
        game_id = stable_hash(identity)[:24]
    except (TypeError, ValueError) as exc:
        return f"settings that cannot be hashed ({exc})"
    if game_id != record.get("game_id"):
        return (f"game_id {record.get('game_id')!r} is not the hash of the record's settings "
                f"({game_id!r}): the record was changed after it was written")
    if digest is None:
        env_part = {k: identity[k] for k in ("seed_scheme", "env_id", "env_version",
                                             "env_options", "horizon", "seed_index")}
        for key, seed in (("env_seed", _seed_from(stable_hash(env_part))),
                          ("agent_seed", _seed_from(stable_hash(identity)))):
            if record.get(key) != seed:
                return (f"{key} {record.get(key)!r} is not the seed of the record's settings "
                        f"({seed}): the record was changed after it was written")
    return None


def stable_view(record: dict[str, Any]) -> dict[str, Any]:
    """The record without its volatile fields (what two runs of a game agree on)."""
    return {k: v for k, v in record.items() if k not in VOLATILE_FIELDS}
