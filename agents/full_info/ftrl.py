"""Follow-the-regularized-leader: Agarwal-Singh private FTRL and the non-private FTRL.

* ``private-ftrl`` -- :class:`PrivateFTRL`, Agarwal & Singh, "The Price of Differential
  Privacy for Online Learning" (ICML 2017), Algorithm 1 (FTRL template) fed by
  Algorithm 2 (``TreeBasedAgg``), Theorem 3.1 / 3.4 and Corollary 3.2.
* ``ftrl`` -- :class:`FTRL`, non-private FTRL with the squared-l2 regularizer
  (lazy projected online gradient descent, "dual averaging"), or greedy projected OGD.

Sensitivity: neighbouring loss sequences differ in ONE round (``theta_t`` replaced by
another admissible ``theta'_t``), so the counter is calibrated to the ``l_p`` diameter
of the loss set, :func:`agents.common.replacement_sensitivity` (l1 for Laplace, l2 for
Gaussian). Derivation, and why it is twice the paper's ``||Y||_1`` for symmetric sets:
``docs/algorithms/private-ftrl.md``.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np

from agents.base import Agent, register
from agents.common import (
    env_action,
    hedge_eta,
    loss_width,
    replacement_sensitivity,
    require_linear,
    softmin,
    split_rng,
    start_point,
)
from agents.counter_agent import CounterAgent
from agents.privacy.noise import default_noise
from dp_online_envs.domains import Simplex
from dp_online_envs.domains.base import Domain
from dp_online_envs.validation import check_real

__all__ = ["FTRL", "PrivateFTRL"]



def _refuse_subsets(name: str, domain: Domain) -> None:
    if isinstance(domain.action_space, gym.spaces.MultiBinary):
        raise ValueError(f"{name} plays points of a convex set; {domain!r} only accepts "
                         f"subsets (0/1 vertices)")


# ---------------------------------------------------------------- private FTRL
@register
class PrivateFTRL(CounterAgent, Agent):
    r"""Private follow-the-regularized-leader (Agarwal & Singh, ICML 2017, Algorithm 1).

    Each round ``x_t = argmin_{x in X} eta <x, L~_{t-1}> + R(x)`` where ``L~_t`` is the
    continual counter's noisy release of ``sum_{s<=t} theta_s`` (Algorithm 2,
    ``TreeBasedAgg``, by default: counter ``"agarwal-singh"``; any name of
    :data:`agents.privacy.COUNTERS` with ``counter=``). With the default counter
    ``L~_0`` is ``ceil(log2 T)`` draws of pure noise (Alg. 1, lines 2-3); with the
    others ``L~_0 = 0``. The actions are post-processing of the releases, so the
    learner is as private as the counter (Thm. 3.1, Lemma 3.3).

    Regularizers (Corollary 3.2), chosen from the domain unless ``regularizer=`` is given:

    * simplex (experts, also arms): ``R(x) = sum_i x_i log x_i`` (``"entropic"``),
      ``x_t ∝ exp(-eta L~_{t-1})``; on ``Discrete(K)`` the arm is drawn from ``x_t``;
    * every other domain: ``R(x) = ||x - x_1||_2^2`` (``"l2"``), ``x_1`` the domain's
      center (projected into it if needed), ``x_t = Proj_X(x_1 - (eta/2) L~_{t-1})``.

    Noise: ``delta = 0`` Laplace (the paper's, pure epsilon-DP); ``delta > 0`` Gaussian
    (an extension). Per node, with ``levels = floor(log2 T) + 1`` and ``Delta_p`` the
    ``l_p`` diameter of the loss set (:func:`agents.common.replacement_sensitivity`:
    experts ``[0,1]^N`` ``Delta_1 = N, Delta_2 = sqrt(N)``; sphere ``2 sqrt(N), 2``; cube
    ``2, 2``):

    * Laplace ``lambda = levels * Delta_1 / epsilon`` (the paper: ``||Y||_1 log T / eps``);
    * Gaussian: the exact discrete Gaussian for ``levels`` blocks of l2 sensitivity
      ``Delta_2`` (integer ``sigma`` on a grid, zCDP-accounted;
      :class:`~agents.privacy.noise.DiscreteGaussianNoise`), about 8% above the analytic
      continuous ``sigma`` for ``sqrt(levels) Delta_2`` at ``epsilon = 1``. With
      ``counter="factorization"`` the real-valued Gaussian (guarantee marked idealized).

    :attr:`privacy` is checked by :func:`agents.privacy.verify_guarantee` and equals the
    requested ``(epsilon, delta)``.

    Learning rate (Theorem 3.4 leaves it free; that of the non-private counterpart, so
    that with the noise off ``private-ftrl`` IS that learner, bit for bit):

    * entropic: ``eta = sqrt(8 ln N / T) / w`` (:func:`agents.common.hedge_eta`, ``w``
      the loss width, ``1`` for ``[0,1]^N``): ``E[regret] <= w sqrt(T ln N / 2) + E[D_Z]``;
    * l2: ``eta = 2 D / (L sqrt(T))`` (``D`` the l2 diameter, ``L`` the Lipschitz
      constant), ftrl's step ``eta / 2``: ``E[regret] <= D L sqrt(T) + E[D_Z]``;

    with ``D_Z = max_x <Z, x> - min_x <Z, x>`` for one noise draw ``Z``. ``eta=``
    overrides it. :attr:`D_R` (``ln N``; l2: ``(max_X ||x||_2 + ||x_1||_2)^2``) is kept
    for Thm. 3.1's bound. Why the rate may differ from Thm. 3.1's balance, and by how
    much: ``docs/algorithms/private-ftrl.md``.

    Regret promised (Cor. 3.2, in expectation, AS counter): experts
    ``O(sqrt(T log N) + N log^2 T log N / eps)``, sphere ``O(sqrt(T) + N log^2 T / eps)``,
    cube ``O(sqrt(N T) + N log^2 T / eps)``. The other counters' noise is not
    identically distributed, so Thm. 3.4's argument does not apply verbatim to them.

    Options:
        counter: Continual counter name (default ``"agarwal-singh"``).
        regularizer: ``"entropic"`` (simplex only) or ``"l2"``; default from the domain.
        eta: Learning rate override (default: the value above).

    Raises:
        ValueError: On non-linear losses, subset domains, a Laplace request to the
            Gaussian-only ``"factorization"`` counter, or an unknown option value.
    """

    name = "private-ftrl"
    description = ("Agarwal-Singh private FTRL (Alg. 1): entropic/l2 FTRL on tree-aggregated "
                   "noisy loss sums, Laplace (delta=0) or Gaussian (delta>0)")
    paper = ("Agarwal & Singh, The Price of Differential Privacy for Online Learning, "
             "ICML 2017: Alg. 1-2, Thm. 3.1/3.4, Cor. 3.2")
    feedback = "full"
    private = True
    requires = ("lipschitz",)
    counterpart = "hedge"

    @classmethod
    def counterpart_for(cls, problem, **options) -> str:
        """``"hedge"`` with the entropic regularizer (the simplex), ``"ftrl"`` with l2."""
        reg = options.get("regularizer")
        if reg is None:
            reg = "entropic" if isinstance(problem.domain, Simplex) else "l2"
        return "hedge" if reg == "entropic" else "ftrl"

    def setup(self, counter: str = "agarwal-singh", regularizer: str | None = None,
              eta: float | None = None) -> None:
        p = self.problem
        loss = require_linear(self.name, p.loss)
        dom = p.domain
        _refuse_subsets(self.name, dom)
        if regularizer is None:
            regularizer = "entropic" if isinstance(dom, Simplex) else "l2"
        if regularizer not in ("entropic", "l2"):
            raise ValueError(f"regularizer={regularizer!r}, expected 'entropic' or 'l2'")
        if regularizer == "entropic" and not isinstance(dom, Simplex):
            raise ValueError(f"the entropic regularizer needs the simplex, got {dom!r}")
        self.regularizer = regularizer
        noise = default_noise(self.delta)
        #: l1 (Laplace) or l2 (Gaussian) diameter of the loss set: the counter's sensitivity.
        self.sensitivity = replacement_sensitivity(loss, 1 if noise == "laplace" else 2)
        self.privacy = self._use_counter(counter, noise, self.sensitivity).guarantee()

        T = p.horizon
        #: x_1: the minimizer of the l2 regularizer ||x - x_1||^2 (the domain's center).
        self.x1 = start_point(dom)
        if regularizer == "entropic":
            self.D_R = math.log(dom.dim)
            default_eta = hedge_eta(T, dom.dim, loss_width(loss))
        else:
            # max_X ||x - x_1||^2 <= (max_X ||x|| + ||x_1||)^2 (= ||X||_2^2 if x_1 = 0)
            self.D_R = (float(dom.norm_bound(2)) + float(np.linalg.norm(self.x1))) ** 2
            if not (math.isfinite(p.diameter) and p.diameter > 0):
                raise ValueError(f"{self.name} with the l2 regularizer needs a finite "
                                 f"diameter, got {p.diameter!r}")
            default_eta = 2.0 * p.diameter / (p.lipschitz * math.sqrt(T))
        #: Learning rate (the non-private counterpart's, see the class docstring).
        self.eta = default_eta if eta is None else check_real("eta", eta, 0.0)
        #: The step of the l2 leader, ``x = Proj(x_1 - step * L~)``: ``eta / 2``.
        self.step = 0.5 * self.eta

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        noise_rng, self._play_rng = split_rng(self.rng, 2)
        self._counter = self._make_counter(noise_rng)
        dim = self.problem.dim
        if self.counter_name == "agarwal-singh":
            # Alg. 1 lines 2-3: L~_0 = sum of ceil(log T) draws of D (data-independent).
            self._noisy = self._counter.noise_strategy.sum_of_draws(
                noise_rng, self._counter.draws, dim)
        else:
            self._noisy = np.zeros(dim)
        self._x = self._leader(self._noisy)

    def _leader(self, noisy: np.ndarray) -> np.ndarray:
        if self.regularizer == "entropic":
            return softmin(self.eta, noisy)
        return self.problem.domain.project(self.x1 - self.step * noisy)

    @property
    def point_played(self) -> np.ndarray:
        """The FTRL point ``x_t`` of the coming round."""
        return self._x.copy()

    def act(self):
        return env_action(self.problem.domain, self._x, self._play_rng)

    def update(self, action, feedback) -> None:
        theta = self.clip_feedback(feedback)
        self._noisy = self.release(self._counter.add(theta))
        self.t += 1
        self._x = self._leader(self._noisy)


# ------------------------------------------------------------ non-private FTRL
@register
class FTRL(Agent):
    r"""Non-private FTRL with the squared-l2 regularizer (lazy projected OGD).

    ``x_{t+1} = argmin_x eta <sum_{s<=t} g_s, x> + ||x - x_1||^2 / 2
    = Proj_X(x_1 - eta sum_{s<=t} g_s)`` with ``g_s`` the (sub)gradient of ``f_s`` at
    ``x_s`` (the loss parameter itself for linear losses), ``x_1`` the domain's center
    and ``eta = D / (L sqrt(T))`` (``D`` the l2 diameter, ``L`` the Lipschitz constant):
    regret ``<= D^2/(2 eta) + eta T L^2 / 2 = D L sqrt(T)`` (FTRL lemma with a
    1-strongly-convex regularizer, e.g. Hazan, *Introduction to Online Convex
    Optimization*, Thm. 5.2; Orabona, *A Modern Introduction to Online Learning*, Cor.
    7.9). ``lazy=False`` gives greedy projected OGD (Zinkevich 2003),
    ``x_{t+1} = Proj_X(x_t - eta g_t)``, with the same bound. Works on every domain
    with a Euclidean projection (exact for simplex/ball/cube, Frank-Wolfe to 1e-10 on
    the polytopes). On ``Discrete(K)`` the arm is drawn from ``x_t``.

    Options:
        eta: Learning rate override.
        lazy: FTRL / dual averaging (default) or greedy OGD.
    """

    name = "ftrl"
    description = "non-private FTRL with squared-l2 regularizer (lazy projected OGD), eta=D/(L sqrt T)"
    paper = "Zinkevich 2003; Hazan, Introduction to Online Convex Optimization (2016), Ch. 3 and 5"
    feedback = "full"
    private = False
    requires = ("lipschitz", "diameter")

    def setup(self, eta: float | None = None, lazy: bool = True) -> None:
        p = self.problem
        _refuse_subsets(self.name, p.domain)
        self.lazy = bool(lazy)
        self.eta = (p.diameter / (p.lipschitz * math.sqrt(p.horizon)) if eta is None
                    else check_real("eta", eta, 0.0))

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        dom = self.problem.domain
        self._x1 = start_point(dom)
        self._x = self._x1.copy()
        self._grad_sum = np.zeros(dom.dim)

    def act(self):
        return env_action(self.problem.domain, self._x, self.rng)

    def update(self, action, feedback) -> None:
        theta = self.clip_feedback(feedback)
        g = self.problem.loss.subgradient(theta, self._x)
        self.t += 1
        dom = self.problem.domain
        if self.lazy:
            self._grad_sum += g
            self._x = dom.project(self._x1 - self.eta * self._grad_sum)
        else:
            self._x = dom.project(self._x - self.eta * g)
