"""A test submission that dodges a short-game audit: private only in short games.

It runs ``private-exp2`` when the horizon is under 1000 rounds (where an audit of short
games would look) and plain EXP3, which adds no noise, in longer games (the graded
ones), while declaring epsilon-DP in every game.
"""

import agents
from agents.privacy import PrivacyGuarantee

#: Below this horizon the learner is private.
SHORT = 1000


class Learner(agents.Agent):
    name = "test-dodges-horizon"
    feedback = "bandit"
    private = True

    def setup(self):
        self.privacy = PrivacyGuarantee(self.epsilon, 0.0, mechanism="private-exp2")
        if self.problem.horizon < SHORT:
            self.inner = agents.make("private-exp2", self.problem, epsilon=self.epsilon)
        else:
            self.inner = agents.make("exp3", self.problem)

    def reset(self, seed=None):
        super().reset(seed)
        if hasattr(self, "inner"):
            self.inner.reset(seed)

    def act(self):
        return self.inner.act()

    def update(self, action, feedback):
        self.inner.update(action, feedback)
        self.t += 1
