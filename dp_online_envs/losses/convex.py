"""Lipschitz convex (non-linear) loss families.

Every family here is convex in ``x`` but not linear in ``theta``; ``theta`` packs the
family's parameters into one vector so adversaries can treat it as a point of a Box.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np

from dp_online_envs.domains.base import Domain
from dp_online_envs.losses._utils import (
    CenterInBoxParams,
    as_param,
    project_l2_ball,
    sample_l2_ball,
    sup_distance_to_box,
)
from dp_online_envs.losses.base import LossFamily
from dp_online_envs.validation import check_int


class DistanceLoss(CenterInBoxParams, LossFamily):
    """Distance to a moving center, ``f(theta, x) = ||x - a||_2`` with ``theta = a``.

    Parameter set: ``a in [-c, c]^dim`` (``c = center_radius``).

    Bounds:

    * ``L = 1``: the subgradient ``(x - a) / ||x - a||`` is a unit vector (``0`` at
      ``x = a``); exact as a Lipschitz constant on any domain with a segment through
      some admissible center (an upper bound in general).
    * ``B = sup ||x - a||_2 <= sqrt(N_2^2 + 2c N_1 + dim c^2)`` with
      ``N_p = domain.norm_bound(p)`` (attained at ``a = -c sign(x)``); exact when one
      point of the domain attains both ``N_1`` and ``N_2`` (ball, cube, simplex),
      otherwise an upper bound, never worse than ``N_2 + c sqrt(dim)``.

    Args:
        dim: Dimension.
        center_radius: ``c >= 0``, half side of the box of admissible centers.

    Raises:
        ValueError: On a non-positive ``dim`` or a negative / non-finite ``c``.
    """

    linear_in_theta = False
    convex = True
    strong_convexity = 0.0
    name = "distance"

    def __init__(self, dim: int, center_radius: float = 1.0) -> None:
        self._init_center(dim, center_radius)

    def value(self, theta: np.ndarray, x: np.ndarray) -> float:
        """``||x - a||_2``."""
        d = np.subtract(x, theta)
        return math.sqrt(float(np.dot(d, d)))

    def values(self, theta: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """Row-wise ``||x - a||_2``."""
        return np.linalg.norm(np.asarray(xs, dtype=np.float64) - theta, axis=1)

    def total(self, thetas: np.ndarray, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``sum_t ||x - a_t||`` and the sum of the subgradients (vectorized)."""
        d = np.asarray(x, dtype=np.float64) - np.asarray(thetas, dtype=np.float64)
        nrm = np.linalg.norm(d, axis=1)
        inv = np.divide(1.0, nrm, out=np.zeros_like(nrm), where=nrm > 0)
        return float(nrm.sum()), inv @ d

    def subgradient(self, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``(x - a) / ||x - a||``, and ``0`` (in the unit-ball subdifferential) at ``x = a``."""
        d = np.asarray(x, dtype=np.float64) - theta
        nrm = float(np.linalg.norm(d))
        if nrm == 0.0:
            return np.zeros(self.dim)
        return d / nrm

    def lipschitz(self, domain: Domain) -> float:
        """``1`` (norms are 1-Lipschitz)."""
        self.check_domain(domain)
        return 1.0

    def bound(self, domain: Domain) -> float:
        """``sqrt(N_2^2 + 2c N_1 + dim c^2)`` (see the class docstring)."""
        self.check_domain(domain)
        return sup_distance_to_box(
            (domain.norm_bound(1), domain.norm_bound(2)), self.center_radius, self.dim
        )

    def __repr__(self) -> str:
        return f"DistanceLoss(dim={self.dim}, center_radius={self.center_radius})"


class AbsoluteLinearLoss(LossFamily):
    """Absolute residual ``f(theta, x) = |<a, x> - b|`` with ``theta = (a, b)``.

    Parameter set: ``a in [-1/sqrt(dim), 1/sqrt(dim)]^dim`` (so ``||a||_2 <= 1``) and
    ``b in [-1, 1]``; ``param_dim = dim + 1`` with ``b`` last.

    Bounds:

    * ``L = sup ||a||_2 = 1`` (the subgradient is ``sign(<a,x> - b) a``); exact on
      full-dimensional domains, an upper bound otherwise.
    * ``B = sup_x (||x||_1 / sqrt(dim) + 1) = N_1 / sqrt(dim) + 1`` with
      ``N_1 = domain.norm_bound(1)``: for fixed ``x``, ``sup_a <a, x> = ||x||_1/sqrt(dim)``
      at ``a = sign(x)/sqrt(dim)``, and ``b = -1`` adds 1. Exact whenever ``N_1`` is.

    Args:
        dim: Dimension of ``x``.

    Raises:
        ValueError: On a non-positive ``dim``.
    """

    param_is_box = True

    linear_in_theta = False
    convex = True
    strong_convexity = 0.0
    name = "absolute-linear"

    def __init__(self, dim: int) -> None:
        self.dim = check_int("dim", dim, 1)
        self.param_dim = self.dim + 1
        r = 1.0 / math.sqrt(self.dim)
        low = np.full(self.param_dim, -r)
        low[-1] = -1.0
        self._low = low
        self._high = -low
        self._space = gym.spaces.Box(low=low, high=-low, dtype=np.float64)

    def value(self, theta: np.ndarray, x: np.ndarray) -> float:
        """``|<a, x> - b|``."""
        return abs(float(np.dot(theta[:-1], x)) - float(theta[-1]))

    def values(self, theta: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """Row-wise ``|<a, x> - b|``."""
        return np.abs(np.asarray(xs, dtype=np.float64) @ theta[:-1] - theta[-1])

    def total(self, thetas: np.ndarray, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``sum_t |<a_t, x> - b_t|`` and the sum of the subgradients (vectorized)."""
        t = np.asarray(thetas, dtype=np.float64)
        r = t[:, :-1] @ np.asarray(x, dtype=np.float64) - t[:, -1]
        return float(np.abs(r).sum()), np.sign(r) @ t[:, :-1]

    def subgradient(self, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``sign(<a, x> - b) a`` (``0`` at the kink, which is in ``[-a, a]``)."""
        a = np.asarray(theta[:-1], dtype=np.float64)
        r = float(np.dot(a, x)) - float(theta[-1])
        return np.sign(r) * a

    @property
    def param_space(self) -> gym.spaces.Box:
        """``[-1/sqrt(dim), 1/sqrt(dim)]^dim x [-1, 1]``, exactly the parameter set."""
        return self._space

    def sample_param(self, rng: np.random.Generator) -> np.ndarray:
        """Uniform in the parameter box."""
        return rng.uniform(self._low, self._high)

    def clip_param(self, theta: np.ndarray) -> np.ndarray:
        """Coordinate-wise clipping into the parameter box (the Euclidean projection)."""
        return np.clip(as_param(theta, self.param_dim, self.name), self._low, self._high)

    def lipschitz(self, domain: Domain) -> float:
        """``1`` (``||a||_2 <= 1``)."""
        self.check_domain(domain)
        return 1.0

    def bound(self, domain: Domain) -> float:
        """``norm_bound(1) / sqrt(dim) + 1``."""
        self.check_domain(domain)
        return float(domain.norm_bound(1)) / math.sqrt(self.dim) + 1.0

    def __repr__(self) -> str:
        return f"AbsoluteLinearLoss(dim={self.dim})"


class _LabelledLinearLoss(LossFamily):
    """Shared parameter handling of margin losses ``phi(y <a, x>)``.

    Parameter set: ``theta = (a, y)`` with ``||a||_2 <= 1`` and ``y in {-1, +1}``;
    ``param_space = [-1, 1]^(dim + 1)``; :meth:`clip_param` projects ``a`` onto the
    unit ball and replaces ``y`` by its sign (``+1`` for ``y = 0``).
    """

    linear_in_theta = False
    convex = True
    strong_convexity = 0.0

    def __init__(self, dim: int) -> None:
        self.dim = check_int("dim", dim, 1)
        self.param_dim = self.dim + 1
        self._space = gym.spaces.Box(
            low=-1.0, high=1.0, shape=(self.param_dim,), dtype=np.float64
        )

    def _margins(self, theta: np.ndarray, xs: np.ndarray) -> np.ndarray:
        return theta[-1] * (np.asarray(xs, dtype=np.float64) @ theta[:-1])

    @property
    def param_space(self) -> gym.spaces.Box:
        """``[-1, 1]^(dim + 1)``, which contains the parameter set."""
        return self._space

    def sample_param(self, rng: np.random.Generator) -> np.ndarray:
        """``a`` uniform in the unit l2 ball, ``y`` a fair random sign."""
        theta = np.empty(self.param_dim)
        theta[:-1] = sample_l2_ball(rng, self.dim)
        theta[-1] = 1.0 if rng.random() < 0.5 else -1.0
        return theta

    def clip_param(self, theta: np.ndarray) -> np.ndarray:
        """Project ``a`` onto the unit ball; ``y -> +1 if y >= 0 else -1``."""
        t = as_param(theta, self.param_dim, self.name)
        out = np.empty_like(t)
        out[:-1] = project_l2_ball(t[:-1])
        out[-1] = 1.0 if t[-1] >= 0 else -1.0
        return out

    def canonical_param(self, theta: np.ndarray) -> np.ndarray:
        """``(y a, 1)``: ``(a, y)`` and ``(-a, -y)`` give the same loss ``phi(y <a, x>)``."""
        t = np.asarray(theta, dtype=np.float64)
        return np.append(t[-1] * t[:-1], 1.0)

    def opposite_param(self, theta: np.ndarray) -> np.ndarray:
        """The same example with the other label, ``(a, -y)``: margins change sign."""
        t = self.clip_param(theta)
        t[-1] = -t[-1]
        return t

    def lipschitz(self, domain: Domain) -> float:
        """``1``: ``|phi'| <= 1`` and ``||a||_2 <= 1``."""
        self.check_domain(domain)
        return 1.0

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim})"


