r"""Follow the approximate leader: Smith-Thakurta private FTAL and the non-private FTAL.

* ``pftal`` -- :class:`PFTAL`, Smith & Thakurta, "(Nearly) Optimal Algorithms for
  Private Online Learning in Full-information and Bandit Settings" (NeurIPS 2013),
  Algorithm 1 (PFTAL) with Theorems 3 (privacy) and 4 (regret) for H-strongly convex
  losses, and the regularization of Appendix C (Theorem 11) for general convex losses.
* ``ftal`` -- :class:`FTAL`, the same update without noise: follow the approximate
  leader of Hazan, Agarwal & Kale (Machine Learning 2007) in the quadratic-lower-bound
  form of Smith-Thakurta eq. (4).

The update as a projection
--------------------------
Both learners play, after ``t`` rounds,

    w_{t+1} = argmin_{w in C} <v_t, w> + (H/2) sum_{tau<=t} ||w - w_tau||^2,

with ``v_t`` the (noisy, for PFTAL) sum of the gradients ``nabla f_tau(w_tau)``.
Since ``sum_tau ||w - w_tau||^2 = t ||w - wbar_t||^2 + const`` (``wbar_t`` the mean
of the played points), the objective is ``(H t / 2) ||w - (wbar_t - v_t/(H t))||^2 +
const``, so the leader is ONE Euclidean projection:

    w_{t+1} = Proj_C(wbar_t - v_t / (H t))            (:func:`ftal_leader`).

Regularized form (App. C). For losses that are not strongly convex, Algorithm 1 runs
on ``h_t(w) = f_t(w) + (lam/2)||w||^2``, whose gradient at ``w_t`` is
``nabla f_t(w_t) + lam w_t``; with total modulus ``H = H_f + lam`` (``H_f`` the
problem's own strong convexity, 0 for convex losses) the same formula applies with
``v_t + lam sum_tau w_tau`` as the linear term, i.e.
``w_{t+1} = Proj_C((H_f/H) wbar_t - v_t/(H t))`` -- for ``H_f = 0`` simply
``Proj_C(-v_t / (lam t))``, lazy projected gradient descent with step ``1/(lam t)``.

Privacy (Thm. 3)
----------------
The only data-dependent input of the learner is the stream of gradients
``z_t = nabla f_t(w_t)``; ``w_t`` is a function of earlier releases, so by adaptive
composition the releases ``v_1, ..., v_T`` of the continual counter are as private as
the counter, and the actions are post-processing. The ``lam w_t`` part of ``nabla
h_t`` is such a function of past releases too, so it is added outside the counter (the
paper passes ``nabla h_t`` with norm bound ``L + H ||C||`` to the tree; B.1): this is
the same algorithm with less noise.

Sensitivity. Each ``z_t`` is computed from the revealed ``theta_t`` as
``problem.loss.subgradient(theta_t, w_t)`` and clipped to ``||z_t||_2 <= L`` (the
problem's Lipschitz constant; clips are counted in :attr:`clipped_gradients`), so a
neighbouring stream (one round's loss REPLACED) moves the counter input by at most
``||z - z'||_2 <= 2L`` and ``||z - z'||_1 <= 2 L sqrt(d)``. The counter (``counter=``,
default the binary tree of App. A, Alg. 2) is then calibrated by
:mod:`agents.privacy`:

* ``delta = 0``: coordinatewise Laplace, l1 sensitivity ``Delta_1 = 2 L sqrt(d)``, per
  node scale ``levels * Delta_1 / epsilon`` (``levels = floor(log2 T) + 1``), pure
  epsilon-DP as in the paper (Thm. 3). The paper draws one "l2-Laplace" vector per
  node (density ``∝ exp(-||n||_2 eps / (L (ceil(log2 T)+1)))``, App. A line 9); the
  counters here only offer coordinatewise Laplace, which for l2 sensitivity
  ``2L`` needs the ``sqrt(d)`` factor; both give ``E||n|| = O(d L log T / eps)`` per
  node.
* ``delta > 0``: Gaussian noise for l2 sensitivity ``Delta_2 = 2L`` (analytic Gaussian,
  ``sqrt(levels)`` nodes per input) -- an extension; the paper is pure-DP only.

The paper calibrates its tree to the norm bound ``L`` itself (App. A, line 9: a
shift of ``L`` costs ``eps/levels`` per node), but replacing one loss moves a gradient
by up to ``2L``; its noise is half of what its own neighbouring relation needs. We use
``2L``. :attr:`privacy` is the guarantee reported by the ``dp_accounting`` accountant
for the counter, equal to the requested ``(epsilon, delta)`` at every epsilon (basic
composition for Laplace, the exact analytic Gaussian for Gaussian trees; 1e6 builds
as fast as 1). :class:`FTAL` is the noise-free limit: with its counter's noise switched
off, and ``lam`` equal to FTAL's once ``eps >= p log^1.5 T`` (see
:func:`pftal_regularization`), PFTAL plays FTAL's points bit for bit.

Parameters
----------
* Strongly convex problems (``problem.strong_convexity = H_f > 0``): ``H = H_f``, no
  regularizer; Theorem 4: ``E[Regret] = O(p (L + H ||C||)^2 log^2.5 T / (eps H))``
  (polylog in T). Lemma 8 + Fact 9 + Claim 10 give the explicit form
  ``2 (L + H ||C||)^2 log T / H + 4 p (L + H ||C||)^2 log^2.5 T / (eps H)``.
* Convex problems (``H_f = 0``), App. C, Thm. 11: ``H = lam`` with

      lam = (L / ||C||) sqrt(p log^2.5 T / (eps' T)),   eps' = min(eps, p log^1.5 T),

  ``p = d`` the dimension, ``||C|| = sup_{w in C} ||w||_2`` (``domain.norm_bound(2)``,
  the paper's ``||C||_2``) and ``log T = max(1, ln T)``. Thm. 11 writes
  ``H = sqrt(p log^2.5 T / (eps T))`` treating ``L`` and ``||C||`` as constants; the
  factor ``L / ||C||`` restores the units (it is what balancing the two terms
  ``p L^2 log^2.5 T / (eps H)`` and ``H T ||C||^2 / 2`` of eq. (17) gives, up to the
  constant). Rate: ``O(sqrt(p T log^2.5 T / eps') L ||C||)`` -- ``sqrt(T)`` in T.

  Clamp: the O() of Thm. 4 absorbs the non-private FTAL term ``2 (L + H||C||)^2 log
  T / H`` of Claim 10, which dominates once ``eps > p log^1.5 T``; there we clamp
  ``eps`` to ``p log^1.5 T`` so that the tuning tends to the non-private
  ``lam = (L/||C||) sqrt(log T / T)`` of :class:`FTAL` as ``eps -> inf`` instead of
  to 0 (which would make the FTAL term blow up).
* ``w_1``: "any vector from C" (Alg. 1 line 1): ``Proj_C(0)`` (the regularizer's
  minimizer) when regularized, else the domain's center.

Options:
    counter: Continual counter (a key of :data:`agents.privacy.COUNTERS`, PFTAL only).
    regularization: ``lam`` override (``>= 0``); default as above.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np

from agents.base import Agent, check_number, register
from agents.common import clip_norm, env_action, ftal_leader, split_rng, start_point
from agents.counter_agent import CounterAgent
from agents.privacy.noise import default_noise

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
            lam = check_number("regularization", regularization)
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
        g = self.problem.loss.subgradient(theta, self._w)
        g, clipped = clip_norm(g, self.gradient_bound, 2)
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

    Options:
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
