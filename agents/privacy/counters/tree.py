"""Counters built on the dyadic tree over ``[1, T]``: the binary tree, Agarwal-Singh's
identically distributed tree, and Honaker's variance-reduced tree."""

from __future__ import annotations

from numbers import Integral
from typing import TYPE_CHECKING

import numpy as np

from ..calibration import PrivacyGuarantee
from ..noise import DiscreteLaplaceNoise, NoiseStrategy
from .base import ContinualCounter

if TYPE_CHECKING:  # dp_accounting is imported where it is used (its import takes 0.8 s)
    from dp_accounting import dp_event

__all__ = ["AgarwalSinghCounter", "BinaryTreeCounter", "HonakerCounter", "popcount"]

#: ``a.max()`` and ``a.sum()``, as the ufunc reductions they call (the same values,
#: without the methods' wrappers), ``np.add`` and ``np.multiply``.
_max, _sum, _add, _mul = np.maximum.reduce, np.add.reduce, np.add, np.multiply


def _bits(t: int) -> list[int]:
    """Positions of the set bits of ``t`` (the dyadic decomposition of [1, t])."""
    return [j for j in range(t.bit_length()) if (t >> j) & 1]


def popcount(ts: int | np.ndarray) -> int | np.ndarray:
    """Number of set bits of ``ts`` (a non-negative integer, or elementwise for an
    integer array): the number of dyadic nodes that decompose ``[1, t]``."""
    if isinstance(ts, Integral):
        return int(ts).bit_count()
    arr = np.asarray(ts, dtype=np.int64)
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return np.bitwise_count(arr).astype(np.int64)
    return np.array([int(t).bit_count() for t in arr.ravel()], dtype=np.int64).reshape(arr.shape)


class _DyadicCounter(ContinualCounter):
    """Calibration shared by the counters built on the dyadic tree over [1, T].

    Level ``k`` holds the nodes ``((j-1) 2^k, j 2^k]`` with ``j 2^k <= T``
    (only complete nodes are ever noised), so levels ``0 .. floor(log2 T)``
    exist: ``levels = T.bit_length() = ceil(log2(T+1))``.  Input ``z_1`` lies in
    one node of every level (all have ``j = 1``), so one input changes exactly
    ``levels`` node sums, each by ``z_t - z'_t``:

    * Laplace: the node vector has l1 sensitivity ``levels * Delta_1``, so the
      per-node scale is ``b = levels * Delta_1 / epsilon``;
    * Gaussian: l2 sensitivity ``sqrt(levels) * Delta_2``, so the per-node
      ``sigma`` is the analytic-Gaussian noise for that sensitivity.

    The accountant event is ``levels``-fold self-composition of one node.
    """

    @property
    def levels(self) -> int:
        """Number of tree levels, ``T.bit_length() = floor(log2 T) + 1``."""
        return self.horizon.bit_length()

    def _calibrate(self, noise: NoiseStrategy) -> NoiseStrategy:
        return noise.calibrate(copies=self.levels)

    def _unit_event(self) -> dp_event.DpEvent:
        return self.noise_strategy.dp_event(copies=self.levels)

    def guarantee(self) -> PrivacyGuarantee:
        """The guarantee of the whole mechanism, checked against the budget.

        With exact discrete Laplace noise calibrated for the ``levels`` nodes (or with
        none) it is checked on the calibrated mechanism itself, in exact rational
        arithmetic: ``levels`` node sums of integer l1 sensitivity ``k1``, each noised
        with parameter ``t``, are pure ``levels k1 / t``-DP by basic composition
        (:meth:`~agents.privacy.noise.DiscreteLaplaceNoise.guarantee` without an event;
        the accountant states the same guarantee for :meth:`describe`). The learner's
        process then never imports ``dp_accounting`` (about 0.8 s of CPU). Other noise
        goes through the accountant.

        Raises:
            ValueError: if the mechanism exceeds ``(epsilon, delta)``.
        """
        strategy = self.noise_strategy
        if not strategy.private or (isinstance(strategy, DiscreteLaplaceNoise)
                                    and strategy.copies == self.levels):
            return strategy.guarantee(None, mechanism=repr(self))
        return super().guarantee()

    def _init_noise_state(self) -> None:
        #: noise of the stored left-child node at each level (valid where t has a 1-bit)
        self._slots = np.zeros((self.levels if self.noise_strategy.private else 0, self.dim),
                               dtype=np.int64 if self.grid is not None else np.float64)

    @property
    def slots(self) -> np.ndarray:
        """The noise of the stored left-child node of each level, ``(levels, dim)``
        (valid where ``t`` has a 1-bit; no rows without noise). The counter's own array:
        read it, do not write it."""
        return self._slots

    def _buffers(self) -> list[np.ndarray]:
        return [self._slots] + ([self._node_start] if hasattr(self, "_node_start") else [])


