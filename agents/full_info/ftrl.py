"""Follow-the-regularized-leader: Agarwal-Singh private FTRL and the non-private FTRL.

* ``private-ftrl`` -- :class:`PrivateFTRL`, Agarwal & Singh, "The Price of Differential
  Privacy for Online Learning" (ICML 2017), Algorithm 1 (FTRL template) fed by
  Algorithm 2 (``TreeBasedAgg``), Theorem 3.1 / 3.4 and Corollary 3.2.
* ``private-ftrl-grad`` -- :class:`PrivateFTRLGrad`, the same learner fed the clipped
  gradients ``g_t = clip_L(grad f_t(x_t))`` of convex Lipschitz losses (linearization).
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
    clipped_gradient,
    env_action,
    gradient_sensitivity,
    hedge_eta,
    loss_width,
    replacement_sensitivity,
    require_convex,
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

__all__ = ["FTRL", "PrivateFTRL", "PrivateFTRLGrad"]



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

    Args:
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
        self._check_loss()
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
        self.sensitivity = self._sensitivity(1 if noise == "laplace" else 2)
        self.privacy = self._use_counter(counter, noise, self.sensitivity).guarantee()

        T = p.horizon
        #: x_1: the minimizer of the l2 regularizer ||x - x_1||^2 (the domain's center).
        self.x1 = start_point(dom)
        if regularizer == "entropic":
            self.D_R = math.log(dom.dim)
            default_eta = hedge_eta(T, dom.dim, self._width())
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

    # -------------------------------------- what the counter sums: the loss vectors
    def _check_loss(self) -> None:
        """Refuse a loss family this learner cannot feed to its counter."""
        require_linear(self.name, self.problem.loss)

    def _sensitivity(self, p: float) -> float:
        """``Delta_p``: the ``l_p`` diameter of the set of counter inputs (here the
        loss set, :func:`agents.common.replacement_sensitivity`)."""
        return replacement_sensitivity(self.problem.loss, p)

    def _width(self) -> float:
        """Width of the interval every coordinate of a counter input lies in (entropic
        learning rate): the loss width, :func:`agents.common.loss_width`."""
        return loss_width(self.problem.loss)

    def _counter_input(self, action, feedback) -> np.ndarray:
        """The round's counter input: the loss vector ``theta_t`` clipped to ``Theta``."""
        return self.clip_feedback(feedback)

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

    @property
    def noisy_sum(self) -> np.ndarray:
        """``L~_t``: the counter's last release (at reset, the data-independent start
        ``L~_0``). The learner's own array: read it, do not write it."""
        return self._noisy

    def act(self):
        return env_action(self.problem.domain, self._x, self._play_rng)

    def update(self, action, feedback) -> None:
        theta = self._counter_input(action, feedback)
        self._noisy = self.release(self._counter.add(theta))
        self.t += 1
        self._x = self._leader(self._noisy)


