"""Agarwal-Singh private follow-the-perturbed-leader (Algorithm 3, Theorem 3.5).

* ``private-ftpl`` -- :class:`PrivateFTPL`, on linear losses.
* ``private-ftpl-grad`` -- :class:`PrivateFTPLGrad`, the same learner fed the clipped
  gradients ``g_t = clip_L(grad f_t(x_t))`` of convex Lipschitz losses.
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import Agent, register
from agents.common import (
    clipped_gradient,
    env_action,
    gradient_sensitivity,
    paper_log,
    replacement_sensitivity,
    require_convex,
    require_linear,
    split_rng,
    theta_norm,
)
from agents.counter_agent import CounterAgent
from dp_online_envs.validation import check_gaussian_delta


@register
class PrivateFTPL(CounterAgent, Agent):
    r"""Private follow-the-perturbed-leader with Gaussian noise (Agarwal & Singh, ICML
    2017, Algorithm 3 with Algorithm 2 ``TreeBasedAgg``; Theorem 3.5, Theorem A.1).

    ``x_t = argmin_{x in X} <L~_{t-1} + xi_t, x>``, computed by the domain's linear
    minimization oracle only, so it runs on every domain with an LMO (simplex, arms,
    ball, cube, matroid, flow, submodular base and Birkhoff polytopes, subsets). ``L~_t``
    is the Gaussian continual counter's release of ``sum_{s<=t} theta_s`` (default
    counter ``"agarwal-singh"``; any name of :data:`agents.privacy.COUNTERS`). The
    counter's noise is both the privacy mechanism and the FTPL perturbation.

    Parameters (Theorem 3.5), with ``N`` the dimension, ``R = ceil(log2 T)`` the number of
    draws per release of Alg. 2 (clamped to ``>= 1`` for ``T = 1``) and ``||Y||_2`` the
    largest l2 norm of a loss vector (= ``L``, the Lipschitz constant of linear losses)::

        sigma = max{ ||Y||_2 sqrt(T / (sqrt(N) R)),  sigma_priv }            (per draw)

    ``sigma_priv``: the counter's exact discrete-Gaussian sigma (in data units) for
    ``levels`` blocks of l2 sensitivity ``Delta_2`` (``levels = floor(log2 T) + 1``,
    ``Delta_2`` the l2 diameter of the loss set; :class:`~agents.privacy.noise.
    DiscreteGaussianNoise`), NOT the paper's ``(sqrt(N) / eps) R log(R / delta)`` (kept in
    :attr:`sigma_paper_privacy`). Every round's perturbation has per-coordinate variance
    ``R sigma^2`` (``max(R sigma^2, Var_t(counter))`` with counters other than
    ``"agarwal-singh"``), topped up by data-independent Gaussian noise.
    Why, and the paper's calibration error: ``docs/algorithms/private-ftpl.md``.

    Regret promised (Thm. 3.5):
    ``O(N^{1/4} ||X||_2 ||Y||_2 sqrt(T) + N ||X||_2 log^{1.5} T log(log T / delta) / eps)``,
    and the learner is (epsilon, delta)-DP. ``delta > 0`` is required.

    Args:
        counter: Continual counter name (default ``"agarwal-singh"``).

    Raises:
        ValueError: For ``delta = 0``, non-linear losses or an unknown counter.
    """

    name = "private-ftpl"
    description = ("Agarwal-Singh private FTPL (Alg. 3): linear oracle on Gaussian tree-"
                   "aggregated loss sums, (eps, delta)-DP, any polytope")
    paper = ("Agarwal & Singh, The Price of Differential Privacy for Online Learning, "
             "ICML 2017: Alg. 2-3, Thm. 3.5, Thm. A.1")
    feedback = "full"
    private = True
    needs_delta = True
    requires = ("lipschitz",)

    def setup(self, counter: str = "agarwal-singh") -> None:
        check_gaussian_delta(self.delta, hint=f"{self.name} is (epsilon, delta)-DP with "
                             "Gaussian noise (Agarwal-Singh Thm. 3.5): pass delta=1e-6 in "
                             "Python, --delta 1e-6 on the command line")
        p = self.problem
        self._check_loss()
        T, n = p.horizon, p.dim
        #: The paper's ceil(log T): draws per release of Alg. 2 (>= 1).
        self.log_T = paper_log(T)
        self.loss_norm = self._input_norm()  # ||Y||_2
        #: l2 diameter of the set of counter inputs: the counter's sensitivity.
        self.sensitivity = self._sensitivity()
        # Thm. 3.5: Gaussian noise only.
        self.privacy = self._use_counter(counter, "gaussian", self.sensitivity).guarantee()
        #: Per-draw sigma of the counter (privacy calibration through the accountant);
        #: the same as ``noise_scale``.
        self.sigma_privacy = self.noise_scale
        #: Thm. 3.5, first term: ||Y||_2 sqrt(T / (sqrt(N) log T)).
        self.sigma_regret = self.loss_norm * math.sqrt(T / (math.sqrt(n) * self.log_T))
        #: Thm. 3.5, second term as printed (not used; see the class docstring).
        self.sigma_paper_privacy = (math.sqrt(n) / self.epsilon * self.log_T
                                    * math.log(self.log_T / self.delta))
        #: Per-draw sigma of Thm. 3.5: max of the regret and privacy terms.
        self.sigma = max(self.sigma_regret, self.sigma_privacy)
        #: Per-coordinate variance of the perturbation of every round (R sigma^2).
        self.target_variance = self.log_T * self.sigma**2

    # -------------------------------------- what the counter sums: the loss vectors
    def _check_loss(self) -> None:
        """Refuse a loss family this learner cannot feed to its counter."""
        require_linear(self.name, self.problem.loss)

    def _input_norm(self) -> float:
        """``||Y||_2``: the largest l2 norm of a counter input (a loss vector)."""
        return theta_norm(self.problem.loss, 2)

    def _sensitivity(self) -> float:
        """``Delta_2``: the l2 diameter of the loss set."""
        return replacement_sensitivity(self.problem.loss, 2)

    def _counter_input(self, action, feedback) -> np.ndarray:
        """The round's counter input: the loss vector ``theta_t`` clipped to ``Theta``."""
        return self.clip_feedback(feedback)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        noise_rng, self._extra_rng, self._play_rng = split_rng(self.rng, 3)
        self._counter = self._make_counter(noise_rng)
        dim = self.problem.dim
        if self.counter_name == "agarwal-singh":
            draws, noise = self._counter.draws, self._counter.noise_strategy
            self._noisy = noise.sum_of_draws(noise_rng, draws, dim)
            self._noise_var = draws * noise.variance
        else:
            self._noisy = np.zeros(dim)
            self._noise_var = 0.0

    @property
    def noisy_sum(self) -> np.ndarray:
        """``L~_t``: the counter's last release (at reset, the data-independent start
        ``L~_0``). The learner's own array: read it, do not write it."""
        return self._noisy

    @property
    def release_variance(self) -> float:
        """Per-coordinate variance of the counter noise in :attr:`noisy_sum`."""
        return self._noise_var

    @property
    def extra_rng(self) -> np.random.Generator:
        """The generator of the extra perturbation ``xi_t`` (:meth:`perturbation_std`)."""
        return self._extra_rng

    def perturbation_std(self) -> float:
        """Std of the fresh extra noise ``xi_t`` of the coming round (per coordinate)."""
        return math.sqrt(max(self.target_variance - self._noise_var, 0.0))

    def act(self):
        dom = self.problem.domain
        c = self._noisy
        extra = self.perturbation_std()
        if extra > 0.0:
            c = c + self._extra_rng.normal(0.0, extra, size=c.shape)
        return env_action(dom, dom.linear_minimizer(c), self._play_rng)

    def update(self, action, feedback) -> None:
        theta = self._counter_input(action, feedback)
        self._noisy = self.release(self._counter.add(theta))
        self.t += 1
        self._noise_var = self._counter.noise_variance(self.t)


