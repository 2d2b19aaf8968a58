"""The loss-family interface.

A loss family is a map ``(theta, x) -> f(theta, x)``; the environment's adversary picks
``theta_t`` each round, full-information feedback reveals ``theta_t`` and bandit
feedback reveals only ``f(theta_t, x_t)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import gymnasium as gym
import numpy as np

from dp_online_envs.domains.base import Domain, ReadOnlyView


class LossFamily(ReadOnlyView, ABC):
    """A parametric family of losses over a domain.

    Attributes:
        param_dim: Length of the parameter vector ``theta``.
        param_is_box: True when the admissible parameter set is the box ``param_space``.
        linear_in_theta: True when ``f(theta, x)`` is linear in ``theta`` for every
            ``x``; then ``sum_t f(theta_t, x) = f(sum_t theta_t, x)`` and the regret
            comparator streams the cumulative parameter in O(param_dim) memory.
        convex: True when ``f(theta, .)`` is convex on the domain.
        strong_convexity: Modulus H of strong convexity (0 if not strongly convex).
        exp_concavity: ``alpha`` such that ``exp(-alpha f(theta, .))`` is concave on the
            domain (0 if none is declared); what Online Newton Step needs.
        name: Short name used in tables.

    The copy a learner receives (:meth:`~dp_online_envs.problem.Problem.public_copy`)
    is read-only (:func:`~dp_online_envs.domains.base.make_read_only`): setting or
    deleting an attribute raises ``AttributeError``.
    """

    param_dim: int
    linear_in_theta: bool = False
    convex: bool = True
    strong_convexity: float = 0.0
    exp_concavity: float = 0.0
    name: str = "loss"
    #: True when the admissible parameter set is exactly the box ``param_space``
    #: (then coordinatewise two-point draws with any mean in the box are admissible).
    param_is_box: bool = False

    @abstractmethod
    def value(self, theta: np.ndarray, x: np.ndarray) -> float:
        """``f(theta, x)`` for one point ``x``."""

    def values(self, theta: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """``f(theta, x)`` for every row ``x`` of ``xs`` (shape ``(m, dim)``)."""
        return np.array([self.value(theta, x) for x in xs], dtype=np.float64)

    def total(self, thetas: np.ndarray, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``sum_t f(theta_t, x)`` and a subgradient of it, for parameters as rows of ``thetas``.

        Families override this with a vectorized version; the regret comparator calls it
        once per iteration of its solver.
        """
        value, grad = 0.0, np.zeros_like(x, dtype=np.float64)
        for theta in thetas:
            value += self.value(theta, x)
            grad += self.subgradient(theta, x)
        return float(value), grad

    @abstractmethod
    def subgradient(self, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
        """A subgradient of ``f(theta, .)`` at ``x``."""

    @property
    @abstractmethod
    def param_space(self) -> gym.spaces.Box:
        """A finite Box containing every admissible ``theta``."""

    @abstractmethod
    def sample_param(self, rng: np.random.Generator) -> np.ndarray:
        """A random admissible parameter (used by the random adversaries)."""

    @abstractmethod
    def clip_param(self, theta: np.ndarray) -> np.ndarray:
        """Map ``theta`` to the nearest admissible parameter (adversaries stay in the set)."""

    def canonical_param(self, theta: np.ndarray) -> np.ndarray:
        """One representative of the parameters that give the same loss as ``theta``:
        two parameters with equal canonical forms are the same function. Identity here;
        families with symmetries override it (margin losses: ``(a, y) ~ (-a, -y)``).
        The auditor measures how far a neighbouring parameter is in these forms."""
        return np.asarray(theta, dtype=np.float64)

    def opposite_param(self, theta: np.ndarray) -> np.ndarray | None:
        """An admissible parameter whose loss is far from ``theta``'s, where the family
        knows one (margin losses: the flipped label); ``None`` otherwise."""
        return None

    @abstractmethod
    def lipschitz(self, domain: Domain) -> float:
        """L: Lipschitz constant of ``f(theta, .)`` over the domain, w.r.t. ``||.||_2``,
        uniformly over admissible ``theta``."""

    @abstractmethod
    def bound(self, domain: Domain) -> float:
        """B: ``sup |f(theta, x)|`` over admissible ``theta`` and ``x`` in the domain."""

    def check_domain(self, domain: Domain) -> None:
        """Raise ``ValueError`` if the family cannot be used on ``domain``."""
        if getattr(self, "dim", domain.dim) != domain.dim:
            raise ValueError(
                f"{self.name} loss has dim {self.dim}, domain {domain!r} has dim {domain.dim}"
            )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(param_dim={self.param_dim})"