@register
class PrivateFTRLGrad(PrivateFTRL):
    r"""Private FTRL on linearized convex losses: :class:`PrivateFTRL` (Agarwal & Singh,
    ICML 2017, Alg. 1-2) fed ``g_t = clip_L(grad f_t(x_t))`` in place of ``theta_t``.

    Each round the learner plays ``x_t`` (the FTRL point of :class:`PrivateFTRL`),
    receives the full loss ``f_t`` (its parameter ``theta_t``, clipped to the declared
    set), computes a subgradient at ``x_t`` and clips it to the l2 ball of radius
    ``L = problem.lipschitz`` (:func:`agents.common.clipped_gradient`; a no-op for an
    honest env, since ``||grad f_t|| <= L``), and adds ``g_t`` to the continual counter
    as the linear loss ``<g_t, x>``. Everything else (counter, regularizer, leader,
    learning rate) is :class:`PrivateFTRL`'s with ``theta`` replaced by ``g``.

    Regret: by convexity ``f_t(x_t) - f_t(x) <= <g_t, x_t - x>`` (Zinkevich 2003;
    Hazan, *Introduction to Online Convex Optimization*, 2016, Sec. 3.1), so the regret
    on ``f_t`` is at most the regret on the linear losses ``<g_t, .>``,
    ``||g_t||_2 <= L``. These depend on the noise (through ``x_t``), so Thm. 3.4's
    one-shot-noise argument (oblivious losses) does not apply; the bound that does
    (``docs/algorithms/private-ftrl-grad.md``) compares ``x_t`` with the noiseless lazy
    OGD iterate ``y_t`` on the same gradients (the FTRL lemma holds for any sequence)
    and pays ``<g_t, x_t - y_t> <= L (eta/2) ||Z_t||_2`` (the projection is
    non-expansive; ``Z_t`` the noise of the release ``L~_{t-1}``). l2 regularizer
    (every domain but the simplex), ``eta = 2 D / (L sqrt T)``:
    ``E[regret] <= D L sqrt(T) + D sqrt(T) max_t E||Z_t||_2``, with
    ``E||Z_t||_2 = O(d L log^1.5 T / eps)`` (Laplace: ``ceil(log2 T)`` draws of scale
    ``levels 2 L sqrt(d) / eps`` per coordinate) or
    ``O(sqrt(d) L log T sqrt(log(1/delta)) / eps)`` (Gaussian), i.e. regret
    ``O(D L sqrt(T) (1 + d log^1.5 T / eps))`` resp.
    ``O(D L sqrt(T) (1 + sqrt(d log(1/delta)) log T / eps))``: below trivial play only
    for large ``eps``; measured regret is far below it (``docs/results.md``,
    real-data section). Entropic
    regularizer (the simplex): coordinates of ``g_t`` lie in ``[-L, L]``, width ``2L``,
    ``eta = sqrt(8 ln N / T) / (2L)``, and ``<g_t, x_t - y_t> <= 2 eta L ||Z_t||_inf``.
    ``eta=`` overrides the rate (the noise-aware
    ``eta/2 = D / sqrt(T (L^2 + 2 L E||Z||_2))`` balances the bound, but plays worse on
    the classification data).

    Privacy: neighbouring loss sequences differ in one round ``t*``; ``g_t`` depends on
    ``f_t`` and on ``x_t``, a function of the releases before round ``t``, so by adaptive
    composition of the counter's node releases (each input moves by at most
    ``Delta_p`` in ``l_p`` given the past releases) the releases are as private as the
    counter on any fixed stream of inputs in the ball, and actions are
    post-processing. Sensitivity (:func:`agents.common.gradient_sensitivity`): l1
    ``2 L sqrt(d)`` (Laplace, ``delta = 0``), l2 ``2 L`` (Gaussian, ``delta > 0``), the
    ``pftal`` convention. On linear losses with ``theta_set`` ``"l2"`` or ``"linf"``
    these equal :class:`PrivateFTRL`'s loss-set diameters and the clip is a no-op, so
    the two play bit-identically (same seed); on ``"unit"``/``"l1"`` the loss set is
    smaller than the ball and ``private-ftrl`` adds less noise. Argument and proof
    sketch: ``docs/algorithms/private-ftrl-grad.md``.

    Args:
        counter: Continual counter name (default ``"agarwal-singh"``).
        regularizer: ``"entropic"`` (simplex only) or ``"l2"``; default from the domain.
        eta: Learning rate override (default: :class:`PrivateFTRL`'s value).

    Attributes:
        gradient_bound: ``L``, the clip radius of every gradient.
        clipped_gradients: How many gradients the clip shortened (beyond rounding).

    :meth:`regret_bound` evaluates the adaptive bound above (l2 regularizer),
    :meth:`noise_norm` its ``max_t E||Z_t||_2`` bound.

    Raises:
        ValueError: On non-convex losses, subset domains or an invalid option.
    """

    name = "private-ftrl-grad"
    description = ("private FTRL (Agarwal-Singh Alg. 1) on linearized convex losses: "
                   "tree-aggregated noisy sums of gradients clipped to ||g||_2 <= L")
    paper = ("Agarwal & Singh, ICML 2017, Alg. 1-2, Thm. 3.1/3.4, on the linearized losses "
             "<grad f_t(x_t), x> (Hazan, Intro. to OCO, Ch. 3, 5); Smith & Thakurta 2013")
    requires = ("lipschitz",)
    counterpart = "ftrl"
    #: Exponent of the regret rate in T (``dp_online_envs.lab.experiments.rates``): sqrt(T).
    regret_rate = 0.5

    @classmethod
    def counterpart_for(cls, problem, **options) -> str | None:
        """``"ftrl"`` (lazy projected OGD on the same gradients) with the l2
        regularizer; ``None`` with the entropic one (exponentiated gradient, which is
        not registered)."""
        reg = options.get("regularizer")
        if reg is None:
            reg = "entropic" if isinstance(problem.domain, Simplex) else "l2"
        return "ftrl" if reg == "l2" else None

    def setup(self, counter: str = "agarwal-singh", regularizer: str | None = None,
              eta: float | None = None) -> None:
        #: ``L``: the clip radius of every gradient (the problem's Lipschitz constant).
        self.gradient_bound = float(self.problem.lipschitz)
        super().setup(counter=counter, regularizer=regularizer, eta=eta)

    def _check_loss(self) -> None:
        require_convex(self.name, self.problem.loss)

    def _sensitivity(self, p: float) -> float:
        return gradient_sensitivity(self.gradient_bound, self.problem.dim, p)

    def _width(self) -> float:
        return 2.0 * self.gradient_bound

    def _counter_input(self, action, feedback) -> np.ndarray:
        theta = self.clip_feedback(feedback)
        g, clipped = clipped_gradient(self.problem.loss, theta, self._x, self.gradient_bound)
        self.clipped_gradients += int(clipped)
        return g

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.clipped_gradients = 0

    def noise_norm(self) -> float:
        """``sqrt(d max_t Var_t)``: a bound on ``E||Z_t||_2`` (Jensen) for the noise ``Z_t``
        of every release, ``Var_t`` its exact per-coordinate variance (the counter's
        ``max_noise_variance``; ``0`` with the noise switched off)."""
        return math.sqrt(self.problem.dim * self._counter.max_noise_variance())

    def regret_bound(self) -> float:
        """The expected-regret bound for adaptive gradients with the l2 regularizer,
        ``D^2 / (2 s) + s T L^2 / 2 + s L T noise_norm()`` with ``s = eta / 2`` the step
        (``D L sqrt(T) + D sqrt(T) noise_norm()`` at the default ``eta``;
        ``docs/algorithms/private-ftrl-grad.md``). It holds for any sequence of convex
        ``L``-Lipschitz losses.

        Raises:
            ValueError: With the entropic regularizer (no such bound is computed).
        """
        if self.regularizer != "l2":
            raise ValueError(f"regret_bound is computed for the l2 regularizer, got "
                             f"{self.regularizer!r}")
        p, s, L = self.problem, self.step, self.gradient_bound
        return (p.diameter**2 / (2.0 * s) + s * p.horizon * L**2 / 2.0
                + s * L * p.horizon * self.noise_norm())


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

    Args:
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

    @property
    def x1(self) -> np.ndarray:
        """The start point ``x_1`` (the domain's center, set by ``reset``)."""
        return self._x1

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
