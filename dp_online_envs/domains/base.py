"""The decision-set interface every domain implements.

A domain is a compact convex set D in R^dim (or the ground set 2^[n], embedded as the
vertices of [0,1]^n) with a linear optimization oracle. Learners may read the domain:
the decision set is public, the losses are not.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property

import gymnasium as gym
import numpy as np

#: Largest number of vertices :meth:`Domain.vertices` enumerates before returning None.
MAX_VERTICES = 100_000
#: The instance attribute that marks a read-only view (set by :func:`make_read_only`).
READ_ONLY_FLAG = "_read_only"


def make_read_only(obj: object, what: str) -> None:
    """Mark ``obj`` (a :class:`Domain` or a loss family) read-only: setting or deleting
    any of its attributes then raises ``AttributeError`` (:func:`refuse_write`).

    What :meth:`~dp_online_envs.problem.Problem.public_copy` does to the copies it hands
    a learner. Lazily cached values (``functools.cached_property``) still fill in: they
    write the instance ``__dict__`` directly, not through ``__setattr__``.

    Args:
        obj: The object to mark.
        what: What it is, for the error message (``"decision set"``, ``"loss family"``).
    """
    obj.__dict__[READ_ONLY_FLAG] = what


def refuse_write(obj: object, name: str) -> None:
    """Raise ``AttributeError`` if ``obj`` is a read-only view (:func:`make_read_only`).

    Raises:
        AttributeError: Naming the attribute and saying the game is configured when
            the env is made.
    """
    what = obj.__dict__.get(READ_ONLY_FLAG)
    if what:
        raise AttributeError(
            f"cannot set {type(obj).__name__}.{name}: the {what} a learner receives is a "
            f"read-only view of the env's; a game is configured when the env is made "
            f"(gym.make(id, ...) with other options)")


class ReadOnlyView:
    """A base class whose instances :func:`make_read_only` can mark: setting or deleting
    an attribute of a marked instance raises ``AttributeError`` (:func:`refuse_write`);
    an unmarked one behaves as any object. :class:`Domain` and the loss families are
    such classes."""

    def __setattr__(self, name: str, value: object) -> None:
        refuse_write(self, name)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        refuse_write(self, name)
        super().__delattr__(name)


@dataclass(frozen=True)
class AffineHull:
    """The affine hull ``{point + basis @ u : u in R^k}`` of a domain.

    Attributes:
        point: A point of the domain, shape ``(dim,)``.
        basis: Orthonormal columns spanning the hull's directions, shape ``(dim, k)``.
    """

    point: np.ndarray
    basis: np.ndarray

    @property
    def rank(self) -> int:
        """Dimension k of the hull."""
        return int(self.basis.shape[1])

    def project_direction(self, v: np.ndarray) -> np.ndarray:
        """Orthogonal projection of a direction ``v`` onto the hull's linear part."""
        return self.basis @ (self.basis.T @ v)


