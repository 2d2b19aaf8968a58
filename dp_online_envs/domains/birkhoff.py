"""The Birkhoff polytope of doubly stochastic matrices.

``B_n = {X in R^{n x n} : X >= 0, X 1 = 1, X^T 1 = 1}``, flattened row-major to
vectors of length ``n^2``. By the Birkhoff-von Neumann theorem its vertices are the
``n!`` permutation matrices.
"""

from __future__ import annotations

import itertools
import math
from functools import cached_property

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
from dp_online_envs.domains.simplex import sum_zero_basis
from dp_online_envs.validation import check_int


class Birkhoff(OraclePolytope):
    """Doubly stochastic ``n x n`` matrices, as vectors of length ``n^2`` (row-major).

    * Linear oracle: the permutation matrix of a minimum-cost assignment
      (``scipy.optimize.linear_sum_assignment`` on ``c.reshape(n, n)``).
    * Projection: Frank-Wolfe (Wolfe's min-norm-point variant) with the assignment oracle
      (:mod:`~dp_online_envs.domains.projection`), to Frank-Wolfe gap ``projection_tol``
      (so within ``sqrt(2 projection_tol)`` of the exact projection).
    * Affine hull: point ``J/n``, basis ``Q kron Q`` with Q an orthonormal basis of
      ``1^perp`` in R^n, spanning the ``(n-1)^2`` matrices with zero row and column sums.
    * Inner ball: center ``J/n``, radius ``1/(n-1)`` (n >= 2). Within the hull, the
      distance from ``J/n`` to the facet ``x_ij = 0`` is ``(1/n) / ||P e_ij||`` with P the
      projection onto the hull's directions; ``P e_ij = (e_i - 1/n)(e_j - 1/n)^T`` has
      norm ``(n-1)/n``, giving ``1/(n-1)``.
    * Diameter ``sqrt(2n)`` (two permutations that differ everywhere, n >= 2);
      ``sup ||x||_1 = n``, ``sup ||x||_2 = sqrt(n)``, ``sup ||x||_inf = 1``.

    Args:
        n: Matrix size, ``>= 1``.

    Raises:
        ValueError: If ``n < 1``.
    """

    name = "birkhoff"
    #: Frank-Wolfe gap tolerance of :meth:`project`.

    def __init__(self, n: int) -> None:
        self.n = check_int("n", n, 1)
        self.dim = self.n * self.n

    def linear_minimizer(self, c: np.ndarray) -> np.ndarray:
        c = check_vector(c, self.dim, "c")
        # imported when used: scipy is slow to import (after the first call, a lookup)
        from scipy.optimize import linear_sum_assignment

        rows, cols = linear_sum_assignment(c.reshape(self.n, self.n))
        x = np.zeros(self.dim)
        x[rows * self.n + cols] = 1.0
        return x

    def contains(self, x: np.ndarray, atol: float = 1e-9) -> bool:
        """``x >= -atol`` and every row and column sum within ``atol`` of 1."""
        a = finite_vector(x, self.dim)
        if a is None:
            return False
        m = a.reshape(self.n, self.n)
        return bool(
            a.min() >= -atol
            and np.all(np.abs(m.sum(axis=1) - 1.0) <= atol)
            and np.all(np.abs(m.sum(axis=0) - 1.0) <= atol)
        )

    @property
    def diameter(self) -> float:
        return math.sqrt(2.0 * self.n) if self.n > 1 else 0.0

    @cached_property
    def affine_hull(self) -> AffineHull:
        q = sum_zero_basis(self.n)
        return AffineHull(np.full(self.dim, 1.0 / self.n), np.kron(q, q))

    def inner_ball(self) -> tuple[np.ndarray, float]:
        """Center ``J/n``, radius ``1/(n-1)`` (0 for n = 1, where B_1 is a point)."""
        radius = 1.0 / (self.n - 1) if self.n > 1 else 0.0
        return np.full(self.dim, 1.0 / self.n), radius

    def norm_bound(self, p: float) -> float:
        q = check_norm_order(p)
        return {1.0: float(self.n), 2.0: math.sqrt(self.n)}.get(q, 1.0)

    @cached_property
    def action_space(self) -> spaces.Box:
        return spaces.Box(0.0, 1.0, shape=(self.dim,), dtype=np.float64)

    def vertices(self) -> np.ndarray | None:
        """The ``n!`` permutation matrices (flattened), or None if ``n! > MAX_VERTICES``."""
        if math.factorial(self.n) > MAX_VERTICES:
            return None
        perms = np.array(list(itertools.permutations(range(self.n))), dtype=np.intp)
        verts = np.zeros((len(perms), self.dim))
        rows = np.arange(len(perms))[:, None]
        verts[rows, np.arange(self.n) * self.n + perms] = 1.0
        return verts

    def __repr__(self) -> str:
        return f"Birkhoff(n={self.n})"
