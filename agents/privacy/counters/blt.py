"""Buffered-linear-Toeplitz (BLT) continual counter: near-optimal noise in O(dim) per step.

Dvijotham, McMahan, Pillutla, Steinke, Thakurta, "Efficient and Near-Optimal Noise
Generation for Streaming Differential Privacy" (FOCS 2024; arXiv:2404.16706), with the
closed forms of their Lemmas 5.2-5.4 and the ``(theta, theta_hat)`` parameterization of
McMahan & Pillutla, "An inversion theorem for buffered linear Toeplitz (BLT) matrices"
(arXiv:2504.21413, Thm. 2). Derivations: ``docs/algorithms/blt-counter.md``.

The prefix-sum matrix ``A`` (all-ones lower-triangular) is factored as ``A = B C`` with
``C`` a lower-triangular Toeplitz matrix whose generating function is the rational

    C(x) = prod_i (1 - theta_hat_i x) / prod_i (1 - theta_i x)
         = 1 + sum_i omega_i x / (1 - theta_i x),

so ``c_0 = 1`` and ``c_k = sum_i omega_i theta_i^(k-1)``: a BLT with ``n`` buffers. Its
inverse ``C^{-1}(x) = 1 / C(x)`` is the BLT with decays ``theta_hat`` and scales
``omega_hat`` (swap the roles of ``theta`` and ``theta_hat``). The counter releases
``A z + A C^{-1} w = B (C z + w)``, ``w_t ~ N(0, sigma^2 I)`` i.i.d.: a Gaussian
mechanism on ``C z`` followed by post-processing.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from dp_online_envs.validation import check_int

from ..noise import NOISE_KINDS, NoiseStrategy
from .base import ContinualCounter

if TYPE_CHECKING:  # dp_accounting is imported where it is used (its import takes 0.8 s)
    from dp_accounting import dp_event

__all__ = ["BLTCounter", "BLTParameters", "blt_parameters"]

#: Buffers of the default BLT: within 1.6% of the square-root factorization's worst
#: noise std up to T = 2^20 (``benchmarks/counter_noise.py``).
DEFAULT_BUFFERS = 4

#: Largest number of buffers accepted: 8 buffers are within 0.02% of the square-root
#: factorization at T = 2^20; more would only add optimization time (and jax_privacy
#: reports numerical trouble from about 15).
MAX_BUFFERS = 8

#: Relative margin added to the closed-form column norm of ``C`` (its float64 rounding,
#: measured below 4e-12 against direct sums at T = 2^20, stays far inside it).
SENSITIVITY_MARGIN = 1e-9


def geometric_sums(one_minus_r: np.ndarray, t: np.ndarray | float) -> np.ndarray:
    """``S_t(r) = sum_{k < t} r^k`` for ``0 <= r <= 1`` given ``1 - r`` (elementwise).

    Computed as ``-expm1(t log1p(-(1 - r))) / (1 - r)``, accurate for ``r`` near 1;
    ``S_t(1) = t``.
    """
    e = np.asarray(one_minus_r, dtype=float)
    t = np.asarray(t, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = -np.expm1(t * np.log1p(-e)) / e
    return np.where(e == 0.0, t, s)


def _pair_one_minus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``1 - (1 - a_i)(1 - b_j)`` for all pairs ``(i, j)`` (last two axes), without
    cancellation."""
    return a[..., :, None] + b[..., None, :] - a[..., :, None] * b[..., None, :]


def output_scales(eps: np.ndarray, eps_hat: np.ndarray) -> np.ndarray:
    """``omega_i = prod_j (theta_i - theta_hat_j) / prod_{j != i} (theta_i - theta_j)``.

    The residues of ``prod(1 - theta_hat x) / prod(1 - theta x)`` (Dvijotham et al.,
    Lemma 5.2), from ``eps = 1 - theta`` and ``eps_hat = 1 - theta_hat`` (differences of
    decays near 1 are exact differences of the small ``eps``). Batched over leading axes.
    """
    num = np.prod(eps_hat[..., None, :] - eps[..., :, None], axis=-1)
    gaps = eps[..., None, :] - eps[..., :, None] + np.eye(eps.shape[-1])  # diagonal: 1
    return num / np.prod(gaps, axis=-1)


def strategy_sensitivity_squared(eps: np.ndarray, omega: np.ndarray,
                                 horizon: int) -> np.ndarray:
    """``sum_{k < T} c_k^2``: the squared l2 norm of the first (longest) column of ``C``.

    ``1 + sum_{i,j} omega_i omega_j S_{T-1}(theta_i theta_j)`` (Dvijotham et al., Lemma
    5.3); every term is positive when ``omega > 0``. Batched over leading axes.
    """
    pairs = (omega[..., :, None] * omega[..., None, :]
             * geometric_sums(_pair_one_minus(eps, eps), horizon - 1))
    return 1.0 + pairs.sum(axis=(-2, -1))


