r"""Online Newton Step for exp-concave losses on the simplex (portfolio selection).

* ``ons`` -- :class:`ONS`. Hazan, Agarwal & Kale, "Logarithmic regret algorithms for
  online convex optimization", Machine Learning 69 (2007): Algorithm 2 (Online Newton
  Step), Theorem 2 (regret).

Update (Alg. 2), with ``A_0 = eps I``:

    A_t = A_{t-1} + g_t g_t^T,   y_{t+1} = x_t - (1/gamma) A_t^{-1} g_t,
    x_{t+1} = argmin_{x in K} (y_{t+1} - x)^T A_t (y_{t+1} - x)

(the generalized projection in the ``A_t`` norm), ``g_t = grad f_t(x_t)``, ``x_1`` the
simplex's center (the uniform portfolio).

Where it runs: the simplex ``K`` is not full-dimensional, so the algorithm runs in the
coordinates ``z`` of its affine hull, ``x = c + U z`` (``c`` the center, ``U`` an
orthonormal basis of ``{v : sum v = 0}``, :attr:`Domain.affine_hull`), with the
gradient ``U^T grad f``: Theorem 2 applied to ``K`` as a full-dimensional body of
``R^n``, ``n = k - 1``. Both the Taylor bound of HAK07 Lemma 3 and the regret
telescoping use ``grad f`` only through ``<grad f, x - y>`` with ``x - y`` in the hull,
which ``U^T grad f`` preserves, so ``G`` may be the bound on the hull part of the
gradient (smaller than the full gradient's norm; ``docs/algorithms/ons.md``).

Parameters (Thm. 2, as the theorem sets them):

* ``alpha``: the loss family's exp-concavity (``exp(-alpha f)`` concave on ``K``);
  ``-log <r, x>`` is 1-exp-concave (``exp(-f) = <r, x>`` is linear);
* ``G >= sup ||U^T grad f_t(x)||_2`` over ``K`` and the admissible parameters: the
  family's ``hull_lipschitz(domain)`` if it declares one (log-wealth with relatives in
  ``[r_min, r_max]``: ``(r_max - r_min) sqrt(floor(k/2) ceil(k/2) / k) / r_min``), else
  the problem's Lipschitz constant ``L`` (an upper bound: ``||U^T g|| <= ||g||``);
* ``D``: the diameter (``sqrt 2`` for the simplex);
* ``gamma = (1/2) min(1/(4 G D), alpha)``, ``eps = 1 / (gamma^2 D^2)``.

Regret (Thm. 2, ``T > 4``): ``<= 5 (1/alpha + G D) n log T``.

Guards: the feedback is clipped into the family's parameter set (``clip_feedback``),
which is what makes ``G`` a bound on the gradients; the projection is a small convex
QP in the ``A_t`` norm, solved with scipy's SLSQP (skipped when ``y`` already lies in
``K``) and certified: the returned point is feasible, and :attr:`ONS.projection_gap`
records the largest KKT residual seen.

Not private; the private learner that applies to these (convex, Lipschitz) losses is
``pftal`` (Smith-Thakurta Thm. 11).
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import Agent, register
from dp_online_envs.domains import Simplex

__all__ = ["ONS", "ons_parameters", "project_in_norm"]


def ons_parameters(gradient_bound: float, diameter: float, alpha: float) -> tuple[float, float]:
    """Theorem 2's ``gamma = (1/2) min(1/(4 G D), alpha)`` and ``eps = 1/(gamma^2 D^2)``.

    Args:
        gradient_bound: ``G > 0``.
        diameter: ``D > 0``.
        alpha: The exp-concavity ``alpha > 0``.

    Raises:
        ValueError: If any of them is not finite and positive.
    """
    for name, v in (("gradient_bound", gradient_bound), ("diameter", diameter),
                    ("alpha", alpha)):
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"{name}={v!r}, expected a finite positive number")
    gamma = 0.5 * min(1.0 / (4.0 * gradient_bound * diameter), alpha)
    return gamma, 1.0 / (gamma ** 2 * diameter ** 2)


def project_in_norm(y: np.ndarray, a: np.ndarray, center: np.ndarray, basis: np.ndarray,
                    z0: np.ndarray) -> np.ndarray:
    """``argmin_z (z - y)^T a (z - y)`` subject to ``center + basis @ z >= 0``: the
    generalized projection onto the simplex in hull coordinates.

    Returns ``y`` itself when it is feasible; otherwise scipy's SLSQP from ``z0`` (a
    feasible warm start; also the answer if the solver returns a non-finite point),
    pulled back along the segment to the hull's center if it lies outside, so the
    point is feasible up to one rounding (the agent clips and renormalizes it).
    """
    if np.all(center + basis @ y >= 0.0):
        return y.copy()

    def objective(z: np.ndarray) -> tuple[float, np.ndarray]:
        dz = z - y
        ad = a @ dz
        return float(dz @ ad), 2.0 * ad

    from scipy.optimize import minimize  # here: scipy.optimize takes 0.2 s to import

    res = minimize(objective, z0, jac=True, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda z: center + basis @ z,
                                 "jac": lambda z: basis}],
                   options={"ftol": 1e-15, "maxiter": 200})
    z = res.x if np.all(np.isfinite(res.x)) else z0
    x = center + basis @ z
    neg = x < 0.0
    if np.any(neg):  # shrink toward the center (z = 0) until feasible (up to rounding)
        z = z * float(np.min(center[neg] / (center[neg] - x[neg])))
    return z


@register
class ONS(Agent):
    r"""Online Newton Step (Hazan, Agarwal & Kale 2007, Alg. 2, Thm. 2) on the simplex.

    For alpha-exp-concave losses (portfolio selection's ``-log <r, x>``: alpha = 1):
    regret ``<= 5 (1/alpha + G D) n log T`` with ``n = k - 1`` (the simplex's hull
    dimension), ``gamma = (1/2) min(1/(4 G D), alpha)``, ``eps = 1/(gamma^2 D^2)``.
    Parameters, the hull coordinates and the guards: see the module docstring.

    Attributes (after construction): ``alpha``, ``gradient_bound`` (``G``),
    ``diameter`` (``D``), ``gamma``, ``eps``; after play ``projections`` (how many
    rounds needed the QP) and ``projection_gap`` (largest KKT residual of those).
    """

    name = "ons"
    description = ("Online Newton Step (Hazan-Agarwal-Kale 2007, Alg. 2): log T regret for "
                   "exp-concave losses such as portfolio selection's -log <r, x>")
    paper = ("Hazan, Agarwal & Kale, Logarithmic regret algorithms for online convex "
             "optimization, Machine Learning 2007: Alg. 2 (ONS), Thm. 2")
    feedback = "full"
    private = False

    def setup(self) -> None:
        p = self.problem
        if not isinstance(p.domain, Simplex):
            msg = f"{self.name} plays the simplex (portfolio selection), got {p.domain!r}"
            raise ValueError(msg)  # noqa: TRY004  (a problem it cannot play)
        alpha = float(p.loss.exp_concavity)
        if not alpha > 0:
            raise ValueError(f"{self.name} needs exp-concave losses (a family with "
                             f"exp_concavity > 0, e.g. log-wealth), got {p.loss!r}")
        hull = p.domain.affine_hull
        self._center = np.asarray(hull.point, dtype=np.float64)
        self._basis = np.asarray(hull.basis, dtype=np.float64)
        bound = getattr(p.loss, "hull_lipschitz", None)
        #: ``alpha``: the family's exp-concavity.
        self.alpha = alpha
        #: ``G``: bound on the hull part of every gradient.
        self.gradient_bound = float(bound(p.domain) if bound is not None else p.lipschitz)
        #: ``D``: the simplex's diameter.
        self.diameter = float(p.diameter)
        self.gamma, self.eps = ons_parameters(self.gradient_bound, self.diameter, alpha)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        n = self._basis.shape[1]
        self._a = self.eps * np.eye(n)
        self._z = np.zeros(n)
        self._x = self._center.copy()
        self.projections = 0
        self.projection_gap = 0.0

    @property
    def point_played(self) -> np.ndarray:
        """The portfolio ``x_t`` of the coming round."""
        return self._x.copy()

    def act(self) -> np.ndarray:
        return self._x.copy()

    def update(self, action, feedback) -> None:
        theta = self.clip_feedback(feedback)
        g = self._basis.T @ self.problem.loss.subgradient(theta, self._x)
        self._a += np.outer(g, g)
        y = self._z - np.linalg.solve(self._a, g) / self.gamma
        z = project_in_norm(y, self._a, self._center, self._basis, self._z)
        if not np.array_equal(z, y):
            self.projections += 1
            self.projection_gap = max(self.projection_gap, self._kkt_residual(z, y))
        self._z = z
        x = np.maximum(self._center + self._basis @ z, 0.0)
        self._x = x / x.sum()
        self.t += 1

    def _kkt_residual(self, z: np.ndarray, y: np.ndarray) -> float:
        """How far ``z`` is from optimal: the gap ``<grad, z> - min_{x in K} <grad, x>``
        of the projection objective's gradient (0 exactly at the projection)."""
        grad_x = self._basis @ (2.0 * self._a @ (z - y))  # gradient in x-coordinates
        x = self._center + self._basis @ z
        return float(grad_x @ x - grad_x.min())
