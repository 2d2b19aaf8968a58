"""Adaptive adversaries (they read the learner's past points) and the classic
sequence that defeats follow-the-leader."""

from __future__ import annotations

import numpy as np

from dp_online_envs.adversaries.base import Adversary
from dp_online_envs.validation import check_real


def _require_linear(loss, who: str) -> None:
    if not loss.linear_in_theta or loss.param_dim is None:
        raise ValueError(f"{who} needs a linear loss family, got {loss!r}")


class PunishFavoriteAdversary(Adversary):
    """Raises the loss of what the learner has played most.

    For a linear loss ``<theta, x>``, round t's parameter is the admissible parameter
    closest to ``scale * (xbar - c) / ||xbar - c||_inf`` where ``xbar`` is the mean of
    the learner's past points and ``c`` the domain's center, plus a small random
    perturbation ``noise * u``, ``u ~ U[-1,1]^d``. On arms with losses in ``[0,1]^K``
    this gives the most-played arm loss 1 and the least played ones loss 0.

    A family whose parameter lives in another space than the points (the submodular
    families, ``f(theta, S) = <theta, phi(S)>`` with a feature map ``phi``) is punished
    through its features: ``xbar - c`` is replaced by ``phibar - mean(phibar)``, the
    mean feature vector of the played sets centred on its own average coordinate, so
    the coordinates the learner's sets switch on more than average get the top weight.

    Args:
        noise: Amplitude of the random perturbation (breaks ties; 0 for none).
    """

    adaptive = True
    name = "punish-favorite"

    def __init__(self, noise: float = 0.05):
        self.noise = check_real("noise", noise, 0.0)

    def reset(self, np_random, domain, loss, horizon) -> None:
        _require_linear(loss, "punish-favorite")
        self._features = None
        if loss.param_dim != domain.dim:
            if not callable(getattr(loss, "features", None)):
                raise ValueError(
                    f"punish-favorite needs a loss whose parameter has the points' "
                    f"dimension ({domain.dim}) or a feature map `features`; {loss!r} has "
                    f"param_dim={loss.param_dim} and none")
            self._features = loss.features
        super().reset(np_random, domain, loss, horizon)
        self._sum = np.zeros(domain.dim if self._features is None else loss.param_dim)
        self._n = 0
        space = loss.param_space
        self._mid = 0.5 * (np.asarray(space.low) + np.asarray(space.high))
        self._half = 0.5 * (np.asarray(space.high) - np.asarray(space.low))

    def next_loss(self, t: int) -> np.ndarray:
        u = self.np_random.uniform(-1.0, 1.0, size=self.loss.param_dim)
        if self._n == 0:
            return self.loss.clip_param(self._mid + self.noise * self._half * u)
        mean = self._sum / self._n
        if self._features is None:
            direction = mean - self.domain.center
        else:
            direction = mean - np.mean(mean)
        top = np.max(np.abs(direction))
        direction = direction / top if top > 0 else direction
        theta = self._mid + self._half * direction + self.noise * self._half * u
        return self.loss.clip_param(theta)

    def observe(self, point: np.ndarray, theta: np.ndarray) -> None:
        self._sum += point if self._features is None else self._features(point[None, :])[0]
        self._n += 1


class AlternatingAdversary(Adversary):
    """The sequence on which follow-the-leader suffers linear regret.

    Along a direction v (two vertices' difference), the parameters are
    ``theta_1 = m + v/2`` then ``m - v, m + v, m - v, ...`` around the box midpoint m:
    the leader flips every round and always picks the vertex about to lose. On arms
    with losses in ``[0,1]^K`` this is (3/4, 1/4), (0, 1), (1, 0), (0, 1), ... on arms
    0 and 1 (other arms pay 1). Oblivious: it does not read the learner's actions.
    """

    name = "alternating"

    def reset(self, np_random, domain, loss, horizon) -> None:
        _require_linear(loss, "alternating")
        super().reset(np_random, domain, loss, horizon)
        space = loss.param_space
        low, high = np.asarray(space.low, float), np.asarray(space.high, float)
        self._m = 0.5 * (low + high)
        self._v = np.zeros(loss.param_dim)
        self._v[0], self._v[1 % loss.param_dim] = 0.5 * (high[0] - low[0]), -0.5 * (high[0] - low[0])
        if loss.param_is_box and np.all(low >= 0):
            # Losses in [low, high]: the two competing coordinates swing, others pay high.
            self._m = high.copy()
            self._m[:2] = 0.5 * (low[:2] + high[:2])

    def next_loss(self, t: int) -> np.ndarray:
        if t == 1:
            theta = self._m + 0.5 * self._v
        else:
            theta = self._m + (self._v if t % 2 == 1 else -self._v)
        return self.loss.clip_param(theta)
