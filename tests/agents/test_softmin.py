"""``agents.common.softmin``: the exponential weights ``x_i ∝ exp(-eta cum_i)``, checked
bit for bit against the plain numpy computation (``w.max()``, ``np.exp``, ``p.sum()``)
on short vectors (whose largest entry Python's ``max`` takes) and long ones, zeros of
both signs, ties and infinities included."""

from __future__ import annotations

import numpy as np
import pytest

from agents.common import softmin


def _plain(eta: float, cum: np.ndarray) -> np.ndarray:
    w = -eta * cum
    w = w - w.max()
    p = np.exp(w)
    return p / p.sum()


def _cases():
    rng = np.random.default_rng(0)
    for size in (1, 2, 7, 8, 9, 15, 16, 17, 40):
        yield rng.normal(0.0, 50.0, size)
        yield np.round(rng.normal(0.0, 2.0, size))  # ties
        yield rng.choice([0.0, -0.0, 1.0, -1.0], size)  # zeros of both signs
    yield np.array([-0.0, 0.0, -0.0])
    yield np.array([0.0, np.inf, 3.0])


@pytest.mark.parametrize("eta", [0.3, 1.0, 1e-9, 2.0**-40])
def test_the_same_bits_as_the_plain_computation(eta):
    for cum in _cases():
        got = softmin(eta, cum.copy())
        np.testing.assert_array_equal(got.view(np.int64), _plain(eta, cum).view(np.int64))
