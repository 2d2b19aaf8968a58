r"""``submod-pftal``: private online submodular minimization, full information.

:class:`SubmodPFTAL`, Cardoso & Cummings, "Differentially Private Online Submodular
Optimization" (AISTATS 2019), Algorithm 1, Theorems 6 (privacy) and 7 (regret); its
non-private neighbour is ``hazan-kale-submodular``
(:mod:`agents.full_info.hazan_kale_submodular`).

It keeps ``x_t`` in ``K = [0, 1]^n``, play ``S_t = {i : x_t(i) >= u_t}``,
``u_t ~ U[0, 1)`` (``E[f(S_t)] = f_L(x_t)``, :func:`threshold_round`), and learn from
the greedy subgradient ``g_t`` of the Lovász extension at ``x_t`` (CC Lemma 2), whose
norms for ``f : 2^[n] -> [-M, M]`` are at most (CC Lemma 3)
``G_1 = min(4M, 2Mn)`` (l1) and ``G_2 = min(4M, 2M sqrt(n))`` (l2).

Chain, rounding, the proof of the bounds, the regularization and the paper's
calibration error: ``docs/algorithms/submod-pftal.md``.
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import Agent, register
from agents.common import clip_norm, split_rng
from agents.counter_agent import CounterAgent
from agents.lovasz import (
    lovasz_gradient_bounds,
    lovasz_pftal_step,
    require_submodular,
    threshold_round,
)
from agents.privacy.noise import default_noise
from dp_online_envs.validation import check_real

__all__ = [
    "SubmodPFTAL",
    "lovasz_gradient_bounds",
    "submod_pftal_regularization",
    "threshold_round",
]


# --------------------------------------------------------------------------- helpers
def submod_pftal_regularization(scale: float, n: int, horizon: int) -> float:
    """``H = M / sqrt(n T)``: CC Thm. 7's regularization, read as in their Thm. 9 (the
    printed ``M sqrt(T) / sqrt(n)`` is a misprint: ``docs/algorithms/submod-pftal.md``)."""
    return float(scale) / math.sqrt(n * horizon)


# -------------------------------------------------------------------- SubmodPFTAL
@register
class SubmodPFTAL(CounterAgent, Agent):
    r"""Cardoso-Cummings SubmodPFTAL (AISTATS 2019, Alg. 1): private FTAL on the
    H-regularized Lovász extensions ``f_L(x) + (H/2)||x||^2`` over ``K = [0, 1]^n``.

    Each round: play ``S_t = {i : x_t(i) >= u_t}``, feed the greedy subgradient ``g_t``
    (clipped to ``||g||_2 <= G_2``, ``||g||_1 <= G_1``; clips counted in
    :attr:`clipped_gradients`) to the continual counter (default ``"tree"``, the
    paper's TBAP), and play next ``x_{t+1} = Proj_K(-v_t / (H t))``, ``v_t`` the noisy
    ``sum_tau g_tau``; ``x_1 = 0``.

    Parameters: ``H = M / sqrt(n T)`` (Thm. 7 as read in
    :func:`submod_pftal_regularization`). Privacy (Thm. 6; replace-one, NOT the paper's
    ``L``): sensitivity ``2 G_1`` (Laplace, ``delta = 0``, eps-DP) or ``2 G_2``
    (Gaussian, ``delta > 0``, an extension). With ``gradient_bound="family"``:
    ``G_2 <- min(G_2, L)``, ``G_1 <- min(G_1, sqrt(n) L)`` (``L`` the family's Lipschitz
    constant). Regret (Thm. 7): ``O~(n^1.5 M sqrt(T) / eps)``. Details:
    ``docs/algorithms/submod-pftal.md``.

    Args:
        counter: Continual counter (a key of :data:`agents.privacy.COUNTERS`).
        regularization: ``H`` override.
        gradient_bound: ``"range"`` (default, every ``[-M, M]`` submodular function)
            or ``"family"``.
    """

    name = "submod-pftal"
    description = ("Cardoso-Cummings SubmodPFTAL (Alg. 1): private FTAL on regularized Lovász "
                   "extensions over [0,1]^n, random-threshold rounding to a set")
    paper = ("Cardoso & Cummings, Differentially Private Online Submodular Optimization, "
             "AISTATS 2019: Alg. 1, Thm. 6/7 (on Smith-Thakurta 2013 PFTAL)")
    feedback = "full"
    private = True
    requires = ("bound",)

    def setup(self, counter: str = "tree", regularization: float | None = None,
              gradient_bound: str = "range") -> None:
        p = self.problem
        require_submodular(self.name, p)
        n, T = p.dim, p.horizon
        #: ``M``: bound on ``|f_t|`` (the family's scale).
        self.scale = float(p.bound)
        g1, g2 = lovasz_gradient_bounds(self.scale, n)
        if gradient_bound == "family":
            lip = float(p.lipschitz)
            if math.isfinite(lip) and lip > 0:
                g1, g2 = min(g1, math.sqrt(n) * lip), min(g2, lip)
        elif gradient_bound != "range":
            raise ValueError(f"gradient_bound={gradient_bound!r}, expected 'range' or 'family'")
        self.gradient_bound_mode = gradient_bound
        #: ``(G_1, G_2)``: l1 / l2 clipping bounds of the greedy subgradients.
        self.gradient_bounds = (g1, g2)
        #: ``H``: weight of the regularizer ``(H/2)||x||^2``.
        self.H = (submod_pftal_regularization(self.scale, n, T) if regularization is None
                  else check_real("regularization", regularization, 0.0, low_inclusive=False))
        noise = default_noise(self.delta)
        #: Counter sensitivity: ``2 G_1`` (l1, Laplace) or ``2 G_2`` (l2, Gaussian).
        self.sensitivity = 2.0 * (g1 if noise == "laplace" else g2)
        self.privacy = self._use_counter(counter, noise, self.sensitivity).guarantee()

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        noise_rng, self._round_rng = split_rng(self.rng, 2)
        n = self.problem.dim
        self._counter = self._make_counter(noise_rng)
        self._x = np.zeros(n)
        #: Number of subgradients clipped (beyond rounding) to the bounds ``G_1, G_2``.
        self.clipped_gradients = 0

    @property
    def point_played(self) -> np.ndarray:
        """The fractional point ``x_t`` of the coming round (``E[1_{S_t}] = x_t``)."""
        return self._x.copy()

    def act(self):
        return threshold_round(self._x, self._round_rng.random())

    def update(self, action, feedback) -> None:
        theta = self.clip_feedback(feedback)
        g = self.problem.loss.subgradient(theta, self._x)
        g1, g2 = self.gradient_bounds
        g, c2 = clip_norm(g, g2, 2)
        g, c1 = clip_norm(g, g1, 1)
        self.clipped_gradients += int(c1 or c2)
        v = self.release(self._counter.add(g))
        self.t += 1
        self._x = lovasz_pftal_step(self.problem.domain, v, self.t, self.H)
