"""The contextual bandit game: the learner sees the round's context before it plays,
then the loss of the arm it chose; regret is measured against the best policy.

:class:`ContextualBanditEnv` is an :class:`~dp_online_envs.envs.online_env.OnlineLearningEnv`
on K arms (:class:`~dp_online_envs.domains.Arms`) with
:class:`~dp_online_envs.losses.contextual.ContextualLinearLoss` losses, played against a
contextual adversary (:mod:`dp_online_envs.adversaries.contextual`), whose observation
also holds the contexts. :class:`ContextualRegretRecorder` is its regret ledger, and
:func:`build_contextual_env` what the registry calls for a contextual id.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from dp_online_envs import datasets
from dp_online_envs.adversaries import Adversary
from dp_online_envs.adversaries.contextual import (
    CONTEXT_ADVERSARIES,
    ContextRecord,
    ReplayedExamples,
)
from dp_online_envs.domains import Arms
from dp_online_envs.domains.base import Domain
from dp_online_envs.envs.online_env import OnlineLearningEnv
from dp_online_envs.losses.base import LossFamily
from dp_online_envs.losses.contextual import ContextualLinearLoss
from dp_online_envs.rounds import RoundRecord
from dp_online_envs.wrappers import FeedbackGuard, RegretRecorder
from dp_online_envs.wrappers.regret import REGRET_INFO_KEY

#: The ``info`` key under which the unwrapped contextual env hands its
#: :class:`~dp_online_envs.adversaries.contextual.ContextRecord` to the regret ledger
#: (the guard strips it, as it strips the round record).
CONTEXT_INFO_KEY = "context"


def observation_layout(context_dim: int) -> dict[str, slice]:
    """Where each part of a contextual observation lies: ``loss`` (``f_t(x_t)``, one
    number), ``played`` (the context of the round just played) and ``next`` (the
    context of the coming round), each of ``context_dim`` numbers."""
    d = int(context_dim)
    return {"loss": slice(0, 1), "played": slice(1, 1 + d), "next": slice(1 + d, 1 + 2 * d)}


class ContextualBanditEnv(OnlineLearningEnv):
    """A T-round K-armed contextual bandit.

    ## Description

    Each round t the adversary draws a context ``c_t in R^d`` (``||c_t||_2 <= 1``) and
    the per-arm losses ``theta_t in [0, 1]^K``; the learner, having seen ``c_t``, plays
    an arm ``a_t`` and sees the loss ``theta_t[a_t]`` only.

    ## Action Space

    ``Discrete(K)``.

    ## Observation Space

    ``Box(-1, 1, (1 + 2d,))`` (losses and contexts are bounded by 1), laid out as
    :func:`observation_layout`: ``[f_t(x_t), c_t, c_{t+1}]``, the loss of the arm
    played, the context it was played in, and the context of the coming round (zeros
    after the last round). The reset observation is ``[0, 0, c_1]``: no feedback yet,
    and the first context. The context of the round just played is repeated so that a
    learner that never sees the reset observation (the suite's game loop hands a
    learner only the step observations; ``agents`` learners then play round 1 without
    its context) still learns from round 1.

    ## Rewards

    ``-theta_t[a_t]``, a Python float.

    ## Episode End

    ``terminated=True`` after round T; never truncated.

    ## Arguments

    As :class:`~dp_online_envs.envs.online_env.OnlineLearningEnv`; the domain must be
    :class:`~dp_online_envs.domains.Arms`, the losses
    :class:`~dp_online_envs.losses.contextual.ContextualLinearLoss`, the adversary a
    contextual one (with ``context()`` and ``last_round()``), the feedback
    ``"bandit"``.

    Raises:
        TypeError: On a domain, loss family or adversary that is not contextual.
        ValueError: On ``feedback="full"`` (a contextual game is a bandit game here).
    """

    def __init__(self, domain: Domain, loss: LossFamily, adversary: Adversary | str,
                 feedback: str = "bandit", **kwargs: Any) -> None:
        if not isinstance(loss, ContextualLinearLoss):
            raise TypeError(f"a contextual game needs ContextualLinearLoss losses, got {loss!r}")
        if feedback != "bandit":
            raise ValueError(f"feedback={feedback!r} rejected: a contextual game gives "
                             "bandit feedback")
        if isinstance(adversary, str):
            if adversary not in CONTEXT_ADVERSARIES:
                raise ValueError(f"unknown contextual adversary {adversary!r}; valid: "
                                 f"{sorted(CONTEXT_ADVERSARIES)}")
            adversary = CONTEXT_ADVERSARIES[adversary]()
        if not all(callable(getattr(adversary, m, None)) for m in ("context", "last_round")):
            raise TypeError(f"a contextual game needs a contextual adversary (with context() "
                            f"and last_round()), got {adversary!r}")
        super().__init__(domain, loss, adversary, feedback, **kwargs)
        self.context_dim = loss.context_dim
        self._layout = observation_layout(self.context_dim)
        n = 1 + 2 * self.context_dim
        self.observation_space = gym.spaces.Box(-1.0, 1.0, shape=(n,), dtype=np.float64)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed, options=options)
        obs = np.zeros(self.observation_space.shape, dtype=np.float64)
        obs[self._layout["next"]] = self.adversary.context()
        return obs, {}

    def step(self, action) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        loss_obs, reward, terminated, truncated, info = super().step(action)
        record: ContextRecord = self.adversary.last_round()
        obs = np.zeros(self.observation_space.shape, dtype=np.float64)
        obs[self._layout["loss"]] = loss_obs
        obs[self._layout["played"]] = record.context
        if not terminated:
            obs[self._layout["next"]] = self.adversary.context()
        np.clip(obs, -1.0, 1.0, out=obs)  # rounding only: ||c|| <= 1, losses in [0, 1]
        return obs, reward, terminated, truncated, {**info, CONTEXT_INFO_KEY: record}


class ContextualRegretRecorder(RegretRecorder):
    """The regret ledger of a contextual game: against the best policy of the game.

    With the per-arm losses ``theta_t``, the contexts ``c_t`` and the mean losses
    ``mu_a(c_t) = <theta_a, c_t>`` of the stochastic linear game, the comparator is the
    per-context best arm ``pi*(c) = argmin_a mu_a(c)`` (ties to the lowest index), the
    best policy in expectation over every policy (not only linear ones) and itself a
    linear policy:

    * ``regret = sum_t theta_t[a_t] - sum_t theta_t[pi*(c_t)]`` (realized losses of
      both; exact, so ``regret_lo == regret_hi``);
    * ``pseudo_regret = sum_t (mu_{a_t}(c_t) - min_a mu_a(c_t))``, the sum of the gaps.

    Both are sums over the rounds played, kept in O(1) memory, and recorded at the
    checkpoints as :class:`~dp_online_envs.wrappers.RegretRecorder` does.
    """

    _started = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = gym.Wrapper.reset(self, seed=seed, options=options)
        self._curve_t, self._curve_lo, self._curve_hi = [], [], []
        self._comparator_loss = 0.0
        self._pseudo_loss = 0.0
        self._summary = None
        self._started = True
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        record = RoundRecord.of(info)
        ctx: ContextRecord = info[CONTEXT_INFO_KEY]
        best = int(np.argmin(ctx.means))
        self._comparator_loss += float(record.theta[best])
        self._pseudo_loss += float(ctx.means @ record.point - ctx.means[best])
        t, learner_loss = self._totals.rounds, self._totals.learner_loss
        if t in self._checkpoints or terminated:
            self._curve_t.append(t)
            self._curve_lo.append(learner_loss - self._comparator_loss)
            self._curve_hi.append(learner_loss - self._comparator_loss)
            if terminated:
                self._summary = self._make_summary(self._comparator_loss,
                                                   self._comparator_loss)
                info = {**info, REGRET_INFO_KEY: self._summary}
        return obs, reward, terminated, truncated, info

    def _comparator(self) -> tuple[float, float]:
        """The per-context best arm's realized loss so far (exact: ``lo == hi``).

        Raises:
            RuntimeError: Before ``reset()``.
        """
        if not self._started:
            raise RuntimeError("call reset() before asking for the regret")
        return self._comparator_loss, self._comparator_loss

    def _pseudo_regret(self) -> float:
        """The sum of the gaps ``mu_{a_t}(c_t) - min_a mu_a(c_t)`` so far."""
        return self._pseudo_loss if self._totals.rounds else 0.0


def build_contextual_env(config: Any, opts: dict[str, Any]) -> gym.Env:
    """The wrapped env of a contextual id:
    ``FeedbackGuard(ContextualRegretRecorder(ContextualBanditEnv(...)))``.

    The ``adversary`` option is a name of
    :data:`~dp_online_envs.adversaries.contextual.CONTEXT_ADVERSARIES` (with
    ``adversary_kwargs``) or a contextual adversary object.

    Args:
        config: The id's :class:`~dp_online_envs.envs.registry.EnvConfig`.
        opts: Every option of the game (:func:`~dp_online_envs.envs.registry.resolved_options`).

    Raises:
        ValueError: On an unknown adversary name, options given with an adversary
            object, or a full-information request.
    """
    if config.data is not None:  # the contexts are the data's features
        opts = {**opts, "loss_kwargs": {"context_dim": data_context_dim(opts),
                                        **opts["loss_kwargs"]}}
    domain, loss = config.build_parts(opts)
    adversary, kwargs = opts["adversary"], opts["adversary_kwargs"] or {}
    if config.data is not None and adversary == "data":
        if kwargs:
            raise ValueError(f"adversary='data' takes no adversary_kwargs, got {kwargs!r}")
        adversary = config.data(opts)
    elif isinstance(adversary, str):
        if adversary not in CONTEXT_ADVERSARIES:
            raise ValueError(f"unknown contextual adversary {adversary!r}; valid: "
                             f"{sorted(CONTEXT_ADVERSARIES)}")
        adversary = CONTEXT_ADVERSARIES[adversary](**kwargs)
    elif kwargs:
        raise ValueError("adversary options are only accepted with an adversary name")
    if opts["feedback"] not in (None, "bandit"):
        raise ValueError(f"feedback={opts['feedback']!r} rejected: {config.id} gives bandit "
                         "feedback only")
    env = ContextualBanditEnv(domain, loss, adversary, feedback=config.feedback,
                              horizon=opts["horizon"], invalid_action=opts["invalid_action"],
                              render_mode=opts["render_mode"],
                              record_losses=opts["record_losses"])
    return FeedbackGuard(ContextualRegretRecorder(env, checkpoints=opts["checkpoints"]))


# ------------------------------------------------- labelled data as a contextual game
#: The labelled data sets a contextual data id plays (scikit-learn's bundled ones).
CONTEXTUAL_DATASETS = ("wine", "breast-cancer", "digits")


def _labelled(opts: dict[str, Any]) -> datasets.LabelledData:
    name = opts["dataset"]
    if name not in CONTEXTUAL_DATASETS:
        raise ValueError(f"dataset={name!r} rejected: expected one of "
                         f"{list(CONTEXTUAL_DATASETS)}")
    return datasets.load_labelled(name)


def class_arms(opts: dict[str, Any]) -> Arms:
    """K arms, one per class of the data set ``opts["dataset"]``."""
    return Arms(_labelled(opts).n_classes)


def data_context_dim(opts: dict[str, Any]) -> int:
    """``1 +`` the number of features: the contexts are ``(1, x_i)/sqrt(2)``."""
    return 1 + _labelled(opts).features.shape[1]


def class_data(opts: dict[str, Any]) -> ReplayedExamples:
    """The examples of ``opts["dataset"]``, features standardized and scaled to unit
    norm (:func:`~dp_online_envs.datasets.unit_rows`), replayed as bandit feedback."""
    data = _labelled(opts)
    return ReplayedExamples(datasets.unit_rows(data.features), data.labels)
