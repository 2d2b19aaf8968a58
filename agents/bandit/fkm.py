r"""Flaxman-Kalai-McMahan bandit gradient descent (non-private baseline).

``fkm`` -- :class:`FKM`. Flaxman, Kalai & McMahan, "Online convex optimization in the
bandit setting: gradient descent without a gradient" (SODA 2005), Algorithm
``BGD(alpha, delta, nu)`` with the parameters of Theorem 3.3 (L-Lipschitz costs):

    y_1 = c;   x_t = y_t + delta u_t;   y_{t+1} = Proj_{(1-alpha)S}(y_t - nu f_t(x_t) u_t)

``u_t`` uniform on the unit sphere of the hull (``d`` its dimension), ``(1-alpha)S``
shrunk about the inner ball's center ``c``, and

    nu = R / (C sqrt(T)),   delta = T^{-1/4} sqrt(R d C r / (3 (L r + C))),   alpha = delta / r,

``C = B`` (``|f_t| <= C``), ``r`` / ``R`` the inner / outer radii about ``c``.
Clamp: ``delta <= r / 2``. Expected regret (Thm. 3.3, oblivious adversary):
``<= 2 T^{3/4} sqrt(3 R d C (L + C/r))``. Notes: ``docs/algorithms/fkm.md``.
"""

from __future__ import annotations

import math

import numpy as np

from agents.bandit.smoothing import ShrunkSet, SmoothingGeometry, clamp_radius, require_points
from agents.base import Agent, register
from dp_online_envs.validation import check_real

__all__ = ["FKM", "fkm_parameters"]


def fkm_parameters(horizon: int, d: int, bound: float, lipschitz: float, r: float,
                   R: float) -> dict[str, float]:
    """FKM Theorem 3.3: ``nu``, ``delta`` (clamped to ``r/2``), ``alpha = delta/r``, and the
    regret bound ``2 T^{3/4} sqrt(3 R d C (L + C/r))`` (``C = bound``)."""
    T, C, L = int(horizon), float(bound), float(lipschitz)
    nu = R / (C * math.sqrt(T))
    delta_f = T**-0.25 * math.sqrt(R * d * C * r / (3.0 * (L * r + C)))
    delta, clamped = clamp_radius(delta_f, r)
    return {"nu": nu, "delta_formula": delta_f, "delta": delta, "alpha": delta / r,
            "delta_clamped": clamped,
            "regret_bound": 2.0 * T**0.75 * math.sqrt(3.0 * R * d * C * (L + C / r))}


@register
class FKM(Agent):
    """FKM bandit gradient descent, Theorem 3.3 parameters. See the module docstring.

    Args:
        nu: Step size override.
        smoothing: Override of the smoothing radius ``delta`` (``delta`` is the name of
            every agent's privacy parameter); ``alpha = smoothing / r``.
    """

    name = "fkm"
    description = ("Flaxman-Kalai-McMahan bandit gradient descent (one-point estimates, "
                   "projected on (1-alpha)S), T^{3/4} regret; non-private")
    paper = ("Flaxman, Kalai & McMahan, Online convex optimization in the bandit setting: "
             "gradient descent without a gradient, SODA 2005: BGD, Thm. 3.3")
    feedback = "bandit"
    private = False
    requires = ("lipschitz", "bound")

    def setup(self, nu: float | None = None, smoothing: float | None = None) -> None:
        p = self.problem
        require_points(self.name, p.domain)
        self.geometry = SmoothingGeometry.of(p.domain)
        r = self.geometry.radius
        #: ``R``: radius of a ball about ``c`` containing the domain.
        self.outer_radius = self.geometry.outer_radius(p.domain)
        self.params = fkm_parameters(p.horizon, self.geometry.rank, p.bound, p.lipschitz,
                                     r, self.outer_radius)
        self.nu = self.params["nu"] if nu is None else check_real("nu", nu, 0.0)
        if smoothing is None:
            self.smoothing = self.params["delta"]
        else:
            self.smoothing = clamp_radius(
                check_real("smoothing", smoothing, 0.0, low_inclusive=False), r)[0]
        if not (self.nu >= 0 and self.smoothing > 0):
            raise ValueError(f"nu={self.nu!r}, smoothing={self.smoothing!r}: expected "
                             f"nu >= 0 and smoothing > 0")
        self.alpha = self.smoothing / r
        self._shrunk = ShrunkSet(p.domain, self.geometry.center, self.alpha)

    @property
    def regret_bound(self) -> float:
        """``2 T^{3/4} sqrt(3 R d C (L + C/r))`` (Thm. 3.3)."""
        return self.params["regret_bound"]

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._y = self.geometry.center.copy()
        self._direction = None

    @property
    def center_point(self) -> np.ndarray:
        """``y_t``: the coming round's point before the perturbation (in the shrunk set
        ``(1 - alpha) S``)."""
        return self._y.copy()

    @property
    def unshrunk_point(self) -> np.ndarray:
        """``c + (y_t - c) / (1 - alpha)``: the point of ``S`` that the shrink maps to
        ``y_t``."""
        return self._shrunk.unshrink(self._y)

    def act(self):
        _, self._direction = self.geometry.direction(self.rng)
        return self._y + self.smoothing * self._direction

    def update(self, action, feedback) -> None:
        if self._direction is None:
            raise RuntimeError(f"{self.name}.update called before act")
        f = float(self.clip_feedback(feedback)[0])
        self.t += 1
        self._y = self._shrunk.project(self._y - self.nu * f * self._direction)
        self._direction = None
