"""A test submission: a uniformly random arm, except that it misbehaves (bad arm)."""

import agents


class Learner(agents.Agent):
    name = "test-bad-arm"
    feedback = "bandit"

    def act(self):
        if self.t == 3:
            return 99
        return int(self.rng.integers(self.problem.domain.dim))

    def update(self, action, feedback):
        self.t += 1
