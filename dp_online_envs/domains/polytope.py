"""Polytopes known through their linear minimization oracle only."""

from __future__ import annotations

import numpy as np

from dp_online_envs.domains.base import Domain, check_vector
from dp_online_envs.domains.projection import PROJECTION_TOL, frank_wolfe_projection


class OraclePolytope(Domain):
    """A polytope whose only efficient primitive is the linear oracle.

    Matroid, flow, submodular base and Birkhoff polytopes. Their Euclidean projection
    is an iterative solve: Frank-Wolfe (min-norm-point variant) with the oracle, stopped
    at duality gap ``projection_tol`` (the point is a convex combination of oracle
    vertices, hence feasible, and within ``sqrt(2 projection_tol)`` of the exact
    projection). Algorithms that must stay projection-free test for this class.
    """

    #: Frank-Wolfe duality-gap tolerance of :meth:`project`.
    projection_tol: float = PROJECTION_TOL

    def project(self, x: np.ndarray) -> np.ndarray:
        """Projection by Frank-Wolfe with the oracle, to gap ``projection_tol``."""
        x = check_vector(x, self.dim)
        return frank_wolfe_projection(self.linear_minimizer, x, tol=self.projection_tol)
