"""The learner API: the :class:`Agent` base class and the agent registry.

A learner sees the public :class:`~dp_online_envs.problem.Problem` and, each round,
only its feedback. To write one (a course assignment, say), subclass :class:`Agent`,
set ``name``, ``description`` and ``feedback``, implement :meth:`Agent.act` and
:meth:`Agent.update`, and decorate the class with :func:`register`.

An agent's options are the keyword parameters of its ``setup`` (each with a default and
an ``Args:`` entry in the class docstring). That declaration is the one source: the
class's signature (``inspect.signature(cls)``, ``help(cls)``) is built from it once, when
the class is defined (:func:`agent_options`), and the constructor and :func:`make` accept
exactly those options.
"""

from __future__ import annotations

import importlib
import inspect
import math
from abc import ABC, abstractmethod
from types import MappingProxyType
from typing import Any, ClassVar, NamedTuple

import numpy as np

from agents.catalog import HOMES
from dp_online_envs.domains.base import all_finite
from dp_online_envs.losses.linear import LinearLoss
from dp_online_envs.problem import Problem
from dp_online_envs.release_tap import release_listener
from dp_online_envs.validation import check_delta, check_epsilon, check_int, did_you_mean

#: ``a.any()`` as the ufunc reduction it is (the feedback check runs every round).
_any = np.logical_or.reduce
#: The linear losses' clip, which validates its input (shape, finiteness) itself.
_LINEAR_CLIP = LinearLoss.clip_param

#: The registered classes by name; a built-in agent's is added when its module is first
#: imported (:data:`agents.catalog.HOMES`; :func:`agent_class` and :func:`list_agents` do).
_REGISTRY: dict[str, type[Agent]] = {}

#: The constructor's parameters every agent shares, before its own options.
_COMMON_PARAMETERS = (
    inspect.Parameter("problem", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="Problem"),
    inspect.Parameter("epsilon", inspect.Parameter.KEYWORD_ONLY, default=None,
                      annotation="float | None"),
    inspect.Parameter("delta", inspect.Parameter.KEYWORD_ONLY, default=0.0, annotation="float"),
    inspect.Parameter("seed", inspect.Parameter.KEYWORD_ONLY, default=None,
                      annotation="int | None"),
    inspect.Parameter("secure", inspect.Parameter.KEYWORD_ONLY, default=False,
                      annotation="bool"),
)


