"""The adversary interface and recorded loss sequences.

An adversary chooses the loss parameter ``theta_t`` of every round. All of its
randomness comes from the generator the environment hands it at ``reset``: its own
generator, derived from the env's reset seed and distinct from the env's public
``np_random``, so a seed fixes the whole game and holding the env's ``np_random``
predicts nothing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from dp_online_envs.domains.base import Domain
from dp_online_envs.losses.base import LossFamily
from dp_online_envs.validation import check_int


class Adversary(ABC):
    """Chooses ``theta_t`` each round.

    Attributes:
        adaptive: True if ``next_loss`` depends on the learner's past actions.
        name: Registry name.
    """

    adaptive: bool = False
    name: str = "adversary"

    def reset(
        self, np_random: np.random.Generator, domain: Domain, loss: LossFamily, horizon: int
    ) -> None:
        """Start a new game; keep ``np_random`` (the adversary's own generator) for all draws."""
        self.np_random = np_random
        self.domain = domain
        self.loss = loss
        self.horizon = int(horizon)

    @abstractmethod
    def next_loss(self, t: int) -> np.ndarray:
        """The parameter of round ``t`` (1-based), chosen before the learner's action."""

    def observe(self, point: np.ndarray, theta: np.ndarray) -> None:
        """Called after round t with the learner's point; adaptive adversaries override."""

    def next_losses(self, t: int, n: int) -> np.ndarray:
        """The parameters of rounds ``t .. t + n - 1`` as rows, drawn exactly as ``n``
        successive :meth:`next_loss` calls draw them (same generator calls, same values).

        The vector games (:mod:`dp_online_envs.envs.vector_env`) take a block of
        rounds at a time through this. Only for adversaries that do not read the
        learner's points (``adaptive`` False).

        Raises:
            ValueError: For an adaptive adversary (its losses depend on the play).
        """
        if self.adaptive:
            raise ValueError(f"{type(self).__name__} is adaptive: its losses depend on the "
                             "learner's points and cannot be drawn ahead")
        return np.stack([np.asarray(self.next_loss(t + i), dtype=np.float64)
                         for i in range(check_int("n", n, 1))])

    @property
    def mean_param(self) -> np.ndarray | None:
        """``E[theta_t]`` when the losses are i.i.d. (for pseudo-regret); else ``None``."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


@dataclass(frozen=True)
class LossSequence:
    """A recorded sequence of loss parameters ``theta_1..theta_T`` (rows).

    Replaying it with :class:`~dp_online_envs.adversaries.ReplayAdversary` reproduces
    the game's losses exactly; :meth:`replace` builds the neighbouring sequence that
    differs in one round, which is what differential privacy is defined against.
    """

    thetas: np.ndarray

    def __post_init__(self) -> None:
        arr = np.array(self.thetas, dtype=np.float64)
        if arr.ndim != 2 or not np.all(np.isfinite(arr)):
            raise ValueError(f"thetas must be a finite 2-D array, got shape {arr.shape}")
        arr.setflags(write=False)
        object.__setattr__(self, "thetas", arr)

    def __len__(self) -> int:
        return int(self.thetas.shape[0])

    def replace(self, tau: int, theta: np.ndarray) -> LossSequence:
        """A copy whose round ``tau`` (1-based) has parameter ``theta``."""
        tau = check_int("tau", tau, 1, len(self))
        theta = np.asarray(theta, dtype=np.float64)
        if theta.shape != self.thetas.shape[1:]:
            raise ValueError(f"theta has shape {theta.shape}, expected {self.thetas.shape[1:]}")
        out = self.thetas.copy()
        out[tau - 1] = theta
        return LossSequence(out)
