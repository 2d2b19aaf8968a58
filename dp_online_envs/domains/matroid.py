"""Matroid (independent-set) polytopes.

For a matroid ``M = (E, I)`` on ``E = {0, ..., n-1}`` with rank function r, the
independent-set polytope is

    P(M) = conv{1_I : I in I} = {x in R^n : x >= 0, x(S) <= r(S) for all S subset E}

(Edmonds 1970). Its linear oracle is the greedy algorithm: scan the elements by
increasing cost, keeping each element of negative cost that preserves independence.
"""

from __future__ import annotations

import itertools
import math
from abc import abstractmethod
from collections.abc import Callable, Sequence
from functools import cached_property

import numpy as np
from gymnasium import spaces

from dp_online_envs.domains.base import (
    MAX_VERTICES,
    AffineHull,
    check_norm_order,
    check_vector,
    finite_vector,
    subset_masks,
    subset_sums,
)
from dp_online_envs.domains.polytope import OraclePolytope
from dp_online_envs.domains.projection import (
    frank_wolfe_contains,
)
from dp_online_envs.validation import check_int


class MatroidPolytope(OraclePolytope):
    """The independent-set polytope of a matroid given by an independence oracle.

    Subclasses implement :meth:`is_independent` and may override the generic methods
    with closed forms. Generic behavior:

    * Linear oracle: the greedy algorithm (``O(n)`` independence queries).
    * ``rank(S)``: greedy within S.
    * ``contains``: ``0 <= x <= 1``, ``x = 0`` on loops and ``x(S) <= r(S)`` for all S,
      checked exactly by enumerating the ``2^n`` subsets when ``n <= table_limit``;
      otherwise decided by Frank-Wolfe (certified either way unless x lies within a
      hair of distance ``atol``; see
      :func:`~dp_online_envs.domains.projection.frank_wolfe_contains`).
    * Projection: Frank-Wolfe (Wolfe's min-norm-point variant) with the greedy oracle,
      to gap ``projection_tol``.
    * Diameter: ``sqrt(max |I xor J|)``. Since ``I \\ J`` and ``J \\ I`` are disjoint
      independent sets, ``max |I xor J|`` is the rank of the union matroid
      ``M v M``, ``min_A |E \\ A| + 2 r(A)`` (Nash-Williams/Edmonds): exact by
      enumeration when ``n <= table_limit``, else the upper bound
      ``sqrt(min(2 r(E), #non-loops))``.
    * Inner ball: with m non-loop elements, ``conv(0, e_i : i non-loop)`` lies in P and
      its inscribed ball has center ``t 1`` and radius ``t = 1 / (m + sqrt(m))``
      (``t`` from ``x_i >= t`` and ``(1 - m t)/sqrt(m) >= t``), relative to the hull
      ``span{e_i : i non-loop}``.
    * ``sup ||x||_1 = r(E)``, ``sup ||x||_2 = sqrt(r(E))``, ``sup ||x||_inf = 1``
      (0 when every element is a loop).

    Args:
        n: Number of elements, ``>= 1``.
    """

    name = "matroid"
    #: Largest n for which the rank table (``r(S)`` for all ``2^n`` subsets) is
    #: enumerated; it makes ``contains``, ``diameter`` and ``vertices`` exact.
    table_limit: int = 12

    def __init__(self, n: int) -> None:
        self.n = check_int("n", n, 1)
        self.dim = self.n

    @classmethod
    def from_oracle(
        cls, n: int, is_independent: Callable[[np.ndarray], bool]
    ) -> MatroidPolytope:
        """The polytope of the matroid on ``range(n)`` with the given independence oracle
        (called with a boolean mask of length n). The oracle is trusted to define a
        matroid; only ``is_independent(empty set)`` is checked.

        Raises:
            ValueError: If ``n < 1`` or the empty set is reported dependent.
        """
        return _OracleMatroid(n, is_independent)

    # ------------------------------------------------------------ the matroid
    @abstractmethod
    def is_independent(self, subset) -> bool:
        """Whether ``subset`` (a boolean mask of length n or a list of indices) is
        independent."""

    def _mask(self, subset) -> np.ndarray:
        """``subset`` as a boolean mask of length n (from a mask or an index list)."""
        a = np.asarray(subset)
        if a.dtype == bool:
            if a.shape != (self.n,):
                raise ValueError(f"subset mask has shape {a.shape}, expected ({self.n},)")
            return a
        if a.size == 0:
            return np.zeros(self.n, dtype=bool)
        if a.ndim != 1 or a.dtype.kind not in "iu":
            raise ValueError(f"subset {subset!r}: expected a boolean mask or a list of indices")
        if a.min() < 0 or a.max() >= self.n:
            raise ValueError(f"subset {subset!r} has indices outside [0, {self.n})")
        mask = np.zeros(self.n, dtype=bool)
        mask[a] = True
        return mask

    def rank(self, subset) -> int:
        """``r(S)``: the size of a largest independent subset of S (greedy)."""
        mask = self._mask(subset)
        chosen = np.zeros(self.n, dtype=bool)
        for i in np.flatnonzero(mask):
            chosen[i] = True
            if not self.is_independent(chosen):
                chosen[i] = False
        return int(chosen.sum())

    @cached_property
    def full_rank(self) -> int:
        """``r(E)``, the size of every basis."""
        return self.rank(np.ones(self.n, dtype=bool))

    @cached_property
    def loops(self) -> np.ndarray:
        """Boolean mask of the loops (elements i with ``{i}`` dependent)."""
        eye = np.eye(self.n, dtype=bool)
        return np.array([not self.is_independent(eye[i]) for i in range(self.n)])

    @cached_property
    def _rank_table(self) -> np.ndarray:
        """``r(S)`` for every bitmask S (n <= table_limit), from independence queries.

        Uses ``r(S) = |S|`` if S is independent, else ``max_{e in S} r(S - e)``.
        """
        size = 2**self.n
        masks = subset_masks(self.n)
        indep = np.zeros(size, dtype=bool)
        rank = np.zeros(size, dtype=np.int64)
        indep[0] = True
        for m in range(1, size):
            parent = m ^ (1 << (m.bit_length() - 1))
            if indep[parent] and self.is_independent(masks[m]):
                indep[m] = True
                rank[m] = masks[m].sum()
            else:
                rank[m] = max(rank[m ^ (1 << i)] for i in np.flatnonzero(masks[m]))
        return rank

    # ---------------------------------------------------------------- oracle
    def linear_minimizer(self, c: np.ndarray) -> np.ndarray:
        """Greedy: by increasing cost, add each negative-cost element that keeps
        independence."""
        c = check_vector(c, self.dim, "c")
        chosen = np.zeros(self.n, dtype=bool)
        for i in np.argsort(c, kind="stable"):
            if c[i] >= 0:
                break
            chosen[i] = True
            if not self.is_independent(chosen):
                chosen[i] = False
        return chosen.astype(np.float64)

    # --------------------------------------------------------------- geometry
    def contains(self, x: np.ndarray, atol: float = 1e-9) -> bool:
        """``x >= 0``, ``x = 0`` on loops and ``x(S) <= r(S)`` for all S, within ``atol``."""
        a = finite_vector(x, self.dim)
        if a is None:
            return False
        if a.min() < -atol or a.max() > 1.0 + atol or np.any(a[self.loops] > atol):
            return False
        return self._rank_inequalities_hold(a, atol)

    def _rank_inequalities_hold(self, x: np.ndarray, atol: float) -> bool:
        """``x(S) <= r(S) + atol`` for all S, given ``0 <= x <= 1`` and x = 0 on loops."""
        if self.n <= self.table_limit:
            return bool(np.all(subset_sums(x) <= self._rank_table + atol))
        return frank_wolfe_contains(self.linear_minimizer, x, atol)

    @cached_property
    def diameter(self) -> float:
        """``sqrt(max |I xor J|)``: exact if ``n <= table_limit``, else an upper bound."""
        if self.n <= self.table_limit:
            sizes = subset_masks(self.n).sum(axis=1)
            return math.sqrt(float(np.min(self.n - sizes + 2 * self._rank_table)))
        return math.sqrt(min(2 * self.full_rank, int((~self.loops).sum())))

    def _inner_center(self) -> tuple[np.ndarray, float]:
        """Center and radius of the generic inscribed ball of ``conv(0, e_i)``."""
        m = int((~self.loops).sum())
        if m == 0:
            return np.zeros(self.n), 0.0
        t = 1.0 / (m + math.sqrt(m))
        return np.where(self.loops, 0.0, t), t

    @cached_property
    def _inner(self) -> tuple[np.ndarray, float]:
        return self._inner_center()

    def inner_ball(self) -> tuple[np.ndarray, float]:
        center, radius = self._inner
        return center.copy(), radius

    @cached_property
    def affine_hull(self) -> AffineHull:
        """``span{e_i : i not a loop}`` (P contains 0 and those ``e_i``)."""
        return AffineHull(self._inner[0].copy(), np.eye(self.n)[:, ~self.loops])

    def norm_bound(self, p: float) -> float:
        q = check_norm_order(p)
        r = float(self.full_rank)
        if q == 1.0:
            return r
        if q == 2.0:
            return math.sqrt(r)
        return 1.0 if r > 0 else 0.0

    @cached_property
    def action_space(self) -> spaces.Box:
        return spaces.Box(0.0, 1.0, shape=(self.n,), dtype=np.float64)

    def vertices(self) -> np.ndarray | None:
        """All independent-set indicators (rows), for ``n <= table_limit``; else None."""
        if self.n > self.table_limit:
            return None
        masks = subset_masks(self.n)
        indep = self._rank_table == masks.sum(axis=1)
        return masks[indep].astype(np.float64)

    def is_basis(self, subset) -> bool:
        """Whether ``subset`` is a maximal independent set."""
        mask = self._mask(subset)
        return bool(mask.sum() == self.full_rank and self.is_independent(mask))


