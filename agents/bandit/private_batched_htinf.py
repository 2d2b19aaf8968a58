r"""Asi, Raman, Talwar, "Faster Rates for Private Adversarial Bandits" (ICML 2025, PMLR
267; arXiv 2505.21790): the batched Laplace conversion of a non-private bandit learner
(their Algorithm 1, Theorem 1), instantiated with HTINF as in their Corollary 2.

``private-batched-htinf`` -- :class:`PrivateBatchedHTINF`. The ``T`` rounds are cut into
``ceil(T / tau)`` consecutive batches of ``tau`` rounds (the last one may be shorter).
At the start of batch ``j`` the base learner ``B`` draws an arm ``I_j``; it is played
for every round of the batch; at the batch's end ``B`` receives ONE loss, the batch's
average loss of ``I_j`` plus Laplace noise:

    l^_j(I_j) = (1/tau) sum_{t in batch j} l_t(I_j) + Z_j,    Z_j ~ Lap(1 / (tau epsilon))

(losses normalized to ``[0, 1]``; the last batch may have ``m < tau`` rounds, its
average then carries ``Lap(1/(m epsilon))`` -- the feedback of the game's last base
round, on which no decision depends). Parameters as Corollary 2 sets them:

* ``tau = ceil(1 / epsilon)`` -- clamped to ``T`` (``epsilon < 1/T``: one batch, the
  first arm played throughout; the regret bound is vacuous there anyway);
* ``B`` = HTINF (``htinf``, :mod:`agents.bandit.htinf`) with ``alpha = 2`` and
  ``sigma = sqrt(6)``: ``E[l^_j^2] <= 2 l-bar^2 + 2 E[Z^2] <= 2 + 4 / (tau epsilon)^2
  <= 6`` for ``tau >= 1/epsilon``. ``sigma="moment"`` uses the exact bound instead,
  ``sigma^2 = 1 + Var(Z_j)`` (``<= 3``), which is ``1`` -- plain ``htinf`` -- with the
  noise off.

Regret (Thm. 1): ``E[Reg] <= tau R~_B(T/tau, K, 1/(tau epsilon)) + tau`` with ``R~_B`` the
base's regret on losses carrying ``Lap(1/(tau eps))`` noise; with HTINF's
``O(sigma sqrt(K T/tau))`` this is ``O(sqrt(K T / epsilon) + 1/epsilon)`` for
``1/T <= epsilon <= 1`` (Cor. 2), against ``private-exp2``'s
``O(sqrt(K T log K log T) / epsilon)``. Utility is claimed for oblivious adversaries.

Privacy (Thm. 1): ``epsilon``-DP for loss sequences differing in one round's loss. One
round's loss enters exactly one batch sum, which moves by at most the width
``hi - lo`` of the declared range (``1/tau`` on the average); batches are disjoint, so the
releases compose in parallel. As computed here (exact, like ``private-bandit``): the
batch SUM of the clipped losses, each rounded to the grid ``g`` of
:class:`~agents.privacy.noise.DiscreteLaplaceNoise` (integer l1 sensitivity
``k = floor((hi-lo)/g) + 1``), plus one exact discrete Laplace integer of scale
``t = ceil(k / epsilon)``, is released (``(sum + Z) g``, exact in float64) and divided
by the batch length for ``B`` (post-processing). Declared to ``dp_accounting`` as one
``DiscreteLaplaceDpEvent(1/t, k)``. ``b = t g`` (within ``2^-16`` of
``(hi - lo)/epsilon``) is :attr:`noise_scale`; the average carries ``b / tau``.

Checked against: the paper's abstract (rate ``O(sqrt(KT)/sqrt(epsilon))``, "conversion of
any non-private bandit algorithm") and a third-party summary of its Algorithm 1, Theorem
1 and Corollary 2 (the values above); the paper's own algorithm box and theorem
statements were NOT readable from here. Derivation, the clamps and the item-by-item
list of what was checked against what: ``docs/algorithms/private-batched-htinf.md``.
"""

from __future__ import annotations

import math

from agents.base import Agent, agent_class, register
from agents.common import (
    NoiseQueue,
    check_bandit_problem,
    check_range,
    clipped_loss,
    exact_laplace_guarantee,
    scalar_release_noise,
)
from agents.privacy.noise import DiscreteLaplaceNoise
from dp_online_envs.validation import check_epsilon, check_int

__all__ = ["THEOREM_SIGMA", "PrivateBatchedHTINF", "batch_size"]

#: Corollary 2's ``sigma``: ``E[l^2] <= 2 + 4 / (tau epsilon)^2 <= 6``.
THEOREM_SIGMA = math.sqrt(6.0)


def batch_size(epsilon: float, horizon: int) -> int:
    """``tau = ceil(1 / epsilon)`` (Cor. 2), clamped to ``[1, T]``."""
    T = check_int("horizon", horizon, 1)
    inv = 1.0 / check_epsilon(epsilon)
    return T if inv >= T else max(1, math.ceil(inv))


