r"""``hazan-kale-submodular-bandit``: online submodular minimization with bandit feedback.

:class:`HazanKaleSubmodularBandit`, Hazan & Kale, "Online Submodular Minimization"
(JMLR 13, 2012), bandit algorithm: projected subgradient descent on one-point estimates
of the Lovász subgradient, regret ``O(n M T^{2/3})``. The sampling and the estimator
(:class:`ChainBandit`) are shared with the private ``bandit-submod-pftal``
(:mod:`agents.bandit.bandit_submod_pftal`; Cardoso & Cummings, AISTATS 2019, Alg. 2,
Lemmas 4-6).

Both keep ``x_t`` in ``K = [0, 1]^n`` (chain ``B_k``, weights ``mu_k``:
:mod:`agents.lovasz`), see only ``f_t(S_t)`` (clipped to ``[-M, M]``), play
``S_t = B_k`` with probability ``rho_k = (1 - gamma) mu_k + gamma / (n + 1)`` and
estimate the Lovász subgradient by one coordinate (CC Alg. 2):
``k = 0``: ``-(1/rho_0) f_t(B_0) e_{order[0]}``; ``k = n``:
``(1/rho_n) f_t(B_n) e_{order[n-1]}``; ``0 < k < n`` with a fair sign ``xi``:
``(2/rho_k) f_t(B_k) e_{order[k-1]}`` (``xi = +1``) or
``-(2/rho_k) f_t(B_k) e_{order[k]}`` (``xi = -1``).

Hazan-Kale: ``gamma = min(1, n / T^{1/3})``, ``eta = 1 / (4 M T^{2/3})``,
``x_1 = (1/2, ..., 1/2)``, ``x_{t+1} = Proj_K(x_t - eta g_t)``.

Unbiasedness, the clamps and the re-derived Hazan-Kale tuning:
``docs/algorithms/bandit-submod-pftal.md``.
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import Agent, register
from agents.lovasz import (
    chain_set,
    lovasz_chain,
    require_submodular,
    threshold_round,
)
from dp_online_envs.validation import check_real

__all__ = [
    "ChainBandit",
    "HazanKaleSubmodularBandit",
    "chain_probabilities",
    "hazan_kale_bandit_parameters",
    "one_point_coefficient",
    "one_point_estimate",
    "one_point_estimate_bound",
    "sample_chain_set",
]


# --------------------------------------------------------------------- parameters
def hazan_kale_bandit_parameters(scale: float, n: int, horizon: int) -> dict[str, float]:
    """Hazan-Kale bandit tuning: ``gamma = min(1, n / T^{1/3})``, ``eta = 1/(4 M T^{2/3})``;
    also the uncapped ``n / T^{1/3}``."""
    c = float(horizon) ** (1.0 / 3.0)
    raw = n / c
    return {"gamma": min(1.0, raw), "gamma_uncapped": raw,
            "eta": 1.0 / (4.0 * float(scale) * c * c)}


def one_point_estimate_bound(scale: float, n: int, gamma: float) -> float:
    """``G = c(n) (n+1) M / gamma`` (``c(n) = 2`` for ``n >= 2``, 1 for ``n = 1``): the
    largest l1 = l2 norm of the one-point estimate over all ``x``, draws and ``f`` with
    range ``[-M, M]``. The replace-one sensitivity of the counter input is ``2 G``."""
    return (2.0 if n >= 2 else 1.0) * (n + 1) * float(scale) / float(gamma)


# ---------------------------------------------------------------------- estimator
def chain_probabilities(mu: np.ndarray, gamma: float) -> np.ndarray:
    """``rho_k = (1 - gamma) mu_k + gamma / (n + 1)`` (CC Alg. 2 line 3)."""
    mu = np.asarray(mu, dtype=np.float64)
    return (1.0 - gamma) * mu + gamma / mu.size


def sample_chain_set(x: np.ndarray, order: np.ndarray, gamma: float,
                     rng: np.random.Generator) -> tuple[int, np.ndarray]:
    """Draws ``S = B_k`` with probability ``rho_k``; returns ``(k, 1_S)`` (int8).

    With probability ``gamma`` a uniform index of ``0..n`` (exploration), otherwise the
    threshold set ``{i : x_i >= u}`` (``B_k`` with probability ``mu_k``, ``k = |S|``).
    Always three draws from ``rng``, whichever branch.
    """
    n = len(order)
    explore, u, j = rng.random(), rng.random(), int(rng.integers(n + 1))
    if explore < gamma:
        return j, chain_set(order, j)
    s = threshold_round(x, u)
    return int(s.sum()), s


def one_point_coefficient(order: np.ndarray, rho: np.ndarray, k: int,
                          xi: int) -> tuple[int, float]:
    """``(j, c)`` with ``g = c f(B_k) e_j`` the one-point estimate of CC Alg. 2.

    ``xi`` (``+1`` / ``-1``) is used only for ``0 < k < n``.
    """
    n = len(order)
    if k == 0:
        return int(order[0]), -1.0 / float(rho[0])
    if k == n:
        return int(order[n - 1]), 1.0 / float(rho[n])
    if xi > 0:
        return int(order[k - 1]), 2.0 / float(rho[k])
    return int(order[k]), -2.0 / float(rho[k])


def one_point_estimate(order: np.ndarray, rho: np.ndarray, k: int, xi: int,
                       value: float) -> np.ndarray:
    """The dense estimate ``g = c f(B_k) e_j`` (:func:`one_point_coefficient`)."""
    j, c = one_point_coefficient(order, rho, k, xi)
    g = np.zeros(len(order))
    g[j] = c * float(value)
    return g


class ChainBandit(Agent):
    """Shared play / estimate logic of the chain bandits (``hazan-kale-submodular-bandit``
    and ``bandit-submod-pftal``): sample ``S_t`` on the chain of ``x_t``, build ``g_t``.

    A subclass sets ``gamma`` and ``estimate_bound`` in ``setup`` and calls
    :meth:`_start` in ``reset``.
    """

    feedback = "bandit"
    requires = ("bound",)

    def _start(self, x1: np.ndarray, play_rng: np.random.Generator) -> None:
        self._x = np.asarray(x1, dtype=np.float64)
        self._play_rng = play_rng
        self._pending = None
        #: Estimates whose norm exceeded the bound ``G`` (clipped; 0 for valid feedback).
        self.clipped_estimates = 0

    @property
    def point_played(self) -> np.ndarray:
        """The fractional point ``x_t`` of the coming round."""
        return self._x.copy()

    def act(self):
        order, mu = lovasz_chain(self._x)
        rho = chain_probabilities(mu, self.gamma)
        k, s = sample_chain_set(self._x, order, self.gamma, self._play_rng)
        xi = 1 if self._play_rng.random() < 0.5 else -1
        self._pending = (order, rho, k, xi)
        return s

    def _estimate(self, feedback) -> np.ndarray:
        if self._pending is None:
            raise RuntimeError(f"{self.name}.update called before act")
        value = float(self.clip_feedback(feedback)[0])
        order, rho, k, xi = self._pending
        self._pending = None
        j, c = one_point_coefficient(order, rho, k, xi)
        g = np.zeros(self.problem.dim)
        entry = c * value
        bound = self.estimate_bound
        if abs(entry) > bound:
            if abs(entry) > bound * (1.0 + 1e-9):
                self.clipped_estimates += 1
            entry = math.copysign(bound, entry)
        g[j] = entry
        return g


# ------------------------------------------------------------------- Hazan-Kale
@register
class HazanKaleSubmodularBandit(ChainBandit):
    r"""Hazan-Kale bandit online submodular minimization (JMLR 2012), non-private.

    Projected subgradient descent ``x_{t+1} = Proj_K(x_t - eta g_t)`` on the one-point
    estimates (module docstring) from ``x_1 = 1/2``, ``gamma = min(1, n / T^{1/3})``,
    ``eta = 1 / (4 M T^{2/3})``; expected regret ``O(n M T^{2/3})``.

    Args:
        gamma: Exploration probability override, in ``(0, 1]``.
        eta: Step size override, ``> 0``.
    """

    name = "hazan-kale-submodular-bandit"
    description = ("non-private Hazan-Kale bandit submodular minimization: one-point Lovász "
                   "subgradient estimates, projected subgradient descent, T^(2/3) regret")
    paper = "Hazan & Kale, Online Submodular Minimization, JMLR 13 (2012), bandit setting"
    private = False

    def setup(self, gamma: float | None = None, eta: float | None = None) -> None:
        p = self.problem
        require_submodular(self.name, p)
        self.scale = float(p.bound)
        params = hazan_kale_bandit_parameters(self.scale, p.dim, p.horizon)
        self.gamma_uncapped = params["gamma_uncapped"]
        self.gamma = params["gamma"] if gamma is None else check_real(
            "gamma", gamma, 0.0, 1.0, low_inclusive=False)
        self.eta = params["eta"] if eta is None else check_real("eta", eta, 0.0,
                                                                low_inclusive=False)
        self.estimate_bound = one_point_estimate_bound(self.scale, p.dim, self.gamma)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._start(np.full(self.problem.dim, 0.5), self.rng)

    def update(self, action, feedback) -> None:
        g = self._estimate(feedback)
        self.t += 1
        self._x = self.problem.domain.project(self._x - self.eta * g)
