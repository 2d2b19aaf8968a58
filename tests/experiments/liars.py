"""Learners that lie about their privacy by the horizon, for the audit tests of the
leaderboard and the grader (importable by name, so worker processes can build them)."""

from __future__ import annotations

from agents.base import Agent
from agents.privacy import PrivacyGuarantee
from dp_online_envs.lab.experiments.resolver import resolve_agent


class HorizonLiar(Agent):
    """Private at horizons of ``LONG`` rounds or more, its non-private form below (plain
    EXP3 or Hedge, no noise), declaring epsilon-DP at every horizon: ranked first by a
    leaderboard that audits only a horizon its scored games do not have."""

    LONG = 2048
    private = True
    pair: tuple[str, str] = ("exp3", "private-exp2")

    def setup(self) -> None:
        self.privacy = PrivacyGuarantee(self.epsilon, 0.0, mechanism=self.pair[1])
        plain, private = self.pair
        if self.problem.horizon >= self.LONG:
            self.inner = resolve_agent(private)(self.problem, epsilon=self.epsilon,
                                                seed=self.seed)
        else:
            self.inner = resolve_agent(plain)(self.problem, seed=self.seed)

    def reset(self, seed=None):
        super().reset(seed)
        if hasattr(self, "inner"):
            self.inner.reset(seed)

    def act(self):
        return self.inner.act()

    def update(self, action, feedback):
        self.inner.update(action, feedback)
        self.t += 1


class BanditHorizonLiar(HorizonLiar):
    name, feedback = "bandit-horizon-liar", "bandit"


class FullHorizonLiar(HorizonLiar):
    name, feedback, pair = "full-horizon-liar", "full", ("hedge", "private-ftrl")