class Domain(ReadOnlyView, ABC):
    """A convex decision set with a linear minimization oracle (LMO).

    Subclasses set ``dim`` and implement :meth:`linear_minimizer`, :meth:`contains`,
    :meth:`project`, :attr:`diameter`, :attr:`affine_hull`, :meth:`inner_ball`,
    :meth:`norm_bound` and :attr:`action_space`.

    The copy a learner receives (:meth:`~dp_online_envs.problem.Problem.public_copy`)
    is read-only (:func:`make_read_only`): setting or deleting an attribute raises
    ``AttributeError``.
    """

    #: Ambient dimension of the points of the domain.
    dim: int
    #: Short human-readable name, used in tables and renderings.
    name: str = "domain"

    @abstractmethod
    def linear_minimizer(self, c: np.ndarray) -> np.ndarray:
        """Return a vertex ``v`` of the domain minimizing ``<c, v>``."""

    @abstractmethod
    def contains(self, x: np.ndarray, atol: float = 1e-9) -> bool:
        """Whether ``x`` lies in the domain up to absolute tolerance ``atol``."""

    @abstractmethod
    def project(self, x: np.ndarray) -> np.ndarray:
        """Euclidean projection of ``x`` onto the domain (exact or to a stated tolerance)."""

    @property
    @abstractmethod
    def diameter(self) -> float:
        """``max_{x, y in D} ||x - y||_2`` (or an upper bound where stated)."""

    @property
    @abstractmethod
    def affine_hull(self) -> AffineHull:
        """A point of the domain and an orthonormal basis of its directions."""

    @abstractmethod
    def inner_ball(self) -> tuple[np.ndarray, float]:
        """Center and radius of a ball, relative to the affine hull, inside the domain."""

    @abstractmethod
    def norm_bound(self, p: float) -> float:
        """``sup_{x in D} ||x||_p`` for ``p`` in ``{1, 2, inf}`` (exact or a stated bound)."""

    @property
    @abstractmethod
    def action_space(self) -> gym.Space:
        """The Gymnasium space of the environment's actions on this domain."""

    # ------------------------------------------------------------------ helpers
    def to_point(self, action) -> np.ndarray:
        """Map an environment action to a point of R^dim (identity by default).

        Raises:
            ValueError: If the action has the wrong shape or is not finite.
        """
        x = np.asarray(action, dtype=np.float64)
        if x.shape != (self.dim,):
            raise ValueError(
                f"action has shape {x.shape}, expected ({self.dim},) for {self.name}"
            )
        if not all_finite(x):
            raise ValueError(f"action must be finite, got {x!r}")
        return x

    def distance(self, x: np.ndarray) -> float:
        """Euclidean distance from ``x`` to the domain."""
        return float(np.linalg.norm(x - self.project(x)))

    @cached_property
    def center(self) -> np.ndarray:
        """The center of :meth:`inner_ball`, a point in the relative interior."""
        return self.inner_ball()[0]

    def vertices(self) -> np.ndarray | None:
        """All vertices as rows, for small instances and tests; ``None`` if unavailable."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim})"


# ---------------------------------------------------------------- shared helpers
# ``fast_clip(a, low, high[, out=])`` is ``np.clip`` without its Python wrappers: the
# same ufunc, so the same bits, at a fifth of the cost on a small vector (the env clips
# every round's observation, the loss families a learner's feedback).
try:
    from numpy._core.umath import clip as _clip_ufunc
except ImportError:  # numpy < 2
    from numpy.core.umath import clip as _clip_ufunc
fast_clip = _clip_ufunc


def all_finite(a: np.ndarray) -> bool:
    """Whether every entry of the float64 vector ``a`` is finite.

    The dot product of ``a`` with zeros is 0 when every entry is finite and NaN when
    one is not (``0 * inf`` and ``0 * nan`` are NaN), and it cannot overflow. The action
    (and the feedback) of every round passes here: one dot product costs a third of
    ``np.all(np.isfinite(a))``. Vectors longer than :data:`_ZEROS_UP_TO` are tested
    entry by entry.
    """
    zeros = _ZEROS.get(a.size)
    if zeros is None:
        if a.size > _ZEROS_UP_TO:
            return bool(np.isfinite(a).all())
        zeros = _ZEROS[a.size] = np.zeros(a.size)
        zeros.flags.writeable = False
    return np.dot(a, zeros) == 0.0


#: Zero vectors of :func:`all_finite`, by length (at most :data:`_ZEROS_UP_TO`).
_ZEROS: dict[int, np.ndarray] = {}
_ZEROS_UP_TO = 4096


def finite_vector(x, dim: int) -> np.ndarray | None:
    """``x`` as a float64 vector of shape ``(dim,)``, or ``None`` if it is not one.

    ``contains`` uses this to answer False (rather than raise) on wrong shapes,
    non-numeric or non-finite input.
    """
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if a.shape != (dim,) or not all_finite(a):
        return None
    return a


def check_vector(x, dim: int, what: str = "x") -> np.ndarray:
    """``x`` as a finite float64 vector of shape ``(dim,)``.

    Raises:
        ValueError: If ``x`` has another shape or a non-finite entry.
    """
    a = np.asarray(x, dtype=np.float64)
    if a.shape != (dim,):
        raise ValueError(f"{what} has shape {a.shape}, expected ({dim},)")
    if not all_finite(a):
        raise ValueError(f"{what} must be finite, got {a!r}")
    return a


def check_norm_order(p: float) -> float:
    """Validate the order ``p`` of :meth:`Domain.norm_bound`: one of 1, 2, inf.

    Raises:
        ValueError: For any other ``p``.
    """
    try:
        q = float(p)
    except (TypeError, ValueError):
        q = math.nan
    if q not in (1.0, 2.0, math.inf):
        raise ValueError(f"p={p!r}, expected 1, 2 or inf")
    return q


def norm_of_rows(rows: np.ndarray, p: float) -> np.ndarray:
    """The ``p``-norm of every row of ``rows`` (``p`` in ``{1, 2, inf}``)."""
    return np.linalg.norm(rows, ord=check_norm_order(p), axis=1)


def max_pairwise_distance(points: np.ndarray, chunk: int = 2048) -> float:
    """``max_{i,j} ||points[i] - points[j]||_2``, computed in chunks of rows."""
    pts = np.asarray(points, dtype=np.float64)
    sq = np.einsum("ij,ij->i", pts, pts)
    best = 0.0
    for start in range(0, len(pts), chunk):
        block = pts[start : start + chunk]
        d2 = sq[start : start + chunk, None] + sq[None, :] - 2.0 * block @ pts.T
        best = max(best, float(d2.max()))
    return math.sqrt(max(best, 0.0))


def subset_sums(x: np.ndarray) -> np.ndarray:
    """``x(S) = sum_{i in S} x_i`` for all ``2^n`` subsets S, indexed by bitmask.

    Entry ``m`` is the sum over the set bits of ``m`` (bit i stands for element i).
    """
    sums = np.zeros(1)
    for xi in np.asarray(x, dtype=np.float64):
        sums = np.concatenate([sums, sums + xi])
    return sums


def subset_masks(n: int) -> np.ndarray:
    """The ``(2^n, n)`` boolean matrix whose row ``m`` holds the bits of ``m``."""
    return ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(bool)
