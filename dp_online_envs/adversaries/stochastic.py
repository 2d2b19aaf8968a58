"""Stochastic adversaries: i.i.d. losses around a mean, switching and drifting means,
and the multi-armed-bandit lower-bound instance."""

from __future__ import annotations

import math

import numpy as np
from gymnasium.spaces import Box

from dp_online_envs.adversaries.base import Adversary
from dp_online_envs.domains.ground_set import GroundSet
from dp_online_envs.losses.submodular import ConcaveModularLoss
from dp_online_envs.validation import check_int, check_real


def _is_symmetric(loss, rng: np.random.Generator, trials: int = 16) -> bool:
    """Whether the admissible parameter set looks symmetric and convex: ``-theta`` and
    the half-differences ``(z - z')/2`` of samples admissible (what the draws
    ``mu + spread (z - z')/2`` need). A set of labelled examples (``y in {-1, +1}``,
    hinge and logistic losses) is symmetric but not convex: ``(y - y')/2 = 0`` is no
    label. The check reuses its samples, so it draws exactly ``trials`` of them from
    ``rng`` on every set it accepts."""
    prev = None
    for _ in range(trials):
        z = loss.sample_param(rng)
        if not np.allclose(loss.clip_param(-z), -z, atol=1e-12):
            return False
        if prev is not None:
            h = 0.5 * (z - prev)
            if not np.allclose(loss.clip_param(h), h, atol=1e-12):
                return False
        prev = z
    return True


def _fixed_clip(loss, theta: np.ndarray) -> np.ndarray:
    """``clip_param(theta)``, re-clipped until it is a fixed point of ``clip_param``: a
    projection onto an l2 ball can round to norm ``1 + 1 ulp``, and a learner that clips
    the draw again would count it as clipped feedback."""
    theta = loss.clip_param(theta)
    for _ in range(4):
        again = loss.clip_param(theta)
        if np.array_equal(again, theta):
            break
        theta = again
    return theta


