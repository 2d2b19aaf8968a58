"""Agarwal-Singh private follow-the-perturbed-leader (Algorithm 3, Theorem 3.5)."""

from __future__ import annotations

import math

import numpy as np

from agents.base import Agent, register
from agents.common import (
    env_action,
    paper_log,
    replacement_sensitivity,
    require_linear,
    split_rng,
    theta_norm,
)
from dp_online_envs.validation import check_gaussian_delta
from agents.counter_agent import CounterAgent


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

    Options:
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
    requires = ("lipschitz",)

    def setup(self, counter: str = "agarwal-singh") -> None:
        check_gaussian_delta(self.delta, hint="private-ftpl is (epsilon, delta)-DP with "
                             "Gaussian noise (Agarwal-Singh Thm. 3.5): pass delta=1e-6 in "
                             "Python, --delta 1e-6 on the command line")
        p = self.problem
        loss = require_linear(self.name, p.loss)
        T, n = p.horizon, p.dim
        #: The paper's ceil(log T): draws per release of Alg. 2 (>= 1).
        self.log_T = paper_log(T)
        self.loss_norm = theta_norm(loss, 2)  # ||Y||_2
        #: l2 diameter of the loss set: the counter's sensitivity.
        self.sensitivity = replacement_sensitivity(loss, 2)
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
        theta = self.clip_feedback(feedback)
        self._noisy = self.release(self._counter.add(theta))
        self.t += 1
        self._noise_var = self._counter.noise_variance(self.t)
