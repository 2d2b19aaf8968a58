r"""Follow the approximate leader: Smith-Thakurta private FTAL and the non-private FTAL.

* ``pftal`` -- :class:`PFTAL`. Smith & Thakurta, "(Nearly) Optimal Algorithms for
  Private Online Learning in Full-information and Bandit Settings" (NeurIPS 2013),
  Algorithm 1 with Theorems 3 (privacy) and 4 (regret, H-strongly convex losses), and
  App. C / Theorem 11 (convex losses by regularization).
* ``ftal`` -- :class:`FTAL`, the same update without noise (Hazan, Agarwal & Kale,
  Machine Learning 2007; Smith-Thakurta eq. (4)).

Update: ``w_{t+1} = Proj_C((H_f/H) wbar_t - v_t / (H t))``, ``wbar_t`` the mean of the
played points, ``v_t`` the (noisy) sum of the gradients clipped to ``||z_t||_2 <= L``,
``H = H_f + lam``, ``H_f`` the problem's strong convexity. ``w_1 = Proj_C(0)`` when
``lam > 0``, else the domain's center.

Parameters (``p = d`` the dimension, ``||C|| = sup_{w in C} ||w||_2``,
``log T = max(1, ln T)``):

* strongly convex (``H_f > 0``): ``lam = 0``; regret (Thm. 4)
  ``O(p (L + H ||C||)^2 log^2.5 T / (eps H))``;
* convex (``H_f = 0``, Thm. 11): ``lam = (L / ||C||) sqrt(p log^2.5 T / (eps' T))``,
  ``eps' = min(eps, p log^1.5 T)`` (clamp: the non-private limit); regret
  ``O(sqrt(p T log^2.5 T / eps') L ||C||)``; FTAL: ``lam = (L/||C||) sqrt(log T / T)``.

Privacy (Thm. 3; replace-one sensitivity ``2L``, NOT the paper's ``L``): the counter
(default the binary tree, App. A Alg. 2, ``levels = floor(log2 T) + 1``) gets
coordinatewise Laplace for l1 sensitivity ``2 L sqrt(d)``, per node scale
``levels 2 L sqrt(d) / eps`` (``delta = 0``), or Gaussian for l2 sensitivity ``2L``
(``delta > 0``, an extension).

Derivations, the paper's calibration error and the clamp: ``docs/algorithms/pftal.md``.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np

from agents.base import Agent, register
from agents.common import clipped_gradient, env_action, ftal_leader, split_rng, start_point
from agents.counter_agent import CounterAgent
from agents.privacy.noise import default_noise
from dp_online_envs.validation import check_real

__all__ = [
    "FTAL",
    "PFTAL",
    "ftal_regularization",
    "pftal_regularization",
    "st_log",
]


# --------------------------------------------------------------------------- helpers
def st_log(horizon: int) -> float:
    """The ``log T`` of Smith-Thakurta's formulas: ``max(1, ln T)`` (natural log;
    clamped to 1 so that ``T <= 2`` keeps finite, positive parameters)."""
    return max(1.0, math.log(int(horizon)))


def pftal_regularization(horizon: int, dim: int, epsilon: float, lipschitz: float,
                         radius: float) -> float:
    """App. C / Thm. 11 regularization ``lam = (L/||C||) sqrt(p log^2.5 T / (eps' T))``
    with ``eps' = min(eps, p log^1.5 T)`` and ``log T = max(1, ln T)`` (module docstring)."""
    lg = st_log(horizon)
    if float(epsilon) >= dim * lg**1.5:  # eps' = p log^1.5 T: exactly FTAL's lam
        return ftal_regularization(horizon, lipschitz, radius)
    return (lipschitz / radius) * math.sqrt(dim * lg**2.5 / (float(epsilon) * horizon))


def ftal_regularization(horizon: int, lipschitz: float, radius: float) -> float:
    """Non-private ``lam = (L/||C||) sqrt(log T / T)``: the limit of
    :func:`pftal_regularization` as ``eps -> inf``; it balances Claim 10's
    ``2 L^2 log T / lam`` against the bias ``lam T ||C||^2 / 2`` up to a constant,
    for regret ``O(L ||C|| sqrt(T log T))``."""
    return (lipschitz / radius) * math.sqrt(st_log(horizon) / horizon)


# ------------------------------------------------------------------------ base class
class _ApproximateLeader(CounterAgent, Agent):
    """Shared FTAL machinery (see the module docstring); subclasses set ``private``."""

    feedback = "full"
    requires = ("lipschitz",)

    def setup(self, counter: str = "tree", regularization: float | None = None) -> None:
        p = self.problem
        dom = p.domain
        if isinstance(dom.action_space, gym.spaces.MultiBinary):
            msg = (f"{self.name} plays points of a convex set; {dom!r} only accepts subsets "
                   f"(use submod-pftal / hazan-kale-submodular)")
            raise ValueError(msg)  # noqa: TRY004  (a problem it cannot play)
        if not p.loss.convex:
            raise ValueError(f"{self.name} needs convex losses, got {p.loss!r}")
        T, d = p.horizon, p.dim
        #: ``H_f``: the problem's own strong convexity modulus.
        self.loss_strong_convexity = float(p.strong_convexity)
        #: ``||C|| = sup_{w in C} ||w||_2``.
        self.radius = float(dom.norm_bound(2))
        #: ``L``: the clipping bound of every gradient (the problem's Lipschitz constant).
        self.gradient_bound = float(p.lipschitz)
        if regularization is None:
            if self.loss_strong_convexity > 0:
                lam = 0.0
            else:
                if not self.radius > 0:
                    raise ValueError(f"{self.name}: the domain {dom!r} has sup ||w|| = 0; "
                                     f"pass regularization=")
                lam = self._default_regularization(T, d)
        else:
            lam = check_real("regularization", regularization, 0.0)
        #: ``lam``: weight of the App. C regularizer ``(lam/2)||w||^2`` (0: none).
        self.regularization = lam
        #: ``H = H_f + lam``: strong convexity modulus used by the leader.
        self.H = self.loss_strong_convexity + lam
        if not self.H > 0:
            raise ValueError(f"{self.name} needs H_f + regularization > 0: the losses are not "
                             f"strongly convex, so pass regularization > 0")
        if self.private:
            noise = default_noise(self.delta)
            #: Counter sensitivity: ``2 L sqrt(d)`` (l1, Laplace) or ``2 L`` (l2, Gaussian).
            self.sensitivity = 2.0 * self.gradient_bound * (
                math.sqrt(d) if noise == "laplace" else 1.0)
            self.privacy = self._use_counter(counter, noise, self.sensitivity).guarantee()

    def _default_regularization(self, horizon: int, dim: int) -> float:
        raise NotImplementedError

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        noise_rng, self._play_rng = split_rng(self.rng, 2)
        dom = self.problem.domain
        d = self.problem.dim
        self._counter = self._make_counter(noise_rng) if self.private else None
        self._v = np.zeros(d)  # (noisy) sum of the clipped gradients
        self._w_sum = np.zeros(d)
        #: Number of gradients clipped to ``||g||_2 <= L`` (beyond rounding).
        self.clipped_gradients = 0
        if self.regularization > 0:
            self._w = dom.project(np.zeros(d))
        else:
            self._w = start_point(dom)

    @property
    def point_played(self) -> np.ndarray:
        """The FTAL point ``w_t`` of the coming round."""
        return self._w.copy()

    def act(self):
        return env_action(self.problem.domain, self._w, self._play_rng)

    def update(self, action, feedback) -> None:
        theta = self.clip_feedback(feedback)
        g, clipped = clipped_gradient(self.problem.loss, theta, self._w, self.gradient_bound)
        self.clipped_gradients += int(clipped)
        self._w_sum += self._w
        if self.private:
            self._v = self.release(self._counter.add(g))
        else:
            self._v += g
        self.t += 1
        linear = self._v + self.regularization * self._w_sum
        self._w = ftal_leader(self.problem.domain, linear, self._w_sum, self.t, self.H)


# ---------------------------------------------------------------------------- PFTAL
@register
class PFTAL(_ApproximateLeader):
    r"""Smith-Thakurta private follow the approximate leader (NeurIPS 2013, Alg. 1).

    ``w_{t+1} = Proj_C(wbar_t - v_t/(H t))`` with ``v_t`` the continual counter's noisy
    sum of the clipped gradients (default ``counter="tree"``, App. A Alg. 2); for convex
    (not strongly convex) problems with the App. C regularizer. Parameters, sensitivity,
    clamps and rates: see the module docstring (Thm. 3 privacy, Thm. 4 strongly convex
    regret ``O(p (L + H||C||)^2 log^2.5 T / (eps H))``, Thm. 11 convex regret
    ``O~(sqrt(p T / eps))``).

    Attributes (after construction): ``H``, ``regularization`` (``lam``),
    ``gradient_bound`` (``L``), ``sensitivity``, ``noise`` (``"laplace"``/``"gaussian"``),
    ``noise_scale`` (per-node Laplace b / Gaussian sigma), ``levels``, ``privacy``.

    Args:
        counter: Continual counter (a key of :data:`agents.privacy.COUNTERS`).
        regularization: ``lam`` override (``>= 0``); default as in the module docstring.
    """

    name = "pftal"
    description = ("Smith-Thakurta private FTAL (Alg. 1): projection of wbar - v/(Ht) with a "
                   "tree-aggregated noisy gradient sum; App. C regularization for convex losses")
    paper = ("Smith & Thakurta, (Nearly) Optimal Algorithms for Private Online Learning in "
             "Full-information and Bandit Settings, NeurIPS 2013: Alg. 1, Thm. 3/4/11, App. A/C")
    private = True
    counterpart = "ftal"

    def _default_regularization(self, horizon: int, dim: int) -> float:
        return pftal_regularization(horizon, dim, self.epsilon, self.gradient_bound,
                                    self.radius)


@register
class FTAL(_ApproximateLeader):
    r"""Non-private follow the approximate leader (Hazan, Agarwal & Kale 2007).

    The update of :class:`PFTAL` with exact gradient sums: for H-strongly convex
    losses regret ``<= 2 (L + H D)^2 log T / H`` (Smith-Thakurta Fact 9 + Claim 10,
    ``D`` the diameter; HAK07 Thm. 1 for the strongly convex case); for convex losses
    the App. C regularizer with ``lam = (L/||C||) sqrt(log T / T)``
    (:func:`ftal_regularization`), regret ``O(L ||C|| sqrt(T log T))``.

    Args:
        regularization: ``lam`` override.
    """

    name = "ftal"
    description = ("non-private follow the approximate leader (Hazan-Agarwal-Kale 2007): "
                   "log T regret for strongly convex losses, regularized for convex ones")
    paper = ("Hazan, Agarwal & Kale, Logarithmic regret algorithms for online convex "
             "optimization, Machine Learning 2007; Smith & Thakurta 2013, eq. (4), App. C")
    private = False

    def setup(self, regularization: float | None = None) -> None:
        super().setup(counter="tree", regularization=regularization)

    def _default_regularization(self, horizon: int, dim: int) -> float:
        return ftal_regularization(horizon, self.gradient_bound, self.radius)
