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
real-valued mechanism. This is the reduction of Agarwal & Singh (2017, Alg. 4, Lemma
4.2: the noise alone makes it private, whatever learner reads the noisy losses) with
EXP3 at its own learning rate ``eta = sqrt(2 ln K / (T K))`` (Bubeck & Cesa-Bianchi
2012, Thm. 3.1), as the suite's ``private-bandit`` with ``base="exp3"`` plays.

Why not the learning rate of Agarwal & Singh's Theorem 4.1, ``eta`` shrunk by the
noise scale: that learner is just as private, but its play moves so little per round
that the grader's audit, which reads only the arms played, could not catch even its
noise-free copy (the audit then has no power on it, and a claim it cannot check earns
no audit points). At this rate the audit refutes a copy with a third of the noise, and
the regret is lower on this assignment's games.
"""

from __future__ import annotations

import math

import numpy as np

import agents
from agents.common import NoiseQueue
from agents.privacy import DiscreteLaplaceNoise


class NoisyEXP3(agents.Agent):
    """EXP3 on Laplace-noised losses (epsilon-DP)."""

    name = "noisy-exp3"
    description = "EXP3 on exact discrete-Laplace-noised losses, eps-DP"
    feedback = "bandit"
    private = True

    def setup(self) -> None:
        self.k = int(self.problem.domain.action_space.n)
        self.noise = DiscreteLaplaceNoise(self.epsilon, 1.0).calibrate()  # sensitivity 1
        self.eta = math.sqrt(2.0 * math.log(self.k) / (self.problem.horizon * self.k))
        self.privacy = self.noise.guarantee(  # copies k1 / t <= epsilon, checked exactly
            mechanism=f"exact discrete Laplace (scale {self.noise.scale:.6g}) on each "
                      "observed loss in [0, 1] rounded to the grid")

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.totals = np.zeros(self.k)  # importance-weighted noisy losses
        self.draws = NoiseQueue(self.noise)  # exact integers, drawn from self.rng

    def _probabilities(self) -> np.ndarray:
        w = np.exp(-self.eta * (self.totals - self.totals.min()))
        return w / w.sum()

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
