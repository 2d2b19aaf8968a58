"""Exponential weights over K arms with importance-weighted loss estimates.

The engine shared by ``exp2`` on arms (:class:`~agents.bandit.exp2.EXP2Arms`) and
``exp3`` (:class:`~agents.bandit.exp3.EXP3`): ``p_t = (1 - gamma) q_t + gamma / K`` with
``q_t(i) ∝ exp(-eta sum_{s<t} l~_s(i))``, the estimate ``l~_t = (l_t / p_t(I_t))
e_{I_t}`` of the normalized loss ``l_t = (f_t - lo) / width``. Only the played arm's
log-weight changes, so a round is O(K) scalar work: log-weights in a Python list, one
uniform draw (drawn in blocks of :func:`~agents.common.noise_block`), a running sum
and a bisection. For ``K <= 64`` the weights are a Python list too (no NumPy call per
round: ``benchmarks/exp2_speed.py`` measures this path), above that a NumPy array
(``cumsum`` + ``searchsorted``). Weights are renormalized whenever a log-weight leaves
``exp(+-300)``, so noisy, negative losses cannot overflow.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from itertools import accumulate
from typing import NamedTuple

import numpy as np

from agents.base import Agent
from agents.common import clipped_loss, noise_block

__all__ = ["LOG_LIMIT", "SCALAR_ARMS", "ArmsConstants", "ArmsExpWeights"]

#: Above this many arms the weights are a NumPy array (cumsum + searchsorted).
SCALAR_ARMS = 64
#: A log-weight (relative to the shift) beyond +-LOG_LIMIT renormalizes the weights.
LOG_LIMIT = 300.0


class ArmsConstants(NamedTuple):
    """The constants of one :class:`ArmsExpWeights` game, fixed in ``setup``.

    What a round's arithmetic reads besides the state; the vector engine
    (:mod:`agents.vector.arms`) reads them from here to compute the same numbers.

    Attributes:
        k: The number of arms ``K``.
        lo, hi: The loss range ``[lo, hi]`` the feedback is clipped to.
        scalar_weights: Whether the weights are a Python list (``K <=``
            :data:`SCALAR_ARMS`; else a NumPy array).
        one_minus_gamma: ``1 - gamma``.
        inv_one_minus_gamma: ``1 / (1 - gamma)`` (0 when ``gamma = 1``).
        k_over_gamma: ``K / gamma`` (0 when ``gamma = 0``).
        gamma_over_k: ``gamma / K``.
        eta_per_width: ``eta / width``: a normalized loss ``l~`` of probability ``p``
            moves the arm's log-weight by ``-eta_per_width (f - lo) / p``.
    """

    k: int
    lo: float
    hi: float
    scalar_weights: bool
    one_minus_gamma: float
    inv_one_minus_gamma: float
    k_over_gamma: float
    gamma_over_k: float
    eta_per_width: float


class ArmsExpWeights(Agent):
    """Exponential weights over K arms with importance-weighted loss estimates.

    The engine of :class:`~agents.bandit.exp2.EXP2Arms` and
    :class:`~agents.bandit.exp3.EXP3`: subclasses set ``self.eta`` (per unit of
    normalized loss), ``self.gamma`` (uniform mixing), ``self._lo``, ``self._hi`` and
    ``self._width`` (``l = (f - lo) / width``) in ``setup`` and call
    :meth:`_init_arms`. Per round: O(K) scalar work, no NumPy call for K <= 64.

    Attributes:
        k: The number of arms.
        arms_constants: The game's :class:`ArmsConstants` (set by :meth:`_init_arms`).

    State (made by :meth:`reset`): ``_log_weights`` (``-eta`` times each arm's summed
    estimates), ``_shift`` (the weights are ``exp(_log_weights - _shift)``),
    ``_weights`` and their sum ``_weight_sum``, the block of uniform draws
    ``_uniforms`` with the index ``_next_uniform`` of the next one to use, and the last
    arm played ``_arm`` with its probability ``_p``.
    """

    feedback = "bandit"
    private = False

    def _init_arms(self, k: int) -> None:
        """Fixes :attr:`arms_constants` (and the working copies a round reads)."""
        self.k = int(k)
        g = self.gamma
        # a loss l~ costs eta * l~ / p in log-weight; precompute eta / width
        c = self.arms_constants = ArmsConstants(
            k=self.k, lo=self._lo, hi=self._hi, scalar_weights=self.k <= SCALAR_ARMS,
            one_minus_gamma=1.0 - g, inv_one_minus_gamma=1.0 / (1.0 - g) if g < 1.0 else 0.0,
            k_over_gamma=self.k / g if g > 0.0 else 0.0, gamma_over_k=g / self.k,
            eta_per_width=self.eta * (1.0 / self._width))
        self._small = c.scalar_weights
        self._one_minus_gamma, self._inv_one_minus_gamma = c.one_minus_gamma, c.inv_one_minus_gamma
        self._k_over_gamma, self._gamma_over_k = c.k_over_gamma, c.gamma_over_k
        self._eta_w = c.eta_per_width

    @property
    def plays_arms(self) -> bool:
        """Whether a game is played by this engine (True; a subclass that also plays
        other action sets says when it does)."""
        return True

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        k = self.k
        self._log_weights = [0.0] * k  # -eta * sum of the estimates, per arm
        self._shift = 0.0  # weights are exp(log_weights - shift)
        if self._small:
            self._weights = [1.0] * k
        else:
            self._weights = np.ones(k)
        self._weight_sum = float(k)
        self._uniforms: list[float] = []
        self._next_uniform = 0
        self._arm = 0
        self._p = 1.0 / k

    # ---------------------------------------------------------------- helpers
    def weights_distribution(self) -> np.ndarray:
        """``q_t``: the next round's exponential weights, normalized (``p_t`` before the
        uniform mixing; read-only)."""
        return np.asarray(self._weights, dtype=np.float64) / self._weight_sum

    def probabilities(self) -> np.ndarray:
        """``p_t = (1 - gamma) q_t + gamma / K`` of the next round."""
        w = np.asarray(self._weights, dtype=np.float64)
        return self._one_minus_gamma * w / self._weight_sum + self._gamma_over_k

    def _prob(self, arm: int) -> float:
        """``p_t(arm)``."""
        return self._one_minus_gamma * self._weights[arm] / self._weight_sum + self._gamma_over_k

    def _renormalize(self) -> None:
        log_weights = self._log_weights
        shift = max(log_weights)
        self._shift = shift
        if self._small:
            w = [math.exp(v - shift) for v in log_weights]
            self._weights = w
            self._weight_sum = sum(w)
        else:
            w = np.exp(np.asarray(log_weights) - shift)
            self._weights = w
            self._weight_sum = float(w.sum())

    # --------------------------------------------------------------- the API
    def act(self):
        i = self._next_uniform
        if i >= len(self._uniforms):
            # at most the rounds left (the same numbers as one larger block: each uniform
            # is one 64-bit word of the generator, which serves nothing else)
            self._uniforms = self.rng.random(noise_block(self.problem.horizon - self.t)
                                             ).tolist()
            i = 0
        u = self._uniforms[i]
        self._next_uniform = i + 1
        g = self.gamma
        k = self.k
        if u < g:  # uniform exploration: u / gamma is uniform on [0, 1)
            arm = int(u * self._k_over_gamma)
            if arm >= k:
                arm = k - 1
        else:      # exponential weights: (u - gamma) / (1 - gamma) is uniform
            target = (u - g) * self._inv_one_minus_gamma * self._weight_sum
            w = self._weights
            if self._small:
                arm = bisect_right(list(accumulate(w)), target)
            else:
                arm = int(np.searchsorted(np.cumsum(w), target, side="right"))
            if arm >= k or w[arm] <= 0.0:  # rounding at the top end: last positive weight
                arm = max(j for j in range(k) if w[j] > 0.0)
        self._arm = arm
        self._p = self._prob(arm)
        return arm

    def update(self, action, feedback) -> None:
        self.observe_loss(action, clipped_loss(self, feedback, self._lo, self._hi))

    def observe_loss(self, action, loss: float) -> None:
        """Update with the scalar loss of ``action`` (not clipped: may be noisy/negative)."""
        arm = self._arm
        p = self._p
        if action != arm:  # the caller played another arm than the last act()
            arm = int(action)
            p = self._prob(arm)
        log_weights = self._log_weights
        v = log_weights[arm] - self._eta_w * (loss - self._lo) / p
        log_weights[arm] = v
        e = v - self._shift
        if -LOG_LIMIT < e < LOG_LIMIT:
            w = self._weights
            w[arm] = math.exp(e)
            self._weight_sum = sum(w) if self._small else float(w.sum())
        else:
            self._renormalize()
        self.t += 1
