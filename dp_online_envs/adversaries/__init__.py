"""How the loss parameters theta_t are chosen.

Every adversary draws from its own generator, which the environment derives from its
reset seed and hands over at reset (it is not the env's public ``np_random``), so one
seed fixes the whole game. :func:`make_adversary` builds one by name.
"""

from __future__ import annotations

from dp_online_envs.adversaries.adaptive import AlternatingAdversary, PunishFavoriteAdversary
from dp_online_envs.adversaries.base import Adversary, LossSequence
from dp_online_envs.adversaries.oblivious import ObliviousAdversary, ReplayAdversary
from dp_online_envs.adversaries.stochastic import (
    DriftingAdversary,
    LowerBoundAdversary,
    PlantedAdversary,
    PlantedVertexAdversary,
    StochasticAdversary,
    SwitchingAdversary,
)

ADVERSARIES: dict[str, type[Adversary]] = {
    cls.name: cls
    for cls in (
        ObliviousAdversary,
        StochasticAdversary,
        PlantedAdversary,
        PlantedVertexAdversary,
        SwitchingAdversary,
        DriftingAdversary,
        LowerBoundAdversary,
        PunishFavoriteAdversary,
        AlternatingAdversary,
    )
}


def make_adversary(spec: str | Adversary, **kwargs) -> Adversary:
    """An adversary from its registry name (with constructor kwargs) or as given.

    Raises:
        ValueError: If the name is unknown (the message lists the valid names).
    """
    if isinstance(spec, Adversary):
        if kwargs:
            raise ValueError("adversary options are only accepted with an adversary name")
        return spec
    if spec not in ADVERSARIES:
        raise ValueError(f"unknown adversary {spec!r}; valid: {sorted(ADVERSARIES)}")
    return ADVERSARIES[spec](**kwargs)


__all__ = [
    "ADVERSARIES",
    "Adversary",
    "AlternatingAdversary",
    "DriftingAdversary",
    "LossSequence",
    "LowerBoundAdversary",
    "ObliviousAdversary",
    "PlantedAdversary",
    "PlantedVertexAdversary",
    "PunishFavoriteAdversary",
    "ReplayAdversary",
    "StochasticAdversary",
    "SwitchingAdversary",
    "make_adversary",
]
