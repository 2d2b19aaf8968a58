"""Bandit learners (private and non-private); importing registers them."""

from agents.bandit import bandit_pftal, fkm, garber_kretzu, projection_free  # noqa: F401
from agents.bandit import tuned_projection_free  # noqa: F401,E402

from agents.bandit import exp2, exp3, reduction, scrible  # noqa: F401,E402
from agents.bandit import bandit_submod  # noqa: F401,E402
from agents.bandit import batched, htinf  # noqa: F401,E402
from agents.bandit import adap, thompson, ucb  # noqa: F401,E402
