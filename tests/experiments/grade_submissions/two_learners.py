"""A test submission with two learner classes (the grader cannot choose)."""

import agents


class First(agents.Agent):
    name = "test-first"
    feedback = "bandit"

    def act(self):
        return 0

    def update(self, action, feedback):
        self.t += 1


class Second(First):
    name = "test-second"
