"""Exact minimization of submodular set functions.

A set function ``f : 2^[n] -> R`` is given as a callable on boolean masks. Small
ground sets (``n <= brute_force_max_n``, default 14) are solved by vectorized
enumeration of all ``2^n`` sets; larger ones by the Fujishige-Wolfe minimum-norm-point
algorithm:

1. Normalize ``g(S) = f(S) - f(empty)`` and work in its base polytope
   ``B(g) = {x : x(S) <= g(S) for all S, x([n]) = g([n])}``.
2. Find the minimum-norm point ``x*`` of ``B(g)`` with Wolfe's algorithm: the linear
   minimization oracle over ``B(g)`` is Edmonds' greedy algorithm (sort ``w``
   increasingly, ``q_{pi(k)} = g(S_k) - g(S_{k-1})`` along the chain of prefixes
   ``S_k``); each major cycle adds the greedy vertex ``q = argmin_{q in B} <x, q>`` to
   the corral, minor cycles move to the affine minimizer of the corral and drop
   points until it lies in the corral's relative interior (the corral and its
   factored Gram matrix: :class:`~dp_online_envs.domains.wolfe.Corral`, shared with
   the projections onto oracle polytopes).
3. Fujishige's theorem: ``{i : x*_i < 0}`` is the unique minimal minimizer and
   ``{i : x*_i <= 0}`` the maximal one, and ``min_S g(S) = sum_i min(x*_i, 0)``.

Every greedy call evaluates ``g`` on the whole chain of sublevel sets of the current
iterate; the best set seen in any chain is kept. In particular the final chain
contains ``{x < 0}`` and ``{x <= 0}`` (for any tie-breaking threshold near 0), so the
returned set is at least as good as both candidates. Weak duality
(``sum_i min(x_i, 0) <= g(S)`` for every ``x`` in ``B(g)`` and every ``S``) certifies the
result: the loop stops once the duality gap ``best - sum_i min(x_i, 0)`` is at most
``tol * scale`` (then the returned value is optimal up to that gap), or when Wolfe's
criterion ``||x||^2 - <x, q> <= tol * max_{p in corral} ||p||^2`` says ``x`` is the
minimum-norm point to within floating-point accuracy.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dp_online_envs.domains.wolfe import Corral
from dp_online_envs.validation import check_int, check_real

#: Largest ground set solved by exhaustive enumeration in ``method="auto"``.
BRUTE_FORCE_MAX_N = 14

#: Corral points whose convex weight falls to this level are dropped.
_WEIGHT_TOL = 1e-12

BatchFn = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class MinNormResult:
    """Outcome of :func:`fujishige_wolfe`.

    Attributes:
        value: ``f`` at the returned set (including ``f(empty)``).
        mask: The returned minimizer, a boolean array of shape ``(n,)``.
        x: The final (approximate) minimum-norm point of ``B(f - f(empty))``.
        gap: Certified duality gap ``value - f(empty) - sum_i min(x_i, 0) >= 0``
            (up to rounding): the true minimum is at least ``value - gap``.
        iterations: Number of major cycles run.
    """

    value: float
    mask: np.ndarray
    x: np.ndarray
    gap: float
    iterations: int


def _as_batch(fn: Callable, n: int, vectorized: bool) -> BatchFn:
    """Wrap ``fn`` into a function of a ``(k, n)`` boolean mask array."""
    if vectorized:

        def batch(masks: np.ndarray) -> np.ndarray:
            out = np.asarray(fn(masks), dtype=np.float64).reshape(-1)
            if out.shape != (masks.shape[0],):
                raise ValueError(
                    f"vectorized fn returned {out.size} values for {masks.shape[0]} masks"
                )
            return out

    else:

        def batch(masks: np.ndarray) -> np.ndarray:
            return np.fromiter((float(fn(m)) for m in masks), np.float64, masks.shape[0])

    return batch


def all_masks(n: int, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Boolean masks of the sets with indices ``start..stop-1`` (bit ``i`` = element ``i``)."""
    stop = (1 << n) if stop is None else stop
    idx = np.arange(start, stop, dtype=np.int64)
    return ((idx[:, None] >> np.arange(n, dtype=np.int64)) & 1).astype(bool)


def brute_force_minimize(
    fn_batch: BatchFn, n: int, chunk: int = 1 << 13
) -> tuple[float, np.ndarray]:
    """Exhaustive minimization over all ``2^n`` subsets, evaluated in chunks.

    Args:
        fn_batch: Maps a ``(k, n)`` boolean array to the ``(k,)`` values.
        n: Ground-set size.
        chunk: Number of sets per batch call.

    Returns:
        ``(min_value, argmin_mask)``; ties go to the set with the smallest bit index.
    """
    best_val, best_idx = np.inf, 0
    total = 1 << n
    for start in range(0, total, chunk):
        stop = min(total, start + chunk)
        vals = fn_batch(all_masks(n, start, stop))
        k = int(np.argmin(vals))
        if vals[k] < best_val:
            best_val, best_idx = float(vals[k]), start + k
    mask = all_masks(n, best_idx, best_idx + 1)[0]
    return best_val, mask


def _chain_masks(order: np.ndarray) -> np.ndarray:
    """``(n+1, n)`` masks of the prefixes ``S_0 = {}, S_k = {order[0..k-1]}``."""
    n = order.size
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    return rank[None, :] < np.arange(n + 1)[:, None]


