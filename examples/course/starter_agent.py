"""Starter code: an epsilon-DP learner for the 10-armed bandit (DPBandit-MAB-v0).

Fill in the TODOs. As given, this file loads and plays (a uniformly random arm, no
privacy declared) and scores low: regret linear in T, no budget declared, nothing to
audit. Test it locally, in its own process as the grader plays it (from this
directory, so that ``starter_agent`` is importable)::

    PYTHONPATH=. dp-online run DPBandit-MAB-v0 starter_agent:StarterAgent \
        --epsilon 1 --horizon 16384 --seeds 3 --isolate

See README.md for what the learner sees and how it is graded.
"""

from __future__ import annotations

import numpy as np

import agents
from agents.privacy import PrivacyGuarantee  # noqa: F401  (you will need it)


class StarterAgent(agents.Agent):
    """TODO: describe your algorithm, its privacy argument and its regret."""

    name = "starter"
    description = "uniformly random arm (a starting point)"
    feedback = "bandit"   # you see only the loss of the arm you played
    private = True        # the grader passes epsilon (and delta) to the constructor

    def setup(self) -> None:
        # self.problem is all you know of the game: K arms, the horizon T, the bounds.
        self.k = int(self.problem.domain.action_space.n)
        self.horizon = int(self.problem.horizon)
        # TODO: choose your parameters from self.problem and self.epsilon.
        # TODO: declare what you guarantee, e.g.
        #   self.privacy = PrivacyGuarantee(self.epsilon, 0.0, mechanism="...")
        # Declare only what your algorithm really guarantees: the grader audits it.
        self.privacy = None

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)   # seeds self.rng (use it for ALL randomness), sets self.t = 0
        # TODO: reset your statistics here (called before every game).

    def act(self) -> int:
        # TODO: pick an arm from your (private) statistics.
        return int(self.rng.integers(self.k))

    def update(self, action: int, feedback: np.ndarray) -> None:
        loss = float(self.clip_feedback(feedback)[0])  # f_t(a_t), clipped to the bounds
        del loss  # TODO: learn from it, privately (noise calibrated to its sensitivity)
        self.t += 1
