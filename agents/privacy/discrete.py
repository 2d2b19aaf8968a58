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

Random source: a ``numpy.random.Generator`` (PCG64 by default: fast, reproducible,
NOT a cryptographic generator), or :class:`OsRandom`, which draws every integer from
``os.urandom`` (the operating system's cryptographic generator) by rejection on masked
64-bit words -- also exact, about ten times slower (``secure=True`` of the noise
strategies; measured in ``docs/papers.md``).
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["MAX_SCALE", "OsRandom", "bernoulli_exp", "discrete_laplace",
           "discrete_laplace_variance"]

#: Largest integer scale ``t`` the int64 samplers accept (``t * K`` stays far below
#: ``2^63`` for the ``K <= 64`` steps Algorithm 1 can take with overwhelming
#: probability; a longer run raises instead of overflowing).
MAX_SCALE = 2**52


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
    num, den = np.broadcast_arrays(np.asarray(num, dtype=np.int64),
                                   np.asarray(den, dtype=np.int64))
    shape = num.shape
    num, den = num.ravel(), den.ravel()
    out = np.zeros(num.shape, dtype=bool)
    active = np.arange(num.size)
    k = 1
    while active.size:
        if k > 64:
            raise OverflowError("bernoulli_exp: more than 64 steps")
        # A ~ Bernoulli(gamma / K): a uniform integer in [0, K den) below num
        a = rng.integers(0, den[active] * k) < num[active]
        stopped = active[~a]
        out[stopped] = k % 2 == 1
        active = active[a]
        k += 1
    return out.reshape(shape)


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
    parts, have = [], 0
    while have < n:
        m = 2 * (n - have) + 16  # acceptance is about (1 - 1/e) * (1 - small) > 0.6
        u = rng.integers(0, t, size=m)
        u = u[bernoulli_exp(rng, u, t)]
        v = np.zeros(u.size, dtype=np.int64)
        going = np.arange(u.size)
        while going.size:  # V ~ Geometric: successes of Bernoulli(exp(-1)) before a failure
            a = bernoulli_exp(rng, np.ones(going.size, dtype=np.int64), 1)
            going = going[a]
            v[going] += 1
        x = u + t * v
        neg = rng.integers(0, 2, size=x.size) == 1
        keep = ~(neg & (x == 0))
        y = np.where(neg, -x, x)[keep]
        parts.append(y)
        have += y.size
    return np.concatenate(parts)[:n] if parts else np.zeros(0, dtype=np.int64)


def discrete_laplace_variance(t: int) -> float:
    """``Var(Y) = 2 e^{-1/t} / (1 - e^{-1/t})^2`` of :func:`discrete_laplace`."""
    q = np.exp(-1.0 / t)
    return float(2.0 * q / (-np.expm1(-1.0 / t)) ** 2)
