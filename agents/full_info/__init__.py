"""Full-information learners (private and non-private); importing registers them."""

from agents.full_info import ftpl, ftrl, hedge, online_fw  # noqa: F401,E402
from agents.full_info import l2p, ons, pftal, submod_pftal  # noqa: F401,E402
