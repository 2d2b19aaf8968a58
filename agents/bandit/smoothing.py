r"""Geometry shared by the one-point (bandit convex) learners.

Used by :mod:`agents.bandit.bandit_pftal`, :mod:`agents.bandit.fkm`,
:mod:`agents.bandit.projection_free` and :mod:`agents.bandit.garber_kretzu`. The
one-point estimate of Flaxman, Kalai & McMahan (SODA 2005, Lemma 1; Smith-Thakurta
2013 Sec. 3; Ene-Nguyen-Vladu 2021 Lemma 2.2), in the domain's affine hull:

    g = (k / zeta) f(y + zeta u) u,   u = basis @ s,  s uniform on the sphere of R^k,
    E_u[g] = grad f_hat(y),           f_hat(y) = E_{v ~ unit ball} f(y + zeta v),

``k`` the hull dimension; the learners keep ``g`` in hull coordinates,
``(k / zeta) f s``. With ``c, r = domain.inner_ball()`` and ``alpha = zeta / r`` the
played point ``(1 - alpha) y + alpha c + zeta u`` is in the domain for every ``y`` in
it. Clamp: ``zeta <= MAX_SHRINK r`` (``MAX_SHRINK = 1/2``), recorded as
``zeta_clamped``. Replace-one sensitivity of one estimate with ``|f| <= B``:
``2 k B / zeta`` (l2) and ``2 k^{3/2} B / zeta`` (l1).

Derivations (hull, shrink, clamp, sensitivity, Frank-Wolfe step):
``docs/algorithms/one-point-estimates.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from agents.base import Agent
from agents.privacy.noise import default_noise
from dp_online_envs.domains.base import Domain
from dp_online_envs.validation import check_gaussian_delta, check_real

__all__ = [
    "MAX_SHRINK",
    "BlockedOnePointAgent",
    "BlockedParameters",
    "ShrunkSet",
    "SmoothingGeometry",
    "blocked_parameters",
    "clamp_radius",
    "estimate_sensitivity",
    "fw_projection_step",
    "require_points",
    "resolve_noise",
    "sphere_direction",
]

#: Largest shrink factor ``alpha = zeta / r`` the learners accept (clamp, see the module docstring).
MAX_SHRINK = 0.5


def require_points(name: str, domain: Domain) -> None:
    """Refuse domains whose actions are not points of a convex set (subsets, arms).

    Raises:
        ValueError: For non-Box action spaces.
    """
    if not isinstance(domain.action_space, gym.spaces.Box):
        raise ValueError(f"{name} plays points of a convex set (Box actions); {domain!r} "
                         f"has {domain.action_space}")


def sphere_direction(rng: np.random.Generator, k: int) -> np.ndarray:
    """A uniform point of the unit sphere of ``R^k`` (normalised Gaussian)."""
    while True:
        s = rng.standard_normal(k)
        nrm = float(np.linalg.norm(s))
        if nrm > 1e-12:
            return s / nrm


def clamp_radius(zeta: float, r: float) -> tuple[float, bool]:
    """``(min(zeta, MAX_SHRINK r), clamped?)``: the smoothing radius actually used."""
    cap = MAX_SHRINK * r
    if zeta > cap:
        return cap, True
    return float(zeta), False


def estimate_sensitivity(k: int, bound: float, zeta: float, ord: int) -> float:
    """Replace-one sensitivity of a one-point estimate ``(k/zeta) f s`` with
    ``|f| <= B`` and ``||s||_2 = 1``: ``2kB/zeta`` in l2 (``ord=2``), times
    ``sqrt(k)`` in l1 (``ord=1``). See the module docstring.

    Raises:
        ValueError: For ``ord`` other than 1 or 2.
    """
    l2 = 2.0 * k * bound / zeta
    if ord == 2:
        return l2
    if ord == 1:
        return math.sqrt(k) * l2
    raise ValueError(f"ord={ord!r}, expected 1 (Laplace) or 2 (Gaussian)")


def resolve_noise(name: str, noise: str | None, delta: float) -> str:
    """The noise kind of a private bandit learner: ``"laplace"`` (pure epsilon-DP) or
    ``"gaussian"`` ((epsilon, delta)-DP). Default: Laplace when ``delta = 0``.

    Raises:
        ValueError: On an unknown kind, or Gaussian noise with ``delta = 0``.
    """
    if noise is None:
        noise = default_noise(delta)
    if noise not in ("laplace", "gaussian"):
        raise ValueError(f"{name}: noise={noise!r}, expected 'laplace' or 'gaussian'")
    if noise == "gaussian":
        check_gaussian_delta(delta, hint=f"{name}: noise='gaussian' needs delta > 0")
    return noise


@dataclass(frozen=True)
class SmoothingGeometry:
    """Inner ball and affine hull of a domain, for one-point estimates in the hull.

    Attributes:
        center: ``c``, center of the inner ball (a point of the domain).
        radius: ``r``, its radius relative to the hull.
        basis: ``(dim, k)`` orthonormal basis of the hull's directions.
    """

    center: np.ndarray
    radius: float
    basis: np.ndarray

    @classmethod
    def of(cls, domain: Domain) -> SmoothingGeometry:
        """The geometry of ``domain``.

        Raises:
            ValueError: If the hull is a point (``k = 0``) or the inner radius is not > 0.
        """
        center, radius = domain.inner_ball()
        basis = np.asarray(domain.affine_hull.basis, dtype=np.float64)
        if basis.ndim != 2 or basis.shape[1] < 1:
            raise ValueError(f"{domain!r} is a single point: nothing to smooth over")
        if not (math.isfinite(radius) and radius > 0):
            raise ValueError(f"{domain!r} has inner radius {radius!r}; one-point "
                             f"estimates need a ball inside the domain")
        return cls(np.array(center, dtype=np.float64), float(radius), basis)

    @property
    def rank(self) -> int:
        """``k``, the dimension of the hull (the ``n`` / ``p`` / ``d`` of the papers)."""
        return int(self.basis.shape[1])

    def direction(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``(s, u)``: ``s`` uniform on the unit sphere of ``R^k``, ``u = basis @ s``."""
        s = sphere_direction(rng, self.rank)
        return s, self.basis @ s

    def shrink(self, y: np.ndarray, alpha: float) -> np.ndarray:
        """``(1 - alpha) y + alpha c``."""
        return (1.0 - alpha) * np.asarray(y, dtype=np.float64) + alpha * self.center

    def query(self, y: np.ndarray, alpha: float, zeta: float, u: np.ndarray) -> np.ndarray:
        """The played point ``(1 - alpha) y + alpha c + zeta u`` (in the domain when
        ``y`` is and ``zeta <= alpha r``; module docstring)."""
        return self.shrink(y, alpha) + zeta * u

    def estimate(self, value: float, s: np.ndarray, zeta: float) -> np.ndarray:
        """The one-point estimate in hull coordinates, ``(k / zeta) f s``."""
        return (self.rank / zeta) * float(value) * s

    def lift(self, g: np.ndarray) -> np.ndarray:
        """Hull coordinates -> ambient vector, ``basis @ g``."""
        return self.basis @ g

    def outer_radius(self, domain: Domain) -> float:
        """``R = sup_{x in D} ||x - c||``: exact from the vertices when the domain lists
        them, else ``min(diameter, sup ||x|| + ||c||)`` (an upper bound)."""
        verts = domain.vertices()
        if verts is not None and len(verts):
            return float(np.max(np.linalg.norm(np.asarray(verts) - self.center, axis=1)))
        return float(min(domain.diameter,
                         domain.norm_bound(2) + float(np.linalg.norm(self.center))))


