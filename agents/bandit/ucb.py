r"""Upper-confidence-bound learners for stochastic K-armed bandits, non-private.

Both play every arm once, then each round the arm of largest index (ties to the lowest
arm number: no randomness, the seed is unused), on rewards ``r = (hi - f) / (hi - lo)``
of the clipped losses (:mod:`agents.bandit.stochastic`). ``t`` is the number of rounds
played so far, ``N_a`` the pulls of arm ``a`` and ``mu_a`` its mean reward so far.

``ucb1`` -- :class:`UCB1`: Auer, Cesa-Bianchi, Fischer, "Finite-time analysis of the
multiarmed bandit problem" (Machine Learning 47, 2002), Fig. 1 (UCB1):

    I_a(t) = mu_a + sqrt(c ln t / N_a),     c = 2 (option ``exploration``).

Bound (their Thm. 1, ``c = 2``, rewards in ``[0, 1]``, any horizon ``n``):
``E[Reg_n] <= 8 sum_{a: Delta_a > 0} ln n / Delta_a + (1 + pi^2/3) sum_a Delta_a``
(:meth:`UCB1.regret_bound` in loss units).

``kl-ucb`` -- :class:`KLUCB`: Garivier & Cappe, "The KL-UCB algorithm for bounded
stochastic bandits and beyond" (COLT 2011, PMLR 19:359-376), Algorithm 1 with the
Bernoulli divergence ``d``:

    I_a(t) = max{q in [mu_a, 1] : N_a d(mu_a, q) <= ln t + c ln ln t},   c = 0
    (option ``c``; their Theorem 1 takes ``c = 3``, their experiments ``c = 0``).

Bound (Thm. 1 for rewards in ``[0, 1]``): for every ``eps > 0`` and suboptimal ``a``,
``E[N_a(n)] <= (1 + eps) ln n / d(mu_a, mu*) + C_1 ln ln n + C_2(eps) / n^beta(eps)``,
so ``limsup E[Reg_n] / ln n <= sum_a Delta_a / d(mu_a, mu*)`` (the Lai-Robbins constant
for Bernoulli arms). The term ``c ln ln t`` is taken as 0 while ``ln t <= 1``. The
index is :func:`~agents.bandit.stochastic.kl_ucb_index`. Both theorems assume i.i.d.
rewards per arm: no bound holds under the suite's ``switching`` or adaptive adversaries
(what happens there is measured in the ``private-stochastic`` section of
``docs/results.md``).
"""

from __future__ import annotations

import math

from agents.bandit.stochastic import StochasticArms, best_arm, kl_ucb_index
from agents.base import register
from dp_online_envs.validation import check_real

__all__ = ["KLUCB", "UCB1"]


class _IndexPolicy(StochasticArms):
    """Every arm once, then the arm of largest :meth:`index`; running reward sums."""

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.counts = [0] * self.k      # N_a
        self.sums = [0.0] * self.k      # sum of the rewards of arm a

    def means(self) -> list[float]:
        """``mu_a``, the mean reward of each arm so far (0 for an arm never pulled)."""
        return [s / n if n else 0.0 for s, n in zip(self.sums, self.counts)]

    def index(self, arm: int, t: int) -> float:
        """The arm's index after ``t`` rounds (every arm pulled at least once)."""
        raise NotImplementedError

    def indices(self) -> list[float]:
        """Every arm's index for the coming round (after ``self.t`` rounds)."""
        return [self.index(a, self.t) for a in range(self.k)]

    def act(self):
        if self.t < self.k:
            for a in range(self.k):  # every arm once (in arm order)
                if self.counts[a] == 0:
                    return a
        return best_arm(self.indices())

    def update(self, action, feedback) -> None:
        a = int(action)
        self.counts[a] += 1
        self.sums[a] += self.reward(self.clipped(feedback))
        self.t += 1


@register
class UCB1(_IndexPolicy):
    r"""UCB1 (Auer, Cesa-Bianchi, Fischer 2002, Fig. 1): ``mu_a + sqrt(c ln t / N_a)``.

    Args:
        exploration: ``c > 0`` of the bonus (default 2, the paper's; Thm. 1 needs 2).
        loss_range: ``(lo, hi)`` overriding the declared range of the feedback.
    """

    name = "ucb1"
    description = ("UCB1 (Auer-Cesa-Bianchi-Fischer 2002): mean + sqrt(2 ln t / N_a) on "
                   "rewards (hi - f)/(hi - lo); stochastic arms, non-private")
    paper = ("Auer, Cesa-Bianchi, Fischer, Finite-time analysis of the multiarmed bandit "
             "problem (Machine Learning 2002), Fig. 1, Thm. 1")

    def setup(self, exploration: float = 2.0,
              loss_range: tuple[float, float] | None = None) -> None:
        self._setup_arms(loss_range)
        self.exploration = check_real("exploration", exploration, 0.0, low_inclusive=False)

    def index(self, arm: int, t: int) -> float:
        n = self.counts[arm]
        return self.sums[arm] / n + math.sqrt(self.exploration * math.log(t) / n)

    def regret_bound(self, gaps) -> float:
        """Thm. 1 in loss units for these loss gaps ``Delta_a`` (0 for the best arm):
        ``sum_{Delta_a > 0} 8 w^2 ln T / Delta_a + (1 + pi^2/3) sum_a Delta_a``,
        ``w = hi - lo``, ``T`` the horizon (valid for ``exploration = 2``)."""
        w, n = self.width, self.problem.horizon
        gaps = [float(g) for g in gaps]
        return (sum(8.0 * w * w * math.log(n) / g for g in gaps if g > 0.0)
                + (1.0 + math.pi ** 2 / 3.0) * sum(gaps))


@register
class KLUCB(_IndexPolicy):
    r"""KL-UCB (Garivier & Cappe 2011, Alg. 1) with the Bernoulli divergence.

    Args:
        c: The ``c >= 0`` of the level ``ln t + c ln ln t`` (default 0, as in the
            paper's experiments; its Theorem 1 uses 3).
        loss_range: ``(lo, hi)`` overriding the declared range of the feedback.
    """

    name = "kl-ucb"
    description = ("KL-UCB (Garivier-Cappe 2011): max{q: N_a kl(mu_a, q) <= ln t}, Bernoulli "
                   "KL on rewards (hi - f)/(hi - lo); stochastic arms, non-private")
    paper = ("Garivier & Cappe, The KL-UCB algorithm for bounded stochastic bandits and "
             "beyond (COLT 2011), Alg. 1, Thm. 1")

    def setup(self, c: float = 0.0, loss_range: tuple[float, float] | None = None) -> None:
        self._setup_arms(loss_range)
        self.c = check_real("c", c, 0.0)

    def level(self, t: int) -> float:
        """``ln t + c ln ln t`` (the second term 0 while ``ln t <= 1``)."""
        lt = math.log(t)
        return lt + (self.c * math.log(lt) if lt > 1.0 else 0.0)

    def index(self, arm: int, t: int) -> float:
        n = self.counts[arm]
        mean = min(1.0, max(0.0, self.sums[arm] / n))  # rounding of the sum
        return kl_ucb_index(mean, self.level(t) / n)
