"""The interface every continual counter implements: :class:`ContinualCounter`.

What a counter is, and what its noise and guarantee mean: :mod:`agents.privacy.counters`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from dp_online_envs.validation import check_int

from ..calibration import PrivacyGuarantee
from ..noise import NOISE_KINDS, ExactNoise, NoiseStrategy, noise_strategy

if TYPE_CHECKING:  # dp_accounting is imported where it is used (its import takes 0.8 s)
    from dp_accounting import dp_event

__all__ = ["EXACT_NOISE_BLOCK", "ContinualCounter"]


#: Noise vectors drawn per call of the exact (rejection) sampler.
EXACT_NOISE_BLOCK = 256

#: ``a.max()`` of an array, as the ufunc reduction it calls (the same value, without
#: the method's wrapper), and the dot product of the exact path's range check.
_max, _dot = np.maximum.reduce, np.dot


class ContinualCounter(ABC):
    """Interface of a continual counter (private prefix sums).

    Args:
        horizon: ``T >= 1``, the maximal number of inputs.
        dim: ``dim >= 1``, the dimension of each input.
        noise: A :class:`~agents.privacy.noise.NoiseStrategy` carrying its
            budget, or its name: ``"laplace"`` (pure epsilon-DP),
            ``"gaussian"`` ((epsilon, delta)-DP) or ``None`` (exact,
            NON-private sums).
        epsilon: privacy parameter (with a noise name, required unless
            ``noise is None``).
        delta: required for Gaussian noise; ignored (the guarantee has
            ``delta = 0``) for Laplace noise.
        sensitivity: max l1 (Laplace) / l2 (Gaussian) norm of
            ``z_t - z'_t`` for neighbouring streams (with a noise name,
            required unless ``noise is None``).
        rng: source of all noise; ``None`` means ``np.random.default_rng()``.
        secure: with a noise name: draw the discrete (Laplace or Gaussian) noise from
            the OS cryptographic generator instead of ``rng`` (exact strategies only).

    Attributes:
        noise_strategy: The calibrated strategy (its ``scale`` is one draw's).
        noise: Its name (``"laplace"``, ``"gaussian"`` or ``None``).
        epsilon, delta, sensitivity: Its budget (``None`` for exact sums).
        draw_scale: Scale of ONE noise draw (Laplace ``b``, Gaussian ``sigma``).

    Raises:
        ValueError: on any invalid parameter (named in the message).
    """

    name: ClassVar[str] = ""
    #: Whether the counter refuses Laplace noise (real coefficients, Gaussian only).
    gaussian_only: ClassVar[bool] = False

    def __init__(self, horizon: int, dim: int, *, noise: NoiseStrategy | str | None,
                 epsilon: float | None = None, delta: float | None = None,
                 sensitivity: float | None = None,
                 rng: np.random.Generator | None = None, secure: bool = False) -> None:
        self.horizon = check_int("horizon", horizon, 1)
        self.dim = check_int("dim", dim, 1)
        if not isinstance(noise, NoiseStrategy) and noise not in NOISE_KINDS:
            raise ValueError("noise must be 'laplace', 'gaussian', 'discrete-laplace', "
                             f"'discrete-gaussian' or None, got noise={noise!r}")
        if rng is not None and not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got rng={rng!r}")
        if not isinstance(noise, NoiseStrategy):
            noise = noise_strategy(noise, epsilon, delta, sensitivity, secure=secure)
        self._rng = rng if rng is not None else np.random.default_rng()
        self._t = 0
        self._init_structure()
        self.noise_strategy = self._calibrate(noise.for_dim(self.dim))
        strategy = self.noise_strategy
        #: grid step of an exact integer strategy (``None``: real-valued arithmetic)
        self.grid = strategy.grid if strategy.private else None
        self._prefix = np.zeros(self.dim, dtype=np.int64 if self.grid else np.float64)
        #: exact strategies: the prefix sum in grid units as float64 (exact: integers below
        #: 2^52, the same values as the int64 ``_prefix``), and
        #: the grid step as a 0-d array (a cheaper ufunc operand than a Python float)
        self._prefix_f = np.zeros(self.dim)
        self._grid_array = np.array(self.grid if self.grid else 1.0)
        #: The exact draws (grid units) of the releases, in blocks of
        #: :meth:`exact_block_rows` vectors (:class:`~agents.privacy.noise.ExactNoise`).
        self.exact_noise = ExactNoise(strategy, self.dim)
        self.noise, self.epsilon, self.delta, self.sensitivity = (
            strategy.kind, strategy.epsilon, strategy.delta, strategy.sensitivity)
        self.draw_scale = float(strategy.scale)
        self._init_noise_state()

    # ------------------------------------------------------------ subclass API
    def _init_structure(self) -> None:
        """Fixes the data-independent structure (before calibration)."""

    @abstractmethod
    def _calibrate(self, noise: NoiseStrategy) -> NoiseStrategy:
        """The strategy calibrated for the configured budget and this structure."""

    @abstractmethod
    def _init_noise_state(self) -> None:
        """Allocates the noise buffers (called only after calibration)."""

    @abstractmethod
    def _next_noise(self) -> np.ndarray:
        """Noise ``eta_t`` of the release at ``t = self._t`` (already incremented)."""

    @abstractmethod
    def _unit_variances(self, ts: np.ndarray) -> np.ndarray:
        """Per-coordinate variance of ``eta_t`` in units of one draw's variance."""

    @abstractmethod
    def _buffers(self) -> list[np.ndarray]:
        """All float arrays the counter holds (for :meth:`memory_floats`)."""

    @abstractmethod
    def _unit_event(self) -> dp_event.DpEvent:
        """The ``DpEvent`` of the whole mechanism (``NonPrivateDpEvent`` if exact)."""

    # ------------------------------------------------------------ public API
    @property
    def t(self) -> int:
        """Number of inputs added so far."""
        return self._t

    @property
    def rng(self) -> np.random.Generator:
        """The generator the counter draws its noise from."""
        return self._rng

    @property
    def released(self) -> int:
        """Number of prefix sums released so far (one per :meth:`add`)."""
        return self._t

    def add(self, z: np.ndarray) -> np.ndarray:
        """Adds ``z_t`` and returns the noisy prefix sum ``S_t + eta_t`` (new array).

        With an exact strategy (:attr:`grid` set) ``z`` is first rounded half-even
        onto the grid and the release is ``(S_t + eta_t) * g`` from int64 sums.

        Raises:
            ValueError: if ``T`` values were already added, or ``z`` does not
                have shape ``(dim,)``, or is not finite, or (exact strategies) the
                integer prefix sum would reach ``2^52``. The state is unchanged.
                (Exact strategies also raise, after the step, if the noisy integer
                sum reaches ``2^53``, which no longer fits float64 exactly.)
        """
        if self._t >= self.horizon:
            raise ValueError(f"counter horizon T={self.horizon} exhausted: "
                             f"cannot add input number {self._t + 1}")
        z = np.asarray(z, dtype=float)
        if z.shape != (self.dim,):
            raise ValueError(f"z must have shape ({self.dim},), got shape {z.shape}")
        if self.grid is not None:  # its range check refuses a value that is not finite
            return self._add_exact(z)
        if not np.isfinite(z).all():
            raise ValueError(f"z must be finite, got z={z!r}")
        self._t += 1
        self._prefix += z
        if not self.noise_strategy.private:
            return self._prefix.copy()
        return self._prefix + self._next_noise()

    def _add_exact(self, z: np.ndarray) -> np.ndarray:
        """The integer path: ``z`` rounded to the grid, int64 sums and noise."""
        zi = np.rint(z / self._grid_array)  # exact scaling by a power of two, half even
        # One check covers both the input and the sum: |S| < 2^52 (an invariant) and
        # |S + zi| < 2^52 force |zi| < 2^53, so zi is an exact integer and the float sum
        # of two such integers, below 2^52, is exact (a larger zi fails the check).
        # A value that is not finite makes the sum NaN or infinite, which fails it too.
        # ``|S|^2 < 2^104`` (one dot product, its rounding monotone over non-negative
        # terms) implies every ``|S_i| < 2^52``; only where it fails is the maximum taken.
        prefix = self._prefix_f + zi
        if not _dot(prefix, prefix) < 2.0**104 and not _max(np.abs(prefix)) < 2.0**52:
            if not np.isfinite(z).all():
                raise ValueError(f"z must be finite, got z={z!r}")
            raise ValueError(f"input z={z!r} too large for the exact integer grid "
                             f"g={self.grid!r}: the prefix sum must stay below 2^52 g")
        self._t += 1
        self._prefix_f = prefix
        self._prefix = prefix.astype(np.int64)
        return self._release_exact()

    def _release_exact(self) -> np.ndarray:
        """``(S_t + eta_t) * g`` from the integer prefix and integer noise."""
        total = self._prefix + self._next_noise()
        if _max(np.abs(total)) >= 2**53:
            raise ValueError("noisy integer sum reached 2^53: not exactly representable")
        return total * self.grid

    def noise_variance(self, t: int) -> float:
        """Exact per-coordinate variance of the noise in the ``t``-th release (1-based)."""
        check_int("t", t, 1, self.horizon)
        return float(self.noise_strategy.variance
                     * self._unit_variances(np.array([int(t)]))[0])

    def max_noise_variance(self) -> float:
        """``max_{t <= T}`` of :meth:`noise_variance` (computed exactly, vectorised)."""
        ts = np.arange(1, self.horizon + 1, dtype=np.int64)
        return float(self.noise_strategy.variance * self._unit_variances(ts).max())

    def memory_floats(self) -> int:
        """Number of floats currently held (running sum + noise state)."""
        return int(self._prefix.size + sum(b.size for b in self._buffers()))

    def describe(self) -> dp_event.DpEvent:
        """The ``dp_accounting`` event of the whole mechanism (all T releases).

        ``NonPrivateDpEvent`` for ``noise=None`` (accountants report infinity).
        """
        return self._unit_event()

    def guarantee(self) -> PrivacyGuarantee:
        """The guarantee reported by the dp_accounting accountant for :meth:`describe`.

        Raises:
            ValueError: if the accountant does not confirm ``(epsilon, delta)``.
        """
        return self.noise_strategy.guarantee(self.describe(), mechanism=repr(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(T={self.horizon}, dim={self.dim}, {self.noise_strategy})"

    # ------------------------------------------------------------ helpers
    def _draw(self) -> np.ndarray:
        """One noise vector: exact int64 draws in grid units, or float draws.

        The exact sampler's cost is mostly per call, so its draws are made
        :data:`EXACT_NOISE_BLOCK` vectors at a time and used in order (the vectors are
        i.i.d. either way; the noise does not depend on the data).
        """
        if self.grid is None:
            return self.noise_strategy.draw(self._rng, self.dim)
        return self.exact_noise.next_row(self._rng, self.exact_block_rows()).copy()

    def _draw_sum(self, count: int) -> np.ndarray:
        """The sum of the next ``count`` noise vectors, the same numbers as ``count``
        calls of :meth:`_draw` added one after the other (exact integers: summed at once;
        float draws: added in that order)."""
        if self.grid is not None:
            return self.exact_noise.next_rows_sum(self._rng, self.exact_block_rows(), count)
        total = self._draw()
        for _ in range(count - 1):
            total += self._draw()
        return total

    def exact_block_rows(self) -> int:
        """Noise vectors drawn per refill of :attr:`exact_noise`: the strategy's
        ``block_rows`` (else :data:`EXACT_NOISE_BLOCK`), at most ``2 T``."""
        return min(getattr(self.noise_strategy, "block_rows", EXACT_NOISE_BLOCK),
                   2 * self.horizon)
