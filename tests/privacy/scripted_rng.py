"""Exact enumeration of a rejection sampler's outcomes (shared by the sampler tests,
imported as a plain module: tests/privacy is on sys.path under pytest's default import
mode)."""

from fractions import Fraction

import numpy as np


class NeedMore(Exception):
    """The script ran out: the sampler asked for one more ``integers(0, high)``."""

    def __init__(self, high: int) -> None:
        self.high = high


class Script:
    """A generator whose ``integers`` returns a fixed script of values, one at a time."""

    def __init__(self, values: list[int]) -> None:
        self.values, self.calls = values, 0

    def integers(self, low, high, size=None):
        high = np.ravel(np.asarray(high))
        assert low == 0 and high.size == 1 and size in (None, 1)
        if self.calls == len(self.values):
            raise NeedMore(int(high[0]))
        value = self.values[self.calls]
        self.calls += 1
        return np.array([value], dtype=np.int64)


def enumerate_bernoulli(sample, depth: int) -> tuple[Fraction, Fraction]:
    """(P(output 1 within ``depth`` draws), P(not decided within ``depth`` draws)) of
    ``sample(rng) -> array of one bool``, by enumerating every script of uniform draws."""
    p_one, undecided = Fraction(0), Fraction(0)
    stack = [([], Fraction(1))]
    while stack:
        prefix, prob = stack.pop()
        try:
            out = sample(Script(prefix))
        except NeedMore as more:
            if len(prefix) == depth:
                undecided += prob
            else:
                stack += [(prefix + [v], prob / more.high) for v in range(more.high)]
            continue
        p_one += prob if bool(out[0]) else 0
    return p_one, undecided
