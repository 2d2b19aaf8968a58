"""Loss families ``f(theta, x)`` of the suite and exact submodular minimization."""

from dp_online_envs.losses.base import LossFamily
from dp_online_envs.losses.convex import (
    AbsoluteLinearLoss,
    DistanceLoss,
    HingeLoss,
    LogisticLoss,
)
from dp_online_envs.losses.linear import THETA_SETS, LinearLoss
from dp_online_envs.losses.portfolio import LogWealthLoss
from dp_online_envs.losses.quadratic import QuadraticLoss
from dp_online_envs.losses.submodular import (
    ConcaveModularLoss,
    FacilityLocationLoss,
    GraphCutLoss,
    SubmodularLoss,
)
from dp_online_envs.losses.submodular_min import (
    BRUTE_FORCE_MAX_N,
    MinNormResult,
    brute_force_minimize,
    fujishige_wolfe,
    minimize_submodular,
)

__all__ = [
    "LogWealthLoss",
    "BRUTE_FORCE_MAX_N",
    "THETA_SETS",
    "AbsoluteLinearLoss",
    "ConcaveModularLoss",
    "DistanceLoss",
    "FacilityLocationLoss",
    "GraphCutLoss",
    "HingeLoss",
    "LinearLoss",
    "LogisticLoss",
    "LossFamily",
    "MinNormResult",
    "QuadraticLoss",
    "SubmodularLoss",
    "brute_force_minimize",
    "fujishige_wolfe",
    "minimize_submodular",
]
