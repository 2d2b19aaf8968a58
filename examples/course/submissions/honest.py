"""A sample submission that is (epsilon, 0)-DP: EXP3 on Laplace-noised losses.

Privacy: the learner touches each round's loss once, through ``l_t + Lap(1/epsilon)``
with ``l_t = f_t(a_t)`` clipped to ``[0, 1]``. Two loss sequences that differ in one
round change that one input by at most 1, so the noisy value is epsilon-DP (Laplace
mechanism, sensitivity 1); everything else (the weights, the arms played) is
post-processing of the noisy values and of randomness independent of the losses. This
is the reduction of Agarwal & Singh (2017, Alg. 4), with their Theorem 4.1's learning
rate and exploration for ``lambda = 1/epsilon``::

    eta = sqrt(ln K / (2 K T (1 + 2 lambda^2 ln(K T)))),
    gamma = min(1, eta K sqrt(1 + 2 lambda^2 ln(K T))).

The noise is drawn in floating point: the guarantee is for the real-valued mechanism
(declared ``idealized``).
"""

from __future__ import annotations

import math

import numpy as np

import agents
from agents.privacy import PrivacyGuarantee


class NoisyEXP3(agents.Agent):
    """EXP3 with uniform exploration on Laplace-noised losses (epsilon-DP)."""

    name = "noisy-exp3"
    description = "EXP3 + exploration on Lap(1/eps)-noised losses, eps-DP"
    feedback = "bandit"
    private = True

    def setup(self) -> None:
        self.k = int(self.problem.domain.action_space.n)
        t = int(self.problem.horizon)
        lam = 1.0 / self.epsilon
        spread = 1.0 + 2.0 * lam**2 * math.log(self.k * t)
        self.eta = math.sqrt(math.log(self.k) / (2.0 * self.k * t * spread))
        self.gamma = min(1.0, self.eta * self.k * math.sqrt(spread))
        self.privacy = PrivacyGuarantee(
            self.epsilon, 0.0, mechanism="Laplace(1/epsilon) on each observed loss in [0, 1]",
            idealized=True)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.totals = np.zeros(self.k)  # importance-weighted noisy losses

    def _probabilities(self) -> np.ndarray:
        w = np.exp(-self.eta * (self.totals - self.totals.min()))
        return (1.0 - self.gamma) * w / w.sum() + self.gamma / self.k

    def act(self) -> int:
        self.p = self._probabilities()
        return int(self.rng.choice(self.k, p=self.p))

    def update(self, action: int, feedback: np.ndarray) -> None:
        loss = float(np.clip(self.clip_feedback(feedback)[0], 0.0, 1.0))
        noisy = loss + self.rng.laplace(0.0, 1.0 / self.epsilon)  # the one private release
        self.totals[int(action)] += noisy / self.p[int(action)]
        self.t += 1
