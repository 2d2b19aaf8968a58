"""A test submission that declares epsilon-DP and crashes in about half of its games.

Whether it crashes depends on its seed only, so graded and audit games meet the crash
alike (an audit game cannot be told from a graded one): the audit part then scores
zero with the reason.
"""

import agents
from agents.privacy import PrivacyGuarantee


class Learner(agents.Agent):
    name = "test-fails-under-audit"
    feedback = "bandit"
    private = True

    def setup(self):
        self.privacy = PrivacyGuarantee(self.epsilon, 0.0, mechanism="a uniformly random arm")

    def reset(self, seed=None):
        super().reset(seed)
        self.doomed = seed is not None and (seed >> 7) % 2 == 0

    def act(self):
        if self.doomed and self.t == 3:
            raise RuntimeError("crashing in round 4 of a doomed game")
        return int(self.rng.integers(self.problem.domain.dim))

    def update(self, action, feedback):
        self.t += 1
