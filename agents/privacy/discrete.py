r"""Exact samplers of the discrete Laplace distribution, in integer arithmetic.

Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy"
(NeurIPS 2020), Algorithms 1 and 2, vectorised with numpy. Every random choice is a
uniform integer ``rng.integers(0, n)`` (numpy's bounded generator is exactly uniform
given uniform 64-bit words: Lemire's rejection method), and every comparison is
between int64 integers, so the output distribution is EXACTLY the stated one -- no
floating point touches a sample. Many candidates are drawn at once and the rejected
ones dropped; the accepted candidates are i.i.d. with the target law.

* :func:`bernoulli_exp` -- ``Bernoulli(exp(-num/den))`` for ``0 <= num <= den``
  (Algorithm 1: ``K = 1``; while ``Bernoulli(gamma / K)`` succeeds, ``K += 1``;
  return ``K`` odd. ``P = sum_k (-gamma)^k / k! = exp(-gamma)``.)
* :func:`discrete_laplace` -- ``P(Y = y) = (1 - e^{-1/t}) / (1 + e^{-1/t}) *
  e^{-|y|/t}`` for an integer scale ``t >= 1`` (Algorithm 2 with ``s = 1``:
  ``U ~ Unif{0..t-1}`` kept with probability ``exp(-U/t)``, ``V ~ Geometric(1 -
  e^{-1})`` by repeated ``Bernoulli(exp(-1))``, ``X = U + t V``, a uniform sign, and
  ``(sign -, 0)`` rejected).
* :func:`bernoulli_exp_big` -- ``Bernoulli(exp(-num/den))`` for any ``num >= 0``
  (Algorithm 1's extension to ``gamma > 1``: ``floor(gamma)`` draws of
  ``Bernoulli(exp(-1))`` and one of ``Bernoulli(exp(-(gamma - floor(gamma))))``, all
  must succeed).
* :func:`discrete_gaussian` -- ``P(Y = y) proportional to exp(-y^2 / (2 sigma^2))``
  for an integer ``sigma >= 1`` (Algorithm 3 with the Laplace scale ``t = sigma``:
  ``Y`` from :func:`discrete_laplace` with scale ``t``, kept with probability
  ``exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)) = exp(-(|Y| - sigma)^2 / (2 sigma^2))``;
  the ratio of the two pmfs is proportional to that for any ``t > 0``, and ``t =
  sigma`` makes ``sigma^2 / t`` an integer, so ``num = (|Y| - sigma)^2`` and ``den =
  2 sigma^2`` are int64 while ``sigma <=`` :data:`MAX_GAUSS_SIGMA`).

Speed: where numba is installed (``.[compiled]``) the three samplers run compiled
(:mod:`agents.privacy.discrete_compiled`) on a ``numpy.random.Generator``, drawing the
SAME integers from it as the numpy code here -- same values, same generator state after
-- about ten times faster a draw and with no cost per call beyond a few microseconds.
Numba is imported only once a process has done :data:`COMPILE_AFTER` draws' worth of work
on the numpy path (or already holds numba): a short game does not pay its start-up. Which path
runs never changes a sample.

Random source: a ``numpy.random.Generator`` (PCG64 by default: fast, reproducible,
NOT a cryptographic generator), or :class:`OsRandom`, which draws every integer from
``os.urandom`` (the operating system's cryptographic generator) by rejection on masked
64-bit words -- also exact, about ten times slower (``secure=True`` of the noise
strategies; measured in ``docs/papers.md``).
"""

from __future__ import annotations

import ctypes
import os
import sys

import numpy as np

__all__ = ["CALL_COST", "COMPILE_AFTER", "MAX_GAUSS_SIGMA", "MAX_SCALE", "OsRandom",
           "UNCACHED_FACTOR", "bernoulli_exp", "bernoulli_exp_big", "compiled_source",
           "discrete_gaussian", "discrete_gaussian_variance", "discrete_laplace",
           "discrete_laplace_variance", "word_source"]

#: Largest integer scale ``t`` the int64 samplers accept (``t * K`` stays far below
#: ``2^63`` for the ``K <= 64`` steps Algorithm 1 can take with overwhelming
#: probability; a longer run raises instead of overflowing).
MAX_SCALE = 2**52