@register
class PrivateFTPLGrad(PrivateFTPL):
    r"""Private FTPL on linearized convex losses: :class:`PrivateFTPL` (Agarwal & Singh,
    ICML 2017, Alg. 2-3) fed ``g_t = clip_L(grad f_t(x_t))`` in place of ``theta_t``.

    Each round the learner plays the perturbed leader ``x_t`` (the point of the action
    played), receives the full loss ``f_t`` (its parameter clipped to the declared
    set), and adds ``g_t``, a subgradient at ``x_t`` clipped to the l2 ball of radius
    ``L = problem.lipschitz`` (:func:`agents.common.clipped_gradient`), to the Gaussian
    counter as the linear loss ``<g_t, x>``. Parameters are :class:`PrivateFTPL`'s
    (Thm. 3.5) with ``||Y||_2 = L`` and the counter's l2 sensitivity ``Delta_2 = 2L``
    (:func:`agents.common.gradient_sensitivity`):
    ``sigma = max{L sqrt(T / (sqrt(N) R)), sigma_priv}`` per draw.

    Privacy: as ``private-ftrl-grad``'s (adaptive composition of the counter's releases;
    ``x_t`` depends on the past releases and on data-independent noise only;
    ``docs/algorithms/private-ftrl-grad.md``): ``(epsilon, delta)``-DP. On linear losses
    with ``theta_set`` ``"l2"`` or ``"linf"`` it plays bit-identically to
    ``private-ftpl`` (same seed).

    Regret: convexity gives ``f_t(x_t) - f_t(x) <= <g_t, x_t - x>``, but here ``g_t``
    depends on the round's own perturbation (through ``x_t``), while Thm. 3.5's
    argument (Abernethy et al. 2014 smoothing) needs the round's linear loss to be
    independent of it. So Thm. 3.5's bound
    ``O(N^{1/4} ||X||_2 L sqrt(T) + N ||X||_2 log^{1.5} T log(log T / delta) / eps)``
    is NOT proven for this learner; it holds when ``g_t`` does not depend on ``x_t``
    (linear losses; hinge losses on a domain where every margin is ``< 1``, where
    ``g_t = -y_t a_t``). Measured regret: ``docs/results.md`` (real-data section).

    Args:
        counter: Continual counter name (default ``"agarwal-singh"``).

    Attributes:
        gradient_bound: ``L``, the clip radius of every gradient.
        clipped_gradients: How many gradients the clip shortened (beyond rounding).

    Raises:
        ValueError: For ``delta = 0``, non-convex losses or an unknown counter.
    """

    name = "private-ftpl-grad"
    description = ("private FTPL (Agarwal-Singh Alg. 3) on linearized convex losses: linear "
                   "oracle on Gaussian tree-aggregated sums of gradients clipped to L")
    paper = ("Agarwal & Singh, ICML 2017, Alg. 2-3, Thm. 3.5, on the linearized losses "
             "<grad f_t(x_t), x> (Hazan, Intro. to OCO, Ch. 3, 5); Smith & Thakurta 2013")
    #: Exponent of Thm. 3.5's rate in T where it applies (g_t independent of x_t); no
    #: proven rate otherwise (``dp_online_envs.lab.experiments.rates``).
    regret_rate = 0.5

    def setup(self, counter: str = "agarwal-singh") -> None:
        #: ``L``: the clip radius of every gradient (the problem's Lipschitz constant).
        self.gradient_bound = float(self.problem.lipschitz)
        super().setup(counter=counter)

    def _check_loss(self) -> None:
        require_convex(self.name, self.problem.loss)

    def _input_norm(self) -> float:
        return self.gradient_bound

    def _sensitivity(self) -> float:
        return gradient_sensitivity(self.gradient_bound, self.problem.dim, 2)

    def _counter_input(self, action, feedback) -> np.ndarray:
        theta = self.clip_feedback(feedback)
        x = self.point(action)
        g, clipped = clipped_gradient(self.problem.loss, theta, x, self.gradient_bound)
        self.clipped_gradients += int(clipped)
        return g

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.clipped_gradients = 0
