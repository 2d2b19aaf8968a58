"""Strongly convex quadratic losses ``f(theta, x) = (H/2) ||x - a||^2``."""

from __future__ import annotations

import numpy as np

from dp_online_envs.domains.base import Domain
from dp_online_envs.losses._utils import CenterInBoxParams, sup_distance_to_box
from dp_online_envs.losses.base import LossFamily
from dp_online_envs.validation import check_int, check_real


class QuadraticLoss(CenterInBoxParams, LossFamily):
    """Quadratic losses ``f(theta, x) = (H/2) ||x - a||_2^2`` with ``theta = a``.

    Parameter set: ``a in [-c, c]^dim`` (``c = center_radius``). Every ``f(theta, .)`` is
    ``H``-strongly convex (``strong_convexity = H``) and H-smooth.

    Bounds, with ``R = sup_{x in D, a} ||x - a||_2 <= sqrt(N_2^2 + 2c N_1 + dim c^2)``
    (``N_p = domain.norm_bound(p)``; exact when one point of D attains both N_1 and N_2,
    e.g. balls, cubes, simplices; always ``<= N_2 + c sqrt(dim)``):

    * ``L = H R``: the gradient is ``H (x - a)``;
    * ``B = (H/2) R^2`` (``f >= 0``).

    Hindsight comparator. ``sum_{t<=T} f_t(x) = (H T / 2) ||x - abar||^2 + (H/2)(Q -
    T ||abar||^2)`` with ``abar = S / T``, ``S = sum_t a_t`` and ``Q = sum_t ||a_t||^2``.
    So ``argmin_{x in D} sum_t f_t = domain.project(abar)`` and the minimal value needs
    only the streamed statistic ``(S, Q, T)``: accumulate
    :meth:`sufficient_statistic` (``(a, ||a||^2)``, additive over rounds) and call
    :meth:`hindsight_minimizer`.

    Args:
        dim: Dimension.
        strong_convexity: ``H > 0``.
        center_radius: ``c >= 0``.

    Raises:
        ValueError: On a non-positive ``dim`` or ``H``, or a negative ``c``.
    """


    linear_in_theta = False
    convex = True
    name = "quadratic"

    def __init__(
        self, dim: int, strong_convexity: float = 1.0, center_radius: float = 1.0
    ) -> None:
        self._init_center(dim, center_radius)
        self.strong_convexity = check_real("strong_convexity", strong_convexity, 0.0,
                                           low_inclusive=False)

    # ------------------------------------------------------------------ values
    def value(self, theta: np.ndarray, x: np.ndarray) -> float:
        """``(H/2) ||x - a||^2``."""
        d = np.subtract(x, theta)
        return 0.5 * self.strong_convexity * float(np.dot(d, d))

    def values(self, theta: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """Row-wise ``(H/2) ||x - a||^2``."""
        d = np.asarray(xs, dtype=np.float64) - theta
        return 0.5 * self.strong_convexity * np.einsum("ij,ij->i", d, d)

    def total(self, thetas: np.ndarray, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``(H/2) sum_t ||x - a_t||^2`` and its gradient ``H (T x - sum_t a_t)``."""
        d = np.asarray(x, dtype=np.float64) - np.asarray(thetas, dtype=np.float64)
        h = self.strong_convexity
        return 0.5 * h * float(np.einsum("ij,ij->", d, d)), h * d.sum(axis=0)

    def subgradient(self, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The gradient ``H (x - a)``."""
        return self.strong_convexity * (np.asarray(x, dtype=np.float64) - theta)

    # --------------------------------------------------------------- parameters
    # ------------------------------------------------------------------- bounds
    def _radius(self, domain: Domain) -> float:
        return sup_distance_to_box(
            (domain.norm_bound(1), domain.norm_bound(2)), self.center_radius, self.dim
        )

    def lipschitz(self, domain: Domain) -> float:
        """``H R`` (see the class docstring)."""
        self.check_domain(domain)
        return self.strong_convexity * self._radius(domain)

    def bound(self, domain: Domain) -> float:
        """``(H/2) R^2`` (see the class docstring)."""
        self.check_domain(domain)
        return 0.5 * self.strong_convexity * self._radius(domain) ** 2

    # -------------------------------------------------------- hindsight helpers
    def sufficient_statistic(self, theta: np.ndarray) -> np.ndarray:
        """``(a, ||a||^2)``, shape ``(dim + 1,)``; summing it over rounds gives ``(S, Q)``."""
        t = np.asarray(theta, dtype=np.float64)
        out = np.empty(self.dim + 1)
        out[:-1] = t
        out[-1] = float(np.dot(t, t))
        return out

    def cumulative_value(
        self, x: np.ndarray, thetas_sum: np.ndarray, count: int, sq_norms_sum: float
    ) -> float:
        """``sum_t f_t(x) = (H/2)(T ||x||^2 - 2 <x, S> + Q)`` from ``(S, T, Q)``."""
        x = np.asarray(x, dtype=np.float64)
        s = np.asarray(thetas_sum, dtype=np.float64)
        return 0.5 * self.strong_convexity * (
            count * float(np.dot(x, x)) - 2.0 * float(np.dot(x, s)) + float(sq_norms_sum)
        )

    def hindsight_minimizer(
        self,
        thetas_sum: np.ndarray,
        count: int,
        domain: Domain,
        sq_norms_sum: float | None = None,
    ) -> tuple[np.ndarray, float]:
        """Exact ``argmin`` and ``min`` over ``x in D`` of ``sum_{t<=T} f_t(x)``.

        Since ``sum_t f_t(x) = (H T/2)||x - S/T||^2 + const``, the minimizer is the
        Euclidean projection ``domain.project(S / T)`` (exact if the domain's projection
        is), and the minimum is :meth:`cumulative_value` there.

        Args:
            thetas_sum: Either ``S = sum_t a_t`` (shape ``(dim,)``, then pass
                ``sq_norms_sum``), or the summed :meth:`sufficient_statistic`
                ``(S, Q)`` (shape ``(dim + 1,)``, then leave ``sq_norms_sum`` None).
            count: ``T >= 1``, the number of rounds summed.
            domain: The decision set.
            sq_norms_sum: ``Q = sum_t ||a_t||^2``; the minimal value depends on it.

        Returns:
            ``(x_star, min_value)``.

        Raises:
            ValueError: On ``count < 1``, a wrong shape, or a ``(dim,)``-shaped
                ``thetas_sum`` without ``sq_norms_sum`` (the value would be wrong).
        """
        count = check_int("count", count, 1)
        s = np.asarray(thetas_sum, dtype=np.float64)
        if s.shape == (self.dim + 1,) and sq_norms_sum is None:
            s, q = s[:-1], float(s[-1])
        elif s.shape == (self.dim,):
            if sq_norms_sum is None:
                raise ValueError(
                    "sq_norms_sum=None with thetas_sum of shape "
                    f"({self.dim},): the minimal summed value needs Q = sum ||a_t||^2; "
                    "pass it, or pass the summed sufficient_statistic of shape "
                    f"({self.dim + 1},)"
                )
            q = float(sq_norms_sum)
        else:
            raise ValueError(
                f"thetas_sum has shape {s.shape}, expected ({self.dim},) with "
                f"sq_norms_sum or ({self.dim + 1},) without"
            )
        x_star = np.asarray(domain.project(s / count), dtype=np.float64)
        return x_star, self.cumulative_value(x_star, s, count, q)

    def __repr__(self) -> str:
        return (
            f"QuadraticLoss(dim={self.dim}, strong_convexity={self.strong_convexity}, "
            f"center_radius={self.center_radius})"
        )
