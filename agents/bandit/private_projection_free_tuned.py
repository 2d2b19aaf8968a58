r"""Tuned variants of the blocked projection-free bandit learners.

``garber-kretzu-tuned`` -- :class:`GarberKretzuTuned`, ``private-projection-free-tuned``
-- :class:`PrivateProjectionFreeTuned`: the algorithms of
:mod:`agents.bandit.garber_kretzu` and :mod:`agents.bandit.private_projection_free`, line for
line, with three utility parameters set by a rule instead of by the regret bound:

* the smoothing radius ``zeta = shrink r`` (so the App. D shrink is ``alpha = shrink``)
  instead of the minimizer of the explicit bound clamped at ``r / 2``;
* the step: ``step`` times the theorem's ``eta``;
* the block length ``K = T_batch``, a given number of rounds (default Alg. 1's
  ``round(sqrt T)``), ``M = T_round = ceil(T / K)``;

and, in the non-private ``garber-kretzu-tuned`` only, a baseline: block ``m``'s
one-point estimates scale ``f_t - b_m`` instead of ``f_t``, ``b_m`` the mean feedback of
the blocks before it (0 in the first). ``b_m`` is fixed before block ``m``'s directions
``u_t`` are drawn and ``E u_t = 0``, so the estimates keep their mean and lose the part
of their variance that the loss's level (not its slope) causes: ``(n / zeta)^2 E (f_t -
b_m)^2`` instead of ``(n / zeta)^2 E f_t^2``. The private variant has none: ``b_m``
depends on every earlier loss, which the theorem's calibration of one block's sum does
not cover.

Everything else is the theorem's formula evaluated at these ``zeta, K``: the step
``eta = step D / (kappa M^{1/2})`` with ``kappa = K^{1/2} n B / zeta + K L``, Garber-Kretzu's
tolerance ``epsilon = D^2 / M``, and the private learner's calibration: sensitivity
``2 n B / zeta`` (l2; times ``sqrt n`` in l1) of each block's sum and the tree counter
over the ``M`` blocks, so its privacy guarantee is the theorem variant's at the radius
it uses (a smaller ``zeta`` means more noise, not less privacy).

What was tuned, and on what: ``shrink`` and ``step`` (``K`` kept at
``round(sqrt T)``), on game seed 0 of ``DPBandit-Matroid-v2`` (uniform matroid n=10,
rank 4; planted-vertex gap 0.5 and 0.9) at T = 2^14 and 2^16, over the partial grid
``shrink in {1/2, 1/4, 1/8, 1/16}`` x ``step in {1, 4, 8, 16, 32, 128}``: the least
ratio of regret to trivial play's was at ``shrink = 1/4, step = 4`` (0.52 at T = 2^16,
gap 0.9; the theorem's ``garber-kretzu``, clamped at 1/2 with step 1, had 0.80 at
T = 2^16 with gap 0.5).
Smaller radii lose: the one-point estimates' variance ``(n B / zeta)^2`` outgrows the
shrink they save. The baseline was added next, at these values: on game seeds
1000..1003 of ``DPBandit-Matroid-v2`` at T = 2^16 (planted gap 0.5, the loss's level
0.56 at the center against a standard deviation of 0.43) it took the ratio to trivial
play from 0.50-0.54 to 0.37-0.40 (seeds 1000..1002); with it, step 8 did no better than
4 at T = 2^14. The separation study (``benchmarks/studies/separation``) measures both
variants on its own game seeds, disjoint from these tuning seeds.
On linear losses the perturbation ``zeta u`` costs nothing in expectation, so the
radius trades only the shrink ``alpha x trivial`` against the estimates' variance
``(n B / zeta)^2``, which the bound's ``T L (2 + D/r) zeta`` term overstates.
"""

from __future__ import annotations

import math

import numpy as np

from agents.bandit.garber_kretzu import GarberKretzu
from agents.bandit.private_projection_free import PrivateProjectionFree
from agents.bandit.smoothing import (
    MAX_SHRINK,
    BlockedParameters,
    batch_gradient_bound,
    batch_sizes,
)
from agents.base import register
from dp_online_envs.validation import check_bool, check_int, check_real

__all__ = ["DEFAULT_SHRINK", "DEFAULT_STEP", "GarberKretzuTuned", "PrivateProjectionFreeTuned",
           "tuned_parameters"]

#: The default ``alpha = zeta / r`` of the tuned variants (module docstring).
DEFAULT_SHRINK = 1.0 / 4.0
#: The default factor on the theorem's step ``eta`` (module docstring).
DEFAULT_STEP = 4.0


