"""A test submission that looks for the instructor's secret in its environment."""

import os

import agents


class Learner(agents.Agent):
    name = "test-reads-secret"
    feedback = "bandit"

    def setup(self):
        seen = sorted(k for k in os.environ if "SECRET" in k)
        raise PermissionError(f"secret variables visible to the submission: {seen}")

    def act(self):
        return 0

    def update(self, action, feedback):
        self.t += 1