class StochasticAdversary(Adversary):
    """i.i.d. losses with mean ``mu`` (so the best action in expectation is unique a.s.).

    Draws, chosen so that ``E[theta_t] = mu`` exactly and ``theta_t`` stays admissible:

    * box parameter sets (``loss.param_is_box``): coordinatewise two-point draws
      ``theta_{t,i} in {low_i, high_i}`` with ``P(high_i) = (mu_i - low_i)/(high_i - low_i)``
      (Bernoulli losses for ``[0,1]^K``);
    * symmetric sets K = -K: ``theta_t = mu + spread * (z - z')/2`` with z, z' i.i.d. from
      ``sample_param`` and ``mu in (1 - spread) K``;
    * other sets: ``clip_param(mu + spread * (z - z')/2)``; the mean is then not exact and
      :attr:`mean_param` is ``None`` (no pseudo-regret).

    Tilt. With ``tilt = tau > 0`` the random default mean ``mu_0`` is pulled towards a
    random extreme point ``v`` of the parameter set, ``mu = (1 - tau) mu_0 + tau v``:
    for box sets ``v`` is a uniformly random vertex of the box (each coordinate at its
    low or high end with probability 1/2), for other sets ``v = clip_param(z)`` with
    ``z`` a far point in a uniformly random direction (a boundary point of the set).
    The losses then share a planted direction and the best fixed action sits far
    from the center of the domain (what :class:`PlantedAdversary` is for). ``tilt = 0``
    draws nothing extra: the same seed gives the same losses as without the option.

    Args:
        mean: The mean parameter; by default a random one with, for box sets of linear
            losses on arms/simplices, a best coordinate lower than the rest by ``gap``.
        gap: Margin of the best coordinate in the default box mean.
        spread: Size of the fluctuations for non-box sets, in (0, 1].
        tilt: Pull of the random mean towards a random extreme point, in [0, 1]
            (ignored when ``mean`` is given).

    Raises:
        ValueError: On ``spread``, ``gap`` or ``tilt`` out of range.
    """

    name = "stochastic"

    def __init__(self, mean: np.ndarray | None = None, gap: float = 0.1, spread: float = 0.5,
                 tilt: float = 0.0):
        check_real("spread", spread, 0.0, 1.0, low_inclusive=False)
        check_real("gap", gap, 0.0, 1.0, high_inclusive=False)
        check_real("tilt", tilt, 0.0, 1.0)
        self._given_mean = None if mean is None else np.asarray(mean, dtype=np.float64)
        self.gap = float(gap)
        self.spread = float(spread)
        self.tilt = float(tilt)

    def reset(self, np_random, domain, loss, horizon) -> None:
        super().reset(np_random, domain, loss, horizon)
        self._box = bool(loss.param_is_box)
        self._symmetric = (not self._box) and _is_symmetric(loss, np_random)
        space = loss.param_space
        self._low = np.asarray(space.low, dtype=np.float64)
        self._width = np.asarray(space.high, dtype=np.float64) - self._low
        if self._given_mean is not None:
            mu = self._given_mean
            if mu.shape != (loss.param_dim,):
                raise ValueError(f"mean has shape {mu.shape}, expected ({loss.param_dim},)")
            if not np.allclose(loss.clip_param(mu), mu):
                raise ValueError("mean is not an admissible parameter of the loss family")
        else:
            mu = self._random_mean()
        self._set_mean(mu)

    def _random_mean(self) -> np.ndarray:
        mu = self._untilted_mean()
        if self.tilt > 0.0:
            mu = (1.0 - self.tilt) * mu + self.tilt * self._extreme_point()
        return mu

    def _untilted_mean(self) -> np.ndarray:
        rng = self.np_random
        if self._box:
            # Means in the middle half of the box, one coordinate lowered by the gap.
            mu = self._low + self._width * rng.uniform(0.3, 0.7, size=self._low.shape)
            best = int(rng.integers(self._low.size))
            mu[best] = self._low[best] + self._width[best] * max(0.3 - self.gap, 0.0)
            return mu
        return self.loss.sample_param(rng)

    def _extreme_point(self) -> np.ndarray:
        """A random extreme point of the parameter set (see the class docstring)."""
        rng = self.np_random
        if self._box:
            return self._low + self._width * (rng.random(self._low.shape) < 0.5)
        z = rng.standard_normal(self.loss.param_dim)
        z *= 1e6 * (1.0 + float(np.max(np.abs(self._width)))) / max(float(np.linalg.norm(z)), 1e-12)
        return self.loss.clip_param(z)

    def _set_mean(self, mu: np.ndarray) -> None:
        if self._box:
            self._mu = mu
            self._p_high = np.divide(mu - self._low, self._width, out=np.zeros_like(mu),
                                     where=self._width > 0)
        else:
            # Shrink into (1 - spread) K so that mu + spread * K stays admissible.
            self._mu = (1.0 - self.spread) * mu if self._symmetric else mu

    def _draw(self) -> np.ndarray:
        rng = self.np_random
        if self._box:
            return self._low + self._width * (rng.random(self._mu.shape) < self._p_high)
        z1 = self.loss.sample_param(rng)
        z2 = self.loss.sample_param(rng)
        theta = self._mu + 0.5 * self.spread * (z1 - z2)
        return theta if self._symmetric else _fixed_clip(self.loss, theta)

    def next_loss(self, t: int) -> np.ndarray:
        return self._draw()

    def next_losses(self, t: int, n: int) -> np.ndarray:
        """``n`` rounds at once: for box parameter sets one ``random((n, dim))`` call,
        which yields the same numbers as ``n`` successive ``random(dim)`` calls of
        :meth:`next_loss` (one double per 64-bit word, in order), so the losses are
        those of the round-by-round game, bit for bit. Subclasses that redraw their
        mean between rounds (switching, drifting) and non-box sets draw round by round.
        """
        if not self._box_block():
            return super().next_losses(t, n)
        u = self.np_random.random((check_int("n", n, 1), self._mu.size))
        return self._low + self._width * (u < self._p_high)

    @property
    def mean_param(self) -> np.ndarray | None:
        return self._mu.copy() if (self._box or self._symmetric) else None

    def _box_block(self) -> bool:
        """Whether :meth:`next_losses` is the one-call box draw."""
        return self._box and type(self).next_loss is StochasticAdversary.next_loss


