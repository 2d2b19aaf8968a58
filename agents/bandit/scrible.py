r"""SCRiBLe (Abernethy, Hazan, Rakhlin 2008/2012) and ``private-scrible`` (Agarwal-Singh Thm. 4.5).

* ``scrible`` -- :class:`SCRiBLe`, non-private bandit linear optimization with a
  ``nu``-self-concordant barrier ``R`` of the decision set.
* ``private-scrible`` -- :class:`PrivateSCRiBLe`, the private reduction (Algorithm 4,
  :mod:`agents.bandit.private_bandit`) around SCRiBLe with the step size of Theorem 4.5.

The algorithm
-------------
``y_1 = argmin R`` (the analytic centre). Each round, with ``H = nabla^2 R(y_t) =
sum_i lam_i v_i v_i^T`` (eigen-decomposition):

1. draw ``i`` uniform in ``[n]`` and a sign ``s = +-1``; play the Dikin-ellipsoid
   extreme point ``x_t = y_t + s lam_i^{-1/2} v_i`` (in the domain);
2. observe ``f_t = <theta_t, x_t>``; estimate ``theta^_t = n f_t s lam_i^{1/2} v_i``
   (unbiased);
3. FTRL step ``y_{t+1} = argmin_y eta <sum_{s<=t} theta^_s, y> + R(y)`` (damped Newton
   from ``y_t``).

Barriers (:func:`barrier_for`): the Euclidean ball of radius r,
``R(x) = -log(r^2 - ||x||^2)``, ``nu = 1``; polytopes ``{x : A x <= b}`` with the
log-barrier ``R(x) = -sum_j log(b_j - a_j^T x)``, ``nu = m`` (number of constraints):
boxes / the cube ``[-1, 1]^n`` (``m = 2n``), the l1 ball (``m = 2^n``, for ``n <= 12``)
or any ``constraints=(A, b)`` given as an option.

A floating-point guard shrinks the step when ``x_t`` falls outside by rounding
(:attr:`SCRiBLe.guarded` counts it).

Parameters (Theorem 4.5 of Agarwal-Singh; Theorem 5.1 of Abernethy et al. 2012)
-------------------------------------------------------------------------------
With ``N = n`` the dimension, ``M = max |<l, x>|`` (``problem.bound``), ``||X||_2 =
sup_{x in X} ||x||_2`` (``domain.norm_bound(2)``) and ``lambda`` the Laplace scale of
the noise on the forwarded loss:

    eta = sqrt( nu ln T / (2 N^2 T (M^2 + lambda^2 N ||X||_2^2)) ).

Non-private ``scrible`` is ``lambda = 0``; ``private-scrible`` uses
``lambda = (hi - lo) / epsilon = 2M / epsilon``. Clamp:
``eta = min(formula, 1 / (4 N (M + L)))``, ``L = 4 lambda ||X||_2 sqrt(N) ln(NT)``
(Thm. D.1's condition, recorded in :attr:`SCRiBLe.eta_clamped`). Natural logarithms;
``ln T`` floored at ``ln 2``. Regret (Thm. 4.5, with ``lambda = ||Y||_1 / eps`` there):
``O(sqrt(T log T) sqrt(N^2 nu (M^2 + lambda^2 N ||X||_2^2)))``.

Why the clamp, the guard and this ``lambda``: ``docs/algorithms/scrible.md``.
"""

from __future__ import annotations

import itertools
import math
from abc import ABC, abstractmethod

import numpy as np

from agents.bandit.private_bandit import PrivateBanditReduction
from agents.base import Agent, register
from agents.common import check_bandit_problem, scalar_feedback
from dp_online_envs.domains import Ball, Box, Domain, L1Ball
from dp_online_envs.losses import LinearLoss
from dp_online_envs.validation import check_int, check_real

__all__ = [
    "BallBarrier",
    "Barrier",
    "PolytopeBarrier",
    "PrivateSCRiBLe",
    "SCRiBLe",
    "barrier_for",
    "canonical_eigh",
    "theorem_4_5_eta",
]

