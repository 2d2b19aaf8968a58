"""Oblivious adversaries: the whole loss sequence is fixed before the game starts."""

from __future__ import annotations

import numpy as np

from dp_online_envs.adversaries.base import Adversary, LossSequence


class ObliviousAdversary(Adversary):
    """A fixed random sequence: ``theta_t`` i.i.d. from the family's ``sample_param``.

    The draws come from the adversary's generator in round order, so the sequence is a
    function of the seed alone and does not depend on the learner.
    """

    name = "oblivious"

    def next_loss(self, t: int) -> np.ndarray:
        return self.loss.sample_param(self.np_random)


class ReplayAdversary(Adversary):
    """Plays a recorded :class:`LossSequence` exactly (no randomness).

    Args:
        sequence: The recorded parameters; its length must be at least the horizon.
    """

    name = "replay"

    def __init__(self, sequence: LossSequence | np.ndarray) -> None:
        if not isinstance(sequence, LossSequence):
            sequence = LossSequence(np.asarray(sequence))
        self.sequence = sequence

    def reset(self, np_random, domain, loss, horizon) -> None:
        super().reset(np_random, domain, loss, horizon)
        if len(self.sequence) < horizon:
            raise ValueError(
                f"replayed sequence has {len(self.sequence)} rounds, horizon is {horizon}"
            )
        if self.sequence.thetas.shape[1] != loss.param_dim:
            raise ValueError(
                f"replayed parameters have length {self.sequence.thetas.shape[1]}, "
                f"the loss family expects {loss.param_dim}"
            )

    def next_loss(self, t: int) -> np.ndarray:
        return self.sequence.thetas[t - 1]

    def next_losses(self, t: int, n: int) -> np.ndarray:
        """Rows ``t .. t + n - 1`` of the recorded sequence (no randomness)."""
        return self.sequence.thetas[t - 1:t - 1 + n]
