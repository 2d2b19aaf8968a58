r"""What the stochastic K-armed learners share: arms, rewards from losses, the KL index.

The suite's bandit feedback is a LOSS ``f in [lo, hi]`` (the declared range,
:func:`~agents.common.loss_range`: ``[0, 1]`` on ``DPBandit-MAB-v0``). The stochastic
bandit literature (UCB1, KL-UCB, Thompson sampling, AdaP-UCB, ...) is written for
REWARDS in ``[0, 1]``; every learner built on :class:`StochasticArms` plays on

    r = (hi - f) / (hi - lo)  in [0, 1],

so a small loss is a large reward, an arm's mean reward is ``(hi - mean loss) /
(hi - lo)``, and a gap ``Delta`` in reward units is ``Delta_loss / (hi - lo)``. Regret
in loss units is ``(hi - lo)`` times the regret in reward units. The feedback is
clipped to ``[lo, hi]`` first (clips counted in
:attr:`~agents.base.Agent.clipped_feedback`), as every learner of the package does.

* :class:`StochasticArms` -- the base: checks the problem is K arms with bandit
  feedback, fixes the range, converts losses to rewards;
* :func:`kl_bernoulli` -- ``d(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q))``;
* :func:`kl_ucb_index` -- ``max{q in [p, 1] : d(p, q) <= level}`` (the KL-UCB index of
  Garivier & Cappe 2011, and AdaP-KLUCB's), by a bracketed Newton iteration;
* :func:`best_arm` -- the first arm of largest index (ties to the lowest index).
"""

from __future__ import annotations

import math

from agents.base import Agent
from agents.common import check_arms_problem, check_range, clipped_loss

__all__ = ["StochasticArms", "best_arm", "kl_bernoulli", "kl_ucb_index"]

_NEWTON_STEPS = 100


def kl_bernoulli(p: float, q: float) -> float:
    """``d(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q))``, the KL divergence of
    ``Bernoulli(p)`` from ``Bernoulli(q)`` (``0 ln 0 = 0``; ``+inf`` when ``q`` is 0 or 1
    and ``p`` is not)."""
    if 0.0 < p < 1.0 and 0.0 < q < 1.0:
        # with d = q - p: -p log1p(d/p) + (1-p) log1p(d/(1-q)), accurate for q near p
        d = q - p
        return -p * math.log1p(d / p) + (1.0 - p) * math.log1p(d / (1.0 - q))
    out = 0.0
    if p > 0.0:
        if q <= 0.0:
            return math.inf
        out += p * math.log(p / q)
    if p < 1.0:
        if q >= 1.0:
            return math.inf
        out += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return out


def kl_ucb_index(p: float, level: float) -> float:
    r"""``max{q in [p, 1] : d(p, q) <= level}`` for ``p in [0, 1]``, ``level >= 0``.

    ``q -> d(p, q)`` is convex and increasing on ``[p, 1)``, from 0 to ``+inf`` (for
    ``p < 1``), so the root of ``d(p, q) = level`` is unique. By Pinsker,
    ``d(p, q) >= 2 (q - p)^2``, so it lies in ``[p, min(1, p + sqrt(level / 2))]``.
    Newton's method ``q <- q - (d(p, q) - level) q (1 - q) / (q - p)`` runs inside that
    bracket, replaced by a bisection step whenever it would leave it, until the step is
    below ``1e-15``: the result is within a few ulps of the root (checked against a plain
    bisection to ``1e-12`` in the tests). ``p = 1`` gives 1 and ``level = 0`` gives ``p``.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p={p!r}, expected a mean in [0, 1]")
    if not level >= 0.0:
        raise ValueError(f"level={level!r}, expected a number >= 0")
    if p >= 1.0 or level == 0.0:
        return p
    a = p
    b = min(1.0, p + math.sqrt(0.5 * level))
    if b < 1.0 and kl_bernoulli(p, b) <= level:  # rounding at the Pinsker end
        return b
    x = b if b < 1.0 else 0.5 * (a + b)
    for _ in range(_NEWTON_STEPS):
        f = kl_bernoulli(p, x) - level
        if f > 0.0:
            b = x
        else:
            a = x
        if f == 0.0 or b - a <= 1e-15:
            break
        slope = (x - p) / (x * (1.0 - x))
        nxt = x - f / slope if slope > 0.0 else 0.5 * (a + b)
        if not a < nxt < b:
            nxt = 0.5 * (a + b)
        if abs(nxt - x) <= 1e-16:
            x = nxt
            break
        x = nxt
    return x


def best_arm(index: list[float]) -> int:
    """The first arm of largest index (ties go to the lowest arm number)."""
    best, value = 0, index[0]
    for i in range(1, len(index)):
        if index[i] > value:
            best, value = i, index[i]
    return best


class StochasticArms(Agent):
    """Base of the stochastic K-armed learners: the problem check and the loss range.

    Subclasses call :meth:`_setup_arms` in ``setup``. It sets ``k`` (the number of arms),
    ``loss_lo``/``loss_hi`` (the declared range, or ``loss_range``) and ``width``;
    :meth:`reward` maps a clipped loss to ``r = (hi - f) / width``, :meth:`clipped`
    clips a feedback to the range (counting clips).
    """

    feedback = "bandit"
    private = False

    def _setup_arms(self, loss_range) -> None:
        p = self.problem
        self.k = check_arms_problem(self.name, p)
        self.loss_lo, self.loss_hi = check_range(p, loss_range)
        self.width = self.loss_hi - self.loss_lo

    def clipped(self, feedback) -> float:
        """The feedback's number clipped to ``[loss_lo, loss_hi]`` (clips counted)."""
        return clipped_loss(self, feedback, self.loss_lo, self.loss_hi)

    def reward(self, loss: float) -> float:
        """``r = (hi - f) / (hi - lo)`` of a loss ``f`` in ``[lo, hi]``."""
        return (self.loss_hi - loss) / self.width
