"""A test submission that declares epsilon-DP and crashes in short games (the audit's).

It also shows what a learner can tell from its public problem: the audit plays games
of its own horizon, so a learner could behave differently when audited.
"""

import agents
from agents.privacy import PrivacyGuarantee


class Learner(agents.Agent):
    name = "test-fails-under-audit"
    feedback = "bandit"
    private = True

    def setup(self):
        self.privacy = PrivacyGuarantee(self.epsilon, 0.0, mechanism="a uniformly random arm")

    def act(self):
        if self.problem.horizon < 20:
            raise RuntimeError(f"refusing a game of {self.problem.horizon} rounds")
        return int(self.rng.integers(self.problem.domain.dim))

    def update(self, action, feedback):
        self.t += 1
