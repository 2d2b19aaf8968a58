"""A sample submission that is (epsilon, 0)-DP: EXP3 on exactly Laplace-noised losses.

Privacy: the learner touches each round's loss once, through
``(round(l_t / g) + Z_t) * g`` with ``l_t = f_t(a_t)`` clipped to ``[0, 1]``, a grid
step ``g = 2^-k`` and ``Z_t`` an exact discrete Laplace integer
(``agents.privacy.DiscreteLaplaceNoise``: integer arithmetic only, calibrated so that
the rounded loss, whose sensitivity on the grid is ``floor(1/g) + 1``, is epsilon-DP).
Two loss sequences that differ in one round change that one input, so the noisy value
is epsilon-DP; everything else (the weights, the arms played) is post-processing of the
noisy values and of randomness independent of the losses. No floating-point noise is
drawn, so the guarantee holds for the program as run, not only for an idealized
real-valued mechanism. This is the reduction of Agarwal & Singh (2017, Alg. 4), with
their Theorem 4.1's learning rate and exploration for ``lambda`` the noise scale
(about ``1/epsilon``)::

    eta = sqrt(ln K / (2 K T (1 + 2 lambda^2 ln(K T)))),
    gamma = min(1, eta K sqrt(1 + 2 lambda^2 ln(K T))).
"""

from __future__ import annotations

import math

import numpy as np

import agents
from agents.common import NoiseQueue
from agents.privacy import DiscreteLaplaceNoise


class NoisyEXP3(agents.Agent):
    """EXP3 with uniform exploration on Laplace-noised losses (epsilon-DP)."""

    name = "noisy-exp3"
    description = "EXP3 + exploration on exact discrete-Laplace-noised losses, eps-DP"
    feedback = "bandit"
    private = True

    def setup(self) -> None:
        self.k = int(self.problem.domain.action_space.n)
        t = int(self.problem.horizon)
        self.noise = DiscreteLaplaceNoise(self.epsilon, 1.0).calibrate()  # sensitivity 1
        lam = self.noise.scale
        spread = 1.0 + 2.0 * lam**2 * math.log(self.k * t)
        self.eta = math.sqrt(math.log(self.k) / (2.0 * self.k * t * spread))
        self.gamma = min(1.0, self.eta * self.k * math.sqrt(spread))
        self.privacy = self.noise.guarantee(
            self.noise.dp_event(),
            mechanism=f"exact discrete Laplace (scale {lam:.6g}) on each observed loss in "
                      "[0, 1] rounded to the grid")

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.totals = np.zeros(self.k)  # importance-weighted noisy losses
        self.draws = NoiseQueue(self.noise)  # exact integers, drawn from self.rng

    def _probabilities(self) -> np.ndarray:
        w = np.exp(-self.eta * (self.totals - self.totals.min()))
        return (1.0 - self.gamma) * w / w.sum() + self.gamma / self.k

    def act(self) -> int:
        self.p = self._probabilities()
        return int(self.rng.choice(self.k, p=self.p))

    def update(self, action: int, feedback: np.ndarray) -> None:
        loss = float(np.clip(self.clip_feedback(feedback)[0], 0.0, 1.0))
        g = self.noise.grid
        z = self.draws.next(self.rng, self.problem.horizon - self.t)
        noisy = (round(loss / g) + z) * g  # the one private release (exact in float64)
        self.totals[int(action)] += noisy / self.p[int(action)]
        self.t += 1
