r"""The compiled loop of the long-horizon path (numba, ``nopython`` mode).

Every function here is the compiled twin of one Python function of the reference path,
written so that it does the same floating-point operations in the same order (named in
each docstring); the random streams are numpy ``Generator`` objects passed in, which
numba draws from with numpy's own algorithms (PCG64 words, ``random``,
``standard_normal``, ``integers``), so the same generator state gives the same numbers.

One game is one call of :func:`play_game`: the env (the planted-vertex adversary's
two-point draws ``theta_t = low + width (U < p_high)``), the learner and the O(dim)
regret ledger (the learner's and trivial play's cumulative loss, the cumulative
parameter, the hindsight minimum by the linear oracle at the end) in one loop.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Learner codes of :func:`play_game`.
GARBER_KRETZU = 0
PRIVATE_PROJECTION_FREE = 1

#: Counter noise codes: the exact sums (not private) and the exact discrete Laplace noise.
NOISE_NONE = 0
NOISE_DISCRETE_LAPLACE = 1


# --------------------------------------------------------------- the exact sampler
@njit(cache=False)
def uniform_ints(gen, high, m):
    """``gen.integers(0, high, m)`` (one compiled instance for every call site)."""
    return gen.integers(np.int64(0), np.int64(high), np.int64(m))


@njit(cache=False)
def bernoulli_exp(gen, num, den):
    """Exact ``Bernoulli(exp(-num / den))`` with one scalar ``den``: the scalar-``den``
    path of :func:`agents.privacy.discrete.bernoulli_exp` (CKS Algorithm 1), drawing
    the same integers in the same calls (numpy's bounded integers depend on the call
    sizes, so the calls are kept whole)."""
    n = num.size
    out = np.zeros(n, dtype=np.bool_)
    active = np.arange(n)
    num_active = num.copy()
    m = n
    k = 1
    while m:
        if k > 64:
            raise OverflowError("bernoulli_exp: more than 64 steps")
        a = uniform_ints(gen, den * k, m)
        kept = 0
        for i in range(m):
            if a[i] < num_active[i]:  # A ~ Bernoulli(gamma / K) succeeded: go on
                active[kept] = active[i]
                num_active[kept] = num_active[i]
                kept += 1
            else:
                out[active[i]] = k % 2 == 1
        m = kept
        k += 1
    return out


@njit(cache=False)
def laplace_candidates(gen, t, m):
    """The accepted outcomes of ``m`` runs of CKS Algorithm 2 (``s = 1``), as
    :func:`agents.privacy.discrete._laplace_candidates` (the same calls)."""
    u0 = uniform_ints(gen, t, m)
    ok = bernoulli_exp(gen, u0, t)
    u = np.empty(m, dtype=np.int64)
    nu = 0
    for i in range(m):
        if ok[i]:
            u[nu] = u0[i]
            nu += 1
    v = np.zeros(nu, dtype=np.int64)
    going = np.arange(nu)
    ng = nu
    while ng:  # V ~ Geometric: successes of Bernoulli(exp(-1)) before a failure
        a = bernoulli_exp(gen, np.ones(ng, dtype=np.int64), 1)
        kept = 0
        for i in range(ng):
            if a[i]:
                going[kept] = going[i]
                v[going[i]] += 1
                kept += 1
        ng = kept
    neg = uniform_ints(gen, 2, nu)
    out = np.empty(nu, dtype=np.int64)
    no = 0
    for i in range(nu):
        x = u[i] + t * v[i]
        if neg[i] == 1:
            if x != 0:  # (sign -, 0) rejected
                out[no] = -x
                no += 1
        else:
            out[no] = x
            no += 1
    return out[:no]


@njit(cache=False)
def discrete_laplace(gen, t, n):
    """``n`` exact i.i.d. draws ``P(y) ~ exp(-|y|/t)``, as
    :func:`agents.privacy.discrete.discrete_laplace` (the same draws from the same
    generator state)."""
    out = np.empty(n, dtype=np.int64)
    have = 0
    while have < n:
        y = laplace_candidates(gen, t, 2 * (n - have) + 16)
        take = min(y.size, n - have)
        out[have:have + take] = y[:take]
        have += y.size
    return out


# --------------------------------------------------------------- geometry
@njit(cache=False)
def dot(a, b):
    """``np.dot(a, b)`` of two float64 vectors: numba calls the BLAS ``ddot`` (through
    scipy), as numpy does; with the same BLAS kernel the bits are numpy's (a loop summing
    left to right is not: BLAS kernels fuse and reorder)."""
    return np.dot(a, b)


@njit(cache=False)
def matvec(basis, s, identity):
    """``basis @ s`` (BLAS ``dgemv``, as numpy); ``s`` itself when ``basis`` is the
    identity (the same bits: every other product is a zero)."""
    if identity:
        return s.copy()
    return np.dot(basis, s)


@njit(cache=False)
def partition_lmo(c, block_of, capacities):
    """The partition (and uniform) matroid's linear oracle, as
    :meth:`dp_online_envs.domains.matroid.PartitionMatroid.linear_minimizer`: in each
    block, the ``capacity`` smallest costs in stable order, kept where negative."""
    n = c.size
    x = np.zeros(n)
    for b in range(capacities.size):
        cap = capacities[b]
        if cap == 0:
            continue
        idx = np.empty(n, dtype=np.int64)
        m = 0
        for i in range(n):  # insertion sort of the block's elements: stable
            if block_of[i] != b:
                continue
            j = m
            while j > 0 and c[idx[j - 1]] > c[i]:
                idx[j] = idx[j - 1]
                j -= 1
            idx[j] = i
            m += 1
        for j in range(min(cap, m)):
            if c[idx[j]] < 0.0:
                x[idx[j]] = 1.0
    return x


@njit(cache=False)
def fw_step(x, target, block_of, capacities):
    """One Frank-Wolfe step on ``||x - target||^2 / 2``, as
    :func:`agents.bandit.smoothing.fw_projection_step`. Returns ``(new x, gap)``."""
    grad = x - target
    v = partition_lmo(grad, block_of, capacities)
    d = v - x
    gap = -dot(grad, d)
    dd = dot(d, d)
    if gap <= 0.0 or dd <= 0.0:
        return x, max(gap, 0.0)
    gamma = min(1.0, gap / dd)
    return x + gamma * d, gap


@njit(cache=False)
def sphere_direction(gen, k):
    """A uniform point of the unit sphere of ``R^k``, as
    :func:`agents.bandit.smoothing.sphere_direction`."""
    while True:
        s = gen.standard_normal(k)
        nrm = np.sqrt(dot(s, s))
        if nrm > 1e-12:
            return s / nrm


# --------------------------------------------------------------- one game
@njit(cache=False, nogil=True)
def play_game(learner, horizon, adv_gen, low, width, p_high, trivial_point,
              block_of, capacities, dir_gen, center, basis, bound, batch, eta, zeta,
              alpha, tolerance, max_fw, noise_kind, noise_gen, noise_t, grid, levels,
              noise_block, record):
    """One game of ``horizon`` rounds: the learner, the env and the ledger in one loop.

    Args:
        learner: :data:`GARBER_KRETZU` or :data:`PRIVATE_PROJECTION_FREE`.
        adv_gen, low, width, p_high: The adversary's generator (after its reset) and its
            two-point law.
        trivial_point: The point trivial play stands at (the domain's center).
        block_of, capacities: The partition matroid (one block: uniform).
        dir_gen: The learner's direction generator; ``center, basis``: the inner-ball
            center and the hull basis; ``bound``: ``B`` (feedback clipped to ``[-B, B]``).
        batch, eta, zeta, alpha: The learner's parameters.
        tolerance, max_fw: Garber-Kretzu's Frank-Wolfe tolerance and step cap.
        noise_kind, noise_gen, noise_t, grid, levels, noise_block: The counter's
            noise (:data:`NOISE_NONE` or :data:`NOISE_DISCRETE_LAPLACE` with integer
            scale ``noise_t`` on the grid ``grid``), its generator, the tree's levels and
            the rows drawn per sampler call.
        record: Number of first actions to return (0: none).

    Returns:
        ``(learner_loss, trivial_loss, theta_sum, actions, outside, lmo_calls,
        fw_cap_hits)``; ``outside`` counts played points outside the polytope by more
        than 1e-9 (the Python env would project them).
    """
    dim = low.size
    k = basis.shape[1]
    identity = basis.shape[0] == k and np.array_equal(basis, np.eye(k))
    y = center.copy()                 # the point played (perturbed) this batch
    x_fw = center.copy()              # private-projection-free's Frank-Wolfe iterate
    target = center.copy()
    shadow = center.copy()            # garber-kretzu's unprojected point
    batch_sum = np.zeros(k)
    in_batch = 0
    theta_sum = np.zeros(dim)
    learner_loss = 0.0
    trivial_loss = 0.0
    actions = np.zeros((record, dim))
    outside = 0
    lmo_calls = 0
    cap_hits = 0
    # the tree counter
    prefix_f = np.zeros(k)
    prefix_i = np.zeros(k, dtype=np.int64)
    slots = np.zeros((levels, k), dtype=np.int64)
    noise_rows = np.zeros((0, k), dtype=np.int64)
    noise_used = 0
    counter_t = 0
    total_cap = 0
    for b in range(capacities.size):
        total_cap += capacities[b]
    step = eta * (1.0 - alpha)
    coef_scale = k / zeta
    for t in range(1, horizon + 1):
        # ---- act
        s = sphere_direction(dir_gen, k)
        u = matvec(basis, s, identity)
        x = (1.0 - alpha) * y + alpha * center + zeta * u
        if t <= record:
            actions[t - 1] = x
        xs = 0.0
        bad = False
        for i in range(dim):
            xs += x[i]
            if x[i] < -1e-9 or x[i] > 1.0 + 1e-9:
                bad = True
        if bad or xs > total_cap + 1e-9:
            outside += 1
        # ---- env: the adversary's draw, the losses, the ledger
        draw = adv_gen.random(dim)
        theta = low + width * (draw < p_high)
        loss = dot(theta, x)
        learner_loss += loss
        trivial_loss += dot(theta, trivial_point)
        theta_sum += theta
        # ---- update
        f = min(max(loss, -bound), bound)
        batch_sum += (coef_scale * f) * s
        in_batch += 1
        end = in_batch == batch or t == horizon
        if learner == PRIVATE_PROJECTION_FREE:
            x_fw, _ = fw_step(x_fw, target, block_of, capacities)
            lmo_calls += 1
            if end:
                counter_t += 1
                if noise_kind == NOISE_NONE:
                    prefix_f += batch_sum
                    noisy = prefix_f.copy()
                else:
                    zi = np.rint(batch_sum / grid)
                    pf = prefix_i + zi
                    for i in range(k):
                        if not abs(pf[i]) < 2.0**52:
                            raise ValueError("input too large for the exact integer grid")
                    prefix_i = pf.astype(np.int64)
                    if noise_used == noise_rows.shape[0]:
                        noise_rows = discrete_laplace(
                            noise_gen, noise_t, noise_block * k).reshape(noise_block, k)
                        noise_used = 0
                    lowest = 0
                    while not (counter_t >> lowest) & 1:
                        lowest += 1
                    slots[lowest] = noise_rows[noise_used]
                    noise_used += 1
                    tot = prefix_i.copy()
                    for j in range(levels):
                        if (counter_t >> j) & 1:
                            tot += slots[j]
                    for i in range(k):
                        if abs(tot[i]) >= 2**53:
                            raise ValueError("noisy integer sum reached 2^53")
                    noisy = tot * grid
                batch_sum = np.zeros(k)
                in_batch = 0
                y = x_fw.copy()
                target = center - step * matvec(basis, noisy, identity)
        elif end:
            g = matvec(basis, batch_sum, identity)
            batch_sum = np.zeros(k)
            in_batch = 0
            y_step = shadow - step * g
            # approximate projection (agents.bandit.garber_kretzu.approximate_projection)
            xp = y
            yp = y_step
            calls = 0
            while True:
                diff = xp - yp
                if dot(diff, diff) <= 3.0 * tolerance:
                    break
                if calls >= max_fw:
                    cap_hits += 1
                    break
                x_new, gap = fw_step(xp, yp, block_of, capacities)
                calls += 1
                if gap <= tolerance:
                    yp = xp.copy()
                    break
                xp = x_new
            lmo_calls += calls
            y = xp
            shadow = yp
    return learner_loss, trivial_loss, theta_sum, actions, outside, lmo_calls, cap_hits
