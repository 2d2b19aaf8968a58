"""A test submission the arm audit cannot read: EXP3 with no noise at all, at a
learning rate so small that one round's loss barely moves its play, claiming
epsilon-DP. It ignores the epsilon it is built with, so its noise-free twin is itself:
neither is refuted, and the verdict must be "no audit power", which earns no audit
points."""

import math

from agents.bandit.exp3 import EXP3
from agents.privacy import PrivacyGuarantee


class Learner(EXP3):
    name = "test-unseen"
    private = True

    def setup(self):
        k = int(self.problem.domain.action_space.n)
        super().setup(eta=math.sqrt(2.0 * math.log(k) / (self.problem.horizon * k)) / 30.0)
        self.privacy = PrivacyGuarantee(self.epsilon, 0.0, mechanism="none (not really private)")
