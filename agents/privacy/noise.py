"""Noise strategies of the continual counters: Laplace, Gaussian, or none.

A strategy is one kind of noise with its budget: how one draw is sampled
(:meth:`~NoiseStrategy.draw`), its variance, its calibration to a sensitivity and a
privacy budget, and the ``dp_accounting`` event it yields -- in the spirit of TF
Privacy's ``ValueGenerator`` (``tree_aggregation.GaussianNoiseGenerator``). The
counters of :mod:`agents.privacy.counters` hold the tree or factorization structure
and take the noise from a strategy.

A strategy is immutable. It is built with its budget (``scale = 0``); the counter
calls :meth:`~NoiseStrategy.calibrate` with the structure's multiplicity and gets a
copy with the scale of one draw set:

* :class:`LaplaceNoise` -- pure ``epsilon``-DP; ``copies`` blocks each moved by
  ``gain * Delta_1`` in l1 need ``b = copies * gain * Delta_1 / epsilon``;
  variance ``2 b^2``.
* :class:`GaussianNoise` -- ``(epsilon, delta)``-DP; l2 sensitivity
  ``sqrt(copies) * gain * Delta_2``, ``sigma`` from the analytic Gaussian mechanism
  (:func:`~agents.privacy.calibration.gaussian_sigma`); variance ``sigma^2``.
* :class:`NoNoise` -- exact sums, NOT private (``scale = 0``, the accountant's
  ``NonPrivateDpEvent``); the non-private limit of the learners.
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np
from dp_accounting import dp_event

from dp_online_envs.validation import check_epsilon, check_gaussian_delta, check_real

from .calibration import (
    PrivacyGuarantee,
    gaussian_sigma,
    laplace_scale,
    verify_guarantee,
)

__all__ = ["NOISE_KINDS", "GaussianNoise", "LaplaceNoise", "NoNoise", "NoiseStrategy",
           "default_noise", "noise_strategy"]


class NoiseStrategy(ABC):
    """One kind of noise and its budget (see the module docstring).

    Attributes:
        kind: ``"laplace"``, ``"gaussian"`` or ``None`` (exact sums).
        private: Whether the noise gives differential privacy.
        epsilon, delta, sensitivity: The budget (``None`` for :class:`NoNoise`;
            ``delta = 0`` for Laplace).
        scale: Scale of one draw (Laplace ``b``, Gaussian ``sigma``; 0 before
            :meth:`calibrate` and for :class:`NoNoise`).
    """

    kind: ClassVar[str | None]
    private: ClassVar[bool] = True
    epsilon: float | None
    delta: float | None
    sensitivity: float | None
    scale: float

    @abstractmethod
    def calibrate(self, copies: int = 1, gain: float = 1.0) -> NoiseStrategy:
        """A copy with the scale of one draw for ``copies`` noised blocks, each moved
        by at most ``gain * sensitivity`` when one input changes."""

    @abstractmethod
    def draw(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        """Independent draws of scale :attr:`scale`, of the given shape."""

    @abstractmethod
    def sum_of_draws(self, rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
        """The sum of ``n`` independent draws of shape ``(dim,)``."""

    @property
    @abstractmethod
    def variance(self) -> float:
        """Variance of one draw (per coordinate)."""

    @abstractmethod
    def dp_event(self, gain: float = 1.0, copies: int | None = None) -> dp_event.DpEvent:
        """The event of one draw on a block of sensitivity ``gain * sensitivity``,
        self-composed ``copies`` times when ``copies`` is given."""

    def guarantee(self, event: dp_event.DpEvent, mechanism: str) -> PrivacyGuarantee:
        """The accountant's guarantee for ``event`` checked against the budget.

        Raises:
            ValueError: If the accountant does not confirm ``(epsilon, delta)``.
        """
        return verify_guarantee(event, self.epsilon, self.delta, mechanism=mechanism)

    def __str__(self) -> str:
        return f"{self.kind} scale={self.scale:.6g}"


def _composed(node: dp_event.DpEvent, copies: int | None) -> dp_event.DpEvent:
    return node if copies is None else dp_event.SelfComposedDpEvent(node, copies)


@dataclasses.dataclass(frozen=True)
class LaplaceNoise(NoiseStrategy):
    """Laplace noise for pure ``epsilon``-DP, sensitivity in l1 (``delta = 0``)."""

    epsilon: float
    sensitivity: float
    scale: float = 0.0
    delta: float = dataclasses.field(default=0.0, init=False)
    kind: ClassVar[str] = "laplace"

    def calibrate(self, copies: int = 1, gain: float = 1.0) -> LaplaceNoise:
        return dataclasses.replace(
            self, scale=laplace_scale(copies * gain * self.sensitivity, self.epsilon))

    def draw(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        return rng.laplace(0.0, self.scale, size=shape)

    def sum_of_draws(self, rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
        return rng.laplace(0.0, self.scale, size=(n, dim)).sum(axis=0)

    @property
    def variance(self) -> float:
        return 2.0 * self.scale**2

    def dp_event(self, gain: float = 1.0, copies: int | None = None) -> dp_event.DpEvent:
        return _composed(dp_event.LaplaceDpEvent(self.scale / (gain * self.sensitivity)),
                         copies)


@dataclasses.dataclass(frozen=True)
class GaussianNoise(NoiseStrategy):
    """Gaussian noise for ``(epsilon, delta)``-DP, sensitivity in l2 (``0 < delta < 1``)."""

    epsilon: float
    delta: float
    sensitivity: float
    scale: float = 0.0
    kind: ClassVar[str] = "gaussian"

    def calibrate(self, copies: int = 1, gain: float = 1.0) -> GaussianNoise:
        return dataclasses.replace(self, scale=gaussian_sigma(
            math.sqrt(copies) * gain * self.sensitivity, self.epsilon, self.delta))

    def draw(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        return rng.normal(0.0, self.scale, size=shape)

    def sum_of_draws(self, rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
        return rng.normal(0.0, self.scale * math.sqrt(n), size=dim)

    @property
    def variance(self) -> float:
        return self.scale**2

    def dp_event(self, gain: float = 1.0, copies: int | None = None) -> dp_event.DpEvent:
        return _composed(dp_event.GaussianDpEvent(self.scale / (gain * self.sensitivity)),
                         copies)


@dataclasses.dataclass(frozen=True)
class NoNoise(NoiseStrategy):
    """No noise: exact sums, NOT private (infinite epsilon)."""

    epsilon: None = None
    delta: None = None
    sensitivity: None = None
    scale: float = 0.0
    kind: ClassVar[None] = None
    private: ClassVar[bool] = False

    def calibrate(self, copies: int = 1, gain: float = 1.0) -> NoNoise:
        return self

    def draw(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        return np.zeros(shape)

    def sum_of_draws(self, rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
        return np.zeros(dim)

    @property
    def variance(self) -> float:
        return 0.0

    def dp_event(self, gain: float = 1.0, copies: int | None = None) -> dp_event.DpEvent:
        return dp_event.NonPrivateDpEvent()

    def guarantee(self, event: dp_event.DpEvent, mechanism: str) -> PrivacyGuarantee:
        return PrivacyGuarantee(math.inf, 0.0, mechanism=mechanism)

    def __str__(self) -> str:
        return "exact"


#: The noise kinds by name (``None``: exact sums).
NOISE_KINDS: dict[str | None, type[NoiseStrategy]] = {
    "laplace": LaplaceNoise, "gaussian": GaussianNoise, None: NoNoise}


def default_noise(delta: float) -> str:
    """The noise of a learner that takes no ``noise=`` option: ``"laplace"`` (pure
    epsilon-DP) when ``delta = 0``, else ``"gaussian"`` ((epsilon, delta)-DP)."""
    return "laplace" if delta == 0.0 else "gaussian"


def noise_strategy(noise: str | None, epsilon: float | None = None,
                   delta: float | None = None,
                   sensitivity: float | None = None) -> NoiseStrategy:
    """The (uncalibrated) strategy called ``noise`` with a checked budget.

    Args:
        noise: ``"laplace"``, ``"gaussian"`` or ``None`` (exact, non-private).
        epsilon: ``0 < epsilon < inf`` (unless ``noise is None``).
        delta: ``0 < delta < 1`` for Gaussian noise; ignored otherwise.
        sensitivity: ``Delta_1`` (Laplace) / ``Delta_2`` (Gaussian), ``> 0``.

    Raises:
        ValueError: On an unknown kind or an invalid budget (named in the message),
            checked in the order epsilon, sensitivity, delta.
    """
    if noise is None:
        return NoNoise()
    if noise not in ("laplace", "gaussian"):
        raise ValueError(f"noise must be 'laplace', 'gaussian' or None, got noise={noise!r}")
    eps = check_epsilon(epsilon)
    sens = check_real("sensitivity", sensitivity, 0.0, low_inclusive=False)
    if noise == "laplace":
        return LaplaceNoise(eps, sens)
    return GaussianNoise(eps, check_gaussian_delta(delta), sens)
