"""The loss family of the contextual bandit ids: per-arm losses in ``[0, 1]``, with the
dimension of the round's context as part of the public description of the game."""

from __future__ import annotations

from dp_online_envs.losses.linear import LinearLoss
from dp_online_envs.validation import check_int


class ContextualLinearLoss(LinearLoss):
    """The round's per-arm losses ``theta_t in [0, 1]^K``, paid at the arm played:
    ``f(theta_t, e_a) = theta_t[a]`` (linear, ``theta_set="unit"``).

    What makes the game contextual is the law of ``theta_t`` (its mean is linear in the
    round's context ``c_t in R^d``, which the learner sees before it plays:
    :mod:`dp_online_envs.adversaries.contextual`) and the observation
    (:class:`~dp_online_envs.envs.contextual.ContextualBanditEnv`). This family only
    adds ``context_dim`` = d to the public :class:`~dp_online_envs.problem.Problem`, so
    a learner knows the dimension of the contexts it will see, and two games with
    different d are different problems.

    Args:
        dim: The number of arms K.
        context_dim: The dimension d of the contexts, an integer >= 2.
        theta_set: Must be ``"unit"`` (losses in ``[0, 1]``).

    Raises:
        ValueError: On ``dim < 1``, ``context_dim < 2`` or another ``theta_set``.
    """

    def __init__(self, dim: int, context_dim: int = 5, theta_set: str = "unit") -> None:
        if theta_set != "unit":
            raise ValueError(f"theta_set={theta_set!r} rejected: contextual losses are "
                             "per-arm losses in [0, 1] (theta_set='unit')")
        super().__init__(dim, theta_set)
        self.context_dim = check_int("context_dim", context_dim, 2)
        self.name = "contextual-linear"

    def __repr__(self) -> str:
        return f"ContextualLinearLoss(dim={self.dim}, context_dim={self.context_dim})"
