"""The public description of a game: what a learner may know before it starts."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace

from dp_online_envs.domains.base import Domain, make_read_only
from dp_online_envs.domains.ground_set import GroundSet
from dp_online_envs.domains.simplex import Simplex
from dp_online_envs.losses.base import LossFamily
from dp_online_envs.losses.linear import LinearLoss
from dp_online_envs.validation import check_int

FEEDBACK_KINDS = ("full", "bandit")
#: The longest game: 2^53 rounds, what the regret ledger holds. The ledger sums in
#: float64 (the learner's loss ``PlayTotals.learner_loss``, the comparator's cumulative
#: parameter ``Comparator._sum``, the pseudo-regret), and float64 holds every integer
#: up to 2^53 exactly, but not 2^53 + 1: past 2^53 rounds a unit loss added to a sum
#: of unit losses (a Bernoulli bandit's, a 0/1 expert's) is lost in rounding, so the
#: ledger would stop counting rounds and the regret would be wrong by construction.
#: The privacy counters refuse totals >= 2^53 for the same reason
#: (:mod:`agents.privacy.counters.base`), and 2^53 is far inside the 64-bit integers of
#: the round counters and checkpoints. (A game of 2^53 rounds would still take some
#: 300 years at 10^6 rounds a second: the runner reports the rounds of a long game as
#: it plays them.)
MAX_HORIZON = 2**53


def check_horizon(horizon: object) -> int:
    """``horizon`` as an int in ``[1, MAX_HORIZON]`` (``MAX_HORIZON = 2**53``).

    Raises:
        ValueError: Not an integer >= 1 (:func:`~dp_online_envs.validation.check_int`'s
            message), or more than :data:`MAX_HORIZON`: ``horizon=N rejected: expected
            an integer in [1, 2**53] (...)``.
    """
    horizon = check_int("horizon", horizon, 1)
    if horizon > MAX_HORIZON:
        raise ValueError(f"horizon={horizon} rejected: expected an integer in [1, 2**53] "
                         "(the longest game whose float64 regret ledger counts every "
                         "round exactly)")
    return horizon


@dataclass(frozen=True)
class Problem:
    """Everything public about an online learning game.

    The decision set and the form of the losses are public (a learner needs the
    linear oracle and, under full information, the map ``theta -> f(theta, .)``); the
    adversary's parameters ``theta_t`` are not.

    Attributes:
        domain: The decision set D.
        loss: The loss family ``f(theta, x)``.
        feedback: ``"full"`` (theta_t revealed) or ``"bandit"`` (only f_t(x_t)).
        horizon: Number of rounds T, in ``[1, MAX_HORIZON]`` (2^53).
        lipschitz: L, Lipschitz constant of every f_t on D w.r.t. ``||.||_2``.
        bound: B, ``sup |f_t(x)|`` over D.
        diameter: D, the l2 diameter of the decision set.
        strong_convexity: H, modulus of strong convexity of every f_t (0 if none).
    """

    domain: Domain
    loss: LossFamily
    feedback: str
    horizon: int
    lipschitz: float
    bound: float
    diameter: float
    strong_convexity: float = 0.0

    def __post_init__(self) -> None:
        if self.feedback not in FEEDBACK_KINDS:
            raise ValueError(f"feedback={self.feedback!r}, expected one of {FEEDBACK_KINDS}")
        object.__setattr__(self, "horizon", check_horizon(self.horizon))

    @classmethod
    def build(cls, domain: Domain, loss: LossFamily, feedback: str, horizon: int) -> Problem:
        """Make a Problem whose bounds are computed from the domain and loss family."""
        return cls(
            domain=domain,
            loss=loss,
            feedback=feedback,
            horizon=check_horizon(horizon),
            lipschitz=float(loss.lipschitz(domain)),
            bound=float(loss.bound(domain)),
            diameter=float(domain.diameter),
            strong_convexity=float(loss.strong_convexity),
        )

    @property
    def dim(self) -> int:
        """Dimension of the decision set's ambient space."""
        return self.domain.dim

    def loss_range(self) -> tuple[float, float]:
        """The declared range ``(lo, hi)`` of a round's loss ``f_t(x_t)``: the range of
        the bandit feedback, and the one a client turns into rewards (``hi - f`` or
        ``(hi - f) / (hi - lo)`` in ``[0, 1]``).

        ``(0, B)`` for linear losses with parameters in ``[0, 1]^K``
        (``theta_set="unit"``) on domains of non-negative points (simplex, arms, subsets
        of a ground set); else ``(-B, B)``, ``B = bound`` (``sup |f_t(x)|`` over D).

        Raises:
            ValueError: If ``bound`` is not finite and positive.
        """
        b = float(self.bound)
        if not (math.isfinite(b) and b > 0):
            raise ValueError(f"the problem's bound B={self.bound!r} must be finite and > 0")
        if (isinstance(self.loss, LinearLoss) and self.loss.theta_set == "unit"
                and isinstance(self.domain, (Simplex, GroundSet))):
            return 0.0, b
        return -b, b

    def with_feedback(self, feedback: str) -> Problem:
        """The same problem seen through another feedback kind."""
        return replace(self, feedback=feedback)

    def public_copy(self) -> Problem:
        """A read-only copy of this problem that shares no object with it (a deep copy).

        What a learner is handed: the fields of a ``Problem`` cannot be set (it is a
        frozen dataclass), and its domain and loss family are copies marked read-only
        (:func:`~dp_online_envs.domains.base.make_read_only`): ``problem.domain.radius =
        ...`` raises ``AttributeError`` naming the attribute. A learner that forces a
        write anyway (``object.__setattr__``, an array written in place) changes its own
        copy only, never the decision set or the losses the env plays and its regret
        ledger measures. Copies of the copy (``copy.deepcopy``, ``pickle``) stay
        read-only.
        """
        public = copy.deepcopy(self)
        make_read_only(public.domain, "decision set")
        make_read_only(public.loss, "loss family")
        return public