def fujishige_wolfe(
    fn_batch: BatchFn, n: int, tol: float = 1e-10, max_iter: int | None = None
) -> MinNormResult:
    """Minimize a submodular function with the Fujishige-Wolfe min-norm-point algorithm.

    Args:
        fn_batch: Maps a ``(k, n)`` boolean array of sets to their ``(k,)`` values.
        n: Ground-set size.
        tol: Relative tolerance of the two stopping tests: Wolfe's optimality test
            ``||x||^2 - <x, q> <= tol * max(||p||^2 : p in corral or p = q)`` and the
            certified duality gap ``gap <= tol * max(1, largest |greedy marginal|)``.
            (Corral points whose convex weight drops below ``1e-12`` are removed.)
        max_iter: Cap on major cycles (default ``50 * (n + 1)``); on hitting it a
            ``RuntimeWarning`` is issued and the best set found so far is returned.

    Returns:
        A :class:`MinNormResult`.
    """
    if max_iter is None:
        max_iter = 50 * (n + 1)
    f0 = float(fn_batch(np.zeros((1, n), dtype=bool))[0])
    best = {"val": 0.0, "mask": np.zeros(n, dtype=bool)}  # g(empty) = 0

    def greedy(w: np.ndarray) -> np.ndarray:
        order = np.argsort(w, kind="stable")
        chain = _chain_masks(order)
        fv = fn_batch(chain) - f0
        k = int(np.argmin(fv))
        if fv[k] < best["val"]:
            best["val"], best["mask"] = float(fv[k]), chain[k].copy()
        q = np.empty(n)
        q[order] = np.diff(fv)
        return q

    corral = Corral(np.zeros(n), None, None)  # the min-norm point: x0 = 0, g = 0, H = I
    q = greedy(np.zeros(n))
    corral.try_insert(q, q.tobytes())
    corral.lam[0] = 1.0
    x = q.copy()
    scale = max(1.0, float(np.abs(x).max()))
    it = 0
    converged = False
    for it in range(1, max_iter + 1):  # noqa: B007 - reported in the result
        q = greedy(x)
        scale = max(scale, float(np.abs(q).max()))
        gap = best["val"] - float(np.minimum(x, 0.0).sum())
        if gap <= tol * scale:
            converged = True
            break
        points = corral.hd[: corral.size]  # (x0 = 0: the points themselves)
        sq = float(np.max(np.einsum("ij,ij->i", points, points)))
        if float(x @ x) - float(x @ q) <= tol * max(sq, float(q @ q), 1e-300):
            converged = True
            break
        key = q.tobytes()
        if key in corral.keyset or not corral.try_insert(q, key):
            converged = True  # q is (numerically) in the corral's affine hull
            break
        corral.minor_cycles(_WEIGHT_TOL)
        x = corral.z()
        if key not in corral.keyset:
            # The new vertex cannot enter the corral: x is optimal to rounding.
            converged = True
            break
    if not converged:
        warnings.warn(
            f"fujishige_wolfe: no convergence in {max_iter} major cycles; "
            "returning the best set found",
            RuntimeWarning,
            stacklevel=2,
        )
    # Final chain of sublevel sets of x (contains {x < 0} and {x <= 0}).
    greedy(x)
    gap = max(0.0, best["val"] - float(np.minimum(x, 0.0).sum()))
    return MinNormResult(
        value=best["val"] + f0, mask=best["mask"], x=x, gap=gap, iterations=it
    )


def minimize_submodular(
    fn: Callable,
    n: int,
    *,
    vectorized: bool = False,
    method: str = "auto",
    tol: float = 1e-10,
    brute_force_max_n: int = BRUTE_FORCE_MAX_N,
    max_iter: int | None = None,
) -> tuple[float, np.ndarray]:
    """Exact minimum of a submodular set function on ``2^[n]``.

    Args:
        fn: ``fn(mask) -> float`` for a boolean mask of shape ``(n,)``, or, with
            ``vectorized=True``, ``fn(masks) -> values`` for a ``(k, n)`` boolean
            array (much faster).
        n: Ground-set size (``>= 1``).
        vectorized: Whether ``fn`` takes a batch of masks.
        method: ``"auto"`` (brute force for ``n <= brute_force_max_n``, else
            min-norm point), ``"brute"`` or ``"min_norm"``.
        tol: Relative tolerance of the min-norm-point algorithm (see
            :func:`fujishige_wolfe`); ignored by brute force, which is exact.
        brute_force_max_n: Threshold of ``"auto"``.
        max_iter: Major-cycle cap of the min-norm-point algorithm.

    Returns:
        ``(min_value, argmin_mask)`` with ``argmin_mask`` a boolean array of shape ``(n,)``
        and ``min_value == fn(argmin_mask)``.

    Raises:
        ValueError: On a bad ``n``, ``method`` or ``tol``.
    """
    n = check_int("n", n, 1)
    if method not in ("auto", "brute", "min_norm"):
        raise ValueError(f"method={method!r}, expected 'auto', 'brute' or 'min_norm'")
    check_real("tol", tol, 0.0)
    batch = _as_batch(fn, n, vectorized)
    if method == "brute" or (method == "auto" and n <= brute_force_max_n):
        return brute_force_minimize(batch, n)
    res = fujishige_wolfe(batch, n, tol=tol, max_iter=max_iter)
    return res.value, res.mask
