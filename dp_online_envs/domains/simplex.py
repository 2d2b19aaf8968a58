"""The probability simplex (experts) and its vertices (arms).

``Delta_k = {x in R^k : x >= 0, sum_i x_i = 1}``, whose vertices are the standard basis
vectors ``e_1, ..., e_k``.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
from gymnasium import spaces

from dp_online_envs.domains.base import (
    AffineHull,
    Domain,
    check_norm_order,
    check_vector,
    finite_vector,
)
from dp_online_envs.validation import check_int

_FLOAT64 = np.dtype(np.float64)
#: ``a.min()`` and ``a.sum()`` without the method wrappers (the same ufunc reductions).
_minimum, _add = np.minimum.reduce, np.add.reduce

#: Largest k for which :meth:`Simplex.vertices` returns the (k x k) identity.
_EYE_LIMIT = 2048
#: Largest k for which :class:`Arms` precomputes its one-hot rows.
_PRECOMPUTE_LIMIT = 1024


def project_simplex(v: np.ndarray, radius: float = 1.0) -> np.ndarray:
    """Exact Euclidean projection onto ``{x >= 0, sum x = radius}`` by sorting.

    The projection is ``max(v - theta, 0)`` where theta solves
    ``sum_i max(v_i - theta, 0) = radius``. With ``u`` sorted decreasingly and
    ``rho = max{j : u_j - (sum_{i<=j} u_i - radius) / j > 0}``,
    ``theta = (sum_{i<=rho} u_i - radius) / rho`` (Held-Wolfe-Crowder 1974;
    Duchi-Shalev-Shwartz-Singer-Chandra 2008). O(k log k).
    """
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - radius
    j = np.arange(1, u.size + 1)
    found = np.flatnonzero(u - css / j > 0)
    if found.size == 0:
        # Rounding lost ``radius`` next to entries of 1e16 and more (``u_1 - css_1 = 0``).
        # The projection commutes with moving every entry by one amount, and an entry at
        # or below ``max(v) - radius`` projects to 0 (``theta >= max(v) - radius``): so
        # it is that of ``max(v - max(v), -radius)``, whose entries lie in [-radius, 0]
        # (no overflow) and whose largest is 0 (j = 1 qualifies).
        with np.errstate(over="ignore"):
            return project_simplex(np.maximum(v - v.max(), -radius), radius)
    rho = int(found[-1])
    theta = css[rho] / (rho + 1)
    return np.maximum(v - theta, 0.0)


class Simplex(Domain):
    """The probability simplex ``{x in R^k : x >= 0, sum x = 1}`` (the experts setting).

    * Linear oracle: ``e_i`` with ``i = argmin_i c_i``.
    * Projection: exact, by the sort algorithm (:func:`project_simplex`).
    * Diameter ``sqrt(2)`` (``||e_i - e_j||``; 0 when k = 1).
    * Affine hull ``{sum x = 1}``, point ``1/k``; inner ball of center ``1/k`` and
      radius ``1/sqrt(k (k - 1))``, the distance from ``1/k`` to a facet ``x_i = 0``
      within the hull: ``(1/k) / ||e_i - 1/k||``.
    * ``sup ||x||_p = 1`` for every p (attained at a vertex).

    Args:
        k: Number of experts, ``k >= 1``.

    Raises:
        ValueError: If ``k`` is not an integer ``>= 1``.
    """

    name = "simplex"

    def __init__(self, k: int) -> None:
        self.k = check_int("k", k, 1)
        self.dim = self.k

    def linear_minimizer(self, c: np.ndarray) -> np.ndarray:
        """The vertex ``e_i``, ``i = argmin_i c_i`` (first index on ties)."""
        c = check_vector(c, self.dim, "c")
        x = np.zeros(self.dim)
        x[int(np.argmin(c))] = 1.0
        return x

    def contains(self, x: np.ndarray, atol: float = 1e-9) -> bool:
        """``x >= -atol`` and ``|sum x - 1| <= atol`` (False for a non-finite ``x``).

        A float64 vector of the right shape (the env's point of every round) is tested
        as it is: with a finite ``atol``, a NaN or infinite entry already fails one of
        the two inequalities (its minimum or its sum is not finite), so no separate
        finiteness test is needed.
        """
        if (type(x) is np.ndarray and x.dtype == _FLOAT64 and x.shape == (self.dim,)
                and atol < math.inf):
            a = x
        else:
            a = finite_vector(x, self.dim)
            if a is None:
                return False
        return bool(_minimum(a) >= -atol and abs(_add(a) - 1.0) <= atol)

    def project(self, x: np.ndarray) -> np.ndarray:
        """Exact Euclidean projection (sort algorithm)."""
        return project_simplex(check_vector(x, self.dim))

    @property
    def diameter(self) -> float:
        return math.sqrt(2.0) if self.k > 1 else 0.0

    @cached_property
    def affine_hull(self) -> AffineHull:
        return AffineHull(np.full(self.k, 1.0 / self.k), sum_zero_basis(self.k))

    def inner_ball(self) -> tuple[np.ndarray, float]:
        """Center ``1/k``, radius ``1/sqrt(k(k-1))`` (0 when k = 1: the set is a point)."""
        radius = 1.0 / math.sqrt(self.k * (self.k - 1)) if self.k > 1 else 0.0
        return np.full(self.k, 1.0 / self.k), radius

    def norm_bound(self, p: float) -> float:
        """``sup_x ||x||_p = 1`` for p in {1, 2, inf}."""
        check_norm_order(p)
        return 1.0

    @cached_property
    def action_space(self) -> spaces.Box:
        return spaces.Box(0.0, 1.0, shape=(self.k,), dtype=np.float64)

    def vertices(self) -> np.ndarray | None:
        """The identity matrix (rows ``e_i``), or None if ``k > 2048`` (memory)."""
        return np.eye(self.k) if self.k <= _EYE_LIMIT else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(k={self.k})"


def sum_zero_basis(k: int) -> np.ndarray:
    """Orthonormal basis (k x (k-1)) of ``{v in R^k : sum v = 0}`` (Helmert vectors).

    Column j is ``(1, ..., 1, -j, 0, ..., 0) / sqrt(j (j + 1))`` with j ones.
    """
    basis = np.zeros((k, k - 1))
    for j in range(1, k):
        basis[:j, j - 1] = 1.0
        basis[j, j - 1] = -float(j)
        basis[:, j - 1] /= math.sqrt(j * (j + 1))
    return basis


class Arms(Simplex):
    """The k arms of a multi-armed bandit: actions are indices, points are vertices.

    The geometry is that of :class:`Simplex`; the action space is ``Discrete(k)`` and
    :meth:`to_point` maps arm ``a`` to the vertex ``e_a``.

    Args:
        k: Number of arms, ``k >= 1``.
    """

    name = "arms"

    def __init__(self, k: int) -> None:
        super().__init__(k)
        eye = None
        if self.k <= _PRECOMPUTE_LIMIT:
            eye = np.eye(self.k)
            eye.flags.writeable = False
        self._eye = eye

    @cached_property
    def action_space(self) -> spaces.Discrete:
        return spaces.Discrete(self.k)

    def to_point(self, action) -> np.ndarray:
        """The one-hot vertex ``e_a`` for arm ``a`` (a read-only row of a precomputed
        identity matrix when ``k <= 1024``, else a fresh array).

        Accepts a Python or NumPy integer, or an integer array with one element.

        Raises:
            ValueError: If the action is not an integer in ``[0, k)`` (bools and
                floats, even integral ones, are refused).
        """
        if type(action) is int or isinstance(action, np.integer):
            i = int(action)
        else:
            a = np.asarray(action)
            if a.size != 1 or a.dtype.kind not in "iu":
                raise ValueError(
                    f"action {action!r} is not an arm index: expected an integer in [0, {self.k})"
                )
            i = int(a.reshape(()))
        if not 0 <= i < self.k:
            raise ValueError(f"arm index {i} out of range: expected an integer in [0, {self.k})")
        return self._eye[i] if self._eye is not None else self._one_hot(i)

    def _one_hot(self, i: int) -> np.ndarray:
        x = np.zeros(self.k)
        x[i] = 1.0
        return x
