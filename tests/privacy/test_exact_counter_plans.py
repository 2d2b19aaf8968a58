"""The planned releases of the exact Agarwal-Singh counter
(``AgarwalSinghCounter._plan_releases``): the noise of every release whose rows lie in
the current block is computed at once, and the counter's state (its slots, the block's
``used``) is set to its value after the last planned release. Checked against a
reference that takes the rows one release after the other, in Python integers: every
release, the slots as :attr:`~agents.privacy.counters.AgarwalSinghCounter.slots` shows
them after every release (within a plan too), the blocks drawn (each at the release that
first needs it) and the rows used, on the float64 path of a plan (rows bounded below
``2^52 / R``) and on its int64 path (larger rows).
"""

from __future__ import annotations

import numpy as np
import pytest
from recorded_noise import Recorded as _Recorded

from agents.privacy.counters import make_counter


class _Reference:
    """Release after release, what the counter must hold: the rows taken in order (a
    block dropped when the next row it would need is past its end), the slots and the
    noise, in Python integers."""

    def __init__(self, counter, buf: _Recorded):
        self.buf, self.draws, self.levels = buf, counter.draws, counter.levels
        self.slots = [[0] * counter.dim for _ in range(counter.levels)]
        self.block, self.used = -1, 0

    def _row(self) -> list[int]:
        if self.block < 0 or self.used == len(self.buf.blocks[self.block]):
            self.block, self.used = self.block + 1, 0
        self.used += 1
        return list(map(int, self.buf.blocks[self.block][self.used - 1]))

    def release(self, t: int) -> list[int]:
        lowest = (t & -t).bit_length() - 1
        self.slots[lowest] = self._row()
        eta = [sum(self.slots[j][i] for j in range(t.bit_length()) if t >> j & 1)
               for i in range(len(self.slots[lowest]))]
        for _ in range(self.draws - t.bit_count()):
            eta = [a + b for a, b in zip(eta, self._row())]
        return eta


@pytest.mark.parametrize("noise, horizon, dim, shift", [
    ("discrete-gaussian", 700, 2, 0),     # float64 plans, rounds across two blocks
    ("discrete-laplace", 300, 3, 0),
    ("discrete-laplace", 1, 1, 0),
    ("discrete-laplace", 64, 2, 0),       # release 63 = 2^R - 1 has no extra row
    ("discrete-gaussian", 255, 1, 0),     # nor has T = 2^R - 1
    ("discrete-gaussian", 1025, 1, 0),
    ("discrete-laplace", 40, 2, 2**50),   # R = 6 rows of ~2^50: int64 plans
])
def test_every_planned_release_and_the_state_after_it(noise, horizon, dim, shift):
    c = make_counter("agarwal-singh", horizon, dim, noise=noise, epsilon=1.0, delta=1e-6,
                     sensitivity=1.0, rng=np.random.default_rng(horizon))
    buf = c.exact_noise = _Recorded(c.exact_noise.strategy, dim, shift)
    ref = _Reference(c, buf)
    planned = 0
    for t, z in enumerate(np.random.default_rng(1).uniform(-1, 1, (horizon, dim)), 1):
        got = c.add(z) / c.grid
        prefix = c._prefix.tolist()
        eta = ref.release(t)
        assert got.tolist() == [float(p + e) for p, e in zip(prefix, eta)], t
        assert c.slots.tolist() == ref.slots, t
        assert len(buf.blocks) == ref.block + 1, t  # each block drawn when first needed
        planned = max(planned, c._planned)
    assert buf.used == ref.used and len(buf.blocks) == ref.block + 1
    if horizon > 1:  # releases were planned together, in float64 unless the rows are large
        assert planned > 1 and (c._plan.dtype == np.int64) == (shift > 0)

