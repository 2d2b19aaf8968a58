r"""The exact samplers of :mod:`agents.privacy.discrete`, compiled (numba, ``nopython``).

Each kernel is the compiled twin of one function of :mod:`~agents.privacy.discrete`
and draws THE SAME integers from the generator, in the same order: a numpy
``Generator``'s bounded integers ``integers(0, high)`` (int64) are, one value after the
other, Lemire's rejection on the bit generator's 32-bit words when ``high - 1 <
2^32`` (``next_uint32``) and on its 64-bit words above (``next_uint64``), and nothing
at all when ``high = 1`` -- whatever the size of the call. The kernels call numba's
port of those same functions on the generator's own bit generator (numba passes its C
function pointers and state), so the words consumed, the values and the generator's
state afterwards (its buffered half-word included) are numpy's; the samplers' rounds
(every still-active candidate drawn once per round, in index order) are kept, so the
kernels return the numpy samplers' arrays bit for bit (``tests/privacy/
test_discrete_compiled.py`` compares them, values and generator state). What changes is
the cost: no numpy call, no temporary array per round.

This module imports numba; :mod:`agents.privacy.discrete` imports it on first use only
(``import agents`` stays light) and keeps its numpy path where numba is missing.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.extending import intrinsic

__all__ = ["CACHED", "bernoulli_exp_big", "discrete_gaussian", "discrete_laplace"]

#: ``2^32 - 1``: a ``high - 1`` above it draws 64-bit words.
_U32 = np.uint64(0xFFFFFFFF)
_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
_S32 = np.uint64(32)


#: Whether every kernel is cached on disk (``False`` where numba has no writable place
#: for its cache: each process then compiles them, about 6 s of CPU).
CACHED = True


def _jit(function):
    """``numba.njit`` with its machine code cached on disk where numba can write it."""
    global CACHED
    try:
        return njit(cache=True, nogil=True)(function)
    except RuntimeError:  # numba: "cannot cache function ...: no locator available"
        CACHED = False
        return njit(cache=False, nogil=True)(function)


def _word_call(bits):
    """An intrinsic ``call(fn, state)``: the bit generator's C function at address
    ``fn`` (``next_uint32`` / ``next_uint64`` of its ``ctypes`` interface) called on
    its state at address ``state``; returns the ``bits``-bit word."""
    word = types.uint32 if bits == 32 else types.uint64

    @intrinsic
    def call(typingctx, fn, state):
        def codegen(context, builder, signature, args):
            fnty = ir.FunctionType(context.get_value_type(word),
                                   (context.get_value_type(types.uintp),))
            return builder.call(builder.inttoptr(args[0], fnty.as_pointer()), (args[1],))

        return word(types.uintp, types.uintp), codegen

    return call


_next32 = _word_call(32)
_next64 = _word_call(64)


@_jit
def _uniform(src, high):
    """One ``Generator.integers(0, high)`` (int64 ``high >= 1``) as numpy draws it,
    from ``src = (state, next_uint32, next_uint64)`` addresses: nothing for ``high =
    1``; Lemire's rejection on 32-bit words for ``high - 1 < 2^32 - 1``, one word for
    ``high = 2^32``, and on 64-bit words above (numpy's
    ``random_bounded_uint64_fill`` / ``buffered_bounded_lemire_uint32`` /
    ``bounded_lemire_uint64``)."""
    state, fn32, fn64 = src
    rng = np.uint64(high - 1)
    if rng == 0:
        return np.int64(0)
    if rng <= _U32:
        if rng == _U32:
            return np.int64(_next32(fn32, state))
        excl = rng + np.uint64(1)
        m = np.uint64(_next32(fn32, state)) * excl
        leftover = m & _U32
        if leftover < excl:
            threshold = np.uint64((_U32 - rng) % excl)
            while leftover < threshold:
                m = np.uint64(_next32(fn32, state)) * excl
                leftover = m & _U32
        return np.int64(m >> _S32)
    excl = rng + np.uint64(1)
    x = _next64(fn64, state)
    leftover = x * excl  # the low 64 bits of the 128-bit product
    if leftover < excl:
        threshold = np.uint64((_ONES - rng) % excl)
        while leftover < threshold:
            x = _next64(fn64, state)
            leftover = x * excl
    return np.int64(_mul_high(x, excl))


@_jit
def _mul_high(x, y):
    """The high 64 bits of the 128-bit product of two uint64."""
    x0, x1 = x & _U32, x >> _S32
    y0, y1 = y & _U32, y >> _S32
    t = x1 * y0 + ((x0 * y0) >> _S32)
    w1 = (t & _U32) + x0 * y1
    return x1 * y1 + (t >> _S32) + (w1 >> _S32)


@_jit
def _bernoulli_exp_rounds(src, num, den, idx, count, out, work):
    """CKS Algorithm 1 on ``num[idx[:count]]`` with one ``den``, round by round as
    :func:`agents.privacy.discrete.bernoulli_exp`: ``out[idx[j]]`` set for each.
    ``work`` is scratch of at least ``count``."""
    for j in range(count):
        work[j] = idx[j]
    m = count
    k = 1
    while m:
        if k > 64:
            raise OverflowError("bernoulli_exp: more than 64 steps")
        high = den * k
        odd = k % 2 == 1
        kept = 0
        for j in range(m):  # branch-free: the outcomes are coin flips
            i = work[j]
            go = _uniform(src, high) < num[i]  # A ~ Bernoulli(gamma / K): go on
            out[i] = odd  # final unless it goes on (then a later round writes it)
            work[kept] = i
            kept += go
        m = kept
        k += 1


@_jit
def _exp_minus_one_rounds(src, idx, count, out, work):
    """``Bernoulli(exp(-1))`` for ``idx[:count]`` (Algorithm 1 with ``num = den = 1``),
    round by round as ``bernoulli_exp(rng, ones, 1)``: ``out[idx[j]]`` set for each.
    Its first round draws nothing (``integers(0, 1)`` is 0, below 1: every run goes on)."""
    for j in range(count):
        work[j] = idx[j]
    m = count
    k = 2
    while m:
        if k > 64:
            raise OverflowError("bernoulli_exp: more than 64 steps")
        odd = k % 2 == 1
        kept = 0
        for j in range(m):
            i = work[j]
            go = _uniform(src, k) < 1
            out[i] = odd
            work[kept] = i
            kept += go
        m = kept
        k += 1


@_jit
def _laplace_candidates(src, t, m):
    """:func:`agents.privacy.discrete._laplace_candidates`: the accepted outcomes of
    ``m`` runs of CKS Algorithm 2 (``s = 1``), the same draws."""
    u = np.empty(m, dtype=np.int64)
    for i in range(m):
        u[i] = _uniform(src, t)
    ok = np.empty(m, dtype=np.bool_)
    idx = np.arange(m)
    work = np.empty(m, dtype=np.int64)
    _bernoulli_exp_rounds(src, u, t, idx, m, ok, work)
    nu = 0
    for i in range(m):
        u[nu] = u[i]
        nu += ok[i]
    # V ~ Geometric: successes of Bernoulli(exp(-1)) before a failure, all runs at once
    v = np.zeros(nu, dtype=np.int64)
    going = np.arange(nu)
    a = np.empty(nu, dtype=np.bool_)
    ng = nu
    while ng:
        _exp_minus_one_rounds(src, going, ng, a, work)
        kept = 0
        for j in range(ng):
            i = going[j]
            step = a[i]
            going[kept] = i
            v[i] += step
            kept += step
        ng = kept
    out = np.empty(nu, dtype=np.int64)
    no = 0
    for i in range(nu):
        x = u[i] + t * v[i]
        neg = _uniform(src, 2)  # 1: the sign is minus
        out[no] = x - 2 * neg * x
        no += 1 - neg * (x == 0)  # (sign -, 0) rejected
    return out[:no]


@_jit
def discrete_laplace(src, t, n):
    """:func:`agents.privacy.discrete.discrete_laplace` (``1 <= t <= MAX_SCALE``, checked
    by the caller): ``n`` exact draws, the same ones from the same generator state."""
    out = np.empty(n, dtype=np.int64)
    have = 0
    while have < n:
        y = _laplace_candidates(src, t, 2 * (n - have) + 16)
        take = min(y.size, n - have)
        out[have:have + take] = y[:take]
        have += y.size
    return out


@_jit
def _bernoulli_exp_big(src, k, r, den, out, idx, work):
    """:func:`agents.privacy.discrete.bernoulli_exp_big` on int64 ``num = k den + r``
    (``out`` of ``k``'s size): Algorithm 1 on every ``r / den``, then the
    ``Bernoulli(exp(-1))`` rounds of the survivors with ``k > 0``."""
    n = k.size
    for i in range(n):
        idx[i] = i
    _bernoulli_exp_rounds(src, r, den, idx, n, out, work)
    left = k.copy()
    alive = 0
    for i in range(n):
        idx[alive] = i
        alive += out[i] & (left[i] > 0)
    ok = np.empty(n, dtype=np.bool_)
    while alive:
        _exp_minus_one_rounds(src, idx, alive, ok, work)
        kept = 0
        for j in range(alive):
            i = idx[j]
            good = ok[i]
            out[i] = good  # a failure ends the run at False
            left[i] -= good
            idx[kept] = i
            kept += good & (left[i] > 0)
        alive = kept


@_jit
def bernoulli_exp_big(src, num, den):
    """:func:`agents.privacy.discrete.bernoulli_exp_big` for an int64 array ``num >= 0``
    and one ``den``: the same draws; a boolean array of ``num``'s size."""
    n = num.size
    k = num // den
    r = num - k * den
    out = np.empty(n, dtype=np.bool_)
    _bernoulli_exp_big(src, k, r, den, out, np.empty(n, dtype=np.int64),
                       np.empty(n, dtype=np.int64))
    return out


@_jit
def discrete_gaussian(src, sigma, n, safe):
    """:func:`agents.privacy.discrete.discrete_gaussian` (``1 <= sigma <=
    MAX_GAUSS_SIGMA``, checked by the caller): the same draws from the same generator
    state. Returns ``(draws, pending)``: when a batch holds a candidate with ``||Y| -
    sigma| >= safe`` (the numpy sampler's ``2^31``, below which the square is exact in
    int64: probability below ``e^-64`` a draw) the kernel stops BEFORE that
    batch's acceptance step and returns the draws so far with the batch's candidates
    as ``pending``, for the caller to finish exactly in Python integers; ``pending`` is
    empty otherwise."""
    den = 2 * sigma * sigma
    out = np.empty(n + 1, dtype=np.int64)  # one spare: the branch-free copy below
    have = 0
    while have < n:
        m = (23 * (n - have)) // 10 + 32
        y = _laplace_candidates(src, sigma, m)
        c = y.size
        k = np.empty(c, dtype=np.int64)
        r = np.empty(c, dtype=np.int64)
        for i in range(c):
            d = abs(y[i]) - sigma
            if abs(d) >= safe:
                return out[:have], y
            q = d * d
            k[i] = q // den
            r[i] = q - k[i] * den
        keep = np.empty(c, dtype=np.bool_)
        _bernoulli_exp_big(src, k, r, den, keep, np.empty(c, dtype=np.int64),
                           np.empty(c, dtype=np.int64))
        for i in range(c):
            out[have] = y[i]
            have += keep[i] & (have < n)
    return out[:n], np.empty(0, dtype=np.int64)
