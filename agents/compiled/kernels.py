r"""The compiled loop of the long-horizon path (numba, ``nopython`` mode).

Every function here is the compiled twin of one Python function of the reference path,
written so that it does the same floating-point operations in the same order (named in
each docstring); the random streams are numpy ``Generator`` objects passed in, which
numba draws from with numpy's own algorithms (PCG64 words, ``random``,
``standard_normal``, ``integers``), so the same generator state gives the same numbers.

One game is one call of :func:`play_game` on a matroid, s-t path, submodular base or
Birkhoff polytope (their linear oracles compiled): the env (the planted-vertex adversary's
two-point draws ``theta_t = low + width (U < p_high)``), the learner and the O(dim)
regret ledger (the learner's and trivial play's cumulative loss, the cumulative
parameter, the hindsight minimum by the linear oracle at the end) in one loop. The
counter's exact noise comes from the package's one compiled exact sampler,
:mod:`agents.privacy.discrete_compiled` (numba caches :func:`play_game` with the sampler
in it and checks only this file for changes: after an edit of that module, delete
``agents/compiled/__pycache__/kernels.*.nbi`` and ``.nbc``; the bit-identity tests of
``tests/agents/test_compiled.py`` fail on a stale cache).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.privacy.discrete_compiled import discrete_laplace


def compiled(**options):
    """``numba.njit`` with its machine code cached on disk (``cache=True``), so that a
    second process loads the kernels instead of compiling them again (about 30 s of
    CPU); numba keys the cache by the source file and the target CPU. Where numba finds
    no writable place for the cache (the package's ``__pycache__``, ``NUMBA_CACHE_DIR``
    or the user's cache directory: a read-only install, a sandbox), every process
    compiles its own."""

    def decorate(function):
        try:
            return njit(cache=True, **options)(function)
        except RuntimeError:  # numba: "cannot cache function ...: no locator available"
            return njit(cache=False, **options)(function)

    return decorate

#: Learner codes of :func:`play_game`.
GARBER_KRETZU = 0
PRIVATE_PROJECTION_FREE = 1

#: Counter noise codes: the exact sums (not private) and the exact discrete Laplace noise.
NOISE_NONE = 0
NOISE_DISCRETE_LAPLACE = 1


# --------------------------------------------------------------- the exact sampler
# The counter's noise is drawn by the one compiled exact sampler of the package,
# :func:`agents.privacy.discrete_compiled.discrete_laplace` (the numpy sampler's draws,
# from the counter's generator given by the addresses of its bit generator).


# --------------------------------------------------------------- geometry
@compiled()
def dot(a, b):
    """``np.dot(a, b)`` of two float64 vectors: numba calls the BLAS ``ddot`` (through
    scipy), as numpy does; with the same BLAS kernel the bits are numpy's (a loop summing
    left to right is not: BLAS kernels fuse and reorder)."""
    return np.dot(a, b)


@compiled()
def matvec(basis, s, identity):
    """``basis @ s`` (BLAS ``dgemv``, as numpy); ``s`` itself when ``basis`` is the
    identity (the same bits: every other product is a zero)."""
    if identity:
        return s.copy()
    return np.dot(basis, s)


#: Polytope codes of :func:`play_game` and the layout of its ``polytope`` tuple
#: ``(sizes, i1, i2, i3, i4, i5, f1)`` (int64 arrays but ``f1``; unused ones empty):
#:
#: * :data:`MATROID` (partition or uniform): ``sizes = [total capacity]``, ``i1`` the
#:   block of each element, ``i2`` the blocks' capacities.
#: * :data:`FLOW` (s-t paths of a DAG): ``sizes = [n_nodes, source, sink]``, ``i1, i2``
#:   the edges' tails and heads, ``i3`` the nodes with a useful incoming edge in
#:   topological order, ``i4, i5`` every node's useful incoming edges in increasing index
#:   (``i5[i4[v]:i4[v + 1]]``), ``f1`` 1.0 on useful edges, 0.0 on the others.
#: * :data:`SUBMODULAR_BASE` (cardinality-based ``f(S) = g(|S|)``): ``sizes = [n]``,
#:   ``f1 = g(0), ..., g(n)``.
#: * :data:`BIRKHOFF`: ``sizes = [n]``.
MATROID = 0
FLOW = 1
SUBMODULAR_BASE = 2
BIRKHOFF = 3

#: How far outside the polytope a played point may be before it is counted outside
#: (the envs' ``contains`` tolerance).
OUTSIDE_TOLERANCE = 1e-9


@compiled()
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


@compiled()
def flow_lmo(c, sizes, tails, dp_nodes, in_ptr, in_edges):
    """The s-t path polytope's linear oracle, as
    :meth:`dp_online_envs.domains.flow.FlowPolytope.linear_minimizer`: ``dist(v) = min
    over useful edges (u, v) of dist(u) + c_e`` (the same sums; a minimum is exact, so
    the topological order gives the level schedule's values), then the path traced back
    from the sink taking at each node the first incoming edge in index attaining
    ``dist(v)``."""
    n_nodes, source, sink = sizes[0], sizes[1], sizes[2]
    dist = np.full(n_nodes, np.inf)
    dist[source] = 0.0
    for v in dp_nodes:
        best = np.inf
        for p in range(in_ptr[v], in_ptr[v + 1]):
            e = in_edges[p]
            val = dist[tails[e]] + c[e]
            if val < best:
                best = val
        dist[v] = best
    x = np.zeros(c.size)
    node = sink
    while node != source:
        target = dist[node]
        chosen = in_edges[in_ptr[node]]
        for p in range(in_ptr[node], in_ptr[node + 1]):
            e = in_edges[p]
            if dist[tails[e]] + c[e] == target:
                chosen = e
                break
        x[chosen] = 1.0
        node = tails[chosen]
    return x


@compiled()
def greedy_lmo(c, card):
    """The cardinality-based submodular base polytope's linear oracle, as
    :meth:`dp_online_envs.domains.base_polytope.SubmodularBasePolytope.linear_minimizer`
    (Edmonds' greedy): the elements in increasing cost, ties by index (a stable sort),
    the ``j``-th of them getting ``g(j + 1) - g(j)``."""
    n = c.size
    order = np.empty(n, dtype=np.int64)
    for i in range(n):  # insertion sort: stable
        j = i
        while j > 0 and c[order[j - 1]] > c[i]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i
    x = np.empty(n)
    for j in range(n):
        x[order[j]] = card[j + 1] - card[j]
    return x


@compiled()
def assignment_lmo(c, n):
    """The Birkhoff polytope's linear oracle, as
    :meth:`dp_online_envs.domains.birkhoff.Birkhoff.linear_minimizer`: the permutation
    matrix of ``scipy.optimize.linear_sum_assignment(c.reshape(n, n))``, computed by the
    same shortest augmenting path method (Crouse 2016, as scipy's
    ``rectangular_lsap``, on the costs as given: older scipy releases shifted them by their
    minimum first) with the same arithmetic, scan order and tie-breaks, so the same
    permutation, ties included."""
    cost = c
    u = np.zeros(n)
    v = np.zeros(n)
    short = np.empty(n)
    path = np.full(n, -1, dtype=np.int64)
    col4row = np.full(n, -1, dtype=np.int64)
    row4col = np.full(n, -1, dtype=np.int64)
    seen_row = np.zeros(n, dtype=np.bool_)
    seen_col = np.zeros(n, dtype=np.bool_)
    remaining = np.empty(n, dtype=np.int64)
    for cur in range(n):
        # the shortest augmenting path from row cur
        for it in range(n):
            remaining[it] = n - it - 1
        n_left = n
        seen_row[:] = False
        seen_col[:] = False
        short[:] = np.inf
        min_val = 0.0
        i = cur
        sink = -1
        while sink == -1:
            index = -1
            lowest = np.inf
            seen_row[i] = True
            for it in range(n_left):
                j = remaining[it]
                r = min_val + cost[i * n + j] - u[i] - v[j]
                if r < short[j]:
                    path[j] = i
                    short[j] = r
                if short[j] < lowest or (short[j] == lowest and row4col[j] == -1):
                    lowest = short[j]
                    index = it
            min_val = lowest
            if index < 0 or min_val == np.inf:
                raise ValueError("assignment: infeasible cost matrix")
            j = remaining[index]
            if row4col[j] == -1:
                sink = j
            else:
                i = row4col[j]
            seen_col[j] = True
            n_left -= 1
            remaining[index] = remaining[n_left]
        # the dual variables
        u[cur] += min_val
        for i in range(n):
            if seen_row[i] and i != cur:
                u[i] += min_val - short[col4row[i]]
        for j in range(n):
            if seen_col[j]:
                v[j] -= min_val - short[j]
        # augment
        j = sink
        while True:
            i = path[j]
            row4col[j] = i
            j, col4row[i] = col4row[i], j
            if i == cur:
                break
    x = np.zeros(n * n)
    for i in range(n):
        x[i * n + col4row[i]] = 1.0
    return x


@compiled()
def lmo(kind, c, polytope):
    """The linear oracle of the polytope ``(kind, polytope)`` (see :data:`MATROID`)."""
    sizes, i1, i2, i3, i4, i5, f1 = polytope
    if kind == MATROID:
        return partition_lmo(c, i1, i2)
    if kind == FLOW:
        return flow_lmo(c, sizes, i1, i3, i4, i5)
    if kind == SUBMODULAR_BASE:
        return greedy_lmo(c, f1)
    return assignment_lmo(c, sizes[0])


@compiled()
def is_outside(kind, x, polytope):
    """Whether ``x`` is outside the polytope by more than :data:`OUTSIDE_TOLERANCE`
    (the conditions of the domain's ``contains``; the matroid's: ``0 <= x <= 1`` and
    ``sum x <= `` the total capacity)."""
    tol = OUTSIDE_TOLERANCE
    sizes, i1, i2, i3, i4, i5, f1 = polytope
    dim = x.size
    if kind == MATROID:
        xs = 0.0
        for i in range(dim):
            xs += x[i]
            if x[i] < -tol or x[i] > 1.0 + tol:
                return True
        return xs > sizes[0] + tol
    if kind == FLOW:
        net = np.zeros(sizes[0])
        for e in range(dim):
            if x[e] < -tol or (f1[e] == 0.0 and x[e] > tol):
                return True
            net[i1[e]] += x[e]
            net[i2[e]] -= x[e]
        net[sizes[1]] -= 1.0
        net[sizes[2]] += 1.0
        for v in range(sizes[0]):
            if abs(net[v]) > tol:
                return True
        return False
    if kind == SUBMODULAR_BASE:
        n = sizes[0]
        desc = -np.sort(-x)
        prefix = 0.0
        for j in range(n - 1):
            prefix += desc[j]
            if prefix > f1[j + 1] + tol:
                return True
        return abs(prefix + desc[n - 1] - f1[n]) > tol
    n = sizes[0]
    for i in range(dim):
        if x[i] < -tol:
            return True
    for i in range(n):
        rs = 0.0
        cs = 0.0
        for j in range(n):
            rs += x[i * n + j]
            cs += x[j * n + i]
        if abs(rs - 1.0) > tol or abs(cs - 1.0) > tol:
            return True
    return False


@compiled()
def fw_step(x, target, kind, polytope):
    """One Frank-Wolfe step on ``||x - target||^2 / 2``, as
    :func:`agents.bandit.smoothing.fw_projection_step`. Returns ``(new x, gap)``."""
    grad = x - target
    v = lmo(kind, grad, polytope)
    d = v - x
    gap = -dot(grad, d)
    dd = dot(d, d)
    if gap <= 0.0 or dd <= 0.0:
        return x, max(gap, 0.0)
    gamma = min(1.0, gap / dd)
    return x + gamma * d, gap


@compiled()
def sphere_direction(gen, k):
    """A uniform point of the unit sphere of ``R^k``, as
    :func:`agents.bandit.smoothing.sphere_direction`."""
    while True:
        s = gen.standard_normal(k)
        nrm = np.sqrt(dot(s, s))
        if nrm > 1e-12:
            return s / nrm


# --------------------------------------------------------------- one game
@compiled(nogil=True)
def play_game(learner, horizon, adv_gen, low, width, p_high, trivial_point,
              kind, polytope, dir_gen, center, basis, bound, batch, eta, zeta,
              alpha, tolerance, max_fw, noise_kind, noise_src, noise_t, grid, levels,
              noise_block, record, baseline):
    """One game of ``horizon`` rounds: the learner, the env and the ledger in one loop.

    Args:
        learner: :data:`GARBER_KRETZU` or :data:`PRIVATE_PROJECTION_FREE`.
        adv_gen, low, width, p_high: The adversary's generator (after its reset) and its
            two-point law.
        trivial_point: The point trivial play stands at (the domain's center).
        kind, polytope: The polytope (:data:`MATROID`, :data:`FLOW`,
            :data:`SUBMODULAR_BASE` or :data:`BIRKHOFF`) and its arrays.
        dir_gen: The learner's direction generator; ``center, basis``: the inner-ball
            center and the hull basis; ``bound``: ``B`` (feedback clipped to ``[-B, B]``).
        batch, eta, zeta, alpha: The learner's parameters.
        tolerance, max_fw: Garber-Kretzu's Frank-Wolfe tolerance and step cap.
        noise_kind, noise_src, noise_t, grid, levels, noise_block: The counter's
            noise (:data:`NOISE_NONE` or :data:`NOISE_DISCRETE_LAPLACE` with integer
            scale ``noise_t`` on the grid ``grid``), its generator (as the compiled
            sampler takes it: :func:`agents.privacy.discrete.word_source`), the tree's
            levels and the rows drawn per sampler call.
        record: Number of first actions to return (0: none).
        baseline: Scale ``f - b`` instead of ``f`` in the estimates, ``b`` the mean
            feedback of the blocks before (``garber-kretzu-tuned``'s baseline).

    Returns:
        ``(learner_loss, trivial_loss, theta_sum, actions, outside, lmo_calls,
        fw_cap_hits)``; ``outside`` counts played points outside the polytope by more
        than :data:`OUTSIDE_TOLERANCE` (the Python env would project them).
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
    step = eta * (1.0 - alpha)
    coef_scale = k / zeta
    feedback_sum = 0.0
    offset = 0.0
    for t in range(1, horizon + 1):
        # ---- act
        s = sphere_direction(dir_gen, k)
        u = matvec(basis, s, identity)
        x = (1.0 - alpha) * y + alpha * center + zeta * u
        if t <= record:
            actions[t - 1] = x
        if is_outside(kind, x, polytope):
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
        if baseline:
            feedback_sum += f
            f = f - offset
        batch_sum += (coef_scale * f) * s
        in_batch += 1
        end = in_batch == batch or t == horizon
        if learner == PRIVATE_PROJECTION_FREE:
            x_fw, _ = fw_step(x_fw, target, kind, polytope)
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
                            noise_src, noise_t, noise_block * k).reshape(noise_block, k)
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
            if baseline:  # the next block's b: the mean over every round so far
                offset = feedback_sum / t
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
                x_new, gap = fw_step(xp, yp, kind, polytope)
                calls += 1
                if gap <= tolerance:
                    yp = xp.copy()
                    break
                xp = x_new
            lmo_calls += calls
            y = xp
            shadow = yp
    return learner_loss, trivial_loss, theta_sum, actions, outside, lmo_calls, cap_hits
