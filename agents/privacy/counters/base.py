"""Continual counters: private prefix sums of a stream of vectors.

A continual counter receives ``z_1, ..., z_T`` in ``R^dim`` one at a time and
after each ``z_t`` releases a noisy prefix sum ``S_t + eta_t`` with
``S_t = sum_{s <= t} z_s``.  Neighbouring streams differ in ONE ``z_t``; the
``sensitivity`` of a counter is the largest norm of that difference (l1 for
Laplace noise, l2 for Gaussian noise).  It is the caller's job to make it true
(clip or bound the inputs); a counter cannot check it.

All the counters are linear: every internal value is (exact partial sum) +
(data-independent noise), and the release is a fixed linear function of those
values.  The implementations therefore keep the exact running sum ``S_t`` and
the noise process separately and return ``S_t + eta_t``; this is the same
output as summing noisy nodes, and ``noise=None`` gives exact prefix sums.

A counter is a structure (which noise draws enter which release) and a noise
strategy of :mod:`agents.privacy.noise` (how a draw is sampled, its variance,
its calibration and its ``dp_accounting`` event): ``noise=`` takes a
:class:`~agents.privacy.noise.NoiseStrategy` or its name.

Exact arithmetic: with :class:`~agents.privacy.noise.DiscreteLaplaceNoise` (the
learners' default for pure DP) or :class:`~agents.privacy.noise.DiscreteGaussianNoise`
(their default for ``delta > 0`` on the tree counters) a counter rounds every input onto the strategy's grid
(step ``g``, a power of two), keeps the prefix sums and the noise as int64 and releases
``(S_t + eta_t) * g``: the tree and Agarwal-Singh releases are integer multiples of
``g``, computed exactly (``|S_t + eta_t| < 2^53`` is checked); Honaker's estimates are
float64 post-processing of the exact integer noisy node sums (it keeps the node sums
for this). With the real-valued strategies (``"laplace"``, ``"gaussian"``) the
guarantee holds for the idealized real-valued mechanism only and is marked so; the
factorization counter has real coefficients and is Gaussian-only, hence always
idealized.

Privacy holds for adaptively chosen inputs (``z_t`` may depend on earlier
releases): for the tree counters see Smith & Thakurta (NeurIPS 2013, Sec. 1,
footnote 1: the tree-based sum is adaptively secure, also for delta > 0); for
Gaussian noise through a lower-triangular factorization see Denisov, McMahan,
Rush, Smith, Thakurta (NeurIPS 2022), whose adaptive-streams result covers
:class:`FactorizationCounter`.

Counters (see :data:`COUNTERS`): ``"tree"`` :class:`BinaryTreeCounter`,
``"agarwal-singh"`` :class:`AgarwalSinghCounter`, ``"honaker"``
:class:`HonakerCounter`, ``"factorization"`` :class:`FactorizationCounter`, ``"blt"``
:class:`~agents.privacy.blt.BLTCounter` (in :mod:`agents.privacy.blt`).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from numbers import Integral
from typing import ClassVar

import numpy as np
from dp_accounting import dp_event

from dp_online_envs.validation import (
    check_int,
    did_you_mean,
)

from .calibration import PrivacyGuarantee
from .noise import NOISE_KINDS, NoiseStrategy, noise_strategy

__all__ = [
    "COUNTERS",
    "GAUSSIAN_ONLY",
    "AgarwalSinghCounter",
    "BLTCounter",
    "BinaryTreeCounter",
    "ContinualCounter",
    "FactorizationCounter",
    "HonakerCounter",
    "make_counter",
    "popcount",
]


#: Noise vectors drawn per call of the exact (rejection) sampler.
EXACT_NOISE_BLOCK = 256


def _bits(t: int) -> list[int]:
    """Positions of the set bits of ``t`` (the dyadic decomposition of [1, t])."""
    return [j for j in range(t.bit_length()) if (t >> j) & 1]


def popcount(ts: int | np.ndarray) -> int | np.ndarray:
    """Number of set bits of ``ts`` (a non-negative integer, or elementwise for an
    integer array): the number of dyadic nodes that decompose ``[1, t]``."""
    if isinstance(ts, Integral):
        return int(ts).bit_count()
    arr = np.asarray(ts, dtype=np.int64)
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return np.bitwise_count(arr).astype(np.int64)
    return np.array([int(t).bit_count() for t in arr.ravel()], dtype=np.int64).reshape(arr.shape)


class ContinualCounter(ABC):
    """Interface of a continual counter (private prefix sums).

    Args:
        horizon: ``T >= 1``, the maximal number of inputs.
        dim: ``dim >= 1``, the dimension of each input.
        noise: A :class:`~agents.privacy.noise.NoiseStrategy` carrying its
            budget, or its name: ``"laplace"`` (pure epsilon-DP),
            ``"gaussian"`` ((epsilon, delta)-DP) or ``None`` (exact,
            NON-private sums).
        epsilon: privacy parameter (with a noise name, required unless
            ``noise is None``).
        delta: required for Gaussian noise; ignored (the guarantee has
            ``delta = 0``) for Laplace noise.
        sensitivity: max l1 (Laplace) / l2 (Gaussian) norm of
            ``z_t - z'_t`` for neighbouring streams (with a noise name,
            required unless ``noise is None``).
        rng: source of all noise; ``None`` means ``np.random.default_rng()``.
        secure: with a noise name: draw the discrete (Laplace or Gaussian) noise from
            the OS cryptographic generator instead of ``rng`` (exact strategies only).

    Attributes:
        noise_strategy: The calibrated strategy (its ``scale`` is one draw's).
        noise: Its name (``"laplace"``, ``"gaussian"`` or ``None``).
        epsilon, delta, sensitivity: Its budget (``None`` for exact sums).
        draw_scale: Scale of ONE noise draw (Laplace ``b``, Gaussian ``sigma``).

    Raises:
        ValueError: on any invalid parameter (named in the message).
    """

    name: ClassVar[str] = ""
    #: Whether the counter refuses Laplace noise (real coefficients, Gaussian only).
    gaussian_only: ClassVar[bool] = False

    def __init__(self, horizon: int, dim: int, *, noise: NoiseStrategy | str | None,
                 epsilon: float | None = None, delta: float | None = None,
                 sensitivity: float | None = None,
                 rng: np.random.Generator | None = None, secure: bool = False) -> None:
        self.horizon = check_int("horizon", horizon, 1)
        self.dim = check_int("dim", dim, 1)
        if not isinstance(noise, NoiseStrategy) and noise not in NOISE_KINDS:
            raise ValueError("noise must be 'laplace', 'gaussian', 'discrete-laplace', "
                             f"'discrete-gaussian' or None, got noise={noise!r}")
        if rng is not None and not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy.random.Generator, got rng={rng!r}")
        if not isinstance(noise, NoiseStrategy):
            noise = noise_strategy(noise, epsilon, delta, sensitivity, secure=secure)
        self._rng = rng if rng is not None else np.random.default_rng()
        self._t = 0
        self._init_structure()
        self.noise_strategy = self._calibrate(noise.for_dim(self.dim))
        strategy = self.noise_strategy
        #: grid step of an exact integer strategy (``None``: real-valued arithmetic)
        self.grid = strategy.grid if strategy.private else None
        self._prefix = np.zeros(self.dim, dtype=np.int64 if self.grid else np.float64)
        self._int_noise = np.zeros((0, self.dim), dtype=np.int64)  # exact draws not yet used
        self._int_noise_used = 0
        self.noise, self.epsilon, self.delta, self.sensitivity = (
            strategy.kind, strategy.epsilon, strategy.delta, strategy.sensitivity)
        self.draw_scale = float(strategy.scale)
        self._init_noise_state()

    # ------------------------------------------------------------ subclass API
    def _init_structure(self) -> None:
        """Fixes the data-independent structure (before calibration)."""

    @abstractmethod
    def _calibrate(self, noise: NoiseStrategy) -> NoiseStrategy:
        """The strategy calibrated for the configured budget and this structure."""

    @abstractmethod
    def _init_noise_state(self) -> None:
        """Allocates the noise buffers (called only after calibration)."""

    @abstractmethod
    def _next_noise(self) -> np.ndarray:
        """Noise ``eta_t`` of the release at ``t = self._t`` (already incremented)."""

    @abstractmethod
    def _unit_variances(self, ts: np.ndarray) -> np.ndarray:
        """Per-coordinate variance of ``eta_t`` in units of one draw's variance."""

    @abstractmethod
    def _buffers(self) -> list[np.ndarray]:
        """All float arrays the counter holds (for :meth:`memory_floats`)."""

    @abstractmethod
    def _unit_event(self) -> dp_event.DpEvent:
        """The ``DpEvent`` of the whole mechanism (``NonPrivateDpEvent`` if exact)."""

    # ------------------------------------------------------------ public API
    @property
    def t(self) -> int:
        """Number of inputs added so far."""
        return self._t

    @property
    def released(self) -> int:
        """Number of prefix sums released so far (one per :meth:`add`)."""
        return self._t

    def add(self, z: np.ndarray) -> np.ndarray:
        """Adds ``z_t`` and returns the noisy prefix sum ``S_t + eta_t`` (new array).

        With an exact strategy (:attr:`grid` set) ``z`` is first rounded half-even
        onto the grid and the release is ``(S_t + eta_t) * g`` from int64 sums.

        Raises:
            ValueError: if ``T`` values were already added, or ``z`` does not
                have shape ``(dim,)``, or is not finite, or (exact strategies) the
                integer prefix sum would reach ``2^52``. The state is unchanged.
                (Exact strategies also raise, after the step, if the noisy integer
                sum reaches ``2^53``, which no longer fits float64 exactly.)
        """
        if self._t >= self.horizon:
            raise ValueError(f"counter horizon T={self.horizon} exhausted: "
                             f"cannot add input number {self._t + 1}")
        z = np.asarray(z, dtype=float)
        if z.shape != (self.dim,):
            raise ValueError(f"z must have shape ({self.dim},), got shape {z.shape}")
        if not np.isfinite(z).all():
            raise ValueError(f"z must be finite, got z={z!r}")
        if self.grid is not None:
            return self._add_exact(z)
        self._t += 1
        self._prefix += z
        if not self.noise_strategy.private:
            return self._prefix.copy()
        return self._prefix + self._next_noise()

    def _add_exact(self, z: np.ndarray) -> np.ndarray:
        """The integer path: ``z`` rounded to the grid, int64 sums and noise."""
        zi = np.rint(z / self.grid)  # exact scaling by a power of two, round half even
        # One check covers both the input and the sum: |S| < 2^52 (an invariant) and
        # |S + zi| < 2^52 force |zi| < 2^53, so zi is an exact integer and the float sum
        # of two such integers, below 2^52, is exact (a larger zi fails the check).
        prefix = self._prefix + zi
        if not np.abs(prefix).max() < 2.0**52:
            raise ValueError(f"input z={z!r} too large for the exact integer grid "
                             f"g={self.grid!r}: the prefix sum must stay below 2^52 g")
        self._t += 1
        self._prefix = prefix.astype(np.int64)
        return self._release_exact()

    def _release_exact(self) -> np.ndarray:
        """``(S_t + eta_t) * g`` from the integer prefix and integer noise."""
        total = self._prefix + self._next_noise()
        if np.abs(total).max() >= 2**53:
            raise ValueError("noisy integer sum reached 2^53: not exactly representable")
        return total * self.grid

    def noise_variance(self, t: int) -> float:
        """Exact per-coordinate variance of the noise in the ``t``-th release (1-based)."""
        check_int("t", t, 1, self.horizon)
        return float(self.noise_strategy.variance
                     * self._unit_variances(np.array([int(t)]))[0])

    def max_noise_variance(self) -> float:
        """``max_{t <= T}`` of :meth:`noise_variance` (computed exactly, vectorised)."""
        ts = np.arange(1, self.horizon + 1, dtype=np.int64)
        return float(self.noise_strategy.variance * self._unit_variances(ts).max())

    def memory_floats(self) -> int:
        """Number of floats currently held (running sum + noise state)."""
        return int(self._prefix.size + sum(b.size for b in self._buffers()))

    def describe(self) -> dp_event.DpEvent:
        """The ``dp_accounting`` event of the whole mechanism (all T releases).

        ``NonPrivateDpEvent`` for ``noise=None`` (accountants report infinity).
        """
        return self._unit_event()

    def guarantee(self) -> PrivacyGuarantee:
        """The guarantee reported by the dp_accounting accountant for :meth:`describe`.

        Raises:
            ValueError: if the accountant does not confirm ``(epsilon, delta)``.
        """
        return self.noise_strategy.guarantee(self.describe(), mechanism=repr(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(T={self.horizon}, dim={self.dim}, {self.noise_strategy})"

    # ------------------------------------------------------------ helpers
    def _draw(self) -> np.ndarray:
        """One noise vector: exact int64 draws in grid units, or float draws.

        The exact sampler's cost is mostly per call, so its draws are made
        :data:`EXACT_NOISE_BLOCK` vectors at a time and used in order (the vectors are
        i.i.d. either way; the noise does not depend on the data).
        """
        if self.grid is None:
            return self.noise_strategy.draw(self._rng, self.dim)
        if self._int_noise_used == len(self._int_noise):
            rows = getattr(self.noise_strategy, "block_rows", EXACT_NOISE_BLOCK)
            block = min(rows, 2 * self.horizon)
            self._int_noise = self.noise_strategy.draw_int(
                self._rng, block * self.dim).reshape(block, self.dim)
            self._int_noise_used = 0
        row = self._int_noise[self._int_noise_used].copy()
        self._int_noise_used += 1
        return row


class _DyadicCounter(ContinualCounter):
    """Calibration shared by the counters built on the dyadic tree over [1, T].

    Level ``k`` holds the nodes ``((j-1) 2^k, j 2^k]`` with ``j 2^k <= T``
    (only complete nodes are ever noised), so levels ``0 .. floor(log2 T)``
    exist: ``levels = T.bit_length() = ceil(log2(T+1))``.  Input ``z_1`` lies in
    one node of every level (all have ``j = 1``), so one input changes exactly
    ``levels`` node sums, each by ``z_t - z'_t``:

    * Laplace: the node vector has l1 sensitivity ``levels * Delta_1``, so the
      per-node scale is ``b = levels * Delta_1 / epsilon``;
    * Gaussian: l2 sensitivity ``sqrt(levels) * Delta_2``, so the per-node
      ``sigma`` is the analytic-Gaussian noise for that sensitivity.

    The accountant event is ``levels``-fold self-composition of one node.
    """

    @property
    def levels(self) -> int:
        """Number of tree levels, ``T.bit_length() = floor(log2 T) + 1``."""
        return self.horizon.bit_length()

    def _calibrate(self, noise: NoiseStrategy) -> NoiseStrategy:
        return noise.calibrate(copies=self.levels)

    def _unit_event(self) -> dp_event.DpEvent:
        return self.noise_strategy.dp_event(copies=self.levels)

    def _init_noise_state(self) -> None:
        #: noise of the stored left-child node at each level (valid where t has a 1-bit)
        self._slots = np.zeros((self.levels if self.noise_strategy.private else 0, self.dim),
                               dtype=np.int64 if self.grid is not None else np.float64)

    def _buffers(self) -> list[np.ndarray]:
        return [self._slots] + ([self._node_start] if hasattr(self, "_node_start") else [])


class BinaryTreeCounter(_DyadicCounter):
    """Binary-tree (binary mechanism) counter.

    Dwork, Naor, Pitassi, Rothblum (STOC 2010); Chan, Shi, Song (TISSEC 2011);
    Smith & Thakurta (NeurIPS 2013), App. A, Alg. 2.  At step ``t`` with lowest
    1-bit ``i`` the node ``alpha_i = sum_{s in (t - 2^i, t]} z_s`` is completed
    and receives one independent noise draw; nodes of lower levels are dropped.
    The release is ``sum_{j : bit j of t is 1} (alpha_j + n_j)`` -- exactly the
    ``popcount(t)`` nodes of the binary decomposition of ``[1, t]``, so
    ``Var(eta_t) = popcount(t) * Var(draw)``.  Only the ``levels`` current
    ``alpha``-noises are kept: memory ``O(dim log T)``, one draw per step.
    Calibration: see :class:`_DyadicCounter`.
    """

    name = "tree"

    def _tree_noise(self) -> np.ndarray:
        t = self._t
        lowest = (t & -t).bit_length() - 1
        self._slots[lowest] = self._draw()
        return self._slots[_bits(t)].sum(axis=0)

    def _next_noise(self) -> np.ndarray:
        return self._tree_noise()

    def _unit_variances(self, ts: np.ndarray) -> np.ndarray:
        return popcount(ts).astype(float)


class AgarwalSinghCounter(BinaryTreeCounter):
    """Tree counter with identically distributed noise (Agarwal & Singh, ICML 2017, Alg. 2).

    ``TreeBasedAgg`` releases the binary-tree sum of :class:`BinaryTreeCounter`
    (``PrivateSum`` of Jain et al. 2012, |S| = popcount(t) noisy nodes) plus
    ``r_t = R - popcount(t)`` fresh, data-independent draws from the same node
    distribution, so every released sum carries exactly ``R`` independent
    draws: ``eta_t ~ sum_{i <= R} n_i`` for all ``t`` (their Lemma 3.3 / Thm.
    A.1, "Distribution").  ``R = ceil(log2 T)`` as in the paper, raised to
    ``floor(log2(T+1))`` (the largest popcount up to T) when that is larger,
    which happens only for ``T = 1``.

    Privacy: the extra draws do not depend on the data, so the releases are
    post-processing of the tree's noisy nodes and the calibration is the
    tree's (:class:`_DyadicCounter`).  The paper's own calibration
    (``lambda >= ||Y||_1 log T / epsilon``) counts ``log T`` levels where a
    tree over T leaves has ``floor(log2 T) + 1``; we use the real count.
    """

    name = "agarwal-singh"

    @property
    def draws(self) -> int:
        """``R = max(ceil(log2 T), floor(log2(T + 1)))`` noise draws per release."""
        return max((self.horizon - 1).bit_length(), (self.horizon + 1).bit_length() - 1)

    def _next_noise(self) -> np.ndarray:
        eta = self._tree_noise()
        for _ in range(self.draws - popcount(self._t)):
            eta += self._draw()
        return eta

    def _unit_variances(self, ts: np.ndarray) -> np.ndarray:
        return np.full(ts.shape, float(self.draws))


class HonakerCounter(_DyadicCounter):
    """Online variance-reduced tree counter (Honaker 2015, bottom-up pass).

    Honaker, "Efficient use of differentially private binary trees" (TPDP
    2015); the online form is TF Privacy's ``EfficientTreeAggregator``.  Every
    complete node ``v`` (left AND right children) gets one noisy sum
    ``y_v = S_v + n_v``.  Its estimate combines ``y_v`` with the sum of its
    children's estimates by inverse-variance weights::

        hat_v = w_k y_v + (1 - w_k)(hat_left + hat_right),
        v_0 = 1,   v_k = 1 / (1 + 1 / (2 v_{k-1})) = 2^k / (2^{k+1} - 1),
        w_k = v_k                      (in units of Var(draw))

    (the estimates of disjoint subtrees are independent and unbiased, so this
    is the minimum-variance unbiased combination; ``v_k -> 1/2``).  The
    release is the sum of the estimates of the decomposition nodes of
    ``[1, t]``: ``Var(eta_t) = Var(draw) * sum_{j: bit j of t} v_j``.  The
    top-down half of Honaker's estimator needs future nodes and is not online.

    Privacy: each input lies in ``levels`` complete nodes (one per level), so
    the calibration is the tree's (:class:`_DyadicCounter`); estimates are
    post-processing.  Cost: ``i + 1`` draws at a step with lowest 1-bit ``i``
    (amortised 2), memory ``O(dim log T)``.
    """

    name = "honaker"

    def _init_noise_state(self) -> None:
        super()._init_noise_state()
        v = [1.0]
        for _ in range(1, self.levels):
            v.append(1.0 / (1.0 + 1.0 / (2.0 * v[-1])))
        #: unit variance of a level-k node estimate (= weight of the node's own sum)
        self.node_variances = np.array(v)
        if self.grid is not None:  # estimates are floats built from integer noisy nodes
            self._slots = np.zeros(self._slots.shape)
            #: integer prefix at the last multiple of 2^k, per level k
            self._node_start = np.zeros(self._slots.shape, dtype=np.int64)

    def _release_exact(self) -> np.ndarray:
        """Post-processing of exact integer noisy node sums ``y_v = S_v + n_v``:
        ``hat_v = w_k y_v + (1 - w_k)(hat_left + hat_right)`` in float64, in grid units,
        then ``* g``."""
        t = self._t
        lowest = (t & -t).bit_length() - 1
        est = None
        for k in range(lowest + 1):
            node = self._prefix - self._node_start[k] + self._draw()  # exact int64
            self._node_start[k] = self._prefix
            if k == 0:
                est = node.astype(np.float64)
            else:
                w = self.node_variances[k]
                est = w * node + (1.0 - w) * (self._slots[k - 1] + est)
        self._slots[lowest] = est
        return self._slots[_bits(t)].sum(axis=0) * self.grid

    def _next_noise(self) -> np.ndarray:
        t = self._t
        lowest = (t & -t).bit_length() - 1
        est = self._draw()  # leaf: its own noisy value
        for k in range(1, lowest + 1):
            w = self.node_variances[k]
            children = self._slots[k - 1] + est  # stored left sibling + right child
            est = w * self._draw() + (1.0 - w) * children
        self._slots[lowest] = est
        return self._slots[_bits(t)].sum(axis=0)

    def _unit_variances(self, ts: np.ndarray) -> np.ndarray:
        out = np.zeros(ts.shape)
        for j, vj in enumerate(self.node_variances):
            out += ((ts >> j) & 1) * vj
        return out


class FactorizationCounter(ContinualCounter):
    """Square-root factorization counter (Gaussian noise only).

    Henzinger, Upadhyay, Upadhyay (SODA 2023); Fichtenberger, Henzinger,
    Upadhyay (ICML 2023).  The all-ones lower-triangular ``A`` (``A z`` = the
    prefix sums) factors as ``A = C C`` with ``C`` lower-triangular Toeplitz,
    ``C[t, s] = f_{t-s}``, ``f_j = binom(2j, j) / 4^j`` (the coefficients of
    ``(1 - x)^{-1/2}``; ``f_0 = 1``, ``f_j = f_{j-1} (2j - 1) / (2j)``).  The
    counter releases ``A z + C w = C (C z + w)`` with ``w_j ~ N(0, sigma^2 I)``
    i.i.d., i.e. ``eta_t = sum_{j <= t} f_{t-j} w_j``:

    * privacy: ``C z + w`` is a Gaussian mechanism; changing ``z_s`` by ``d``
      moves ``C z`` by column ``s`` of ``C`` (x) ``d``, of l2 norm at most
      ``||d||_2 sqrt(sum_{j<T} f_j^2)``, so ``sigma = analytic_sigma(epsilon,
      delta) * Delta_2 * sqrt(sum_{j<T} f_j^2)``;
    * variance: ``Var(eta_t) = sigma^2 sum_{j<t} f_j^2`` (``~ ln t / pi``).

    Laplace noise is refused: the l1 column norm ``sum_{j<T} f_j`` grows like
    ``2 sqrt(T / pi)``, so pure epsilon-DP would need noise polynomial in T.
    Streaming cost: the noise history ``w`` is kept (``O(t dim)`` floats, grown
    by doubling) and ``eta_t`` is one ``O(t dim)`` convolution step, so a stream of
    ``T`` inputs costs ``O(T^2 dim)`` in total and ``O(T dim)`` memory; the ``"blt"``
    counter (:class:`~agents.privacy.blt.BLTCounter`) has nearly the same noise at
    ``O(dim)`` work and memory per step.
    """

    name = "factorization"
    gaussian_only = True

    def __init__(self, horizon: int, dim: int, *, noise: NoiseStrategy | str | None,
                 **kwargs) -> None:
        if noise == "discrete-gaussian" or getattr(noise, "kind", None) == "discrete-gaussian":
            raise ValueError(
                "FactorizationCounter has real coefficients: it cannot release exact integer "
                "sums, use noise='gaussian' (its guarantee is marked idealized)")
        if (noise in ("laplace", "discrete-laplace")
                or getattr(noise, "kind", None) in ("laplace", "discrete-laplace")):
            raise ValueError(
                "FactorizationCounter supports only noise='gaussian' (or None): the l1 column "
                "norm of the square-root factor C grows like 2*sqrt(T/pi), so Laplace noise "
                "for pure epsilon-DP would be polynomially larger than the tree's")
        super().__init__(horizon, dim, noise=noise, **kwargs)

    @staticmethod
    def coefficients(n: int) -> np.ndarray:
        """``f_0 .. f_{n-1}`` with ``f_j = binom(2j, j) / 4^j``."""
        j = np.arange(1, n, dtype=float)
        return np.concatenate(([1.0], np.cumprod((2.0 * j - 1.0) / (2.0 * j))))

    def _init_structure(self) -> None:
        self._coef = self.coefficients(self.horizon)
        self._coef_sq_cumsum = np.cumsum(self._coef**2)  # sum_{j < t} f_j^2 at index t - 1
        self.column_norm = math.sqrt(self._coef_sq_cumsum[-1])

    def _calibrate(self, noise: NoiseStrategy) -> NoiseStrategy:
        return noise.calibrate(gain=self.column_norm)

    def _init_noise_state(self) -> None:
        self._noise_history = np.zeros((min(self.horizon, 16) if self.noise_strategy.private else 0,
                            self.dim))

    def _next_noise(self) -> np.ndarray:
        t = self._t
        if t > self._noise_history.shape[0]:
            grown = np.zeros((min(self.horizon, 2 * self._noise_history.shape[0]), self.dim))
            grown[: t - 1] = self._noise_history[: t - 1]
            self._noise_history = grown
        self._noise_history[t - 1] = self._draw()
        return self._coef[t - 1 :: -1] @ self._noise_history[:t]  # sum_{j <= t} f_{t-j} w_j

    def _unit_variances(self, ts: np.ndarray) -> np.ndarray:
        return self._coef_sq_cumsum[ts - 1]

    def _buffers(self) -> list[np.ndarray]:
        return [self._coef, self._coef_sq_cumsum, self._noise_history]

    def _unit_event(self) -> dp_event.DpEvent:
        return self.noise_strategy.dp_event(gain=self.column_norm)


# blt.py subclasses ContinualCounter (defined above): imported here, not at the top
from .blt import BLTCounter

_CLASSES: dict[str, type[ContinualCounter]] = {
    cls.name: cls
    for cls in (BinaryTreeCounter, AgarwalSinghCounter, HonakerCounter, FactorizationCounter,
                BLTCounter)
}

#: Names of the counters that take Gaussian noise only.
GAUSSIAN_ONLY: frozenset[str] = frozenset(n for n, c in _CLASSES.items() if c.gaussian_only)

#: name -> one-line description of every counter :func:`make_counter` builds.
COUNTERS: dict[str, str] = {
    "tree": "binary-tree mechanism (Dwork et al. 2010; Smith-Thakurta 2013 App. A Alg. 2)",
    "agarwal-singh": "tree with identically distributed noise, ceil(log2 T) draws per "
                     "release (Agarwal-Singh 2017 Alg. 2)",
    "honaker": "tree with online inverse-variance node estimates (Honaker 2015), "
               "about half the tree's variance",
    "factorization": "square-root factorization of the prefix-sum matrix, Gaussian only "
                     "(Henzinger-Upadhyay-Upadhyay 2023; Fichtenberger et al. 2023)",
    "blt": "buffered-linear-Toeplitz factorization, O(dim) work per step, Gaussian only "
           "(Dvijotham-McMahan-Pillutla-Steinke-Thakurta 2024)",
}


def make_counter(name: str, horizon: int, dim: int, **kwargs) -> ContinualCounter:
    """Builds the counter called ``name`` (a key of :data:`COUNTERS`).

    Args:
        name: ``"tree"``, ``"agarwal-singh"``, ``"honaker"``, ``"factorization"`` or
            ``"blt"``.
        horizon: ``T``.
        dim: input dimension.
        **kwargs: keyword arguments of :class:`ContinualCounter`
            (``noise``, ``epsilon``, ``delta``, ``sensitivity``, ``rng``; ``buffers``
            for ``"blt"``).

    Raises:
        ValueError: for an unknown name or invalid parameters.
    """
    try:
        cls = _CLASSES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown counter name={name!r};{did_you_mean(name, _CLASSES)} choose one of "
            f"{sorted(_CLASSES)}") from None
    return cls(horizon, dim, **kwargs)
