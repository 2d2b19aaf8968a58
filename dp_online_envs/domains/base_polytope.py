"""Base polytopes of normalized submodular functions.

For ``f : 2^V -> R`` submodular with ``f(empty) = 0`` on ``V = {0, ..., n-1}``,

    B(f) = {x in R^n : x(S) <= f(S) for all S subset V, x(V) = f(V)}.

Edmonds' greedy algorithm is its linear oracle: order V by increasing cost,
``pi(1), ..., pi(n)``, and set ``x_{pi(i)} = f(S_i) - f(S_{i-1})`` with
``S_i = {pi(1), ..., pi(i)}``. The vertices are these greedy vectors, one per order.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from functools import cached_property

import numpy as np
from gymnasium import spaces

from dp_online_envs.domains.base import (
    AffineHull,
    check_norm_order,
    check_vector,
    finite_vector,
    max_pairwise_distance,
    subset_masks,
    subset_sums,
)
from dp_online_envs.domains.polytope import OraclePolytope
from dp_online_envs.domains.projection import (
    frank_wolfe_contains,
)
from dp_online_envs.validation import check_int

SetFunction = Callable[[np.ndarray], float]


class SubmodularBasePolytope(OraclePolytope):
    """The base polytope ``B(f)`` of a normalized submodular function f.

    ``fn`` receives a boolean mask of length n (a fresh array) and returns ``f(S)``.
    Which quantities are exact:

    * Linear oracle: Edmonds' greedy (n evaluations of f, or table lookups).
    * ``contains``: for cardinality-based f (``f(S) = g(|S|)``), exact in closed form:
      the k largest entries sum to at most ``g(k)``. Otherwise exact by enumerating
      the ``2^n`` subsets for ``n <= table_limit`` (16); beyond that, after the
      necessary checks ``x(V) = f(V)`` and ``low <= x <= high``, membership is decided
      by Frank-Wolfe with certified bounds (see
      :func:`~dp_online_envs.domains.projection.frank_wolfe_contains`).
    * Projection: Frank-Wolfe (Wolfe's min-norm-point variant) with the greedy oracle,
      to gap ``projection_tol``.
    * Affine hull: ``{x : x(C) = f(C) for each connected component C of f}``, where the
      components are the minimal nonempty separators (``f(A) + f(V - A) = f(V)``).
      Exact for cardinality-based f and for ``n <= table_limit``; for larger general f
      two elements are joined when some adjacent transposition in one of ``4n`` seeded
      random orders changes the greedy vertex along ``e_a - e_b``. Every link found
      is genuine, so the sampled partition can only be finer than the true one (a
      smaller hull), and only if some exchange is never sampled.
    * Inner ball (relative to the hull): closed form by symmetry for cardinality-based
      f (center ``f(V)/n 1``, radius ``min_{0<k<n} (g(k) - k g(n)/n) /
      sqrt(k (1 - k/n))``); for ``n <= table_limit`` the Chebyshev center over all the
      facets ``x(S) <= f(S)`` by a linear program; otherwise the degenerate ball of
      radius 0 at a point of B(f) (the only radius certified without enumeration).
    * Diameter: exact for cardinality-based f (rearrangement inequality) and when all
      vertices are enumerated (``n <= 7``); otherwise the box bound
      ``||high - low||_2``.
    * ``norm_bound``: ``p = inf`` exact (``max_i max(|low_i|, |high_i|)``);
      ``p = 1, 2`` exact for cardinality-based f, for ``n <= 8`` and (p = 1) for
      monotone f (``||x||_1 = f(V)``); otherwise ``||max(|low|, |high|)||_p``.
    * Action space: the box ``low_i = f(V) - f(V - i) <= x_i <= f({i}) = high_i``.

    Args:
        fn: The set function on boolean masks.
        n: Size of the ground set, ``>= 1``.

    Raises:
        ValueError: If ``f(empty) != 0``, ``f(V)`` is not finite, or (checked for
            ``n <= 12``) f is not submodular.
    """

    name = "submodular-base"
    #: Frank-Wolfe gap tolerance of :meth:`project`.
    #: Largest n for which all 2^n values of f are tabulated.
    table_limit: int = 16
    #: Largest n for which submodularity is checked at construction.
    check_limit: int = 12
    #: Largest n for which all n! greedy vertices are enumerated.
    vertex_limit: int = 8

    def __init__(self, fn: SetFunction, n: int) -> None:
        self._setup(fn, check_int("n", n, 1), None)
        if self._card is None and self.n <= self.check_limit:
            self._check_submodular()

    def _setup(self, fn: SetFunction, n: int, card: np.ndarray | None) -> None:
        self.n = self.dim = n
        self._fn = fn
        self._card = card
        empty = float(fn(np.zeros(n, dtype=bool)))
        if not (math.isfinite(empty) and abs(empty) <= 1e-12):
            raise ValueError(f"f(empty set) = {empty!r}, expected 0 (f must be normalized)")
        self.f_total = float(fn(np.ones(n, dtype=bool)))
        if not math.isfinite(self.f_total):
            raise ValueError(f"f(V) = {self.f_total!r}, expected a finite value")

    @classmethod
    def concave_cardinality(
        cls, n: int, g: Callable[[float], float] = np.sqrt
    ) -> SubmodularBasePolytope:
        """``B(f)`` for ``f(S) = g(|S|)`` with g concave on ``{0, ..., n}`` and ``g(0) = 0``.

        Its vertices are the permutations of the increments ``d_k = g(k) - g(k-1)``.

        Raises:
            ValueError: If ``g(0) != 0``, a value is not finite, or g is not concave.
        """
        n = check_int("n", n, 1)
        values = np.array([float(g(k)) for k in range(n + 1)])
        if not np.all(np.isfinite(values)):
            raise ValueError(f"g(0..{n}) = {values!r}, expected finite values")
        second = np.diff(values, 2)
        scale = max(1.0, float(np.abs(values).max()))
        if second.size and second.max() > 1e-12 * scale:
            k = int(np.argmax(second)) + 1
            raise ValueError(f"g is not concave on 0..{n}: g({k-1}) + g({k+1}) > 2 g({k})")
        obj = cls.__new__(cls)
        obj._setup(lambda mask: values[int(np.count_nonzero(mask))], n, values)
        return obj

    @classmethod
    def permutahedron(cls, n: int) -> SubmodularBasePolytope:
        """The permutahedron ``conv{permutations of (1, ..., n)}``:
        ``f(S) = sum_{j=0}^{|S|-1} (n - j)``."""
        n = check_int("n", n, 1)
        return cls.concave_cardinality(n, lambda k: k * n - k * (k - 1) / 2.0)

    # ------------------------------------------------------------ the function
    def f(self, subset) -> float:
        """``f(S)`` for a boolean mask S."""
        mask = np.asarray(subset, dtype=bool)
        if mask.shape != (self.n,):
            raise ValueError(f"subset mask has shape {mask.shape}, expected ({self.n},)")
        return float(self._fn(mask.copy()))

    @property
    def is_cardinality_based(self) -> bool:
        """Whether f was built as ``g(|S|)`` (closed forms available)."""
        return self._card is not None

    @cached_property
    def _table(self) -> np.ndarray:
        """``f(S)`` for every bitmask S (needs ``n <= table_limit``)."""
        if self._card is not None:
            return self._card[subset_masks(self.n).sum(axis=1)]
        if self.n > self.table_limit:
            raise ValueError(f"n={self.n} is too large to tabulate f (limit {self.table_limit})")
        return np.array([float(self._fn(m.copy())) for m in subset_masks(self.n)])

    def _has_table(self) -> bool:
        return "_table" in self.__dict__ or self.n <= self.check_limit

    def _check_submodular(self) -> None:
        table = self._table
        masks = np.arange(2**self.n)
        tol = 1e-9 * max(1.0, float(np.abs(table).max()))
        for i, j in itertools.combinations(range(self.n), 2):
            bi, bj = 1 << i, 1 << j
            s = masks[(masks & (bi | bj)) == 0]
            excess = table[s | bi | bj] + table[s] - table[s | bi] - table[s | bj]
            if excess.max() > tol:
                k = int(s[np.argmax(excess)])
                raise ValueError(
                    f"f is not submodular: f(S+{i}) + f(S+{j}) < f(S+{i}+{j}) + f(S) for "
                    f"S = {np.flatnonzero((k >> np.arange(self.n)) & 1).tolist()}"
                )

    @cached_property
    def low(self) -> np.ndarray:
        """``low_i = f(V) - f(V - i)``: the least value of ``x_i`` on B(f)."""
        full = np.ones(self.n, dtype=bool)
        out = np.empty(self.n)
        for i in range(self.n):
            full[i] = False
            out[i] = self.f_total - float(self._fn(full.copy()))
            full[i] = True
        return out

    @cached_property
    def high(self) -> np.ndarray:
        """``high_i = f({i})``: the largest value of ``x_i`` on B(f)."""
        eye = np.eye(self.n, dtype=bool)
        return np.array([float(self._fn(eye[i].copy())) for i in range(self.n)])

    # ----------------------------------------------------------------- oracle
    def _greedy(self, order: np.ndarray) -> np.ndarray:
        """The greedy vertex of one order (an array of the n elements)."""
        x = np.empty(self.n)
        if self._card is not None:
            x[order] = np.diff(self._card)
        elif self._has_table():
            prefix = np.cumsum(np.left_shift(1, order))
            x[order] = np.diff(self._table[prefix], prepend=0.0)
        else:
            mask = np.zeros(self.n, dtype=bool)
            prev = 0.0
            for i in order.tolist():
                mask[i] = True
                val = float(self._fn(mask.copy()))
                x[i] = val - prev
                prev = val
        return x

    def linear_minimizer(self, c: np.ndarray) -> np.ndarray:
        """Edmonds' greedy: increasing cost order (ties by index)."""
        c = check_vector(c, self.dim, "c")
        return self._greedy(np.argsort(c, kind="stable"))

    # --------------------------------------------------------------- geometry
    def contains(self, x: np.ndarray, atol: float = 1e-9) -> bool:
        """``|x(V) - f(V)| <= atol`` and ``x(S) <= f(S) + atol`` for all S."""
        a = finite_vector(x, self.dim)
        if a is None or abs(a.sum() - self.f_total) > atol:
            return False
        if self._card is not None:
            prefix = np.cumsum(np.sort(a)[::-1])
            return bool(np.all(prefix[:-1] <= self._card[1:-1] + atol))
        if self.n <= self.table_limit:
            return bool(np.all(subset_sums(a) <= self._table + atol))
        if np.any(a < self.low - atol) or np.any(a > self.high + atol):
            return False
        return frank_wolfe_contains(self.linear_minimizer, a, atol)

    @cached_property
    def components(self) -> list[np.ndarray]:
        """The connected components of f (a partition of V; see the class docstring)."""
        n = self.n
        if self._card is not None:
            d = np.diff(self._card)
            if np.allclose(d, d[0], rtol=0.0, atol=1e-12 * max(1.0, abs(d).max())):
                return [np.array([i]) for i in range(n)]  # modular f: a point
            return [np.arange(n)]
        if n <= self.table_limit:
            table = self._table
            full = 2**n - 1
            masks = np.arange(2**n)
            tol = 1e-9 * max(1.0, float(np.abs(table).max()))
            separators = masks[np.abs(table + table[full ^ masks] - table[full]) <= tol]
            comps, seen = [], 0
            for i in range(n):
                if seen >> i & 1:
                    continue
                comp = int(np.bitwise_and.reduce(separators[(separators >> i) & 1 == 1]))
                seen |= comp
                comps.append(np.flatnonzero((comp >> np.arange(n)) & 1))
            return comps
        return self._sampled_components()

    def _sampled_components(self) -> list[np.ndarray]:
        """Join a and b when swapping them in a greedy order moves the vertex."""
        n = self.n
        parent = list(range(n))

        def find(a: int) -> int:
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        rng = np.random.default_rng(0)
        tol = 1e-9 * max(1.0, abs(self.f_total), float(np.abs(self.high).max()))
        for _ in range(4 * n):
            order = rng.permutation(n)
            mask = np.zeros(n, dtype=bool)
            chain = [0.0]
            for i in order.tolist():
                mask[i] = True
                chain.append(float(self._fn(mask.copy())))
            mask[:] = False
            for pos in range(n - 1):
                a, b = int(order[pos]), int(order[pos + 1])
                mask[b] = True
                swapped = float(self._fn(mask.copy()))  # f(S_{pos} + b)
                mask[b] = False
                mask[a] = True
                delta = chain[pos + 1] - chain[pos] - chain[pos + 2] + swapped
                if delta > tol:
                    parent[find(a)] = find(b)
        roots = np.array([find(i) for i in range(n)])
        return [np.flatnonzero(roots == r) for r in np.unique(roots)]

    @cached_property
    def affine_hull(self) -> AffineHull:
        """Point: the average greedy vertex over the n cyclic shifts of the identity
        order (exactly ``f(V)/n 1`` when f is cardinality-based); basis: orthonormal
        null space of the component indicators."""
        import scipy.linalg  # imported when used: scipy is slow to import

        if self._card is not None:
            point = np.full(self.n, self.f_total / self.n)
        else:
            orders = np.arange(self.n)
            point = np.mean([self._greedy(np.roll(orders, k)) for k in range(self.n)], axis=0)
        indicators = np.zeros((len(self.components), self.n))
        for row, comp in enumerate(self.components):
            indicators[row, comp] = 1.0
        return AffineHull(point, scipy.linalg.null_space(indicators))

    @cached_property
    def _inner(self) -> tuple[np.ndarray, float]:
        from scipy.optimize import linprog  # imported when used: scipy is slow to import

        hull = self.affine_hull
        if hull.rank == 0:
            return hull.point.copy(), 0.0
        if self._card is not None:
            n, g = self.n, self._card
            k = np.arange(1, n)
            radius = np.min((g[1:n] - k * g[n] / n) / np.sqrt(k * (1.0 - k / n)))
            return hull.point.copy(), max(float(radius), 0.0)
        if self.n > self.table_limit:
            return hull.point.copy(), 0.0
        masks = subset_masks(self.n)[1:-1].astype(np.float64)
        proj = masks @ hull.basis  # rows B^T 1_S
        norms = np.linalg.norm(proj, axis=1)
        keep = norms > 1e-12
        slack = self._table[1:-1] - masks @ hull.point
        k = hull.rank
        cost = np.zeros(k + 1)
        cost[-1] = -1.0
        res = linprog(cost, A_ub=np.hstack([proj[keep], norms[keep, None]]),
                      b_ub=slack[keep], bounds=[(None, None)] * k + [(0, None)],
                      method="highs")
        center = hull.point + (hull.basis @ res.x[:k] if res.status == 0 else 0.0)
        slack = self._table[1:-1] - masks @ center
        radius = float(np.min(slack[keep] / norms[keep])) if keep.any() else 0.0
        return center, max(radius, 0.0)

    def inner_ball(self) -> tuple[np.ndarray, float]:
        center, radius = self._inner
        return center.copy(), radius

    @cached_property
    def _increments(self) -> np.ndarray | None:
        """Cardinality-based f: the multiset of vertex entries ``g(k) - g(k-1)``."""
        return None if self._card is None else np.diff(self._card)

    @cached_property
    def diameter(self) -> float:
        d = self._increments
        if d is not None:
            # max ||P d - Q d||^2: pair the increasing order with the decreasing one.
            return float(np.linalg.norm(np.sort(d) - np.sort(d)[::-1]))
        if self.n <= 7:
            return max_pairwise_distance(self._vertex_array)
        return float(np.linalg.norm(self.high - self.low))

    def norm_bound(self, p: float) -> float:
        q = check_norm_order(p)
        extreme = np.maximum(np.abs(self.low), np.abs(self.high))
        if q == math.inf:
            return float(extreme.max())
        if self._increments is not None:
            return float(np.linalg.norm(self._increments, ord=q))
        if self.n <= self.vertex_limit:
            return float(np.linalg.norm(self._vertex_array, ord=q, axis=1).max())
        if q == 1.0 and (np.all(self.low >= 0) or np.all(self.high <= 0)):
            return abs(self.f_total)
        return float(np.linalg.norm(extreme, ord=q))

    @cached_property
    def action_space(self) -> spaces.Box:
        return spaces.Box(self.low.copy(), self.high.copy(), dtype=np.float64)

    def vertices(self) -> np.ndarray | None:
        """The distinct greedy vertices over all ``n!`` orders (None if n > 8)."""
        if self.n > self.vertex_limit:
            return None
        return self._vertex_array.copy()

    @cached_property
    def _vertex_array(self) -> np.ndarray:
        perms = np.array(list(itertools.permutations(range(self.n))), dtype=np.int64)
        if self._card is not None:
            steps = np.broadcast_to(np.diff(self._card), perms.shape)
        else:
            prefix = np.cumsum(np.left_shift(1, perms), axis=1)
            steps = np.diff(self._table[prefix], axis=1, prepend=0.0)
        verts = np.empty(perms.shape)
        np.put_along_axis(verts, perms, steps, axis=1)
        _, first = np.unique(np.round(verts, 12), axis=0, return_index=True)
        return verts[np.sort(first)]

    def __repr__(self) -> str:
        kind = "cardinality-based, " if self._card is not None else ""
        return f"SubmodularBasePolytope({kind}n={self.n})"
