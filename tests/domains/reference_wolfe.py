"""The previous Wolfe implementation (a least-squares solve per minor cycle), kept as
the reference the factored corral of :mod:`dp_online_envs.domains.wolfe` is tested
against. Test-only code: nothing in the package imports it."""

from __future__ import annotations

import math

import numpy as np

from dp_online_envs.domains.projection import LMO, FWResult, _decide


def _affine_minimizer(q: np.ndarray) -> np.ndarray:
    """Weights alpha (summing to 1) of the min-norm point of the affine hull of the rows
    of q: ``alpha = (1 - sum beta, beta)`` with ``beta = argmin ||q_0 + (q_i - q_0) beta||``
    (least squares, well defined even if the rows are affinely dependent, refined once)."""
    if len(q) == 1:
        return np.ones(1)
    diffs = (q[1:] - q[0]).T
    beta = np.linalg.lstsq(diffs, -q[0], rcond=None)[0]
    # One step of iterative refinement on the residual z = q_0 + diffs beta.
    beta += np.linalg.lstsq(diffs, -(q[0] + diffs @ beta), rcond=None)[0]
    return np.concatenate([[1.0 - beta.sum()], beta])


def run_wolfe_lstsq(
    oracle: LMO,
    x: np.ndarray,
    tol: float,
    max_iter: int,
    x0: np.ndarray | None,
    decide_atol: float | None,
) -> tuple[FWResult, bool | None]:
    """Wolfe's minimum-norm-point algorithm on ``P - x`` (so the min-norm point is
    ``proj(x) - x``). Iterations count major cycles (oracle calls)."""
    start = np.asarray(oracle(-x) if x0 is None else x0, dtype=np.float64)
    atoms = [start - x]  # translated vertices q = v - x
    keys = [start.tobytes()]
    lam = np.ones(1)
    z = atoms[0].copy()  # z = y - x, the gradient at y
    gap, decision, it = math.inf, None, 0
    for it in range(1, max_iter + 1):  # noqa: B007  (the count is read after the loop)
        v = np.asarray(oracle(z), dtype=np.float64)
        gap = float(z @ z - z @ (v - x))
        decision = _decide(z, gap, decide_atol)
        if gap <= tol or decision is not None:
            break
        if v.tobytes() in keys:
            break  # the oracle vertex is already active: no progress in floating point
        atoms.append(v - x)
        keys.append(v.tobytes())
        lam = np.append(lam, 0.0)
        for _ in range(len(atoms)):  # minor cycles: each one drops at least one vertex
            alpha = _affine_minimizer(np.array(atoms))
            if np.all(alpha > 1e-14):
                lam = alpha / alpha.sum()
                break
            # Move from lam towards alpha until a weight hits 0, and drop it.
            neg = np.flatnonzero(alpha <= 1e-14)
            denom = lam[neg] - alpha[neg]
            ratios = np.where(denom > 0, lam[neg] / np.where(denom > 0, denom, 1.0), 0.0)
            theta = min(max(float(np.min(ratios)), 0.0), 1.0)
            lam = theta * alpha + (1.0 - theta) * lam
            lam[neg[int(np.argmin(ratios))]] = 0.0
            keep = np.flatnonzero(lam > 1e-14)
            atoms = [atoms[i] for i in keep]
            keys = [keys[i] for i in keep]
            lam = lam[keep] / lam[keep].sum()
        previous = z
        z = lam @ np.array(atoms)
        if np.array_equal(z, previous):
            break  # stalled at floating-point precision
    result = FWResult(
        point=z + x,
        gap=float(gap),
        iterations=it,
        converged=bool(gap <= tol),
        atoms=np.array(atoms) + x,
        weights=lam.copy(),
    )
    return result, decision
