r"""Locally differentially private LinUCB (Zheng, Cheng, Xu and Sheffet, NeurIPS 2020).

``ldp-linucb`` -- :class:`LDPLinUCB`: the LDP contextual linear bandit algorithm of
Zheng, Cheng, Xu and Sheffet, "Locally Differentially Private (Contextual) Bandits
Learning" (NeurIPS 2020): their contextual linear bandit algorithm, LinUCB on locally
perturbed statistics, and its regret theorem, ``O~(d^{3/4} T^{3/4} / epsilon)`` for a fixed K), on the disjoint
per-arm model of :mod:`agents.bandit.linucb`.

Each round (each user) privatizes its own statistics BEFORE the learner aggregates them:
with ``y_t = (c_t, l_t)`` (clipped: context to the unit ball, loss to ``[0, 1]``) the
round's report is the stack over the K arms of the augmented upper triangles
(``U(y_t y_t^T)`` in the block of the arm played, zeros elsewhere, as in
:mod:`agents.bandit.jdp_linucb`) PLUS independent exact discrete Gaussian noise on every
entry of every block:

    report_t = g (round(z_t / g) + Y_t),   Y_t ~ N_Z(0, sigma^2) i.i.d. (K (d+1)(d+2)/2),

so the report hides which arm was played as well as the context and the loss. The
learner keeps only the sum of the reports, ``M~_a`` per arm, and plays LinUCB on
``A~_a = M~_a[:d, :d] + 2 Upsilon_t I``, ``b~_a = M~_a[:d, d]``: after t reports each
noise entry is ``s_t = sqrt(t) sigma g``-sub-Gaussian, ``Upsilon_t = s_t (4 sqrt(d) +
2 ln(2 K T / alpha))`` (the paper's ``gamma_t``, shift ``2 gamma_t``), and the radius is the
widened OFUL radius with ``rho_min = Upsilon_t``, ``rho_max = 3 Upsilon_t``
(:func:`~agents.bandit.jdp_linucb.perturbed_radius`).

Privacy: every report is ``(epsilon, delta)``-DP with respect to its round's data -- the
context, the loss vector, and hence the arm played -- whatever the other rounds hold
(LOCAL differential privacy of the released statistics: the report is computed from the
round's own data and the public model only). The learner's state is a post-processing of
the reports, so the actions of all other rounds are ``(epsilon, delta)``-DP as well
(joint DP, which local DP implies). The action of the round itself is not protected
(it is the user's own). Sensitivity ``sqrt(6)`` as for ``jdp-linucb``
(:func:`~agents.bandit.jdp_linucb.augmented_sensitivity`); one report is one discrete
Gaussian mechanism (``dp_accounting``: zCDP, converted at ``delta``), no composition over
rounds (each round's data enters one report).

Departures (``docs/algorithms/contextual-bandits.md``): the paper's Gaussian mechanism
``sigma = 4 sqrt(2 ln(1.25/delta)) / epsilon`` (sensitivity 4, valid for ``epsilon <= 1``)
is replaced by the suite's exact discrete Gaussian calibrated to the real sensitivity
``sqrt(6)`` for every epsilon; the report also carries ``l^2`` (one unused entry per arm,
so that the matrix is the augmented one of ``jdp-linucb``); the union bounds run over K
arms; the radius is the widened OFUL radius of Shariff and Sheffet with these bounds.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from agents.bandit.jdp_linucb import NoisyRidgeAgent
from agents.base import register
from agents.common import noise_block
from agents.privacy.noise import DiscreteGaussianNoise, ExactNoise, NoNoise
from dp_online_envs.validation import check_bool

__all__ = ["LDPLinUCB", "zheng_sigma"]

LOCAL_NEIGHBOURING = ("one round's data (its context and its loss vector) changed; local "
                      "DP of that round's report (and so joint DP of the other rounds' "
                      "actions)")


def zheng_sigma(epsilon: float, delta: float) -> float:
    """The paper's per-entry Gaussian noise, ``4 sqrt(2 ln(1.25/delta)) / epsilon`` (the
    classical Gaussian mechanism for an l2 sensitivity of 4; for comparison, not used)."""
    return 4.0 * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


@register
class LDPLinUCB(NoisyRidgeAgent):
    r"""Locally differentially private LinUCB (Zheng, Cheng, Xu, Sheffet 2020):
    each round's augmented statistics perturbed with exact discrete Gaussian noise
    before aggregation; ``(epsilon, delta)``-local DP of every report (module docstring).
    Needs ``delta > 0``.

    Calibration (``docs/algorithms/contextual-bandits.md``): one report, ``K (d+1)(d+2)/2``
    entries of l2 sensitivity ``sqrt(6)``, one discrete Gaussian mechanism accounted by
    ``dp_accounting``; ``s_t = sqrt(t) sigma g``, ``Upsilon_t =``
    :func:`~agents.bandit.jdp_linucb.operator_bound`, shift ``2 Upsilon_t``, ``rho_min =
    Upsilon_t``, ``rho_max = 3 Upsilon_t``, ``gamma_t =``
    :func:`~agents.bandit.jdp_linucb.target_bound`, ``beta_t =``
    :func:`~agents.bandit.jdp_linucb.perturbed_radius`. Regret (their theorem for the
    contextual case): ``O~((d^{3/4} T^{3/4} / epsilon) sqrt(K))`` with probability
    ``1 - failure_prob``.

    Args:
        alpha: A fixed radius in place of ``beta_t``; ``None`` (default): the widened
            radius.
        failure_prob: The failure probability (the papers' alpha), in (0, 1).
        ridge: ``linucb``'s ridge lambda > 0, added to the shift (the regularizer is
            ``(ridge + shift_t) I`` plus the noise; the paper's has no ridge).
        shift: A fixed shift of the regularizer in place of ``2 Upsilon_t``; ``None``
            (default): ``2 Upsilon_t``. A given shift with ``alpha=None`` must exceed
            ``Upsilon_T`` (else the radius is undefined at the end of the game).
        add_noise: ``False`` switches the noise off: exact reports (NOT private, epsilon
            infinite), shift and radius unchanged (calibrated as with noise): the
            noise-free twin of an audit. With ``shift=lambda`` and ``alpha`` given it
            plays as ``linucb(ridge=lambda, alpha=alpha)``.

    Attributes:
        sensitivity: ``Delta_2 = sqrt(6)``.
        noise_strategy: The calibrated :class:`~agents.privacy.noise.DiscreteGaussianNoise`
            (:class:`~agents.privacy.noise.NoNoise` with ``add_noise=False``).
        noise_scale: ``sigma g`` of the calibrated noise (also with the noise off).
        paper_sigma: :func:`zheng_sigma` (for comparison).
    """

    name = "ldp-linucb"
    description = ("Locally DP LinUCB: each round's augmented statistics perturbed with exact "
                   "discrete Gaussian noise before aggregation (Zheng et al. 2020), delta > 0")
    paper = ("Zheng, Cheng, Xu, Sheffet, Locally Differentially Private (Contextual) Bandits "
             "Learning (NeurIPS 2020), contextual linear bandits")

    def setup(self, alpha: float | None = None, failure_prob: float = 0.05,
              ridge: float = 1.0, shift: float | None = None, add_noise: bool = True) -> None:
        self.setup_private(alpha, failure_prob, ridge, shift)
        add = check_bool("add_noise", add_noise)
        strategy = DiscreteGaussianNoise(self.epsilon, self.delta, self.sensitivity,
                                         dim=self.width, secure=self.secure).calibrate()
        self.noise_scale = float(strategy.scale)
        self.check_radius()
        self.paper_sigma = zheng_sigma(self.epsilon, self.delta)
        mechanism = (f"{strategy} added to each round's per-arm augmented statistics "
                     f"(l2 sensitivity {self.sensitivity:.6g}), then LinUCB on the sum of "
                     "the reports")
        checked = strategy.guarantee(strategy.dp_event(), mechanism=mechanism)
        if add:
            self.noise_strategy = strategy
            self.privacy = dataclasses.replace(checked, neighbouring=LOCAL_NEIGHBOURING)
        else:
            self.noise_strategy = NoNoise()
            self.privacy = dataclasses.replace(
                self.noise_strategy.guarantee(self.noise_strategy.dp_event(),
                                              mechanism="exact reports (noise off), then "
                                              "LinUCB"), neighbouring=LOCAL_NEIGHBOURING)

    def entry_scale_at(self, t: int) -> float:
        """``s_t = sqrt(t) sigma g``: the sub-Gaussian scale of a noise entry of the sum of
        ``t`` reports."""
        return math.sqrt(t) * self.noise_scale

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._noise = ExactNoise(self.noise_strategy, self.width) \
            if self.noise_strategy.private else None
        self._sum = np.zeros(self.width)

    def report(self, z: np.ndarray) -> np.ndarray:
        """The round's local release: ``g (round(z / g) + Y)`` (exact in float64), or ``z``
        with the noise off."""
        if self._noise is None:
            return z
        g = self.noise_strategy.grid
        y = self._noise.next_row(self.noise_rng, noise_block(self.problem.horizon - self.t))
        return (np.rint(z / g) + y) * g

    def update(self, action, feedback) -> None:
        loss, c, nxt = self.read_feedback(feedback)
        released = self.release(self.report(self.pack(int(action), loss, c)))
        self._sum += released
        self.t += 1
        self.absorb(self._sum, self.t)
        self.context = nxt