class BoxLossRing:
    """Rings of drawn rounds for B box-parameter stochastic adversaries (the one-call
    draw of :meth:`StochasticAdversary.next_losses`), one row per game: the vector
    games (:mod:`dp_online_envs.envs.vector_env`) read round ``c``'s parameters of every
    game from slot ``c % width`` at once, whatever round each game is in.

    ``u[b, slot]`` holds game ``b``'s uniforms of the round it plays at that slot; the
    round's parameters are ``low + width * (u < p_high)``, the scalar draw's expression,
    so the same numbers. Each value is one 64-bit word of the game's PCG64 generator
    (numpy turns each word into one double, in order), which is what :meth:`rewind`
    relies on.

    Args:
        num_envs: B.
        width: Slots per ring (the longest block drawn at once).
        param_dim: P, the parameters per round.
    """

    def __init__(self, num_envs: int, width: int, param_dim: int) -> None:
        self.u = np.zeros((num_envs, width, param_dim))
        self.low = np.zeros((num_envs, param_dim))
        self.width = np.zeros((num_envs, param_dim))
        self.p_high = np.zeros((num_envs, param_dim))

    @staticmethod
    def accepts(adversary: Adversary) -> bool:
        """Whether ``adversary`` (reset) draws its rounds as this ring holds them."""
        return isinstance(adversary, StochasticAdversary) and adversary._box_block()

    def start(self, b: int, adversary: StochasticAdversary) -> None:
        """Game ``b`` starts with ``adversary`` (just reset): its box and mean."""
        self.low[b] = adversary._low
        self.width[b] = adversary._width
        self.p_high[b] = adversary._p_high

    def fill(self, b: int, adversary: StochasticAdversary, t: int,
             spans: tuple[tuple[slice, slice], ...]) -> None:
        """Draw game ``b``'s next rounds (from round ``t``) into the ring: ``spans``
        pairs ring slots with positions in the block, in order; the calls fill the
        slots as ``next_losses``'s one ``random((n, P))`` call (same words, in order)."""
        for slots, _ in spans:
            adversary.np_random.random(out=self.u[b, slots])

    def thetas(self, slot: int) -> np.ndarray:
        """Every game's parameters ``(B, P)`` at ``slot``."""
        return self.low + self.width * (self.u[:, slot] < self.p_high)

    def rewind(self, b: int, generator: np.random.Generator, rounds: int) -> bool:
        """Take ``rounds`` drawn rounds of game ``b`` back from its generator (they were
        drawn ahead and not played): the generator is then where the scalar game's is.
        Returns True (this ring can).

        ``advance`` also drops the generator's buffered half word (a 32-bit draw, such
        as the adversary's ``integers`` at reset, keeps the other half of its 64-bit
        word for the next one); the drawn doubles never touch it, so it is put back.
        """
        bits = generator.bit_generator
        before = bits.state
        bits.advance(-rounds * self.u.shape[2])
        state = bits.state
        state["has_uint32"], state["uinteger"] = before["has_uint32"], before["uinteger"]
        bits.state = state
        return True


class PlantedAdversary(StochasticAdversary):
    """i.i.d. losses with a planted direction: :class:`StochasticAdversary` with
    ``tilt = 0.9`` by default.

    The mean parameter is pulled most of the way to a random vertex of the parameter
    box (a random boundary point for other sets), so the best fixed action of the mean
    loss is far from the domain's center and standing still there costs a constant per
    round (linear regret), while the draws keep some randomness. The default adversary
    of the convex-loss ids.

    Args:
        tilt: In [0, 1], see :class:`StochasticAdversary` (default 0.9).
        gap, spread: As in :class:`StochasticAdversary`.
    """

    name = "planted"

    def __init__(self, tilt: float = 0.9, gap: float = 0.1, spread: float = 0.5):
        super().__init__(None, gap=gap, spread=spread, tilt=tilt)


