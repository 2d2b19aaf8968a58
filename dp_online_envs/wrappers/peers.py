"""Adapters for neighbouring libraries' evaluation loops.

* :class:`CopyableGame`: a registered game that river's ``bandit.evaluate`` (and any
  harness that ``copy.deepcopy`` s a freshly reset env to give every policy the same
  losses) can copy. The suite's envs refuse ``deepcopy``, because a copy would hold
  the adversary and stepping it would foresee the losses; this wrapper copies a game
  by making it anew from its id and options and resetting it with the same seed.
* :class:`LossTally`: puts a summary in the last ``info`` of a game played on an env
  that is not one of the suite's (no regret ledger), so that ``agents.play`` and the
  other loops can play any env that follows the protocol below.

**The protocol** of an env the loops can play: ``reset(seed=s)`` returns
``(observation, info)``; ``step(action)`` returns ``(observation, reward, terminated,
truncated, info)`` where ``observation`` is the round's feedback (bandit: ``[f_t(x_t)]``;
full information: the loss parameter ``theta_t``) and ``reward = -f_t(x_t)``; the game
ends with ``terminated`` (or ``truncated``). An env whose last ``info`` carries a
:class:`~dp_online_envs.wrappers.RegretSummary` under ``"regret"`` reports its regret;
otherwise only the learner's loss is known.

Both adapters are for the code that runs the games, not for the learner: a
:class:`CopyableGame` knows its reset seed, and whoever holds it can replay the losses.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import gymnasium as gym

from dp_online_envs.wrappers.regret import REGRET_INFO_KEY, RegretSummary, find_recorder


class CopyableGame(gym.Wrapper):
    """``gym.make(env_id, **kwargs)`` that ``copy.deepcopy`` remakes instead of copying.

    A copy is a new game of the same id and options, reset with the seed this one was
    last reset with (so it faces the same losses from round 1). Copying is refused once
    a round has been played: the copy could not be put in the same state without
    replaying the learner's actions.

    river's ``bandit.evaluate`` copies the env once per episode and once per policy
    after the reset; with this wrapper every policy plays the same losses::

        from river import bandit
        trace = bandit.evaluate([bandit.UCB(delta=1, seed=1)],
                                CopyableGame("DPBandit-MAB-v0", horizon=200),
                                n_episodes=2, seed=1)

    Args:
        env_id: A registered id.
        unit_rewards: Report the reward ``(hi - f) / (hi - lo)`` in ``[0, 1]`` (with
            ``(lo, hi)`` the problem's :meth:`~dp_online_envs.problem.Problem.loss_range`)
            instead of the env's ``-f``; the observation is unchanged.
        **kwargs: Options of ``gym.make``.

    Raises:
        TypeError: ``unit_rewards`` is not a bool; on ``deepcopy`` after a round.
    """

    def __init__(self, env_id: str, *, unit_rewards: bool = False, **kwargs: Any) -> None:
        if not isinstance(unit_rewards, bool):
            raise TypeError(f"unit_rewards must be True or False, got {unit_rewards!r}")
        super().__init__(gym.make(env_id, **kwargs))
        self._recipe = (env_id, unit_rewards, dict(kwargs))
        self._lo, self._hi = (self.env.get_wrapper_attr("problem").loss_range()
                              if unit_rewards else (0.0, 1.0))
        self._unit = unit_rewards
        self._reset_seed: int | None = None
        self._rounds = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Reset the game (and remember ``seed`` for the copies)."""
        self._reset_seed, self._rounds = seed, 0
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        """Play one round; the reward is ``-f`` or, with ``unit_rewards``, in ``[0, 1]``."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._rounds += 1
        if self._unit:
            reward = (self._hi + float(reward)) / (self._hi - self._lo)
        return obs, reward, terminated, truncated, info

    def __deepcopy__(self, memo: dict) -> CopyableGame:
        if self._rounds:
            raise TypeError(f"a game in progress cannot be copied ({self._rounds} rounds "
                            "played): copy it right after reset()")
        env_id, unit, kwargs = self._recipe
        twin = CopyableGame(env_id, unit_rewards=unit, **copy.deepcopy(kwargs, memo))
        if self._reset_seed is not None:
            twin.reset(seed=self._reset_seed)
        return twin


class LossTally:
    """Plays an env through, adding ``info["regret"]`` at the end if the env has none.

    For an env with no regret ledger of its own (not one of the suite's, see the
    module's protocol), the summary holds what is known: the rounds played and the
    learner's loss ``-sum(reward)``; the comparator is unknown, so the regret interval
    is ``[-inf, inf]`` (``exact`` is ``False``). An env that reports its own summary, or
    has a :class:`~dp_online_envs.wrappers.RegretRecorder` in its chain, is left as it
    is (:meth:`wrap`).

    Args:
        env: Any object with ``reset(seed=...)`` and ``step(action)`` as in Gymnasium.
    """

    def __init__(self, env: Any) -> None:
        self.env = env
        self.rounds = 0
        self.learner_loss = 0.0

    @classmethod
    def wrap(cls, env: Any) -> Any:
        """``env`` itself if it keeps a regret ledger, else ``LossTally(env)``."""
        return env if find_recorder(env) is not None else cls(env)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Reset the env and the tally."""
        self.rounds, self.learner_loss = 0, 0.0
        if options is None:
            return self.env.reset(seed=seed)
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        """One round of the env; at its end, the summary in ``info`` if it gave none."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.rounds += 1
        self.learner_loss -= float(reward)
        if (terminated or truncated) and REGRET_INFO_KEY not in info:
            info = {**info, REGRET_INFO_KEY: self.summary()}
        return obs, reward, terminated, truncated, info

    def summary(self) -> RegretSummary:
        """The rounds and the learner's loss so far; comparator and regret unknown."""
        return RegretSummary(
            rounds=self.rounds, learner_loss=self.learner_loss,
            comparator_lo=-math.inf, comparator_hi=math.inf,
            regret_lo=-math.inf, regret_hi=math.inf, exact=False,
            pseudo_regret=None, projected_actions=0)

    def __getattr__(self, name: str) -> Any:
        if name == "env":  # not yet set (during unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.env, name)
