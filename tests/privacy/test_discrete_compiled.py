"""The compiled exact samplers (``agents/privacy/discrete_compiled.py``) are the numpy
samplers of ``agents/privacy/discrete.py`` bit for bit: the same values AND the same
generator state afterwards (the buffered half-word of PCG64 included), on every bit
generator, at every bound numpy draws differently (32-bit words, one full word, 64-bit
words); their draws fit the exact pmf; and the policy that loads them (after
``COMPILE_AFTER`` numpy draws, never without numba, never for a stand-in generator) holds.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from agents.privacy import discrete
from agents.privacy.discrete import (
    OsRandom,
    bernoulli_exp_big,
    discrete_gaussian,
    discrete_laplace,
)

pytest.importorskip("numba")

BIT_GENERATORS = (np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937, np.random.Philox,
                  np.random.SFC64)


def _generator(kind, seed: int) -> np.random.Generator:
    """A generator left with a buffered 32-bit half word (an odd number of 32-bit draws):
    the compiled path must continue from it as numpy does."""
    rng = np.random.Generator(kind(seed))
    rng.integers(0, 7, size=3)
    return rng


def _both(monkeypatch, kind, seed, sampler, *args):
    """``sampler(rng, *args)`` and the generator state after, on the numpy path and on
    the compiled path, from the same starting state."""
    out = []
    for after in (None, 0):
        monkeypatch.setattr(discrete, "COMPILE_AFTER", after)
        rng = _generator(kind, seed)
        out.append((sampler(rng, *args), rng.bit_generator.state))
    return out


def _same_state(a, b) -> bool:
    """Bit generator states (nested dicts of numbers and arrays) equal."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            _same_state(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def _assert_same(pair):
    (x, state_x), (y, state_y) = pair
    assert x.dtype == y.dtype and x.shape == y.shape
    assert np.array_equal(x, y)
    assert _same_state(state_x, state_y)


@pytest.mark.parametrize("kind", BIT_GENERATORS)
@pytest.mark.parametrize("t", [1, 2, 3, 65_537, 2**31 + 1, 2**32 - 1, 2**32, 2**32 + 1,
                               2**40 + 3, discrete.MAX_SCALE])
def test_compiled_discrete_laplace_is_the_numpy_sampler_bit_for_bit(monkeypatch, kind, t):
    for n in (1, 57, 700):
        _assert_same(_both(monkeypatch, kind, t + n, discrete_laplace, t, n))


@pytest.mark.parametrize("kind", BIT_GENERATORS)
@pytest.mark.parametrize("sigma", [1, 2, 7, 1000, 65_536, discrete.MAX_GAUSS_SIGMA])
def test_compiled_discrete_gaussian_is_the_numpy_sampler_bit_for_bit(monkeypatch, kind, sigma):
    for n in (1, 300):
        _assert_same(_both(monkeypatch, kind, sigma + n, discrete_gaussian, sigma, n))


@pytest.mark.parametrize("den", [1, 3, 2**20, 2**40 + 1, discrete.MAX_SCALE])
def test_compiled_bernoulli_exp_big_is_the_numpy_sampler_bit_for_bit(monkeypatch, den):
    num = np.random.default_rng(den).integers(0, 6 * den, size=(40, 3))
    num[0, 0], num[1, 1] = 0, den  # exp(0) = 1 and exp(-1)
    for dtype in (np.int64, np.int32) if 6 * den < 2**31 else (np.int64,):
        pair = _both(monkeypatch, np.random.PCG64, 5, bernoulli_exp_big, num.astype(dtype), den)
        _assert_same(pair)
        assert pair[1][0].shape == num.shape


def test_the_gaussian_candidates_too_far_out_for_int64_are_finished_in_python(monkeypatch):
    """A candidate with ``||Y| - sigma| >= 2^31`` (probability below e^-64) stops the
    kernel before its batch's acceptance step and the batch is finished in Python
    integers: with the bound lowered to 3, most batches take that path, and the draws and
    the generator state are still the numpy sampler's."""
    monkeypatch.setattr(discrete, "_SQUARE_SAFE", 3)
    for sigma, n in ((1, 40), (5, 300), (12, 2000)):
        _assert_same(_both(monkeypatch, np.random.PCG64, sigma, discrete_gaussian, sigma, n))


