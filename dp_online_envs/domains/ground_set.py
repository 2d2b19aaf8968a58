"""The subsets of a ground set, for online submodular minimization.

A subset ``S`` of ``[n] = {0, ..., n-1}`` is played as its indicator ``1_S`` in
``{0, 1}^n``. Convex-geometric queries (``contains``, ``project``, the hull, the inner
ball, the diameter) describe the convex hull of the indicators, the cube ``[0, 1]^n``,
on which the Lovasz extension of a submodular loss is convex.
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

#: Largest n for which :meth:`GroundSet.vertices` enumerates all 2^n subsets.
_ENUM_LIMIT = 16


class GroundSet(Domain):
    """The ``2^n`` subsets of ``[n]``, embedded as ``{0, 1}^n`` (hull ``[0, 1]^n``).

    * Action space ``MultiBinary(n)``; :meth:`to_point` checks a 0/1 vector.
    * Linear oracle: the indicator of ``{i : c_i < 0}``.
    * ``contains``/``project`` refer to the cube ``[0, 1]^n`` (clipping is exact).
    * Inner ball: center ``1/2``, radius ``1/2``; diameter ``sqrt(n)``;
      ``sup ||x||_1 = n``, ``sup ||x||_2 = sqrt(n)``, ``sup ||x||_inf = 1``.

    Args:
        n: Size of the ground set, ``>= 1``.

    Raises:
        ValueError: If ``n < 1``.
    """

    name = "ground-set"

    def __init__(self, n: int) -> None:
        self.n = check_int("n", n, 1)
        self.dim = self.n

    def to_point(self, action) -> np.ndarray:
        """The indicator vector of the subset ``action`` as float64.

        Raises:
            ValueError: Unless ``action`` has shape ``(n,)`` and every entry is exactly
                0 or 1 (bool, int or float).
        """
        a = np.asarray(action)
        if a.shape != (self.n,):
            raise ValueError(f"action has shape {a.shape}, expected ({self.n},) for {self.name}")
        if a.dtype.kind not in "biuf":
            raise ValueError(f"action must be a 0/1 vector, got dtype {a.dtype}")
        x = a.astype(np.float64)
        if not np.all((x == 0.0) | (x == 1.0)):
            raise ValueError(f"action must be a 0/1 vector, got {action!r}")
        return x

    def linear_minimizer(self, c: np.ndarray) -> np.ndarray:
        c = check_vector(c, self.dim, "c")
        return (c < 0).astype(np.float64)

    def contains(self, x: np.ndarray, atol: float = 1e-9) -> bool:
        """Membership in the hull ``[0, 1]^n``, within ``atol``."""
        a = finite_vector(x, self.dim)
        if a is None:
            return False
        return bool(a.min() >= -atol and a.max() <= 1.0 + atol)

    def project(self, x: np.ndarray) -> np.ndarray:
        """Exact projection onto ``[0, 1]^n`` (clipping)."""
        return np.clip(check_vector(x, self.dim), 0.0, 1.0)

    @property
    def diameter(self) -> float:
        return math.sqrt(self.n)

    @cached_property
    def affine_hull(self) -> AffineHull:
        return AffineHull(np.full(self.n, 0.5), np.eye(self.n))

    def inner_ball(self) -> tuple[np.ndarray, float]:
        return np.full(self.n, 0.5), 0.5

    def norm_bound(self, p: float) -> float:
        q = check_norm_order(p)
        return 1.0 if q == math.inf else float(self.n) ** (1.0 / q)

    @cached_property
    def action_space(self) -> spaces.MultiBinary:
        return spaces.MultiBinary(self.n)

    def vertices(self) -> np.ndarray | None:
        """All ``2^n`` indicators, row ``m`` being the bits of ``m``; None if n > 16."""
        if self.n > _ENUM_LIMIT:
            return None
        masks = np.arange(2**self.n)
        return ((masks[:, None] >> np.arange(self.n)) & 1).astype(np.float64)

    def __repr__(self) -> str:
        return f"GroundSet(n={self.n})"
