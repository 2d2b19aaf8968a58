r"""AdaP-UCB and AdaP-KLUCB: epsilon-DP stochastic K-armed bandits with adaptive episodes.

Azize & Basu, "When Privacy Meets Partial Information: A Refined Analysis of
Differentially Private Bandits" (NeurIPS 2022; arXiv 2209.02570), Section 4:
Algorithm 1 (the framework), Lemma 1 and Theorem 6 (privacy), Eq. (7) (the indices),
Theorems 7 and 8 (regret).

``adap-ucb`` -- :class:`AdaPUCB`, ``adap-klucb`` -- :class:`AdaPKLUCB`. Algorithm 1:

1. play every arm once (an episode of one round each, in arm order);
2. for episodes ``l = 1, 2, ...`` starting at round ``t_l``: play the arm
   ``A_l = argmax_a I_a(t_l - 1, alpha)`` until its pull count has doubled,
   ``N_A(t) = 2 N_A(t_l - 1)`` (an episode of ``N_A(t_l - 1)`` rounds);
3. at the end of every episode release the private mean of ITS rewards only (the
   earlier rewards of the arm are forgotten) -- ``mu~_a`` of the last episode of ``a``,
   of ``m_a`` rounds, carrying ``Lap(1 / (epsilon m_a))``.

Indices (Eq. 7), on rewards ``r = (hi - f) / (hi - lo)`` (:mod:`agents.bandit.stochastic`):

    AdaP-UCB:    I_a = mu~_a + sqrt(alpha ln(2 t_l) / (2 m_a)) + alpha ln(t_l) / (epsilon m_a),
    AdaP-KLUCB:  I_a = max{q in [0, 1] : d(mu^_a, q) <= alpha ln(t_l) / m_a},
                 mu^_a = clip_[0,1](mu~_a + alpha ln(t_l) / (epsilon m_a)),

``d`` the Bernoulli divergence (:func:`~agents.bandit.stochastic.kl_ucb_index`),
``alpha > 3`` (default ``3.1``, the paper's experiments). Ties go to the lowest arm.

Privacy (Lemma 1, Thm. 6): ``epsilon``-DP for loss sequences differing in one round's
loss. Every round belongs to exactly one episode, and only the episode's sum is released;
the episodes are chosen from earlier releases only (post-processing), so one round's
loss moves one release, by at most the width ``hi - lo`` of the declared range. As
computed here (exact, like ``private-batched-htinf``, :mod:`agents.bandit.private_batched_htinf`): the
episode SUM of the clipped losses, each rounded to the grid ``g`` of
:class:`~agents.privacy.noise.DiscreteLaplaceNoise` (integer sensitivity ``k =
floor((hi-lo)/g) + 1``), plus one exact discrete Laplace integer of scale ``t = ceil(k /
epsilon)``, is released (``(sum + Z) g``, exact in float64); the mean reward
``(hi m - sum~) / ((hi - lo) m)`` is post-processing. Declared to ``dp_accounting`` as one
``DiscreteLaplaceDpEvent(1/t, k)``. An episode cut short by the end of the game is
released too (no decision depends on it).

Regret (rewards in ``[0, 1]``, i.i.d. per arm, ``alpha > 3``): AdaP-UCB (Thm. 7)
``E[Reg_T] <= sum_{Delta_a > 0} (16 alpha ln T / min{Delta_a, epsilon} + alpha /
(alpha - 3))`` (:meth:`AdaPUCB.regret_bound` in loss units); AdaP-KLUCB (Thm. 8, Bernoulli
rewards) ``sum_a (C_1(alpha) Delta_a ln T / min{d(mu_a, mu*), C_2 epsilon Delta_a} +
alpha / (alpha - 3))`` with unstated constants. No guarantee under the suite's switching
or adversarial instances: an arm's index then rests on one old episode.

Departures from the paper (``docs/algorithms/adap.md``): the index uses the true length
``m_a`` of the arm's last episode, which is ``N_a / 2`` as in Eq. (7) for every episode of
step 2 but ``1 = N_a`` for the initial pull (Eq. (7)'s ``N_a / 2`` would count half a
sample there); the noise is the exact discrete Laplace above (scale ``b = t g``, within
``2^-16`` relative above ``(hi - lo)/epsilon``) instead of a float Laplace; the indices
still use ``epsilon``.
"""

