r"""Smith-Thakurta bandit PFTAL: private follow-the-approximate-leader with one-point
gradient estimates.

``bandit-pftal`` -- :class:`BanditPFTAL`, Smith & Thakurta, "(Nearly) Optimal
Algorithms for Private Online Learning in Full-information and Bandit Settings"
(NeurIPS 2013), Sec. 3.2 and App. E: Algorithm 3, Theorem 5 (privacy), Theorem 6
(regret, H-strongly convex losses, oblivious / adaptive adversary) and Theorem 17
(App. E.3, general convex losses through the regularizer of App. C).

Algorithm (Alg. 3, in the hull coordinates of :mod:`agents.bandit.smoothing`)
----------------------------------------------------------------------------
Round ``t``: draw ``s_t`` uniform on the unit sphere of ``R^p`` (``p`` = dimension of
the domain's affine hull, ``u_t = basis @ s_t``), play ``x_t = w_t + beta u_t`` and
observe ``f_t(x_t)`` (clipped to ``[-B, B]``); feed the one-point estimate

    g_t = (p / beta) f_t(x_t) s_t

to a continual counter (binary tree, App. A Alg. 2, by default), receive the noisy
prefix sum ``v_t`` (the release) and move to the approximate leader over the shrunk set
``C_xi = c + (1 - xi)(C - c)``, ``xi = beta / r``:

    w_{t+1} = argmin_{w in C_xi} <v_t, w> + (H/2) sum_{tau<=t} ||w - w_tau||^2
            = Proj_{C_xi}(wbar_t - v_t / (H t))                       (eq. (9))

(:func:`agents.common.ftal_leader` on the shrunk set; ``Proj_{C_xi}(z) =
c + (1 - xi)(Proj_C(c + (z - c)/(1 - xi)) - c)``). ``w_1 = c`` (Alg. 3 line 1: any
point of C). ``x_t`` is in C because ``w_t`` is in ``C_xi`` and ``c + r u_t`` in the
inner ball (App. E; :mod:`agents.bandit.smoothing`). The paper shrinks about the
origin (``r B^p`` centered at 0); we shrink about the inner ball's center ``c`` (the
origin for the registered l2 balls).

General convex losses (App. E.3, Thm. 17): Alg. 3 runs on
``h_t(w) = f_t(w) + (H/2) ||w - c||^2`` with ``H = 1 / T^{1/4}``. The regularizer's
gradient ``H (w_t - c)`` is a function of past releases, so it is added outside the
counter (same algorithm, less noise), and the leader becomes
``w_{t+1} = Proj_{C_xi}(c - v_t / (H t))``.

Parameters (Theorem 6 / Theorem 17, ``p`` the hull dimension)
------------------------------------------------------------
============================  ==================  =================  ===============
problem                       ``beta``            ``H``              regret (Õ)
============================  ==================  =================  ===============
strongly convex, oblivious    ``p / T^{1/3}``     ``H_f``            ``p T^{2/3} chi``
strongly convex, adaptive     ``p / T^{1/4}``     ``H_f``            ``p T^{3/4} chi``
convex (Thm. 17), either      ``p / T^{1/4}``     ``1 / T^{1/4}``    ``p T^{3/4} chi``
============================  ==================  =================  ===============

``xi = beta / r`` always (``r`` the inner radius). Clamp: ``beta <= r / 2`` (``xi <=
1/2``, :data:`agents.bandit.smoothing.MAX_SHRINK`); the formula needs ``xi < 1`` and
exceeds it for small T (``p = 5``, ``r = 1``: ``beta > r/2`` for ``T < 1000``
(oblivious) and ``T < 10^4`` (adaptive, convex)). ``adversary="adaptive"`` is the
default: its guarantee holds against every adversary.

Privacy (Theorem 5)
-------------------
The counter's input ``g_t`` depends on the data only through ``f_t(x_t)``;
``x_t`` is a function of earlier releases and of the data-independent ``s_t``, so by
adaptive composition the releases are as private as the counter, conditionally on the
directions, hence unconditionally; actions are post-processing. Sensitivity
(replace-one, :func:`agents.bandit.smoothing.estimate_sensitivity`): ``||g_t - g'_t||_2
<= 2 p B / beta``, ``||.||_1 <= 2 p^{3/2} B / beta``.

* ``delta = 0`` (``noise="laplace"``): coordinatewise Laplace, per node scale
  ``levels * 2 p^{3/2} B / (beta eps)``, ``levels = floor(log2 T) + 1`` -- pure
  epsilon-DP as in the paper.
* ``delta > 0`` (``noise="gaussian"``, an extension): analytic Gaussian for l2
  sensitivity ``sqrt(levels) * 2 p B / beta``.

The paper (Alg. 3 lines 3 and 7, Alg. 2 line 9) passes the L2-bound ``p B / beta`` to
the tree and draws one l2-"Laplace" vector per node with density ``∝ exp(-||n|| eps /
(mu (ceil(log2 T) + 1)))``, ``mu = p B / beta``: that is calibrated to the norm of one
estimate, while replacing a loss moves it by up to ``2 p B / beta`` -- half the noise
its own neighbouring relation needs. We calibrate to ``2 p B / beta``.
:attr:`privacy` is the accountant's guarantee for the counter.

Doubtful in the paper: eq. (32) (and (38)-(39)) writes the privacy term as
``2 p (pB/beta + H||C||)^2 log^2.5 T / (beta eps H)``. Following Lemma 8 (``sum_t
||n_t|| / t`` times ``2 (pB/beta + H||C||) / H`` with ``E||n_t|| = O(p (pB/beta)
log^1.5 T / eps)``) the term is ``O(p (pB/beta)(pB/beta + H||C||) log^2.5 T / (eps
H))`` -- without the extra ``1/beta``. With the extra factor, Theorem 6's oblivious
choice ``beta = p / T^{1/3}`` would give a privacy term ``~ B^2 T / (eps H)``, linear in
T, contradicting the stated ``Õ(p T^{2/3})``; without it the stated rates follow (and
Thm. 17's ``Õ(p T^{3/4})`` with ``H = T^{-1/4}``). Also Appendix D's non-private
Theorem 12 uses ``beta = p^{2/3} / T^{1/4}`` (adaptive) and ``p^{2/3} / T^{1/3}``
(oblivious), whereas Theorem 6 and E.2 use ``p / T^{1/4}`` and ``p / T^{1/3}``; we
follow Theorem 6 (the private algorithm).

Options:
    adversary: ``"adaptive"`` (default) or ``"oblivious"`` (Theorem 6's two choices of
        ``beta``; only matters for strongly convex problems).
    counter: Continual counter name (default ``"tree"``, App. A).
    noise: ``"laplace"`` / ``"gaussian"``; default Laplace if ``delta = 0``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.bandit.smoothing import (
    ShrunkSet,
    SmoothingGeometry,
    clamp_radius,
    estimate_sensitivity,
    require_points,
    resolve_noise,
)
from agents.base import Agent, register
from agents.common import ftal_leader, split_rng
from agents.counter_agent import CounterAgent

__all__ = ["BanditPFTAL", "BanditPFTALParameters", "bandit_pftal_parameters"]

ADVERSARIES = ("oblivious", "adaptive")


@dataclass(frozen=True)
class BanditPFTALParameters:
    """Theorem 6 / Theorem 17 parameters (module docstring).

    Attributes:
        mode: ``"strongly-convex"`` (Thm. 6) or ``"regularized"`` (Thm. 17).
        adversary: ``"oblivious"`` or ``"adaptive"``.
        H: Strong convexity modulus FTAL uses (``H_f``, or ``1/T^{1/4}``).
        regularization: ``H`` of the added regularizer (0 in strongly convex mode).
        beta_formula: ``beta`` before the clamp.
        beta: Smoothing radius used.
        xi: Shrink factor ``beta / r``.
        beta_clamped: Whether ``beta`` was clamped to ``r/2``.
    """

    mode: str
    adversary: str
    H: float
    regularization: float
    beta_formula: float
    beta: float
    xi: float
    beta_clamped: bool


def bandit_pftal_parameters(horizon: int, p: int, radius: float, strong_convexity: float,
                            adversary: str = "adaptive") -> BanditPFTALParameters:
    """``beta``, ``xi``, ``H`` of Theorem 6 (``H_f > 0``) or Theorem 17 (``H_f = 0``).

    Raises:
        ValueError: On an unknown adversary.
    """
    if adversary not in ADVERSARIES:
        raise ValueError(f"adversary={adversary!r}, expected one of {ADVERSARIES}")
    T = int(horizon)
    if strong_convexity > 0:
        mode, H, reg = "strongly-convex", float(strong_convexity), 0.0
        beta_f = p / T ** (1 / 3) if adversary == "oblivious" else p / T**0.25
    else:
        mode, H = "regularized", 1.0 / T**0.25
        reg = H
        beta_f = p / T**0.25
    beta, clamped = clamp_radius(beta_f, radius)
    return BanditPFTALParameters(mode, adversary, H, reg, beta_f, beta, beta / radius, clamped)


@register
class BanditPFTAL(CounterAgent, Agent):
    """Smith-Thakurta bandit PFTAL (Alg. 3; Thm. 5, 6, 17). See the module docstring."""

    name = "bandit-pftal"
    description = ("Smith-Thakurta private bandit FTAL (Alg. 3): one-point estimates on the "
                   "shrunk set, tree-aggregated; T^{2/3} (obliv., strongly cvx) / T^{3/4}")
    paper = ("Smith & Thakurta, (Nearly) Optimal Algorithms for Private Online Learning in "
             "Full-information and Bandit Settings, NeurIPS 2013: Alg. 3, Thm. 5, 6, 17")
    feedback = "bandit"
    private = True
    requires = ("bound",)

    def setup(self, adversary: str = "adaptive", counter: str = "tree",
              noise: str | None = None) -> None:
        p = self.problem
        require_points(self.name, p.domain)
        if not p.loss.convex:
            raise ValueError(f"{self.name} needs convex losses, got {p.loss!r}")
        self.geometry = SmoothingGeometry.of(p.domain)
        k = self.geometry.rank
        #: Theorem 6 / 17 parameters.
        self.params = bandit_pftal_parameters(p.horizon, k, self.geometry.radius,
                                              float(p.strong_convexity), adversary)
        self.beta, self.xi, self.H = self.params.beta, self.params.xi, self.params.H
        noise = resolve_noise(self.name, noise, self.delta)
        #: l1 (Laplace) / l2 (Gaussian) replace-one sensitivity of one estimate.
        self.sensitivity = estimate_sensitivity(k, p.bound, self.beta,
                                                1 if noise == "laplace" else 2)
        # The counter sums estimates in the rank-``k`` coordinates of the geometry.
        self.privacy = self._use_counter(counter, noise, self.sensitivity, dim=k).guarantee()
        self._shrunk = ShrunkSet(p.domain, self.geometry.center, self.xi)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._dir_rng, noise_rng = split_rng(self.rng, 2)
        self._counter = self._make_counter(noise_rng)
        self._w = self.geometry.center.copy()
        self._w_sum = np.zeros(self.problem.dim)
        self._s = None

    @property
    def center_point(self) -> np.ndarray:
        """``w_t``: the leader of the coming round (before the perturbation)."""
        return self._w.copy()

    def act(self):
        self._s, u = self.geometry.direction(self._dir_rng)
        return self._w + self.beta * u

    def update(self, action, feedback) -> None:
        if self._s is None:
            raise RuntimeError(f"{self.name}.update called before act")
        f = float(self.clip_feedback(feedback)[0])
        g = self.geometry.estimate(f, self._s, self.beta)
        v = self.release(self._counter.add(g))
        self.t += 1
        self._w_sum += self._w
        v_amb = self.geometry.lift(v)
        if self.params.mode == "regularized":
            # h_t = f_t + (H/2)||w - c||^2: leader Proj(c - v / (H t)).
            w_sum = self.t * self.geometry.center
        else:
            w_sum = self._w_sum
        self._w = ftal_leader(self._shrunk, v_amb, w_sum, self.t, self.H)
        self._s = None
