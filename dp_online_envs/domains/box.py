"""Axis-aligned boxes ``[low, high] = {x : low <= x <= high}`` and the cube ``[-1, 1]^dim``."""

from __future__ import annotations

import itertools
import math
from functools import cached_property

import numpy as np
from gymnasium import spaces

from dp_online_envs.domains.base import (
    MAX_VERTICES,
    AffineHull,
    Domain,
    check_norm_order,
    check_vector,
    finite_vector,
)
from dp_online_envs.validation import check_int


class Box(Domain):
    """The box ``{x in R^dim : low <= x <= high}`` (coordinates with low = high allowed).

    * Linear oracle: ``x_i = high_i`` where ``c_i < 0``, else ``low_i``.
    * Projection: exact, coordinate-wise clipping.
    * Diameter ``||high - low||_2``; ``sup ||x||_p = ||max(|low|, |high|)||_p``.
    * Affine hull: point ``(low + high)/2``, basis the ``e_i`` with ``low_i < high_i``;
      inner ball of that center and radius ``min_i (high_i - low_i)/2`` over those i.

    Args:
        low: Lower corner, a scalar or an array of shape ``(dim,)``.
        high: Upper corner, a scalar or an array of shape ``(dim,)``.
        dim: The dimension; required when both corners are scalars, else checked.

    Raises:
        ValueError: If the corners are not finite, have mismatched shapes, or some
            ``low_i > high_i``, or if ``dim`` is missing or inconsistent.
    """

    name = "box"

    def __init__(self, low, high, dim: int | None = None) -> None:
        lo = np.asarray(low, dtype=np.float64)
        hi = np.asarray(high, dtype=np.float64)
        if lo.ndim > 1 or hi.ndim > 1:
            raise ValueError(f"low/high must be scalars or 1-d arrays, got shapes "
                             f"{lo.shape} and {hi.shape}")
        sizes = {a.size for a in (lo, hi) if a.ndim == 1}
        if len(sizes) > 1:
            raise ValueError(f"low has shape {lo.shape} but high has shape {hi.shape}")
        if dim is None:
            if not sizes:
                raise ValueError("dim is required when low and high are both scalars")
            dim = sizes.pop()
        else:
            dim = check_int("dim", dim, 1)
            if sizes and sizes.pop() != dim:
                raise ValueError(f"dim={dim} does not match low/high of shapes "
                                 f"{lo.shape}, {hi.shape}")
        self.dim = check_int("dim", dim, 1)
        self.low = np.broadcast_to(lo, (self.dim,)).copy()
        self.high = np.broadcast_to(hi, (self.dim,)).copy()
        if not (np.all(np.isfinite(self.low)) and np.all(np.isfinite(self.high))):
            raise ValueError(f"low={low!r} and high={high!r} must be finite")
        bad = np.flatnonzero(self.low > self.high)
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"low[{i}]={self.low[i]} > high[{i}]={self.high[i]}, expected "
                             "low <= high")
        self.low.flags.writeable = False
        self.high.flags.writeable = False
        self._free = np.flatnonzero(self.low < self.high)

    def linear_minimizer(self, c: np.ndarray) -> np.ndarray:
        c = check_vector(c, self.dim, "c")
        return np.where(c < 0, self.high, self.low)

    def contains(self, x: np.ndarray, atol: float = 1e-9) -> bool:
        """``low - atol <= x <= high + atol``."""
        a = finite_vector(x, self.dim)
        if a is None:
            return False
        return bool(np.all(a >= self.low - atol) and np.all(a <= self.high + atol))

    def project(self, x: np.ndarray) -> np.ndarray:
        return np.clip(check_vector(x, self.dim), self.low, self.high)

    @property
    def diameter(self) -> float:
        return float(np.linalg.norm(self.high - self.low))

    @cached_property
    def affine_hull(self) -> AffineHull:
        basis = np.eye(self.dim)[:, self._free]
        return AffineHull(0.5 * (self.low + self.high), basis)

    def inner_ball(self) -> tuple[np.ndarray, float]:
        widths = (self.high - self.low)[self._free]
        radius = 0.5 * float(widths.min()) if widths.size else 0.0
        return 0.5 * (self.low + self.high), radius

    def norm_bound(self, p: float) -> float:
        q = check_norm_order(p)
        m = np.maximum(np.abs(self.low), np.abs(self.high))
        return float(np.linalg.norm(m, ord=q))

    @cached_property
    def action_space(self) -> spaces.Box:
        return spaces.Box(self.low.copy(), self.high.copy(), dtype=np.float64)

    def vertices(self) -> np.ndarray | None:
        """All ``2^k`` corners (k free coordinates), or None if more than MAX_VERTICES."""
        k = self._free.size
        if 2**k > MAX_VERTICES:
            return None
        bits = np.array(list(itertools.product((0, 1), repeat=k)), dtype=bool).reshape(-1, k)
        verts = np.tile(self.low, (len(bits), 1))
        verts[:, self._free] = np.where(bits, self.high[self._free], self.low[self._free])
        return verts

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim})"


class Cube(Box):
    """The cube ``[-1, 1]^dim``: diameter ``2 sqrt(dim)``, inner ball radius 1.

    Args:
        dim: Dimension, ``>= 1``.

    Raises:
        ValueError: If ``dim < 1``.
    """

    name = "cube"

    def __init__(self, dim: int) -> None:
        super().__init__(-1.0, 1.0, check_int("dim", dim, 1))

    @property
    def diameter(self) -> float:
        return 2.0 * math.sqrt(self.dim)
