"""A test submission: a uniformly random arm, except that it misbehaves (hangs)."""

import time

import agents


class Learner(agents.Agent):
    name = "test-hangs"
    feedback = "bandit"

    def act(self):
        if self.t == 1:
            time.sleep(600)
        return int(self.rng.integers(self.problem.domain.dim))

    def update(self, action, feedback):
        self.t += 1
