"""RegretRecorder: the experimenter's ledger of a game."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from dp_online_envs.hindsight import Comparator
from dp_online_envs.rounds import PlayTotals, RoundRecord
from dp_online_envs.validation import check_int

#: The ``info`` key of the :class:`RegretSummary` at the end of a game (the recorder puts
#: it there at termination, :class:`TruncationSummary` at a ``TimeLimit`` truncation
#: when the caller puts it outside the ``TimeLimit``, and the
#: :class:`~dp_online_envs.wrappers.FeedbackGuard` lets only it through).
REGRET_INFO_KEY = "regret"


def log_checkpoints(horizon: int, per_decade: int = 5) -> np.ndarray:
    """Log-spaced rounds ``1 <= t <= T`` (about ``per_decade`` per factor 10), T included."""
    n = max(2, int(np.ceil(per_decade * np.log10(max(horizon, 2)))) + 1)
    pts = np.unique(np.round(np.geomspace(1, horizon, n)).astype(np.int64))
    return np.unique(np.append(pts, horizon))


@dataclass
class RegretSummary:
    """What the recorder knows at a point of the game.

    ``regret_lo``/``regret_hi`` bracket the regret ``R(t) = sum_{s<=t} f_s(x_s) -
    min_x sum_{s<=t} f_s(x)``; they are equal when the comparator is exact.
    ``pseudo_regret`` is ``sum_s f(mu, x_s) - t min_x f(mu, x)`` for an i.i.d.
    adversary with mean parameter mu and a linear-in-theta family, else ``None``.
    """

    rounds: int
    learner_loss: float
    comparator_lo: float
    comparator_hi: float
    regret_lo: float
    regret_hi: float
    exact: bool
    pseudo_regret: float | None
    projected_actions: int
    checkpoints: list[int] = field(default_factory=list)
    regret_curve_lo: list[float] = field(default_factory=list)
    regret_curve_hi: list[float] = field(default_factory=list)

    @property
    def regret(self) -> float:
        """The regret (midpoint of the interval when it is not exact)."""
        return 0.5 * (self.regret_lo + self.regret_hi)

    def as_dict(self) -> dict[str, Any]:
        """A plain dict (for JSON records)."""
        d = asdict(self)
        d["regret"] = self.regret
        return d


class RegretRecorder(gym.Wrapper):
    """Computes regret against the best fixed action in hindsight.

    It reads the round's :class:`~dp_online_envs.envs.online_env.RoundRecord` from the
    inner :class:`~dp_online_envs.envs.OnlineLearningEnv`'s ``info``, keeps a
    :class:`~dp_online_envs.hindsight.Comparator` (the hindsight side of the ledger),
    and evaluates ``R(t)`` at log-spaced checkpoints and at T. The learner's side
    (rounds, cumulative loss, projected actions) is the env's
    :class:`~dp_online_envs.envs.online_env.PlayTotals`, read, never copied. At termination the
    :class:`RegretSummary` is put in ``info["regret"]``; :meth:`summary` returns it at
    any time. Memory is O(dim) for linear and quadratic losses (the ledger streams the
    cumulative parameter) and O(T * param_dim) for other convex losses.

    For convex losses without a closed-form comparator, every checkpoint's
    ``[regret_lo, regret_hi]`` is certified: ``regret_lo = loss - F(x)`` for a feasible
    ``x`` and ``regret_hi = loss - lo`` for a proven lower bound ``lo`` on the best fixed
    action's loss (a dual certificate for the distance, absolute, hinge and logistic
    families, see :func:`~dp_online_envs.hindsight.minimize_smoothed`), each solve
    warm-started at the previous checkpoint's point.

    Args:
        env: An ``OnlineLearningEnv`` (possibly wrapped).
        checkpoints: Rounds at which to record ``R(t)``, integers in ``1..horizon`` (a
            set: order and repeats do not matter); default log-spaced.

    Raises:
        ValueError: A checkpoint that is not an integer in ``1..horizon``.
    """

    def __init__(self, env: gym.Env, checkpoints: list[int] | None = None) -> None:
        super().__init__(env)
        base = env.unwrapped
        for attr in ("domain", "loss", "horizon", "adversary"):
            if not hasattr(base, attr):
                raise TypeError(f"RegretRecorder needs an OnlineLearningEnv, got {base!r}")
        horizon = base.horizon
        if checkpoints is None:
            cps = log_checkpoints(horizon)
        else:  # a set of rounds: order and repeats do not matter
            if isinstance(checkpoints, (str, bytes)) or not np.iterable(checkpoints):
                raise ValueError(f"checkpoints={checkpoints!r} rejected: expected a list of "
                                 f"rounds in 1..{horizon}")
            cps = np.unique([check_int("checkpoint", c, 1, horizon) for c in checkpoints])
        self._checkpoints = frozenset(int(c) for c in cps)
        # The game's state, made anew by reset(); None until the first reset.
        self._ledger: Comparator | None = None
        self._curve_t: list[int] = []
        self._curve_lo: list[float] = []
        self._curve_hi: list[float] = []
        self._mu: np.ndarray | None = None
        self._pseudo_loss = 0.0
        self._summary: RegretSummary | None = None

    @property
    def spec(self):
        """The env's spec: the recorder is part of every registered env (built by its
        entry point), not an additional wrapper for ``gym.make`` to re-apply."""
        return self.env.spec

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        base = self.env.unwrapped
        self._ledger = Comparator(base.domain, base.loss)
        self._curve_t, self._curve_lo, self._curve_hi = [], [], []
        mean = base.adversary.mean_param
        self._mu = mean if (mean is not None and base.loss.linear_in_theta) else None
        self._pseudo_loss = 0.0
        self._summary = None
        return obs, info

    @property
    def _totals(self) -> PlayTotals:
        """The env's running totals of the current game (the env owns them)."""
        return self.env.unwrapped.totals

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        record = RoundRecord.of(info)
        self._ledger.add(record.theta)
        base = self.env.unwrapped
        if self._mu is not None:
            self._pseudo_loss += base.loss.value(self._mu, record.point)
        totals = base.totals
        t, learner_loss = totals.rounds, totals.learner_loss
        if t in self._checkpoints or terminated:
            lo, hi = self._ledger.best()
            self._curve_t.append(t)
            self._curve_lo.append(learner_loss - hi)
            self._curve_hi.append(learner_loss - lo)
            if terminated:
                self._summary = self._make_summary(lo, hi)
                info = {**info, REGRET_INFO_KEY: self._summary}
        return obs, reward, terminated, truncated, info

    def _comparator(self) -> tuple[float, float]:
        """The comparator's loss so far, ``(lo, hi)`` (the hindsight ledger's interval).

        Raises:
            RuntimeError: Before ``reset()``.
        """
        if self._ledger is None:
            raise RuntimeError("call reset() before asking for the regret")
        return self._ledger.best()

    def _pseudo_regret(self) -> float | None:
        """The pseudo-regret so far (``None`` without a known mean loss)."""
        if self._mu is None:
            return None
        base = self.env.unwrapped
        one_round = Comparator(base.domain, base.loss)
        one_round.add(self._mu)  # min_x f(mu, x), exact for linear-in-theta families
        return self._pseudo_loss - self._totals.rounds * one_round.best()[0]

    def _make_summary(self, lo: float, hi: float) -> RegretSummary:
        totals = self._totals
        pseudo = self._pseudo_regret()
        return RegretSummary(
            rounds=totals.rounds,
            learner_loss=totals.learner_loss,
            comparator_lo=lo,
            comparator_hi=hi,
            regret_lo=totals.learner_loss - hi,
            regret_hi=totals.learner_loss - lo,
            exact=lo == hi,
            pseudo_regret=pseudo,
            projected_actions=totals.projected_actions,
            checkpoints=list(self._curve_t),
            regret_curve_lo=list(self._curve_lo),
            regret_curve_hi=list(self._curve_hi),
        )

    def summary(self) -> RegretSummary:
        """The regret so far (computed now if the game is still running).

        The regret curve of a running game ends at the current round, as that of a
        finished game ends at T.
        """
        if self._summary is not None:
            return self._summary
        summary = self._make_summary(*self._comparator())
        t = summary.rounds
        if t and t not in summary.checkpoints:
            summary.checkpoints.append(t)
            summary.regret_curve_lo.append(summary.regret_lo)
            summary.regret_curve_hi.append(summary.regret_hi)
        return summary



