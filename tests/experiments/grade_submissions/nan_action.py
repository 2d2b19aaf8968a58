"""A test submission: a uniformly random arm, except that it misbehaves (nan action)."""

import agents


class Learner(agents.Agent):
    name = "test-nan-action"
    feedback = "bandit"

    def act(self):
        return float("nan")

    def update(self, action, feedback):
        self.t += 1
