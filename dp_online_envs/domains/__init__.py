"""Decision sets: convex domains with linear oracles, and the subsets of a ground set.

Every domain implements :class:`~dp_online_envs.domains.base.Domain`: a linear
minimization oracle, membership, Euclidean projection (exact or Frank-Wolfe to a
stated gap), diameter, affine hull, an inner ball, norm bounds and the Gymnasium
action space.
"""

from dp_online_envs.domains.ball import Ball, L1Ball
from dp_online_envs.domains.base import AffineHull, Domain
from dp_online_envs.domains.base_polytope import SubmodularBasePolytope
from dp_online_envs.domains.birkhoff import Birkhoff
from dp_online_envs.domains.box import Box, Cube
from dp_online_envs.domains.flow import FlowPolytope
from dp_online_envs.domains.ground_set import GroundSet
from dp_online_envs.domains.matroid import (
    GraphicMatroid,
    MatroidPolytope,
    PartitionMatroid,
    UniformMatroid,
)
from dp_online_envs.domains.polytope import OraclePolytope
from dp_online_envs.domains.projection import (
    FWResult,
    frank_wolfe_contains,
    frank_wolfe_projection,
    frank_wolfe_projection_with_gap,
    frank_wolfe_solve,
)
from dp_online_envs.domains.simplex import Arms, Simplex, project_simplex

__all__ = [
    "AffineHull",
    "Arms",
    "Ball",
    "Birkhoff",
    "Box",
    "Cube",
    "Domain",
    "FWResult",
    "FlowPolytope",
    "GraphicMatroid",
    "GroundSet",
    "L1Ball",
    "OraclePolytope",
    "MatroidPolytope",
    "PartitionMatroid",
    "Simplex",
    "SubmodularBasePolytope",
    "UniformMatroid",
    "frank_wolfe_contains",
    "frank_wolfe_projection",
    "frank_wolfe_projection_with_gap",
    "frank_wolfe_solve",
    "project_simplex",
]
