r"""Ene-Nguyen-Vladu PrivateBandit: private, projection-free bandit convex optimization.

``private-projection-free`` -- :class:`PrivateProjectionFree`, Ene, Nguyen & Vladu,
"Projection-Free Bandit Optimization with Privacy Guarantees" (AAAI 2021): Algorithm 1
(PRIVATEBANDIT), Lemma 3.1 (regret), Theorem 1.1, App. A (tree aggregation), App. D
(staying inside the domain). The decision set is accessed ONLY through
``domain.linear_minimizer`` (no projection anywhere), so it runs on the matroid, flow,
submodular base and Birkhoff polytopes.

Algorithm (Alg. 1 with App. D; hull coordinates of :mod:`agents.bandit.smoothing`)
----------------------------------------------------------------------------------
The T rounds are cut into ``T_round`` batches of ``T_batch`` rounds. During batch ``R``:

* every round ``t`` draws ``s_t`` uniform on the unit sphere of ``R^n`` (``n`` = hull
  dimension, ``u_t = basis @ s_t``), plays

      x_t = (1 - alpha) xt_{R-1} + alpha c + zeta u_t,     alpha = zeta / r

  (App. D, shrunk about the inner ball's center ``c``; in the domain for every ``u_t``)
  and adds ``F_t s_t = (n / zeta) f_t(x_t) s_t`` to the batch sum ``g_R`` (lines 8-11);
* in parallel, one Frank-Wolfe step per round (exact line search, one call to the
  linear oracle) on the regularized objective of line 14,

      min_{x in D} (1/2) ||x - c||^2 + eta' <s_{R-1}, x>,   eta' = (1 - alpha) eta,

  i.e. the approximate projection of ``c - eta' s_{R-1}`` onto D, warm-started at
  ``xt_{R-1}``: ``T_batch`` oracle calls per batch, as many as the batch has rounds.
  Its result is ``xt_R``, played (perturbed) during batch ``R + 1``;
* at the end of the batch, ``g_R`` enters the tree counter, whose noisy prefix sum
  ``s_R`` (the release) defines the next objective (line 13).

``xt_0 = c``, ``s_0 = 0``. Every played point is a convex combination of vertices, of
``c`` and of ``c + r u_t``: always in D (checked with ``domain.contains`` in the tests).
``eta' = (1 - alpha) eta`` is the chain rule through the shrink ``y -> (1-alpha) y +
alpha c``: ``g_R`` estimates the gradient at the shrunk point, the iterate ``y`` lives
in D. The regularizer is centered at ``c`` (the paper's ``omega(x) = ||x||^2 / 2``
assumes D centered at 0).

Parameters (Alg. 1 line 1; :func:`agents.bandit.smoothing.blocked_parameters`)
-------------------------------------------------------------------------------
``T_round = T^{1/2}``, ``T_batch = T / T_round`` (integers: ``T_batch =
round(sqrt T)`` in ``[1, T]``, ``T_round = ceil(T / T_batch)``, the last batch may be
shorter), ``eta = D / (T^{3/4} n^{1/2} L)``, ``zeta = D n^{1/2} / T^{1/4}``, ``alpha =
zeta / r`` (App. D). Clamp: ``zeta <= r / 2`` (App. D needs ``zeta <= r``; at ``zeta
= r`` nothing is learned). ``n`` is the hull dimension, ``D`` the diameter, ``L`` the
Lipschitz constant, ``B`` the bound on ``|f_t|`` (the paper uses ``LD`` for it), ``r``
the inner radius. The clamp is inactive only for ``T >= (2 D sqrt(n) / r)^4``: on the
registered polytopes (``r ≈ 0.21-0.33``, ``D sqrt(n) ≈ 2.6-8.5``) that is ``T >= 3.3e5``
(submodular base), ``5e6`` (flow), ``6.3e6`` (matroid), ``6.8e6`` (Birkhoff); below,
the game is played on half of the domain and the regret grows linearly (benchmark).

Privacy (the calibration of the paper's Lemma 5.1 / 5.4 is NOT used)
-------------------------------------------------------------------
Neighbouring sequences differ in one round ``t``, of one batch ``R``. With the
directions fixed (data-independent randomness: the guarantee holds conditionally on
them, hence unconditionally) and the earlier releases fixed (adaptive composition over
the tree, App. A / Smith-Thakurta footnote 1), only the term ``F_t s_t`` of one leaf
``g_R`` changes, by ``(n/zeta)(f_t - f'_t)(x_t) s_t``:

* per-leaf l2 sensitivity ``2 n B / zeta`` (Gaussian),
* per-leaf l1 sensitivity ``sqrt(n) * 2 n B / zeta`` (Laplace, coordinatewise; ``||s||_1
  <= sqrt(n)``).

The counter (binary tree over ``T_round`` leaves, ``levels = floor(log2 T_round) + 1``
real levels) is calibrated by :mod:`agents.privacy`: Laplace scale ``levels * sqrt(n)
* 2nB / (zeta eps)`` (pure eps-DP, ``noise="laplace"``), or analytic-Gaussian sigma for
l2 sensitivity ``sqrt(levels) * 2nB / zeta`` (``noise="gaussian"``, (eps, delta)-DP).
The played points are post-processing of the releases and the directions.

The paper's Lemma 5.1 instead takes ``lambda = T^{1/2} n L log T / eps`` from an l1
bound on a whole batch vector (``T_batch * n^{1/2} * M``) and counts ``log T`` levels;
Lemma 5.4 takes ``sigma`` from a high-probability bound on the batch vector's norm.
Both are derived from the norm of a batch sum rather than from what one round can
change, and count levels as ``log T`` (or ``ceil(log T)``) where a tree over ``T_round``
leaves has ``floor(log2 T_round) + 1``; see ``/work/shared/papers/README.md``.

Doubtful in the paper: line 6 of Alg. 1 minimizes ``||x||^2/2 - <eta s_{R-1}, x>``,
which moves *along* the summed gradients; NOISYOCO (Alg. 2, ``NoisyMap(-eta s)``,
``grad omega*(-eta s) = argmin ||x||^2/2 + <eta s, x>``) has the opposite sign, which
we use. Lemma 5.1's ``M = LD n/zeta = T^{1/4} n^{1/2} L`` holds with Alg. 1's ``zeta``
only for ``D = 1``.

Regret (Lemma 3.1 / Thm. 1.1, ``L, D = O(1)``): ``O(T^{3/4} n^{1/2} L D + T^{1/4} D mu
log T)`` with ``mu = E||noise||``: ``Õ(T^{3/4} n^{3/2} / eps)`` (Laplace, their
calibration) and ``Õ((T^{3/4} n^{1/2} + T^{1/2} n) / eps)`` (Gaussian), plus App. D's
``T zeta L D / r`` for the shrink.

Options:
    noise: ``"laplace"`` (default when ``delta = 0``) or ``"gaussian"`` (needs ``delta > 0``).
    counter: Continual counter name (default ``"tree"``).
"""

from __future__ import annotations

from agents.bandit.smoothing import (
    BlockedOnePointAgent,
    estimate_sensitivity,
    fw_projection_step,
    resolve_noise,
)
from agents.base import register
from agents.common import split_rng
from agents.counter_agent import CounterAgent

__all__ = ["PrivateProjectionFree"]


@register
class PrivateProjectionFree(CounterAgent, BlockedOnePointAgent):
    """Ene-Nguyen-Vladu PRIVATEBANDIT (Alg. 1 + App. D). See the module docstring."""

    name = "private-projection-free"
    description = ("Ene-Nguyen-Vladu PrivateBandit (Alg. 1): batched one-point estimates, "
                   "tree-aggregated, Frank-Wolfe (linear oracle only); Laplace or Gaussian")
    paper = ("Ene, Nguyen & Vladu, Projection-Free Bandit Optimization with Privacy "
             "Guarantees, AAAI 2021: Alg. 1, Lemma 3.1, Thm. 1.1, App. A, App. D")
    private = True

    def setup(self, noise: str | None = None, counter: str = "tree") -> None:
        self._setup_geometry()
        n = self.geometry.rank
        noise = resolve_noise(self.name, noise, self.delta)
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
