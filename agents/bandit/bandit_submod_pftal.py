r"""``bandit-submod-pftal``: private online submodular minimization with bandit feedback.

Algorithm 2 of Cardoso & Cummings, "Differentially Private Online Submodular
Optimization" (AISTATS 2019), Theorem 8 (privacy), Theorem 9 (regret
``O~(M n^{3/2} T^{3/4} / eps)``), on the chain sampling and one-point estimator of
:class:`~agents.bandit.hazan_kale_submodular_bandit.ChainBandit` (Lemmas 4-6; its
non-private neighbour is ``hazan-kale-submodular-bandit``).

BanditSubmodPFTAL (Thm. 9): ``gamma = min(1, n / T^{1/4})`` (clamp; ``gamma_uncapped``
keeps the formula), ``H = M / (sqrt(n) T^{1/4})``, ``x_1 = 0``,
``x_{t+1} = Proj_K(-v_t / (H t))``. Privacy (Thm. 8, ``calibration="real"``, default):
the estimate's norm is at most ``G = c(n) (n+1) M / gamma`` (``c(n) = 2`` for
``n >= 2``, 1 for ``n = 1``; clipped there, counted in :attr:`clipped_estimates`), the
counter is calibrated to the replace-one sensitivity ``Delta = 2 G`` -- coordinatewise
Laplace (``delta = 0``, eps-DP) or exact discrete Gaussian (``delta > 0``). The paper's
``L = 4M + 2 H sqrt(n)`` (``calibration="paper"``, reproduction only) is far below
``Delta``; the agent then declares the epsilon that noise really gives.

Unbiasedness, the real sensitivity and the paper's error:
``docs/algorithms/bandit-submod-pftal.md``.
"""

from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np

from agents.bandit.hazan_kale_submodular_bandit import ChainBandit, one_point_estimate_bound
from agents.base import register
from agents.common import split_rng
from agents.counter_agent import CounterAgent
from agents.lovasz import lovasz_pftal_step, require_submodular
from agents.privacy import accountant_epsilon, verify_guarantee
from agents.privacy.noise import default_noise
from dp_online_envs.validation import check_real

__all__ = ["CALIBRATIONS", "BanditSubmodPFTAL", "bandit_submod_parameters", "paper_lipschitz"]

CALIBRATIONS = ("real", "paper")


# --------------------------------------------------------------------- parameters
def bandit_submod_parameters(scale: float, n: int, horizon: int) -> dict[str, float]:
    """CC Thm. 9: ``gamma = min(1, n / T^{1/4})`` (clamped),
    ``H = M / (sqrt(n) T^{1/4})``; also the uncapped ``n / T^{1/4}``."""
    q = float(horizon) ** 0.25
    raw = n / q
    return {"gamma": min(1.0, raw), "gamma_uncapped": raw,
            "H": float(scale) / (math.sqrt(n) * q)}


def paper_lipschitz(scale: float, n: int, H: float) -> float:
    """The paper's tree calibration ``L = 4M + 2 H sqrt(n)`` (CC Thm. 9)."""
    return 4.0 * float(scale) + 2.0 * float(H) * math.sqrt(n)


