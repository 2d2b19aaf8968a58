"""A test submission that dodges an audit which resets one process many times.

A graded game resets its fresh process twice (building the learner resets it, then the
game does); an audit that plays thousands of games in one process resets it thousands
of times. This learner counts its process's resets: plain EXP3 (no noise) for the first
``NOISE_FREE`` of them, ``private-exp2`` after, declaring epsilon-DP throughout.
"""

import agents
from agents.privacy import PrivacyGuarantee

#: Resets of the process played without noise.
NOISE_FREE = 2
_resets = 0


class Learner(agents.Agent):
    name = "test-dodges-resets"
    feedback = "bandit"
    private = True

    def setup(self):
        self.privacy = PrivacyGuarantee(self.epsilon, 0.0, mechanism="private-exp2")
        self.private_inner = agents.make("private-exp2", self.problem, epsilon=self.epsilon)
        self.free_inner = agents.make("exp3", self.problem)

    def reset(self, seed=None):
        global _resets
        super().reset(seed)
        _resets += 1
        if hasattr(self, "free_inner"):
            self.inner = self.free_inner if _resets <= NOISE_FREE else self.private_inner
            self.inner.reset(seed)

    def act(self):
        return self.inner.act()

    def update(self, action, feedback):
        self.inner.update(action, feedback)
        self.t += 1
