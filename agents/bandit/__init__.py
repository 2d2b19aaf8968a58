"""Bandit learners (private and non-private); importing registers them."""

from agents.bandit import (  # noqa: F401  # noqa: F401,E402  # noqa: F401,E402  # noqa: F401,E402
    adap,
    bandit_pftal,
    bandit_submod,  # noqa: F401,E402
    batched,
    exp2,
    exp3,
    fkm,
    garber_kretzu,
    htinf,
    projection_free,
    reduction,
    scrible,
    thompson,
    tuned_projection_free,  # noqa: F401,E402
    ucb,
)
