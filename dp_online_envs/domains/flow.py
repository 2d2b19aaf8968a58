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
      of any sign: the graph is acyclic).
    * ``contains``: ``x >= 0``, net outflow 1 at s, -1 at t, 0 elsewhere, and ``x_e = 0``
      on useless edges (implied by the others up to tolerance, checked anyway), all
      within ``atol``.
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
        # Per node (in topological order): its useful incoming edges and their tails.
        self._incoming = [[] for _ in range(self.n_nodes)]
        for e in np.flatnonzero(self.useful).tolist():
            self._incoming[int(self.edges[e, 1])].append(e)
        self._incoming_arrays = [
            (np.array(ins, dtype=np.intp), self.edges[ins, 0]) for ins in self._incoming
        ]
        self._dp_nodes = [v for v in self.order if self._incoming[v]]

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
        """Indicator of a cheapest s-t path (DP over the topological order)."""
        c = check_vector(c, self.dim, "c")
        dist = np.full(self.n_nodes, math.inf)
        dist[self.source] = 0.0
        pred = np.full(self.n_nodes, -1)
        for v in self._dp_nodes:
            ins, tails = self._incoming_arrays[v]
            vals = dist[tails] + c[ins]
            k = int(np.argmin(vals))
            if vals[k] < math.inf:
                dist[v], pred[v] = vals[k], ins[k]
        x = np.zeros(self.dim)
        node = self.sink
        while node != self.source:
            e = int(pred[node])
            x[e] = 1.0
            node = int(self.edges[e, 0])
        return x

    # --------------------------------------------------------------- geometry
    def contains(self, x: np.ndarray, atol: float = 1e-9) -> bool:
        """``x >= -atol``, ``|A x - b| <= atol`` and ``|x_e| <= atol`` on useless edges."""
        a = finite_vector(x, self.dim)
        if a is None:
            return False
        if a.min() < -atol or np.any(a[~self.useful] > atol):
            return False
        return bool(np.all(np.abs(self.incidence @ a - self._rhs) <= atol))

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
        a = self.incidence
        cost = np.concatenate([-np.ones(self.dim), np.ones(self.dim)])
        res = linprog(cost, A_eq=np.hstack([a, a]), b_eq=2.0 * self._rhs,
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