def _chi2(samples: np.ndarray, pmf) -> float:
    """Chi-square p-value of integer ``samples`` against ``pmf(ys)`` (cells with at least
    20 expected draws, the rest pooled)."""
    lim = int(np.abs(samples).max()) + 1
    ys = np.arange(-lim, lim + 1)
    expected = pmf(ys) * samples.size
    keep = expected >= 20
    observed = np.bincount(samples + lim, minlength=ys.size)[keep].astype(float)
    obs = np.append(observed, samples.size - observed.sum())
    exp = np.append(expected[keep], samples.size - expected[keep].sum())
    return float(stats.chisquare(obs, exp).pvalue)


def _laplace_pmf(t):
    q = math.exp(-1.0 / t)
    return lambda ys: (1 - q) / (1 + q) * q ** np.abs(ys)


def _gauss_pmf(sigma):
    allys = np.arange(-60 * sigma, 60 * sigma + 1)
    norm = np.exp(-(allys.astype(float) ** 2) / (2.0 * sigma * sigma)).sum()
    return lambda ys: np.exp(-(ys.astype(float) ** 2) / (2.0 * sigma * sigma)) / norm


@pytest.mark.parametrize("t", [1, 4])
def test_compiled_discrete_laplace_draws_fit_the_exact_pmf(monkeypatch, t):
    monkeypatch.setattr(discrete, "COMPILE_AFTER", 0)
    y = discrete_laplace(np.random.default_rng(100 + t), t, 300_000)
    assert _chi2(y, _laplace_pmf(t)) > 1e-3
    assert _chi2(y, _laplace_pmf(t * 1.05)) < 1e-6  # the test has power


@pytest.mark.parametrize("sigma", [1, 3])
def test_compiled_discrete_gaussian_draws_fit_the_exact_pmf(monkeypatch, sigma):
    monkeypatch.setattr(discrete, "COMPILE_AFTER", 0)
    y = discrete_gaussian(np.random.default_rng(200 + sigma), sigma, 300_000)
    assert _chi2(y, _gauss_pmf(sigma)) > 1e-3
    assert _chi2(y, _gauss_pmf(sigma * 1.05)) < 1e-6


class _StandIn:
    """A generator stand-in: its ``integers`` are numpy's (it wraps a Generator)."""

    def __init__(self, rng):
        self.rng, self.calls = rng, 0

    def integers(self, *args, **kwargs):
        self.calls += 1
        return self.rng.integers(*args, **kwargs)


def test_only_a_numpy_generator_takes_the_compiled_path(monkeypatch):
    monkeypatch.setattr(discrete, "COMPILE_AFTER", 0)
    stand_in = _StandIn(np.random.default_rng(1))
    assert discrete.compiled_source(stand_in, 10) is None
    assert discrete.compiled_source(OsRandom(), 10) is None
    y = discrete_laplace(stand_in, 9, 100)
    assert stand_in.calls > 0  # drawn through the stand-in, by the numpy path
    assert np.array_equal(y, discrete_laplace(np.random.default_rng(1), 9, 100))
    assert discrete.compiled_source(np.random.default_rng(1), 10) is not None
    monkeypatch.setattr(discrete, "COMPILE_AFTER", None)
    assert discrete.compiled_source(np.random.default_rng(1), 10) is None


def test_unusual_bernoulli_inputs_keep_the_numpy_path(monkeypatch):
    """Negative or unsigned numerators, Python integers and a ``den`` above MAX_SCALE are
    the numpy path's to handle (the kernel assumes int64 ``0 <= num`` and ``K den <
    2^63``): the compiled path is not even consulted, and ordinary inputs do take it."""
    consulted = []
    real = discrete.compiled_source

    def spy(rng, draws):
        consulted.append(draws)
        return real(rng, draws)

    monkeypatch.setattr(discrete, "compiled_source", spy)
    monkeypatch.setattr(discrete, "COMPILE_AFTER", 0)
    for num, den in ((np.array([2**70, 3], dtype=object), 7),
                     (np.array([5, 2**63 + 1], dtype=np.uint64), 9),
                     (np.array([-1, 2, 3]), 5),
                     (np.array([1, 2, 3]), discrete.MAX_SCALE * 2),
                     (np.array([], dtype=np.int64), 5)):
        bernoulli_exp_big(np.random.default_rng(0), num, den)
    assert consulted == []
    bernoulli_exp_big(np.random.default_rng(0), np.array([1, 2, 3]), discrete.MAX_SCALE)
    assert consulted == [3]


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=300).stdout.strip()