class _OracleMatroid(MatroidPolytope):
    """A matroid given only by an independence oracle (see :meth:`MatroidPolytope.from_oracle`)."""

    def __init__(self, n: int, oracle: Callable[[np.ndarray], bool]) -> None:
        super().__init__(n)
        if not callable(oracle):
            raise ValueError(f"is_independent={oracle!r}, expected a callable")
        self._oracle = oracle
        if not self.is_independent(np.zeros(self.n, dtype=bool)):
            raise ValueError("the empty set must be independent, the oracle says it is not")

    def is_independent(self, subset) -> bool:
        return bool(self._oracle(self._mask(subset).copy()))


class PartitionMatroid(MatroidPolytope):
    """Partition matroid: I is independent iff ``|I cap B_j| <= c_j`` for every block.

    ``P = {x : 0 <= x <= 1, x(B_j) <= c_j}``, a product of uniform-matroid polytopes.

    * Linear oracle: in each block, the ``c_j`` most negative costs (ties by index).
    * ``r(S) = sum_j min(|S cap B_j|, c_j)``; ``contains`` exact in closed form.
    * Diameter ``sqrt(sum_j min(2 c_j, |B_j|))`` (exact: blocks are independent).
    * Inner ball (exact Chebyshev ball): per block of size m with ``c >= 1``, center
      ``t_j 1`` with ``t_j = min(1/2, c/(m + sqrt(m)))``, the best radius over the
      block's diagonal, which by symmetry is the block's Chebyshev radius; the radius
      is ``min_j t_j`` (a ball in a product of polytopes is limited by its tightest
      factor). Blocks with ``c_j = 0`` consist of loops.

    Args:
        blocks: Lists of element indices that partition ``range(n)``.
        capacities: ``c_j >= 0`` per block (or one int for every block).

    Raises:
        ValueError: If the blocks do not partition ``range(n)`` for ``n >= 1``, or the
            capacities are not nonnegative integers matching the blocks.
    """

    name = "matroid-partition"

    def __init__(self, blocks: Sequence[Sequence[int]], capacities: Sequence[int] | int) -> None:
        blocks = [list(b) for b in blocks]
        if not blocks or not all(blocks):
            raise ValueError(f"blocks={blocks!r}, expected nonempty lists of element indices")
        flat = [e for b in blocks for e in b]
        for e in flat:
            check_int("block element", e, 0)
        n = len(flat)
        if sorted(int(e) for e in flat) != list(range(n)):
            raise ValueError(f"blocks={blocks!r} must partition range({n}): every index "
                             "exactly once")
        if isinstance(capacities, (int, np.integer)) and not isinstance(capacities, bool):
            capacities = [check_int("capacities", capacities, 0)] * len(blocks)
        capacities = list(capacities)
        if len(capacities) != len(blocks):
            raise ValueError(f"got {len(capacities)} capacities for {len(blocks)} blocks")
        caps = [check_int(f"capacities[{j}]", c, 0) for j, c in enumerate(capacities)]
        super().__init__(n)
        self.blocks = [np.array(sorted(int(e) for e in b), dtype=np.intp) for b in blocks]
        self.capacities = np.minimum(np.array(caps, dtype=np.int64),
                                     [len(b) for b in self.blocks])
        self._block_of = np.empty(n, dtype=np.intp)
        for j, b in enumerate(self.blocks):
            self._block_of[b] = j

    def is_independent(self, subset) -> bool:
        mask = self._mask(subset)
        counts = np.bincount(self._block_of[mask], minlength=len(self.blocks))
        return bool(np.all(counts <= self.capacities))

    def rank(self, subset) -> int:
        mask = self._mask(subset)
        counts = np.bincount(self._block_of[mask], minlength=len(self.blocks))
        return int(np.minimum(counts, self.capacities).sum())

    @cached_property
    def full_rank(self) -> int:
        return int(self.capacities.sum())

    @cached_property
    def loops(self) -> np.ndarray:
        return self.capacities[self._block_of] == 0

    def linear_minimizer(self, c: np.ndarray) -> np.ndarray:
        c = check_vector(c, self.dim, "c")
        x = np.zeros(self.n)
        for block, cap in zip(self.blocks, self.capacities):
            if cap == 0:
                continue
            cb = c[block]
            best = np.argsort(cb, kind="stable")[:cap]
            best = best[cb[best] < 0]
            x[block[best]] = 1.0
        return x

    def _rank_inequalities_hold(self, x: np.ndarray, atol: float) -> bool:
        sums = np.bincount(self._block_of, weights=x, minlength=len(self.blocks))
        return bool(np.all(sums <= self.capacities + atol))

    @cached_property
    def diameter(self) -> float:
        sizes = np.array([len(b) for b in self.blocks])
        return math.sqrt(float(np.minimum(2 * self.capacities, sizes).sum()))

    def _inner_center(self) -> tuple[np.ndarray, float]:
        center = np.zeros(self.n)
        radius = math.inf
        for block, cap in zip(self.blocks, self.capacities):
            if cap == 0:
                continue
            m = len(block)
            t = min(0.5, cap / (m + math.sqrt(m)))
            center[block] = t
            radius = min(radius, t)
        return center, (0.0 if radius == math.inf else radius)

    def vertices(self) -> np.ndarray | None:
        """All independent sets: a product over blocks of the subsets of size ``<= c_j``."""
        count = 1
        for block, cap in zip(self.blocks, self.capacities):
            count *= sum(math.comb(len(block), i) for i in range(int(cap) + 1))
            if count > MAX_VERTICES:
                return None
        choices = [
            [s for i in range(int(cap) + 1) for s in itertools.combinations(block, i)]
            for block, cap in zip(self.blocks, self.capacities)
        ]
        verts = np.zeros((count, self.n))
        for row, combo in enumerate(itertools.product(*choices)):
            for part in combo:
                verts[row, list(part)] = 1.0
        return verts

    def __repr__(self) -> str:
        return (f"PartitionMatroid(blocks={[b.tolist() for b in self.blocks]}, "
                f"capacities={self.capacities.tolist()})")


