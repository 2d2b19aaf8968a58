r"""Shared pieces of the online submodular minimizers (Lovász-extension learners).

Used by the full-information ``submod-pftal`` (:mod:`agents.full_info.submod_pftal`) and
``hazan-kale-submodular`` (:mod:`agents.full_info.hazan_kale_submodular`) and the bandit
``bandit-submod-pftal`` (:mod:`agents.bandit.bandit_submod_pftal`) and
``hazan-kale-submodular-bandit`` (:mod:`agents.bandit.hazan_kale_submodular_bandit`). All
keep a point ``x_t`` of ``K = [0, 1]^n`` and play a set of its chain (Cardoso-Cummings
AISTATS 2019, Def. 5-6, Lemmas 2-3, Alg. 1-2):

* chain: ``B_k = order[:k]``, ``order`` the *stable* decreasing argsort of ``x``,
  ``x = sum_k mu_k 1_{B_k}`` with ``mu_0 = 1 - x_(1)``, ``mu_k = x_(k) - x_(k+1)``,
  ``mu_n = x_(n)`` (:func:`lovasz_chain`); ``f_L(x) = sum_k mu_k f(B_k)``;
* threshold rounding ``S = {i : x_i >= u}``, ``u ~ U[0, 1)``: ``P(S = B_k) = mu_k``,
  ``E[f(S)] = f_L(x)`` (:func:`threshold_round`);
* gradient bounds ``G_1 = min(4M, 2Mn)``, ``G_2 = min(4M, 2M sqrt(n))``
  (:func:`lovasz_gradient_bounds`);
* the PFTAL step ``x_{t+1} = Proj_K(-v_t / (H t))`` (:func:`lovasz_pftal_step`).

Derivations: ``docs/algorithms/submod-pftal.md``.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np

from agents.common import ftal_leader
from dp_online_envs.domains.base import Domain
from dp_online_envs.losses import SubmodularLoss

__all__ = [
    "chain_set",
    "lovasz_chain",
    "lovasz_gradient_bounds",
    "lovasz_pftal_step",
    "require_submodular",
    "threshold_round",
]


def threshold_round(x: np.ndarray, u: float) -> np.ndarray:
    """The level set ``{i : x_i >= u}`` as a 0/1 ``int8`` vector (a ``MultiBinary`` action).

    With ``u ~ U[0, 1)`` and ``x`` in ``[0, 1]^n``: ``P(i in S) = x_i`` and
    ``E[f(S)] = f_L(x)``, the Lovász extension, for every set function ``f``.
    """
    return (np.asarray(x, dtype=np.float64) >= u).astype(np.int8)


def lovasz_gradient_bounds(scale: float, n: int) -> tuple[float, float]:
    """``(G_1, G_2) = (min(4M, 2Mn), min(4M, 2M sqrt(n)))``: bounds on the l1 and l2
    norms of every Lovász (greedy) subgradient of a submodular ``f`` with range
    ``[-M, M]`` (CC Lemma 3; proof in ``docs/algorithms/submod-pftal.md``)."""
    m = float(scale)
    return min(4.0 * m, 2.0 * m * n), min(4.0 * m, 2.0 * m * math.sqrt(n))


def lovasz_chain(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The maximal chain of ``x`` in ``[0, 1]^n`` and its convex weights.

    Returns:
        ``(order, mu)``: ``order`` (shape ``(n,)``) the stable decreasing argsort of
        ``x`` -- ``B_k`` is ``order[:k]``, the element added at step ``k`` (CC's
        ``pi^{-1}(k)``) is ``order[k - 1]`` -- and ``mu`` (shape ``(n + 1,)``, ``mu >= 0``,
        ``sum = 1``) with ``x = sum_k mu_k 1_{B_k}``.

    Raises:
        ValueError: If ``x`` is not a finite vector of ``[0, 1]^n``.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError(f"x must be a finite nonempty vector, got {x!r}")
    if x.min() < 0.0 or x.max() > 1.0:
        raise ValueError(f"x must lie in [0, 1]^n, got {x!r}")
    order = np.argsort(-x, kind="stable")
    xs = x[order]
    mu = np.empty(x.size + 1)
    mu[0] = 1.0 - xs[0]
    mu[1:-1] = xs[:-1] - xs[1:]
    mu[-1] = xs[-1]
    return order, mu


def chain_set(order: np.ndarray, k: int) -> np.ndarray:
    """``B_k = {order[0], ..., order[k-1]}`` as a 0/1 ``int8`` vector."""
    s = np.zeros(len(order), dtype=np.int8)
    s[np.asarray(order)[:k]] = 1
    return s


def lovasz_pftal_step(domain: Domain, v: np.ndarray, t: int, H: float) -> np.ndarray:
    """``x_{t+1} = Proj_K(-v / (H t))``: SubmodPFTAL's leader with the regularizer's
    gradients ``H x_tau`` kept outside the counter (``docs/algorithms/submod-pftal.md``).

    Args:
        domain: The ground set (its ``project`` clips to ``[0, 1]^n``).
        v: The (noisy) sum of the Lovász subgradients (or their estimates) of rounds
            ``1..t``.
        t: Number of completed rounds, ``>= 1``.
        H: Strong convexity of the regularized Lovász extensions, ``> 0``.

    Raises:
        ValueError: If ``t < 1`` or ``H <= 0``.
    """
    v = np.asarray(v, dtype=np.float64)
    return ftal_leader(domain, v, np.zeros_like(v), t, H)  # the FTAL leader with w_sum = 0


def require_submodular(name: str, problem) -> SubmodularLoss:
    """The problem's submodular loss family; ValueError unless it has one and the
    domain plays subsets (a ``MultiBinary`` action space)."""
    if not isinstance(problem.loss, SubmodularLoss):
        msg = f"{name} minimizes submodular losses (Lovász extensions); got {problem.loss!r}"
        raise ValueError(msg)  # noqa: TRY004  (a problem it cannot play)
    if not isinstance(problem.domain.action_space, gym.spaces.MultiBinary):
        msg = (f"{name} plays subsets: it needs a ground-set domain with a MultiBinary "
               f"action space, got {problem.domain!r}")
        raise ValueError(msg)  # noqa: TRY004
    return problem.loss
