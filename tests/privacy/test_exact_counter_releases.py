"""The exact counters' releases: the Agarwal-Singh release
(``AgarwalSinghCounter._next_exact_noise``) against its definition, computed by brute
force from the noise rows the counter drew, its range checks, and the input range check
every exact counter shares.

Release ``t`` consumes the next ``1 + R - popcount(t)`` rows of its noise blocks: the
first is the new slot of level ``lowest(t)``, the others are summed as extra draws; its
noise is the sum of the slots of the set bits of ``t`` plus the extras. The counter
computes those sums for many releases at once (a plan over the noise block:
``tests/privacy/test_exact_counter_plans.py``); the reference below re-reads the rows in
order and adds them up with Python integers.
"""

from __future__ import annotations

import numpy as np
import pytest
from recorded_noise import recorded as _recorded

from agents.privacy.counters import make_counter


def _reference_noise(blocks: list[np.ndarray], horizon: int, draws: int, block_rows: int
                     ) -> list[list[int]]:
    """The noise of every release, in Python integers, from the drawn blocks: the rows are
    used in order, a block dropped when the next row it would need is past its end."""
    rows = iter([list(map(int, r)) for b in blocks for r in b])
    slots: dict[int, list[int]] = {}
    out = []
    for t in range(1, horizon + 1):
        lowest = (t & -t).bit_length() - 1
        slots[lowest] = next(rows)
        eta = [sum(slots[j][i] for j in range(t.bit_length()) if t >> j & 1)
               for i in range(len(slots[lowest]))]
        for _ in range(draws - t.bit_count()):
            eta = [a + b for a, b in zip(eta, next(rows))]
        out.append(eta)
    assert all(len(b) == block_rows for b in blocks)
    return out


@pytest.mark.parametrize("noise, horizon, dim", [
    ("discrete-laplace", 37, 3),      # blocks of 2 T rows at most: several refills
    ("discrete-gaussian", 700, 2),    # rounds whose rows straddle two blocks
    ("discrete-laplace", 1, 1),
    ("discrete-gaussian", 1025, 1),
])
def test_every_release_is_the_sum_of_its_rows(noise, horizon, dim):
    c = make_counter("agarwal-singh", horizon, dim, noise=noise, epsilon=1.0, delta=1e-6,
                     sensitivity=1.0, rng=np.random.default_rng(horizon))
    buf = _recorded(c)
    zs = np.random.default_rng(1).uniform(-1, 1, (horizon, dim))
    got = [np.rint(c.add(z) / c.grid).astype(np.int64) for z in zs]
    prefix = np.rint(np.cumsum(np.rint(zs / c.grid), axis=0)).astype(np.int64)
    expected = _reference_noise(buf.blocks, horizon, c.draws, c.exact_block_rows())
    assert len(buf.blocks) > (1 if horizon > 1 else 0)  # the refills are exercised
    np.testing.assert_array_equal(np.array(got) - prefix, np.array(expected))
    np.testing.assert_array_equal(c.slots[[j for j in range(c.levels) if horizon >> j & 1]]
                                  .sum(axis=0), c._tree_sum)


def test_a_noisy_sum_past_2_53_is_still_refused():
    """The range check of the release is skipped only while the rows drawn bound it:
    rows of about 2^51 (R = 6 of them a release) must still reach it."""
    c = make_counter("agarwal-singh", 40, 2, noise="discrete-laplace", epsilon=1.0,
                     sensitivity=1.0, rng=np.random.default_rng(0))
    _recorded(c, shift=2**51)
    with pytest.raises(ValueError, match="2\\^53"):
        for _ in range(40):
            c.add(np.zeros(2))


def test_the_bound_is_the_largest_row_drawn():
    """The skip of the range check rests on ``_row_bound``: the largest ``|value|`` of
    every block drawn so far, refills within a round included."""
    c = make_counter("agarwal-singh", 300, 2, noise="discrete-gaussian", epsilon=1.0,
                     delta=1e-6, sensitivity=1.0, rng=np.random.default_rng(3))
    buf = _recorded(c)
    for t, z in enumerate(np.random.default_rng(4).uniform(-1, 1, (300, 2)), 1):
        c.add(z)
        assert c._row_bound == max(int(np.abs(b).max()) for b in buf.blocks), t
    assert len(buf.blocks) > 1 and 0 < c.draws * c._row_bound < 2**52


@pytest.mark.parametrize("name", ["tree", "agarwal-singh", "honaker"])
def test_the_input_range_check_refuses_exactly_what_it_must(name):
    """The exact path's range check (a dot product first, the maximum where it fails):
    ten coordinates just below ``2^52`` grid units pass (their squares sum past
    ``2^104``), one at ``2^52`` is refused, NaN and infinities are refused as not
    finite; a refused input leaves the counter as it was."""
    c = make_counter(name, 8, 10, noise="discrete-laplace", epsilon=1.0, sensitivity=1.0,
                     rng=np.random.default_rng(0))
    g = c.grid
    big = np.full(10, (2.0**52 - 1) * g)
    c.add(big)  # accepted: every |S_i| < 2^52
    assert c.t == 1
    for bad, match in [(np.r_[2.0 * g, np.zeros(9)], "too large"),
                       (np.r_[np.nan, np.zeros(9)], "finite"),
                       (np.r_[-np.inf, np.zeros(9)], "finite")]:
        with pytest.raises(ValueError, match=match):
            c.add(bad)
        assert c.t == 1
    fresh = make_counter(name, 8, 10, noise="discrete-laplace", epsilon=1.0,
                         sensitivity=1.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="too large"):
        fresh.add(np.r_[2.0**52 * g, np.zeros(9)])
    fresh.add(np.r_[(2.0**52 - 1) * g, np.zeros(9)])
