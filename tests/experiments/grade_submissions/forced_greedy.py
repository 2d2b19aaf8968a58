"""A test submission that keeps every arm in play: greedy on the raw empirical means (no
noise), each arm once first, then arm ``(t // 64) mod K`` every 64th round, declaring
epsilon-DP."""

import numpy as np

import agents
from agents.privacy import PrivacyGuarantee

#: Every this many rounds, one arm is played by schedule.
EVERY = 64


class Learner(agents.Agent):
    name = "test-forced-greedy"
    feedback = "bandit"
    private = True

    def setup(self):
        self.k = int(self.problem.domain.action_space.n)
        self.privacy = PrivacyGuarantee(self.epsilon, 0.0, mechanism="none: a false claim")

    def reset(self, seed=None):
        super().reset(seed)
        self.sums, self.plays = np.zeros(self.k), np.zeros(self.k)

    def act(self):
        if self.t < self.k:
            return self.t
        if self.t % EVERY == EVERY - 1:
            return (self.t // EVERY) % self.k
        return int(np.argmin(self.sums / self.plays))

    def update(self, action, feedback):
        self.sums[action] += float(np.ravel(feedback)[0])
        self.plays[action] += 1
        self.t += 1
