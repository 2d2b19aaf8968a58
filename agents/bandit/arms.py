"""Exponential weights over K arms with importance-weighted loss estimates.

The engine shared by ``exp2`` on arms (:class:`~agents.bandit.exp2.EXP2Arms`) and
``exp3`` (:class:`~agents.bandit.exp3.EXP3`): ``p_t = (1 - gamma) q_t + gamma / K`` with
``q_t(i) ∝ exp(-eta sum_{s<t} l~_s(i))``, the estimate ``l~_t = (l_t / p_t(I_t))
e_{I_t}`` of the normalized loss ``l_t = (f_t - lo) / width``. Only the played arm's
log-weight changes, so a round is O(K) scalar work: log-weights in a Python list, one
uniform draw (drawn in blocks of :data:`~agents.common.NOISE_BLOCK`), a running sum
and a bisection. For ``K <= 64`` the weights are a Python list too (no NumPy call per
round: ``benchmarks/exp2_speed.py`` measures this path), above that a NumPy array
(``cumsum`` + ``searchsorted``). Weights are renormalized whenever a log-weight leaves
``exp(+-300)``, so noisy, negative losses cannot overflow.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from itertools import accumulate

import numpy as np

from agents.base import Agent
from agents.common import NOISE_BLOCK, clipped_loss

__all__ = ["ArmsExpWeights"]

#: Above this many arms the weights are a NumPy array (cumsum + searchsorted).
_SCALAR_ARMS = 64
_LOG_LIMIT = 300.0


class ArmsExpWeights(Agent):
    """Exponential weights over K arms with importance-weighted loss estimates.

    The engine of :class:`~agents.bandit.exp2.EXP2Arms` and
    :class:`~agents.bandit.exp3.EXP3`: subclasses set ``self.eta`` (per unit of
    normalized loss), ``self.gamma`` (uniform mixing), ``self._lo``, ``self._hi`` and
    ``self._width`` (``l = (f - lo) / width``) in ``setup`` and call :meth:`_init_arms`. Per round: O(K) scalar work, no NumPy call for K <= 64.
    """

    feedback = "bandit"
    private = False

    def _init_arms(self, k: int) -> None:
        self.k = int(k)
        self._small = self.k <= _SCALAR_ARMS
        self._inv_width = 1.0 / self._width
        g = self.gamma
        self._one_minus_gamma = 1.0 - g
        self._inv_one_minus_gamma = 1.0 / (1.0 - g) if g < 1.0 else 0.0
        self._k_over_gamma = self.k / g if g > 0.0 else 0.0
        self._gamma_over_k = g / self.k
        # a loss l~ costs eta * l~ / p in log-weight; precompute eta / width
        self._eta_w = self.eta * self._inv_width

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        k = self.k
        self._lw = [0.0] * k           # log-weights -eta * sum of estimates
        self._shift = 0.0              # weights are exp(lw - shift)
        if self._small:
            self._w = [1.0] * k
        else:
            self._w = np.ones(k)
        self._W = float(k)
        self._u: list[float] = []
        self._ui = 0
        self._arm = 0
        self._p = 1.0 / k

    # ---------------------------------------------------------------- helpers
    def probabilities(self) -> np.ndarray:
        """``p_t = (1 - gamma) q_t + gamma / K`` of the next round."""
        w = np.asarray(self._w, dtype=np.float64)
        return self._one_minus_gamma * w / self._W + self._gamma_over_k

    def _prob(self, arm: int) -> float:
        return self._one_minus_gamma * self._w[arm] / self._W + self._gamma_over_k

    def _renormalize(self) -> None:
        lw = self._lw
        shift = max(lw)
        self._shift = shift
        if self._small:
            w = [math.exp(v - shift) for v in lw]
            self._w = w
            self._W = sum(w)
        else:
            w = np.exp(np.asarray(lw) - shift)
            self._w = w
            self._W = float(w.sum())

    # --------------------------------------------------------------- the API
    def act(self):
        i = self._ui
        if i >= len(self._u):
            self._u = self.rng.random(NOISE_BLOCK).tolist()
            i = 0
        u = self._u[i]
        self._ui = i + 1
        g = self.gamma
        k = self.k
        if u < g:  # uniform exploration: u / gamma is uniform on [0, 1)
            arm = int(u * self._k_over_gamma)
            if arm >= k:
                arm = k - 1
        else:      # exponential weights: (u - gamma) / (1 - gamma) is uniform
            target = (u - g) * self._inv_one_minus_gamma * self._W
            w = self._w
            if self._small:
                arm = bisect_right(list(accumulate(w)), target)
            else:
                arm = int(np.searchsorted(np.cumsum(w), target, side="right"))
            if arm >= k or w[arm] <= 0.0:  # rounding at the top end: last positive weight
                arm = max(j for j in range(k) if w[j] > 0.0)
        self._arm = arm
        self._p = self._one_minus_gamma * self._w[arm] / self._W + self._gamma_over_k
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
        lw = self._lw
        v = lw[arm] - self._eta_w * (loss - self._lo) / p
        lw[arm] = v
        e = v - self._shift
        if -_LOG_LIMIT < e < _LOG_LIMIT:
            w = self._w
            w[arm] = math.exp(e)
            self._W = sum(w) if self._small else float(w.sum())
        else:
            self._renormalize()
        self.t += 1
