r"""EXP2 with uniform exploration (Agarwal & Singh 2017, Algorithm 5) and ``private-exp2``.

* ``exp2`` -- :class:`EXP2`, non-private: exponential weights over a finite action set
  ``A`` (the K arms = the vertices ``e_i`` of the simplex; or the vertices of a small
  polytope / the subsets of a ground set), mixed with the uniform distribution ``mu``.
* ``private-exp2`` -- :class:`PrivateEXP2`, Algorithm 4 (the private reduction,
  :mod:`agents.bandit.reduction`) around EXP2 with the parameters of Theorem 4.1.

Algorithm 5
-----------
``q_1`` uniform; each round ``p_t = (1 - gamma) q_t + gamma mu``, play ``a_t ~ p_t``,
estimate ``l~_t = P_t^+ a_t a_t^T l_t`` with ``P_t = E_{a ~ p_t}[a a^T]``, and update
``q_{t+1}(a) ∝ q_t(a) exp(-eta <a, l~_t>)``. For arms ``P_t = diag(p_t)`` and the
estimate is the importance-weighted ``l~_t = (f_t / p_t(i_t)) e_{i_t}``: only the played
arm's cumulative estimate changes, so a round costs O(K) scalar work (the log-weights
are a Python list, one entry changes per round; the sampling is one uniform draw, a
running sum and a bisection; uniforms are drawn in blocks of 4096).

Parameters (Theorem 4.1)
------------------------
For ``N`` arms, ``T`` rounds, losses with ``||l_t||_inf <= 1`` and Laplace noise of
scale ``lambda`` on the forwarded loss (``lambda = 1/epsilon`` in the theorem):

    eta   = sqrt( ln N / (2 N T (1 + 2 lambda^2 ln(NT))) ),
    gamma = eta N sqrt(1 + 2 lambda^2 ln(NT))          ( = sqrt(N ln N / (2T)) ),
    mu(i) = 1/N.

(natural logarithms, as in the exponential-weights analysis: the ``ln N / eta`` term is
the entropy of the uniform prior.) Non-private ``exp2`` is the ``lambda -> 0``
(``epsilon -> infinity``) limit: ``eta = sqrt(ln N / (2NT))``, ``gamma = eta N``.

Clamp. ``gamma`` is a mixing probability; the formula exceeds 1 when
``T < N ln N / 2`` (e.g. ``T <= 11`` for ``N = 10``). It is clamped to ``[0, 1]``
(``gamma = 1``: uniform play) and :attr:`EXP2.gamma_clamped` records it; ``eta`` is
kept. ``N = 1`` gives ``eta = gamma = 0`` (one arm, nothing to learn).

Losses. The feedback is mapped affinely onto the theorem's scale: for arms
``l = (f - lo) / (hi - lo)`` with the declared range ``[lo, hi]``
(:func:`~agents.bandit.reduction.loss_range`; ``[0, 1]`` on ``DPBandit-MAB-v0``, where
the map is the identity) -- a constant shift of every arm's loss changes no regret --
and ``lambda`` is measured on the same scale (``noise_scale / (hi - lo)``, which is
``1/epsilon`` for the reduction's ``b = (hi - lo)/epsilon``). For other finite sets
``l = f / B`` (a shift is not a linear loss there).

Noisy, negative losses (inside the reduction). EXP2 takes any real loss: the weights
are kept as log-weights and renormalized (shifted by their maximum) whenever an entry
leaves ``exp(+-300)``, so no overflow occurs however negative the noisy estimate. The
regret analysis (Lemma 4.4, Bubeck et al. 2012 Thm. 1) needs ``eta |<a, l~_t>| <= 1``
(``e^{-x} <= 1 - x + x^2`` for ``x >= -1``): with ``p_t(i) >= gamma / N`` the
estimate satisfies ``eta |l~_t(i)| <= eta N |l_t(i) + Z_t| / gamma``; Theorem 4.1
conditions on the event ``F^c = {|Z_t| <= ~ lambda ln(NT) for all t}`` (probability
``>= 1 - 1/T``, symmetric, so Lemma 4.3 still applies) and chooses ``gamma`` so that
``gamma / (eta N) = sqrt(1 + 2 lambda^2 ln(NT))`` grows with the noise magnitude
``lambda``. Note: the proof states the sufficient condition
``eta N (1 + 4 lambda ln(NT)) <= gamma``, which these parameters satisfy only up to a
constant and a ``sqrt(ln(NT))`` factor (they guarantee the condition in rounds with
``|l + Z_t| <= sqrt(1 + 2 lambda^2 ln(NT))``). We keep the theorem's parameters
(``gamma="theorem"``, the default) and offer ``gamma="proof"``, which sets
``gamma = eta N (1 + 4 lambda ln(NT))`` (clamped to 1) so that the proof's condition
holds literally on ``F^c``.

General finite sets (non-arm domains). ``A`` = ``domain.vertices()`` (at most
:data:`MAX_ACTIONS`), ``P_t^+`` by a pseudo-inverse (``d x d``), ``mu`` uniform on ``A``
and the Theorem 4.1 formulas with ``N = |A|`` (the theorem covers arms only; for other
sets this is a default, override ``eta``/``gamma``).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from itertools import accumulate

import gymnasium as gym
import numpy as np

from agents.bandit.reduction import (
    NOISE_BLOCK,
    PrivateBanditReduction,
    check_bandit_problem,
    check_range,
    clipped_loss,
)
from agents.base import Agent, register
from dp_online_envs.domains import Simplex
from dp_online_envs.losses import LinearLoss
from dp_online_envs.validation import check_int, check_real

__all__ = ["EXP2", "MAX_ACTIONS", "PrivateEXP2", "exp2_parameters", "theorem_4_1_parameters"]

#: Largest finite action set (number of vertices) EXP2 enumerates.
MAX_ACTIONS = 4096
#: Above this many arms the sampling uses NumPy (cumsum + searchsorted).
_SCALAR_ARMS = 64
_LOG_LIMIT = 300.0


def theorem_4_1_parameters(horizon: int, n_actions: int, noise_scale: float = 0.0
                           ) -> tuple[float, float]:
    """``(eta, gamma)`` of Agarwal-Singh Theorem 4.1, gamma NOT clamped.

    ``c = 1 + 2 lambda^2 ln(N T)``, ``eta = sqrt(ln N / (2 N T c))``,
    ``gamma = eta N sqrt(c)``; ``lambda = noise_scale`` on the ``||l||_inf <= 1`` scale.
    """
    n, t = check_int("n_actions", n_actions, 1), check_int("horizon", horizon, 1)
    lam = check_real("noise_scale", noise_scale, 0.0)
    c = 1.0 + 2.0 * lam * lam * math.log(n * t)
    eta = math.sqrt(math.log(n) / (2.0 * n * t * c))
    return eta, eta * n * math.sqrt(c)


def exp2_parameters(horizon: int, n_actions: int, noise_scale: float = 0.0,
                    gamma: str | float = "theorem") -> tuple[float, float, bool]:
    """``(eta, gamma, clamped)``: Theorem 4.1's eta and gamma clamped to ``[0, 1]``.

    ``gamma="theorem"`` (Thm. 4.1), ``"proof"`` (``eta N (1 + 4 lambda ln(NT))``, the
    sufficient condition of the proof) or a number in ``[0, 1]``.
    """
    eta, g = theorem_4_1_parameters(horizon, n_actions, noise_scale)
    if gamma == "proof":
        g = eta * n_actions * (1.0 + 4.0 * float(noise_scale) * math.log(n_actions * horizon))
    elif gamma != "theorem":
        if isinstance(gamma, str):
            raise ValueError(f"gamma={gamma!r} rejected: expected 'theorem', 'proof' or a real "
                             "number in [0, 1]")
        return eta, check_real("gamma", gamma, 0.0, 1.0), False
    clamped = not 0.0 <= g <= 1.0
    return eta, min(max(g, 0.0), 1.0), clamped


class ArmsExpWeights(Agent):
    """Exponential weights over K arms with importance-weighted loss estimates.

    The engine of :class:`EXP2` and :class:`~agents.bandit.exp3.EXP3`: subclasses set
    ``self.eta`` (per unit of normalized loss), ``self.gamma`` (uniform mixing),
    ``self._lo`` and ``self._width`` (``l = (f - lo) / width``) in ``setup`` and call
    :meth:`_init_arms`. Per round: O(K) scalar work, no NumPy call for K <= 64.
    """

    feedback = "bandit"
    private = False

    def _init_arms(self, k: int) -> None:
        self.k = int(k)
        self._small = self.k <= _SCALAR_ARMS
        self._inv_width = 1.0 / self._width
        g = self.gamma
        self._one_minus_gamma = 1.0 - g
        self._inv_one_minus_gamma = 1.0 / (1.0 - g) if g < 1.0 else 0.0
        self._k_over_gamma = self.k / g if g > 0.0 else 0.0
        self._gamma_over_k = g / self.k
        # a loss l~ costs eta * l~ / p in log-weight; precompute eta / width
        self._eta_w = self.eta * self._inv_width

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        k = self.k
        self._lw = [0.0] * k           # log-weights -eta * sum of estimates
        self._shift = 0.0              # weights are exp(lw - shift)
        if self._small:
            self._w = [1.0] * k
        else:
            self._w = np.ones(k)
        self._W = float(k)
        self._u: list[float] = []
        self._ui = 0
        self._arm = 0
        self._p = 1.0 / k

    # ---------------------------------------------------------------- helpers
    def probabilities(self) -> np.ndarray:
        """``p_t = (1 - gamma) q_t + gamma / K`` of the next round."""
        w = np.asarray(self._w, dtype=np.float64)
        return self._one_minus_gamma * w / self._W + self._gamma_over_k

    def _prob(self, arm: int) -> float:
        return self._one_minus_gamma * self._w[arm] / self._W + self._gamma_over_k

    def _renormalize(self) -> None:
        lw = self._lw
        shift = max(lw)
        self._shift = shift
        if self._small:
            w = [math.exp(v - shift) for v in lw]
            self._w = w
            self._W = sum(w)
        else:
            w = np.exp(np.asarray(lw) - shift)
            self._w = w
            self._W = float(w.sum())

    # --------------------------------------------------------------- the API
    def act(self):
        i = self._ui
        if i >= len(self._u):
            self._u = self.rng.random(NOISE_BLOCK).tolist()
            i = 0
        u = self._u[i]
        self._ui = i + 1
        g = self.gamma
        k = self.k
        if u < g:  # uniform exploration: u / gamma is uniform on [0, 1)
            arm = int(u * self._k_over_gamma)
            if arm >= k:
                arm = k - 1
        else:      # exponential weights: (u - gamma) / (1 - gamma) is uniform
            target = (u - g) * self._inv_one_minus_gamma * self._W
            w = self._w
            if self._small:
                arm = bisect_right(list(accumulate(w)), target)
            else:
                arm = int(np.searchsorted(np.cumsum(w), target, side="right"))
            if arm >= k or w[arm] <= 0.0:  # rounding at the top end: last positive weight
                arm = max(j for j in range(k) if w[j] > 0.0)
        self._arm = arm
        self._p = self._one_minus_gamma * self._w[arm] / self._W + self._gamma_over_k
        return arm

    def update(self, action, feedback) -> None:
        self.observe_loss(action, clipped_loss(self, feedback, self._lo, self._hi))

    def observe_loss(self, action, loss: float) -> None:
        """Update with the scalar loss of ``action`` (not clipped: may be noisy/negative)."""
        arm = self._arm
        p = self._p
        if action != arm:  # the caller played another arm than the last act()
            arm = int(action)
            p = self._prob(arm)
        lw = self._lw
        v = lw[arm] - self._eta_w * (loss - self._lo) / p
        lw[arm] = v
        e = v - self._shift
        if -_LOG_LIMIT < e < _LOG_LIMIT:
            w = self._w
            w[arm] = math.exp(e)
            self._W = sum(w) if self._small else float(w.sum())
        else:
            self._renormalize()
        self.t += 1


@register
class EXP2(ArmsExpWeights):
    r"""EXP2 with uniform exploration (Agarwal-Singh Alg. 5; Bubeck et al. 2012).

    See the module docstring. Options:

    Args (of ``setup``):
        eta: Learning rate (per unit of normalized loss); default Theorem 4.1.
        gamma: ``"theorem"`` (default), ``"proof"`` or a mixing weight in ``[0, 1]``.
        noise_scale: Scale of the zero-mean Laplace noise the feedback carries, in
            units of the feedback (set by the private reduction; 0 = non-private).
        loss_range: ``(lo, hi)`` overriding the declared range of the feedback.

    Attributes:
        eta, gamma: The parameters in use; ``gamma_clamped``: whether Theorem 4.1's
            gamma exceeded 1 and was clamped.
        lam: The noise scale on the normalized loss scale (Theorem 4.1's ``lambda``).
    """

    name = "exp2"
    description = ("EXP2 with uniform exploration (Agarwal-Singh Alg. 5), "
                   "eta = sqrt(ln N / 2NT), gamma = eta N")
    paper = ("Agarwal & Singh ICML 2017, Alg. 5 / Thm. 4.1; Bubeck, Cesa-Bianchi, Kakade "
             "2012 (EXP2 with exploration)")

    def setup(self, eta: float | None = None, gamma: str | float = "theorem",
              noise_scale: float = 0.0, loss_range: tuple[float, float] | None = None) -> None:
        p = self.problem
        check_bandit_problem(self.name, p)
        self.noise_scale = check_real("noise_scale", noise_scale, 0.0)
        self._lo, self._hi = check_range(p, loss_range)
        self.arms = isinstance(p.domain, Simplex) and isinstance(
            p.domain.action_space, gym.spaces.Discrete)
        if self.arms:
            n = p.domain.dim
            self._width = self._hi - self._lo
        else:
            if not isinstance(p.loss, LinearLoss):
                raise ValueError(f"exp2 on a non-arm finite set needs linear losses, got {p.loss!r}")
            verts = p.domain.vertices()
            if verts is None or len(verts) > MAX_ACTIONS:
                raise ValueError(f"exp2 needs a finite action set of at most {MAX_ACTIONS} "
                                 f"enumerable vertices; {p.domain!r} has "
                                 f"{'too many' if verts is not None else 'no enumerable'} vertices")
            self.actions = np.asarray(verts, dtype=np.float64)
            n = len(self.actions)
            self._width = max(abs(self._lo), abs(self._hi))   # l = f / B, no shift
        self.lam = self.noise_scale / self._width
        self.n_actions = n
        eta_thm, g, self.gamma_clamped = exp2_parameters(p.horizon, n, self.lam, gamma)
        self.eta = eta_thm if eta is None else check_real("eta", eta, 0.0)
        self.gamma = g
        if self.arms:
            self._init_arms(n)
        else:
            self._space = p.domain.action_space

    # ---------------------------------------------------- general finite sets
    def reset(self, seed: int | None = None) -> None:
        if self.arms:
            super().reset(seed)
            return
        Agent.reset(self, seed)
        self._lw_vec = np.zeros(self.n_actions)
        self._idx = 0

    def probabilities(self) -> np.ndarray:
        if self.arms:
            return super().probabilities()
        q = np.exp(self._lw_vec - self._lw_vec.max())
        q /= q.sum()
        return (1.0 - self.gamma) * q + self.gamma / self.n_actions

    def act(self):
        if self.arms:
            return ArmsExpWeights.act(self)
        p = self.probabilities()
        cdf = np.cumsum(p)
        i = min(int(np.searchsorted(cdf, self.rng.random() * cdf[-1], side="right")),
                self.n_actions - 1)
        self._idx, self._pvec = i, p
        a = self.actions[i]
        if isinstance(self._space, gym.spaces.Discrete):
            return i
        if isinstance(self._space, gym.spaces.MultiBinary):
            return np.rint(a).astype(np.int8)
        return a.copy()

    def observe_loss(self, action, loss: float) -> None:
        if self.arms:
            ArmsExpWeights.observe_loss(self, action, loss)
            return
        a, pv = self.actions[self._idx], self._pvec
        cov = (self.actions * pv[:, None]).T @ self.actions        # P_t = E[a a^T]
        est = np.linalg.pinv(cov, hermitian=True) @ a * (loss / self._width)
        self._lw_vec -= self.eta * (self.actions @ est)
        self._lw_vec -= self._lw_vec.max()
        self.t += 1


@register
class PrivateEXP2(PrivateBanditReduction):
    r"""``private-exp2``: Algorithm 4 around EXP2 with Theorem 4.1's parameters.

    Each loss (clipped to ``[lo, hi]``; ``[0, 1]`` on ``DPBandit-MAB-v0``) gets
    ``Lap((hi - lo)/epsilon)`` noise, is released, and is fed to :class:`EXP2` with
    ``lambda = 1/epsilon`` in Theorem 4.1. Regret ``O(sqrt(NT log T log N)/epsilon)``;
    ``(epsilon, 0)``-DP (see :mod:`agents.bandit.reduction`).

    Non-private limit. Its :attr:`counterpart` is ``exp2``: as ``epsilon -> infinity``,
    ``lambda -> 0`` and Theorem 4.1's ``eta``, ``gamma`` tend to exp2's
    (``c = 1 + 2 lambda^2 ln(NT) -> 1``; at ``epsilon = 1e3``, ``N = 10``, ``T = 1e4``,
    ``c - 1 = 2.3e-5``); with the Laplace noise switched off (scale 0) the reduction
    plays exp2's arms bit for bit on the same seed (``tests/agents/
    test_privacy_limit.py``).

    Args (of ``setup``):
        eta, gamma: Overrides passed to EXP2 (default Theorem 4.1).
        loss_range: ``(lo, hi)`` overriding the declared range.
    """

    name = "private-exp2"
    description = ("Agarwal-Singh Thm. 4.1: EXP2 with exploration on Lap((hi-lo)/eps)-noised "
                   "losses, eps-DP")
    paper = "Agarwal & Singh, The Price of Differential Privacy for Online Learning (ICML 2017), Alg. 4+5, Thm. 4.1"
    counterpart = "exp2"

    def setup(self, eta: float | None = None, gamma: str | float = "theorem",
              loss_range: tuple[float, float] | None = None) -> None:
        self._setup_reduction(EXP2, {"eta": eta, "gamma": gamma}, loss_range)

    @property
    def eta(self) -> float:
        return self.base.eta

    @property
    def gamma(self) -> float:
        return self.base.gamma
