r"""Garber-Kretzu projection-free bandit convex optimization (non-private baseline).

``garber-kretzu`` -- :class:`GarberKretzu`, after Garber & Kretzu, "Improved regret
bounds for projection-free bandit convex optimization" (AISTATS 2020): blocked
one-point gradient estimates and online gradient descent whose projections are
replaced by approximate projections computed with the linear oracle (Frank-Wolfe with
a close/far stopping rule), ``O(T^{3/4})`` expected regret with ``O(T)`` oracle calls.
Ene-Nguyen-Vladu (AAAI 2021, Sec. 3) describe their Algorithm 1 as "a slight
simplification" of it; the two share everything but the update
(:mod:`agents.bandit.smoothing`: hull directions, App. D shrink, batches).

The text of Garber-Kretzu is not in ``/work/shared/papers``; the update below is the
standard blocked approximate-projection OGD, with the guarantee proved here, and the
parameters are those of Ene-Nguyen-Vladu's Alg. 1 (their instantiation of the same
analysis) with the tolerance ``epsilon`` chosen by that analysis.

Algorithm
---------
Blocks of ``K`` rounds. During block ``m`` play ``x_t = (1 - alpha) x_m + alpha c +
delta u_t`` (``u_t`` uniform on the hull's unit sphere) and sum the one-point estimates
``g_m = sum_t (n / delta) f_t(x_t) u_t``. At the end of the block:

    y~ = y_m - eta (1 - alpha) g_m                      (gradient step on the shadow y)
    (x_{m+1}, y_{m+1}) = ApproxProj(x_m, y~, epsilon)

where ``ApproxProj`` runs Frank-Wolfe (exact line search) on ``||x - y~||^2 / 2`` from
the feasible warm start ``x_m`` until either

* ``||x - y~||^2 <= 3 epsilon`` ("close"): return ``(x, y~)``; or
* the Frank-Wolfe gap ``max_v <x - y~, x - v> <= epsilon`` while ``||x - y~||^2 > 3
  epsilon`` ("far"): return ``(x, x)``.

In both cases ``x_{m+1}`` is feasible, ``||x_{m+1} - y_{m+1}||^2 <= 3 epsilon`` and
``||y_{m+1} - z|| <= ||y~ - z||`` for every ``z`` in D (far case: a gap ``<= epsilon``
gives ``||x - z||^2 <= ||y~ - z||^2 - ||x - y~||^2 + 2 epsilon < ||y~ - z||^2``), which
is all projected OGD needs:

    Regret <= D^2/(2 eta') + (eta'/2) sum_m ||g_m||^2 + sum_m ||g_m|| sqrt(3 epsilon)
              + T delta L (1 + D/r)                       (smoothing + shrink).

Parameters: ``K = T_batch = round(T^{1/2})``, ``delta = min(D n^{1/2} / T^{1/4}, r/2)``,
``eta = D / (T^{3/4} n^{1/2} L)`` (:func:`agents.bandit.smoothing.blocked_parameters`),
``alpha = delta / r``, and ``epsilon = D^2 / T_round`` (``T_round = T / K``), which
balances the last term against the first two (with ``E||g_m||^2 <= kappa^2 =
(K^{1/2} n B / delta + K L)^2``, ``eta = D / (kappa T_round^{1/2})``, both are
``O(kappa D T_round^{1/2}) = O(T^{3/4} n^{1/2})``). A safety cap of
``max_fw_iterations`` (default ``20 K``) Frank-Wolfe steps per block keeps the oracle
budget ``O(T)``; when it is hit the block keeps ``(x, y~)`` and :attr:`fw_cap_hits`
counts it.

Options:
    max_fw_iterations: Frank-Wolfe steps allowed per block (default ``20 K``).
"""

from __future__ import annotations

import numpy as np

from agents.bandit.smoothing import BlockedOnePointAgent, fw_projection_step
from agents.base import register
from dp_online_envs.domains.base import Domain
from dp_online_envs.validation import check_int

__all__ = ["GarberKretzu", "approximate_projection"]


def approximate_projection(domain: Domain, x: np.ndarray, y: np.ndarray, epsilon: float,
                           max_iterations: int) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """Frank-Wolfe approximate projection of ``y`` (module docstring).

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
    2020). Non-private. See the module docstring."""

    name = "garber-kretzu"
    description = ("Garber-Kretzu projection-free bandit OGD: blocked one-point estimates, "
                   "Frank-Wolfe approximate projections (linear oracle only); non-private")
    paper = ("Garber & Kretzu, Improved regret bounds for projection-free bandit convex "
             "optimization, AISTATS 2020 (parameters as in Ene-Nguyen-Vladu 2021, Alg. 1)")
    private = False

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