def find_recorder(env: gym.Env) -> RegretRecorder | None:
    """The first :class:`RegretRecorder` in ``env``'s ``.env`` chain, or ``None``."""
    while isinstance(env, gym.Wrapper):
        if isinstance(env, RegretRecorder):
            return env
        env = env.env
    return None


def regret_summary(env: gym.Env) -> RegretSummary:
    """The experimenter's door to the regret, at any time (mid-game included).

    Through the :class:`~dp_online_envs.wrappers.FeedbackGuard`,
    ``get_wrapper_attr("summary")`` is refused while a game runs (it would show a
    learner the losses of points not played); this walks the ``.env`` chain instead,
    which the guard does not protect in-process: it is for the code that runs the game
    (e.g. a loop stopped by a ``TimeLimit`` truncation), not for learners.

    Raises:
        TypeError: No ``RegretRecorder`` in the chain.
        RuntimeError: Before the first ``reset()``.
    """
    recorder = find_recorder(env)
    if recorder is None:
        raise TypeError(f"no RegretRecorder in the wrapper chain of {env!r}")
    return recorder.summary()


class TruncationSummary(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Puts the regret summary in ``info`` when a ``TimeLimit`` truncates the game.

    A game ends at its ``horizon`` (``gym.make(id, horizon=k)``): ``terminated``, and
    the :class:`~dp_online_envs.wrappers.FeedbackGuard` reports the summary in
    ``info["regret"]``; that is the recommended way to play k rounds. A ``TimeLimit``
    (``gym.make(id, max_episode_steps=k)``) sits outside the guard, which therefore
    cannot know that round k is the last: the truncating step's ``info`` is empty
    (``agents.play`` still returns the k rounds' regret, through
    :func:`regret_summary`). Put this wrapper outside the ``TimeLimit`` to have the
    summary in ``info`` there::

        env = TruncationSummary(gym.make(id, max_episode_steps=k))

    On the truncating step it adds ``info["regret"]``, the :class:`RegretSummary` of the
    rounds played (from the :class:`RegretRecorder` below). Before that step, and on a
    step that terminates (the guard already reports the summary), it changes nothing;
    ``info`` stays empty during the game. The specs do not list it as an
    ``additional_wrappers`` entry (Gymnasium refuses ``gym.make_vec``'s
    ``vector_entry_point`` mode for a spec that has any), and the registered envs
    themselves never truncate, so inside their entry point it would never fire.

    Args:
        env: A registered env, wrapped by ``gym.make`` (``TimeLimit``,
            ``OrderEnforcing``, ``PassiveEnvChecker``) or by the caller.
    """

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if truncated and not terminated and REGRET_INFO_KEY not in info:
            # The recorder is looked up only now: the wrapper holds no attribute a
            # learner could reach with get_wrapper_attr.
            recorder = find_recorder(self.env)
            if recorder is not None:
                info = {**info, REGRET_INFO_KEY: recorder.summary()}
        return obs, reward, terminated, truncated, info