# ------------------------------------------------------------ BanditSubmodPFTAL
@register
class BanditSubmodPFTAL(CounterAgent, ChainBandit):
    r"""Cardoso-Cummings BanditSubmodPFTAL (AISTATS 2019, Alg. 2): private FTAL on the
    one-point estimates of the Lovász subgradients, calibrated to their real sensitivity.

    Each round: sample ``S_t = B_k`` on the chain of ``x_t`` with ``rho_k = (1-gamma) mu_k
    + gamma/(n+1)``, observe ``f_t(S_t)``, feed ``g_t`` (module docstring) to the
    continual counter, release its noisy prefix sum ``v_t`` and play next
    ``x_{t+1} = Proj_K(-v_t / (H t))``.

    Attributes (set by ``setup``): ``gamma``, ``gamma_uncapped``, ``H``,
    ``estimate_bound`` (``G``), ``sensitivity`` (``Delta = 2G``), ``paper_lipschitz``
    (``L``), ``counter_sensitivity`` (what the counter is calibrated to), ``noise``,
    ``noise_scale`` (per-draw Laplace ``b`` / Gaussian ``sigma``), ``privacy``.

    Args:
        counter: Continual counter (a key of :data:`agents.privacy.COUNTERS`;
            default ``"tree"``, the paper's TBAP).
        calibration: ``"real"`` (default) or ``"paper"`` (module docstring).
        gamma: Exploration probability override, in ``(0, 1]``.
        regularization: ``H`` override, ``> 0``.
    """

    name = "bandit-submod-pftal"
    description = ("Cardoso-Cummings BanditSubmodPFTAL (Alg. 2): private FTAL on one-point "
                   "Lovász-subgradient estimates, tree noise at their real sensitivity")
    paper = ("Cardoso & Cummings, Differentially Private Online Submodular Optimization, "
             "AISTATS 2019: Alg. 2, Lemmas 4-6, Thm. 8/9")
    private = True

    def setup(self, counter: str = "tree", calibration: str = "real",
              gamma: float | None = None, regularization: float | None = None) -> None:
        p = self.problem
        require_submodular(self.name, p)
        if calibration not in CALIBRATIONS:
            raise ValueError(f"calibration={calibration!r}, expected one of {CALIBRATIONS}")
        n, T = p.dim, p.horizon
        #: ``M``: bound on ``|f_t|`` (the family's scale).
        self.scale = float(p.bound)
        params = bandit_submod_parameters(self.scale, n, T)
        self.gamma_uncapped = params["gamma_uncapped"]
        self.gamma = params["gamma"] if gamma is None else check_real(
            "gamma", gamma, 0.0, 1.0, low_inclusive=False)
        self.H = params["H"] if regularization is None else check_real(
            "regularization", regularization, 0.0, low_inclusive=False)
        self.estimate_bound = one_point_estimate_bound(self.scale, n, self.gamma)
        self.sensitivity = 2.0 * self.estimate_bound
        self.paper_lipschitz = paper_lipschitz(self.scale, n, self.H)
        self.calibration = calibration
        noise = default_noise(self.delta)
        probe = self._use_counter(
            counter, noise, self.sensitivity if calibration == "real" else self.paper_lipschitz)
        self.levels = int(T).bit_length()
        if calibration == "real":
            self.privacy = probe.guarantee()
        else:
            # The same noise, accounted for the real sensitivity Delta.
            real = copy.copy(probe)
            real.noise_strategy = dataclasses.replace(probe.noise_strategy,
                                                      sensitivity=self.sensitivity)
            event = real.describe()
            eps_real = accountant_epsilon(event, probe.delta)
            ns = probe.noise_strategy
            self.privacy = verify_guarantee(
                event, eps_real, probe.delta, idealized=ns.private and not ns.exact,
                mechanism=f"{probe!r} with the paper's calibration L={self.paper_lipschitz:.4g} "
                          f"for sensitivity {self.sensitivity:.4g}")

    @property
    def _counter_epsilon(self) -> float:
        """The budget the counter is calibrated to (a subclass may scale it: the
        setter replaces the frozen :attr:`counter_spec`)."""
        return self.counter_spec.epsilon

    @_counter_epsilon.setter
    def _counter_epsilon(self, value: float) -> None:
        self.counter_spec = dataclasses.replace(self.counter_spec, epsilon=value)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        noise_rng, play_rng = split_rng(self.rng, 2)
        self._counter = self._make_counter(noise_rng)
        self._start(np.zeros(self.problem.dim), play_rng)

    def update(self, action, feedback) -> None:
        g = self._estimate(feedback)
        v = self.release(self._counter.add(g))
        self.t += 1
        self._x = lovasz_pftal_step(self.problem.domain, v, self.t, self.H)