class Agent(ABC):
    """An online learner.

    Class attributes:
        name: Registry name.
        description: One line for listings.
        paper: Where the algorithm comes from.
        feedback: ``"full"`` (needs theta_t) or ``"bandit"`` (needs only f_t(x_t)).
        private: Whether the agent promises differential privacy; then ``epsilon`` is
            required and :attr:`privacy` holds the guarantee.
        needs_delta: A private agent whose noise gives only (epsilon, delta)-DP with
            ``delta > 0`` at its default options (Gaussian noise): ``delta=0`` is refused.

    Constructor: ``cls(problem, *, epsilon=None, delta=0.0, seed=None, secure=False,
    **options)``; a subclass's signature lists its options too (:func:`agent_options`).

    Args:
        problem: The public description of the game.
        epsilon: The privacy budget (required by a private learner, refused by others).
        delta: The privacy parameter delta, in ``[0, 1)``.
        seed: Seed of the first game (``None``: fresh entropy).
        secure: Draw the privacy noise from the OS cryptographic generator.
        **options: The keyword parameters of the subclass's ``setup``.

    Attributes:
        problem: The public description of the game.
        seed: The seed the agent was built with (``None`` for fresh entropy); the base
            class never reads it back, so a subclass may use the name as it likes.
        privacy: The :class:`~agents.privacy.PrivacyGuarantee` promised, or ``None``.
        clipped_feedback: How many feedback values were clipped to the declared bounds.

    The base class keeps its own working state in name-mangled attributes
    (``self.__name``), so it reserves no plain name: a subclass may define ``_seed``,
    ``_last_action`` or any other helper of its own.
    """

    name: ClassVar[str] = "agent"
    description: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    feedback: ClassVar[str] = "full"
    private: ClassVar[bool] = False
    needs_delta: ClassVar[bool] = False
    #: Problem fields the calibration needs (checked finite and positive at start).
    requires: ClassVar[tuple[str, ...]] = ()
    #: For a private learner: the registry name of the non-private learner it becomes
    #: with its noise switched off -- the same algorithm with the same constants (its
    #: actions are then bit-identical on the same seed), or ``None`` if no registered
    #: learner is that algorithm. See :meth:`counterpart_for` for options that change it.
    counterpart: ClassVar[str | None] = None

    #: The agent's options and their defaults, read from ``setup`` when the class is
    #: defined (:func:`agent_options`).
    options: ClassVar[MappingProxyType[str, Any]] = MappingProxyType({})

    privacy = None
    #: Keep a copy of every released value in ``releases`` (set it on an agent to inspect
    #: its releases; the auditor listens through :mod:`dp_online_envs.release_tap`).
    record_releases: bool = False

    def __init__(
        self,
        problem: Problem,
        *,
        epsilon: float | None = None,
        delta: float = 0.0,
        seed: int | None = None,
        secure: bool = False,
        **options: Any,
    ) -> None:
        if not isinstance(problem, Problem):
            raise TypeError(f"problem must be a dp_online_envs.Problem, got {type(problem).__name__}")
        if self.feedback == "full" and problem.feedback != "full":
            raise ValueError(f"{self.name} needs full-information feedback, the env gives "
                             f"{problem.feedback!r}")
        delta = check_delta(delta)
        if self.private:
            if epsilon is None:
                raise ValueError(f"{self.name} is a private learner: pass epsilon > 0")
            epsilon = check_epsilon(epsilon)
        elif epsilon is not None:
            raise ValueError(f"{self.name} is not private; it takes no epsilon")
        missing = [f for f in self.requires if not _usable(getattr(problem, f, None))]
        if missing:
            raise ValueError(
                f"{self.name} cannot calibrate its noise: the problem lacks finite positive "
                f"{', '.join(missing)} (got " +
                ", ".join(f"{f}={getattr(problem, f, None)!r}" for f in missing) + ")"
            )
        self.problem = problem
        self.epsilon = None if epsilon is None else float(epsilon)
        self.delta = float(delta)
        if not isinstance(secure, bool):
            raise TypeError(f"secure must be True or False, got secure={secure!r}")
        #: Draw the privacy noise from the OS cryptographic generator (``os.urandom``)
        #: instead of the seeded numpy PCG64 generator (not reproducible; slower).
        self.secure = secure
        self.clipped_feedback = 0
        seed = None if seed is None else check_int("seed", seed, 0)
        self.seed = seed
        self.__episode_seeds = np.random.SeedSequence(seed)
        self.__last_action = None
        self.__options = dict(options)
        self.__lanes: list[Agent] = []
        check_options(type(self), options)
        self.setup(**options)
        self.reset(seed)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        options = _setup_options(cls)
        cls.options = MappingProxyType({name: p.default for name, p in options.items()})
        cls.__signature__ = inspect.Signature([*_COMMON_PARAMETERS, *options.values()])

    def setup(self) -> None:
        """Fix the algorithm's parameters from the problem (and keyword options).

        Called once by ``__init__`` after validation, before the first :meth:`reset`.
        Subclasses declare their options as keyword parameters of ``setup``, each with a
        default (and an entry in the class docstring's ``Args:``).
        """

    @classmethod
    def counterpart_for(cls, problem: Problem, **options: Any) -> str | None:
        """The non-private counterpart (:attr:`counterpart`) when playing ``problem``
        with these options; learners whose counterpart depends on them override this."""
        return cls.counterpart

    # --------------------------------------------------------------- the API
    def reset(self, seed: int | None = None) -> None:
        """Start a new game. All randomness comes from ``self.rng`` seeded here."""
        self.rng = np.random.default_rng(seed)
        self.t = 0
        self.releases: list[tuple[int, np.ndarray]] = []
        self.clipped_feedback = 0
        self.__last_action = None

    @abstractmethod
    def act(self):
        """The action of the next round (an env action: index, 0/1 vector or point)."""

    @abstractmethod
    def update(self, action, feedback) -> None:
        """Learn from the round just played: ``feedback`` is theta_t or ``[f_t(x_t)]``."""

    # -------------------------------------------------------------- helpers
    def release(self, value: np.ndarray) -> np.ndarray:
        """Mark ``value`` as an output of the agent's private mechanism and return it.

        Private agents pass every value their privacy proof covers (a noisy prefix sum
        from a counter, a noised loss) through here. The value goes to the listener of
        the current context (:func:`dp_online_envs.release_tap.listening`: the
        black-box auditor, which can then test the privacy boundary itself rather than
        the actions, a post-processing that may hide the signal) as ``(self.t, value)``;
        when ``record_releases`` is on, a copy is also kept in ``releases``.
        """
        if self.record_releases:
            self.releases.append((self.t, np.array(value, dtype=np.float64, copy=True)))
        listener = release_listener()
        if listener is not None:
            listener(self.t, value)
        return value

    def clip_feedback(self, feedback) -> np.ndarray:
        """The feedback clipped to the problem's declared bounds, counting every clip.

        Bandit feedback is clipped to ``[-B, B]``; full-information feedback is mapped to
        the nearest admissible loss parameter. Privacy calibrations rely on these bounds,
        so an env that misreports them cannot break the guarantee. On a contextual game
        (a loss family with ``context_dim`` d) the bandit observation is ``[f_t(x_t),
        c_t, c_{t+1}]``; only its loss is returned.

        Raises:
            ValueError: Non-finite feedback, or bandit feedback that is not one number
                (``1 + 2d`` numbers on a contextual game).
        """
        fb = np.asarray(feedback, dtype=np.float64)
        loss = self.problem.loss
        if (fb.size == 1 and self.problem.feedback == "bandit"
                and not getattr(loss, "context_dim", 0)):
            # the common bandit round, one number: the checks and the clip below on a
            # Python float (the same value np.clip gives a finite float)
            value = float(fb.reshape(-1)[0])
            if not math.isfinite(value):
                raise ValueError(f"feedback must be finite, got {fb!r}")
            b = self.problem.bound
            clipped = min(max(value, -b), b)
            if clipped != value:
                self.clipped_feedback += 1
            return np.array([clipped], dtype=np.float64)
        if self.problem.feedback != "bandit" and type(loss).clip_param is _LINEAR_CLIP:
            # the linear loss's clip tests the shape and finiteness itself (as_param):
            # only where it refuses is this check's message chosen, in this check's order
            try:
                clipped = loss.clip_param(fb)
            except ValueError:
                if not all_finite(fb.reshape(-1)):
                    raise ValueError(f"feedback must be finite, got {fb!r}") from None
                raise
            # finite, one shape: bytes that are equal are equal values (the common case,
            # no clip); where they differ the values are compared (-0.0 made 0.0 is no clip)
            if clipped.tobytes() != fb.tobytes() and _any(clipped != fb, axis=None):
                self.clipped_feedback += 1
            return clipped
        if not all_finite(fb.reshape(-1)):
            raise ValueError(f"feedback must be finite, got {fb!r}")
        if self.problem.feedback == "bandit":
            b = self.problem.bound
            size = 1 + 2 * getattr(self.problem.loss, "context_dim", 0)
            if fb.size != size:
                raise ValueError(f"bandit feedback here is {size} number(s), got shape "
                                 f"{fb.shape}")
            fb = fb.reshape(-1)[:1]
            clipped = np.clip(fb, -b, b)
        else:
            clipped = self.problem.loss.clip_param(fb)
        if _any(clipped != fb.reshape(clipped.shape), axis=None):  # finite, one shape
            self.clipped_feedback += 1
        return clipped

    def point(self, action) -> np.ndarray:
        """The point of R^dim an action stands for."""
        return self.problem.domain.to_point(action)

    # ------------------------------------------- stable-baselines3 predictor
    def predict(
        self,
        observation: np.ndarray,
        state: tuple[np.ndarray, ...] | None = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, tuple[np.ndarray, ...] | None]:
        """stable-baselines3 ``PolicyPredictor.predict`` on a batch of ``n`` envs.

        ``observation`` holds one row per env (``evaluate_policy`` on a ``VecEnv`` of
        ``n`` games). A batch of one is played by the agent itself. A batch of ``n > 1``
        is played by ``n`` independent copies of the agent (same class, problem, privacy
        level and options), built at the first such call with seeds spawned from this
        agent's seed, one per env; each copy sees only its own env's feedback.

        For each env: at an episode start the learner resets (with a fresh seed drawn
        from its seed sequence); otherwise the observation is the feedback of its
        previous action. ``deterministic`` is ignored: the learners' randomization is
        part of the game.

        Returns:
            The ``n`` actions (stacked on the first axis) and ``state`` unchanged.

        Raises:
            ValueError: ``observation`` has no batch axis, or ``episode_start`` does not
                hold one flag per env.
        """
        obs = np.asarray(observation)
        if obs.ndim == 0 or obs.shape[0] < 1:
            raise ValueError(f"{self.name}.predict expects a batch of observations, one row "
                             f"per env; got shape {obs.shape}")
        n = obs.shape[0]
        starts = (np.zeros(n, dtype=bool) if episode_start is None
                  else np.asarray(episode_start, dtype=bool).reshape(-1))
        if starts.shape[0] != n:
            raise ValueError(f"episode_start has {starts.shape[0]} flags for {n} envs")
        if n == 1:
            return np.asarray([self.__step_one(obs[0], bool(starts[0]))]), state
        if len(self.__lanes) != n:
            self.__lanes = [
                type(self)(self.problem, epsilon=self.epsilon, delta=self.delta,
                           seed=int(child.generate_state(1)[0]), secure=self.secure,
                           **self.__options)
                for child in self.__episode_seeds.spawn(n)]
        return np.asarray([lane.__step_one(obs[i], bool(starts[i]))
                           for i, lane in enumerate(self.__lanes)]), state

    def __step_one(self, obs: np.ndarray, start: bool):
        """One env's round of :meth:`predict`: reset at a start, else learn from ``obs``."""
        if start or self.__last_action is None:
            child = self.__episode_seeds.spawn(1)[0]
            self.reset(int(child.generate_state(1)[0]))
        else:
            self.update(self.__last_action, obs)
        action = self.act()
        self.__last_action = action
        return action

    def __repr__(self) -> str:
        priv = f", epsilon={self.epsilon}, delta={self.delta}" if self.private else ""
        return f"{type(self).__name__}({self.problem.domain!r}{priv})"


