r"""Online submodular minimization, full information: SubmodPFTAL and Hazan-Kale.

* ``submod-pftal`` -- :class:`SubmodPFTAL`, Cardoso & Cummings, "Differentially
  Private Online Submodular Optimization" (AISTATS 2019), Algorithm 1, Theorems 6
  (privacy) and 7 (regret).
* ``hazan-kale-submodular`` -- :class:`HazanKaleSubmodular`, Hazan & Kale, "Online
  Submodular Minimization" (JMLR 2012), full-information algorithm: projected
  subgradient descent on the Lovász extension.

Both keep a point ``x_t`` of the cube ``K = [0, 1]^n`` (the hull of the ground set's
indicators), play the random level set

    S_t = {i : x_t(i) >= u_t},   u_t ~ U[0, 1)                 (:func:`threshold_round`)

(``P(i in S_t) = x_t(i)``; the level sets are the chain of ``x_t``, and
``E[f(S_t)] = f_L(x_t)``, the Lovász extension -- CC Sec. 2.2 / Def. 6), and learn from
the greedy subgradient ``g_t = problem.loss.subgradient(theta_t, x_t)`` of ``f_L`` at
the fractional point ``x_t`` (CC Lemma 2).

Gradient bounds (both learners). For a submodular ``f : 2^[n] -> [-M, M]`` every
greedy vector satisfies ``||g||_1 <= 4M`` (CC Lemma 3, after Jegelka-Bilmes; proof:
the positive entries sum to at most ``f(P) - f(empty) <= 2M`` with ``P = {g > 0}``,
by submodularity along the chain, the negative ones to at most ``f(U) - f([n]) <= 2M``
with ``U = {g >= 0}``), and each entry is a marginal in ``[-2M, 2M]``. Hence

    G_1 = min(4M, 2Mn)     >= ||g||_1,
    G_2 = min(4M, 2M sqrt(n)) >= ||g||_2,

valid for every submodular function with range ``[-M, M]`` (``M = problem.bound``, the
family's ``scale``). The bound ``2M sqrt(n)`` alone (entries in ``[-2M, 2M]``) is
smaller only for ``n < 4``.
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import Agent, check_number, register
from agents.common import clip_norm, split_rng
from agents.counter_agent import CounterAgent
from agents.lovasz import (
    lovasz_gradient_bounds,
    lovasz_pftal_step,
    require_submodular,
    threshold_round,
)
from agents.privacy.noise import default_noise

__all__ = [
    "HazanKaleSubmodular",
    "SubmodPFTAL",
    "hazan_kale_eta",
    "lovasz_gradient_bounds",
    "submod_pftal_regularization",
    "threshold_round",
]


# --------------------------------------------------------------------------- helpers
def submod_pftal_regularization(scale: float, n: int, horizon: int) -> float:
    """``H = M / sqrt(n T)``: CC Thm. 7's regularization, read as in their Thm. 9.

    Thm. 7 prints ``H = O(M sqrt(T) / sqrt(n))``, which grows with T and makes the
    bias ``T H D^2 / 2 = M sqrt(n) T^1.5 / 2`` superlinear, contradicting the claimed
    ``O~(n^1.5 M sqrt(T) / eps)``. The value ``M / sqrt(n T)`` -- the full-information
    analogue of Thm. 9's bandit ``H = M / (sqrt(n) T^(1/4))`` -- gives exactly the
    claimed rate: privacy term ``16 n M^2 log^2.5 T / (eps H) = 16 M n^1.5 sqrt(T)
    log^2.5 T / eps``, bias ``H n T / 2 = M sqrt(n T) / 2``.
    """
    return float(scale) / math.sqrt(n * horizon)


def hazan_kale_eta(scale: float, n: int, horizon: int) -> float:
    """``eta = D / (G sqrt(T))`` with ``D = sqrt(n)`` (diameter of ``[0,1]^n``) and
    ``G = G_2 = min(4M, 2M sqrt(n))`` (:func:`lovasz_gradient_bounds`): projected
    subgradient descent then has regret ``<= D G sqrt(T)`` on the Lovász extensions
    (Zinkevich 2003), ``<= 4 M sqrt(n T)``, and so in expectation on the rounded sets."""
    return math.sqrt(n) / (lovasz_gradient_bounds(scale, n)[1] * math.sqrt(horizon))


# -------------------------------------------------------------------- SubmodPFTAL
@register
class SubmodPFTAL(CounterAgent, Agent):
    r"""Cardoso-Cummings SubmodPFTAL (AISTATS 2019, Alg. 1): private FTAL on the
    H-regularized Lovász extensions ``f_L(x) + (H/2)||x||^2`` over ``K = [0, 1]^n``.

    Each round: play ``S_t = {i : x_t(i) >= u_t}``, observe ``theta_t``, feed the clipped
    greedy subgradient ``g_t`` of ``f_L`` at ``x_t`` to the continual counter and play
    next

        x_{t+1} = argmin_{x in K} <vhat_t + H sum_tau x_tau, x> + (H/2) sum_tau ||x - x_tau||^2
                = Proj_K(-vhat_t / (H t))                         (clipping to [0, 1]^n),

    ``vhat_t`` the counter's noisy ``sum_tau g_tau`` (default ``counter="tree"``, the
    paper's TBAP = Smith-Thakurta App. A). The paper passes ``g_t + H x_t`` to TBAP
    with norm bound ``L = 4M + H sqrt(n)``; ``H x_t`` is a function of past releases,
    so it is added outside the counter (same update, less noise). ``x_1 = 0``
    (``S_1 = empty``; the paper: "any subset"), the regularizer's minimizer.

    Privacy (Thm. 6). Clipping ``g_t`` to ``||g||_2 <= G_2`` and ``||g||_1 <= G_1``
    (module docstring; never active for admissible submodular losses, counted in
    :attr:`clipped_gradients`) bounds the change of one counter input when one round's
    function is replaced by ``Delta_1 = 2 G_1`` (Laplace, ``delta = 0``, the paper's
    pure epsilon-DP) or ``Delta_2 = 2 G_2`` (Gaussian, ``delta > 0``, an extension).
    The paper's TBAP calibrates to the norm bound ``L`` itself rather than the
    replacement distance ``2L`` (as Smith-Thakurta's App. A), i.e. half the needed
    noise. The rounding draws ``u_t`` are independent of the data (post-processing).
    With ``gradient_bound="family"`` the bounds are additionally capped by the loss
    family's own Lipschitz constant (``G_2 <- min(G_2, L)``, ``G_1 <- min(G_1,
    sqrt(n) L)``), valid for the family's admissible parameters only.

    Regularization (Thm. 7): ``H = M / sqrt(n T)`` (:func:`submod_pftal_regularization`,
    which explains why the printed ``M sqrt(T)/sqrt(n)`` cannot be meant);
    ``regularization=`` overrides it. Regret (Thm. 7): ``O~(n^1.5 M sqrt(T) / eps)``.

    Options:
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
                  else check_number("regularization", regularization, positive=True))
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


