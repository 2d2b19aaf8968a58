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
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from dp_online_envs.domains.base import (
    MAX_VERTICES,
    AffineHull,
    check_norm_order,
    check_vector,
    finite_vector,
)
from dp_online_envs.domains.polytope import OraclePolytope
from dp_online_envs.validation import check_int

if TYPE_CHECKING:  # scipy is imported where it is used: it is slow to import
    import scipy.sparse



def linprog(*args: Any, **kwargs: Any) -> Any:
    """``scipy.optimize.linprog`` (scipy imported when first used: it is slow to import)."""
    from scipy.optimize import linprog as solve

    return solve(*args, **kwargs)


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
    * Affine hull: ``{A x = b, x_e = 0 on useless edges}``; point = the Chebyshev
      center; basis = orthonormalized fundamental cycles of a spanning tree (sparse LU
      for the cycles, one dense QR): :attr:`affine_hull`.
    * Inner ball: Chebyshev center relative to the hull, by a sparse linear program
      in the edge variables (maximize r s.t. ``A x = b``, ``x_e >= r ||B^T e_e||``);
      the radius is recomputed exactly at the returned center (:attr:`_inner`).
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
        import scipy.sparse  # imported when used: scipy is slow to import

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
        schedule, all_ins, offset = [], [], 0
        for nodes in by_level.values():  # increasing level; nodes in increasing index
            ins = np.array([e for v in nodes for e in incoming[v]], dtype=np.intp)
            starts = np.cumsum([0] + [len(incoming[v]) for v in nodes[:-1]])
            schedule.append((np.array(nodes, dtype=np.intp), self.edges[ins, 0],
                             starts.astype(np.intp), offset, offset + ins.size))
            all_ins.append(ins)
            offset += ins.size
        self._schedule = schedule
        #: the levels' incoming edges, concatenated: the costs are gathered once per call
        self._schedule_edges = np.concatenate(all_ins) if all_ins else np.zeros(0, np.intp)

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
        costs = c[self._schedule_edges]
        for nodes, tails, starts, lo, hi in self._schedule:
            dist[nodes] = np.minimum.reduceat(dist[tails] + costs[lo:hi], starts)
        # the same sums as in the relaxation (Python floats add as IEEE doubles, like
        # numpy), for the incoming edges of the nodes on the path only
        tails, incoming = self._tails_list, self._incoming
        dist_list, c_list = dist.tolist(), c.tolist()
        x = np.zeros(self.dim)
        node = self.sink
        while node != self.source:
            target = dist_list[node]
            for e in incoming[node]:  # the first edge attaining dist(node)
                if dist_list[tails[e]] + c_list[e] == target:
                    break
            else:  # only if a sum overflowed to nan: argmin's choice, as before
                vals = [dist_list[tails[f]] + c_list[f] for f in incoming[node]]
                e = incoming[node][int(np.argmin(vals))]
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
    def _grounded(self) -> tuple[scipy.sparse.csc_matrix, np.ndarray]:
        """``(A_g, b_g)``: the incidence restricted to the useful edges and to the nodes
        they touch, with the source's row removed (full row rank: the useful subgraph
        is connected through s, so the grounded Laplacian ``A_g A_g^T`` is positive
        definite), and those rows of b."""
        useful = np.flatnonzero(self.useful)
        nodes = np.unique(self.edges[useful].ravel())
        rows = nodes[nodes != self.source]
        return self.incidence_sparse[rows][:, useful].tocsc(), self._rhs[rows]

    @cached_property
    def affine_hull(self) -> AffineHull:
        """``{A x = b, x_e = 0 on useless edges}``: point = the Chebyshev center (a
        relative-interior point, :meth:`inner_ball`); basis: :attr:`_hull_basis`."""
        return AffineHull(self._inner[0].copy(), self._hull_basis)

    @cached_property
    def _hull_basis(self) -> np.ndarray:
        """An orthonormal basis of the hull's directions: the orthonormal factor of a QR
        factorization of the fundamental-cycle basis of the useful subgraph.

        The cycle basis: a spanning tree T of the (undirected) useful subgraph; every
        other edge f closes one cycle, the circulation ``x_f = 1``, ``x_T = -B^{-1} N_f``
        with ``B`` the tree's columns of ``A_g`` (square, invertible: a tree incidence
        with its root row removed) and ``N_f`` the column of f, found by one sparse LU
        solve for all f. The ``E_u - V_u + 1`` circulations are independent (each has
        its own non-tree edge) and lie in the null space of A, whose dimension that is.
        Cost: the dense QR, ``O(E k^2)`` with ``k`` the rank (formerly a full SVD of the
        dense ``V x E`` incidence, ``O(V E^2)``).
        """
        import scipy.linalg  # imported when used: scipy is slow to import
        import scipy.sparse.linalg

        useful = np.flatnonzero(self.useful)
        a_g = self._grounded[0]
        n_useful = a_g.shape[1]
        # spanning tree by breadth-first search over the useful edges (undirected)
        adj: list[list[tuple[int, int]]] = [[] for _ in range(self.n_nodes)]
        for pos, e in enumerate(useful.tolist()):
            u, v = self._tails_list[e], int(self.edges[e, 1])
            adj[u].append((v, pos))
            adj[v].append((u, pos))
        seen = np.zeros(self.n_nodes, dtype=bool)
        seen[self.source] = True
        queue, tree = deque([self.source]), []
        while queue:
            for v, pos in adj[queue.popleft()]:
                if not seen[v]:
                    seen[v] = True
                    tree.append(pos)
                    queue.append(v)
        tree_pos = np.array(sorted(tree), dtype=np.intp)
        other = np.setdiff1d(np.arange(n_useful), tree_pos)
        basis = np.zeros((self.dim, other.size))
        if other.size:
            lu = scipy.sparse.linalg.splu(a_g[:, tree_pos].tocsc())
            cycles = np.zeros((n_useful, other.size))
            cycles[tree_pos] = -lu.solve(a_g[:, other].toarray())
            cycles[other, np.arange(other.size)] = 1.0
            basis[useful] = scipy.linalg.qr(cycles, mode="economic", check_finite=False)[0]
        return basis

    @cached_property
    def _inner(self) -> tuple[np.ndarray, float]:
        """The Chebyshev center relative to the hull, by a sparse linear program.

        Maximize r subject to ``A_g x = b_g``, ``x >= 0`` and ``x_e >= r w_e`` on the
        useful edges, where ``w_e = ||B^T e_e||`` (B: :attr:`_hull_basis`) is the length
        of the unit vector of edge e projected on the hull's directions: the distance
        from x to the facet ``x_e = 0`` within the hull is ``x_e / w_e``. In the edge
        variables the constraint matrix is sparse (HiGHS; formerly a dense LP in the
        hull coordinates, ``E x k``, with the same optimal radius: ``x = p + B u`` is a
        bijection onto the hull). ``w_e^2 = 1 - R_e`` with ``R_e`` the edge's effective
        resistance, ``>= 1 / V`` off the bridges (Rayleigh monotonicity: a cycle of
        length l through e bounds ``R_e`` by ``(l - 1) / l``) and 0 up to rounding on
        them (edges every path uses), which tells the two apart: ``w_e^2 > 1 / (2V)``.
        HiGHS meets ``A x = b`` only to its feasibility tolerance: a residual above
        ``1e-13`` is removed by the least-norm correction
        ``x -= A_g^T (A_g A_g^T)^{-1} (A_g x - b_g)`` (a sparse LU of the grounded
        Laplacian). The radius is recomputed at the returned center:
        ``min_e x_e / w_e`` over the edges with ``w_e > 0``.
        """
        import scipy.sparse  # imported when used: scipy is slow to import
        import scipy.sparse.linalg

        useful = np.flatnonzero(self.useful)
        a_g, b_g = self._grounded
        m, n_useful = a_g.shape
        w = np.linalg.norm(self._hull_basis[useful], axis=1)
        free = np.flatnonzero(w * w > 0.5 / self.n_nodes)
        center = np.zeros(self.dim)
        if free.size == 0:  # a single path: the polytope is a point
            center[useful] = self.linear_minimizer(np.zeros(self.dim))[useful]
            return center, 0.0
        a_ub = scipy.sparse.hstack([
            -scipy.sparse.eye(n_useful, format="csr")[free],
            scipy.sparse.csr_matrix(w[free][:, None])], format="csr")
        a_eq = scipy.sparse.hstack([a_g, scipy.sparse.csc_matrix((m, 1))], format="csr")
        cost = np.zeros(n_useful + 1)
        cost[-1] = -1.0
        res = linprog(cost, A_ub=a_ub, b_ub=np.zeros(free.size), A_eq=a_eq, b_eq=b_g,
                      bounds=[(0, None)] * (n_useful + 1), method="highs")
        if res.status != 0:  # pragma: no cover - the LP is feasible and bounded
            x = np.mean([self.linear_minimizer(-np.eye(self.dim)[e])[useful]
                         for e in useful], axis=0)
        else:
            x = res.x[:n_useful]
        residual = a_g @ x - b_g
        if np.abs(residual).max() > 1e-13:  # onto A x = b
            lap = scipy.sparse.linalg.splu((a_g @ a_g.T).tocsc())
            x = x - a_g.T @ lap.solve(residual)
        center[useful] = x
        radius = max(float(np.min(x[free] / w[free])), 0.0)
        return center, radius

    def inner_ball(self) -> tuple[np.ndarray, float]:
        center, radius = self._inner
        return center.copy(), radius

    @cached_property
    def diameter(self) -> float:
        """Exact ``sqrt(max |P xor Q|)`` over pairs of s-t paths (an integral LP)."""
        import scipy.sparse  # imported when used: scipy is slow to import

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