class SwitchingAdversary(StochasticAdversary):
    """Piecewise-stationary losses: the mean is redrawn every ``period`` rounds.

    Args:
        period: Rounds between switches (default: a quarter of the horizon).
        gap, spread: As in :class:`StochasticAdversary`.
    """

    name = "switching"

    def __init__(self, period: int | None = None, gap: float = 0.1, spread: float = 0.5):
        super().__init__(None, gap=gap, spread=spread)
        self.period = None if period is None else check_int("period", period, 1)

    def reset(self, np_random, domain, loss, horizon) -> None:
        super().reset(np_random, domain, loss, horizon)
        self._period = int(self.period) if self.period else max(1, int(horizon) // 4)

    def next_loss(self, t: int) -> np.ndarray:
        if t > 1 and (t - 1) % self._period == 0:
            self._set_mean(self._random_mean())
        return self._draw()

    @property
    def mean_param(self) -> None:
        return None


class DriftingAdversary(StochasticAdversary):
    """A slowly drifting mean: ``mu_t = (1 - rate) mu_{t-1} + rate z_t``, z_t random.

    The convex combination keeps the mean admissible; draws around ``mu_t`` are as in
    :class:`StochasticAdversary`.
    """

    name = "drifting"

    def __init__(self, rate: float = 0.01, spread: float = 0.5):
        super().__init__(None, gap=0.0, spread=spread)
        self.rate = check_real("rate", rate, 0.0, 1.0, low_inclusive=False)

    def next_loss(self, t: int) -> np.ndarray:
        if t > 1:
            base = self._mu / (1.0 - self.spread) if self._symmetric else self._mu
            target = self._random_mean()
            self._set_mean((1.0 - self.rate) * base + self.rate * target)
        return self._draw()

    @property
    def mean_param(self) -> None:
        return None


class LowerBoundAdversary(StochasticAdversary):
    """The K-armed bandit lower-bound instance (Auer et al. 2002, Thm 5.1).

    Bernoulli losses with mean 1/2 on every arm but one, drawn uniformly at random,
    whose mean is ``1/2 - gap`` with ``gap = min(1/4, c * sqrt(K / T))``: no learner can
    tell the arms apart in fewer than about ``1/gap^2`` pulls each, so the expected
    regret is of order ``sqrt(K T)``. Needs a linear loss with parameters in ``[0,1]^K``.

    Args:
        c: The constant in the gap (clamped so the gap is at most 1/4).
    """

    name = "lower-bound"

    def __init__(self, c: float = 1.0):
        super().__init__(None)
        self.c = check_real("c", c, 0.0, low_inclusive=False)

    def reset(self, np_random, domain, loss, horizon) -> None:
        if not loss.param_is_box:
            raise ValueError("the lower-bound instance needs losses with box parameters [0,1]^K")
        super().reset(np_random, domain, loss, horizon)

    def _random_mean(self) -> np.ndarray:
        k = self._low.size
        self.instance_gap = min(0.25, self.c * math.sqrt(k / self.horizon))
        mu = self._low + 0.5 * self._width
        best = int(self.np_random.integers(k))
        mu[best] -= self.instance_gap * self._width[best]
        return mu


class PlantedVertexAdversary(StochasticAdversary):
    """i.i.d. losses, linear in their parameters, whose mean has one planted vertex of
    the domain as its unique minimizer, with a stated margin.

    At reset a random direction ``c`` is drawn: the coordinates ``linspace(-1, 1, d)``
    in a uniformly random order. Then, for linear losses with parameters in a box
    ``[-w, w]`` (``w > 0`` coordinatewise, the ``"linf"`` set of
    :class:`~dp_online_envs.losses.LinearLoss`), on

    * **0/1 polytopes** (the domain's action box lies in ``[0, 1]^d``, or its actions
      are arms or subsets, and its vertex ``x* = domain.linear_minimizer(c)`` is a 0/1
      point -- matroid, flow and Birkhoff polytopes, simplices):
      ``mu = gap w (1 - 2 x*)``. For every ``y`` in ``[0, 1]^d``,
      ``<mu, y - x*> = gap sum_i w_i |y_i - x*_i|``, so ``x*`` is the unique best point
      of the domain, every other vertex ``v`` (a 0/1 point) loses at least
      ``gap min_i w_i`` a round to it (``gap`` times ``|v xor x*|`` when ``w = 1``), and
      trivial play at the center ``c_D`` loses ``gap sum_i w_i |c_{D,i} - x*_i|``.
    * **other domains**: ``mu = gap w c``. On a submodular base polytope (Edmonds'
      greedy), whose vertices are the greedy vertices of the orders of the ground set,
      the coordinates of ``mu`` are distinct with gaps ``2 gap w / (d - 1)`` between
      consecutive ones (for ``w = 1``), so the best vertex is unique: the greedy vertex
      of ``mu``'s increasing order, and since the second-best vertex of a linear program
      is adjacent to the best, the margin is the least cost of swapping two consecutive
      elements of that order, ``(2 gap / (d - 1)) min_k (f(S_{k-1} + a_k) - f(S_{k-1})
      - f(S_{k+1}) + f(S_{k-1} + a_{k+1}))`` -- for ``f(S) = g(|S|)``,
      ``(2 gap / (d - 1)) min_k (2 g(k) - g(k-1) - g(k+1))``. On the cube
      ``[-1, 1]^d`` the best vertex is ``-sign(c)`` with margin ``2 gap min_i w_i
      |c_i|``: ``2 gap / (d - 1)`` for ``w = 1`` and an even ``d``; an odd ``d`` has
      ``c_i = 0`` for one ``i``, so two best vertices.

    and, for a concave-of-modular loss, on

    * **subsets**
      (:class:`~dp_online_envs.losses.ConcaveModularLoss` on a
      :class:`~dp_online_envs.domains.GroundSet`, parameters in ``[0, 1]``): the planted
      set ``S* = domain.linear_minimizer(c)`` (the ``floor(n/2)`` elements with
      ``c_i < 0``, ``c`` of length ``n``) and the mean of
      :meth:`~dp_online_envs.losses.ConcaveModularLoss.planted_mean`: equal weights on
      the concave terms, the modular rewards ``(1 +- gap)/2`` on and off ``S*``, so
      ``S*`` is the unique best set, every other set worse by at least :attr:`margin`,
      ``(M / Z) (m_min / (c_max + m_min) - (1 - gap)/2)`` a round (0.01877 at ``n = 8``
      with the default groups and ``gap = 0.9``).

    The draws are those of :class:`StochasticAdversary` on a box: coordinatewise
    two-point draws ``theta_{t,i} in {low_i, high_i}`` (``{-w_i, w_i}``) with mean
    ``mu_i`` exactly (:attr:`mean_param` is ``mu``).

    Attributes:
        planted: The planted vertex (set), after reset.
        margin: On subsets under a concave-of-modular loss, the stated margin per round
            after reset; ``None`` otherwise (the margins above).

    Args:
        gap: ``gap`` in (0, 1] (the mean's size relative to the box; default 0.9, so
            that each coordinate of a 0/1 draw keeps a variance of 0.19). With ``gap = 1``
            the 0/1 draws are deterministic.

    Raises:
        ValueError: On ``gap`` out of range, or (at reset) a loss family whose
            parameter set is not a box ``[-w, w]`` with ``w > 0`` (other than a
            concave-of-modular loss on a ground set), or a ``gap`` too small to plant a
            unique best set of that loss.
    """

    name = "planted-vertex"

    def __init__(self, gap: float = 0.9):
        super().__init__(None, gap=0.0)
        self.gap = check_real("gap", gap, 0.0, 1.0, low_inclusive=False)

    def reset(self, np_random, domain, loss, horizon) -> None:
        self.margin = None
        self._plants_set = isinstance(loss, ConcaveModularLoss)
        if self._plants_set:
            if not (isinstance(domain, GroundSet) and domain.n == loss.n):
                raise ValueError(f"planted-vertex plants a set of {loss!r} on a ground set "
                                 f"of {loss.n} elements, got the domain {domain!r}")
            super().reset(np_random, domain, loss, horizon)
            return
        space = loss.param_space
        low, high = (np.asarray(space.low, dtype=np.float64),
                     np.asarray(space.high, dtype=np.float64))
        if not (loss.param_is_box and np.array_equal(low, -high) and np.all(high > 0)):
            raise ValueError(f"planted-vertex needs loss parameters in a box [-w, w] with "
                             f"w > 0 (a linear loss with theta_set='linf') or a "
                             f"concave-modular loss on a ground set, got {loss!r} with "
                             f"parameters in [{low.min()}, {high.max()}]; another "
                             f"adversary (e.g. 'stochastic') plays any loss family")
        super().reset(np_random, domain, loss, horizon)

    def _random_mean(self) -> np.ndarray:
        if self._plants_set:
            n = self.domain.dim
            c = self.np_random.permutation(np.linspace(-1.0, 1.0, n)) if n > 1 else -np.ones(1)
            self.planted = np.asarray(self.domain.linear_minimizer(c), dtype=np.float64)
            mu, self.margin = self.loss.planted_mean(self.planted, self.gap)
            return mu
        d = self._low.size
        w = 0.5 * self._width
        c = self.np_random.permutation(np.linspace(-1.0, 1.0, d)) if d > 1 else -np.ones(1)
        #: The planted vertex: the unique minimizer of the mean loss over the domain.
        self.planted = np.asarray(self.domain.linear_minimizer(c), dtype=np.float64)
        space = self.domain.action_space
        in_unit_box = (not isinstance(space, Box)  # arms and subsets: 0/1 points
                       or bool(np.all(space.low >= 0.0) and np.all(space.high <= 1.0)))
        if in_unit_box and bool(np.all((self.planted == 0.0) | (self.planted == 1.0))):
            return self.gap * w * (1.0 - 2.0 * self.planted)
        return self.gap * w * c
