r"""HTINF (Huang, Dai, Huang, "Adaptive Best-of-Both-Worlds Algorithm for Heavy-Tailed
Multi-Armed Bandits", ICML 2022, PMLR 162:9173-9200, Algorithm 1 "Heavy-Tail
Tsallis-INF"): K-armed bandits with heavy-tailed, possibly negative losses, non-private.

``htinf`` -- :class:`HTINF`: follow-the-regularized-leader with the ``1/alpha``-Tsallis
entropy and loss *skipping*. For round ``t = 1, 2, ...``:

    eta_t = 1 / (sigma t^{1/alpha}),
    x_t   = argmin_{x in Delta_K} eta_t <L~_{t-1}, x> + Psi(x),  Psi(x) = -alpha sum_i x_i^{1/alpha},
    I_t ~ x_t,   r_t = Theta_alpha x_{t,I_t}^{1/alpha} / eta_t        (skipping threshold),
    l~_t = (l_t 1{|l_t| <= r_t} / x_{t,I_t}) e_{I_t},   L~_t = L~_{t-1} + l~_t,

with ``Theta_alpha = min{1 - 2^{-(alpha-1)/(2 alpha-1)}, (2 - 2/alpha)^{1/(2-alpha)}}``
(``1 - 2^{-1/3}`` at ``alpha = 2``). Parameters: ``alpha in (1, 2]`` and ``sigma > 0``
with ``E|l_{t,i}|^alpha <= sigma^alpha`` for every round and arm (the paper's setting,
as its abstract states it); nothing else is tuned. Regret (adversarial regime, alpha and
sigma known): ``O(sigma K^{1-1/alpha} T^{1/alpha})``, the minimax rate (Bubeck et al.
2013 lower bound), ``O(sigma sqrt(K T))`` at ``alpha = 2``; the order is the abstract's,
the constant and the theorem's number are NOT checked against the paper's text (not
readable here). No clamp: losses may be negative and unbounded, which is why
Asi-Raman-Talwar (ICML 2025, Cor. 2) use it on Laplace-noised losses
(``private-batched-htinf``, :mod:`agents.bandit.private_batched_htinf`).

The update rule above (regularizer, ``eta_t``, ``r_t``, ``Theta_alpha``) is checked
against a third-party implementation only, not the paper's Algorithm 1 box; the
threshold uses ``eta_t`` of the round whose ``x_t`` drew the arm (the one implementation
seen uses ``eta_{t+1}``). What was and was not checked:
``docs/algorithms/private-batched-htinf.md``.

The leader has the closed form ``x_i = (eta_t L~_i - mu)^{-alpha/(alpha-1)}`` with the
normalizer ``mu < eta_t min_i L~_i`` fixed by ``sum_i x_i = 1``; ``mu`` is found by
Newton's method from the right of the root (the sum is convex and increasing in ``mu``,
so the iterates decrease monotonically to it), then ``x`` is renormalized.

Losses: ``l = (f - lo) / (hi - lo)`` with the declared range (:func:`~agents.common.
loss_range`; the identity on ``DPBandit-MAB-v0``). Defaults ``alpha = 2``, ``sigma = 1``
(``E[l^2] <= 1`` for losses in ``[0, 1]``). Derivation:
``docs/algorithms/private-batched-htinf.md``.
"""

from __future__ import annotations

import numpy as np

from agents.base import Agent, register
from agents.common import check_arms_problem, check_range, clipped_loss
from dp_online_envs.validation import check_real

__all__ = ["HTINF", "skip_constant", "tsallis_leader"]

_NEWTON_STEPS = 200


def skip_constant(alpha: float) -> float:
    """``Theta_alpha = min{1 - 2^{-(alpha-1)/(2alpha-1)}, (2 - 2/alpha)^{1/(2-alpha)}}``
    of HTINF's skipping threshold: ``1 - 2^{-1/3}`` at ``alpha = 2``, where the second
    term is read as its limit ``e^{-1/2}``, larger than the first."""
    a = check_real("alpha", alpha, 1.0, 2.0, low_inclusive=False)
    first = 1.0 - 2.0 ** (-(a - 1.0) / (2.0 * a - 1.0))
    if a == 2.0:
        return first
    return min(first, (2.0 - 2.0 / a) ** (1.0 / (2.0 - a)))


