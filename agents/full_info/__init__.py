"""Full-information learners (private and non-private); importing registers them."""

from agents.full_info import (  # noqa: F401  (importing registers the agents)
    ftrl,
    hazan_kale_submodular,
    hedge,
    online_fw,
    ons,
    pftal,
    private_ftpl,
    private_lazy_mw,
    submod_pftal,
)
