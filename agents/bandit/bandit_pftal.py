r"""Smith-Thakurta bandit PFTAL: private follow-the-approximate-leader with one-point
gradient estimates.

``bandit-pftal`` -- :class:`BanditPFTAL`. Smith & Thakurta, "(Nearly) Optimal
Algorithms for Private Online Learning in Full-information and Bandit Settings"
(NeurIPS 2013), Sec. 3.2 and App. E: Algorithm 3, Theorem 5 (privacy), Theorem 6
(regret, H-strongly convex losses) and Theorem 17 (App. E.3, convex losses with the
regularizer of App. C).

Round ``t`` (hull coordinates of :mod:`agents.bandit.smoothing`, ``p`` the hull
dimension): play ``x_t = w_t + beta u_t``, ``u_t = basis @ s_t``; feed
``g_t = (p / beta) f_t(x_t) s_t`` (feedback clipped to ``[-B, B]``) to a continual
counter, whose release is ``v_t``; then (eq. (9))

    w_{t+1} = Proj_{C_xi}(wbar_t - v_t / (H t)),   C_xi = c + (1 - xi)(C - c),  w_1 = c,

and for convex losses (Thm. 17, ``h_t = f_t + (H/2)||w - c||^2``)
``w_{t+1} = Proj_{C_xi}(c - v_t / (H t))``.

Parameters (``r`` the inner radius):

============================  ==================  =================  ===============
problem                       ``beta``            ``H``              regret (Õ)
============================  ==================  =================  ===============
strongly convex, oblivious    ``p / T^{1/3}``     ``H_f``            ``p T^{2/3} chi``
strongly convex, adaptive     ``p / T^{1/4}``     ``H_f``            ``p T^{3/4} chi``
convex (Thm. 17), either      ``p / T^{1/4}``     ``1 / T^{1/4}``    ``p T^{3/4} chi``
============================  ==================  =================  ===============

``chi = BR + (1 + R/r) L + (H ||C||_2 + B)^2 / H * (1 + B / eps)`` (Thm. 6; ``R`` the
outer radius). ``xi = beta / r``. Clamp: ``beta <= r / 2`` (``xi <= 1/2``).

Privacy (Thm. 5, replace-one; NOT the paper's ``p B / beta``): sensitivity
``2 p B / beta`` (l2), ``2 p^{3/2} B / beta`` (l1). ``delta = 0``: coordinatewise
Laplace, per node scale ``levels 2 p^{3/2} B / (beta eps)``,
``levels = floor(log2 T) + 1`` (eps-DP). ``delta > 0`` (an extension): exact discrete
Gaussian for ``levels`` blocks of l2 sensitivity ``2 p B / beta``. :attr:`privacy` is the
accountant's guarantee for the counter.

Why, the paper's calibration error and its eq. (32): ``docs/algorithms/bandit-pftal.md``.
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
    """Smith-Thakurta bandit PFTAL (Alg. 3; Thm. 5, 6, 17); see the module docstring and
    ``docs/algorithms/bandit-pftal.md``.

    Args:
        adversary: ``"adaptive"`` (default) or ``"oblivious"`` (Theorem 6's two choices
            of ``beta``; only matters for strongly convex problems).
        counter: Continual counter name (default ``"tree"``, App. A).
        noise: ``"laplace"`` / ``"gaussian"``; default Laplace if ``delta = 0``.
    """

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