def _setup_options(cls: type[Agent]) -> dict[str, inspect.Parameter]:
    """The options ``cls.setup`` declares, as keyword-only parameters with defaults.

    Raises:
        TypeError: An option without a default, or a positional-only or ``*args``
            parameter (an option is passed by name and may be left out).
    """
    options = {}
    for p in list(inspect.signature(cls.setup).parameters.values())[1:]:
        if p.kind is p.VAR_KEYWORD:
            continue
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) or p.default is p.empty:
            raise TypeError(f"{cls.__qualname__}.setup: option {p.name!r} must be a keyword "
                            "parameter with a default")
        options[p.name] = p.replace(kind=p.KEYWORD_ONLY)
    return options


def agent_options(agent: str | type[Agent]) -> dict[str, Any]:
    """The options of a registered name or an agent class, each with its default.

    They are the keyword parameters of its ``setup``, read once when the class is
    defined; the class's signature lists them after ``problem, *, epsilon, delta, seed,
    secure``.

    Raises:
        ValueError: Unknown name (see :func:`agent_class`).
    """
    cls = agent_class(agent) if isinstance(agent, str) else agent
    return dict(cls.options)


def check_options(cls: type[Agent], options: dict[str, Any]) -> None:
    """Checks that every key of ``options`` is one of ``cls``'s (:func:`agent_options`).

    Raises:
        TypeError: Unknown option(s); the message names them and lists the valid ones.
    """
    valid = list(cls.options)
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise TypeError(f"{cls.name} got unknown option(s) {unknown}; valid: {valid}")


