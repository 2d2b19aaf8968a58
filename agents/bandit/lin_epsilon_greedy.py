r"""Epsilon-greedy on the contextual ids, non-private: the baseline.

``lin-epsilon-greedy`` -- :class:`LinEpsilonGreedy`: with probability ``explore`` a
uniformly random arm, otherwise the greedy arm ``argmin_a theta_hat_a^T c`` of the
per-arm ridge estimates (:mod:`agents.bandit.contextual`). A fixed ``explore`` pays
about ``explore * T`` times the uniform arm's gap (linear regret); ``explore = 0`` is the
greedy learner, which has no worst-case guarantee either (it can lock onto a wrong arm).
``decay=True`` explores with probability ``min(1, explore * (K / t)^{1/3})`` in round t,
the schedule whose regret is ``O(T^{2/3} (K log T)^{1/3})`` when the gaps are bounded
(Langford and Zhang 2007, epoch-greedy's rate).
"""

from __future__ import annotations

import numpy as np

from agents.bandit.contextual import LinearContextualAgent
from agents.base import register
from dp_online_envs.validation import check_real

__all__ = ["LinEpsilonGreedy"]


@register
class LinEpsilonGreedy(LinearContextualAgent):
    """Epsilon-greedy over per-arm ridge estimates; linear regret at a fixed ``explore``.

    Args:
        explore: The exploration probability, in [0, 1].
        decay: Explore with probability ``min(1, explore * (K / t)^{1/3})`` in round t.
        ridge: The ridge parameter lambda > 0.
    """

    name = "lin-epsilon-greedy"
    description = "epsilon-greedy on contexts, per-arm ridge estimates, non-private"
    paper = ("Sutton and Barto 1998 (epsilon-greedy); Langford and Zhang, The epoch-greedy "
             "algorithm for contextual multi-armed bandits (NeurIPS 2007)")

    def setup(self, explore: float = 0.1, decay: bool = False, ridge: float = 1.0) -> None:
        self.setup_ridge(ridge)
        self.explore = check_real("explore", explore, 0.0, 1.0)
        if not isinstance(decay, bool):
            raise TypeError(f"decay must be True or False, got decay={decay!r}")
        self.decay = decay

    def explore_prob(self) -> float:
        """The exploration probability of the coming round ``t + 1``."""
        if not self.decay:
            return self.explore
        return min(1.0, self.explore * (self.k / (self.t + 1)) ** (1.0 / 3.0))

    def choose(self, c: np.ndarray) -> int:
        u, arm = self.rng.random(), int(self.rng.integers(self.k))
        if u < self.explore_prob():
            return arm
        return int(np.argmin(self.estimates() @ c))