#: Largest integer ``sigma`` :func:`discrete_gaussian` accepts: ``den = 2 sigma^2 <=
#: 2^51`` stays below :data:`MAX_SCALE`.
MAX_GAUSS_SIGMA = 2**25


#: Work a process does on the numpy samplers before it loads the compiled ones, counted
#: in draws plus :data:`CALL_COST` per call (numba's import and the cached kernels cost
#: about 0.5 s of CPU; the numpy path spends about 0.3 s on 2^20 draws in calls of 4096,
#: 0.45 s in calls of 64); 0: from the first draw; ``None``: never. A process that has
#: imported numba already uses them at once.
COMPILE_AFTER: int | None = 2**20
#: What one call of a numpy sampler costs beyond its draws, in draws (about 200 us).
CALL_COST = 512
#: Where the kernels cannot be cached on disk (a read-only install, a sandbox: every
#: process compiles them, about 6 s of CPU), the numpy path serves this many times
#: :data:`COMPILE_AFTER` first.
UNCACHED_FACTOR = 16

_numpy_draws = 0
_kernels = None  # the compiled module once loaded; False where numba is missing
_words: dict[type, tuple[int, int]] = {}


def _compiled_module():
    """:mod:`agents.privacy.discrete_compiled`, or ``None`` where numba is missing."""
    global _kernels
    if _kernels is None:
        try:
            from . import discrete_compiled
        except ImportError:
            _kernels = False
        else:
            _kernels = discrete_compiled
    return _kernels or None


def compiled_source(rng, draws: int):
    """``(kernels, source, lock)`` for the compiled samplers when they are to serve a call of
    ``draws`` values on ``rng``, else ``None`` (and the numpy path counts the draws).

    ``source`` is ``(state, next_uint32, next_uint64)``: the addresses of ``rng``'s bit
    generator state and of its C word functions (numpy's ``BitGenerator.ctypes``); the
    kernels draw from them as numpy's ``Generator.integers`` does, holding ``lock`` (the
    bit generator's, as numpy's own draws). Only an instance of
    ``numpy.random.Generator`` qualifies (not :class:`OsRandom`, nor any stand-in).
    """
    global _numpy_draws
    if type(rng) is not np.random.Generator or COMPILE_AFTER is None:
        return None
    if _kernels is None and _numpy_draws < COMPILE_AFTER and "numba" not in sys.modules:
        _numpy_draws += int(draws) + CALL_COST
        return None
    kernels = _compiled_module()
    if kernels is None:
        return None
    if not kernels.CACHED and _numpy_draws < COMPILE_AFTER * UNCACHED_FACTOR:
        _numpy_draws += int(draws) + CALL_COST
        return None
    return kernels, word_source(rng), rng.bit_generator.lock


def word_source(rng: np.random.Generator) -> tuple[np.uint64, np.uint64, np.uint64]:
    """``(state, next_uint32, next_uint64)``: the addresses of ``rng``'s bit generator
    state and of its C word functions (numpy's ``BitGenerator.ctypes``), the source the
    compiled samplers draw from (valid while ``rng`` lives)."""
    bits = rng.bit_generator
    api = bits.ctypes
    words = _words.get(type(bits))
    if words is None:
        words = _words[type(bits)] = (ctypes.cast(api.next_uint32, ctypes.c_void_p).value,
                                      ctypes.cast(api.next_uint64, ctypes.c_void_p).value)
    return np.uint64(api.state_address), np.uint64(words[0]), np.uint64(words[1])


class OsRandom:
    """Uniform integers from the OS cryptographic generator (``os.urandom``).

    Only the method the samplers use, :meth:`integers`, with numpy's semantics for
    ``integers(0, high, size)``. Exact: a value is a 64-bit word masked to the bit
    length of ``high - 1``, redrawn until it is below ``high``.
    """

    def integers(self, low, high, size=None) -> np.ndarray:
        if low != 0:
            raise ValueError("OsRandom.integers supports low=0 only")
        high = np.asarray(high, dtype=np.int64)
        shape = np.broadcast_shapes(high.shape, () if size is None else
                                    ((size,) if np.ndim(size) == 0 else tuple(size)))
        high = np.broadcast_to(high, shape).ravel()
        if np.any(high < 1):
            raise ValueError("high must be >= 1")
        m = high - 1
        for s in (1, 2, 4, 8, 16, 32):  # smear the top bit: mask = 2^bitlen - 1
            m = m | (m >> s)
        mask = m.astype(np.uint64)
        out = np.empty(high.shape, dtype=np.int64)
        todo = np.arange(high.size)
        while todo.size:
            words = np.frombuffer(os.urandom(8 * todo.size), dtype=np.uint64)
            cand = (words & mask[todo]).astype(np.int64)
            ok = cand < high[todo]
            out[todo[ok]] = cand[ok]
            todo = todo[~ok]
        return out.reshape(shape)


