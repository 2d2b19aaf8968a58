r"""Ene-Nguyen-Vladu PrivateBandit: private, projection-free bandit convex optimization.

``private-projection-free`` -- :class:`PrivateProjectionFree`. Ene, Nguyen & Vladu,
"Projection-Free Bandit Optimization with Privacy Guarantees" (AAAI 2021): Algorithm 1
(PRIVATEBANDIT), Lemma 3.1 (regret), Theorem 1.1, App. A (tree aggregation), App. D
(staying inside the domain). The domain is used ONLY through
``domain.linear_minimizer`` (no projection), so it runs on the matroid, flow,
submodular base and Birkhoff polytopes.

Algorithm: ``T_round`` batches of ``T_batch`` rounds. In batch ``R`` round ``t`` plays
``x_t = (1 - alpha) xt_{R-1} + alpha c + zeta u_t`` (``u_t`` uniform on the unit sphere
of the hull, ``c, r`` the inner ball) and adds ``(n / zeta) f_t(x_t) s_t`` to the batch
sum; one Frank-Wolfe step per round on ``min_x ||x - c||^2/2 + eta' <s_{R-1}, x>``,
``eta' = (1 - alpha) eta``, gives ``xt_R``; at the end of the batch the sum enters the
tree counter, whose release is ``s_R``. ``xt_0 = c``, ``s_0 = 0``.

Parameters (Alg. 1 line 1, scale-aware: :func:`agents.bandit.smoothing.blocked_parameters`
with ``a = 2 + sqrt(20 M / K)`` and the counter's noise; ``n`` hull dimension, ``D``
diameter, ``L`` Lipschitz constant, ``B`` bound on ``|f_t|``, ``r`` inner radius):

* ``K = T_batch = round(sqrt T)`` in ``[1, T]``, ``M = T_round = ceil(T / K)``;
* ``zeta = sqrt((a D (M K)^{1/2} n B + M^{1/2} D nu) / (T L (2 + D/r)))``, the
  minimizer of the explicit bound of Lemma 3.1's proof plus App. D's shrink, where
  ``nu / zeta`` is the root-mean-square norm of the noise of one release of the
  counter (``nu`` grows as ``1/eps``), clamped to ``zeta <= r / 2``;
  ``alpha = zeta / r``;
* ``eta = D / (kappa M^{1/2})``, ``kappa = K^{1/2} n B / zeta + K L`` (Lemma 4.1,
  Lemma C.2 with ``B`` for ``L D``).

Alg. 1's own ``zeta = D n^{1/2} / T^{1/4}`` is this formula for ``B = L D`` without
the shrink, noise and constant factors; it ignores ``r`` and exceeded ``r / 2`` on the
former default polytopes (hull dimension 5-9) until ``T ~ 3e5 - 7e6``.

Privacy (replace-one, per leaf, NOT the paper's Lemma 5.1 / 5.4): sensitivity
``2 n B / zeta`` in l2, ``sqrt(n) 2 n B / zeta`` in l1; tree over ``T_round`` leaves
with ``levels = floor(log2 T_round) + 1``: Laplace scale
``levels sqrt(n) 2 n B / (zeta eps)`` (eps-DP) or the exact discrete Gaussian for
``levels`` blocks of l2 sensitivity ``2 n B / zeta`` ((eps, delta)-DP).

Regret (Lemma 3.1 / Thm. 1.1): ``O(T^{3/4} n^{1/2} L D + T^{1/4} D E||noise|| log T)``
plus ``T zeta L D / r`` for the shrink (App. D); with the scale-aware ``zeta``,
``(a D M^{1/2} kappa + M^{1/2} D nu / zeta + T L (2 + D/r) zeta)``
(:func:`agents.bandit.smoothing.blocked_regret_bound`).

Derivations, the paper's calibration errors and the sign of line 6, and when the clamp
is active: ``docs/algorithms/private-projection-free.md``.
"""

from __future__ import annotations

import math

import numpy as np

from agents.bandit.smoothing import (
    BlockedOnePointAgent,
    batch_sizes,
    estimate_sensitivity,
    fw_projection_step,
    resolve_noise,
)
from agents.base import register
from agents.common import split_rng
from agents.counter_agent import CounterAgent, CounterSpec