# -------------------------------------------------------------------- Hazan-Kale
@register
class HazanKaleSubmodular(Agent):
    r"""Hazan-Kale online submodular minimization, full information (JMLR 2012).

    Projected subgradient descent on the Lovász extensions over ``K = [0, 1]^n``:
    ``x_{t+1} = Proj_K(x_t - eta g_t)`` from ``x_1 = (1/2, ..., 1/2)``, with
    ``eta = D / (G sqrt(T))``, ``D = sqrt(n)``, ``G = min(4M, 2M sqrt(n))``
    (:func:`hazan_kale_eta`); plays ``S_t = {i : x_t(i) >= u_t}``, ``u_t ~ U[0, 1)``.
    Expected regret ``<= D G sqrt(T) <= 4 M sqrt(n T)``.

    Options:
        eta: Step size override.
    """

    name = "hazan-kale-submodular"
    description = ("non-private Hazan-Kale online submodular minimization: projected "
                   "subgradient descent on the Lovász extension, threshold rounding")
    paper = "Hazan & Kale, Online Submodular Minimization, JMLR 13 (2012), full-information case"
    feedback = "full"
    private = False
    requires = ("bound",)

    def setup(self, eta: float | None = None) -> None:
        p = self.problem
        require_submodular(self.name, p)
        self.scale = float(p.bound)
        self.eta = (hazan_kale_eta(self.scale, p.dim, p.horizon) if eta is None
                    else check_number("eta", eta, positive=True))
        #: ``D G sqrt(T)``: the regret bound of the chosen tuning (for the default eta).
        self.regret_bound = (math.sqrt(p.dim) * lovasz_gradient_bounds(self.scale, p.dim)[1]
                             * math.sqrt(p.horizon))

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._x = np.full(self.problem.dim, 0.5)

    @property
    def point_played(self) -> np.ndarray:
        """The fractional point ``x_t`` of the coming round."""
        return self._x.copy()

    def act(self):
        return threshold_round(self._x, self.rng.random())

    def update(self, action, feedback) -> None:
        theta = self.clip_feedback(feedback)
        g = self.problem.loss.subgradient(theta, self._x)
        self.t += 1
        self._x = self.problem.domain.project(self._x - self.eta * g)