@register
class PrivateBatchedHTINF(Agent):
    r"""``private-batched-htinf``: Asi-Raman-Talwar Algorithm 1 with HTINF (Corollary 2).

    Args:
        batch: Batch length ``tau`` (default ``ceil(1/epsilon)``, clamped to ``[1, T]``).
        sigma: HTINF's moment bound: ``"theorem"`` (default, ``sqrt(6)``), ``"moment"``
            (``sqrt(1 + Var(Z_j))`` in normalized units) or a number ``> 0``.
        loss_range: ``(lo, hi)`` overriding the declared range (the clip enforces it).
        add_noise: ``False`` switches the noise off: the exact clipped losses are
            released (NOT private: the guarantee's epsilon is infinite), the non-private
            limit, where the learner plays as ``htinf``, bit for bit.

    Attributes:
        batch: ``tau``. ``base``: the wrapped ``htinf`` (it sees only batch averages).
        sigma: The sigma given to HTINF. ``noise_scale``: ``b``, the scale of the noise on
            a batch SUM in loss units; ``noise_strategy``: the calibrated exact strategy.
        loss_lo, loss_hi: The declared range; ``sensitivity = loss_hi - loss_lo``.
    """

    name = "private-batched-htinf"
    description = ("Asi-Raman-Talwar Alg. 1 + Cor. 2: HTINF fed batch-averaged losses "
                   "with Lap(1/(tau eps)), tau = ceil(1/eps); eps-DP, sqrt(KT/eps)")
    paper = ("Asi, Raman, Talwar, Faster Rates for Private Adversarial Bandits (ICML 2025), "
             "Alg. 1, Thm. 1, Cor. 2; base: Huang, Dai, Huang (ICML 2022), HTINF")
    feedback = "bandit"
    private = True
    counterpart = "htinf"

    def setup(self, batch: int | None = None, sigma: str | float = "theorem",
              loss_range: tuple[float, float] | None = None, add_noise: bool = True) -> None:
        p = self.problem
        check_bandit_problem(self.name, p)
        self.batch = (batch_size(self.epsilon, p.horizon) if batch is None
                      else check_int("batch", batch, 1, p.horizon))
        self.loss_lo, self.loss_hi = check_range(p, loss_range)
        self.sensitivity = self.loss_hi - self.loss_lo
        self.noise_strategy = scalar_release_noise(DiscreteLaplaceNoise, self.epsilon,
                                                   self.sensitivity, self.secure, add_noise)
        self._grid = self.noise_strategy.grid
        self.noise_scale = self.noise_strategy.scale
        #: Variance of the noise on one batch AVERAGE, in normalized loss units.
        self.average_noise_variance = (self.noise_strategy.variance
                                       / (self.sensitivity * self.batch) ** 2)
        if sigma == "theorem":
            s = THEOREM_SIGMA
        elif sigma == "moment":
            s = math.sqrt(1.0 + self.average_noise_variance)
        elif isinstance(sigma, str) or not (isinstance(sigma, (int, float))
                                             and math.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma={sigma!r}, expected 'theorem', 'moment' or a finite "
                             "number > 0")
        else:
            s = float(sigma)
        self.sigma = s
        self.base = agent_class("htinf")(p, seed=None, alpha=2.0, sigma=s,
                                         loss_range=(self.loss_lo, self.loss_hi))
        self.privacy = exact_laplace_guarantee(
            self.noise_strategy,
            f"on each batch sum of {self.batch} clipped losses in [{self.loss_lo:g}, "
            f"{self.loss_hi:g}] rounded to the grid (each round's loss in one batch), then "
            "htinf on the averages",
            exact="exact batch sums, then htinf")

    # --------------------------------------------------------------- the API
    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.base.reset(int(self.rng.integers(2**63)))
        self._noise = NoiseQueue(self.noise_strategy)
        self._arm = None
        self._in_batch = 0       # rounds played in the current batch
        self._int_sum = 0        # their grid-rounded losses (integers), noise on
        self._float_sum = 0.0    # their losses, noise off

    def act(self):
        if self._in_batch == 0:
            self._arm = self.base.act()
        return self._arm

    def update(self, action, feedback) -> None:
        f = clipped_loss(self, feedback, self.loss_lo, self.loss_hi)
        if self._grid is None:
            self._float_sum += f
        else:
            # exact: f / g is a power-of-two scaling, round() is half-even to an int
            self._int_sum += round(f / self._grid)
        self._in_batch += 1
        self.t += 1
        if self._in_batch == self.batch or self.t == self.problem.horizon:
            self._end_batch()

    def _end_batch(self) -> None:
        m = self._in_batch
        g = self._grid
        if g is None:  # NoNoise: exact sums, not private
            total = self.release(self._float_sum)
        else:
            # one draw per batch: this one and the batches still to come
            left = 1 + -(-(self.problem.horizon - self.t) // self.batch)
            total = self.release((self._int_sum + self._noise.next(self.rng, left)) * g)
        self.base.observe_loss(self._arm, total / m if m > 1 else total)
        self._in_batch, self._int_sum, self._float_sum = 0, 0, 0.0

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.problem.domain!r}, epsilon={self.epsilon}, "
                f"batch={self.batch}, noise_scale={self.noise_scale:.4g})")