#: Consecutive eigenvalues closer than this times the largest magnitude form one cluster,
#: whose eigenvectors :func:`canonical_eigh` replaces by a basis fixed by the cluster's
#: span: a few times the eigensolver's own accuracy (``O(eps ||H||)``), so a repeated
#: eigenvalue is one cluster and distinct ones are not, even when ``H`` is ill-conditioned.
EIGEN_CLUSTER_RTOL = 64 * float(np.finfo(np.float64).eps)
#: Largest dimension for which the l1 ball's 2^n facets are enumerated.
MAX_L1_DIM = 12
_SHRINK = (1.0, 1.0 - 1e-12, 1.0 - 1e-9, 1.0 - 1e-6, 0.999, 0.99, 0.9, 0.5)


def canonical_eigh(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (ascending) and an orthonormal eigenbasis (columns) of the symmetric
    ``h``, the basis fixed by ``h`` alone, not by the LAPACK kernel that computed it.

    ``np.linalg.eigh`` returns each eigenvector up to its sign and, for a repeated
    eigenvalue, any orthonormal basis of its eigenspace; both depend on the BLAS and
    LAPACK kernels the CPU selects, so a learner that plays an eigenvector would play
    another game on another machine with the same seed. (The ball barrier's Hessian
    ``a I + b y y^T`` has an ``(n-1)``-fold eigenvalue at every ``y``.) Here the
    eigenvalues are grouped into clusters (consecutive ones closer than
    :data:`EIGEN_CLUSTER_RTOL` times the largest magnitude), and each cluster's basis is
    rebuilt by Gram-Schmidt from the projections of ``e_1, e_2, ...`` onto its span,
    keeping a projection when its residual exceeds ``1 / (2 sqrt(n))`` (a span of
    dimension k always yields k such vectors: a unit vector of the span orthogonal to
    the kept ones would have norm at most ``sqrt(n)`` times that threshold). The basis
    depends on ``h`` continuously for a given cluster structure, so two machines agree
    up to rounding.

    Returns:
        ``(lam, vecs)``: ``lam[i]`` is the eigenvalue of column ``vecs[:, i]``.
    """
    lam, vecs = np.linalg.eigh(h)
    n = lam.size
    gap = EIGEN_CLUSTER_RTOL * max(float(np.abs(lam).max()), np.finfo(float).tiny)
    cuts = [0, *(np.flatnonzero(np.diff(lam) > gap) + 1).tolist(), n]
    keep = 0.5 / math.sqrt(n)
    out = np.empty_like(vecs)
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        span = vecs[:, lo:hi]
        basis: list[np.ndarray] = []
        for j in range(n):
            r = span @ span[j]           # the projection of e_j onto the span
            for q in basis:
                r = r - (q @ r) * q
            norm = float(np.sqrt(r @ r))
            if norm > keep:
                basis.append(r / norm)
                if len(basis) == hi - lo:
                    break
        out[:, lo:hi] = np.stack(basis, axis=1)
    return lam, out


# --------------------------------------------------------------------- barriers
class Barrier(ABC):
    """A ``nu``-self-concordant barrier ``R`` of a full-dimensional convex body."""

    nu: float
    dim: int

    @abstractmethod
    def slack(self, x: np.ndarray) -> float:
        """Smallest constraint slack at ``x``: ``> 0`` strictly inside, ``>= 0`` in the body."""

    @abstractmethod
    def value(self, x: np.ndarray) -> float:
        """``R(x)`` (``inf`` outside the interior)."""

    @abstractmethod
    def grad_hess(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(nabla R(x), nabla^2 R(x))`` at an interior point."""

    def hess(self, x: np.ndarray) -> np.ndarray:
        """``nabla^2 R(x)``."""
        return self.grad_hess(x)[1]

    def minimize(self, c: np.ndarray, y0: np.ndarray, tol: float = 1e-10,
                 max_iter: int = 200) -> np.ndarray:
        """``argmin_y <c, y> + R(y)`` by damped Newton from the interior point ``y0``."""
        y = np.array(y0, dtype=np.float64)
        for _ in range(max_iter):
            g, h = self.grad_hess(y)
            g = g + c
            try:
                d = np.linalg.solve(h, g)
            except np.linalg.LinAlgError:
                d = np.linalg.lstsq(h, g, rcond=None)[0]
            dec = math.sqrt(max(float(g @ d), 0.0))
            if not math.isfinite(dec) or dec < tol:
                break
            step = 1.0 if dec < 0.25 else 1.0 / (1.0 + dec)
            y_new = y - step * d
            while self.slack(y_new) <= 0.0 and step > 1e-12:  # rounding at the boundary
                step *= 0.5
                y_new = y - step * d
            if self.slack(y_new) <= 0.0:
                break
            y = y_new
        return y


class BallBarrier(Barrier):
    """``R(x) = -log(r^2 - ||x||^2)`` on the Euclidean ball of radius ``r``; ``nu = 1``."""

    nu = 1.0

    def __init__(self, dim: int, radius: float = 1.0) -> None:
        self.dim = int(dim)
        self.radius = float(radius)
        self._r2 = self.radius ** 2

    def slack(self, x: np.ndarray) -> float:
        return float(self._r2 - x @ x)

    def value(self, x: np.ndarray) -> float:
        s = self.slack(x)
        return -math.log(s) if s > 0 else math.inf

    def grad_hess(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s = self.slack(x)
        g = (2.0 / s) * x
        h = (2.0 / s) * np.eye(self.dim) + (4.0 / (s * s)) * np.outer(x, x)
        return g, h


class PolytopeBarrier(Barrier):
    """Log-barrier ``R(x) = -sum_j log(b_j - a_j^T x)`` of ``{x : A x <= b}``; ``nu = m``."""

    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64).reshape(-1)
        if a.ndim != 2 or a.shape[0] != b.size or a.shape[0] == 0:
            raise ValueError(f"constraints A {a.shape} and b {b.shape} do not match")
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
            raise ValueError("constraints must be finite")
        self.a, self.b = a, b
        self.dim = a.shape[1]
        self.nu = float(a.shape[0])

    def slack(self, x: np.ndarray) -> float:
        return float(np.min(self.b - self.a @ x))

    def value(self, x: np.ndarray) -> float:
        s = self.b - self.a @ x
        return -float(np.log(s).sum()) if np.all(s > 0) else math.inf

    def grad_hess(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        inv = 1.0 / (self.b - self.a @ x)
        g = self.a.T @ inv
        ai = self.a * inv[:, None]
        return g, ai.T @ ai


def barrier_for(domain: Domain, constraints=None) -> Barrier:
    """The self-concordant barrier SCRiBLe uses on ``domain``.

    Ball -> :class:`BallBarrier` (``nu = 1``); full-dimensional Box / Cube -> the
    log-barrier of its ``2n`` faces; L1Ball (``n <= 12``) -> the log-barrier of its
    ``2^n`` facets; ``constraints=(A, b)`` -> their log-barrier.

    Raises:
        ValueError: For other domains (pass ``constraints``) or a degenerate box.
    """
    if constraints is not None:
        a, b = constraints
        return PolytopeBarrier(a, b)
    if isinstance(domain, Ball):
        return BallBarrier(domain.dim, domain.radius)
    if isinstance(domain, Box):
        if np.any(domain.low >= domain.high):
            raise ValueError(f"scrible needs a full-dimensional box, {domain!r} has a fixed coordinate")
        eye = np.eye(domain.dim)
        return PolytopeBarrier(np.vstack([eye, -eye]), np.concatenate([domain.high, -domain.low]))
    if isinstance(domain, L1Ball):
        if domain.dim > MAX_L1_DIM:
            raise ValueError(f"the l1 ball has 2^{domain.dim} facets; scrible enumerates them "
                             f"for dim <= {MAX_L1_DIM}")
        signs = np.array(list(itertools.product((-1.0, 1.0), repeat=domain.dim)))
        return PolytopeBarrier(signs, np.full(len(signs), domain.radius))
    raise ValueError(f"scrible has no self-concordant barrier for {domain!r}: it supports "
                     "Ball, Box/Cube, L1Ball, or pass constraints=(A, b)")


# ------------------------------------------------------------------ parameters
def theorem_4_5_eta(horizon: int, dim: int, nu: float, bound: float, x_norm: float,
                    noise_scale: float = 0.0) -> tuple[float, float]:
    """``(formula, clamp)`` of SCRiBLe's step size (Agarwal-Singh Thm. 4.5).

    ``formula = sqrt(nu ln T / (2 N^2 T (M^2 + lambda^2 N ||X||^2)))`` and
    ``clamp = 1 / (4 N (M + L))``, ``L = 4 lambda ||X|| sqrt(N) ln(NT)``; the step used
    is ``min(formula, clamp)``. ``ln T`` is floored at ``ln 2``.
    """
    t, n = check_int("horizon", horizon, 1), check_int("dim", dim, 1)
    lam = float(noise_scale)
    log_t = max(math.log(t), math.log(2.0))
    formula = math.sqrt(nu * log_t / (2.0 * n * n * t * (bound ** 2 + lam ** 2 * n * x_norm ** 2)))
    big_l = 4.0 * lam * x_norm * math.sqrt(n) * math.log(n * t) if lam > 0 else 0.0
    clamp = 1.0 / (4.0 * n * (bound + big_l))
    return formula, clamp


# ------------------------------------------------------------------- SCRiBLe
@register
class SCRiBLe(Agent):
    r"""SCRiBLe: self-concordant regularization in bandit linear optimization.

    See the module docstring.

    Args:
        eta: Step size override (default Theorem 4.5, clamped).
        noise_scale: Laplace scale of zero-mean noise the feedback carries (set by the
            private reduction; 0 = non-private).
        constraints: ``(A, b)`` describing the domain as ``{x : A x <= b}``.

    Attributes:
        barrier: The :class:`Barrier`; ``nu`` its parameter.
        eta, eta_formula, eta_clamp, eta_clamped: The step used and its derivation.
        guarded: Rounds in which the feasibility guard shrank the Dikin step.
    """

    name = "scrible"
    description = ("SCRiBLe (Abernethy-Hazan-Rakhlin): Dikin-ellipsoid sampling + FTRL with a "
                   "self-concordant barrier, ball or polytope")
    paper = ("Abernethy, Hazan, Rakhlin, Competing in the dark (COLT 2008); IEEE Trans. IT "
             "2012, Thm. 5.1; Agarwal & Singh ICML 2017, Thm. 4.5")
    feedback = "bandit"
    private = False

    def setup(self, eta: float | None = None, noise_scale: float = 0.0,
              constraints: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        p = self.problem
        check_bandit_problem(self.name, p)
        if not isinstance(p.loss, LinearLoss):
            raise ValueError(f"scrible is a bandit LINEAR optimization algorithm; got {p.loss!r}")
        self.barrier = barrier_for(p.domain, constraints)
        if self.barrier.dim != p.dim:
            raise ValueError(f"constraints act on R^{self.barrier.dim}, the domain is in R^{p.dim}")
        self.nu = self.barrier.nu
        self.noise_scale = check_real("noise_scale", noise_scale, 0.0)
        b = float(p.bound)
        if not (math.isfinite(b) and b > 0):
            raise ValueError(f"scrible needs a finite bound M = max |f|, got {p.bound!r}")
        self._bound = b
        self.x_norm = float(p.domain.norm_bound(2))
        self.eta_formula, self.eta_clamp = theorem_4_5_eta(
            p.horizon, p.dim, self.nu, b, self.x_norm, self.noise_scale)
        self.eta_clamped = self.eta_formula > self.eta_clamp
        self.eta = (min(self.eta_formula, self.eta_clamp) if eta is None
                    else check_real("eta", eta, 0.0))
        start = np.array(p.domain.center, dtype=np.float64)
        if self.barrier.slack(start) <= 0:
            raise ValueError(f"the domain's centre {start} is not strictly inside the barrier's body")
        self.center = self.barrier.minimize(np.zeros(p.dim), start)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        n = self.problem.dim
        self.y = self.center.copy()
        self._cum = np.zeros(n)
        self._est_dir = np.zeros(n)
        self._est_scale = 0.0
        self.guarded = 0

    # ---------------------------------------------------------------- helpers
    def dikin(self, y: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Eigenvalues ``lam`` and eigenvectors (columns) of ``nabla^2 R(y)``, the basis
        :func:`canonical_eigh`'s (the same on every machine up to rounding)."""
        h = self.barrier.hess(self.y if y is None else y)
        lam, vecs = canonical_eigh(0.5 * (h + h.T))
        return np.maximum(lam, np.finfo(float).tiny), vecs

    def _feasible(self, x: np.ndarray) -> bool:
        return (bool(np.all(np.isfinite(x))) and self.barrier.slack(x) >= 0.0
                and self.problem.domain.contains(x, 0.0))

    # --------------------------------------------------------------- the API
    def act(self) -> np.ndarray:
        n = self.problem.dim
        lam, vecs = self.dikin()
        i = int(self.rng.integers(n))
        s = 1.0 if self.rng.random() < 0.5 else -1.0
        v = vecs[:, i]
        half = math.sqrt(lam[i])
        for c in _SHRINK:
            x = self.y + (s * c / half) * v
            if self._feasible(x):
                if c != 1.0:
                    self.guarded += 1
                # theta^ = n f s lam_i^{1/2} v_i / c   (f observed in update)
                self._est_dir = v
                self._est_scale = n * s * half / c
                return x
        self.guarded += 1
        self._est_scale = 0.0  # play the (interior) centre, no estimate this round
        return self.y.copy()

    def update(self, action, feedback) -> None:
        f = scalar_feedback(self.clip_feedback(feedback))
        self.observe_loss(action, f)

    def observe_loss(self, action, loss: float) -> None:
        """Update with the scalar loss of the last point played (not clipped)."""
        if self._est_scale != 0.0:
            self._cum += (loss * self._est_scale) * self._est_dir
            self.y = self.barrier.minimize(self.eta * self._cum, self.y)
        self.t += 1


@register
class PrivateSCRiBLe(PrivateBanditReduction):
    r"""``private-scrible``: Algorithm 4 around SCRiBLe with Theorem 4.5's step size.

    Each loss (clipped to ``[-M, M]``, ``M = problem.bound``) gets ``Lap(2M/epsilon)``
    noise, is released and fed to :class:`SCRiBLe` with ``lambda = 2M/epsilon`` in
    Theorem 4.5's ``eta`` (clamped, see the module docstring and
    ``docs/algorithms/scrible.md``). ``(epsilon, 0)``-DP.

    Args:
        eta: Step size override passed to SCRiBLe.
        constraints: ``(A, b)`` passed to SCRiBLe.
        loss_range: ``(lo, hi)`` overriding the declared range.
        add_noise: ``False`` switches the noise off: the exact clipped losses are
            released (NOT private: the guarantee's epsilon is infinite), the non-private
            limit, where the learner plays as ``scrible``, bit for bit.
    """

    name = "private-scrible"
    description = ("Agarwal-Singh Thm. 4.5: SCRiBLe on Lap(2M/eps)-noised losses, eps-DP "
                   "bandit linear optimization")
    paper = "Agarwal & Singh, The Price of Differential Privacy for Online Learning (ICML 2017), Alg. 4, Thm. 4.5"
    counterpart = "scrible"

    def setup(self, eta: float | None = None,
              constraints: tuple[np.ndarray, np.ndarray] | None = None,
              loss_range: tuple[float, float] | None = None, add_noise: bool = True) -> None:
        self._setup_reduction(SCRiBLe, {"eta": eta, "constraints": constraints}, loss_range,
                              add_noise)

    @property
    def eta(self) -> float:
        return self.base.eta
