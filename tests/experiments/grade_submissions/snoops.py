"""A test submission that looks for what a graded process must not hold: the
instructor's secret in its environment, and the env, its wrappers or the adversary
among its objects (both looked for in one process: every graded submission costs a
sandboxed probe and game)."""

import gc
import os

import agents

WANTED = ("OnlineLearningEnv", "FeedbackGuard", "RegretRecorder", "Adversary",
          "StochasticAdversary", "LossSequence")


class Learner(agents.Agent):
    name = "test-snoops"
    feedback = "bandit"

    def act(self):
        seen = sorted(k for k in os.environ if "SECRET" in k)
        found = sorted({type(o).__name__ for o in gc.get_objects()
                        if {b.__name__ for b in type(o).__mro__} & set(WANTED)})
        raise LookupError(f"secret variables visible to the submission: {seen}; game "
                          f"objects in the submission's process: {found}")

    def update(self, action, feedback):
        self.t += 1
