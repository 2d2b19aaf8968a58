"""Exception types of the suite."""

from __future__ import annotations


class InvalidActionError(ValueError):
    """An action that lies outside the environment's decision set.

    Raised only by environments made with ``invalid_action="raise"``; by default an
    out-of-domain action is projected onto the domain and counted instead.

    Attributes:
        distance: Euclidean distance from the action to the decision set.
    """

    def __init__(self, message: str, distance: float) -> None:
        super().__init__(message)
        self.distance = float(distance)
