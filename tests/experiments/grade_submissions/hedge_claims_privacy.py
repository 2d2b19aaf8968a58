"""A full-information submission that lies: plain Hedge (no noise) declaring epsilon-DP.

Its regret is the non-private rate; the one-run audit of full-information learners,
which reads the simplex points it plays on DPFullInfo-Experts-v0, must catch it.
"""

from __future__ import annotations

from agents.full_info.hedge import Hedge
from agents.privacy import PrivacyGuarantee


class HedgeClaimsPrivacy(Hedge):
    """Hedge with a false privacy claim."""

    name = "hedge-claims-privacy"
    description = "plain Hedge claiming eps-DP (no noise)"
    private = True

    def setup(self) -> None:
        super().setup()
        self.privacy = PrivacyGuarantee(self.epsilon, 0.0,
                                        mechanism="Laplace noise on the losses (not really)")