def tsallis_leader(eta: float, cum: np.ndarray, alpha: float = 2.0) -> np.ndarray:
    """``argmin_{x in simplex} eta <cum, x> - alpha sum_i x_i^{1/alpha}``.

    ``x_i = (eta cum_i - mu)^{-p}``, ``p = alpha / (alpha - 1)``, with ``mu`` the root of
    ``sum_i (v_i - mu)^{-p} = 1`` (``v = eta cum``) in ``[min v - K^{1/p}, min v - 1]``;
    Newton from ``min v - 1`` (where the sum is ``>= 1``). ``eta = 0`` gives uniform.
    """
    v = eta * np.asarray(cum, dtype=np.float64)
    k = v.size
    p = alpha / (alpha - 1.0)
    m = float(v.min())
    mu = m - 1.0
    for _ in range(_NEWTON_STEPS):
        u = v - mu
        w = u ** -p
        f = float(w.sum()) - 1.0
        if f <= 1e-15:
            break
        step = f / float(p * (w / u).sum())
        mu_next = max(mu - step, m - k ** (1.0 / p))
        if mu_next >= mu:
            break
        mu = mu_next
    x = (v - mu) ** -p
    return x / x.sum()


@register
class HTINF(Agent):
    r"""HTINF on K arms (Huang, Dai, Huang, ICML 2022, Alg. 1; module docstring).

    Args:
        alpha: Moment order in ``(1, 2]`` (default 2: bounded second moments).
        sigma: ``sigma > 0`` with ``E|l_t|^alpha <= sigma^alpha`` for the normalized
            losses fed to it (default 1, right for losses in ``[0, 1]``).
        loss_range: ``(lo, hi)`` overriding the declared range of the feedback.

    Attributes:
        alpha, sigma: The parameters; ``theta``: ``Theta_alpha``.
        skipped: How many losses of this game were skipped (``|l_t| > r_t``).
    """

    name = "htinf"
    description = ("HTINF (Huang-Dai-Huang 2022): 1/alpha-Tsallis FTRL with loss skipping, "
                   "heavy-tailed/negative losses, non-private")
    paper = ("Huang, Dai, Huang, Adaptive Best-of-Both-Worlds Algorithm for Heavy-Tailed "
             "Multi-Armed Bandits (ICML 2022), Alg. 1 (HTINF); adversarial regret "
             "O(sigma K^(1-1/alpha) T^(1/alpha)) (abstract)")
    feedback = "bandit"
    private = False

    def setup(self, alpha: float = 2.0, sigma: float = 1.0,
              loss_range: tuple[float, float] | None = None) -> None:
        p = self.problem
        self.k = check_arms_problem(self.name, p)
        self.alpha = check_real("alpha", alpha, 1.0, 2.0, low_inclusive=False)
        self.sigma = check_real("sigma", sigma, 0.0, low_inclusive=False)
        self.theta = skip_constant(self.alpha)
        self._lo, self._hi = check_range(p, loss_range)
        self._width = self._hi - self._lo

    @property
    def regret_bound_order(self) -> float:
        """``(hi - lo) sigma K^{1-1/alpha} T^{1/alpha}``: the adversarial regret's order
        (the paper's abstract; its constant is not checked), in loss units."""
        a, T = self.alpha, self.problem.horizon
        return self._width * self.sigma * self.k ** (1.0 - 1.0 / a) * T ** (1.0 / a)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._cum = np.zeros(self.k)
        self._arm, self._p, self._eta = 0, 1.0 / self.k, 0.0
        self.skipped = 0

    def eta(self, t: int) -> float:
        """``eta_t = 1 / (sigma t^{1/alpha})`` for round ``t >= 1``."""
        return 1.0 / (self.sigma * t ** (1.0 / self.alpha))

    def probabilities(self) -> np.ndarray:
        """``x_t`` of the coming round ``t = self.t + 1``."""
        return tsallis_leader(self.eta(self.t + 1), self._cum, self.alpha)

    def act(self):
        eta = self.eta(self.t + 1)
        x = tsallis_leader(eta, self._cum, self.alpha)
        cdf = np.cumsum(x)
        arm = min(int(np.searchsorted(cdf, self.rng.random() * cdf[-1], side="right")),
                  self.k - 1)
        self._arm, self._p, self._eta = arm, float(x[arm]), eta
        return arm

    def update(self, action, feedback) -> None:
        self.observe_loss(action, clipped_loss(self, feedback, self._lo, self._hi))

    def observe_loss(self, action, loss: float) -> None:
        """Update with the scalar loss of ``action`` (not clipped: may be noisy/negative)."""
        arm, p, eta = self._arm, self._p, self._eta
        if action != arm or eta == 0.0:  # the caller played another arm than act() drew
            arm = int(action)
            eta = self.eta(self.t + 1)
            p = float(tsallis_leader(eta, self._cum, self.alpha)[arm])
        ell = (loss - self._lo) / self._width
        threshold = self.theta * p ** (1.0 / self.alpha) / eta
        if not abs(ell) <= threshold:
            ell = 0.0
            self.skipped += 1
        self._cum[arm] += ell / p
        self._eta = 0.0
        self.t += 1