def bernoulli_exp(rng, num, den) -> np.ndarray:
    """Exact ``Bernoulli(exp(-num / den))`` draws, elementwise (CKS Algorithm 1).

    Args:
        rng: A ``numpy.random.Generator`` or :class:`OsRandom`.
        num: Integer array (or scalar), ``0 <= num <= den``.
        den: Integer array (or scalar) broadcastable with ``num``, ``1 <= den <=``
            :data:`MAX_SCALE`.

    Returns:
        A boolean array of ``num``'s broadcast shape.

    Raises:
        OverflowError: If a run needs ``K * den >= 2^63`` (probability below
            ``1 / 64!``).
    """
    num, den = np.asarray(num, dtype=np.int64), np.asarray(den, dtype=np.int64)
    scalar = den.ndim == 0  # one bound for all: numpy draws the SAME integers ~8x faster
    if not scalar:
        num, den = np.broadcast_arrays(num, den)
        den = den.ravel()
    shape = num.shape
    num = num.ravel()
    out = np.empty(num.shape, dtype=bool)
    active, num_active = None, num  # None: every index (the first round)
    k = 1
    while num_active.size:
        if k > 64:
            raise OverflowError("bernoulli_exp: more than 64 steps")
        # A ~ Bernoulli(gamma / K): a uniform integer in [0, K den) below num
        high = int(den) * k if scalar else (den if active is None else den[active]) * k
        go = (rng.integers(0, high, size=num_active.size if scalar else None)
              < num_active).nonzero()[0]
        # every active run ends at this K unless it goes on (a later round rewrites it)
        if active is None:
            out.fill(k % 2 == 1)
            active = go
        else:
            out[active] = k % 2 == 1
            active = active[go]
        num_active = num_active[go]
        k += 1
    return out.reshape(shape)


def _bernoulli_exp_minus_one(rng, n: int) -> np.ndarray:
    """``bernoulli_exp(rng, ones(n), 1)``: ``n`` draws of ``Bernoulli(exp(-1))``, the
    same integers drawn (its first round draws none: ``integers(0, 1)`` is 0, below 1,
    and every run goes on), without the arrays of ones."""
    out = np.empty(n, dtype=bool)
    out.fill(False)  # K = 1 (even) if a run ended there; none does
    active = None
    m, k = n, 2
    while m:
        if k > 64:
            raise OverflowError("bernoulli_exp: more than 64 steps")
        go = (rng.integers(0, k, size=m) < 1).nonzero()[0]
        if active is None:
            out.fill(k % 2 == 1)
            active = go
        else:
            out[active] = k % 2 == 1
            active = active[go]
        m = active.size
        k += 1
    return out


def discrete_laplace(rng, t: int, n: int) -> np.ndarray:
    """``n`` i.i.d. exact draws with ``P(Y = y) proportional to exp(-|y| / t)``.

    CKS Algorithm 2 with ``s = 1`` (see the module docstring), in int64.

    Args:
        rng: A ``numpy.random.Generator`` or :class:`OsRandom`.
        t: The integer scale, ``1 <= t <=`` :data:`MAX_SCALE`.
        n: Number of draws, ``>= 0``.

    Returns:
        An int64 array of shape ``(n,)``.
    """
    t = int(t)
    if not 1 <= t <= MAX_SCALE:
        raise ValueError(f"discrete Laplace scale must be an integer in [1, 2^52], got {t}")
    fast = compiled_source(rng, n) if n > 0 else None
    if fast is not None:
        kernels, source, lock = fast
        with lock:  # as numpy's own draws
            return kernels.discrete_laplace(source, np.int64(t), np.int64(n))
    parts, have = [], 0
    while have < n:
        m = 2 * (n - have) + 16  # acceptance is about (1 - 1/e) * (1 - small) > 0.6
        y = _laplace_candidates(rng, t, m)
        parts.append(y)
        have += y.size
    return np.concatenate(parts)[:n] if parts else np.zeros(0, dtype=np.int64)


