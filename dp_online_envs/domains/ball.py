"""Norm balls: the Euclidean ball (the "sphere" of Agarwal-Singh) and the l1 ball."""

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
from dp_online_envs.domains.simplex import project_simplex
from dp_online_envs.validation import check_int, check_real


def l2_norms(rows: np.ndarray) -> np.ndarray:
    """The Euclidean norm of every row of a ``(B, n)`` array.

    ``sqrt`` of NumPy's dot kernel per row (``np.vecdot``), which is what
    ``np.linalg.norm`` computes for one vector; every l2 norm that decides a point or
    a clip in the suite (scalar and vector) is this one, so both round alike.
    """
    rows = np.ascontiguousarray(rows, dtype=np.float64)
    return np.sqrt(np.vecdot(rows, rows))


def project_l2_rows(rows: np.ndarray, radius: float = 1.0) -> np.ndarray:
    """Euclidean projection of every row of a ``(B, n)`` array onto ``{u : ||u||_2 <= R}``.

    A row of norm at most ``R`` is kept; a row outside is scaled by ``R / ||row||``, and
    if the scaled row's computed norm still rounds above ``R`` it is moved toward 0 by
    one ulp per coordinate until it is not. The result is inside the ball by its own
    computed norm, and projecting twice gives the same bits as projecting once. The
    scalar projections (:meth:`Ball.project`,
    :func:`~dp_online_envs.losses._utils.project_l2_ball`) are this function on one row,
    so a vector game clips and projects exactly as the scalar one.

    Returns:
        A new array (the input is not modified).
    """
    v = np.asarray(rows, dtype=np.float64)
    out = v.copy()
    norms = l2_norms(v)
    far = np.flatnonzero(norms > radius)
    if far.size:
        out[far] = v[far] * (radius / norms[far])[:, None]
        over = far[l2_norms(out[far]) > radius]
        while over.size:
            out[over] = np.nextafter(out[over], 0.0)
            over = over[l2_norms(out[over]) > radius]
    return out


class _CenteredBody(Domain):
    """A full-dimensional body symmetric about 0 with ``||x||_inf <= radius``."""

    def __init__(self, dim: int, radius: float = 1.0) -> None:
        self.dim = check_int("dim", dim, 1)
        self.radius = check_real("radius", radius, 0.0, low_inclusive=False)

    @property
    def diameter(self) -> float:
        """``2 R`` (two antipodal boundary points)."""
        return 2.0 * self.radius

    @cached_property
    def affine_hull(self) -> AffineHull:
        """Full-dimensional: point 0, basis the identity."""
        return AffineHull(np.zeros(self.dim), np.eye(self.dim))

    @cached_property
    def action_space(self) -> spaces.Box:
        return spaces.Box(-self.radius, self.radius, shape=(self.dim,), dtype=np.float64)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim}, radius={self.radius})"


class Ball(_CenteredBody):
    """The Euclidean ball ``{x in R^dim : ||x||_2 <= R}``.

    * Linear oracle: ``-R c / ||c||`` (``R e_1`` when ``c = 0``).
    * Projection: exact, ``x min(1, R / ||x||)`` (:func:`project_l2_rows` on one row).
    * Diameter ``2R``; inner ball: itself; ``sup ||x||_1 = R sqrt(dim)``,
      ``sup ||x||_2 = sup ||x||_inf = R``.
    * No vertices in the polytope sense (every boundary point is extreme):
      :meth:`vertices` returns None.

    Args:
        dim: Dimension, ``>= 1``.
        radius: R, ``> 0``.

    Raises:
        ValueError: If ``dim < 1`` or ``radius <= 0``.
    """

    name = "ball"

    def linear_minimizer(self, c: np.ndarray) -> np.ndarray:
        c = check_vector(c, self.dim, "c")
        norm = float(l2_norms(c[None, :])[0])
        if norm == 0.0:
            x = np.zeros(self.dim)
            x[0] = self.radius
            return x
        return (-self.radius / norm) * c

    def contains(self, x: np.ndarray, atol: float = 1e-9) -> bool:
        """``||x||_2 <= R + atol``."""
        a = finite_vector(x, self.dim)
        return a is not None and bool(np.linalg.norm(a) <= self.radius + atol)

    def project(self, x: np.ndarray) -> np.ndarray:
        x = check_vector(x, self.dim)
        return project_l2_rows(x[None, :], self.radius)[0]

    def inner_ball(self) -> tuple[np.ndarray, float]:
        return np.zeros(self.dim), self.radius

    def norm_bound(self, p: float) -> float:
        q = check_norm_order(p)
        return self.radius * math.sqrt(self.dim) if q == 1.0 else self.radius


class L1Ball(_CenteredBody):
    """The l1 ball (cross-polytope) ``{x in R^dim : ||x||_1 <= R}``.

    * Vertices ``+-R e_i``; linear oracle ``-R sign(c_i) e_i`` at ``i = argmax |c_i|``.
    * Projection: exact (Duchi et al. 2008): x itself if inside, else
      ``sign(x) * proj_{R-simplex}(|x|)``.
    * Diameter ``2R``; inner ball of center 0 and radius ``R / sqrt(dim)`` (the
      distance from 0 to the facets ``<s, x> = R``, ``s`` in ``{-1, 1}^dim``);
      ``sup ||x||_p = R`` for every p.

    Args:
        dim: Dimension, ``>= 1``.
        radius: R, ``> 0``.

    Raises:
        ValueError: If ``dim < 1`` or ``radius <= 0``.
    """

    name = "l1-ball"

    def linear_minimizer(self, c: np.ndarray) -> np.ndarray:
        c = check_vector(c, self.dim, "c")
        i = int(np.argmax(np.abs(c)))
        x = np.zeros(self.dim)
        x[i] = -self.radius if c[i] > 0 else self.radius
        return x

    def contains(self, x: np.ndarray, atol: float = 1e-9) -> bool:
        """``||x||_1 <= R + atol``."""
        a = finite_vector(x, self.dim)
        return a is not None and bool(np.abs(a).sum() <= self.radius + atol)

    def project(self, x: np.ndarray) -> np.ndarray:
        x = check_vector(x, self.dim)
        if np.abs(x).sum() <= self.radius:
            return x
        return np.sign(x) * project_simplex(np.abs(x), self.radius)

    def inner_ball(self) -> tuple[np.ndarray, float]:
        return np.zeros(self.dim), self.radius / math.sqrt(self.dim)

    def norm_bound(self, p: float) -> float:
        check_norm_order(p)
        return self.radius

    def vertices(self) -> np.ndarray | None:
        """The 2 dim rows ``+R e_i`` then ``-R e_i`` (None if dim > 2048)."""
        if self.dim > 2048:
            return None
        eye = self.radius * np.eye(self.dim)
        return np.vstack([eye, -eye])