def tuned_parameters(horizon: int, n: int, diameter: float, lipschitz: float, bound: float,
                     radius: float, *, shrink: float, batch: int | None,
                     step: float) -> BlockedParameters:
    """The blocked learners' parameters at a given shrink and block length.

    ``zeta = shrink r``, ``K = batch`` (default ``round(sqrt T)``), ``M = ceil(T / K)``,
    ``eta = step D / (kappa M^{1/2})`` with ``kappa`` of
    :func:`~agents.bandit.smoothing.batch_gradient_bound`; ``zeta_formula`` is the radius
    used (no clamp applies: ``shrink <= 1/2``).

    Raises:
        ValueError: On ``shrink`` outside ``(0, 1/2]``, ``batch`` outside ``[1, T]`` or
            ``step`` not positive.
    """
    T = int(horizon)
    shrink = check_real("shrink", shrink, 0.0, MAX_SHRINK, low_inclusive=False)
    k = batch_sizes(T)[0] if batch is None else check_int("batch", batch, 1, T)
    rounds = -(-T // k)
    zeta = shrink * radius
    kappa = batch_gradient_bound(k, n, bound, lipschitz, zeta)
    eta = check_real("step", step, 0.0, low_inclusive=False) * diameter / (
        kappa * math.sqrt(rounds))
    return BlockedParameters(k, rounds, eta, zeta, zeta, shrink, False,
                             diameter * math.sqrt(n) / T**0.25)


class _Tuned:
    """Replaces the theorem's ``zeta`` and ``K`` by the tuned ones (module docstring);
    mixed in before the theorem variant, whose ``setup`` calls ``_setup_geometry``."""

    _shrink: float = DEFAULT_SHRINK
    _batch: int | None = None
    _step: float = DEFAULT_STEP

    def _setup_geometry(self) -> None:
        super()._setup_geometry()
        p = self.problem
        self.params = tuned_parameters(p.horizon, self.geometry.rank, p.diameter, p.lipschitz,
                                       p.bound, self.geometry.radius, shrink=self._shrink,
                                       batch=self._batch, step=self._step)
        self.batch, self.rounds = self.params.batch, self.params.rounds
        self.eta, self.zeta, self.alpha = self.params.eta, self.params.zeta, self.params.alpha


@register
class GarberKretzuTuned(_Tuned, GarberKretzu):
    """``garber-kretzu`` with the tuned radius and block length and, by default, a
    baseline subtracted from the feedback (module docstring). Non-private.

    Args:
        shrink: ``alpha = zeta / r`` in ``(0, 1/2]`` (default 1/4).
        batch: ``K`` (default ``round(sqrt T)``), in ``[1, T]``.
        step: Factor on the theorem's ``eta`` (default 4).
        baseline: Scale ``f_t - b_m`` instead of ``f_t`` in the one-point estimates of
            block ``m``, ``b_m`` the mean feedback of the blocks before it (0 in the
            first); default True.
        max_fw_iterations: Frank-Wolfe steps allowed per block (default ``20 K``).
    """

    name = "garber-kretzu-tuned"
    description = ("garber-kretzu with a tuned smoothing radius (shrink alpha = 1/4, step x4 "
                   "by default), block length and a running-mean baseline; non-private")

    def setup(self, shrink: float = DEFAULT_SHRINK, batch: int | None = None,
              step: float = DEFAULT_STEP, baseline: bool = True,
              max_fw_iterations: int | None = None) -> None:
        self._shrink, self._batch, self._step = shrink, batch, step
        self.baseline = check_bool("baseline", baseline)
        super().setup(max_fw_iterations=max_fw_iterations)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._offset, self._feedback_sum = 0.0, 0.0

    def _centered(self, f: float) -> float:
        if not self.baseline:
            return f
        self._feedback_sum += f
        return f - self._offset

    def _take_batch(self) -> np.ndarray:
        if self.baseline:  # the next block's b_m: the mean over every round so far
            self._offset = self._feedback_sum / self.t
        return super()._take_batch()


@register
class PrivateProjectionFreeTuned(_Tuned, PrivateProjectionFree):
    """``private-projection-free`` with the tuned radius and block length (module
    docstring); the theorem's calibration at the radius used.

    Args:
        shrink: ``alpha = zeta / r`` in ``(0, 1/2]`` (default 1/4).
        batch: ``K`` (default ``round(sqrt T)``), in ``[1, T]``.
        step: Factor on the theorem's ``eta`` (default 4).
        noise: ``"laplace"`` (default when ``delta = 0``) or ``"gaussian"`` (needs
            ``delta > 0``).
        counter: Continual counter name (default ``"tree"``).
    """

    name = "private-projection-free-tuned"
    description = ("private-projection-free with a tuned smoothing radius (shrink alpha = "
                   "1/4, step x4 by default) and block length; the theorem's privacy calibration")

    def setup(self, shrink: float = DEFAULT_SHRINK, batch: int | None = None,
              step: float = DEFAULT_STEP, noise: str | None = None,
              counter: str = "tree") -> None:
        self._shrink, self._batch, self._step = shrink, batch, step
        super().setup(noise=noise, counter=counter)
