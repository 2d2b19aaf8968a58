r"""Garber-Kretzu projection-free bandit convex optimization (non-private baseline).

``garber-kretzu`` -- :class:`GarberKretzu`, after Garber & Kretzu, "Improved regret
bounds for projection-free bandit convex optimization" (AISTATS 2020): blocked
one-point estimates and online gradient descent with approximate projections by the
linear oracle; ``O(T^{3/4} n^{1/2})`` expected regret with ``O(T)`` oracle calls.

Blocks of ``K`` rounds. In block ``m`` play ``x_t = (1 - alpha) x_m + alpha c +
delta u_t`` and sum ``g_m = sum_t (n / delta) f_t(x_t) u_t``; at its end

    y~ = y_m - eta (1 - alpha) g_m,    (x_{m+1}, y_{m+1}) = ApproxProj(x_m, y~, epsilon),

``ApproxProj`` = Frank-Wolfe on ``||x - y~||^2 / 2`` from ``x_m`` until
``||x - y~||^2 <= 3 epsilon`` (return ``(x, y~)``) or the gap is ``<= epsilon``
(return ``(x, x)``).

Parameters (Ene-Nguyen-Vladu Alg. 1 line 1, scale-aware:
:func:`agents.bandit.smoothing.blocked_parameters` with ``a = 1 + sqrt 3``, no noise;
``n`` hull dimension, ``D`` diameter, ``L`` Lipschitz constant, ``B`` bound on
``|f_t|``, ``r`` inner radius): ``K = T_batch = round(sqrt T)``,
``M = T_round = ceil(T / K)``, ``delta = sqrt(a D (M K)^{1/2} n B / (T L (2 + D/r)))``
(the minimizer of the regret bound below) clamped to ``delta <= r / 2``,
``alpha = delta / r``, ``eta = D / (kappa M^{1/2})`` with
``kappa = K^{1/2} n B / delta + K L``, ``epsilon = D^2 / T_round``; at most
``max_fw_iterations`` Frank-Wolfe steps per block (hits counted in
:attr:`fw_cap_hits`).

Regret: ``(1 + sqrt 3) D M^{1/2} kappa + T L (2 + D/r) delta``, i.e.
``O(T^{3/4} (D n B L (2 + D/r))^{1/2})`` while the clamp is inactive.

The regret proof, the choice of ``epsilon`` and of ``delta``:
``docs/algorithms/garber-kretzu.md``.
"""

from __future__ import annotations

import math

import numpy as np

from agents.bandit.smoothing import BlockedOnePointAgent, fw_projection_step
from agents.base import register
from dp_online_envs.domains.base import Domain
from dp_online_envs.validation import check_int

__all__ = ["GarberKretzu", "approximate_projection"]


def approximate_projection(domain: Domain, x: np.ndarray, y: np.ndarray, epsilon: float,
                           max_iterations: int) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """Frank-Wolfe approximate projection of ``y`` (see the module docstring).

    Returns:
        ``(x_new, y_new, oracle calls, stopped by the cap?)``.
    """
    calls = 0
    while True:
        diff = x - y
        if float(diff @ diff) <= 3.0 * epsilon:
            return x, y, calls, False
        if calls >= max_iterations:
            return x, y, calls, True
        x_new, gap = fw_projection_step(domain, x, y)
        calls += 1
        if gap <= epsilon:  # far: x is closer than y to every point of D
            return x, x.copy(), calls, False
        x = x_new


@register
class GarberKretzu(BlockedOnePointAgent):
    """Blocked one-point OGD with Frank-Wolfe approximate projections (Garber-Kretzu
    2020). Non-private. See the module docstring.

    Args:
        max_fw_iterations: Frank-Wolfe steps allowed per block (default ``20 K``).
    """

    name = "garber-kretzu"
    description = ("Garber-Kretzu projection-free bandit OGD: blocked one-point estimates, "
                   "Frank-Wolfe approximate projections (linear oracle only); non-private")
    paper = ("Garber & Kretzu, Improved regret bounds for projection-free bandit convex "
             "optimization, AISTATS 2020 (parameters as in Ene-Nguyen-Vladu 2021, Alg. 1)")
    private = False

    def _oco_constant(self) -> float:
        """``1 + sqrt(3)``: ``D^2/(2 eta) + (eta/2) M kappa^2`` gives ``D kappa M^{1/2}``
        and the approximate projections ``M kappa sqrt(3 epsilon) = sqrt(3) D kappa
        M^{1/2}`` (``docs/algorithms/garber-kretzu.md``)."""
        return 1.0 + math.sqrt(3.0)

    def setup(self, max_fw_iterations: int | None = None) -> None:
        self._setup_geometry()
        #: Frank-Wolfe tolerance ``epsilon = D^2 / T_round``.
        self.tolerance = self.problem.diameter**2 / self.rounds
        self.max_fw_iterations = (20 * self.batch if max_fw_iterations is None
                                  else check_int("max_fw_iterations", max_fw_iterations, 1))

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._reset_geometry(self.rng)
        self._shadow = self.geometry.center.copy()
        #: Blocks whose approximate projection stopped at the iteration cap.
        self.fw_cap_hits = 0

    def update(self, action, feedback) -> None:
        if not self._observe(feedback):
            return
        g = self.geometry.lift(self._take_batch())
        y_step = self._shadow - self.eta * (1.0 - self.alpha) * g
        x, y, calls, capped = approximate_projection(
            self.problem.domain, self._y, y_step, self.tolerance, self.max_fw_iterations)
        self.lmo_calls += calls
        self.fw_cap_hits += int(capped)
        self._y, self._shadow = x, y
