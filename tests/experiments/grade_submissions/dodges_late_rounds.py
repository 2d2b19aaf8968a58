"""A test submission that detects nothing: private for its first 1000 rounds, then not.

EXP3 on losses with exact discrete Laplace noise for rounds 1..1000 (what an audit of
the first rounds of a game sees), on the exact losses from round 1001 on, declaring
epsilon-DP throughout.
"""

import math

import numpy as np

import agents
from agents.common import NoiseQueue
from agents.privacy import DiscreteLaplaceNoise, PrivacyGuarantee

#: Rounds played with noise.
NOISY_ROUNDS = 1000


class Learner(agents.Agent):
    name = "test-dodges-late-rounds"
    feedback = "bandit"
    private = True

    def setup(self):
        self.k = int(self.problem.domain.action_space.n)
        self.eta = math.sqrt(2.0 * math.log(self.k) / (self.problem.horizon * self.k))
        self.noise = DiscreteLaplaceNoise(self.epsilon, 1.0).calibrate()
        self.privacy = PrivacyGuarantee(self.epsilon, 0.0, mechanism="discrete Laplace")

    def reset(self, seed=None):
        super().reset(seed)
        self.totals = np.zeros(self.k)
        self.draws = NoiseQueue(self.noise)

    def act(self):
        w = np.exp(-self.eta * (self.totals - self.totals.min()))
        self.p = w / w.sum()
        return int(self.rng.choice(self.k, p=self.p))

    def update(self, action, feedback):
        loss = float(np.clip(self.clip_feedback(feedback)[0], 0.0, 1.0))
        if self.t < NOISY_ROUNDS:
            g = self.noise.grid
            loss = (round(loss / g) + self.draws.next(self.rng, NOISY_ROUNDS - self.t)) * g
        self.totals[int(action)] += loss / self.p[int(action)]
        self.t += 1