__all__ = ["PrivateProjectionFree"]


@register
class PrivateProjectionFree(CounterAgent, BlockedOnePointAgent):
    """Ene-Nguyen-Vladu PRIVATEBANDIT (Alg. 1 + App. D); see the module docstring and
    ``docs/algorithms/private-projection-free.md``.

    Args:
        noise: ``"laplace"`` (default when ``delta = 0``) or ``"gaussian"`` (needs
            ``delta > 0``).
        counter: Continual counter name (default ``"tree"``).
    """

    name = "private-projection-free"
    description = ("Ene-Nguyen-Vladu PrivateBandit (Alg. 1): batched one-point estimates, "
                   "tree-aggregated, Frank-Wolfe (linear oracle only); Laplace or Gaussian")
    paper = ("Ene, Nguyen & Vladu, Projection-Free Bandit Optimization with Privacy "
             "Guarantees, AAAI 2021: Alg. 1, Lemma 3.1, Thm. 1.1, App. A, App. D")
    private = True

    def _oco_constant(self) -> float:
        """``2 + sqrt(20 M / K)``: Lemma 4.1's ``D^2/(2 eta) + (eta/2) M kappa^2 +
        M kappa eta kappa`` (the stale iterate, Lemma C.3) gives ``2 D kappa M^{1/2}``,
        the Frank-Wolfe error of Lemma C.4 ``M kappa sqrt(20) D / K^{1/2}``."""
        batch, rounds = batch_sizes(self.problem.horizon)
        return 2.0 + math.sqrt(20.0 * rounds / batch)

    def _noise_norm(self) -> float:
        """``nu = sqrt(n max_t Var(noise_t))`` of the counter calibrated for ``zeta = 1``
        (the counter's exact variance): the root-mean-square norm of the noisiest
        release is ``nu / zeta``, since the sensitivity is proportional to ``1 / zeta``
        (up to the grid rounding of the discrete Laplace noise)."""
        n = self.geometry.rank
        unit = estimate_sensitivity(n, self.problem.bound, 1.0,
                                    1 if self._noise_kind == "laplace" else 2)
        self.counter_spec = CounterSpec(
            counter=self._counter_kind, noise=self._noise_kind, sensitivity=unit,
            epsilon=self.epsilon, delta=self.delta,
            horizon=batch_sizes(self.problem.horizon)[1], dim=n)
        # The base class's builder (checks included), not a subclass's override.
        probe = CounterAgent._make_counter(self, np.random.default_rng(0))
        return math.sqrt(n * probe.max_noise_variance())

    def setup(self, noise: str | None = None, counter: str = "tree") -> None:
        noise = resolve_noise(self.name, noise, self.delta)
        self._noise_kind, self._counter_kind = noise, counter
        self._setup_geometry()
        n = self.geometry.rank
        #: Per-leaf replace-one sensitivity: l1 ``sqrt(n) 2nB/zeta`` or l2 ``2nB/zeta``.
        self.sensitivity = estimate_sensitivity(n, self.problem.bound, self.zeta,
                                                1 if noise == "laplace" else 2)
        # One counter input per batch (``rounds`` leaves), in the rank-``n`` coordinates.
        probe = self._use_counter(counter, noise, self.sensitivity, horizon=self.rounds, dim=n)
        self.privacy = probe.guarantee()

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        dir_rng, noise_rng = split_rng(self.rng, 2)
        self._reset_geometry(dir_rng)
        self._counter = self._make_counter(noise_rng)
        self._x_fw = self.geometry.center.copy()      # Frank-Wolfe iterate for xt_R
        self._target = self.geometry.center.copy()    # c - eta' s_{R-1}  (s_0 = 0)

    def update(self, action, feedback) -> None:
        end = self._observe(feedback)
        self._x_fw, _ = fw_projection_step(self.problem.domain, self._x_fw, self._target)
        self.lmo_calls += 1
        if end:
            noisy = self.release(self._counter.add(self._take_batch()))
            self._y = self._x_fw.copy()
            step = self.eta * (1.0 - self.alpha)
            self._target = self.geometry.center - step * self.geometry.lift(noisy)