def prefix_noise_variances(eps_hat: np.ndarray, omega_hat: np.ndarray,
                           ts: np.ndarray | float) -> np.ndarray:
    """``sum_{k < t} b_k^2``, ``b_k`` the coefficients of ``A C^{-1}`` (per unit draw).

    ``b_k = sum_{j <= k} d_j = a + sum_i g_i theta_hat_i^k`` with ``a = 1 + sum_i
    omega_hat_i / eps_hat_i`` and ``g_i = -omega_hat_i / eps_hat_i``, hence
    ``t a^2 + 2 a sum_i g_i S_t(theta_hat_i) + sum_{i,j} g_i g_j S_t(theta_hat_i
    theta_hat_j)`` (Dvijotham et al., Lemma 5.4). ``ts`` broadcasts against the
    parameters' leading axes (a vector of ``t`` for one BLT, or one ``t`` for a batch).
    """
    n = eps_hat.shape[-1]
    t = np.asarray(ts, dtype=float)[..., None]
    g = -omega_hat / eps_hat
    a = 1.0 + np.sum(omega_hat / eps_hat, axis=-1)
    single = (g * geometric_sums(eps_hat, t)).sum(axis=-1)
    pair_r = _pair_one_minus(eps_hat, eps_hat).reshape(*eps_hat.shape[:-1], n * n)
    pair_g = (g[..., :, None] * g[..., None, :]).reshape(*g.shape[:-1], n * n)
    pair = (geometric_sums(pair_r, t) * pair_g).sum(axis=-1)
    return t[..., 0] * a * a + 2.0 * a * single + pair


class BLTParameters:
    """A BLT pair ``(C, C^{-1})`` with its closed-form sensitivity and variances.

    Args:
        eps: ``1 - theta`` of ``C`` (``n`` values in ``(0, 1)``, increasing).
        eps_hat: ``1 - theta_hat`` of ``C^{-1}``, interlaced:
            ``eps_1 < eps_hat_1 < eps_2 < ... < eps_n < eps_hat_n``.

    Attributes:
        theta, omega: Decays and output scales of ``C`` (``omega > 0``).
        theta_hat, omega_hat: Those of ``C^{-1}`` (``omega_hat < 0``).
    """

    def __init__(self, eps: np.ndarray, eps_hat: np.ndarray) -> None:
        self.eps = np.asarray(eps, dtype=float)
        self.eps_hat = np.asarray(eps_hat, dtype=float)
        self.theta = 1.0 - self.eps
        self.theta_hat = 1.0 - self.eps_hat
        self.omega = output_scales(self.eps, self.eps_hat)
        self.omega_hat = output_scales(self.eps_hat, self.eps)
        for values in (self.eps, self.eps_hat, self.theta, self.theta_hat, self.omega,
                       self.omega_hat):
            values.setflags(write=False)  # shared through the cache of blt_parameters

    @property
    def buffers(self) -> int:
        """Number of buffers ``n``."""
        return len(self.eps)

    def strategy_coefficients(self, n: int) -> np.ndarray:
        """``c_0 .. c_{n-1}`` of ``C`` (materialized: ``n`` values; for small ``n``)."""
        k = np.arange(n - 1, dtype=float)[:, None]
        return np.concatenate(([1.0], (self.omega * self.theta**k).sum(axis=1)))

    def noise_coefficients(self, n: int) -> np.ndarray:
        """``d_0 .. d_{n-1}`` of ``C^{-1}`` (materialized: ``n`` values; for small ``n``)."""
        k = np.arange(n - 1, dtype=float)[:, None]
        return np.concatenate(([1.0], (self.omega_hat * self.theta_hat**k).sum(axis=1)))

    def sensitivity_squared(self, horizon: int) -> float:
        """``max_s ||C[:, s]||_2^2 = sum_{k < T} c_k^2`` (closed form)."""
        return float(strategy_sensitivity_squared(self.eps, self.omega, horizon))

    def variances(self, ts: np.ndarray | float) -> np.ndarray:
        """Per-unit-draw variance of the ``t``-th released noise (closed form)."""
        return prefix_noise_variances(self.eps_hat, self.omega_hat, ts)

    def max_loss(self, horizon: int) -> float:
        """``sensitivity^2 * max_t Var_t``: the worst squared noise at unit privacy noise."""
        return self.sensitivity_squared(horizon) * float(self.variances(horizon))


