"""A test submission that searches its process for the env, its wrappers and the adversary."""

import gc

import agents

WANTED = ("OnlineLearningEnv", "FeedbackGuard", "RegretRecorder", "Adversary",
          "StochasticAdversary", "LossSequence")


class Learner(agents.Agent):
    name = "test-looks-for-env"
    feedback = "bandit"

    def act(self):
        found = sorted({type(o).__name__ for o in gc.get_objects()
                        if {b.__name__ for b in type(o).__mro__} & set(WANTED)})
        raise LookupError(f"game objects in the submission's process: {found}")

    def update(self, action, feedback):
        self.t += 1