def _usable(v: Any) -> bool:
    return isinstance(v, (int, float, np.floating, np.integer)) and math.isfinite(v) and v > 0


def _import_homes(*names: str) -> None:
    """Imports the module of each built-in name not registered yet (all of them when no
    name is given), which registers it (:data:`agents.catalog.HOMES`)."""
    for name in names or tuple(HOMES):
        if name in HOMES and name not in _REGISTRY:
            importlib.import_module(HOMES[name])


def register(cls: type[Agent]) -> type[Agent]:
    """Class decorator adding an agent to the registry under ``cls.name``.

    Raises:
        ValueError: Another class holds the name (a built-in agent's name included,
            whether or not its module was imported yet).
    """
    if HOMES.get(cls.name, cls.__module__) != cls.__module__:
        _import_homes(cls.name)
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"an agent named {cls.name!r} is already registered")
    _REGISTRY[cls.name] = cls
    return cls


def make(
    name: str,
    problem: Problem,
    *,
    epsilon: float | None = None,
    delta: float = 0.0,
    seed: int | None = None,
    secure: bool = False,
    **options: Any,
) -> Agent:
    """Build a registered agent for a problem.

    Args:
        name: A registered name (:func:`list_agents`).
        problem: The public description of the game.
        epsilon: The privacy budget of a private learner.
        delta: The privacy parameter delta.
        seed: Seed of the first game.
        secure: Draw the privacy noise from the OS cryptographic generator.
        **options: The agent's options (:func:`agent_options`; its signature lists them).

    Raises:
        ValueError: Unknown name (the message lists the registered ones), or a problem
            the agent cannot play.
        TypeError: An option the agent does not have (the message lists its options).
    """
    cls = agent_class(name)
    check_options(cls, options)
    return cls(problem, epsilon=epsilon, delta=delta, seed=seed, secure=secure, **options)


class AgentInfo(NamedTuple):
    """A registry entry: the agent's name and one-line description."""

    name: str
    description: str


def list_agents() -> list[AgentInfo]:
    """``(name, one-line description)`` of every registered agent, sorted by name (the
    built-in agents' modules are imported first)."""
    _import_homes()
    return sorted(AgentInfo(n, c.description) for n, c in _REGISTRY.items())


def agent_class(name: str) -> type[Agent]:
    """The class registered under ``name``.

    Raises:
        ValueError: Unknown name; the message suggests the closest registered name and
            lists them all.
    """
    if name in HOMES:
        _import_homes(name)
    elif name not in _REGISTRY:
        _import_homes()  # every built-in agent, for the message's list
    if name not in _REGISTRY:
        raise ValueError(f"unknown agent {name!r};{did_you_mean(name, _REGISTRY)} "
                         f"registered: {sorted(_REGISTRY)}")
    return _REGISTRY[name]
