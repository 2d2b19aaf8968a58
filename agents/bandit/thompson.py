r"""Thompson sampling for stochastic K-armed bandits, non-private.

``thompson`` -- :class:`Thompson`. Each round draws one sample ``theta_a`` from every
arm's posterior and plays the arm of largest sample; rewards are ``r = (hi - f) /
(hi - lo)`` of the clipped losses (:mod:`agents.bandit.stochastic`).

``posterior="beta"`` (default): Agrawal & Goyal, "Analysis of Thompson Sampling for the
multi-armed bandit problem" (COLT 2012, PMLR 23), Algorithm 2 -- a ``Beta(1, 1)`` prior
per arm, and for a reward ``r in [0, 1]`` one Bernoulli trial ``b ~ Bernoulli(r)``
(drawn only when ``0 < r < 1``: on ``{0, 1}`` rewards, as on ``DPBandit-MAB-v0``,
``b = r`` and this is the exact Beta-Bernoulli conjugate update):

    theta_a ~ Beta(S_a + 1, F_a + 1),   S_a += b,   F_a += 1 - b.

Bound: for Bernoulli arms, ``E[Reg_T] <= (1 + eps) sum_{Delta_a > 0} Delta_a ln T /
d(mu_a, mu*) + O(K / eps^2)`` (Agrawal & Goyal, "Further optimal regret bounds for
Thompson sampling", AISTATS 2013, Thm. 1; Kaufmann, Korda, Munos, ALT 2012): the
Lai-Robbins constant, as KL-UCB's; problem-independently ``O(sqrt(K T ln T))``
(same paper). The Bernoulli trial keeps the same bounds for any rewards in ``[0, 1]``.

``posterior="gaussian"``: Agrawal & Goyal 2013, Algorithm 2 (Gaussian priors) -- the
losses in ``[lo, hi]`` are used as they are (no Bernoulli trial), through ``r``:

    theta_a ~ N(mu^_a, 1 / (N_a + 1)),   mu^_a = (sum of a's rewards) / (N_a + 1).

Bound: ``O(sqrt(K T ln K))`` problem-independently (their Thm. 3) and
``O(sum_a ln T / Delta_a)`` per instance, for rewards in ``[0, 1]``.

The bounds above are quoted from the papers' abstracts and statements as recalled; their
constants are not checked here. Both assume i.i.d. rewards per arm.
"""

from __future__ import annotations

import numpy as np

from agents.bandit.stochastic import StochasticArms
from agents.base import register

__all__ = ["POSTERIORS", "Thompson"]

#: The posterior families of ``thompson``.
POSTERIORS = ("beta", "gaussian")


@register
class Thompson(StochasticArms):
    r"""Thompson sampling on K arms: Beta-Bernoulli (default) or Gaussian posteriors.

    Args:
        posterior: ``"beta"`` (Agrawal-Goyal 2012, Alg. 2) or ``"gaussian"``
            (Agrawal-Goyal 2013, Alg. 2).
        loss_range: ``(lo, hi)`` overriding the declared range of the feedback.

    Attributes:
        successes, failures: ``S_a``, ``F_a`` (Beta posterior ``Beta(S_a+1, F_a+1)``).
        counts, sums: ``N_a`` and the sum of arm ``a``'s rewards (Gaussian posterior
            ``N(sums_a / (N_a + 1), 1 / (N_a + 1))``; kept for both).
    """

    name = "thompson"
    description = ("Thompson sampling (Agrawal-Goyal 2012/2013): Beta-Bernoulli posterior "
                   "(Bernoulli trial of r = (hi-f)/(hi-lo)) or Gaussian; non-private")
    paper = ("Agrawal & Goyal, Analysis of Thompson Sampling for the multi-armed bandit "
             "problem (COLT 2012), Alg. 2; Further optimal regret bounds for Thompson "
             "sampling (AISTATS 2013), Thm. 1 (Beta), Alg. 2 and Thm. 3 (Gaussian)")

    def setup(self, posterior: str = "beta",
              loss_range: tuple[float, float] | None = None) -> None:
        if posterior not in POSTERIORS:
            raise ValueError(f"posterior={posterior!r}, expected one of {POSTERIORS}")
        self.posterior = posterior
        self._setup_arms(loss_range)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.successes = np.zeros(self.k)
        self.failures = np.zeros(self.k)
        self.counts = np.zeros(self.k)
        self.sums = np.zeros(self.k)

    def posterior_parameters(self) -> tuple[np.ndarray, np.ndarray]:
        """``(S + 1, F + 1)`` for ``"beta"``; ``(mean, variance) = (sums / (N + 1),
        1 / (N + 1))`` for ``"gaussian"``."""
        if self.posterior == "beta":
            return self.successes + 1.0, self.failures + 1.0
        return self.sums / (self.counts + 1.0), 1.0 / (self.counts + 1.0)

    def sample(self) -> np.ndarray:
        """One draw ``theta`` of every arm's posterior (from the learner's generator)."""
        a, b = self.posterior_parameters()
        if self.posterior == "beta":
            return self.rng.beta(a, b)
        return a + self.rng.standard_normal(self.k) * np.sqrt(b)

    def act(self):
        return int(np.argmax(self.sample()))

    def update(self, action, feedback) -> None:
        a = int(action)
        r = self.reward(self.clipped(feedback))
        self.counts[a] += 1.0
        self.sums[a] += r
        if self.posterior == "beta":
            b = r if r in (0.0, 1.0) else float(self.rng.random() < r)
            self.successes[a] += b
            self.failures[a] += 1.0 - b
        self.t += 1

    def __repr__(self) -> str:
        return f"Thompson({self.problem.domain!r}, posterior={self.posterior!r})"

