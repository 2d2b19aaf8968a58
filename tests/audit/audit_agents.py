"""Learners for the audit tests. They live in an importable module (not a test file)
because an isolated learner's process imports its class by name."""

from __future__ import annotations

import math

import numpy as np

from agents.bandit.exp3 import EXP3
from agents.base import Agent
from agents.privacy import PrivacyGuarantee


class EXP3ClaimsPrivacy(EXP3):
    """Plain EXP3 (no noise at all) that declares ``(1, 0)``-DP: the cheat to catch."""

    name = "test-exp3-claims-privacy"

    def setup(self, **options) -> None:
        super().setup(**options)
        self.privacy = PrivacyGuarantee(1.0, 0.0, mechanism="none: a false claim")


class RandomizedResponseArm(Agent):
    """Exactly ``epsilon``-DP on its actions, and no better: after round 1 it plays
    arm ``b`` for the rest of the game, where ``b`` is the loss seen in round 1
    (0 or 1, rounded) kept with probability ``e^eps / (1 + e^eps)`` and flipped
    otherwise. Loss sequences differing in round 1 (0 vs 1) give the event "arm 0 is
    replayed" probabilities ``e^eps/(1+e^eps)`` and ``1/(1+e^eps)``: ratio ``e^eps``.
    Later rounds are ignored, so changes there are invisible (ratio 1)."""

    name = "test-randomized-response"
    feedback = "bandit"

    def setup(self, rr_epsilon: float = 1.0) -> None:
        self.rr_epsilon = float(rr_epsilon)

    def reset(self, seed=None) -> None:
        super().reset(seed)
        self.arm = 0

    def act(self):
        return self.arm

    def update(self, action, feedback) -> None:
        if self.t == 0:
            bit = round(float(self.clip_feedback(feedback)[0]))
            keep = self.rng.random() < 1.0 / (1.0 + math.exp(-self.rr_epsilon))
            self.arm = bit if keep else 1 - bit
        self.t += 1


class VectorRandomizedResponse:
    """B games of :class:`RandomizedResponseArm` at once (a vector session): game ``b``
    draws from the generator the scalar agent reset with ``seeds[b]`` has, so its play
    is the scalar game's."""

    def __init__(self, problem, rr_epsilon: float = 1.0) -> None:
        self.prototype = RandomizedResponseArm(problem, seed=0, rr_epsilon=rr_epsilon)
        self.keep_p = 1.0 / (1.0 + math.exp(-float(rr_epsilon)))

    def reset_batch(self, seeds) -> None:
        self.rngs = []
        for s in seeds:
            self.prototype.reset(s)
            self.rngs.append(self.prototype.rng)
        self.arms = np.zeros(len(seeds), dtype=np.int64)
        self.t = 0

    def act_batch(self) -> np.ndarray:
        return self.arms.copy()

    def update_batch(self, actions, feedback) -> None:
        if self.t == 0:
            b = self.prototype.problem.bound  # the scalar clip_feedback, then round()
            bits = np.rint(np.clip(np.asarray(feedback)[:, 0], -b, b)).astype(np.int64)
            keep = np.array([r.random() < self.keep_p for r in self.rngs])
            self.arms = np.where(keep, bits, 1 - bits)
        self.t += 1


class SharedStreamRandomizedResponse(VectorRandomizedResponse):
    """B independent games of :class:`RandomizedResponseArm` from ONE generator seeded
    with all the run seeds (as :class:`agents.vector.arms.SharedStreamPrivateEXP2`
    draws its noise): game ``b`` keeps its bit with the ``b``-th of one ``random(B)``
    draw. Not the scalar game of ``seeds[b]``; the same law, independent runs."""

    def reset_batch(self, seeds) -> None:
        self.rng = np.random.default_rng(np.random.SeedSequence([int(s) for s in seeds]))
        self.arms = np.zeros(len(seeds), dtype=np.int64)
        self.t = 0

    def update_batch(self, actions, feedback) -> None:
        if self.t == 0:
            b = self.prototype.problem.bound
            bits = np.rint(np.clip(np.asarray(feedback)[:, 0], -b, b)).astype(np.int64)
            keep = self.rng.random(bits.size) < self.keep_p
            self.arms = np.where(keep, bits, 1 - bits)
        self.t += 1

