"""The online learning game as a Gymnasium environment."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from dp_online_envs.adversaries import Adversary, LossSequence, make_adversary
from dp_online_envs.domains.base import Domain, fast_clip
from dp_online_envs.envs.history import history_section
from dp_online_envs.errors import InvalidActionError
from dp_online_envs.losses.base import LossFamily
from dp_online_envs.problem import Problem
from dp_online_envs.rendering import RenderTrack, render
from dp_online_envs.rounds import ROUND_INFO_KEY, PlayTotals, RoundRecord

INVALID_ACTION_MODES = ("project", "raise")



def _is_complex(action: Any) -> bool:
    """``np.iscomplexobj(action)``, answered without a numpy call for the common
    actions (a Python int or float, an ndarray)."""
    kind = type(action)
    if kind is int or kind is float:
        return False
    if kind is np.ndarray:
        return action.dtype.kind == "c"
    return np.iscomplexobj(action)


class OnlineLearningEnv(gym.Env):
    """A T-round repeated game between a learner and an adversary.

    ## Description

    Each round t the adversary picks a loss parameter ``theta_t`` (without seeing the
    learner's move), the learner plays a point ``x_t`` of the decision set D (an arm,
    a subset, or a point of a polytope), pays ``f(theta_t, x_t)`` and receives its
    feedback: the whole loss ``theta_t`` (full information) or the number
    ``f(theta_t, x_t)`` (bandit).

    ## Action Space

    The domain's ``action_space``: ``Discrete(K)`` for arms, ``MultiBinary(n)`` for
    subsets, otherwise a ``Box`` containing D. A Box action outside D is projected onto
    D and counted (``invalid_action="project"``, the default, so ``action_space.sample()``
    and RL policies work) or raises :class:`InvalidActionError`
    (``invalid_action="raise"``). NaN/inf, complex or wrongly shaped actions always
    raise ``ValueError``, and a rejected action changes nothing.

    ## Observation Space

    Bandit: ``Box(-B, B, (1,))`` holding ``f_t(x_t)``. Full information: the loss
    family's parameter space, holding ``theta_t``. The reset observation is all zeros
    and means "no feedback yet".

    ## Rewards

    ``-f(theta_t, x_t)``, a Python float.

    ## Episode End

    ``terminated=True`` after round T; never truncated.

    ## Arguments

    ``domain``, ``loss``, ``adversary`` (an :class:`Adversary` or its name),
    ``feedback`` ("full" or "bandit"), ``horizon`` (T), ``invalid_action``
    ("project" or "raise"), ``render_mode`` ("ansi" or "rgb_array"), ``record_losses``
    (keep theta_1..theta_T for :meth:`played_losses`).

    The ``info`` dict carries the round's :class:`RoundRecord` (``theta``, ``point``,
    ``loss``, ``projected``) under :data:`ROUND_INFO_KEY` for the wrappers;
    :class:`~dp_online_envs.wrappers.FeedbackGuard` removes it before a learner sees
    it. The running totals of the game are :attr:`totals` (a :class:`PlayTotals`).

    ## Randomness

    ``reset(seed=s)`` seeds ``SeedSequence(s)``. The adversary draws from its own
    generator, ``PCG64(SeedSequence(s))`` (the stream it has always drawn from, so
    seeded games are unchanged); the env's ``np_random`` is a generator spawned
    from the same sequence (``SeedSequence(s).spawn(1)[0]``), independent of the
    adversary's, and drives nothing in the game. ``reset()`` without a seed continues
    both generators (the first one draws OS entropy), as Gymnasium does.
    ``np_random_seed`` is the reset seed (the experimenter's record).

    ## Rendering

    ``render()`` on this (unwrapped) env is the experimenter's full picture, including
    the cumulative loss parameter of every coordinate; through the ``FeedbackGuard`` a
    learner only gets its own history (see :mod:`dp_online_envs.rendering`).

    ## Version History

    The registered ids are configurations of this class
    (:mod:`dp_online_envs.envs.registry`), each with its own history below. Any change to
    what an id plays bumps its version; the former version stays registered and builds
    the former game (``gym.make`` warns that it is out of date), and a game's identity in
    the experiments hashes the id, its version and its resolved options, so results of
    two versions never mix. Version 1 of every id that has one came with separating
    defaults, where trivial play (the domain's center, a uniform arm or subset) has
    regret linear in T; version 0 had zero-mean or centered losses, which measure
    exploration cost rather than learning. Version 2 (the polytope, cube and submodular
    ids) plants the best action: unique, with a stated margin, on every game seed. The
    entries below are written from
    :data:`dp_online_envs.envs.history.VERSION_HISTORY`, the history as data.

    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 10}

    def __init__(
        self,
        domain: Domain,
        loss: LossFamily,
        adversary: Adversary | str = "oblivious",
        feedback: str = "bandit",
        horizon: int = 1000,
        invalid_action: str = "project",
        render_mode: str | None = None,
        record_losses: bool = False,
    ) -> None:
        if not isinstance(domain, Domain):
            raise TypeError(f"domain must be a Domain, got {type(domain).__name__}")
        if not isinstance(loss, LossFamily):
            raise TypeError(f"loss must be a LossFamily, got {type(loss).__name__}")
        loss.check_domain(domain)
        if invalid_action not in INVALID_ACTION_MODES:
            raise ValueError(
                f"invalid_action={invalid_action!r}, expected one of {INVALID_ACTION_MODES}"
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode={render_mode!r}, expected one of {self.metadata['render_modes']}"
            )
        self.problem = Problem.build(domain, loss, feedback, horizon)
        self.domain, self.loss = domain, loss
        self.adversary = make_adversary(adversary)
        self.horizon = self.problem.horizon
        self.feedback = feedback
        self.invalid_action = invalid_action
        self.render_mode = render_mode
        if not isinstance(record_losses, (bool, np.bool_)):
            raise TypeError(f"record_losses must be True or False, got "
                            f"record_losses={record_losses!r}")
        self.record_losses = bool(record_losses)

        self.action_space = domain.action_space
        # Arms and subsets are vertices by construction: no membership test needed.
        self._always_feasible = isinstance(
            self.action_space, (gym.spaces.Discrete, gym.spaces.MultiBinary)
        )
        bound = max(self.problem.bound, 1e-12)
        if feedback == "bandit":
            self.observation_space = gym.spaces.Box(-bound, bound, shape=(1,), dtype=np.float64)
        else:
            space = loss.param_space
            self.observation_space = gym.spaces.Box(
                np.asarray(space.low, np.float64), np.asarray(space.high, np.float64),
                dtype=np.float64,
            )
        self._zero_obs = np.zeros(self.observation_space.shape, dtype=np.float64)
        self._obs_low = np.asarray(self.observation_space.low)
        self._obs_high = np.asarray(self.observation_space.high)
        self._bound_low, self._bound_high = -bound, bound  # the bandit observation's range
        self.totals = PlayTotals()
        self._thetas: list[np.ndarray] = []
        self._needs_reset = True
        self._adversary_rng: np.random.Generator | None = None
        self._track: RenderTrack | None = None

    # ---------------------------------------------------------------- Gym API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None or self._adversary_rng is None:
            self._seed_generators(seed)
        self.adversary.reset(self._adversary_rng, self.domain, self.loss, self.horizon)
        self.totals = PlayTotals()
        self._needs_reset = False
        self._thetas = []
        self._track = RenderTrack(self.domain, self.loss, self.horizon, with_params=True,
                                  title=self._title())
        return self._zero_obs.copy(), {}

    def _seed_generators(self, seed: int | None) -> None:
        """The adversary's generator and the env's ``np_random``, from one SeedSequence.

        The adversary keeps the root stream ``PCG64(SeedSequence(seed))``; the env's
        ``np_random`` (which gymnasium wrappers forward to anyone holding the env) gets
        a spawned child, so copying or drawing from it says nothing about the losses.
        """
        root = np.random.SeedSequence(seed)
        self._adversary_rng = np.random.Generator(np.random.PCG64(root))
        self._np_random = np.random.Generator(np.random.PCG64(root.spawn(1)[0]))
        self._np_random_seed = int(root.entropy) if seed is None else seed

    def step(self, action) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._needs_reset:
            raise RuntimeError("the game is over or has not started: call reset() first")
        if _is_complex(action):  # float64 conversion would drop the imaginary part
            raise ValueError(f"action is complex ({np.asarray(action).dtype}); expected real "
                             f"numbers (a point of the {self.domain.name} domain or an "
                             f"action of {self.action_space})")
        x = self.domain.to_point(action)  # raises ValueError on bad shape / NaN / inf
        projected = False
        if not self._always_feasible and not self.domain.contains(x, 1e-9):
            dist = self.domain.distance(x)
            if self.invalid_action == "raise":
                raise InvalidActionError(
                    f"action lies {dist:.3g} (Euclidean) outside the {self.domain.name} "
                    f"domain; project it or make the env with invalid_action='project'",
                    dist,
                )
            x = self.domain.project(x)
            projected = True

        t = self.totals.rounds + 1
        theta = self.adversary.next_loss(t)
        loss = float(self.loss.value(theta, x))
        self.adversary.observe(x, theta)
        self.totals.add(loss, projected)
        if self.record_losses:
            self._thetas.append(np.array(theta, dtype=np.float64))
        if self.render_mode is not None:
            self._track.add(x, loss, theta, projected)

        terminated = t >= self.horizon
        self._needs_reset = terminated
        if self.feedback == "bandit":
            # min/max of Python floats: the clip below, without a numpy call
            obs = np.array([min(max(loss, self._bound_low), self._bound_high)],
                           dtype=np.float64)
        else:
            obs = np.array(theta, dtype=np.float64)
            fast_clip(obs, self._obs_low, self._obs_high, out=obs)  # rounding only
        info = {ROUND_INFO_KEY: RoundRecord(theta, x, loss, projected)}
        return obs, -loss, terminated, False, info

    # ------------------------------------------------------------ recordings
    @property
    def round(self) -> int:
        """Number of rounds played in the current game (``totals.rounds``)."""
        return self.totals.rounds

    def played_losses(self) -> LossSequence:
        """The parameters theta_1..theta_t played so far (needs ``record_losses=True``)."""
        if not self.record_losses:
            raise RuntimeError("make the env with record_losses=True to record the losses")
        if not self._thetas:
            raise RuntimeError("no round has been played yet")
        return LossSequence(np.stack(self._thetas))

    # ------------------------------------------------------------- rendering
    def render(self) -> str | np.ndarray | None:
        """The experimenter's full picture of the game (``render_mode`` decides the form).

        Through the ``FeedbackGuard`` a learner gets :meth:`FeedbackGuard.render
        <dp_online_envs.wrappers.FeedbackGuard.render>` instead: its own history only.
        """
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; make the env with one")
            return None
        track = self._track or RenderTrack(self.domain, self.loss, self.horizon, True,
                                           self._title())
        return render(track, self.render_mode)

    def _title(self) -> str:
        return self.spec.id if self.spec else "OnlineLearningEnv"


# The Version History section's entries, from the history kept as data.
OnlineLearningEnv.__doc__ = f"{OnlineLearningEnv.__doc__.rstrip()}\n\n{history_section()}"
