"""Online Frank-Wolfe (Hazan & Kale, ICML 2012): projection-free, non-private."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np

from agents.base import Agent, register
from dp_online_envs.validation import check_real


@register
class OnlineFrankWolfe(Agent):
    r"""Online Frank-Wolfe / online conditional gradient (Hazan & Kale, "Projection-free
    Online Learning", ICML 2012; in the form of Hazan, *Introduction to Online Convex
    Optimization* (2016), Algorithm "online conditional gradient", Theorem 7.3).

    With ``F_t(x) = eta sum_{s<=t} <g_s, x> + ||x - x_1||^2`` (``g_s`` the subgradient of
    ``f_s`` at the played ``x_s``; ``theta_s`` for linear losses)::

        v_t     = argmin_{v in X} <grad F_t(x_t), v>,  grad F_t(x_t) = eta sum g_s + 2 (x_t - x_1)
        x_{t+1} = x_t + gamma_t (v_t - x_t),          gamma_t = min(1, 2 / sqrt(t))

    with ``eta = D / (2 G T^{3/4})`` (``D`` the l2 diameter, ``G`` the Lipschitz
    constant); regret ``<= 8 D G T^{3/4}`` for convex Lipschitz losses (Thm. 7.3). Only
    the linear oracle ``domain.linear_minimizer`` is used: ``x_1`` is the domain's center
    (a feasible point; a vertex if the center were not certified) and every later point
    is a convex combination of ``x_1`` and oracle outputs, hence feasible without any
    projection. ``gamma_1 = 1`` (the cap of the formula ``2/sqrt(t)`` at 1) makes ``x_2``
    a vertex. Box action spaces only (it plays interior points).

    Args:
        eta: Learning rate override (default ``D / (2 G T^{3/4})``).
    """

    name = "online-fw"
    description = "Hazan-Kale online Frank-Wolfe (projection-free, linear oracle only), T^{3/4} regret"
    paper = ("Hazan & Kale, Projection-free Online Learning, ICML 2012; Hazan, Introduction "
             "to OCO (2016), Thm. 7.3")
    feedback = "full"
    private = False
    requires = ("lipschitz", "diameter")

    def setup(self, eta: float | None = None) -> None:
        p = self.problem
        if not isinstance(p.domain.action_space, gym.spaces.Box):
            raise ValueError(f"online-fw plays points of a convex set (Box actions); "
                             f"{p.domain!r} has {p.domain.action_space}")
        self.eta = (p.diameter / (2.0 * p.lipschitz * p.horizon**0.75) if eta is None
                    else check_real("eta", eta, 0.0))

    @staticmethod
    def step_size(t: int) -> float:
        """``gamma_t = min(1, 2 / sqrt(t))``."""
        return min(1.0, 2.0 / math.sqrt(t))

    @property
    def regret_bound(self) -> float:
        """``8 D G T^{3/4}`` (Hazan 2016, Thm. 7.3)."""
        p = self.problem
        return 8.0 * p.diameter * p.lipschitz * p.horizon**0.75

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        dom = self.problem.domain
        center = np.asarray(dom.center, dtype=np.float64)
        if not dom.contains(center, 1e-12):
            center = dom.linear_minimizer(np.ones(dom.dim))
        self._x1 = center.copy()
        self._x = center.copy()
        self._grad_sum = np.zeros(dom.dim)

    def act(self):
        return self._x.copy()

    def update(self, action, feedback) -> None:
        theta = self.clip_feedback(feedback)
        self._grad_sum += self.problem.loss.subgradient(theta, self._x)
        self.t += 1
        grad_f = self.eta * self._grad_sum + 2.0 * (self._x - self._x1)
        v = self.problem.domain.linear_minimizer(grad_f)
        gamma = self.step_size(self.t)
        self._x = self._x + gamma * (v - self._x)
