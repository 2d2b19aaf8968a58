"""Noise strategies of the continual counters: (discrete) Laplace, (discrete) Gaussian, or none.

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

:class:`LaplaceNoise` and :class:`GaussianNoise` add continuous noise in float64; their
guarantees hold for the idealized real-valued mechanism only (``exact = False``: the
low-order bits of ``value + noise`` tell neighbours apart, Mironov CCS 2012) and are
marked ``idealized`` in their :class:`~agents.privacy.calibration.PrivacyGuarantee`.
* :class:`DiscreteLaplaceNoise` -- pure ``epsilon``-DP computed EXACTLY: inputs are
  rounded onto a grid of step ``g`` (a power of two), noise is an integer from the
  exact discrete Laplace sampler of :mod:`agents.privacy.discrete`, sums are int64 and
  a release is ``integer * g`` (exact in float64 below ``2^53``). The default of the
  learners for ``delta = 0``.
* :class:`DiscreteGaussianNoise` -- ``(epsilon, delta)``-DP computed EXACTLY: the same
  grid and integer arithmetic, integer noise from the exact discrete Gaussian sampler
  (CKS Algorithm 3) with an integer ``sigma`` in grid units, accounted as ``rho``-zCDP.
  The default of the learners' integer counters for ``delta > 0``.
* :class:`NoNoise` -- exact sums, NOT private (``scale = 0``, the accountant's
  ``NonPrivateDpEvent``); the non-private limit of the learners.
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from dp_online_envs._former_paths import former_names
from dp_online_envs.validation import check_epsilon, check_gaussian_delta, check_real

from . import discrete
from .calibration import (
    PrivacyGuarantee,
    discrete_gaussian_rho,
    discrete_gaussian_sigma,
    gaussian_sigma,
    laplace_scale,
    verify_guarantee,
)

if TYPE_CHECKING:  # dp_accounting is imported where it is used (its import takes 0.8 s)
    from dp_accounting import dp_event

__all__ = ["GRID_BITS", "NOISE_KINDS", "VectorExactNoise", "DiscreteGaussianNoise",
           "DiscreteLaplaceNoise", "ExactNoise",
           "GaussianNoise", "LaplaceNoise", "NoNoise", "NoiseStrategy", "default_noise",
           "noise_strategy"]


class NoiseStrategy(ABC):
    """One kind of noise and its budget (see the module docstring).

    Attributes:
        kind: ``"laplace"``, ``"gaussian"``, ``"discrete-laplace"``,
            ``"discrete-gaussian"`` or ``None`` (exact sums).
        private: Whether the noise gives differential privacy.
        epsilon, delta, sensitivity: The budget (``None`` for :class:`NoNoise`;
            ``delta = 0`` for Laplace).
        scale: Scale of one draw in data units (Laplace ``b``, Gaussian ``sigma``; for
            the discrete kinds ``t g`` / ``sigma g``; 0 before :meth:`calibrate` and for
            :class:`NoNoise`).
    """

    kind: ClassVar[str | None]
    private: ClassVar[bool] = True
    #: Whether the released values are computed exactly as the accounted mechanism
    #: (``False``: the guarantee is for the idealized real-valued mechanism).
    exact: ClassVar[bool] = False
    #: Grid step of an integer (exact) strategy; ``None`` for real-valued noise.
    grid: float | None = None
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
        return verify_guarantee(event, self.epsilon, self.delta, mechanism=mechanism,
                                idealized=self.private and not self.exact)

    def for_dim(self, dim: int) -> NoiseStrategy:
        """The strategy for inputs of dimension ``dim`` (the grid of an exact strategy
        depends on it); real-valued strategies return themselves."""
        return self

    def __str__(self) -> str:
        return f"{self.kind} scale={self.scale:.6g}"


def _composed(node: dp_event.DpEvent, copies: int | None) -> dp_event.DpEvent:
    from dp_accounting import dp_event

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
        from dp_accounting import dp_event

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
        from dp_accounting import dp_event

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
    exact: ClassVar[bool] = True

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
        from dp_accounting import dp_event

        return dp_event.NonPrivateDpEvent()

    def guarantee(self, event: dp_event.DpEvent | None, mechanism: str) -> PrivacyGuarantee:
        """No guarantee (epsilon infinite), whatever ``event`` is (``None`` included)."""
        return PrivacyGuarantee(math.inf, 0.0, mechanism=mechanism)

    def __str__(self) -> str:
        return "exact"


#: Grid resolution: the step is the largest power of two
#: ``g <= Delta_1 / (dim 2^16 max(1, epsilon))``.
GRID_BITS = 16


def _grid_step(sensitivity: float, dim: int, epsilon: float) -> float:
    """The largest power of two ``<= sensitivity / (dim 2^GRID_BITS max(1, epsilon))``."""
    _, e = math.frexp(sensitivity / (dim * 2.0**GRID_BITS * max(1.0, epsilon)))
    return math.ldexp(1.0, e - 1)


class _IntegerNoise(NoiseStrategy):
    """What the exact strategies share: integer draws in grid units (:meth:`draw_int`),
    scaled by the grid step for :meth:`draw`, from the counter's generator or the OS
    generator (``secure``), and a guarantee stated at the budget."""

    exact: ClassVar[bool] = True
    secure: bool

    def _source(self, rng):
        return discrete.OsRandom() if self.secure else rng

    @abstractmethod
    def draw_int(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` exact integer draws (int64), in grid units."""

    def draw(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        n = int(np.prod(shape))
        return (self.draw_int(rng, n) * self.grid).reshape(shape)

    def sum_of_draws(self, rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
        return self.draw_int(rng, n * dim).reshape(n, dim).sum(axis=0) * self.grid

    def for_dim(self, dim: int) -> _IntegerNoise:
        return dataclasses.replace(self, dim=int(dim), step=0.0)

    def guarantee(self, event: dp_event.DpEvent, mechanism: str) -> PrivacyGuarantee:
        """The accountant's check, stated at the budget ``epsilon``: the calibration
        rounds the integer noise parameter up, so the accountant's epsilon is at most the
        budget and ``epsilon``-DP (at ``delta``) is a true statement."""
        checked = super().guarantee(event, mechanism)
        return dataclasses.replace(checked, epsilon=max(checked.epsilon, self.epsilon))


@dataclasses.dataclass(frozen=True)
class DiscreteLaplaceNoise(_IntegerNoise):
    r"""Exact pure ``epsilon``-DP: grid rounding, integer discrete Laplace noise.

    Mechanism (per noised block of ``dim`` coordinates; Canonne, Kamath, Steinke,
    NeurIPS 2020, Algorithms 1-2, in :mod:`agents.privacy.discrete`):

    * grid: ``g = 2^{-k}``, the largest power of two ``<= Delta_1 / (dim 2^16
      max(1, epsilon))`` (:data:`GRID_BITS`; the ``epsilon`` keeps the integer scale
      ``t >= 2^16`` so that its rounding up costs at most ``2^-16`` relative);
      an input ``z`` becomes ``round_half_even(z / g)`` (int64;
      ``z / g`` is exact in float64, a power-of-two scaling);
    * sensitivity on the grid: if ``||z - z'||_1 <= Delta_1`` then
      ``|round(z_i/g) - round(z'_i/g)| <= |z_i - z'_i| / g + 1`` on every coordinate,
      so the integer l1 sensitivity is ``k1 = floor(Delta_1 / g) + dim`` (at most
      ``Delta_1/g (1 + 2^-16)``: the rounding costs a ``2^-16`` relative increase of
      the noise and an error of at most ``g/2 <= Delta_1 2^-17 / dim`` per
      coordinate, a ``2^-17 / dim`` fraction of the noise scale for ``epsilon <= 1``);
    * noise: i.i.d. integers with ``P(y) proportional to exp(-|y| / t)``,
      ``t = ceil(copies * k1 / epsilon)`` (computed exactly from the float epsilon as
      a fraction), so ``copies`` noised blocks are ``copies * k1 / t <= epsilon``-DP;
    * release: ``(integer sum + integer noise) * g``, exact in float64 while
      ``|integer| < 2^53`` (checked by the counters).

    Accounting: ``DiscreteLaplaceDpEvent(noise_parameter=1/t, sensitivity=k1)``
    self-composed ``copies`` times (``epsilon = copies k1 / t``).

    Attributes:
        dim: Coordinates per block (set by the counter through :meth:`for_dim`).
        secure: Draw from the OS cryptographic generator (:class:`~agents.privacy.
            discrete.OsRandom`) instead of the counter's numpy generator (about 3x
            slower per draw; the seeded generator is then ignored and runs are not
            reproducible).
        scale: ``t * g`` in data units (0 before :meth:`calibrate`).
        t: The integer scale of the noise in grid units (0 before :meth:`calibrate`).
        step: The grid step fixed by :meth:`calibrate` (0 before).
    """

    epsilon: float
    sensitivity: float
    dim: int = 1
    secure: bool = False
    scale: float = 0.0
    t: int = 0
    copies: int = 1
    step: float = 0.0
    delta: float = dataclasses.field(default=0.0, init=False)
    kind: ClassVar[str] = "discrete-laplace"

    @property
    def grid(self) -> float:  # type: ignore[override]
        """The grid step ``g`` (a power of two): :attr:`step` once calibrated (it then
        stays fixed, so a copy with another ``sensitivity`` accounts the SAME mechanism
        for that sensitivity), else derived from the budget."""
        return self.step or _grid_step(self.sensitivity, self.dim, self.epsilon)

    @property
    def grid_sensitivity(self) -> int:
        """``k1 = floor(Delta_1 / g) + dim``: l1 sensitivity of one block on the grid."""
        return math.floor(self.sensitivity / self.grid) + self.dim

    def calibrate(self, copies: int = 1, gain: float = 1.0) -> DiscreteLaplaceNoise:
        if gain != 1.0:
            raise ValueError("DiscreteLaplaceNoise supports integer structures only "
                             f"(gain=1), got gain={gain!r}")
        total = copies * self.grid_sensitivity
        t = math.ceil(Fraction(total) / Fraction(self.epsilon))
        if t > discrete.MAX_SCALE:
            raise ValueError(f"discrete Laplace scale t={t} exceeds 2^52: epsilon is too "
                             "small for the int64 sampler")
        return dataclasses.replace(self, t=int(t), copies=int(copies), step=self.grid,
                                   scale=float(t) * self.grid)

    def guarantee(self, event: dp_event.DpEvent | None = None,
                  mechanism: str = "") -> PrivacyGuarantee:
        """The guarantee of ``event``, or of this noise's own mechanism when ``event`` is
        ``None``.

        With an ``event``: the accountant's check, stated at the budget ``epsilon``: the
        mechanism's exact ``copies k1 / t`` is at most ``epsilon`` (``t`` is rounded up
        as a fraction), so ``epsilon``-DP is a true statement; the accountant's value is
        within ``2^-15`` below it.

        Without one: the calibrated mechanism itself, ``copies`` blocks of integer l1
        sensitivity ``k1`` each noised with parameter ``t`` (one input moves every
        block), is pure ``copies k1 / t``-DP by basic composition; that is checked
        against the budget in exact rational arithmetic and the guarantee is stated at
        the budget, as the accountant's route states it. No accountant is
        imported (``dp_accounting`` costs about 0.8 s of CPU to import, paid by every
        isolated or sandboxed learner process).

        Raises:
            ValueError: If the noise is not calibrated, or its mechanism exceeds the
                budget (named in the message).
        """
        if event is not None:
            return super().guarantee(event, mechanism)
        if self.t < 1:
            raise ValueError("DiscreteLaplaceNoise.guarantee() without an event needs a "
                             "calibrated noise (t >= 1): call calibrate() first")
        exact = Fraction(self.copies * self.grid_sensitivity, self.t)
        if exact > Fraction(self.epsilon):
            raise ValueError(f"discrete Laplace with t={self.t} on {self.copies} block(s) "
                             f"of l1 sensitivity {self.grid_sensitivity} is "
                             f"{float(exact)!r}-DP, above the budget "
                             f"epsilon={self.epsilon!r}")
        return PrivacyGuarantee(self.epsilon, 0.0, mechanism=mechanism)

    def draw_int(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` exact integer draws (int64), in grid units."""
        return discrete.discrete_laplace(self._source(rng), self.t, int(n))

    @property
    def variance(self) -> float:
        return discrete.discrete_laplace_variance(self.t) * self.grid**2

    def dp_event(self, gain: float = 1.0, copies: int | None = None) -> dp_event.DpEvent:
        from dp_accounting import dp_event

        if gain != 1.0:
            raise ValueError(f"DiscreteLaplaceNoise: gain must be 1, got {gain!r}")
        return _composed(dp_event.DiscreteLaplaceDpEvent(1.0 / self.t,
                                                         self.grid_sensitivity), copies)

    def __str__(self) -> str:
        return (f"discrete-laplace t={self.t} grid=2^{int(math.log2(self.grid))}"
                f"{' secure' if self.secure else ''}")


#: Grid of the discrete Gaussian: the step also keeps ``sigma`` in grid units at most
#: about ``2^GAUSS_MAX_BITS`` (below the sampler's :data:`~agents.privacy.discrete.
#: MAX_GAUSS_SIGMA`), coarsening the grid when the noise is very large.
GAUSS_MAX_BITS = 22
#: ... and keeps ``Delta_2 / g <= 2^(GAUSS_SPAN_BITS + 1)``.
GAUSS_SPAN_BITS = 28


def _pow2_floor(x: float) -> float:
    _, e = math.frexp(x)
    return math.ldexp(1.0, e - 1)


def _gauss_grid_step(sensitivity: float, dim: int, copies: int, epsilon: float,
                     delta: float) -> float:
    """The power of two ``g`` of :class:`DiscreteGaussianNoise` (see its docstring)."""
    est = gaussian_sigma(math.sqrt(copies) * sensitivity, epsilon, delta)
    fine = _pow2_floor(min(sensitivity / (math.sqrt(dim) * 2.0**GRID_BITS),
                           est / 2.0**GRID_BITS))
    coarse = 2.0 * _pow2_floor(est / 2.0**GAUSS_MAX_BITS)
    # and Delta_2 / g <= 2^29, so that sums of many inputs stay far below 2^52 grid steps
    # even when the noise is tiny (epsilon in the millions)
    span = _pow2_floor(sensitivity / 2.0**GAUSS_SPAN_BITS)
    return max(fine, coarse, span)


def _sqrt_upper(n: int) -> Fraction:
    """A rational ``>= sqrt(n)`` within ``2^-64`` of it."""
    return Fraction(math.isqrt(n << 128) + 1, 1 << 64)


@dataclasses.dataclass(frozen=True)
class DiscreteGaussianNoise(_IntegerNoise):
    r"""Exact ``(epsilon, delta)``-DP: grid rounding, integer discrete Gaussian noise.

    Mechanism (per noised block of ``dim`` coordinates; Canonne, Kamath, Steinke,
    NeurIPS 2020, Algorithm 3 in :func:`~agents.privacy.discrete.discrete_gaussian`):

    * grid: ``g`` a power of two, the largest ``<= min(Delta_2 / (sqrt(dim) 2^16),
      sigma_c / 2^16)`` with ``sigma_c`` the analytic (continuous) Gaussian sigma of the
      same budget, but at least ``2 pow2floor(sigma_c / 2^22)`` (so ``sigma`` in grid
      units stays near ``2^16 .. 2^23``: the noise is resolved to ``2^-16`` of its scale
      and the sampler's int64 range is respected) and at least ``pow2floor(Delta_2 /
      2^28)`` (so prefix sums of many inputs stay below ``2^52`` grid steps when the
      noise is tiny, ``epsilon`` in the millions); inputs become
      ``round_half_even(z / g)`` (exact);
    * sensitivity on the grid: if ``||z - z'||_2 <= Delta_2`` then
      ``|round(z_i/g) - round(z'_i/g)| <= |z_i - z'_i| / g + 1``, so by the triangle
      inequality the integer difference has l2 norm ``<= Delta_2 / g + sqrt(dim)``; its
      squared norm is an integer, hence ``<= K2 = floor((Delta_2/g + sqrt(dim))^2)``
      (computed in rationals with ``sqrt(dim)`` rounded up): a relative increase of the
      sensitivity by ``sqrt(dim) g / Delta_2 <= 2^-16`` unless the grid was coarsened;
    * noise: i.i.d. integers with ``P(y) proportional to exp(-y^2 / (2 sigma^2))``,
      ``sigma`` an INTEGER (``sigma^2`` rational), the smallest for which the
      ``copies`` blocks, ``rho = copies K2 / (2 sigma^2)``-zCDP (CKS Thm. 4 per
      coordinate, composed over coordinates and blocks), are ``(epsilon, delta)``-DP by
      dp_accounting's RDP conversion (:func:`~agents.privacy.calibration.
      discrete_gaussian_sigma`: rounding ``sigma`` up only lowers epsilon);
    * release: ``(integer sum + integer noise) * g``, exact in float64 while
      ``|integer| < 2^53`` (checked by the counters).

    Accounting: ``ZCDpEvent(rho = K2 / (2 sigma^2))`` self-composed ``copies`` times.
    The zCDP route costs about 8% more noise than the analytic continuous Gaussian at
    ``epsilon = 1, delta = 1e-5`` (1% at ``epsilon = 1000``).

    Attributes:
        dim: Coordinates per block (set by the counter through :meth:`for_dim`).
        secure: Draw from the OS cryptographic generator.
        scale: ``sigma * g`` in data units (the pmf's parameter; the standard deviation
            is at most this).
        sigma: The integer parameter in grid units (0 before :meth:`calibrate`).
        copies: Noised blocks the calibration covers.
        step: The grid step fixed by :meth:`calibrate` (0 before).
    """

    epsilon: float
    delta: float
    sensitivity: float
    dim: int = 1
    secure: bool = False
    scale: float = 0.0
    sigma: int = 0
    copies: int = 1
    step: float = 0.0
    kind: ClassVar[str] = "discrete-gaussian"
    #: Noise vectors a counter draws per sampler call (the rejection sampler's cost is
    #: partly per call; ``benchmarks/gaussian_ftrl_speed.py``).
    block_rows: ClassVar[int] = 1024

    @property
    def grid(self) -> float:  # type: ignore[override]
        """The grid step ``g``: :attr:`step` once calibrated (fixed thereafter, so a
        copy with another ``sensitivity`` accounts the SAME mechanism for it), else the
        step for one block."""
        return self.step or _gauss_grid_step(self.sensitivity, self.dim, 1, self.epsilon,
                                             self.delta)

    @property
    def grid_sensitivity(self) -> int:
        """``K2 = floor((Delta_2 / g + sqrt(dim))^2)``: the squared l2 sensitivity of one
        block on the grid (an integer)."""
        bound = Fraction(self.sensitivity / self.grid) + _sqrt_upper(self.dim)
        return math.floor(bound * bound)

    def calibrate(self, copies: int = 1, gain: float = 1.0) -> DiscreteGaussianNoise:
        if gain != 1.0:
            raise ValueError("DiscreteGaussianNoise supports integer structures only "
                             f"(gain=1), got gain={gain!r}")
        step = _gauss_grid_step(self.sensitivity, self.dim, copies, self.epsilon,
                                self.delta)
        fixed = dataclasses.replace(self, step=step, copies=int(copies))
        sigma = discrete_gaussian_sigma(int(copies) * fixed.grid_sensitivity, self.epsilon,
                                        self.delta, discrete.MAX_GAUSS_SIGMA)
        return dataclasses.replace(fixed, sigma=int(sigma), scale=float(sigma) * step)

    def draw_int(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` exact integer draws (int64), in grid units."""
        return discrete.discrete_gaussian(self._source(rng), self.sigma, int(n))

    @property
    def variance(self) -> float:
        return discrete.discrete_gaussian_variance(self.sigma) * self.grid**2

    def dp_event(self, gain: float = 1.0, copies: int | None = None) -> dp_event.DpEvent:
        from dp_accounting import dp_event

        if gain != 1.0:
            raise ValueError(f"DiscreteGaussianNoise: gain must be 1, got {gain!r}")
        return _composed(dp_event.ZCDpEvent(
            discrete_gaussian_rho(self.grid_sensitivity, self.sigma)), copies)

    def __str__(self) -> str:
        return (f"discrete-gaussian sigma={self.sigma} grid=2^{int(math.log2(self.grid))}"
                f"{' secure' if self.secure else ''}")


#: The noise kinds by name (``None``: exact sums).
NOISE_KINDS: dict[str | None, type[NoiseStrategy]] = {
    "laplace": LaplaceNoise, "gaussian": GaussianNoise,
    "discrete-laplace": DiscreteLaplaceNoise, "discrete-gaussian": DiscreteGaussianNoise,
    None: NoNoise}
#: The exact (integer) kinds.
EXACT_KINDS = ("discrete-laplace", "discrete-gaussian")


def default_noise(delta: float) -> str:
    """The noise of a learner that takes no ``noise=`` option: ``"laplace"`` (pure
    epsilon-DP) when ``delta = 0``, else ``"gaussian"`` ((epsilon, delta)-DP)."""
    return "laplace" if delta == 0.0 else "gaussian"


def noise_strategy(noise: str | None, epsilon: float | None = None,
                   delta: float | None = None,
                   sensitivity: float | None = None,
                   secure: bool = False) -> NoiseStrategy:
    """The (uncalibrated) strategy called ``noise`` with a checked budget.

    Args:
        noise: ``"discrete-laplace"``, ``"discrete-gaussian"`` (exact), ``"laplace"``,
            ``"gaussian"`` (both idealized) or ``None`` (exact, non-private).
        epsilon: ``0 < epsilon < inf`` (unless ``noise is None``).
        delta: ``0 < delta < 1`` for the Gaussian kinds; ignored otherwise.
        sensitivity: ``Delta_1`` (Laplace kinds) / ``Delta_2`` (Gaussian kinds), ``> 0``.
        secure: draw from the OS cryptographic generator (exact kinds only).

    Raises:
        ValueError: On an unknown kind or an invalid budget (named in the message),
            checked in the order epsilon, sensitivity, delta.
    """
    if noise is None:
        return NoNoise()
    if noise not in NOISE_KINDS:
        raise ValueError("noise must be 'laplace', 'gaussian', 'discrete-laplace', "
                         f"'discrete-gaussian' or None, got noise={noise!r}")
    if secure and noise not in EXACT_KINDS:
        raise ValueError("secure=True needs an exact noise ('discrete-laplace' or "
                         f"'discrete-gaussian'), got noise={noise!r}")
    eps = check_epsilon(epsilon)
    sens = check_real("sensitivity", sensitivity, 0.0, low_inclusive=False)
    if noise == "laplace":
        return LaplaceNoise(eps, sens)
    if noise == "discrete-laplace":
        return DiscreteLaplaceNoise(eps, sens, secure=bool(secure))
    if noise == "discrete-gaussian":
        return DiscreteGaussianNoise(eps, check_gaussian_delta(delta), sens,
                                     secure=bool(secure))
    return GaussianNoise(eps, check_gaussian_delta(delta), sens)


# ------------------------------------------------------------- exact noise buffers
class ExactNoise:
    """Exact integer noise of one strategy, drawn from one generator in blocks of rows.

    The one refill of exact (grid-unit) noise: the continual counters, the private
    reductions' :class:`~agents.common.NoiseQueue` and the vector counters and learners
    (:class:`VectorExactNoise`) all draw through :meth:`refill`, so a block of ``n``
    rows is always ``strategy.draw_int(rng, n * width)`` in row order, and a vector
    game consumes the numbers its scalar game would.

    Args:
        strategy: A calibrated exact strategy (``draw_int(rng, n)``).
        width: Integers per row (a counter's ``dim``; 1 for a scalar release).

    Attributes:
        rows: The current block, ``(n, width)`` int64.
        used: How many of its rows were handed out.
    """

    def __init__(self, strategy: NoiseStrategy, width: int = 1) -> None:
        self.strategy = strategy
        self.width = int(width)
        self.rows = np.zeros((0, self.width), dtype=np.int64)
        self.used = 0

    @property
    def left(self) -> int:
        """Rows of the current block not handed out yet."""
        return len(self.rows) - self.used

    def refill(self, rng: np.random.Generator, n_rows: int) -> np.ndarray:
        """Draws a new block of ``n_rows`` rows from ``rng`` (the rest of the old one is
        dropped) and returns it."""
        self.rows = self.strategy.draw_int(rng, n_rows * self.width).reshape(n_rows, self.width)
        self.used = 0
        return self.rows

    def next_row(self, rng: np.random.Generator, n_rows: int) -> np.ndarray:
        """The next row (a view); a new block of ``n_rows`` rows when this one is used up."""
        if self.used == len(self.rows):
            self.refill(rng, n_rows)
        row = self.rows[self.used]
        self.used += 1
        return row

    def next_rows_sum(self, rng: np.random.Generator, n_rows: int, count: int) -> np.ndarray:
        """The sum of the next ``count`` rows (a new array, int64): the rows
        :meth:`next_row` would hand out ``count`` times, new blocks of ``n_rows`` drawn
        at the same points, summed exactly."""
        if count <= self.left:  # one slice of the current block
            out = self.rows[self.used:self.used + count].sum(axis=0)
            self.used += count
            return out
        out = np.zeros(self.width, dtype=np.int64)
        while count:
            if self.used == len(self.rows):
                self.refill(rng, n_rows)
            k = min(count, self.left)
            out += self.rows[self.used:self.used + k].sum(axis=0)
            self.used += k
            count -= k
        return out


class VectorExactNoise:
    """B games' :class:`ExactNoise` stepped together: row ``i`` of every game's block as
    one ``(B, width)`` array, each game's block drawn from its own generator.

    Args:
        buffers: One :class:`ExactNoise` per game, all at the same position (a game may
            already have used part of its block: the vector form continues it).
        rngs: The games' generators, in the same order.

    Raises:
        ValueError: Buffers at different positions or of different widths.
    """

    def __init__(self, buffers: list[ExactNoise], rngs: list[np.random.Generator]) -> None:
        if len({(len(b.rows), b.used, b.width) for b in buffers}) != 1:
            raise ValueError("the games' exact noise buffers differ")
        self.buffers, self.rngs = list(buffers), list(rngs)
        self.rows = np.stack([b.rows for b in buffers], axis=1)  # (n, B, width)
        self.used = buffers[0].used

    def refill(self, n_rows: int) -> np.ndarray:
        """Every game's :meth:`ExactNoise.refill`, stacked ``(n_rows, B, width)``."""
        self.rows = np.stack([b.refill(r, n_rows) for b, r in zip(self.buffers, self.rngs)],
                             axis=1)
        self.used = 0
        return self.rows

    def next_rows(self, n_rows: int) -> np.ndarray:
        """The next ``(B, width)`` rows; a new block of ``n_rows`` when this one is used up."""
        if self.used == len(self.rows):
            self.refill(n_rows)
        row = self.rows[self.used]
        self.used += 1
        return row

    def next_rows_sum(self, n_rows: int, count: int) -> np.ndarray:
        """The sum of the next ``count`` ``(B, width)`` rows (a new int64 array): what
        :meth:`next_rows` would hand out ``count`` times, summed exactly."""
        out = np.zeros(self.rows.shape[1:], dtype=np.int64)
        while count:
            if self.used == len(self.rows):
                self.refill(n_rows)
            k = min(count, len(self.rows) - self.used)
            out += self.rows[self.used:self.used + k].sum(axis=0)
            self.used += k
            count -= k
        return out

#: Former names of this module (one release, with a ``DeprecationWarning``).
__getattr__ = former_names(globals(), {
    "BatchedExactNoise": "VectorExactNoise",
})
