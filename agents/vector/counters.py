"""The Agarwal-Singh tree counter (``TreeBasedAgg``) of B games as one vector counter.

:class:`VectorAgarwalSingh` takes over B freshly reset
:class:`~agents.privacy.counters.AgarwalSinghCounter` objects (one per game, each with
its own generator) and adds a row per game and step with the scalar counter's
arithmetic: the tree slots are ``(B, levels, dim)``, a release sums the slots of the
set bits of ``t`` (a reduction over the same non-contiguous axis, so in the same
order) and adds ``R - popcount(t)`` fresh draws one after the other.

The noise is drawn per game from its own generator, in the blocks the scalar counter
uses or in blocks that give the same numbers:

* exact integer noise (discrete Laplace): each game's
  :class:`~agents.privacy.noise.ExactNoise` (the scalar counter's own buffer, continued)
  refilled with the scalar block (:meth:`~agents.privacy.counters.ContinualCounter.exact_block_rows`
  vectors) at the same step as the scalar counter refills, through
  :class:`~agents.privacy.noise.VectorExactNoise` (every game consumes the same number
  of vectors per step);
* Gaussian noise: ``normal(0, sigma, (D, dim))`` for the ``D`` draws of several steps
  at once, which yields the same numbers as ``D`` successive ``normal(0, sigma, dim)``
  calls (numpy fills the array element by element from the stream, ``loc + scale z``).
"""

from __future__ import annotations

import numpy as np

from agents.privacy.counters import AgarwalSinghCounter, popcount
from agents.privacy.noise import DiscreteLaplaceNoise, GaussianNoise, NoNoise, VectorExactNoise
from dp_online_envs._former_paths import former_names

__all__ = ["VectorAgarwalSingh"]

#: Floats of Gaussian noise drawn per refill, over all games (about 8 MB).
FLOAT_BLOCK = 2**20


class VectorAgarwalSingh:
    """B Agarwal-Singh counters stepped together (module docstring).

    Args:
        counters: B fresh counters of one configuration (no input added yet).

    Raises:
        ValueError: Counters of another type, of different configurations, or already
            used.
    """

    @staticmethod
    def fits(counters: list[object]) -> bool:
        """Whether the counters are Agarwal-Singh counters with Gaussian, exact
        discrete-Laplace or no noise (the noises this class draws as the scalar one)."""
        return all(type(c) is AgarwalSinghCounter and isinstance(
            c.noise_strategy, (GaussianNoise, DiscreteLaplaceNoise, NoNoise))
            for c in counters)

    def __init__(self, counters: list[AgarwalSinghCounter]) -> None:
        first = counters[0]
        if any(type(c) is not AgarwalSinghCounter or c.t != 0 or c.horizon != first.horizon
               or c.dim != first.dim or c.noise_strategy != first.noise_strategy
               for c in counters):
            raise ValueError("VectorAgarwalSingh needs fresh AgarwalSinghCounter objects "
                             "of one configuration")
        self.horizon, self.dim, self.draws = first.horizon, first.dim, first.draws
        self.grid = first.grid
        self.noise_strategy = first.noise_strategy
        self._private = first.noise_strategy.private
        self._rngs = [c.rng for c in counters]
        b = len(counters)
        self.t = 0
        self._prefix = np.zeros((b, self.dim), dtype=np.int64 if self.grid else np.float64)
        self._slots = np.stack([c.slots for c in counters])
        #: The games' exact noise, continued from the counters' own buffers.
        self.exact_noise = VectorExactNoise([c.exact_noise for c in counters], self._rngs)
        self._exact_rows = first.exact_block_rows()  # the scalar counter's block
        self._buffer = np.zeros((0, b, self.dim))  # Gaussian draws not yet used
        self._used = 0

    def noise_variance(self, t: int) -> float:
        """Per-coordinate variance of every release (``R`` draws)."""
        return float(self.noise_strategy.variance * self.draws)

    def _steps_draws(self, t0: int, steps: int) -> int:
        ts = np.arange(t0, t0 + steps)
        return int(np.sum(1 + self.draws - popcount(ts)))

    def _draw(self) -> np.ndarray:
        """The next noise vector of every game, ``(B, dim)``."""
        if self.grid is not None:
            return self.exact_noise.next_rows(self._exact_rows)
        if self._used == len(self._buffer):
            b = len(self._rngs)
            steps = max(1, FLOAT_BLOCK // (b * self.dim * (self.draws + 1)))
            steps = min(steps, self.horizon - self.t + 1)
            n = self._steps_draws(self.t, steps)
            block = np.empty((b, n, self.dim))
            scale = self.noise_strategy.scale
            for r, rows in zip(self._rngs, block):
                rows[...] = r.normal(0.0, scale, size=(n, self.dim))
            self._buffer = block.transpose(1, 0, 2)
            self._used = 0
        row = self._buffer[self._used]
        self._used += 1
        return row

    def add_batch(self, z: np.ndarray) -> np.ndarray:
        """Adds row ``b`` of ``z`` to game ``b``'s counter; returns the B releases.

        Raises:
            ValueError: Past the horizon, a wrong shape, non-finite input, or (exact
                noise) values beyond the integer grid, as the scalar counter.
        """
        if self.t >= self.horizon:
            raise ValueError(f"counter horizon T={self.horizon} exhausted")
        z = np.asarray(z, dtype=np.float64)
        if z.shape != self._prefix.shape or not np.all(np.isfinite(z)):
            raise ValueError(f"z must be finite of shape {self._prefix.shape}")
        if self.grid is not None:
            zi = np.rint(z / self.grid)
            if np.any(np.abs(zi) >= 2.0**52):
                raise ValueError("input too large for the exact integer grid")
            prefix = self._prefix + zi.astype(np.int64)
            if np.any(np.abs(prefix) >= 2**52):
                raise ValueError("input takes the prefix sum beyond the exact integer grid")
            self.t += 1
            self._prefix = prefix
            total = prefix + self._noise()
            if np.any(np.abs(total) >= 2**53):
                raise ValueError("noisy integer sum reached 2^53: not exactly representable")
            return total * self.grid
        self.t += 1
        self._prefix += z
        if not self._private:
            return self._prefix.copy()
        return self._prefix + self._noise()

    def _noise(self) -> np.ndarray:
        t = self.t
        lowest = (t & -t).bit_length() - 1
        self._slots[:, lowest] = self._draw()
        bits = [j for j in range(t.bit_length()) if (t >> j) & 1]
        eta = self._slots[:, bits].sum(axis=1)
        extra = self.draws - popcount(t)
        if extra and self.grid is not None:  # integers: one exact sum of the next rows
            eta += self.exact_noise.next_rows_sum(self._exact_rows, extra)
        else:  # floats: added one after the other, as the scalar counter
            for _ in range(extra):
                eta += self._draw()
        return eta

#: Former names of this module (one release, with a ``DeprecationWarning``).
__getattr__ = former_names(globals(), {
    "BatchedAgarwalSingh": "VectorAgarwalSingh",
})
