"""The unit s-t flow (path) polytope of a directed acyclic graph.

For a DAG ``G = (V, E)`` with source s and sink t, let ``A`` be the node-edge
incidence matrix (``A[u, e] = 1``, ``A[v, e] = -1`` for ``e = (u, v)``) and
``b = e_s - e_t``. The polytope

    F = {x in R^E : x >= 0, A x = b}

is the convex hull of the indicators of the s-t paths (A is totally unimodular and a
DAG has no cycles to carry circulation). An edge lying on no s-t path ("useless")
has ``x_e = 0`` on all of F.
"""

from __future__ import annotations

import math
from collections import deque
from functools import cached_property
from typing import Sequence

import numpy as np
import scipy.linalg
import scipy.sparse
from gymnasium import spaces
from scipy.optimize import linprog

from dp_online_envs.domains.base import (
    MAX_VERTICES,
    AffineHull,
    check_norm_order,
    check_vector,
    finite_vector,
)
from dp_online_envs.domains.polytope import OraclePolytope
from dp_online_envs.validation import check_int


class FlowPolytope(OraclePolytope):
    """Unit s-t flows of a DAG; vertices are the s-t paths.

    * Linear oracle: shortest path by dynamic programming in topological order (costs
      of any sign: the graph is acyclic), relaxed level by level: O(V + E).
    * ``contains``: ``x >= 0``, net outflow 1 at s, -1 at t, 0 elsewhere, and ``x_e = 0``
      on useless edges (implied by the others up to tolerance, checked anyway), all
      within ``atol``; one sparse mat-vec with the CSR incidence matrix
      (``incidence_sparse``, built once): O(V + E). The dense ``incidence`` is built
      only on demand (the affine hull needs it, once).
    * Projection: Frank-Wolfe (Wolfe's min-norm-point variant) with the path oracle, to
      gap ``projection_tol``.
    * Affine hull: ``{A x = b, x_e = 0 on useless edges}``; point = the average of one
      path through each useful edge (a relative-interior point); basis = orthonormal
      null space of A restricted to the useful edges (``scipy.linalg.null_space``).
    * Inner ball: Chebyshev center relative to the hull, by a linear program
      (maximize r s.t. ``x_e = (p + B u)_e >= r ||B^T e_e||`` on useful edges); the
      radius is recomputed exactly at the returned center.
    * Diameter: exact, ``sqrt(max_{P, Q} |P xor Q|)``, from a min-cost 2-unit flow LP
      with two parallel copies of every edge of costs -1 and +1 (integral: the
      constraint matrix is a network matrix).
    * ``sup ||x||_1 = L`` (the most edges on an s-t path), ``sup ||x||_2 = sqrt(L)``,
      ``sup ||x||_inf = 1``.

    Args:
        n_nodes: Number of nodes, ``>= 2``.
        edges: Directed edges ``(u, v)`` (parallel edges allowed).
        source: s.
        sink: t, different from s.

    Raises:
        ValueError: On an endpoint, source or sink outside ``[0, n_nodes)``, s = t, no
            edges, a directed cycle (self-loops included), or no s-t path.
    """

    name = "flow"
    #: Frank-Wolfe gap tolerance of :meth:`project`.

    def __init__(
        self, n_nodes: int, edges: Sequence[tuple[int, int]], source: int, sink: int
    ) -> None:
        self.n_nodes = check_int("n_nodes", n_nodes, 2)
        self.source = check_int("source", source, 0, self.n_nodes - 1)
        self.sink = check_int("sink", sink, 0, self.n_nodes - 1)
        if self.source == self.sink:
            raise ValueError(f"source = sink = {self.source}, expected distinct nodes")
        edges = [tuple(e) for e in edges]
        if not edges:
            raise ValueError("edges is empty, expected at least one edge")
        for i, e in enumerate(edges):
            if len(e) != 2:
                raise ValueError(f"edge {e!r} is not a pair (u, v) of integer nodes")
            for a in e:
                check_int(f"edges[{i}] endpoint", a, 0, self.n_nodes - 1)
        self.edges = np.array(edges, dtype=np.intp).reshape(-1, 2)
        self.dim = len(edges)
        self.order = self._topological_order()
        self.useful = self._useful_edges()
        if not self.useful.any():
            raise ValueError(f"no path from source {self.source} to sink {self.sink}")
        self._build_sparse_structure()

    @classmethod
    def grid(cls, rows: int, cols: int) -> FlowPolytope:
        """Monotone lattice paths on a ``rows x cols`` grid of nodes.

        Node ``(i, j)`` is ``i * cols + j``; edges go right ``(i, j) -> (i, j+1)`` and
        down ``(i, j) -> (i+1, j)``; source top-left, sink bottom-right. Every path has
        ``rows + cols - 2`` edges.

        Raises:
            ValueError: If ``rows, cols < 1`` or the grid has a single node.
        """
        rows, cols = check_int("rows", rows, 1), check_int("cols", cols, 1)
        if rows * cols < 2:
            raise ValueError(f"grid({rows}, {cols}) has a single node, expected >= 2")
        edges = []
        for i in range(rows):
            for j in range(cols):
                node = i * cols + j
                if j + 1 < cols:
                    edges.append((node, node + 1))
                if i + 1 < rows:
                    edges.append((node, node + cols))
        return cls(rows * cols, edges, 0, rows * cols - 1)

    # -------------------------------------------------------------- structure
    def _topological_order(self) -> list[int]:
        """Kahn's algorithm; raises ValueError if the graph has a directed cycle."""
        indegree = np.bincount(self.edges[:, 1], minlength=self.n_nodes)
        out: list[list[int]] = [[] for _ in range(self.n_nodes)]
        for u, v in self.edges.tolist():
            out[u].append(v)
        queue = deque(np.flatnonzero(indegree == 0).tolist())
        order = []
        while queue:
            u = queue.popleft()
            order.append(u)
            for v in out[u]:
                indegree[v] -= 1
                if indegree[v] == 0:
                    queue.append(v)
        if len(order) < self.n_nodes:
            stuck = sorted(set(range(self.n_nodes)) - set(order))
            raise ValueError(f"the graph has a directed cycle (through nodes among {stuck}); "
                             "expected a DAG")
        return order

    def _reachable(self, start: int, forward: bool) -> np.ndarray:
        adj: list[list[int]] = [[] for _ in range(self.n_nodes)]
        for u, v in self.edges.tolist():
            if forward:
                adj[u].append(v)
            else:
                adj[v].append(u)
        seen = np.zeros(self.n_nodes, dtype=bool)
        seen[start] = True
        stack = [start]
        while stack:
            for b in adj[stack.pop()]:
                if not seen[b]:
                    seen[b] = True
                    stack.append(b)
        return seen

    def _useful_edges(self) -> np.ndarray:
        """Edges (u, v) with u reachable from s and t reachable from v."""
        from_s = self._reachable(self.source, forward=True)
        to_t = self._reachable(self.sink, forward=False)
        return from_s[self.edges[:, 0]] & to_t[self.edges[:, 1]]

    def _build_sparse_structure(self) -> None:
        """Precompute, once, everything the per-call primitives need: O(V + E).

        * ``incidence_sparse``: A in CSR form (2 nonzeros per edge), so that
          :meth:`contains` is one sparse mat-vec, O(V + E), never a dense ``V x E`` one.
        * The oracle's schedule: the nodes with a useful incoming edge, grouped by
          *level* (the most useful edges on a path from s to the node), and their
          useful incoming edges in increasing edge index, concatenated per level. The
          nodes of one level have all their useful tails in earlier levels, so one
          level is relaxed with a few vectorized operations.
        """
        cols = np.arange(self.dim)
        self.incidence_sparse = scipy.sparse.csr_matrix(
            (np.concatenate([np.ones(self.dim), -np.ones(self.dim)]),
             (np.concatenate([self.edges[:, 0], self.edges[:, 1]]),
              np.concatenate([cols, cols]))),
            shape=(self.n_nodes, self.dim),
        )  # no duplicate entries: a column per edge, and self-loops are refused
        self._useless = np.flatnonzero(~self.useful)
        useful = np.flatnonzero(self.useful)
        # Per node: its useful incoming edges in increasing index (the tie-break order).
        incoming: list[list[int]] = [[] for _ in range(self.n_nodes)]
        for e in useful.tolist():
            incoming[int(self.edges[e, 1])].append(e)
        self._incoming = incoming
        self._tails = self.edges[:, 0].copy()
        self._tails_list = self._tails.tolist()
        level = np.zeros(self.n_nodes, dtype=np.intp)
        for v in self.order:  # topological: the tails' levels are final
            ins = incoming[v]
            if ins:
                level[v] = 1 + int(level[self.edges[ins, 0]].max())
        dp_nodes = sorted((int(level[v]), v) for v in self.order if incoming[v])
        by_level: dict[int, list[int]] = {}
        for lev, v in dp_nodes:
            by_level.setdefault(lev, []).append(v)
        schedule = []
        for nodes in by_level.values():  # increasing level; nodes in increasing index
            ins = np.array([e for v in nodes for e in incoming[v]], dtype=np.intp)
            starts = np.cumsum([0] + [len(incoming[v]) for v in nodes[:-1]])
            schedule.append((np.array(nodes, dtype=np.intp), ins, self.edges[ins, 0],
                             starts.astype(np.intp)))
        self._schedule = schedule

    @cached_property
    def incidence(self) -> np.ndarray:
        """The node-edge incidence matrix A (``+1`` at tails, ``-1`` at heads)."""
        a = np.zeros((self.n_nodes, self.dim))
        cols = np.arange(self.dim)
        a[self.edges[:, 0], cols] += 1.0
        a[self.edges[:, 1], cols] -= 1.0
        return a

    @cached_property
    def _rhs(self) -> np.ndarray:
        b = np.zeros(self.n_nodes)
        b[self.source], b[self.sink] = 1.0, -1.0
        return b

    # ----------------------------------------------------------------- oracle
    def linear_minimizer(self, c: np.ndarray) -> np.ndarray:
        """Indicator of a cheapest s-t path (DP over the topological order).

        ``dist(s) = 0``, ``dist(v) = min over useful edges e = (u, v) of dist(u) + c_e``,
        relaxed one level at a time (:meth:`_build_sparse_structure`: the nodes of a
        level depend only on earlier levels), then the path is traced back from t taking,
        at each node, the first incoming edge (in edge index) attaining ``dist(v)``. Every
        ``dist`` is the same floating-point sum, and the ties are broken the same way, as
        in a node-by-node DP with ``argmin`` (the previous implementation): the answer is
        bit-identical to it.

        Args:
            c: The cost vector, finite, shape ``(dim,)``.

        Returns:
            The 0/1 indicator of the path (a vertex of the polytope).

        Raises:
            ValueError: On a wrong shape or a non-finite entry of ``c``.

        Complexity: O(V + E) arithmetic in ``O(#levels)`` vectorized steps (``rows +
        cols - 2`` on a grid), plus O(path length * in-degree) to trace the path.
        """
        c = check_vector(c, self.dim, "c")
        dist = np.full(self.n_nodes, math.inf)
        dist[self.source] = 0.0
        for nodes, ins, tails, starts in self._schedule:
            dist[nodes] = np.minimum.reduceat(dist[tails] + c[ins], starts)
        # the same sums as in the relaxation, for every edge at once, traced in Python
        vals = (dist[self._tails] + c).tolist()
        dist_list, tails, incoming = dist.tolist(), self._tails_list, self._incoming
        x = np.zeros(self.dim)
        node = self.sink
        while node != self.source:
            target = dist_list[node]
            hit = [e for e in incoming[node] if vals[e] == target]
            if not hit:  # only if a sum overflowed to nan: argmin's choice, as before
                hit = [incoming[node][int(np.argmin([vals[f] for f in incoming[node]]))]]
            e = hit[0]
            x[e] = 1.0
            node = tails[e]
        return x

    # --------------------------------------------------------------- geometry
    def contains(self, x: np.ndarray, atol: float = 1e-9) -> bool:
        """Whether ``x`` is in the polytope up to ``atol``.

        ``x >= -atol``, ``|x_e| <= atol`` on useless edges and ``|A x - b| <= atol`` at
        every node (flow conservation, net outflow 1 at s and -1 at t). Non-finite or
        misshapen input gives False.

        ``A x`` is one sparse mat-vec with the CSR incidence built at construction; each
        node's net outflow is the sum of its (few) incident entries, where the dense
        product formerly summed a whole row including the zeros. Both are exact sums of
        at most ``deg(v)`` nonzero terms up to one rounding per addition, so the two
        residuals differ by at most ``deg(v) * eps * max|x_e|`` per node: only points
        within that distance of the tolerance boundary ``atol`` can be classified
        differently.

        Complexity: O(V + E).
        """
        a = finite_vector(x, self.dim)
        if a is None:
            return False
        if a.min() < -atol or np.any(a[self._useless] > atol):
            return False
        residual = self.incidence_sparse @ a
        residual[self.source] -= 1.0
        residual[self.sink] += 1.0
        return bool(np.all(np.abs(residual) <= atol))

    @cached_property
    def affine_hull(self) -> AffineHull:
        useful = np.flatnonzero(self.useful)
        null = scipy.linalg.null_space(self.incidence[:, useful])
        basis = np.zeros((self.dim, null.shape[1]))
        basis[useful] = null
        eye = np.eye(self.dim)
        point = np.mean([self.linear_minimizer(-eye[e]) for e in useful], axis=0)
        return AffineHull(point, basis)

    @cached_property
    def _inner(self) -> tuple[np.ndarray, float]:
        hull = self.affine_hull
        k = hull.rank
        if k == 0:
            return hull.point.copy(), 0.0
        rows = hull.basis[self.useful]
        norms = np.linalg.norm(rows, axis=1)
        free = norms > 1e-12
        # Maximize r subject to -(rows u) + r ||row|| <= p on useful edges.
        a_ub = np.hstack([-rows[free], norms[free, None]])
        b_ub = hull.point[self.useful][free]
        cost = np.zeros(k + 1)
        cost[-1] = -1.0
        res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=[(None, None)] * k + [(0, None)],
                      method="highs")
        center = hull.point + (hull.basis @ res.x[:k] if res.status == 0 else 0.0)
        return center, _ball_radius(center, hull.basis, self.useful)

    def inner_ball(self) -> tuple[np.ndarray, float]:
        center, radius = self._inner
        return center.copy(), radius

    @cached_property
    def diameter(self) -> float:
        """Exact ``sqrt(max |P xor Q|)`` over pairs of s-t paths (an integral LP)."""
        a = self.incidence_sparse
        cost = np.concatenate([-np.ones(self.dim), np.ones(self.dim)])
        res = linprog(cost, A_eq=scipy.sparse.hstack([a, a], format="csc"),
                      b_eq=2.0 * self._rhs,
                      bounds=(0.0, 1.0), method="highs")
        if res.status != 0:  # pragma: no cover - the LP is feasible and bounded
            return math.sqrt(2.0 * self.longest_path)
        return math.sqrt(max(round(-res.fun), 0))

    def norm_bound(self, p: float) -> float:
        q = check_norm_order(p)
        length = float(self.longest_path)
        return {1.0: length, 2.0: math.sqrt(length)}.get(q, 1.0)

    @cached_property
    def longest_path(self) -> int:
        """L: the largest number of edges on an s-t path."""
        return int(self.linear_minimizer(-np.ones(self.dim)).sum())

    @cached_property
    def action_space(self) -> spaces.Box:
        return spaces.Box(0.0, 1.0, shape=(self.dim,), dtype=np.float64)

    def vertices(self) -> np.ndarray | None:
        """Indicators of all s-t paths (depth-first), or None if more than MAX_VERTICES."""
        out_edges: list[list[int]] = [[] for _ in range(self.n_nodes)]
        for e in np.flatnonzero(self.useful).tolist():
            out_edges[int(self.edges[e, 0])].append(e)
        paths: list[list[int]] = []
        stack: list[tuple[int, list[int]]] = [(self.source, [])]
        while stack:
            node, path = stack.pop()
            if node == self.sink:
                paths.append(path)
                if len(paths) > MAX_VERTICES:
                    return None
                continue
            for e in out_edges[node]:
                stack.append((int(self.edges[e, 1]), path + [e]))
        verts = np.zeros((len(paths), self.dim))
        for row, path in enumerate(paths):
            verts[row, path] = 1.0
        return verts

    def __repr__(self) -> str:
        return (f"FlowPolytope(n_nodes={self.n_nodes}, n_edges={self.dim}, "
                f"source={self.source}, sink={self.sink})")


def _ball_radius(center: np.ndarray, basis: np.ndarray, rows: np.ndarray) -> float:
    """Largest r with ``center_e + (B u)_e >= 0`` for every selected e and ``||u|| <= r``:
    ``min_e center_e / ||B^T e_e||`` over selected rows with a nonzero norm."""
    norms = np.linalg.norm(basis[rows], axis=1)
    free = norms > 1e-12
    if not free.any():
        return 0.0
    return max(float(np.min(center[rows][free] / norms[free])), 0.0)