class UniformMatroid(PartitionMatroid):
    """Uniform matroid ``U(n, k)``: the sets of at most k elements.

    ``P = {x : 0 <= x <= 1, sum x <= k}``; a :class:`PartitionMatroid` with one block,
    so every quantity is in closed form: diameter ``sqrt(min(2k, n))``, Chebyshev ball
    ``t 1`` with radius ``t = min(1/2, k/(n + sqrt(n)))``.

    Args:
        n: Number of elements, ``>= 1``.
        k: Rank, ``1 <= k <= n``.

    Raises:
        ValueError: If ``n < 1`` or k is not in ``[1, n]``.
    """

    name = "matroid-uniform"

    def __init__(self, n: int, k: int) -> None:
        n = check_int("n", n, 1)
        k = check_int("k", k, 1)
        if k > n:
            raise ValueError(f"k={k} exceeds n={n}, expected 1 <= k <= n")
        super().__init__([list(range(n))], [k])
        self.k = k

    def __repr__(self) -> str:
        return f"UniformMatroid(n={self.n}, k={self.k})"


class GraphicMatroid(MatroidPolytope):
    """Graphic matroid of an undirected multigraph: elements are edges, independent
    sets are forests. P is the forest polytope

        P = {x >= 0 : x(E(U)) <= |U| - 1 for every nonempty node set U}

    (``E(U)`` = edges with both ends in U; self-loops are matroid loops).

    * Linear oracle: Kruskal on the negative-cost edges (union-find).
    * ``r(S) = n_nodes - #components(V, S)``.
    * ``contains``: exact. With at most ``node_enum_limit`` non-isolated nodes, by
      enumerating the node sets U; otherwise by the min-cut separation of
      Padberg-Wolsey: ``|U| - x(E(U)) = sum_{v in U} w_v + x(delta(U))/2`` with
      ``w_v = 1 - deg_x(v)/2 - x(loops at v)``, minimized over U containing a root r
      by an s-t min cut, once per root.
    * Diameter exact (rank-table enumeration) for at most ``table_limit`` = 16 edges,
      else the upper bound ``sqrt(min(2 r(E), #non-loop edges))``.
    * Inner ball: the generic ``1/(m + sqrt(m))`` of :class:`MatroidPolytope`.

    Args:
        n_nodes: Number of nodes, ``>= 1``.
        edges: Pairs ``(u, v)`` of node indices (parallel edges and self-loops allowed).

    Raises:
        ValueError: If there are no edges, or an endpoint is outside ``[0, n_nodes)``.
    """

    name = "matroid-graphic"
    table_limit = 16
    #: Largest number of non-isolated nodes for which ``contains`` enumerates node sets.
    node_enum_limit = 12

    def __init__(self, n_nodes: int, edges: Sequence[tuple[int, int]]) -> None:
        self.n_nodes = check_int("n_nodes", n_nodes, 1)
        edges = [tuple(e) for e in edges]
        if not edges:
            raise ValueError("edges is empty, expected at least one edge")
        for i, e in enumerate(edges):
            if len(e) != 2:
                raise ValueError(f"edge {e!r} is not a pair (u, v)")
            for node in e:
                check_int(f"edges[{i}] endpoint", node, 0, self.n_nodes - 1)
        super().__init__(len(edges))
        self.edges = np.array(edges, dtype=np.intp).reshape(-1, 2)

    # ------------------------------------------------------------ the matroid
    def _components(self, mask: np.ndarray) -> np.ndarray:
        """Union-find root of every node in the graph ``(V, {e : mask[e]})``."""
        forest = _UnionFind(self.n_nodes)
        for u, v in self.edges[mask].tolist():
            forest.union(u, v)
        return np.array([forest.find(a) for a in range(self.n_nodes)])

    def is_independent(self, subset) -> bool:
        mask = self._mask(subset)
        forest = _UnionFind(self.n_nodes)
        return all(forest.union(u, v) for u, v in self.edges[mask].tolist())

    def rank(self, subset) -> int:
        mask = self._mask(subset)
        return self.n_nodes - int(np.unique(self._components(mask)).size)

    @cached_property
    def loops(self) -> np.ndarray:
        return self.edges[:, 0] == self.edges[:, 1]

    @cached_property
    def full_rank(self) -> int:
        return self.rank(np.ones(self.n, dtype=bool))

    @cached_property
    def _rank_table(self) -> np.ndarray:
        """``r(S)`` for every edge bitmask S, by vectorized label propagation."""
        masks = subset_masks(self.n)
        labels = np.tile(np.arange(self.n_nodes), (len(masks), 1))
        for _ in range(self.n_nodes):
            changed = False
            for e, (u, v) in enumerate(self.edges.tolist()):
                rows = masks[:, e]
                low = np.minimum(labels[rows, u], labels[rows, v])
                changed |= bool(np.any(low != labels[rows, u]) or np.any(low != labels[rows, v]))
                labels[rows, u] = low
                labels[rows, v] = low
            if not changed:
                break
        components = (labels == np.arange(self.n_nodes)).sum(axis=1)
        return self.n_nodes - components

    def linear_minimizer(self, c: np.ndarray) -> np.ndarray:
        """Kruskal: by increasing cost, keep each negative-cost edge joining two trees."""
        c = check_vector(c, self.dim, "c")
        forest = _UnionFind(self.n_nodes)
        x = np.zeros(self.n)
        edges = self.edges.tolist()
        for e in np.argsort(c, kind="stable").tolist():
            if c[e] >= 0:
                break
            if forest.union(*edges[e]):
                x[e] = 1.0
        return x

    # ------------------------------------------------------------ membership
    @cached_property
    def _node_set_constraints(self) -> tuple[np.ndarray, np.ndarray] | None:
        """For every nonempty set U of non-isolated nodes: rows ``1_{E(U)}``, rhs
        ``|U| - 1``; None if there are more than ``node_enum_limit`` such nodes."""
        nodes = np.unique(self.edges)
        if nodes.size > self.node_enum_limit:
            return None
        pos = np.searchsorted(nodes, self.edges)
        masks = subset_masks(nodes.size)[1:]
        inside = masks[:, pos[:, 0]] & masks[:, pos[:, 1]]
        return inside.astype(np.float64), masks.sum(axis=1) - 1.0

    def _rank_inequalities_hold(self, x: np.ndarray, atol: float) -> bool:
        table = self._node_set_constraints
        if table is not None:
            rows, rhs = table
            return bool(np.all(rows @ x <= rhs + atol))
        return self._max_violation(x) <= atol

    def _max_violation(self, x: np.ndarray) -> float:
        """``max_{U nonempty} x(E(U)) - |U| + 1`` by one min cut per root node."""
        n = self.n_nodes
        proper = ~self.loops
        u, v = self.edges[proper, 0], self.edges[proper, 1]
        xe = x[proper]
        degree = np.bincount(u, xe, n) + np.bincount(v, xe, n)
        loop_mass = np.bincount(self.edges[self.loops, 0], x[self.loops], n)
        w = 1.0 - degree / 2.0 - loop_mass
        cap = np.zeros((n + 2, n + 2))
        np.add.at(cap, (u, v), xe / 2.0)
        np.add.at(cap, (v, u), xe / 2.0)
        s, t = n, n + 1
        cap[np.arange(n), t] = np.maximum(w, 0.0)
        cap[s, np.arange(n)] = np.maximum(-w, 0.0)
        const = float(np.minimum(w, 0.0).sum())
        big = float(cap.sum()) + 2.0 * n + 1.0
        best = math.inf
        # Roots: nodes touching positive mass (any other U is beaten by a singleton).
        roots = np.flatnonzero((degree + loop_mass) > 0)
        for r in roots.tolist():
            graph = cap.copy()
            graph[s, r] = big
            best = min(best, _max_flow(graph, s, t) + const)
            cap[r, t] = big  # later roots: U excludes r (already covered)
        if best == math.inf:
            return 0.0  # x = 0 (on non-loops): every |U| - x(E(U)) = |U| >= 1
        return 1.0 - best

    def __repr__(self) -> str:
        return f"GraphicMatroid(n_nodes={self.n_nodes}, n_edges={self.n})"