def test_a_process_loads_numba_only_after_compile_after_numpy_draws():
    """600 draws and a call count 600 + CALL_COST = 1112: the first two calls (0, then
    1112 below 2000) are the numpy path's, the third loads the compiled one."""
    code = """
import sys, numpy as np
from agents.privacy import discrete
assert discrete.CALL_COST == 512
discrete.COMPILE_AFTER = 2000
rng = np.random.default_rng(0)
discrete.discrete_laplace(rng, 5, 600)
a = 'numba' in sys.modules
discrete.discrete_laplace(rng, 5, 600)   # 1112 counted before: still numpy
b = 'numba' in sys.modules
y = discrete.discrete_laplace(rng, 5, 600)  # compiled
c = 'numba' in sys.modules
r = np.random.default_rng(0)
discrete.COMPILE_AFTER = None
ref = [discrete.discrete_laplace(r, 5, 600) for _ in range(3)][-1]
print(a, b, c, bool((y == ref).all()))
"""
    assert _run(code) == "False False True True"


def test_uncacheable_kernels_wait_for_more_numpy_work(monkeypatch):
    """Where the kernels cannot be cached on disk (each process compiles them), the numpy
    path serves UNCACHED_FACTOR times COMPILE_AFTER draws' worth of work first."""
    from agents.privacy import discrete_compiled

    monkeypatch.setattr(discrete, "_kernels", discrete_compiled)
    monkeypatch.setattr(discrete, "COMPILE_AFTER", 1000)
    monkeypatch.setattr(discrete, "_numpy_draws", 1000)  # past COMPILE_AFTER
    assert discrete.compiled_source(np.random.default_rng(0), 10) is not None
    monkeypatch.setattr(discrete_compiled, "CACHED", False)
    served = 0
    while discrete.compiled_source(np.random.default_rng(0), 488) is None:
        served += 1  # 488 + CALL_COST = 1000 a call
    assert served == discrete.UNCACHED_FACTOR - 1 == 15


def test_without_numba_the_numpy_path_serves_every_draw():
    code = """
import sys, numpy as np
sys.modules['numba'] = None  # import numba raises ImportError
from agents.privacy import discrete
discrete.COMPILE_AFTER = 0
y = discrete.discrete_gaussian(np.random.default_rng(4), 3, 50)
print(discrete._kernels, y.size)
"""
    assert _run(code) == "False 50"


CACHE_PROBE = """
import json, numpy as np
from agents.privacy import discrete, discrete_compiled as dc
discrete.COMPILE_AFTER = 0
discrete.discrete_laplace(np.random.default_rng(0), 3, 64)
used = [f for f in vars(dc).values() if hasattr(f, "stats") and f.signatures]
print(json.dumps({"kernels": len(used),
                  "hits": sum(sum(f.stats.cache_hits.values()) for f in used),
                  "misses": sum(sum(f.stats.cache_misses.values()) for f in used)}))
"""


def test_a_second_process_loads_the_sampler_kernels_from_the_disk_cache(tmp_path):
    """The kernels are cached on disk (``cache=True``): the first process compiles the
    discrete Laplace entry point and what it calls, the next one loads it and compiles
    nothing (the other entry points are cached by the same decorator)."""
    import json
    import os

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    runs = [json.loads(subprocess.run([sys.executable, "-c", CACHE_PROBE], env=env,
                                      check=True, capture_output=True, text=True,
                                      timeout=600).stdout) for _ in range(2)]
    first, second = runs
    # the entry point and the kernels it calls, compiled
    assert first["kernels"] >= 3 and first["misses"] >= 3 and first["hits"] == 0
    # the entry point loaded (its cached code holds what it calls): nothing compiled
    assert second == {"kernels": 1, "hits": 1, "misses": 0}


def test_vector_counters_on_the_compiled_path_are_the_scalar_counters_on_numpys(monkeypatch):
    """A vector Agarwal-Singh counter whose noise the compiled samplers draw releases, for
    each game, what that game's scalar counter releases with the numpy samplers (exact
    discrete Laplace; its extra draws summed over refills: T = 600, blocks of 256 rows)."""
    from agents.privacy import make_counter
    from agents.vector.counters import VectorAgarwalSingh

    z = np.random.default_rng(9).uniform(-1.0, 1.0, size=(600, 2, 3))

    def counter(seed):
        return make_counter("agarwal-singh", 600, 3, epsilon=1.0, sensitivity=1.0,
                            noise="discrete-laplace", rng=np.random.default_rng(seed))

    monkeypatch.setattr(discrete, "COMPILE_AFTER", None)
    scalar = [[c.add(row) for row in z[:, b]] for b, c in enumerate([counter(1), counter(2)])]
    monkeypatch.setattr(discrete, "COMPILE_AFTER", 0)
    vector = VectorAgarwalSingh([counter(1), counter(2)])
    released = np.array([vector.add_batch(rows) for rows in z])
    assert np.array_equal(released, np.array(scalar).transpose(1, 0, 2))
