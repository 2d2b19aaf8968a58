"""The square-root factorization counter (Gaussian noise only)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..noise import NoiseStrategy
from .base import ContinualCounter

if TYPE_CHECKING:  # dp_accounting is imported where it is used (its import takes 0.8 s)
    from dp_accounting import dp_event

__all__ = ["FactorizationCounter"]


class FactorizationCounter(ContinualCounter):
    """Square-root factorization counter (Gaussian noise only).

    Henzinger, Upadhyay, Upadhyay (SODA 2023); Fichtenberger, Henzinger,
    Upadhyay (ICML 2023).  The all-ones lower-triangular ``A`` (``A z`` = the
    prefix sums) factors as ``A = C C`` with ``C`` lower-triangular Toeplitz,
    ``C[t, s] = f_{t-s}``, ``f_j = binom(2j, j) / 4^j`` (the coefficients of
    ``(1 - x)^{-1/2}``; ``f_0 = 1``, ``f_j = f_{j-1} (2j - 1) / (2j)``).  The
    counter releases ``A z + C w = C (C z + w)`` with ``w_j ~ N(0, sigma^2 I)``
    i.i.d., i.e. ``eta_t = sum_{j <= t} f_{t-j} w_j``:

    * privacy: ``C z + w`` is a Gaussian mechanism; changing ``z_s`` by ``d``
      moves ``C z`` by column ``s`` of ``C`` (x) ``d``, of l2 norm at most
      ``||d||_2 sqrt(sum_{j<T} f_j^2)``, so ``sigma = analytic_sigma(epsilon,
      delta) * Delta_2 * sqrt(sum_{j<T} f_j^2)``;
    * variance: ``Var(eta_t) = sigma^2 sum_{j<t} f_j^2`` (``~ ln t / pi``).

    Laplace noise is refused: the l1 column norm ``sum_{j<T} f_j`` grows like
    ``2 sqrt(T / pi)``, so pure epsilon-DP would need noise polynomial in T.
    Streaming cost: the noise history ``w`` is kept (``O(t dim)`` floats, grown
    by doubling) and ``eta_t`` is one ``O(t dim)`` convolution step, so a stream of
    ``T`` inputs costs ``O(T^2 dim)`` in total and ``O(T dim)`` memory; the ``"blt"``
    counter (:class:`~agents.privacy.counters.blt.BLTCounter`) has nearly the same noise at
    ``O(dim)`` work and memory per step.
    """

    name = "factorization"
    gaussian_only = True

    def __init__(self, horizon: int, dim: int, *, noise: NoiseStrategy | str | None,
                 **kwargs) -> None:
        if noise == "discrete-gaussian" or getattr(noise, "kind", None) == "discrete-gaussian":
            raise ValueError(
                "FactorizationCounter has real coefficients: it cannot release exact integer "
                "sums, use noise='gaussian' (its guarantee is marked idealized)")
        if (noise in ("laplace", "discrete-laplace")
                or getattr(noise, "kind", None) in ("laplace", "discrete-laplace")):
            raise ValueError(
                "FactorizationCounter supports only noise='gaussian' (or None): the l1 column "
                "norm of the square-root factor C grows like 2*sqrt(T/pi), so Laplace noise "
                "for pure epsilon-DP would be polynomially larger than the tree's")
        super().__init__(horizon, dim, noise=noise, **kwargs)

    @staticmethod
    def coefficients(n: int) -> np.ndarray:
        """``f_0 .. f_{n-1}`` with ``f_j = binom(2j, j) / 4^j``."""
        j = np.arange(1, n, dtype=float)
        return np.concatenate(([1.0], np.cumprod((2.0 * j - 1.0) / (2.0 * j))))

    def _init_structure(self) -> None:
        self._coef = self.coefficients(self.horizon)
        self._coef_sq_cumsum = np.cumsum(self._coef**2)  # sum_{j < t} f_j^2 at index t - 1
        self.column_norm = math.sqrt(self._coef_sq_cumsum[-1])

    def _calibrate(self, noise: NoiseStrategy) -> NoiseStrategy:
        return noise.calibrate(gain=self.column_norm)

    def _init_noise_state(self) -> None:
        self._noise_history = np.zeros((min(self.horizon, 16) if self.noise_strategy.private else 0,
                            self.dim))

    def _next_noise(self) -> np.ndarray:
        t = self._t
        if t > self._noise_history.shape[0]:
            grown = np.zeros((min(self.horizon, 2 * self._noise_history.shape[0]), self.dim))
            grown[: t - 1] = self._noise_history[: t - 1]
            self._noise_history = grown
        self._noise_history[t - 1] = self._draw()
        return self._coef[t - 1 :: -1] @ self._noise_history[:t]  # sum_{j <= t} f_{t-j} w_j

    def _unit_variances(self, ts: np.ndarray) -> np.ndarray:
        return self._coef_sq_cumsum[ts - 1]

    def _buffers(self) -> list[np.ndarray]:
        return [self._coef, self._coef_sq_cumsum, self._noise_history]

    def _unit_event(self) -> dp_event.DpEvent:
        return self.noise_strategy.dp_event(gain=self.column_norm)