class HingeLoss(_LabelledLinearLoss):
    """Hinge loss ``f(theta, x) = max(0, 1 - y <a, x>)`` with ``theta = (a, y)``.

    Here ``x`` plays the role of the linear predictor and ``(a, y)`` the labelled
    example. Parameter set: ``||a||_2 <= 1``, ``y in {-1, +1}`` (``y`` last).

    Bounds:

    * ``L = 1``: subgradient ``-y a`` (or ``0``) has norm ``<= ||a||_2 <= 1``; exact on
      full-dimensional domains meeting ``{y<a,x> < 1}`` (e.g. any containing 0).
    * ``B = 1 + N_2`` with ``N_2 = domain.norm_bound(2)``: ``|y <a, x>| <= ||x||_2``,
      attained at ``a = -y x / ||x||``; exact whenever ``N_2`` is.

    Args:
        dim: Dimension.
    """

    name = "hinge"

    def value(self, theta: np.ndarray, x: np.ndarray) -> float:
        """``max(0, 1 - y <a, x>)``."""
        return max(0.0, 1.0 - float(theta[-1]) * float(np.dot(theta[:-1], x)))

    def values(self, theta: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """Row-wise hinge loss."""
        return np.maximum(0.0, 1.0 - self._margins(theta, xs))

    def total(self, thetas: np.ndarray, x: np.ndarray) -> tuple[float, np.ndarray]:
        """Summed hinge loss over the rows of ``thetas`` and the summed subgradient."""
        t = np.asarray(thetas, dtype=np.float64)
        slack = 1.0 - t[:, -1] * (t[:, :-1] @ np.asarray(x, dtype=np.float64))
        active = slack > 0.0
        return float(slack[active].sum()), -(t[:, -1] * active) @ t[:, :-1]

    def subgradient(self, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``-y a`` where ``1 - y<a,x> > 0``, else ``0`` (valid at the kink too)."""
        a = np.asarray(theta[:-1], dtype=np.float64)
        y = float(theta[-1])
        if 1.0 - y * float(np.dot(a, x)) > 0.0:
            return -y * a
        return np.zeros(self.dim)

    def bound(self, domain: Domain) -> float:
        """``1 + norm_bound(2)``."""
        self.check_domain(domain)
        return 1.0 + float(domain.norm_bound(2))


class LogisticLoss(_LabelledLinearLoss):
    """Logistic loss ``f(theta, x) = log(1 + exp(-y <a, x>))`` with ``theta = (a, y)``.

    Evaluated stably as ``logaddexp(0, -y <a, x>)``. Parameter set: ``||a||_2 <= 1``,
    ``y in {-1, +1}`` (``y`` last). Smooth, convex, not strongly convex.

    Bounds:

    * ``L = 1``: the gradient ``-y a sigmoid(-y <a, x>)`` has norm ``< ||a||_2 <= 1``
      (a supremum, approached but not attained).
    * ``B = log(1 + exp(N_2))`` with ``N_2 = domain.norm_bound(2)``: ``f`` is positive
      and increasing in ``-y <a, x> <= ||x||_2``; exact whenever ``N_2`` is.

    Args:
        dim: Dimension.
    """

    name = "logistic"

    def value(self, theta: np.ndarray, x: np.ndarray) -> float:
        """``logaddexp(0, -y <a, x>)``."""
        return float(np.logaddexp(0.0, -float(theta[-1]) * float(np.dot(theta[:-1], x))))

    def values(self, theta: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """Row-wise logistic loss."""
        return np.logaddexp(0.0, -self._margins(theta, xs))

    def total(self, thetas: np.ndarray, x: np.ndarray) -> tuple[float, np.ndarray]:
        """Summed logistic loss over the rows of ``thetas`` and its gradient."""
        t = np.asarray(thetas, dtype=np.float64)
        m = t[:, -1] * (t[:, :-1] @ np.asarray(x, dtype=np.float64))
        from scipy.special import expit  # imported when used: scipy is slow to import

        return float(np.logaddexp(0.0, -m).sum()), -(t[:, -1] * expit(-m)) @ t[:, :-1]

    def subgradient(self, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The gradient ``-y a sigmoid(-y <a, x>)``."""
        a = np.asarray(theta[:-1], dtype=np.float64)
        y = float(theta[-1])
        from scipy.special import expit  # imported when used: scipy is slow to import

        return (-y * float(expit(-y * float(np.dot(a, x))))) * a

    def bound(self, domain: Domain) -> float:
        """``log(1 + exp(norm_bound(2)))``."""
        self.check_domain(domain)
        return float(np.logaddexp(0.0, float(domain.norm_bound(2))))
