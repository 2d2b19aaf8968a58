"""FeedbackGuard: what a learner is allowed to see."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, NoReturn

import gymnasium as gym
import numpy as np

from dp_online_envs.problem import FEEDBACK_KINDS, Problem
from dp_online_envs.rendering import RenderTrack, render
from dp_online_envs.rounds import RoundRecord
from dp_online_envs.wrappers.regret import REGRET_INFO_KEY, RegretSummary, find_recorder

#: The names ``env.get_wrapper_attr(name)`` answers through the guard, always from the
#: guard's own (learner's) view: the public ``Problem``, the spaces, the render
#: settings, the public spec, the learner's own generator, the gymnasium methods, and
#: ``summary`` (the regret summary, once no game is running).
LEARNER_ATTRIBUTES: frozenset[str] = frozenset({
    "problem", "action_space", "observation_space", "metadata", "render_mode", "spec",
    "np_random", "np_random_seed", "summary", "step", "reset", "render", "close",
})

#: ``gym.make`` options the guard's ``spec`` withholds: they describe (or are) the
#: adversary, whose choices are not part of the public ``Problem``. When any was given,
#: the spec reads ``adversary=WITHHELD, adversary_kwargs=None`` (so ``gym.make(spec)``
#: fails with a ``ValueError`` naming the withheld adversary rather than build
#: another game).
WITHHELD_SPEC_KWARGS: tuple[str, ...] = ("adversary", "adversary_kwargs")

#: What the withheld adversary reads as in the guard's ``spec``.
WITHHELD = "<withheld by FeedbackGuard>"



def public_spec(spec: gym.envs.registration.EnvSpec | None
                ) -> gym.envs.registration.EnvSpec | None:
    """A deep copy of ``spec`` with the adversary options withheld: when any of
    :data:`WITHHELD_SPEC_KWARGS` was given, they read ``adversary=WITHHELD,
    adversary_kwargs=None``; ``None`` stays ``None``."""
    if spec is None:
        return None
    kwargs = {k: v for k, v in spec.kwargs.items() if k not in WITHHELD_SPEC_KWARGS}
    if any(k in spec.kwargs for k in WITHHELD_SPEC_KWARGS):
        kwargs.update(adversary=WITHHELD, adversary_kwargs=None)
    return copy.deepcopy(dataclasses.replace(spec, kwargs=kwargs))


_UNPROTECTED = ("env.unwrapped and the .env chain are not protected in-process (README, "
                "'What the learner sees'); run untrusted learners in their own process")


class FeedbackGuard(gym.Wrapper):
    """The outermost wrapper of every registered env's own chain (``gym.make`` adds its
    wrappers outside it, and a caller may add
    :class:`~dp_online_envs.wrappers.TruncationSummary` outside those): only permitted
    feedback leaves it.

    * The observation is the round's feedback and nothing else: ``theta_t`` under full
      information, the single number ``f_t(x_t)`` (a length-1 Box) under bandit
      feedback. The reward is ``-f_t(x_t)``, which either kind of feedback reveals.
    * ``info`` is empty during the game; at termination it carries only the regret
      summary for the experimenter (``info["regret"]``) when a
      :class:`~dp_online_envs.wrappers.RegretRecorder` sits below.
    * A learner may ask for less: ``feedback="bandit"`` on a full-information env
      downgrades it. Asking for more (full on a bandit env) raises ``ValueError``.
    * The public :class:`~dp_online_envs.problem.Problem` is ``self.problem``, reachable
      through ``env.get_wrapper_attr("problem")``: a fresh copy at every access, so a
      learner that changes its domain or loss family changes its own copy only. The
      spaces and ``metadata`` are the guard's own copies too.

    The in-process guard (every public door of a ``gymnasium.Wrapper``):

    * ``get_wrapper_attr(name)`` answers only the names in :data:`LEARNER_ATTRIBUTES`,
      from the guard itself, and raises ``AttributeError`` for every other name (it
      never walks down to the recorder or the env); ``has_wrapper_attr`` agrees.
      ``summary`` raises ``RuntimeError`` while a game is running (mid-game it would
      reveal the losses of points not played).
    * ``set_wrapper_attr`` is refused (``AttributeError``): a game is configured when
      the env is made.
    * ``np_random`` is the learner's own generator, seeded from fresh OS entropy when
      first read and never from the reset seed: no search over seeds leads from it to
      the game's seed (a generator derived from a small seed would give the seed away,
      and with it every loss), and it cannot be replaced through the guard. A learner
      that needs reproducible randomness takes its own seed (``agents`` learners get
      theirs from the caller). ``np_random_seed`` is ``-1`` (Gymnasium's "seed not
      known"): the reset seed is not handed out.
    * ``spec`` is the public spec: the adversary options given to ``gym.make``
      (:data:`WITHHELD_SPEC_KWARGS`) read ``adversary=WITHHELD, adversary_kwargs=None``.
    * ``render()`` draws only the learner's own history: its points and the feedback it
      received (so the cumulative loss parameter only under full information). The
      experimenter's full picture is ``env.unwrapped.render()``.
    * ``reset(options=...)`` accepts no options; ``copy.copy``, ``copy.deepcopy`` and
      ``pickle`` of the guard refuse (``TypeError``), and so do deep copies and pickles
      of any wrapper around it: a copy would hold the adversary, and stepping it would
      foresee the losses.

    What it cannot do: in-process Python cannot stop a learner that walks
    ``env.unwrapped``, the ``.env`` chain (or ``vars(env)``), stack frames or
    ``gc.get_objects()`` to the adversary. Process isolation is the boundary for
    untrusted learners.

    Args:
        env: An ``OnlineLearningEnv``, possibly wrapped by a ``RegretRecorder``.
        feedback: The feedback the learner receives; default the env's own.
    """

    def __init__(self, env: gym.Env, feedback: str | None = None) -> None:
        super().__init__(env)
        native: Problem = env.unwrapped.problem
        feedback = native.feedback if feedback is None else feedback
        if feedback not in FEEDBACK_KINDS:
            raise ValueError(f"feedback={feedback!r}, expected one of {FEEDBACK_KINDS}")
        if native.feedback == "bandit" and feedback == "full":
            raise ValueError(
                "feedback='full' requested on a bandit env: feedback can be downgraded "
                "(full -> bandit), never upgraded"
            )
        # The learner's problem and spaces are copies: nothing it holds is an object
        # the env or the regret ledger uses, so changing them changes no game.
        self._public = native.with_feedback(feedback).public_copy()
        self._downgrade = feedback != native.feedback
        # The clipping range of a downgraded observation, f_t(x_t) in [-B, B].
        self._high = max(native.bound, 1e-12)
        self.action_space = copy.deepcopy(env.action_space)
        self.metadata = copy.deepcopy(env.metadata)
        if self._downgrade:
            self.observation_space = gym.spaces.Box(-self._high, self._high, shape=(1,),
                                                    dtype=np.float64)
        else:
            self.observation_space = copy.deepcopy(env.observation_space)
        self._learner_rng: np.random.Generator | None = None
        self._in_game = False
        self._track: RenderTrack | None = None

    # ---------------------------------------------------------------- Gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start a game; ``seed`` seeds the game (never the learner's ``np_random``).

        Raises:
            ValueError: On non-empty ``options`` (a game is configured when made).
        """
        if options:
            raise ValueError(f"FeedbackGuard.reset takes no options, got {sorted(options)}: "
                             "a game is configured when the env is made")
        obs, _ = self.env.reset(seed=seed, options=options)
        if self._downgrade:
            obs = np.zeros(1, dtype=np.float64)
        self._in_game = True
        if self.render_mode is not None:
            self._track = self._new_track()
        return obs, {}

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self._downgrade or self._track is not None:  # the round's record is needed
            record = RoundRecord.of(info)
        if self._downgrade:
            obs = np.array([min(max(record.loss, -self._high), self._high)], dtype=np.float64)
        if self._track is not None:
            full = self._public.feedback == "full"
            self._track.add(record.point, -float(reward), obs if full else None,
                            record.projected)
        if terminated or truncated:
            self._in_game = False
        if terminated and REGRET_INFO_KEY in info:
            out = {REGRET_INFO_KEY: info[REGRET_INFO_KEY]}
        else:
            out = {}
        return obs, float(reward), bool(terminated), bool(truncated), out

    def render(self) -> str | np.ndarray | None:
        """The learner's picture: its own points and the feedback it received.

        The experimenter's full picture (every coordinate's cumulative loss parameter)
        is ``env.unwrapped.render()``.
        """
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; make the env with one")
            return None
        return render(self._track or self._new_track(), self.render_mode)

    def _new_track(self) -> RenderTrack:
        spec = self.unwrapped.spec
        problem = self.problem
        return RenderTrack(problem.domain, problem.loss, problem.horizon,
                           with_params=problem.feedback == "full",
                           title=spec.id if spec is not None else "OnlineLearningEnv")

    # ------------------------------------------------------- the learner's doors
    def summary(self) -> RegretSummary:
        """The regret summary of the last game, once it is over.

        Raises:
            RuntimeError: While a game is running (it would reveal the losses of points
                not played); the experimenter reads it with
                :func:`~dp_online_envs.wrappers.regret_summary`.
            AttributeError: No ``RegretRecorder`` below the guard.
        """
        if self._in_game:
            raise RuntimeError(
                "FeedbackGuard withholds the regret summary while a game is running (it "
                "reveals the losses of points not played); it arrives in info['regret'] "
                "at the last round, and the experimenter reads it any time with "
                "dp_online_envs.wrappers.regret_summary(env)"
            )
        recorder = find_recorder(self.env)
        if recorder is None:
            raise AttributeError("no RegretRecorder below this FeedbackGuard: no summary")
        return recorder.summary()

    def get_wrapper_attr(self, name: str) -> Any:
        """``getattr(self, name)`` for a name in :data:`LEARNER_ATTRIBUTES`.

        Raises:
            AttributeError: For every other name (nothing below the guard is answered).
        """
        if name in LEARNER_ATTRIBUTES:
            return getattr(self, name)
        raise AttributeError(
            f"FeedbackGuard withholds {name!r} from the learner: get_wrapper_attr answers "
            f"only {sorted(LEARNER_ATTRIBUTES)} ({_UNPROTECTED})"
        )

    def has_wrapper_attr(self, name: str) -> bool:
        """Whether ``get_wrapper_attr(name)`` answers: ``name in LEARNER_ATTRIBUTES``."""
        return name in LEARNER_ATTRIBUTES

    def set_wrapper_attr(self, name: str, value: Any, *, force: bool = True) -> NoReturn:
        """Refused: a game is configured when the env is made.

        Raises:
            AttributeError: Always.
        """
        raise AttributeError(
            f"FeedbackGuard refuses set_wrapper_attr({name!r}, ...): a game is configured "
            f"when the env is made; make a new env instead (gym.make(id, {name}=...))"
        )

    @property
    def problem(self) -> Problem:
        """The public :class:`~dp_online_envs.problem.Problem`: a fresh copy at every
        access (:meth:`~dp_online_envs.problem.Problem.public_copy`), sharing no object
        with the env, its regret ledger or another caller's copy."""
        return self._public.public_copy()

    @property
    def np_random(self) -> np.random.Generator:
        """The learner's own generator: fresh OS entropy, unrelated to the reset seed."""
        if self._learner_rng is None:
            self._learner_rng = np.random.default_rng()
        return self._learner_rng

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        raise AttributeError(
            "FeedbackGuard refuses to set np_random: the env's generators are not the "
            "learner's to replace (the guard's np_random is the learner's own generator)"
        )

    @property
    def np_random_seed(self) -> int:
        """``-1`` (Gymnasium's "seed not known"): the reset seed is not handed out."""
        return -1

    @property
    def spec(self) -> gym.envs.registration.EnvSpec | None:
        """The public spec: the env's spec with the adversary options withheld."""
        # The guard is part of every registered env (built by its entry point), not an
        # additional wrapper for gym.make to re-apply: it does not list itself.
        return public_spec(self.env.spec)

    def __getattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"FeedbackGuard has no attribute {name!r}; the learner sees "
                             f"the observation, reward and {sorted(LEARNER_ATTRIBUTES)}")

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        spec = self.env.spec
        env_id = spec.id if spec is not None else "ENV-ID"
        raise TypeError(
            "a FeedbackGuard cannot be copied or pickled: the copy would hold the adversary "
            "(stepping it foresees the losses); make a new env from its id instead. To "
            "give river's bandit.evaluate (which copies its env) a game, pass "
            f"dp_online_envs.wrappers.CopyableGame({env_id!r}, unit_rewards=True) (with "
            "the options you gave gym.make): it makes each copy anew from the id"
        )

    def __deepcopy__(self, memo: dict) -> NoReturn:
        self.__reduce_ex__(4)
