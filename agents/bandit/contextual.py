r"""What the linear contextual learners share: reading the contextual feedback, the
per-arm ridge statistics, and the first round.

The contextual ids (:mod:`dp_online_envs.envs.contextual`) emit ``[f_t(x_t), c_t,
c_{t+1}]``: the loss of the arm played, the context it was played in and the coming
round's context. A learner keeps, per arm ``a`` (the disjoint linear model of Li, Chu,
Langford and Schapire 2010), the ridge statistics

    A_a = lambda I + sum_{s: a_s = a} c_s c_s^T,   b_a = sum_{s: a_s = a} l_s c_s,
    theta_hat_a = A_a^{-1} b_a,

from the clipped feedback: the loss clipped to ``[0, 1]`` and the contexts scaled onto the
unit l2 ball (the declared bounds of the game; clips are counted on
``clipped_feedback``). The suite's game loop hands a learner the step observations
only, so round 1 is played without its context: a uniformly random arm.
"""

from __future__ import annotations

import math

import numpy as np

from agents.base import Agent
from agents.common import clip_norm
from dp_online_envs.domains.simplex import Arms
from dp_online_envs.losses.contextual import ContextualLinearLoss
from dp_online_envs.problem import Problem
from dp_online_envs.validation import check_real

__all__ = ["LinearContextualAgent", "check_contextual_problem", "oful_radius"]

#: The contextual games' constants: the Bernoulli losses are R-sub-Gaussian with
#: R = 1/2, the contexts have ``||c||_2 <= L = 1`` and the parameters ``||theta_a|| <= S = 1``.
SUB_GAUSSIAN_R = 0.5
CONTEXT_BOUND_L = 1.0
PARAM_BOUND_S = 1.0


def check_contextual_problem(name: str, problem: Problem) -> tuple[int, int]:
    """``(K, d)`` of a contextual game.

    Raises:
        ValueError: A problem that is not K arms with contextual linear losses.
    """
    if not isinstance(problem.domain, Arms) or not isinstance(problem.loss,
                                                              ContextualLinearLoss):
        raise ValueError(f"{name} plays the contextual ids (K arms, ContextualLinearLoss), "
                         f"got {problem.domain!r} with {problem.loss!r}")
    return problem.domain.dim, problem.loss.context_dim


def oful_radius(log_det_ratio: float, delta: float, r: float = SUB_GAUSSIAN_R,
                lam: float = 1.0, s: float = PARAM_BOUND_S) -> float:
    """The confidence radius of Abbasi-Yadkori, Pal and Szepesvari 2011, Thm. 2:
    ``R sqrt(2 log(1/delta) + log(det A / det(lambda I))) + sqrt(lambda) S``.

    With probability at least ``1 - delta``, for all rounds,
    ``||theta_hat - theta||_A <= radius``.

    Args:
        log_det_ratio: ``log det A - d log lambda`` (>= 0).
        delta: The failure probability, in (0, 1).
        r: The noise's sub-Gaussian constant R.
        lam: The ridge parameter lambda.
        s: The bound S on ``||theta||_2``.
    """
    return r * math.sqrt(2.0 * math.log(1.0 / delta) + max(log_det_ratio, 0.0)) \
        + math.sqrt(lam) * s


class LinearContextualAgent(Agent):
    """Base of the linear contextual learners: the feedback, the ridge statistics, the
    first round. Subclasses implement :meth:`choose` (the arm in context ``c``) and call
    :meth:`setup_ridge` from their ``setup``."""

    feedback = "bandit"

    def setup_ridge(self, ridge: float) -> None:
        """Fix K, d and the ridge parameter lambda.

        Raises:
            ValueError: A non-contextual problem or ``ridge <= 0``.
        """
        self.k, self.d = check_contextual_problem(self.name, self.problem)
        self.ridge = check_real("ridge", ridge, 0.0, low_inclusive=False)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        k, d = self.k, self.d
        self.gram = np.repeat(np.eye(d)[None] * self.ridge, k, axis=0)  # A_a
        self.gram_inv = np.repeat(np.eye(d)[None] / self.ridge, k, axis=0)  # A_a^{-1}
        self.target = np.zeros((k, d))  # b_a
        self.log_det = np.full(k, d * math.log(self.ridge))  # log det A_a
        self.pulls = np.zeros(k, dtype=np.int64)
        self.context: np.ndarray | None = None

    def estimates(self) -> np.ndarray:
        """``theta_hat_a = A_a^{-1} b_a``, one row per arm."""
        return np.einsum("kij,kj->ki", self.gram_inv, self.target)

    def widths(self, c: np.ndarray) -> np.ndarray:
        """``||c||_{A_a^{-1}} = sqrt(c^T A_a^{-1} c)``, one per arm."""
        return np.sqrt(np.maximum(np.einsum("i,kij,j->k", c, self.gram_inv, c), 0.0))

    def act(self) -> int:
        if self.context is None:  # round 1: the loop never shows the reset observation
            return int(self.rng.integers(self.k))
        return int(self.choose(self.context))

    def choose(self, c: np.ndarray) -> int:
        """The arm to play in context ``c``."""
        raise NotImplementedError

    def read_feedback(self, feedback) -> tuple[float, np.ndarray, np.ndarray]:
        """``(loss, played context, next context)`` of one observation, clipped to the
        declared bounds (loss in ``[0, 1]``, contexts in the unit l2 ball), each clip
        counted on ``clipped_feedback``.

        Raises:
            ValueError: Non-finite feedback or one of the wrong length.
        """
        fb = np.asarray(feedback, dtype=np.float64).reshape(-1)
        if fb.shape != (1 + 2 * self.d,):
            raise ValueError(f"{self.name}: contextual feedback is [loss, context played, "
                             f"next context], {1 + 2 * self.d} numbers; got shape {fb.shape}")
        if not np.all(np.isfinite(fb)):
            raise ValueError(f"feedback must be finite, got {fb!r}")
        loss = float(np.clip(fb[0], 0.0, 1.0))
        clipped = loss != fb[0]
        played, c1 = clip_norm(fb[1:1 + self.d], CONTEXT_BOUND_L)
        nxt, c2 = clip_norm(fb[1 + self.d:], CONTEXT_BOUND_L)
        self.clipped_feedback += int(clipped or c1 or c2)
        return loss, played, nxt

    def update(self, action, feedback) -> None:
        loss, c, nxt = self.read_feedback(feedback)
        a = int(action)
        self.observe(a, loss, c)
        self.context = nxt
        self.t += 1

    def observe(self, arm: int, loss: float, c: np.ndarray) -> None:
        """Add round ``(arm, loss, c)`` to the arm's ridge statistics (Sherman-Morrison
        for the inverse, the matrix determinant lemma for the log-determinant)."""
        inv = self.gram_inv[arm]
        u = inv @ c
        q = float(c @ u)
        self.gram[arm] += np.outer(c, c)
        self.gram_inv[arm] = inv - np.outer(u, u) / (1.0 + q)
        self.target[arm] += loss * c
        self.log_det[arm] += math.log1p(q)
        self.pulls[arm] += 1