from __future__ import annotations

import math

from agents.bandit.stochastic import StochasticArms, best_arm, kl_ucb_index
from agents.base import register
from agents.common import NoiseQueue, exact_laplace_guarantee, scalar_release_noise
from agents.privacy.noise import DiscreteLaplaceNoise
from dp_online_envs.validation import check_real

__all__ = ["AdaPKLUCB", "AdaPUCB"]


class _AdaP(StochasticArms):
    """Algorithm 1 of Azize & Basu (2022): adaptive episodes with per-arm doubling, one
    exact Laplace release per episode; subclasses give the index (:meth:`index`).

    Attributes:
        alpha: The ``alpha > 3`` of the index.
        noise_strategy: The calibrated :class:`~agents.privacy.noise.DiscreteLaplaceNoise`
            of one episode sum (sensitivity ``hi - lo``); ``noise_scale``: its ``b``.
        pulls: ``N_a``. ``last_length``, ``last_sum``: ``m_a`` and the released noisy
            loss sum of arm ``a``'s last completed episode.
        episodes: Episodes started in this game (the initial pulls included).
    """

    private = True
    counterpart = None  # with the noise off it still forgets and doubles: not ucb1/kl-ucb

    def setup(self, alpha: float = 3.1, loss_range: tuple[float, float] | None = None,
              add_noise: bool = True) -> None:
        self._setup_arms(loss_range)
        self.alpha = check_real("alpha", alpha, 3.0, low_inclusive=False)
        self.noise_strategy = scalar_release_noise(DiscreteLaplaceNoise, self.epsilon,
                                                   self.width, self.secure, add_noise)
        self._grid = self.noise_strategy.grid
        self.noise_scale = self.noise_strategy.scale
        self.privacy = exact_laplace_guarantee(
            self.noise_strategy,
            f"on each episode sum of clipped losses in [{self.loss_lo:g}, {self.loss_hi:g}] "
            f"rounded to the grid (each round's loss in one episode), then the {self.name} "
            "index",
            exact="exact episode sums")

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.pulls = [0] * self.k
        self.last_length = [0] * self.k
        self.last_sum = [0.0] * self.k
        self.episodes = 0
        self._noise = NoiseQueue(self.noise_strategy)
        self._arm = 0
        self._left = 0           # rounds left in the current episode
        self._in_episode = 0     # rounds played in it
        self._int_sum = 0        # their grid-rounded losses (integers), noise on
        self._float_sum = 0.0    # their losses, noise off

    # ------------------------------------------------------------- the index
    def private_mean(self, arm: int) -> float:
        """``mu~_a``: the mean reward of arm ``a``'s last episode, from its release."""
        m = self.last_length[arm]
        return (self.loss_hi * m - self.last_sum[arm]) / (self.width * m)

    def bonus(self, arm: int, t: int) -> float:
        """``alpha ln(t) / (epsilon m_a)``: the privacy term of both indices."""
        return self.alpha * math.log(t) / (self.epsilon * self.last_length[arm])

    def index(self, arm: int, t: int) -> float:
        """``I_a`` at the start ``t = t_l`` of an episode (every arm released once)."""
        raise NotImplementedError

    def indices(self) -> list[float]:
        """Every arm's index for an episode starting at round ``t_l = self.t + 1``."""
        return [self.index(a, self.t + 1) for a in range(self.k)]

    # --------------------------------------------------------------- the API
    def act(self):
        if self._left == 0:  # a new episode
            if self.t < self.k:
                arm, length = self.t, 1  # the initial pull of arm t
            else:
                arm = best_arm(self.indices())
                length = self.pulls[arm]  # until N_a doubles
            self._arm, self._left, self._in_episode = arm, length, 0
            self.episodes += 1
        return self._arm

    def update(self, action, feedback) -> None:
        if int(action) != self._arm:
            raise ValueError(f"{self.name} plays arm {self._arm} for its whole episode; "
                             f"got feedback for arm {action!r}")
        f = self.clipped(feedback)
        if self._grid is None:
            self._float_sum += f
        else:
            # exact: f / g is a power-of-two scaling, round() is half-even to an int
            self._int_sum += round(f / self._grid)
        self.pulls[self._arm] += 1
        self._in_episode += 1
        self._left -= 1
        self.t += 1
        if self._left == 0 or self.t == self.problem.horizon:
            self._end_episode()

    def _end_episode(self) -> None:
        g = self._grid
        if g is None:  # NoNoise: exact sums, not private
            total = self.release(self._float_sum)
        else:
            # at most one release per round still to come, this one included
            left = self.problem.horizon - self.t + 1
            total = self.release((self._int_sum + self._noise.next(self.rng, left)) * g)
        a = self._arm
        self.last_sum[a] = float(total)
        self.last_length[a] = self._in_episode
        self._left, self._int_sum, self._float_sum = 0, 0, 0.0

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.problem.domain!r}, epsilon={self.epsilon}, "
                f"alpha={self.alpha}, noise_scale={self.noise_scale:.4g})")