class BinaryTreeCounter(_DyadicCounter):
    """Binary-tree (binary mechanism) counter.

    Dwork, Naor, Pitassi, Rothblum (STOC 2010); Chan, Shi, Song (TISSEC 2011);
    Smith & Thakurta (NeurIPS 2013), App. A, Alg. 2.  At step ``t`` with lowest
    1-bit ``i`` the node ``alpha_i = sum_{s in (t - 2^i, t]} z_s`` is completed
    and receives one independent noise draw; nodes of lower levels are dropped.
    The release is ``sum_{j : bit j of t is 1} (alpha_j + n_j)`` -- exactly the
    ``popcount(t)`` nodes of the binary decomposition of ``[1, t]``, so
    ``Var(eta_t) = popcount(t) * Var(draw)``.  Only the ``levels`` current
    ``alpha``-noises are kept: memory ``O(dim log T)``, one draw per step.
    Calibration: see :class:`_DyadicCounter`.
    """

    name = "tree"

    def _tree_noise(self) -> np.ndarray:
        t = self._t
        lowest = (t & -t).bit_length() - 1
        self._slots[lowest] = self._draw()
        return self._slots[_bits(t)].sum(axis=0)

    def _next_noise(self) -> np.ndarray:
        return self._tree_noise()

    def _unit_variances(self, ts: np.ndarray) -> np.ndarray:
        return popcount(ts).astype(float)