class ShrunkSet:
    """``C_xi = c + (1 - xi)(C - c)`` with its Euclidean projection through
    ``domain.project``: ``Proj(z) = c + (1 - xi)(Proj_C(c + (z - c)/(1 - xi)) - c)``."""

    def __init__(self, domain: Domain, center: np.ndarray, xi: float) -> None:
        check_real("xi", xi, 0.0, 1.0, high_inclusive=False)
        self.domain, self.center, self.scale = domain, np.asarray(center, float), 1.0 - xi

    def project(self, z: np.ndarray) -> np.ndarray:
        c, s = self.center, self.scale
        return c + s * (self.domain.project(c + (np.asarray(z, float) - c) / s) - c)


def fw_projection_step(domain: Domain, x: np.ndarray,
                       target: np.ndarray) -> tuple[np.ndarray, float]:
    """One Frank-Wolfe step on ``q(x) = ||x - target||^2 / 2`` over the domain.

    ``v = domain.linear_minimizer(x - target)``; the Frank-Wolfe gap
    ``g = <x - target, x - v> >= q(x) - min q``; the step ``x + gamma (v - x)`` with the
    exact line search ``gamma = min(1, g / ||v - x||^2)``. The new point is a convex
    combination of ``x`` and a vertex: feasible whenever ``x`` is, with no projection.

    Returns:
        ``(new x, gap at the old x)``.
    """
    grad = x - target
    v = np.asarray(domain.linear_minimizer(grad), dtype=np.float64)
    d = v - x
    gap = -float(grad @ d)
    dd = float(d @ d)
    if gap <= 0.0 or dd <= 0.0:
        return x, max(gap, 0.0)
    gamma = min(1.0, gap / dd)
    return x + gamma * d, gap


