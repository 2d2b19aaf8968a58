"""Full-information learners (private and non-private); importing registers them."""

from agents.full_info import ftpl, ftrl, hedge, l2p, online_fw, ons, pftal, submod_pftal  # noqa: F401,E402  # noqa: F401,E402
