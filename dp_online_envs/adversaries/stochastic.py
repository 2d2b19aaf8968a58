"""Stochastic adversaries: i.i.d. losses around a mean, switching and drifting means,
and the multi-armed-bandit lower-bound instance."""

from __future__ import annotations

import math

import numpy as np

from dp_online_envs.adversaries.base import Adversary
from dp_online_envs.validation import check_int, check_real


def _is_symmetric(loss, rng: np.random.Generator, trials: int = 16) -> bool:
    """Whether the admissible parameter set looks symmetric (``-theta`` admissible)."""
    for _ in range(trials):
        z = loss.sample_param(rng)
        if not np.allclose(loss.clip_param(-z), -z, atol=1e-12):
            return False
    return True


class StochasticAdversary(Adversary):
    """i.i.d. losses with mean ``mu`` (so the best action in expectation is unique a.s.).

    Draws, chosen so that ``E[theta_t] = mu`` exactly and ``theta_t`` stays admissible:

    * box parameter sets (``loss.param_is_box``): coordinatewise two-point draws
      ``theta_{t,i} in {low_i, high_i}`` with ``P(high_i) = (mu_i - low_i)/(high_i - low_i)``
      (Bernoulli losses for ``[0,1]^K``);
    * symmetric sets K = -K: ``theta_t = mu + spread * (z - z')/2`` with z, z' i.i.d. from
      ``sample_param`` and ``mu in (1 - spread) K``;
    * other sets: ``clip_param(mu + spread * (z - z')/2)``; the mean is then not exact and
      :attr:`mean_param` is ``None`` (no pseudo-regret).

    Args:
        mean: The mean parameter; by default a random one with, for box sets of linear
            losses on arms/simplices, a best coordinate lower than the rest by ``gap``.
        gap: Margin of the best coordinate in the default box mean.
        spread: Size of the fluctuations for non-box sets, in (0, 1].
    """

    name = "stochastic"

    def __init__(self, mean: np.ndarray | None = None, gap: float = 0.1, spread: float = 0.5):
        check_real("spread", spread, 0.0, 1.0, low_inclusive=False)
        check_real("gap", gap, 0.0, 1.0, high_inclusive=False)
        self._given_mean = None if mean is None else np.asarray(mean, dtype=np.float64)
        self.gap = float(gap)
        self.spread = float(spread)

    def reset(self, np_random, domain, loss, horizon) -> None:
        super().reset(np_random, domain, loss, horizon)
        self._box = bool(loss.param_is_box)
        self._symmetric = (not self._box) and _is_symmetric(loss, np_random)
        space = loss.param_space
        self._low = np.asarray(space.low, dtype=np.float64)
        self._width = np.asarray(space.high, dtype=np.float64) - self._low
        if self._given_mean is not None:
            mu = self._given_mean
            if mu.shape != (loss.param_dim,):
                raise ValueError(f"mean has shape {mu.shape}, expected ({loss.param_dim},)")
            if not np.allclose(loss.clip_param(mu), mu):
                raise ValueError("mean is not an admissible parameter of the loss family")
        else:
            mu = self._random_mean()
        self._set_mean(mu)

    def _random_mean(self) -> np.ndarray:
        rng = self.np_random
        if self._box:
            # Means in the middle half of the box, one coordinate lowered by the gap.
            mu = self._low + self._width * rng.uniform(0.3, 0.7, size=self._low.shape)
            best = int(rng.integers(self._low.size))
            mu[best] = self._low[best] + self._width[best] * max(0.3 - self.gap, 0.0)
            return mu
        return self.loss.sample_param(rng)

    def _set_mean(self, mu: np.ndarray) -> None:
        if self._box:
            self._mu = mu
            self._p_high = np.divide(mu - self._low, self._width, out=np.zeros_like(mu),
                                     where=self._width > 0)
        else:
            # Shrink into (1 - spread) K so that mu + spread * K stays admissible.
            self._mu = (1.0 - self.spread) * mu if self._symmetric else mu

    def _draw(self) -> np.ndarray:
        rng = self.np_random
        if self._box:
            return self._low + self._width * (rng.random(self._mu.shape) < self._p_high)
        z1 = self.loss.sample_param(rng)
        z2 = self.loss.sample_param(rng)
        theta = self._mu + 0.5 * self.spread * (z1 - z2)
        return theta if self._symmetric else self.loss.clip_param(theta)

    def next_loss(self, t: int) -> np.ndarray:
        return self._draw()

    @property
    def mean_param(self) -> np.ndarray | None:
        return self._mu.copy() if (self._box or self._symmetric) else None


