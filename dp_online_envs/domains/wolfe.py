"""Wolfe's minimum-norm-point algorithm for a convex quadratic over a polytope.

The one implementation behind the Euclidean projection onto an oracle polytope
(:mod:`~dp_online_envs.domains.projection`), the Newton model steps of the convex
comparator (:func:`dp_online_envs.hindsight._oracle_model_min`) and the corral of the
Fujishige-Wolfe submodular minimization
(:func:`dp_online_envs.losses.submodular_min.fujishige_wolfe`). For a polytope P known
through its linear minimization oracle (LMO), a point ``x0`` (not necessarily in P), a
vector ``g`` and a positive definite ``H``, it minimizes

    phi(y) = <g, y - x0> + (y - x0)^T H (y - x0) / 2      over y in P,

(with ``g = 0``, ``H = I`` this is the projection of ``x0``), keeping y a convex
combination of a *corral* of affinely independent points of P (Wolfe 1976):

* major cycle: ``v = LMO(grad phi(y))``; stop when the Frank-Wolfe gap
  ``<grad phi(y), y - v>`` (an upper bound on ``phi(y) - min_P phi``) is at most ``tol``;
  otherwise add v to the corral;
* minor cycles: move to the minimizer of phi over the corral's affine hull; if some of
  its affine weights are not positive, move from the current convex weights towards
  them until a weight vanishes, drop that point, and repeat.

The affine minimizer. With ``d_i = v_i - x0`` the corral's points relative to x0, an
affine combination ``y = x0 + sum_i alpha_i d_i`` (``sum_i alpha_i = 1``) has
``phi = alpha^T K alpha / 2 + r^T alpha`` with the Gram matrix ``K_ij = <d_i, H d_j>`` and
``r_i = <g, d_i>``. Its minimizer solves ``K alpha + nu e = -r``, ``e^T alpha = 1``. With
``R = K + e e^T`` (positive definite exactly when the points are affinely independent:
it is the Gram matrix of the vectors ``(1, H^{1/2} d_i)``),

    alpha = kappa s - t,   s = R^{-1} e,   t = R^{-1} r,   kappa = (1 + e^T t) / e^T s,

and one step of iterative refinement is applied. ``R = L L^T`` is kept factored:

* insert: one new row of L by a triangular solve, O(k^2) (the Gram row costs one
  product with H and k dot products);
* delete (from position j on): ``L[:j, :j]`` stays valid and the trailing block is
  refactored from the stored R, ``O(k^2 (k - j))``;

never a least-squares solve on the ``dim x k`` matrix of the points, as the previous
implementation did at every minor cycle. Safeguards: a point whose new pivot is below
``1e-14`` of its diagonal is (numerically) affinely dependent on the corral and is not
inserted (an oracle vertex then means no progress is possible in floating point: the
loop stops); when the KKT residual of the solve exceeds ``1e-9`` relative, the whole
factor is recomputed from R, and, should R have lost definiteness, the bordered system
is solved by least squares (the minimum-norm solution, as before).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@functools.cache
def _lapack_trtrs() -> Any:
    """LAPACK's triangular solve ``trtrs`` (scipy imported when first used: it is slow to
    import)."""
    from scipy.linalg import get_lapack_funcs

    return get_lapack_funcs("trtrs", dtype=np.float64)


def _trtrs(*args: Any, **kwargs: Any) -> Any:
    return _lapack_trtrs()(*args, **kwargs)

#: Affine weights at or below this level count as non-positive (the point is dropped).
WEIGHT_TOL = 1e-14
#: A new pivot ``L_kk^2 <= DEPENDENT_TOL * R_kk`` means an affinely dependent point.
DEPENDENT_TOL = 1e-14
#: Relative KKT residual above which the factor is recomputed from scratch.
RESIDUAL_TOL = 1e-9


@dataclass(frozen=True)
class WolfeResult:
    """Outcome of :func:`wolfe_minimize`.

    Attributes:
        z: ``y - x0`` for the final point y.
        grad: ``grad phi(y) = g + H (y - x0)``.
        gap: The Frank-Wolfe gap of the final point, ``<grad, y - v>`` for ``v`` the
            oracle's answer to ``grad`` (``>= phi(y) - min_P phi``).
        iterations: Major cycles run (oracle calls on the loop's iterates).
        vertices: The corral, one point of P per row.
        weights: Their convex weights (positive, summing to 1).
        decision: The membership certificate (see ``decide_atol``), or None.
        stalled: Whether the loop stopped because no progress was possible in floating
            point (an oracle vertex already in, or dependent on, the corral; an
            unchanged iterate).
    """

    z: np.ndarray
    grad: np.ndarray
    gap: float
    iterations: int
    vertices: np.ndarray
    weights: np.ndarray
    decision: bool | None
    stalled: bool


class Corral:
    """Affinely independent points of P with convex weights and a factored Gram matrix.

    Args:
        x0: The translation point (``d_i = v_i - x0``).
        g: The linear term of phi (None: zero).
        hess: ``v -> H v`` along the last axis (None: the identity).
    """

    def __init__(self, x0: np.ndarray, g: np.ndarray | None,
                 hess: Callable[[np.ndarray], np.ndarray] | None) -> None:
        self.x0, self.g, self.hess = x0, g, hess
        dim = x0.size
        cap = min(dim + 2, 128)  # a corral has at most dim + 1 points; grown by doubling
        self.size = 0
        self.v = np.empty((cap, dim))  # the points, exactly as given
        self.hd = np.empty((cap, dim))  # H d_i (d_i itself when H = I)
        self.r = np.zeros(cap)
        self.gram = np.empty((cap, cap))  # R = K + e e^T
        self.chol = np.zeros((cap, cap))  # its lower Cholesky factor
        self.lam = np.empty(cap)
        self.keys: list[bytes] = []  # the points' bytes, in corral order
        self.keyset: set[bytes] = set()
        self.factored = True  # False: R lost definiteness, solves go by least squares

    # ------------------------------------------------------------------ storage
    def _grow(self) -> None:
        cap = 2 * len(self.r)
        k = self.size

        def grown(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
            out = np.zeros(shape) if a is self.chol else np.empty(shape)
            out[tuple(slice(0, n) for n in a.shape)] = a
            return out

        dim = self.x0.size
        self.v, self.hd = grown(self.v, (cap, dim)), grown(self.hd, (cap, dim))
        self.r, self.lam = grown(self.r, (cap,)), grown(self.lam, (cap,))
        chol = np.zeros((cap, cap))
        chol[:k, :k] = self.chol[:k, :k]
        gram = np.empty((cap, cap))
        gram[:k, :k] = self.gram[:k, :k]
        self.chol, self.gram = chol, gram

    def try_insert(self, v: np.ndarray, key: bytes) -> bool:
        """Append ``v`` with weight 0; False (nothing changed) if it is (numerically)
        affinely dependent on the corral."""
        k = self.size
        if k == len(self.r):
            self._grow()
        d = v - self.x0
        hd = d if self.hess is None else np.asarray(self.hess(d), dtype=np.float64)
        row = self.hd[:k] @ d + 1.0
        diag = float(d @ hd) + 1.0
        if not self.factored:  # (only after a breakdown) retry a full factorization
            self._refactor(0)
        if self.factored:
            lrow = _trtrs(self.chol[:k, :k], row, lower=1)[0] if k else row[:0]
            pivot = diag - float(lrow @ lrow)
            if not pivot > DEPENDENT_TOL * diag:
                return False
        else:
            lrow, pivot = np.zeros(k), 0.0
        self.v[k], self.hd[k] = v, hd
        self.r[k] = 0.0 if self.g is None else float(self.g @ d)
        self.gram[k, :k] = self.gram[:k, k] = row
        self.gram[k, k] = diag
        self.chol[k, :k] = lrow
        self.chol[k, k] = math.sqrt(pivot)
        self.lam[k] = 0.0
        self.keys.append(key)
        self.keyset.add(key)
        self.size = k + 1
        return True

    def insert_all(self, points: np.ndarray, weights: np.ndarray) -> bool:
        """Make an empty corral of ``points`` (distinct) with convex ``weights`` in one
        pass: one matrix product with H, the Gram matrix and one Cholesky
        factorization. False (nothing changed) if a pivot shows an (almost) affinely
        dependent point: insert them one by one then."""
        m = len(points)
        while len(self.r) < m:
            self._grow()
        d = points - self.x0
        hd = d if self.hess is None else np.asarray(self.hess(d), dtype=np.float64)
        gram = d @ hd.T + 1.0
        gram = 0.5 * (gram + gram.T)
        try:
            chol = np.linalg.cholesky(gram)
        except np.linalg.LinAlgError:
            return False
        if not np.all(np.diag(chol) ** 2 > DEPENDENT_TOL * np.diag(gram)):
            return False
        self.v[:m], self.hd[:m] = points, hd
        self.r[:m] = 0.0 if self.g is None else d @ self.g
        self.gram[:m, :m] = gram
        self.chol[:m, :m] = chol
        self.lam[:m] = weights
        self.keys = [p.tobytes() for p in points]
        self.keyset = set(self.keys)
        self.size = m
        return True

    def keep(self, keep: np.ndarray) -> None:
        """Keep the points at the (increasing) indices ``keep``; refactor the trailing
        block of L from the first removed position on."""
        k, m = self.size, keep.size
        if m == k:
            return
        j = int(np.flatnonzero(keep != np.arange(m))[0]) if np.any(keep != np.arange(m)) else m
        for a in (self.v, self.hd, self.r, self.lam):
            a[:m] = a[keep]
        self.gram[:m, :m] = self.gram[np.ix_(keep, keep)]
        self.keys = [self.keys[i] for i in keep.tolist()]
        self.keyset = set(self.keys)
        self.size = m
        self.chol[j:m, :j] = self.chol[keep[j:], :j]  # L21: columns of kept points
        self.chol[:, m:] = 0.0
        self.chol[m:, :] = 0.0
        if not self.factored or (j < m and not self._refactor(j)):
            self._refactor(0)

    def _refactor(self, j: int) -> bool:
        """Recompute rows ``j:`` of L from R (the Schur complement of ``R[:j, :j]``)."""
        k = self.size
        l21 = self.chol[j:k, :j]
        schur = self.gram[j:k, j:k] - l21 @ l21.T
        try:
            self.chol[j:k, j:k] = np.linalg.cholesky(schur)
        except np.linalg.LinAlgError:
            self.chol[j:k, j:k] = 0.0
            self.factored = False
            return False
        self.factored = True
        return True

    # --------------------------------------------------------------- the solves
    def _solve(self, b: np.ndarray) -> np.ndarray:
        """``R^{-1} b`` for a vector b by two triangular solves (LAPACK trtrs called
        directly: the wrappers' checks cost more than the solve at these sizes)."""
        lo = self.chol[: self.size, : self.size]
        y, info = _trtrs(lo, b, lower=1)
        x, info2 = _trtrs(lo, y, lower=1, trans=1)
        if info or info2:
            raise np.linalg.LinAlgError("singular Cholesky factor")
        return x

    def _kkt(self, rhs_a: np.ndarray, rhs_b: float, s: np.ndarray) -> tuple[np.ndarray, float]:
        """Solve ``R alpha - kappa e = rhs_a``, ``e^T alpha = rhs_b`` (``s = R^{-1} e``)."""
        t = self._solve(rhs_a)
        kappa = (rhs_b - float(t.sum())) / float(s.sum())
        return t + kappa * s, kappa

    def affine_minimizer(self) -> np.ndarray:
        """The affine weights alpha of phi's minimizer over the corral's affine hull."""
        k = self.size
        if k == 1:
            return np.ones(1)
        gram, r = self.gram[:k, :k], self.r[:k]
        for attempt in range(2):
            if self.factored:
                try:
                    s = self._solve(np.ones(k))
                    alpha, kappa = self._kkt(-r, 1.0, s)
                    res_a = -r - (gram @ alpha - kappa)
                    res_b = 1.0 - float(alpha.sum())
                    da, dk = self._kkt(res_a, res_b, s)  # one step of iterative refinement
                except np.linalg.LinAlgError:
                    da = alpha = np.full(k, np.nan)
                    dk = kappa = 0.0
                alpha, kappa = alpha + da, kappa + dk
                res = float(np.abs(-r - (gram @ alpha - kappa)).max())
                scale = (float(np.abs(gram).max()) * float(np.abs(alpha).sum())
                         + float(np.abs(r).max()) + abs(kappa))
                if np.all(np.isfinite(alpha)) and res <= RESIDUAL_TOL * scale:
                    return alpha
            if attempt == 0:  # a bad update: refactor from scratch and retry
                self._refactor(0)
        # R numerically singular: the minimum-norm solution of the bordered system
        border = np.zeros((k + 1, k + 1))
        border[:k, :k] = gram - 1.0
        border[:k, k] = border[k, :k] = 1.0
        sol = np.linalg.lstsq(border, np.concatenate([-r, [1.0]]), rcond=None)[0]
        return sol[:k]

    # ------------------------------------------------------------------ the point
    def z(self) -> np.ndarray:
        """``y - x0 = sum_i lam_i d_i`` (H = I: the gradient itself)."""
        k = self.size
        if self.hess is None:
            return self.lam[:k] @ self.hd[:k]
        return self.lam[:k] @ self.v[:k] - self.x0

    def grad(self) -> np.ndarray:
        """``grad phi(y) = g + H (y - x0) = g + sum_i lam_i H d_i``: one ``k x dim``
        product per major cycle (the only one besides the new Gram row)."""
        k = self.size
        hz = self.lam[:k] @ self.hd[:k]
        return hz if self.g is None else self.g + hz

    def grad_dot_z(self, grad: np.ndarray) -> float:
        """``<grad phi(y), y - x0> = lam^T r + lam^T K lam`` from the Gram matrix (H = I
        and g = 0: ``||grad||^2`` directly, as the gradient is ``y - x0``)."""
        if self.hess is None and self.g is None:
            return float(grad @ grad)
        k = self.size
        lam = self.lam[:k]
        return float(lam @ self.r[:k]) + float(lam @ (self.gram[:k, :k] @ lam)) - float(
            lam.sum()) ** 2

    def minor_cycles(self, weight_tol: float = WEIGHT_TOL) -> None:
        """Move to the affine minimizer, dropping points until it is a convex one
        (weights at or below ``weight_tol`` count as zero)."""
        for _ in range(self.size):
            alpha = self.affine_minimizer()
            k = self.size
            lam = self.lam[:k]
            if np.all(alpha > weight_tol):
                lam[:] = alpha / alpha.sum()
                return
            # Move from lam towards alpha until a weight hits 0, and drop it.
            neg = np.flatnonzero(alpha <= weight_tol)
            denom = lam[neg] - alpha[neg]
            ratios = np.where(denom > 0, lam[neg] / np.where(denom > 0, denom, 1.0), 0.0)
            theta = min(max(float(np.min(ratios)), 0.0), 1.0)
            new = theta * alpha + (1.0 - theta) * lam
            new[neg[int(np.argmin(ratios))]] = 0.0
            keep = np.flatnonzero(new > weight_tol)
            lam[:] = new
            self.keep(keep)
            m = self.size
            self.lam[:m] /= self.lam[:m].sum()


def wolfe_minimize(
    oracle: Callable[[np.ndarray], np.ndarray],
    x0: np.ndarray,
    start: np.ndarray,
    weights: np.ndarray | None = None,
    *,
    g: np.ndarray | None = None,
    hess: Callable[[np.ndarray], np.ndarray] | None = None,
    tol: float,
    max_iter: int,
    decide: Callable[[np.ndarray, float], bool | None] | None = None,
) -> WolfeResult:
    """Wolfe's algorithm for ``min_{y in P} <g, y - x0> + (y - x0)^T H (y - x0) / 2``.

    Args:
        oracle: The LMO of P, ``c -> argmin_{v in P} <c, v>``.
        x0: The translation point (the point to project when ``g`` and ``hess`` are
            None).
        start: A point of P, the first corral point (a vertex, or any feasible point),
            or several points of P as rows (a warm start, e.g. a previous corral):
            those with a positive weight that are affinely independent of the ones
            before them form the first corral, with their weights renormalized, and
            minor cycles move to the first corral's affine minimizer.
        weights: The convex weights of the rows of ``start`` (default: equal).
        g: The linear term (None: zero).
        hess: ``v -> H v`` for a symmetric positive definite H (None: the identity),
            applied along the last axis (a batch of rows ``D -> D H``).
        tol: Stop once the Frank-Wolfe gap is at most ``tol``.
        max_iter: At most this many major cycles; at the cap the gap of the returned
            point is computed with one more oracle call.
        decide: Optional early stop: called with ``(grad, gap)`` at every iterate; a
            non-None answer stops the loop and is returned as ``decision``.

    Returns:
        A :class:`WolfeResult`.
    """
    corral = Corral(x0, g, hess)
    start = np.asarray(start, dtype=np.float64)
    if start.ndim == 1:
        corral.try_insert(start, start.tobytes())
        corral.lam[0] = 1.0
    else:  # a warm start: a convex combination of several points of P
        w = np.ones(len(start)) if weights is None else np.asarray(weights, dtype=np.float64)
        pos = np.flatnonzero(w > 0.0)
        if pos.size == 0:
            raise ValueError("start has no point with a positive weight")
        unique = {start[i].tobytes(): i for i in pos[::-1].tolist()}  # first occurrences
        pos = np.array(sorted(unique.values()), dtype=np.intp)
        if corral.insert_all(start[pos], w[pos] / w[pos].sum()):
            kept = list(w[pos])
        else:
            kept = [w[i] for i in pos.tolist() if corral.try_insert(start[i], start[i].tobytes())]
        k = corral.size
        corral.lam[:k] = np.asarray(kept) / sum(kept)
        corral.minor_cycles()
    grad = corral.grad()
    gap, decision, it, stalled, capped = math.inf, None, 0, False, True
    for it in range(1, max_iter + 1):  # noqa: B007  (the count is read after the loop)
        v = np.asarray(oracle(grad), dtype=np.float64)
        gap = corral.grad_dot_z(grad) - float(grad @ (v - x0))
        decision = None if decide is None else decide(grad, gap)
        if gap <= tol or decision is not None:
            capped = False
            break
        key = v.tobytes()
        if key in corral.keyset or not corral.try_insert(v, key):
            capped, stalled = False, True
            break  # no progress possible in floating point
        corral.minor_cycles()
        previous, grad = grad, corral.grad()
        if np.array_equal(grad, previous):  # (H = I: the iterate y - x0 itself)
            capped, stalled = False, True
            break
    if capped and max_iter >= 1:  # the gap of the returned point, not of the one before
        v = np.asarray(oracle(grad), dtype=np.float64)
        gap = corral.grad_dot_z(grad) - float(grad @ (v - x0))
        decision = None if decide is None else decide(grad, gap)
    k = corral.size
    return WolfeResult(z=corral.z(), grad=grad, gap=gap, iterations=it, vertices=corral.v[:k].copy(),
                       weights=corral.lam[:k].copy(), decision=decision, stalled=stalled)