class AgarwalSinghCounter(BinaryTreeCounter):
    """Tree counter with identically distributed noise (Agarwal & Singh, ICML 2017, Alg. 2).

    ``TreeBasedAgg`` releases the binary-tree sum of :class:`BinaryTreeCounter`
    (``PrivateSum`` of Jain et al. 2012, |S| = popcount(t) noisy nodes) plus
    ``r_t = R - popcount(t)`` fresh, data-independent draws from the same node
    distribution, so every released sum carries exactly ``R`` independent
    draws: ``eta_t ~ sum_{i <= R} n_i`` for all ``t`` (their Lemma 3.3 / Thm.
    A.1, "Distribution").  ``R = ceil(log2 T)`` as in the paper, raised to
    ``floor(log2(T+1))`` (the largest popcount up to T) when that is larger,
    which happens only for ``T = 1``.

    Privacy: the extra draws do not depend on the data, so the releases are
    post-processing of the tree's noisy nodes and the calibration is the
    tree's (:class:`_DyadicCounter`).  The paper's own calibration
    (``lambda >= ||Y||_1 log T / epsilon``) counts ``log T`` levels where a
    tree over T leaves has ``floor(log2 T) + 1``; we use the real count.
    """

    name = "agarwal-singh"

    @property
    def draws(self) -> int:
        """``R = max(ceil(log2 T), floor(log2(T + 1)))`` noise draws per release."""
        return max((self.horizon - 1).bit_length(), (self.horizon + 1).bit_length() - 1)

    def _init_noise_state(self) -> None:
        super()._init_noise_state()
        self._draws = self.draws
        #: exact noise: the int64 sum of the slots at the set bits of ``t`` (after the
        #: last planned release while a plan runs, as :attr:`_slots` and the block's
        #: ``used``: see :meth:`_plan_releases`)
        self._tree_sum = np.zeros(self.dim, dtype=np.int64)
        #: the largest ``|value|`` of every exact noise row drawn so far
        self._row_bound = 0
        #: the planned releases: row ``t - _plan_from`` of ``_plan`` is the exact noise
        #: of release ``t`` (float64 where the rows drawn bound it below 2^52, else int64)
        self._plan = np.zeros((0, self.dim), dtype=np.int64)
        self._plan_from, self._planned, self._plan_float = 1, 0, False
        #: the plan's new slots (one a release) and the slots before it (:meth:`_slots_at`)
        self._plan_new, self._plan_slots = self._plan, self._slots

    @property
    def slots(self) -> np.ndarray:
        """The noise of the stored left-child node of each level, ``(levels, dim)``
        (valid where ``t`` has a 1-bit). The counter's own array (read it, do not write
        it), or a new one while a plan runs."""
        if self._t < self._plan_from + self._planned - 1:
            return self._slots_at(self._t)
        return self._slots

    def _next_noise(self) -> np.ndarray:
        if self.grid is not None:
            return self._next_exact_noise()
        eta = self._tree_noise()
        extra = self.draws - popcount(self._t)
        if extra:
            for _ in range(extra):  # floats: added one after the other, as drawn
                eta += self._draw()
        return eta

    def _next_exact_noise(self) -> np.ndarray:
        """The exact noise of release ``t`` (a new int64 array, grid units): the same rows
        of the noise blocks, in the same order, as :meth:`BinaryTreeCounter._tree_noise`
        and ``_draw_sum`` take them (the new slot, then the ``R - popcount(t)`` extra
        rows), planned with the releases around it (:meth:`_plan_releases`) or, for a
        release whose rows run into a new block, summed on its own
        (:meth:`_crossing_noise`)."""
        t = self._t
        i = t - self._plan_from
        if i >= self._planned:
            if not self._plan_releases(t):
                return self._crossing_noise(t)
            i = 0
        return self._plan[i].astype(np.int64)

    def _bound_rows(self, rows: np.ndarray) -> None:
        """Counts the block ``rows`` in :attr:`_row_bound`."""
        if rows.size:
            self._row_bound = max(self._row_bound, int(_max(np.abs(rows), axis=None)))

    def _release_exact(self) -> np.ndarray:
        """``(S_t + eta_t) * g``, as :meth:`ContinualCounter._release_exact`; the range
        check of the noisy sum is skipped where it cannot fail: ``|S_t| < 2^52`` (the
        input check) and ``|eta_t| <= R max|row| < 2^52`` (every row drawn so far
        bounded) make ``|S_t + eta_t| < 2^53``. A planned release there is summed in
        float64 (exact: integers below 2^53)."""
        i = self._t - self._plan_from
        if i < self._planned and self._plan_float:
            total = self._prefix_f + self._plan[i]
            return _mul(total, self._grid_array, out=total)
        total = self._next_exact_noise()
        total += self._prefix
        if self._draws * self._row_bound >= 2**52 and _max(np.abs(total)) >= 2**53:
            raise ValueError("noisy integer sum reached 2^53: not exactly representable")
        return total * self.grid

    def _plan_releases(self, t: int) -> bool:
        """Plans release ``t`` and the following ones whose rows all lie in the current
        noise block: the exact noise of each, computed at once from the block (the same
        rows, in the same order, as :meth:`_crossing_noise` takes them one release after
        the other: the new slot, then the ``R - popcount(t)`` extra rows; int64 sums wrap
        alike in any order, so the result is the same integers). The slots, the tree sum
        and the block's ``used`` are set to their values after the last planned release.

        The tree sum as intervals: the new row of release ``u`` is the slot of level
        ``j = lowest(u)``, and it is in the tree sum of exactly the releases ``u .. u +
        2^j - 1`` (those whose bits from ``j`` up are ``u``'s). A slot written before the
        plan is in it from the plan's first release on exactly when its level is a set
        bit of ``p = t & (t - 1)``, until ``(t >> j << j) + 2^j``. Each row is added where
        its interval starts and subtracted where it ends, and a running sum gives every
        release's tree sum.

        Returns:
            Whether release ``t`` was planned (``False``: its rows are not all in the
            block; nothing changed).
        """
        buf = self.exact_noise
        rows, at = buf.rows, buf.used
        if at + 1 + self._draws - t.bit_count() > len(rows):
            return False
        # a release takes about R / 2 + 1 rows: plan at most twice the releases that fit
        # on average (those past the last that fits are dropped; a plan that ends before
        # the block is used up is followed by another)
        last = min(self.horizon, t + 2 * (len(rows) - at) // (self._draws // 2 + 1))
        ts = np.arange(t, last + 1, dtype=np.int64)
        need = 1 + self._draws - popcount(ts)  # rows per release
        ends = at + np.cumsum(need)
        m = int(np.searchsorted(ends, len(rows), side="right"))  # >= 1: release t fits
        ts, need, ends = ts[:m], need[:m], ends[:m]
        news = ends - need  # the row of each release's new slot
        # each release's new row, then the sum of its extra rows: segments of the block
        # (a zero row after them; a release without extra rows reads its segment as 0)
        block = np.concatenate([rows[at:ends[-1]], np.zeros((1, self.dim), np.int64)])
        cuts = np.empty(2 * m, dtype=np.int64)
        cuts[0::2], cuts[1::2] = news - at, news + 1 - at
        sums = _add.reduceat(block, cuts, axis=0)
        new, noise = sums[0::2], sums[1::2]
        noise[need == 1] = 0
        # the tree sums: every slot's interval, added at its start, taken off at its end
        p = t & (t - 1)
        before = [j for j in range(p.bit_length()) if p >> j & 1]
        steps = np.zeros((m + 1, self.dim), dtype=np.int64)
        steps[:m] = new
        steps[0] += _sum(self._slots[before], axis=0)
        stops = np.concatenate([np.minimum(ts - t + (ts & -ts), m), np.array(
            [min((t >> j << j) + (1 << j) - t, m) for j in before], dtype=np.int64)])
        _add.at(steps, stops, -np.concatenate([new, self._slots[before]]))
        tree = np.cumsum(steps[:m], axis=0)
        noise += tree
        self._plan_new, self._plan_slots = new, self._slots
        self._plan_from, self._planned = t, m
        self._plan_float = self._draws * self._row_bound < 2**52  # then |noise| < 2^52
        self._plan = noise.astype(np.float64) if self._plan_float else noise
        self._slots = self._slots_at(t + m - 1)
        self._tree_sum = tree[-1].copy()
        buf.used = int(ends[-1])
        return True

    def _slots_at(self, t: int) -> np.ndarray:
        """The slots after release ``t`` of the current plan (a new array): level ``j``
        holds the new row of the last release ``u <= t`` with ``lowest(u) = j``."""
        first = self._plan_from
        out = self._plan_slots.copy()
        for j in range(self.levels):
            if t >= 1 << j:
                u = ((t - (1 << j)) >> (j + 1) << (j + 1)) + (1 << j)
                if u >= first:
                    out[j] = self._plan_new[u - first]
        return out

    def _crossing_noise(self, t: int) -> np.ndarray:
        """The exact noise of release ``t`` whose rows run into a new block (a new int64
        array): the new slot, then the ``R - popcount(t)`` extra rows, drawn as
        :meth:`BinaryTreeCounter._tree_noise` and ``_draw_sum`` draw them, the tree sum
        updated by the levels that change."""
        lowest = (t & -t).bit_length() - 1
        extra = self._draws - t.bit_count()
        new = self._draw()
        eta = self._draw_sum(extra) if extra else np.zeros(self.dim, dtype=np.int64)
        self._bound_rows(self.exact_noise.rows)  # the only place a block is drawn
        tree = self._tree_sum
        if lowest:  # the levels below ``lowest`` leave the decomposition of [1, t]
            tree -= _sum(self._slots[:lowest], axis=0)
        self._slots[lowest] = new
        tree += new
        eta += tree
        return eta

    def _unit_variances(self, ts: np.ndarray) -> np.ndarray:
        return np.full(ts.shape, float(self.draws))


class HonakerCounter(_DyadicCounter):
    """Online variance-reduced tree counter (Honaker 2015, bottom-up pass).

    Honaker, "Efficient use of differentially private binary trees" (TPDP
    2015); the online form is TF Privacy's ``EfficientTreeAggregator``.  Every
    complete node ``v`` (left AND right children) gets one noisy sum
    ``y_v = S_v + n_v``.  Its estimate combines ``y_v`` with the sum of its
    children's estimates by inverse-variance weights::

        hat_v = w_k y_v + (1 - w_k)(hat_left + hat_right),
        v_0 = 1,   v_k = 1 / (1 + 1 / (2 v_{k-1})) = 2^k / (2^{k+1} - 1),
        w_k = v_k                      (in units of Var(draw))

    (the estimates of disjoint subtrees are independent and unbiased, so this
    is the minimum-variance unbiased combination; ``v_k -> 1/2``).  The
    release is the sum of the estimates of the decomposition nodes of
    ``[1, t]``: ``Var(eta_t) = Var(draw) * sum_{j: bit j of t} v_j``.  The
    top-down half of Honaker's estimator needs future nodes and is not online.

    Privacy: each input lies in ``levels`` complete nodes (one per level), so
    the calibration is the tree's (:class:`_DyadicCounter`); estimates are
    post-processing.  Cost: ``i + 1`` draws at a step with lowest 1-bit ``i``
    (amortised 2), memory ``O(dim log T)``.
    """

    name = "honaker"

    def _init_noise_state(self) -> None:
        super()._init_noise_state()
        v = [1.0]
        for _ in range(1, self.levels):
            v.append(1.0 / (1.0 + 1.0 / (2.0 * v[-1])))
        #: unit variance of a level-k node estimate (= weight of the node's own sum)
        self.node_variances = np.array(v)
        if self.grid is not None:  # estimates are floats built from integer noisy nodes
            self._slots = np.zeros(self._slots.shape)
            #: integer prefix at the last multiple of 2^k, per level k
            self._node_start = np.zeros(self._slots.shape, dtype=np.int64)

    def _release_exact(self) -> np.ndarray:
        """Post-processing of exact integer noisy node sums ``y_v = S_v + n_v``:
        ``hat_v = w_k y_v + (1 - w_k)(hat_left + hat_right)`` in float64, in grid units,
        then ``* g``."""
        t = self._t
        lowest = (t & -t).bit_length() - 1
        est = None
        for k in range(lowest + 1):
            node = self._prefix - self._node_start[k] + self._draw()  # exact int64
            self._node_start[k] = self._prefix
            if k == 0:
                est = node.astype(np.float64)
            else:
                w = self.node_variances[k]
                est = w * node + (1.0 - w) * (self._slots[k - 1] + est)
        self._slots[lowest] = est
        return self._slots[_bits(t)].sum(axis=0) * self.grid

    def _next_noise(self) -> np.ndarray:
        t = self._t
        lowest = (t & -t).bit_length() - 1
        est = self._draw()  # leaf: its own noisy value
        for k in range(1, lowest + 1):
            w = self.node_variances[k]
            children = self._slots[k - 1] + est  # stored left sibling + right child
            est = w * self._draw() + (1.0 - w) * children
        self._slots[lowest] = est
        return self._slots[_bits(t)].sum(axis=0)

    def _unit_variances(self, ts: np.ndarray) -> np.ndarray:
        out = np.zeros(ts.shape)
        for j, vj in enumerate(self.node_variances):
            out += ((ts >> j) & 1) * vj
        return out
