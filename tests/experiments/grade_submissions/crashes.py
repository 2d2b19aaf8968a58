"""A test submission: a uniformly random arm, except that it misbehaves (crashes)."""

import agents


class Learner(agents.Agent):
    name = "test-crashes"
    feedback = "bandit"

    def act(self):
        if self.t == 2:
            raise ZeroDivisionError("the learner divided by zero in round 3")
        return int(self.rng.integers(self.problem.domain.dim))

    def update(self, action, feedback):
        self.t += 1
