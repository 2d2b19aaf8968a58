"""A sample submission that cheats: plain (non-private) EXP3 declaring epsilon = 1.

It adds no noise at all, yet claims ``(epsilon, 0)``-DP. Its regret is excellent (the
non-private rate), and it declares the required budget; the grader's privacy audit,
which watches only the arms it plays, is what must catch it.
"""

from __future__ import annotations

from agents.bandit.exp3 import EXP3
from agents.privacy import PrivacyGuarantee


class ClaimsPrivacy(EXP3):
    """EXP3 with a false privacy claim."""

    name = "claims-privacy"
    description = "plain EXP3 claiming eps-DP (no noise)"
    private = True

    def setup(self) -> None:
        super().setup()
        self.privacy = PrivacyGuarantee(self.epsilon, 0.0,
                                        mechanism="Laplace noise on the losses (not really)")