class _UnionFind:
    """Disjoint sets over ``range(n)`` (a forest of parent links, path halving).

    Used by :class:`GraphicMatroid` for independence (a forest), rank (components)
    and Kruskal's linear oracle.
    """

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, a: int) -> int:
        """The root of ``a``'s set."""
        parent = self.parent
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    def union(self, a: int, b: int) -> bool:
        """Merge the sets of ``a`` and ``b`` (``a``'s root under ``b``'s); ``False`` if
        they were already one set (the edge ``(a, b)`` closes a cycle)."""
        root_a, root_b = self.find(a), self.find(b)
        if root_a == root_b:
            return False
        self.parent[root_a] = root_b
        return True


def _max_flow(cap: np.ndarray, s: int, t: int, eps: float = 1e-13) -> float:
    """Maximum s-t flow value in a dense capacity matrix (Edmonds-Karp, floats)."""
    res = cap.copy()
    n = len(res)
    total = 0.0
    while True:
        parent = np.full(n, -1)
        parent[s] = s
        frontier = [s]
        while frontier and parent[t] < 0:
            nxt = []
            for a in frontier:
                reach = np.flatnonzero((res[a] > eps) & (parent < 0))
                parent[reach] = a
                nxt.extend(reach.tolist())
            frontier = nxt
        if parent[t] < 0:
            return total
        path, b = [], t
        while b != s:
            path.append((int(parent[b]), b))
            b = int(parent[b])
        push = min(res[a, b] for a, b in path)
        for a, b in path:
            res[a, b] -= push
            res[b, a] += push
        total += push
