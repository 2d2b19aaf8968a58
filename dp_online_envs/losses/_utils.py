"""Small parameter, projection and sampling helpers shared by the loss families."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np

from dp_online_envs.domains.ball import project_l2_rows
from dp_online_envs.domains.base import all_finite, fast_clip
from dp_online_envs.validation import check_int, check_real


def as_param(theta: object, param_dim: int, name: str) -> np.ndarray:
    """Validate a parameter vector: float64, shape ``(param_dim,)``, all finite.

    Raises:
        ValueError: On a wrong shape or a non-finite entry.
    """
    t = np.asarray(theta, dtype=np.float64)
    if t.shape != (param_dim,):
        raise ValueError(
            f"{name} parameter has shape {t.shape}, expected ({param_dim},)"
        )
    if not all_finite(t):
        raise ValueError(f"{name} parameter must be finite, got {t!r}")
    return t


def project_l2_ball(v: np.ndarray, radius: float = 1.0) -> np.ndarray:
    """Euclidean projection onto ``{u : ||u||_2 <= radius}``: :func:`project_l2_rows` on
    one row (bit-idempotent; the vector learners' clip is the same function on many rows)."""
    return project_l2_rows(np.asarray(v, dtype=np.float64)[None, :], radius)[0]


def project_simplex_capped(v: np.ndarray, total: float = 1.0) -> np.ndarray:
    """Euclidean projection of ``v`` onto ``{u >= 0 : sum(u) = total}`` (sort-based)."""
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - total
    ind = np.arange(1, v.size + 1)
    cond = u - css / ind > 0
    rho = int(ind[cond][-1])
    tau = css[rho - 1] / rho
    return np.maximum(v - tau, 0.0)


def project_l1_ball(v: np.ndarray, radius: float = 1.0) -> np.ndarray:
    """Euclidean projection onto ``{u : ||u||_1 <= radius}`` (Duchi et al., 2008).

    As for :func:`project_l2_ball`, a result whose computed norm rounds above ``radius``
    is moved toward 0 one ulp per coordinate until it is not, so that projecting twice
    gives the same bits as projecting once.
    """
    if float(np.abs(v).sum()) <= radius:
        return v.copy()
    out = np.sign(v) * project_simplex_capped(np.abs(v), radius)
    while float(np.abs(out).sum()) > radius:
        out = np.nextafter(out, 0.0)
    return out


def sample_l2_ball(rng: np.random.Generator, dim: int, radius: float = 1.0) -> np.ndarray:
    """Uniform sample from the l2 ball: Gaussian direction, radius ``r * U^(1/dim)``."""
    g = rng.standard_normal(dim)
    nrm = float(np.linalg.norm(g))
    while nrm == 0.0:  # pragma: no cover - probability zero
        g = rng.standard_normal(dim)
        nrm = float(np.linalg.norm(g))
    return g * (radius * rng.random() ** (1.0 / dim) / nrm)


def sample_l1_ball(rng: np.random.Generator, dim: int, radius: float = 1.0) -> np.ndarray:
    """Uniform sample from the l1 ball.

    With ``E_1..E_{dim+1}`` i.i.d. standard exponentials, ``(E_1..E_dim) / sum_{k<=dim+1} E_k``
    is uniform on ``{u >= 0 : sum u <= 1}`` (the first ``dim`` coordinates of a flat
    Dirichlet on ``dim + 1`` coordinates); independent random signs make it uniform on
    the l1 ball (each orthant is a congruent copy).
    """
    e = rng.exponential(size=dim + 1)
    u = e[:dim] / e.sum()
    signs = rng.choice(np.array([-1.0, 1.0]), size=dim)
    return radius * signs * u


def sup_distance_to_box(domain_norm_bounds: tuple[float, float], radius: float, dim: int) -> float:
    """Upper bound on ``sup_{x in D, a in [-c, c]^dim} ||x - a||_2``.

    ``||x - a||^2 = ||x||^2 - 2<x, a> + ||a||^2 <= ||x||_2^2 + 2c||x||_1 + dim c^2`` with
    equality at ``a = -c sign(x)``, so the sup is at most
    ``sqrt(N_2^2 + 2c N_1 + dim c^2)`` where ``N_p = sup_{x in D} ||x||_p``; exact when a
    single point of D attains both ``N_1`` and ``N_2`` (balls, cubes, simplices, any
    domain whose l2-farthest point also maximizes the l1 norm). Never larger than
    ``N_2 + c sqrt(dim)``, since ``N_1 <= sqrt(dim) N_2``.

    Args:
        domain_norm_bounds: ``(N_1, N_2)``.
        radius: ``c``.
        dim: Dimension.
    """
    n1, n2 = domain_norm_bounds
    n1 = min(float(n1), math.sqrt(dim) * float(n2))
    return math.sqrt(float(n2) ** 2 + 2.0 * radius * n1 + dim * radius**2)


class CenterInBoxParams:
    """Parameter handling shared by the families whose parameter is a center ``a``.

    The parameter set is the box ``[-c, c]^dim`` (``c = self.center_radius``), which is
    also ``param_space`` (``self._space``); sampling is uniform and clipping is the
    Euclidean projection onto the box.
    """

    param_is_box = True

    def _init_center(self, dim: int, center_radius: float) -> None:
        """Checks and sets ``dim``, ``center_radius``, ``param_dim`` and the box.

        Raises:
            ValueError: ``dim < 1`` or ``center_radius < 0`` (named, with the value).
        """
        self.dim = check_int("dim", dim, 1)
        self.center_radius = c = check_real("center_radius", center_radius, 0.0)
        self.param_dim = self.dim
        self._space = gym.spaces.Box(low=-c, high=c, shape=(self.dim,), dtype=np.float64)

    @property
    def param_space(self) -> gym.spaces.Box:
        """``[-c, c]^dim``, exactly the parameter set."""
        return self._space

    def sample_param(self, rng: np.random.Generator) -> np.ndarray:
        """Uniform center in ``[-c, c]^dim``."""
        c = self.center_radius
        return rng.uniform(-c, c, size=self.dim)

    def clip_param(self, theta: np.ndarray) -> np.ndarray:
        """Coordinate-wise clipping to ``[-c, c]`` (the Euclidean projection)."""
        c = self.center_radius
        return fast_clip(as_param(theta, self.param_dim, self.name), -c, c)