class SwitchingAdversary(StochasticAdversary):
    """Piecewise-stationary losses: the mean is redrawn every ``period`` rounds.

    Args:
        period: Rounds between switches (default: a quarter of the horizon).
        gap, spread: As in :class:`StochasticAdversary`.
    """

    name = "switching"

    def __init__(self, period: int | None = None, gap: float = 0.1, spread: float = 0.5):
        super().__init__(None, gap=gap, spread=spread)
        self.period = None if period is None else check_int("period", period, 1)

    def reset(self, np_random, domain, loss, horizon) -> None:
        super().reset(np_random, domain, loss, horizon)
        self._period = int(self.period) if self.period else max(1, int(horizon) // 4)

    def next_loss(self, t: int) -> np.ndarray:
        if t > 1 and (t - 1) % self._period == 0:
            self._set_mean(self._random_mean())
        return self._draw()

    @property
    def mean_param(self) -> None:
        return None


class DriftingAdversary(StochasticAdversary):
    """A slowly drifting mean: ``mu_t = (1 - rate) mu_{t-1} + rate z_t``, z_t random.

    The convex combination keeps the mean admissible; draws around ``mu_t`` are as in
    :class:`StochasticAdversary`.
    """

    name = "drifting"

    def __init__(self, rate: float = 0.01, spread: float = 0.5):
        super().__init__(None, gap=0.0, spread=spread)
        self.rate = check_real("rate", rate, 0.0, 1.0, low_inclusive=False)

    def next_loss(self, t: int) -> np.ndarray:
        if t > 1:
            base = self._mu / (1.0 - self.spread) if self._symmetric else self._mu
            target = self._random_mean()
            self._set_mean((1.0 - self.rate) * base + self.rate * target)
        return self._draw()

    @property
    def mean_param(self) -> None:
        return None


class LowerBoundAdversary(StochasticAdversary):
    """The K-armed bandit lower-bound instance (Auer et al. 2002, Thm 5.1).

    Bernoulli losses with mean 1/2 on every arm but one, drawn uniformly at random,
    whose mean is ``1/2 - gap`` with ``gap = min(1/4, c * sqrt(K / T))``: no learner can
    tell the arms apart in fewer than about ``1/gap^2`` pulls each, so the expected
    regret is of order ``sqrt(K T)``. Needs a linear loss with parameters in ``[0,1]^K``.

    Args:
        c: The constant in the gap (clamped so the gap is at most 1/4).
    """

    name = "lower-bound"

    def __init__(self, c: float = 1.0):
        super().__init__(None)
        self.c = check_real("c", c, 0.0, low_inclusive=False)

    def reset(self, np_random, domain, loss, horizon) -> None:
        if not loss.param_is_box:
            raise ValueError("the lower-bound instance needs losses with box parameters [0,1]^K")
        super().reset(np_random, domain, loss, horizon)

    def _random_mean(self) -> np.ndarray:
        k = self._low.size
        self.instance_gap = min(0.25, self.c * math.sqrt(k / self.horizon))
        mu = self._low + 0.5 * self._width
        best = int(self.np_random.integers(k))
        mu[best] -= self.instance_gap * self._width[best]
        return mu