def _laplace_candidates(rng, t: int, m: int) -> np.ndarray:
    """The accepted outcomes of ``m`` runs of CKS Algorithm 2 (``s = 1``): i.i.d. exact
    discrete Laplace draws of scale ``t``, about ``0.63 m`` of them (a random number)."""
    u = rng.integers(0, t, size=m)
    u = u[bernoulli_exp(rng, u, t)]
    v = np.zeros(u.size, dtype=np.int64)
    going = None  # None: every index (the first step)
    m = u.size
    while m:  # V ~ Geometric: successes of Bernoulli(exp(-1)) before a failure
        a = _bernoulli_exp_minus_one(rng, m).nonzero()[0]
        going = a if going is None else going[a]
        v[going] += 1
        m = going.size
    x = u + t * v
    neg = rng.integers(0, 2, size=x.size) == 1
    keep = ~(neg & (x == 0))
    return np.where(neg, -x, x)[keep]


def discrete_laplace_variance(t: int) -> float:
    """``Var(Y) = 2 e^{-1/t} / (1 - e^{-1/t})^2`` of :func:`discrete_laplace`."""
    q = np.exp(-1.0 / t)
    return float(2.0 * q / (-np.expm1(-1.0 / t)) ** 2)


def bernoulli_exp_big(rng, num, den) -> np.ndarray:
    """Exact ``Bernoulli(exp(-num / den))`` for any ``num >= 0`` (CKS Algorithm 1).

    ``gamma = num / den = k + r / den`` with ``k = num // den``: the draw succeeds iff
    :func:`bernoulli_exp` ``(r, den)`` and ``k`` independent ``Bernoulli(exp(-1))`` all
    succeed (``exp(-gamma) = exp(-1)^k exp(-r / den)``). The ``k`` draws stop at the
    first failure, so the cost is ``O(1)`` expected whatever ``k``.

    Args:
        rng: A ``numpy.random.Generator`` or :class:`OsRandom`.
        num: Non-negative integer array (int64, or Python ints in an object array).
        den: Positive integer (scalar), ``<=`` :data:`MAX_SCALE`.

    Returns:
        A boolean array of ``num``'s shape.
    """
    num = np.asarray(num)
    den = int(den)
    if num.dtype.kind == "i" and num.size and 1 <= den <= MAX_SCALE and num.min() >= 0:
        fast = compiled_source(rng, num.size)
        if fast is not None:
            kernels, source, lock = fast
            flat = np.ascontiguousarray(num, dtype=np.int64).ravel()
            with lock:
                out = kernels.bernoulli_exp_big(source, flat, np.int64(den))
            return out.reshape(num.shape)
    if num.dtype == object:  # Python ints: exact whatever their size
        k = np.array([int(v) // den for v in num.ravel()], dtype=object).reshape(num.shape)
        r = np.array([int(v) % den for v in num.ravel()], dtype=np.int64).reshape(num.shape)
    else:
        k, r = np.divmod(num.astype(np.int64), den)
    out = bernoulli_exp(rng, r, den).ravel()
    left = k.ravel().copy()
    alive = np.flatnonzero(out & (left > 0))
    while alive.size:
        ok = _bernoulli_exp_minus_one(rng, alive.size)
        out[alive[~ok]] = False
        alive = alive[ok]
        left[alive] -= 1
        alive = alive[left[alive] > 0]
    return out.reshape(num.shape)


#: ``|Y| - sigma`` below this squares exactly in int64 (``(2^31)^2 = 2^62``).
_SQUARE_SAFE = 2**31


def discrete_gaussian(rng, sigma: int, n: int) -> np.ndarray:
    """``n`` i.i.d. exact draws with ``P(Y = y) proportional to exp(-y^2 / (2 sigma^2))``.

    CKS Algorithm 3 with ``t = sigma`` (module docstring), in integer arithmetic:
    candidates ``Y`` from CKS Algorithm 2 ``(t = sigma)`` are kept by
    :func:`bernoulli_exp_big` ``((|Y| - sigma)^2, 2 sigma^2)``. The acceptance rate is
    about 0.76 for every ``sigma``. Candidates with ``||Y| - sigma| >= 2^31`` (probability
    below ``e^-64`` per draw) take an exact Python-integer path. All accepted draws of a
    batch are kept in order and the first ``n`` returned (the draws are i.i.d.).

    Args:
        rng: A ``numpy.random.Generator`` or :class:`OsRandom`.
        sigma: The integer parameter, ``1 <= sigma <=`` :data:`MAX_GAUSS_SIGMA` (NOT
            the standard deviation: ``Var(Y) < sigma^2``, see
            :func:`discrete_gaussian_variance`).
        n: Number of draws, ``>= 0``.

    Returns:
        An int64 array of shape ``(n,)``.
    """
    if isinstance(sigma, bool) or not isinstance(sigma, (int, np.integer)) \
            or not 1 <= int(sigma) <= MAX_GAUSS_SIGMA:
        raise ValueError(f"discrete Gaussian sigma must be an integer in [1, 2^25], "
                         f"got sigma={sigma!r}")
    sigma, n = int(sigma), int(n)
    den = 2 * sigma * sigma
    parts, have = [], 0
    fast = compiled_source(rng, n) if n > 0 else None
    if fast is not None:
        kernels, source, lock = fast
        with lock:
            done, pending = kernels.discrete_gaussian(source, np.int64(sigma), np.int64(n),
                                                     np.int64(_SQUARE_SAFE))
        if not pending.size:
            return done
        # a candidate too far out for int64 squares: this batch's acceptance in Python
        # integers, as below (the kernel stopped before drawing for it)
        parts, have = [done], done.size
        parts.append(pending[_gaussian_accept(rng, pending, sigma, den)])
        have += parts[-1].size
    while have < n:
        # Algorithm 2 accepts about 1 - 1/e of its runs, Algorithm 3 about
        # sqrt(2 pi / e) / 2 = 0.76 of those: 2.2 runs per draw, with 5% to spare
        m = (23 * (n - have)) // 10 + 32
        y = _laplace_candidates(rng, sigma, m)
        parts.append(y[_gaussian_accept(rng, y, sigma, den)])
        have += parts[-1].size
    return np.concatenate(parts)[:n] if parts else np.zeros(0, dtype=np.int64)


def _gaussian_accept(rng, y: np.ndarray, sigma: int, den: int) -> np.ndarray:
    """CKS Algorithm 3's acceptance of the Laplace candidates ``y``: ``Bernoulli(exp(-(|y|
    - sigma)^2 / den))`` each, in int64 where ``||y| - sigma| < 2^31``, in Python
    integers (after those) elsewhere."""
    d = np.abs(y) - sigma
    safe = np.abs(d) < _SQUARE_SAFE
    keep = np.zeros(y.size, dtype=bool)
    keep[safe] = bernoulli_exp_big(rng, d[safe] * d[safe], den)
    if not safe.all():  # exact, in Python integers
        big = np.array([int(v) * int(v) for v in d[~safe]], dtype=object)
        keep[~safe] = bernoulli_exp_big(rng, big, den)
    return keep


def discrete_gaussian_variance(sigma: int) -> float:
    """``Var(Y)`` of :func:`discrete_gaussian`, from its pmf.

    ``sum_y y^2 e^{-y^2/(2 sigma^2)} / sum_y e^{-y^2/(2 sigma^2)}``, summed in float64
    over ``|y| <= 40 sigma`` (the rest weighs below ``e^-800``) for ``sigma <= 64``.
    Above, it is ``sigma^2`` in float64: by Poisson summation ``sigma^2 - Var(Y) <=
    4 pi^2 sigma^4 e^{-2 pi^2 sigma^2}`` (CKS Corollary 9), below ``1e-300 sigma^2``
    there.
    """
    sigma = int(sigma)
    if sigma > 64:
        return float(sigma) ** 2
    ys = np.arange(1, 40 * sigma + 1, dtype=np.float64)
    w = np.exp(-ys * ys / (2.0 * sigma * sigma))
    return float(2.0 * np.sum(ys * ys * w) / (1.0 + 2.0 * np.sum(w)))