@dataclass(frozen=True)
class BlockedParameters:
    """Parameters of the blocked projection-free schemes (Ene-Nguyen-Vladu Alg. 1,
    line 1; Garber-Kretzu's blocking).

    Attributes:
        batch: ``T_batch``, rounds per batch (block).
        rounds: ``T_round = ceil(T / T_batch)``, number of batches (the last may be short).
        eta: ``D / (T^{3/4} n^{1/2} L)``.
        zeta_formula: ``D n^{1/2} / T^{1/4}`` before the clamp.
        zeta: smoothing radius used, ``min(zeta_formula, MAX_SHRINK r)``.
        alpha: shrink factor ``zeta / r``.
        zeta_clamped: whether the clamp was active.
    """

    batch: int
    rounds: int
    eta: float
    zeta_formula: float
    zeta: float
    alpha: float
    zeta_clamped: bool


def blocked_parameters(horizon: int, n: int, diameter: float, lipschitz: float,
                       radius: float) -> BlockedParameters:
    """Ene-Nguyen-Vladu, Alg. 1 line 1 (with App. D's shrinking):

    ``T_round = T^{1/2}``, ``T_batch = T / T_round``, ``eta = D / (T^{3/4} n^{1/2} L)``,
    ``zeta = D n^{1/2} / T^{1/4}``, ``alpha = zeta / r``.

    Integer batches: ``T_batch = round(sqrt(T))`` clamped to ``[1, T]``,
    ``T_round = ceil(T / T_batch)``; ``zeta`` clamped to ``MAX_SHRINK r``.
    """
    T = int(horizon)
    batch = min(T, max(1, round(math.sqrt(T))))
    rounds = -(-T // batch)
    eta = diameter / (T**0.75 * math.sqrt(n) * lipschitz)
    zeta_formula = diameter * math.sqrt(n) / T**0.25
    zeta, clamped = clamp_radius(zeta_formula, radius)
    return BlockedParameters(batch, rounds, eta, zeta_formula, zeta, zeta / radius, clamped)


class BlockedOnePointAgent(Agent):
    """Shared state of the blocked one-point learners (Ene-Nguyen-Vladu, Garber-Kretzu):
    batches, smoothing directions in the hull, the App. D shrink, the batch sum of the
    one-point estimates (hull coordinates) and the count of linear-oracle calls.

    Subclasses call :meth:`_setup_geometry` in ``setup`` and :meth:`_reset_geometry` in
    ``reset``; their ``update`` calls :meth:`_observe` (True at the end of a batch) and
    sets ``self._y``, the point played (perturbed) during the next batch.
    """

    feedback = "bandit"
    requires = ("lipschitz", "bound", "diameter")

    def _setup_geometry(self) -> None:
        p = self.problem
        require_points(self.name, p.domain)
        if not p.loss.convex:
            raise ValueError(f"{self.name} needs convex losses, got {p.loss!r}")
        self.geometry = SmoothingGeometry.of(p.domain)
        #: Alg. 1 line 1 parameters (with the clamp of ``zeta``).
        self.params = blocked_parameters(p.horizon, self.geometry.rank, p.diameter,
                                         p.lipschitz, self.geometry.radius)
        self.batch, self.rounds = self.params.batch, self.params.rounds
        self.eta, self.zeta, self.alpha = self.params.eta, self.params.zeta, self.params.alpha

    def _reset_geometry(self, dir_rng: np.random.Generator) -> None:
        self._dir_rng = dir_rng
        self._y = self.geometry.center.copy()  # the point played (perturbed) this batch
        self._batch_sum = np.zeros(self.geometry.rank)
        self._in_batch = 0
        self._s = None
        #: Calls to ``domain.linear_minimizer`` so far in this game.
        self.lmo_calls = 0

    def act(self):
        self._s, u = self.geometry.direction(self._dir_rng)
        return self.geometry.query(self._y, self.alpha, self.zeta, u)

    def _observe(self, feedback) -> bool:
        """Adds the round's estimate to the batch sum; True at the end of a batch."""
        if self._s is None:
            raise RuntimeError(f"{self.name}.update called before act")
        f = float(self.clip_feedback(feedback)[0])
        self._batch_sum += self.geometry.estimate(f, self._s, self.zeta)
        self._s = None
        self.t += 1
        self._in_batch += 1
        return self._in_batch == self.batch or self.t == self.problem.horizon

    def _take_batch(self) -> np.ndarray:
        """The finished batch's sum of estimates (hull coordinates); starts a new batch."""
        g, self._batch_sum = self._batch_sum, np.zeros(self.geometry.rank)
        self._in_batch = 0
        return g
