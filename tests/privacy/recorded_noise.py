"""An exact noise buffer that records what it draws, for the tests of the exact counters'
releases (each release checked against the rows it must have taken)."""

from __future__ import annotations

import numpy as np

from agents.privacy.noise import ExactNoise


class Recorded(ExactNoise):
    """An :class:`ExactNoise` that keeps every block it draws (the rows, in order), each
    value plus ``shift`` (noise of any size without a huge scale)."""

    def __init__(self, strategy, width, shift=0):
        super().__init__(strategy, width)
        self.shift = shift
        self.blocks: list[np.ndarray] = []

    def refill(self, rng, n_rows):
        rows = super().refill(rng, n_rows)
        rows += self.shift
        self.blocks.append(rows.copy())
        return rows


def recorded(counter, shift: int = 0) -> Recorded:
    """Give ``counter`` a :class:`Recorded` buffer of its own noise's strategy and width."""
    buf = Recorded(counter.exact_noise.strategy, counter.exact_noise.width, shift)
    counter.exact_noise = buf
    return buf