@register
class AdaPUCB(_AdaP):
    r"""AdaP-UCB (Azize & Basu 2022, Alg. 1 with Eq. (7)); see the module docstring.

    Args:
        alpha: ``alpha > 3`` (default 3.1).
        loss_range: ``(lo, hi)`` overriding the declared range (the clip enforces it).
        add_noise: ``False`` switches the noise off: the exact clipped losses are
            released (NOT private: the guarantee's epsilon is infinite), the non-private
            limit (the same episodes and indices on exact sums).
    """

    name = "adap-ucb"
    description = ("AdaP-UCB (Azize-Basu NeurIPS 2022): UCB on the Laplace-noised mean of "
                   "each arm's last doubling episode; eps-DP stochastic arms, "
                   "O(sum ln T / min(Delta, eps))")
    paper = ("Azize & Basu, When Privacy Meets Partial Information: A Refined Analysis of "
             "Differentially Private Bandits (NeurIPS 2022), Alg. 1, Eq. (7), Thms. 6-7")

    def index(self, arm: int, t: int) -> float:
        m = self.last_length[arm]
        return (self.private_mean(arm) + math.sqrt(self.alpha * math.log(2 * t) / (2 * m))
                + self.bonus(arm, t))

    def regret_bound(self, gaps) -> float:
        """Thm. 7 in loss units for these loss gaps (0 for the best arm): ``sum_{Delta_a
        > 0} w (16 alpha ln T / min{Delta_a / w, epsilon} + alpha / (alpha - 3))``,
        ``w = hi - lo``."""
        w, a, n = self.width, self.alpha, self.problem.horizon
        return sum(w * (16.0 * a * math.log(n) / min(g / w, self.epsilon) + a / (a - 3.0))
                   for g in (float(x) for x in gaps) if g > 0.0)


@register
class AdaPKLUCB(_AdaP):
    r"""AdaP-KLUCB (Azize & Basu 2022, Alg. 1 with Eq. (7)); see the module docstring.

    Args:
        alpha: ``alpha > 3`` (default 3.1).
        loss_range: ``(lo, hi)`` overriding the declared range (the clip enforces it).
        add_noise: ``False`` switches the noise off: the exact clipped losses are
            released (NOT private: the guarantee's epsilon is infinite), the non-private
            limit (the same episodes and indices on exact sums).
    """

    name = "adap-klucb"
    description = ("AdaP-KLUCB (Azize-Basu NeurIPS 2022): KL-UCB on the Laplace-noised, "
                   "optimistically shifted mean of each arm's last doubling episode; eps-DP")
    paper = ("Azize & Basu, When Privacy Meets Partial Information: A Refined Analysis of "
             "Differentially Private Bandits (NeurIPS 2022), Alg. 1, Eq. (7), Thms. 6, 8")

    def index(self, arm: int, t: int) -> float:
        shifted = min(1.0, max(0.0, self.private_mean(arm) + self.bonus(arm, t)))
        return kl_ucb_index(shifted, self.alpha * math.log(t) / self.last_length[arm])