def _split(log_eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``2n`` sorted values (last axis), alternately ``eps`` and ``eps_hat``
    (interlaced)."""
    e = np.sort(np.exp(log_eps), axis=-1)
    return e[..., 0::2], e[..., 1::2]


def _log_max_losses(log_eps: np.ndarray, horizon: int) -> np.ndarray:
    """``log(sensitivity^2 * Var_T)`` for a batch of parameter vectors (rows); ``1e3``
    where the BLT is degenerate (coinciding decays)."""
    eps, eps_hat = _split(log_eps)
    with np.errstate(all="ignore"):
        loss = (strategy_sensitivity_squared(eps, output_scales(eps, eps_hat), horizon)
                * prefix_noise_variances(eps_hat, output_scales(eps_hat, eps), horizon))
        return np.where(np.isfinite(loss) & (loss > 0.0), np.log(loss), 1e3)


#: Step of the central differences of the optimizer's gradient (in log(1 - theta)).
_FD_STEP = 1e-6


def _loss_and_gradient(x: np.ndarray, horizon: int, low: float,
                       high: float) -> tuple[float, np.ndarray]:
    """The loss at ``x`` and its central-difference gradient, in ONE batched evaluation
    of the ``4n + 1`` points; ``1e3`` (and a zero gradient) outside ``[low, high]``, which
    sends the line search back."""
    if np.any(x < low) or np.any(x > high):
        return 1e3, np.zeros_like(x)
    steps = _FD_STEP * np.eye(len(x))
    values = _log_max_losses(np.vstack([x[None, :], x + steps, x - steps]), horizon)
    m = len(x)
    return float(values[0]), (values[1:m + 1] - values[m + 1:]) / (2.0 * _FD_STEP)


@functools.lru_cache(maxsize=64)
def blt_parameters(horizon: int, buffers: int = DEFAULT_BUFFERS) -> BLTParameters:
    """The BLT with ``buffers`` buffers minimizing the worst noise for ``T = horizon``.

    Minimizes ``log(sensitivity^2(T) * Var_T)`` (single participation, max error; the
    variance grows with ``t``, so ``Var_T`` is the worst) over the ``2n`` values
    ``log(1 - theta)``, ``log(1 - theta_hat)``, sorted and interlaced, with scipy's BFGS
    (central-difference gradients, evaluated as one batch) from log-spaced values in
    ``[1/(4T), 1/2]``, each kept in ``[1e-3 / T, 1 - 1e-6]``. (Not L-BFGS-B: its
    OpenBLAS-threaded inner solver costs ~10 ms a step on a busy machine.) Deterministic
    (no random start); cached per ``(horizon, buffers)``. 30-150 ms with 4 buffers, up to
    0.6 s with 8 (T = 2^0 .. 2^20, shared 2-core machine).

    Raises:
        ValueError: On an invalid argument (named in the message).
        RuntimeError: If the optimum is not a valid BLT (not expected).
    """
    from scipy import optimize  # here: scipy.optimize takes 0.2 s to import

    horizon = check_int("horizon", horizon, 1)
    buffers = check_int("buffers", buffers, 1, MAX_BUFFERS)
    start = np.linspace(math.log(0.25 / horizon), math.log(0.5), 2 * buffers)
    bounds = (math.log(1e-3 / horizon), math.log1p(-1e-6))
    result = optimize.minimize(_loss_and_gradient, start, args=(horizon, *bounds), jac=True,
                               method="BFGS", options={"gtol": 1e-7})
    with np.errstate(all="ignore"):  # a degenerate optimum is reported below
        params = BLTParameters(*_split(result.x))
    ok = (np.all(np.isfinite(params.omega)) and np.all(np.isfinite(params.omega_hat))
          and np.all((params.theta_hat >= 0.0) & (params.theta_hat < 1.0))
          and math.isfinite(params.max_loss(horizon)))
    if not ok:
        raise RuntimeError(f"BLT optimization for T={horizon}, buffers={buffers} produced an "
                           f"invalid BLT: eps={params.eps}, eps_hat={params.eps_hat}")
    return params


class BLTCounter(ContinualCounter):
    """Buffered-linear-Toeplitz counter (Gaussian noise only).

    Dvijotham, McMahan, Pillutla, Steinke, Thakurta (FOCS 2024), the BLT mechanism for
    single participation. Construction (module docstring): ``A = B C`` with ``C`` the
    BLT ``(theta, omega)`` and ``C^{-1}`` the BLT ``(theta_hat, omega_hat)``, both from
    the ``2n`` interlaced decays of :func:`blt_parameters`, optimized for ``T`` at
    construction. The release is ``S_t + eta_t`` with ``eta = A C^{-1} w``:

    * noise, streaming: ``u_t = w_t + sum_i omega_hat_i b_i`` (``= (C^{-1} w)_t``), then
      ``b_i <- theta_hat_i b_i + w_t`` and ``eta_t = eta_{t-1} + u_t``;
    * privacy: ``C z + w`` is a Gaussian mechanism whose l2 sensitivity is
      ``Delta_2 * max_s ||C[:, s]||_2 = Delta_2 sqrt(sum_{k<T} c_k^2)`` (the first
      column is the longest), computed in closed form (Lemma 5.3) and raised by
      :data:`SENSITIVITY_MARGIN`; ``sigma = analytic_sigma(epsilon, delta) * Delta_2 *``
      :attr:`column_norm`, as for :class:`~agents.privacy.counters.FactorizationCounter`;
      adaptive inputs are covered by Denisov et al. (NeurIPS 2022);
    * variance: ``Var(eta_t) = sigma^2 sum_{k<t} b_k^2``, ``b_k = sum_{j<=k} d_j``
      (closed form, Lemma 5.4), nondecreasing in ``t``;
    * rate: with 4 buffers the worst std is within 1.6% of the square-root
      factorization's up to ``T = 2^20`` (both ``~ sigma_1 Delta_2 (1 + ln T / pi)``).

    Cost: ``O(dim * buffers)`` memory (``b``, ``eta``) and work per step (one draw, one
    ``(buffers,) @ (buffers, dim)`` product, two updates); ``O(T * dim * buffers)`` in
    total, against ``O(T^2 dim)`` for the factorization. Parameters: 30-150 ms once per
    ``(T, buffers)`` with 4 buffers (cached).

    Real coefficients: the guarantee is for the idealized real-valued mechanism (marked
    ``[IDEALIZED]``), as for the factorization counter.

    Args:
        horizon, dim, noise, ...: As :class:`~agents.privacy.counters.ContinualCounter`;
            ``noise`` must be Gaussian (or ``None``).
        buffers: Number of buffers ``n`` in ``[1, 8]`` (default 4).

    Raises:
        ValueError: For Laplace noise or an invalid parameter (named in the message).
    """

    name: ClassVar[str] = "blt"
    gaussian_only: ClassVar[bool] = True

    def __init__(self, horizon: int, dim: int, *, noise: NoiseStrategy | str | None,
                 buffers: int = DEFAULT_BUFFERS, **kwargs) -> None:
        kind = noise.kind if isinstance(noise, NoiseStrategy) else noise
        if kind in NOISE_KINDS and kind not in ("gaussian", None):  # unknown: base's error
            raise ValueError(
                f"BLTCounter supports only noise='gaussian' (or None), got noise={kind!r}: its "
                "strategy matrix C has real (non-integer) coefficients, and their l1 column "
                "norm grows like sqrt(T), so Laplace noise for pure epsilon-DP would be "
                "polynomially larger than the tree's")
        self.buffers = check_int("buffers", buffers, 1, MAX_BUFFERS)
        super().__init__(horizon, dim, noise=noise, **kwargs)

    def _init_structure(self) -> None:
        #: The optimized BLT pair (shared, read-only: cached per ``(T, buffers)``).
        self.params = blt_parameters(self.horizon, self.buffers)
        #: ``sqrt(sum_{k<T} c_k^2) (1 + SENSITIVITY_MARGIN)``: l2 gain of ``C``.
        self.column_norm = (math.sqrt(self.params.sensitivity_squared(self.horizon))
                            * (1.0 + SENSITIVITY_MARGIN))

    def _calibrate(self, noise: NoiseStrategy) -> NoiseStrategy:
        return noise.calibrate(gain=self.column_norm)

    def _unit_event(self) -> dp_event.DpEvent:
        return self.noise_strategy.dp_event(gain=self.column_norm)

    def _init_noise_state(self) -> None:
        rows = self.buffers if self.noise_strategy.private else 0
        self._decay = self.params.theta_hat[:, None].copy()  # (n, 1)
        self._scale = self.params.omega_hat.copy()  # (n,)
        #: buffers ``b_i`` of ``C^{-1}`` and the running noise ``eta_t``
        self._state = np.zeros((rows, self.dim))
        self._eta = np.zeros(self.dim if rows else 0)

    def _next_noise(self) -> np.ndarray:
        w = self._draw()
        self._eta += w + self._scale @ self._state  # eta_t = eta_{t-1} + (C^{-1} w)_t
        self._state *= self._decay
        self._state += w
        return self._eta

    def _unit_variances(self, ts: np.ndarray) -> np.ndarray:
        out = np.empty(ts.shape)
        flat, res = ts.ravel(), out.ravel()
        for lo in range(0, flat.size, 1 << 16):  # bounded temporaries for T = 2^20
            res[lo:lo + (1 << 16)] = self.params.variances(flat[lo:lo + (1 << 16)])
        return res.reshape(ts.shape)

    def max_noise_variance(self) -> float:
        """``Var(eta_T)``: the variance is a sum of squares, nondecreasing in ``t``."""
        return float(self.noise_strategy.variance
                     * self._unit_variances(np.array([self.horizon]))[0])

    def _buffers(self) -> list[np.ndarray]:
        return [self._state, self._eta, self._decay, self._scale]
