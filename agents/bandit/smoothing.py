r"""Geometry shared by the one-point (bandit convex) learners.

Used by :mod:`agents.bandit.bandit_pftal`, :mod:`agents.bandit.fkm`,
:mod:`agents.bandit.private_projection_free` and :mod:`agents.bandit.garber_kretzu`. The
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

Scale-aware radius of the blocked learners (:func:`blocked_parameters`): ``zeta``
minimizes the explicit regret bound of Ene-Nguyen-Vladu's proof of Lemma 3.1 (with
App. D's shrink, :func:`blocked_regret_bound`) for the problem's actual ``T, n, D, L,
B, r`` (and the counter's noise), instead of Alg. 1's ``D n^{1/2} / T^{1/4}``, which
ignores ``r`` and ``B``; it is the same formula when ``B = L D`` and the shrink term
is dropped.

Derivations (hull, shrink, clamp, sensitivity, scale-aware radius, Frank-Wolfe step):
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
    "batch_gradient_bound",
    "batch_sizes",
    "blocked_parameters",
    "blocked_regret_bound",
    "clamp_radius",
    "estimate_sensitivity",
    "fw_projection_step",
    "require_points",
    "resolve_noise",
    "shrink_coefficient",
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

    def unshrink(self, w: np.ndarray) -> np.ndarray:
        """``c + (w - c) / (1 - xi)``: the point of ``C`` that the shrink maps to ``w``
        (read-only; for ``w`` in ``C_xi`` it lies in ``C``, up to rounding)."""
        c = self.center
        return c + (np.asarray(w, dtype=np.float64) - c) / self.scale


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


def batch_sizes(horizon: int) -> tuple[int, int]:
    """``(T_batch, T_round)`` of Ene-Nguyen-Vladu Alg. 1 line 1 in integers:
    ``T_batch = round(sqrt T)`` clamped to ``[1, T]``, ``T_round = ceil(T / T_batch)``."""
    T = int(horizon)
    batch = min(T, max(1, round(math.sqrt(T))))
    return batch, -(-T // batch)


def shrink_coefficient(diameter: float, radius: float) -> float:
    """``2 + D / r``: the regret per round and per unit of ``zeta L`` of smoothing
    (Ene-Nguyen-Vladu (C.1)), batching ((C.3)) and the App. D shrink (``D / r``)."""
    return 2.0 + diameter / radius


def batch_gradient_bound(batch: int, n: int, bound: float, lipschitz: float,
                         zeta: float) -> float:
    """``kappa = K^{1/2} n B / zeta + K L`` (Ene-Nguyen-Vladu Lemma C.2 with ``B`` for
    ``L D``; the proof of Lemma 3.1 uses this sum): ``E||g_R||^2 <= kappa^2`` for the
    sum ``g_R`` of ``K`` one-point estimates with ``|f| <= B``."""
    return math.sqrt(batch) * n * bound / zeta + batch * lipschitz


def blocked_regret_bound(zeta: float, horizon: int, n: int, diameter: float,
                         lipschitz: float, bound: float, radius: float, *,
                         oco_constant: float, noise_norm: float = 0.0) -> float:
    """The explicit regret bound whose minimizer is the blocked learners' radius
    (``docs/algorithms/one-point-estimates.md``, "The scale-aware radius"):

        Phi(zeta) = a D M^{1/2} kappa(zeta) + M^{1/2} D nu / zeta + T L (2 + D/r) zeta,

    ``K, M = batch_sizes(T)``, ``kappa`` of :func:`batch_gradient_bound`, after
    substituting ``eta = D / (kappa M^{1/2})`` (NoisyOCO, Lemma 4.1).

    Args:
        zeta: The smoothing radius ``> 0``.
        horizon, n, diameter, lipschitz, bound, radius: ``T, n, D, L, B, r``.
        oco_constant: ``a``, from the learner's own proof (Garber-Kretzu ``1 + sqrt 3``,
            Ene-Nguyen-Vladu ``2 + sqrt(20 M / K)``).
        noise_norm: ``nu``: ``nu / zeta`` bounds the expected norm of the noise of one
            release of the learner's counter (0 without noise).

    Returns:
        ``Phi(zeta)``.
    """
    batch, rounds = batch_sizes(horizon)
    kappa = batch_gradient_bound(batch, n, bound, lipschitz, zeta)
    return (oco_constant * diameter * math.sqrt(rounds) * kappa
            + math.sqrt(rounds) * diameter * noise_norm / zeta
            + int(horizon) * lipschitz * shrink_coefficient(diameter, radius) * zeta)


@dataclass(frozen=True)
class BlockedParameters:
    """Parameters of the blocked projection-free schemes (Ene-Nguyen-Vladu Alg. 1,
    line 1, scale-aware; Garber-Kretzu's blocking).

    Attributes:
        batch: ``T_batch = K``, rounds per batch (block).
        rounds: ``T_round = M = ceil(T / K)``, number of batches (the last may be short).
        eta: ``D / (kappa M^{1/2})``, ``kappa = K^{1/2} n B / zeta + K L``.
        zeta_formula: the minimizer of :func:`blocked_regret_bound` before the clamp.
        zeta: smoothing radius used, ``min(zeta_formula, MAX_SHRINK r)``.
        alpha: shrink factor ``zeta / r``.
        zeta_clamped: whether the clamp was active.
        zeta_paper: Alg. 1's ``D n^{1/2} / T^{1/4}`` (for reference; not used).
    """

    batch: int
    rounds: int
    eta: float
    zeta_formula: float
    zeta: float
    alpha: float
    zeta_clamped: bool
    zeta_paper: float


def blocked_parameters(horizon: int, n: int, diameter: float, lipschitz: float,
                       bound: float, radius: float, *, oco_constant: float,
                       noise_norm: float = 0.0) -> BlockedParameters:
    """Scale-aware Ene-Nguyen-Vladu Alg. 1 line 1 (with App. D's shrinking).

    ``K, M = batch_sizes(T)``; ``zeta`` minimizes :func:`blocked_regret_bound` (its
    ``1/zeta`` and ``zeta`` terms balance):

        zeta* = sqrt((a D (M K)^{1/2} n B + M^{1/2} D nu) / (T L (2 + D/r))),

    then the clamp ``zeta = min(zeta*, MAX_SHRINK r)``; ``eta = D / (kappa(zeta) M^{1/2})``
    with ``kappa = K^{1/2} n B / zeta + K L``; ``alpha = zeta / r``. Rate: with ``zeta*``,
    ``Phi = O(T^{3/4} (a D n B L (2 + D/r))^{1/2})`` (``nu = 0``). With ``B = L D``,
    ``a = 1``, ``nu = 0``, ``M K = T`` and the ``T L zeta`` term alone (no smoothing or
    shrink constants) it is Alg. 1's ``zeta = D n^{1/2} / T^{1/4}``.

    Args:
        horizon, n, diameter, lipschitz, bound, radius: ``T, n, D, L, B, r``.
        oco_constant, noise_norm: ``a`` and ``nu`` of :func:`blocked_regret_bound`.
    """
    T = int(horizon)
    batch, rounds = batch_sizes(T)
    num = (oco_constant * diameter * math.sqrt(rounds * batch) * n * bound
           + math.sqrt(rounds) * diameter * noise_norm)
    zeta_formula = math.sqrt(num / (T * lipschitz * shrink_coefficient(diameter, radius)))
    zeta, clamped = clamp_radius(zeta_formula, radius)
    kappa = batch_gradient_bound(batch, n, bound, lipschitz, zeta)
    eta = diameter / (kappa * math.sqrt(rounds))
    return BlockedParameters(batch, rounds, eta, zeta_formula, zeta, zeta / radius, clamped,
                             diameter * math.sqrt(n) / T**0.25)


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
    def _oco_constant(self) -> float:
        """``a`` of :func:`blocked_regret_bound`, from the learner's own regret proof."""
        raise NotImplementedError

    def _noise_norm(self) -> float:
        """``nu``: expected norm of a release's noise times ``zeta`` (0: no noise)."""
        return 0.0

    def _setup_geometry(self) -> None:
        p = self.problem
        require_points(self.name, p.domain)
        if not p.loss.convex:
            raise ValueError(f"{self.name} needs convex losses, got {p.loss!r}")
        self.geometry = SmoothingGeometry.of(p.domain)
        #: Alg. 1 line 1 parameters (with the clamp of ``zeta``).
        self.params = blocked_parameters(p.horizon, self.geometry.rank, p.diameter,
                                         p.lipschitz, p.bound, self.geometry.radius,
                                         oco_constant=self._oco_constant(),
                                         noise_norm=self._noise_norm())
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

    @property
    def center_point(self) -> np.ndarray:
        """``(1 - alpha) y + alpha c``: the point the coming round perturbs (``y`` the
        batch's point, shrunk toward the inner ball's center)."""
        return self.geometry.shrink(self._y, self.alpha)

    @property
    def unshrunk_point(self) -> np.ndarray:
        """``y``: the batch's point before the shrink (a point of the domain)."""
        return self._y.copy()

    def act(self):
        self._s, u = self.geometry.direction(self._dir_rng)
        return self.geometry.query(self._y, self.alpha, self.zeta, u)

    def _observe(self, feedback) -> bool:
        """Adds the round's estimate to the batch sum; True at the end of a batch."""
        if self._s is None:
            raise RuntimeError(f"{self.name}.update called before act")
        f = float(self.clip_feedback(feedback)[0])
        self._batch_sum += self.geometry.estimate(self._centered(f), self._s, self.zeta)
        self._s = None
        self.t += 1
        self._in_batch += 1
        return self._in_batch == self.batch or self.t == self.problem.horizon

    def _centered(self, f: float) -> float:
        """The value the one-point estimate scales: the feedback ``f`` itself."""
        return f

    def _take_batch(self) -> np.ndarray:
        """The finished batch's sum of estimates (hull coordinates); starts a new batch."""
        g, self._batch_sum = self._batch_sum, np.zeros(self.geometry.rank)
        self._in_batch = 0
        return g
