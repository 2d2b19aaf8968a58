"""FeedbackGuard: what a learner is allowed to see."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from dp_online_envs.problem import FEEDBACK_KINDS, Problem


class FeedbackGuard(gym.Wrapper):
    """The outermost wrapper of every registered env: only permitted feedback leaves it.

    * The observation is the round's feedback and nothing else: ``theta_t`` under full
      information, the single number ``f_t(x_t)`` (a length-1 Box) under bandit
      feedback. The reward is ``-f_t(x_t)``, which either kind of feedback reveals.
    * ``info`` is empty during the game; at termination it carries only the regret
      summary for the experimenter (``info["regret"]``) when a
      :class:`~dp_online_envs.wrappers.RegretRecorder` sits below.
    * A learner may ask for less: ``feedback="bandit"`` on a full-information env
      downgrades it. Asking for more (full on a bandit env) raises ``ValueError``.
    * The public :class:`~dp_online_envs.problem.Problem` is ``self.problem``, reachable
      through ``env.get_wrapper_attr("problem")``.

    This is a convention, not a sandbox: in-process Python cannot stop an agent that
    walks ``env.unwrapped`` to the adversary. The hard boundary (running the learner in
    another process) is future work.

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
        self.problem = native.with_feedback(feedback)
        self._downgrade = feedback != native.feedback
        if self._downgrade:
            b = max(native.bound, 1e-12)
            self.observation_space = gym.spaces.Box(-b, b, shape=(1,), dtype=np.float64)
            self._low, self._high = -b, b

    @property
    def spec(self):
        """The env's spec: the guard is part of every registered env (built by its entry
        point), not an additional wrapper for ``gym.make`` to re-apply."""
        return self.env.spec

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, _ = self.env.reset(seed=seed, options=options)
        if self._downgrade:
            obs = np.zeros(1, dtype=np.float64)
        return obs, {}

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self._downgrade:
            obs = np.array([min(max(info["loss"], self._low), self._high)], dtype=np.float64)
        out = {"regret": info["regret"]} if terminated and "regret" in info else {}
        return obs, float(reward), bool(terminated), bool(truncated), out
