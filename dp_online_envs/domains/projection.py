"""Euclidean projection onto a polytope known only through its linear oracle.

For ``P = conv(V)`` given by a linear minimization oracle (LMO) ``c -> argmin_{v in P}
<c, v>``, the projection of ``x`` solves

    min_{y in P} f(y),    f(y) = 0.5 ||y - x||^2,    grad f(y) = y - x.

Three Frank-Wolfe variants keep ``y`` as a convex combination of an active set of
vertices, so every iterate lies in P (up to floating-point rounding):

* ``"wolfe"`` (default): Wolfe's minimum-norm-point algorithm (Wolfe 1976), the
  fully-corrective variant: after adding the Frank-Wolfe vertex it re-optimizes over
  the affine hull of the active set, dropping vertices to stay in their convex hull.
  It terminates finitely in exact arithmetic and, on small polytopes, typically
  reaches gaps near machine precision in a few dozen oracle calls. The implementation
  (a Cholesky factor of the active set's Gram matrix, updated on insertion and
  deletion) is :mod:`~dp_online_envs.domains.wolfe`, shared with the convex
  comparator's Newton steps.
* ``"pairwise"`` and ``"away"``: pairwise and away-step Frank-Wolfe with exact line
  search (Lacoste-Julien and Jaggi, 2015); linear convergence on polytopes, but with a
  constant (the pyramidal width) that can be tiny, e.g. on base polytopes with many
  nearly coincident vertices.

Stopping rule and guarantee. With ``s = LMO(y - x)``, the Frank-Wolfe gap

    gap(y) = <y - x, y - s> = max_{v in P} <x - y, v - y>

bounds the suboptimality: ``f(y) - f(y*) <= gap``. Since f is 1-strongly convex and y*
is optimal, ``0.5 ||y - y*||^2 <= f(y) - f(y*)``, hence

    ||y - y*|| <= sqrt(2 gap),    and    <x - y, v - y> <= gap  for every v in P.

We stop once ``gap <= tol`` (absolute). The returned point is thus a
``tol``-approximate solution of the variational inequality characterizing the
projection, and within ``sqrt(2 tol)`` of it (usually much closer).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dp_online_envs.domains.wolfe import wolfe_minimize
from dp_online_envs.validation import check_real

#: A linear minimization oracle: cost vector -> a minimizing vertex.
LMO = Callable[[np.ndarray], np.ndarray]

#: Default absolute tolerance on the Frank-Wolfe gap of the functions below.
DEFAULT_TOL = 1e-8
#: The (tighter) gap tolerance the domains' ``project`` methods use.
PROJECTION_TOL = 1e-10
#: Default iteration cap.
DEFAULT_MAX_ITER = 20_000
_VARIANTS = ("wolfe", "pairwise", "away")


@dataclass(frozen=True)
class FWResult:
    """Outcome of a Frank-Wolfe projection.

    Attributes:
        point: The final iterate y (a convex combination of ``atoms``).
        gap: Its Frank-Wolfe gap ``max_{v in P} <x - y, v - y>`` (``>= f(y) - f(y*)``).
        iterations: Number of iterations run.
        converged: Whether ``gap <= tol`` was reached within ``max_iter``.
        atoms: The active vertices, one per row.
        weights: Their convex weights (positive, summing to 1).
    """

    point: np.ndarray
    gap: float
    iterations: int
    converged: bool
    atoms: np.ndarray
    weights: np.ndarray


class _ActiveSet:
    """Vertices with positive convex weights, stored in a growable array."""

    def __init__(self, dim: int) -> None:
        self.atoms = np.empty((16, dim))
        self.weights = np.empty(16)
        self.keys: list[bytes] = []
        self.index: dict[bytes, int] = {}

    @property
    def size(self) -> int:
        return len(self.keys)

    def add(self, v: np.ndarray, w: float) -> int:
        key = v.tobytes()
        i = self.index.get(key)
        if i is not None:
            self.weights[i] += w
            return i
        i = self.size
        if i == len(self.weights):
            self.atoms = np.concatenate([self.atoms, np.empty_like(self.atoms)])
            self.weights = np.concatenate([self.weights, np.empty_like(self.weights)])
        self.atoms[i] = v
        self.weights[i] = w
        self.keys.append(key)
        self.index[key] = i
        return i

    def remove(self, i: int) -> None:
        last = self.size - 1
        key = self.keys[i]
        if i != last:
            self.atoms[i] = self.atoms[last]
            self.weights[i] = self.weights[last]
            self.keys[i] = self.keys[last]
            self.index[self.keys[i]] = i
        self.keys.pop()
        del self.index[key]

    def reset(self, v: np.ndarray) -> None:
        self.keys.clear()
        self.index.clear()
        self.add(v, 1.0)

    def point(self) -> np.ndarray:
        m = self.size
        w = self.weights[:m] / self.weights[:m].sum()
        self.weights[:m] = w
        return w @ self.atoms[:m]


def _as_lmo(lmo) -> LMO:
    """Accept an LMO callable or any object with a ``linear_minimizer`` method."""
    method = getattr(lmo, "linear_minimizer", None)
    return method if callable(method) else lmo


def _run(
    lmo,
    x: np.ndarray,
    tol: float,
    max_iter: int,
    x0: np.ndarray | None,
    variant: str,
    decide_atol: float | None = None,
) -> tuple[FWResult, bool | None]:
    """The Frank-Wolfe loop shared by projection and membership.

    With ``decide_atol`` set, also stops as soon as membership of ``x`` is certified:
    True when ``||y - x|| <= decide_atol``, False when the lower bound
    ``dist(x, P)^2 >= ||y - x||^2 - 2 gap`` exceeds ``decide_atol^2``.
    """
    if variant not in _VARIANTS:
        raise ValueError(f"variant={variant!r}, expected one of {_VARIANTS}")
    check_real("tol", tol, 0.0, low_inclusive=False)
    oracle = _as_lmo(lmo)
    x = np.asarray(x, dtype=np.float64)
    if variant == "wolfe":
        return _run_wolfe(oracle, x, tol, max_iter, x0, decide_atol)
    start = oracle(-x) if x0 is None else x0
    active = _ActiveSet(x.size)
    active.add(np.asarray(start, dtype=np.float64).copy(), 1.0)
    y = active.atoms[0].copy()
    gap, decision, it, capped = math.inf, None, 0, max_iter >= 1
    for it in range(1, max_iter + 1):
        g = y - x
        s = np.asarray(oracle(g), dtype=np.float64)
        gy = float(g @ y)
        gap = gy - float(g @ s)
        decision = _decide(g, gap, decide_atol)
        if gap <= tol or decision is not None:
            capped = False
            break
        m = active.size
        scores = active.atoms[:m] @ g
        j = int(np.argmax(scores))
        away_gap = float(scores[j]) - gy
        v, wj = active.atoms[j].copy(), float(active.weights[j])
        if variant == "pairwise":
            d, gmax, step = s - v, wj, "pair"
        elif gap >= away_gap or m == 1:
            d, gmax, step = s - y, 1.0, "fw"
        else:
            d, gmax, step = y - v, wj / (1.0 - wj), "away"
        dd = float(d @ d)
        if dd <= 0.0:
            capped = False
            break
        gamma = min(max(-float(g @ d) / dd, 0.0), gmax)
        if gamma <= 0.0:
            capped = False
            break  # no progress possible in floating point
        drop = gamma >= gmax
        if step == "fw":
            if drop:
                active.reset(s)
            else:
                active.weights[:m] *= 1.0 - gamma
                active.add(s, gamma)
        elif step == "away":
            active.weights[:m] *= 1.0 + gamma
            active.weights[j] -= gamma
            if drop:
                active.remove(j)
        else:
            active.weights[j] -= gamma
            if drop:
                active.remove(j)
            active.add(s, gamma)
        if it % 64 == 0 or drop:
            y = active.point()
        else:
            y = y + gamma * d
    if capped:  # the gap of the returned point, not of the one before the last step
        g = y - x
        gap = float(g @ y) - float(g @ np.asarray(oracle(g), dtype=np.float64))
        decision = _decide(g, gap, decide_atol)
    m = active.size
    result = FWResult(
        point=y,
        gap=float(gap),
        iterations=it,
        converged=bool(gap <= tol),
        atoms=active.atoms[:m].copy(),
        weights=active.weights[:m] / active.weights[:m].sum(),
    )
    return result, decision


def _decide(g: np.ndarray, gap: float, atol: float | None) -> bool | None:
    """Certified membership from an iterate: see :func:`frank_wolfe_contains`."""
    if atol is None:
        return None
    dist2 = float(g @ g)
    if dist2 <= atol**2:
        return True
    if dist2 - 2.0 * max(gap, 0.0) > atol**2:
        return False
    return None


def _run_wolfe(
    oracle: LMO,
    x: np.ndarray,
    tol: float,
    max_iter: int,
    x0: np.ndarray | None,
    decide_atol: float | None,
) -> tuple[FWResult, bool | None]:
    """Wolfe's minimum-norm-point algorithm on ``P - x`` (so the min-norm point is
    ``proj(x) - x``), by :func:`~dp_online_envs.domains.wolfe.wolfe_minimize` with
    ``g = 0`` and ``H = I``. Iterations count major cycles (oracle calls)."""
    start = np.asarray(oracle(-x) if x0 is None else x0, dtype=np.float64)
    decide = None if decide_atol is None else (lambda g, gap: _decide(g, gap, decide_atol))
    res = wolfe_minimize(oracle, x, start, tol=tol, max_iter=max_iter, decide=decide)
    result = FWResult(
        point=res.z + x,
        gap=float(res.gap),
        iterations=res.iterations,
        converged=bool(res.gap <= tol),
        atoms=res.vertices,
        weights=res.weights,
    )
    return result, res.decision


def frank_wolfe_solve(
    lmo,
    x: np.ndarray,
    *,
    tol: float = DEFAULT_TOL,
    max_iter: int = DEFAULT_MAX_ITER,
    x0: np.ndarray | None = None,
    variant: str = "wolfe",
) -> FWResult:
    """Project ``x`` onto ``conv(vertices)`` with Frank-Wolfe; return the full record.

    Args:
        lmo: The linear minimization oracle ``c -> argmin_v <c, v>`` (or a Domain,
            whose ``linear_minimizer`` is used).
        x: The point to project.
        tol: Absolute tolerance on the Frank-Wolfe gap (see the module docstring:
            ``||y - y*|| <= sqrt(2 tol)`` and ``<x - y, v - y> <= tol`` for all v).
        max_iter: Iteration cap. A ``RuntimeWarning`` is issued if the gap is still
            above ``tol`` when it is reached, or when no further progress is possible
            in floating point (gaps below about ``1e-12`` can be out of reach).
        x0: Optional starting point, which must lie in the polytope (e.g. a vertex);
            it is kept as one atom of the active set. Default: ``LMO(-x)``.
        variant: ``"wolfe"`` (default, minimum-norm-point), ``"pairwise"`` or
            ``"away"`` (away-step Frank-Wolfe); see the module docstring.

    Returns:
        An :class:`FWResult`.
    """
    result, _ = _run(lmo, x, tol, max_iter, x0, variant)
    if not result.converged:
        why = ("reached max_iter" if result.iterations >= max_iter
               else "stalled at floating-point precision")
        warnings.warn(
            f"Frank-Wolfe projection {why}: stopped after {result.iterations} iterations "
            f"with gap {result.gap:.3g} > tol {tol:.3g}",
            RuntimeWarning,
            stacklevel=2,
        )
    return result


def frank_wolfe_projection(
    lmo,
    x: np.ndarray,
    *,
    tol: float = DEFAULT_TOL,
    max_iter: int = DEFAULT_MAX_ITER,
    x0: np.ndarray | None = None,
    variant: str = "wolfe",
) -> np.ndarray:
    """Euclidean projection of ``x`` onto ``conv(vertices)`` using only the LMO.

    The result y satisfies ``max_v <x - y, v - y> <= tol`` and
    ``||y - proj(x)|| <= sqrt(2 tol)``; see :func:`frank_wolfe_solve` for the arguments.
    """
    return frank_wolfe_solve(lmo, x, tol=tol, max_iter=max_iter, x0=x0, variant=variant).point


def frank_wolfe_projection_with_gap(
    lmo,
    x: np.ndarray,
    *,
    tol: float = DEFAULT_TOL,
    max_iter: int = DEFAULT_MAX_ITER,
    x0: np.ndarray | None = None,
    variant: str = "wolfe",
) -> tuple[np.ndarray, float]:
    """Like :func:`frank_wolfe_projection`, also returning the final Frank-Wolfe gap."""
    result = frank_wolfe_solve(lmo, x, tol=tol, max_iter=max_iter, x0=x0, variant=variant)
    return result.point, result.gap


def frank_wolfe_contains(lmo, x: np.ndarray, atol: float, *, max_iter: int = 10_000) -> bool:
    """Whether ``dist(x, conv(vertices)) <= atol``, decided with Frank-Wolfe.

    Runs the projection until either ``||y - x|| <= atol`` for an iterate y in the
    polytope (certified True) or the duality lower bound
    ``dist(x, P)^2 >= ||y - x||^2 - 2 gap(y)`` exceeds ``atol^2`` (certified False).
    If neither happens within ``max_iter`` iterations (x within a hair of distance
    ``atol``), the answer is ``||y - x|| <= atol`` for the last iterate, which errs
    only towards False.
    """
    if not atol > 0:
        atol = 1e-15
    result, decision = _run(lmo, x, tol=1e-300, max_iter=max_iter, x0=None,
                            variant="wolfe", decide_atol=atol)
    if decision is not None:
        return decision
    return bool(np.linalg.norm(result.point - np.asarray(x, dtype=np.float64)) <= atol)
