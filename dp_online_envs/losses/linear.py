"""Linear losses ``f(theta, x) = <theta, x>``."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np

from dp_online_envs.domains.ball import project_l2_rows
from dp_online_envs.domains.base import Domain, fast_clip
from dp_online_envs.losses._utils import (
    as_param,
    project_l1_ball,
    sample_l1_ball,
    sample_l2_ball,
)
from dp_online_envs.losses.base import LossFamily
from dp_online_envs.validation import check_int

#: Admissible parameter sets of :class:`LinearLoss`.
THETA_SETS = ("linf", "l2", "l1", "unit")


class LinearLoss(LossFamily):
    """Linear losses ``f(theta, x) = <theta, x>``.

    Parameter sets ``Theta`` (``theta_set``):

    * ``"linf"``: ``||theta||_inf <= 1`` (the cube ``[-1, 1]^dim``);
    * ``"l2"``: ``||theta||_2 <= 1``;
    * ``"l1"``: ``||theta||_1 <= 1``;
    * ``"unit"``: ``theta in [0, 1]^dim`` (losses in ``[0, 1]`` for experts / bandits
      on the simplex).

    Bounds:

    * Lipschitz ``L = sup_{theta in Theta} ||theta||_2``: ``1`` for ``"l2"`` and
      ``"l1"``, ``sqrt(dim)`` for ``"linf"`` and ``"unit"``. Exact as the Lipschitz
      constant on R^dim (the gradient is ``theta``); on a lower-dimensional domain
      (e.g. the simplex) only the component of ``theta`` along the affine hull matters,
      so it is then an upper bound.
    * ``B = sup_theta sup_{x in D} |<theta, x>|``, by norm duality ``sup_x ||x||_*``
      with ``||.||_*`` the dual of the norm defining ``Theta``: ``"linf"`` ->
      ``domain.norm_bound(1)``, ``"l2"`` -> ``norm_bound(2)``, ``"l1"`` ->
      ``norm_bound(inf)``, all exact whenever ``norm_bound`` is (the dual norm is
      attained by some ``theta`` in the unit ball). ``"unit"`` -> ``norm_bound(1)``,
      an upper bound (``sup_{theta in [0,1]^d} |<theta, x>| = max(||x^+||_1, ||x^-||_1)
      <= ||x||_1``), exact on nonnegative domains: on the simplex it is exactly 1.

    Since ``f`` is linear in ``theta``, ``sum_t f(theta_t, x) = f(sum_t theta_t, x)``.

    Args:
        dim: Dimension of ``x`` and ``theta``.
        theta_set: One of ``"linf"``, ``"l2"``, ``"l1"``, ``"unit"``.

    Raises:
        ValueError: On a non-positive ``dim`` or an unknown ``theta_set``.
    """

    linear_in_theta = True
    convex = True
    strong_convexity = 0.0

    def __init__(self, dim: int, theta_set: str = "linf") -> None:
        self.dim = check_int("dim", dim, 1)
        if theta_set not in THETA_SETS:
            raise ValueError(f"theta_set={theta_set!r}, expected one of {THETA_SETS}")
        self.theta_set = theta_set
        self.param_dim = self.dim
        self.name = f"linear-{theta_set}"
        self.param_is_box = theta_set in ("unit", "linf")
        low = 0.0 if theta_set == "unit" else -1.0
        self._space = gym.spaces.Box(
            low=low, high=1.0, shape=(self.dim,), dtype=np.float64
        )

    # ------------------------------------------------------------------ values
    def value(self, theta: np.ndarray, x: np.ndarray) -> float:
        """``<theta, x>`` (no validation: this is on the environment's hot path)."""
        return float(np.dot(theta, x))

    def values(self, theta: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """``xs @ theta`` for a batch of points ``xs`` of shape ``(m, dim)``."""
        return np.asarray(xs, dtype=np.float64) @ np.asarray(theta, dtype=np.float64)

    def total(self, thetas: np.ndarray, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``<sum_t theta_t, x>`` and its gradient ``sum_t theta_t``."""
        s = np.asarray(thetas, dtype=np.float64).sum(axis=0)
        return float(np.dot(s, x)), s

    def subgradient(self, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The gradient ``theta`` (independent of ``x``)."""
        return np.array(theta, dtype=np.float64, copy=True)

    # --------------------------------------------------------------- parameters
    @property
    def param_space(self) -> gym.spaces.Box:
        """``[-1, 1]^dim`` (``[0, 1]^dim`` for ``"unit"``), which contains ``Theta``."""
        return self._space

    def sample_param(self, rng: np.random.Generator) -> np.ndarray:
        """A uniform sample from ``Theta``.

        ``"linf"``/``"unit"``: i.i.d. uniform coordinates; ``"l2"``: Gaussian direction
        with radius ``U^(1/dim)``; ``"l1"``: flat Dirichlet on ``dim + 1`` coordinates,
        last one dropped, times independent random signs (uniform on the l1 ball).
        """
        if self.theta_set == "linf":
            return rng.uniform(-1.0, 1.0, size=self.dim)
        if self.theta_set == "unit":
            return rng.uniform(0.0, 1.0, size=self.dim)
        if self.theta_set == "l2":
            return sample_l2_ball(rng, self.dim)
        return sample_l1_ball(rng, self.dim)

    def clip_param(self, theta: np.ndarray) -> np.ndarray:
        """Euclidean projection of ``theta`` onto ``Theta`` (:meth:`clip_params` on one row).

        Raises:
            ValueError: If ``theta`` has the wrong shape or non-finite entries.
        """
        t = as_param(theta, self.param_dim, self.name)
        if self.param_is_box:  # clip_params on one row, without making the row
            return fast_clip(t, self._space.low, self._space.high)
        return self.clip_params(t[None, :])[0]

    def clip_params(self, thetas: np.ndarray) -> np.ndarray:
        """Euclidean projection of every row of a ``(B, dim)`` array onto ``Theta``.

        The one implementation of the clip: :meth:`clip_param` is this on one row and a
        vector learner calls it on its B games' feedback, so both give the same bits.
        Boxes clip coordinates; the l2 ball scales rows outside it
        (:func:`~dp_online_envs.domains.ball.project_l2_rows`, bit-idempotent); the l1
        ball projects each row outside it (:func:`project_l1_ball`). Rows are not
        validated here (the callers do).
        """
        t = np.asarray(thetas, dtype=np.float64)
        if self.param_is_box:
            return fast_clip(t, self._space.low, self._space.high)
        if self.theta_set == "l2":
            return project_l2_rows(t)
        out = t.copy()
        for b in np.flatnonzero(np.abs(t).sum(axis=1) > 1.0):
            out[b] = project_l1_ball(t[b])
        return out

    # ------------------------------------------------------------------- bounds
    def lipschitz(self, domain: Domain) -> float:
        """``sup ||theta||_2``: 1 (l2, l1) or ``sqrt(dim)`` (linf, unit)."""
        self.check_domain(domain)
        if self.theta_set in ("l2", "l1"):
            return 1.0
        return math.sqrt(self.dim)

    def bound(self, domain: Domain) -> float:
        """Dual-norm bound ``sup_{x in D} ||x||_*`` (see the class docstring)."""
        self.check_domain(domain)
        p = {"linf": 1, "l2": 2, "l1": np.inf, "unit": 1}[self.theta_set]
        return float(domain.norm_bound(p))

    def __repr__(self) -> str:
        return f"LinearLoss(dim={self.dim}, theta_set={self.theta_set!r})"
