"""Helpers shared by the learners of :mod:`agents.full_info` and :mod:`agents.bandit`.

No algorithm module imports another one; what several of them need lives here:

* playing a point: :func:`env_action`, :func:`start_point`, :func:`split_rng`,
  :func:`softmin`;
* linear losses and their sensitivities: :func:`require_linear`, :func:`theta_norm`,
  :func:`replacement_sensitivity`, :func:`loss_width`, :func:`hedge_eta`,
  :func:`paper_log`;
* the follow-the-approximate-leader step: :func:`ftal_leader`, :func:`clip_norm`;
* convex losses fed to a linear learner as their gradients: :func:`require_convex`,
  :func:`clipped_gradient`, :func:`gradient_sensitivity`;
* bandit feedback: :data:`NOISE_BLOCK`, :func:`noise_block`, :func:`check_bandit_problem`,
  :func:`check_arms_problem`, :func:`loss_range`, :func:`check_range`, :func:`scalar_feedback`,
  :func:`clipped_loss`.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np

from agents.privacy.noise import ExactNoise, NoNoise
from dp_online_envs.domains import Simplex
from dp_online_envs.domains.base import Domain
from dp_online_envs.losses import LinearLoss
from dp_online_envs.losses.base import LossFamily
from dp_online_envs.problem import Problem
from dp_online_envs.validation import check_bool

__all__ = [
    "NOISE_BLOCK",
    "check_arms_problem",
    "check_bandit_problem",
    "check_range",
    "clip_norm",
    "clipped_gradient",
    "clipped_loss",
    "env_action",
    "ftal_leader",
    "scalar_release_noise",
    "gradient_sensitivity",
    "hedge_eta",
    "loss_range",
    "loss_width",
    "noise_block",
    "paper_log",
    "replacement_sensitivity",
    "require_convex",
    "require_linear",
    "scalar_feedback",
    "softmin",
    "split_rng",
    "start_point",
    "theta_norm",
]

#: Noise (and uniform) draws of the bandit learners are generated in blocks of at most
#: this many (:func:`noise_block`).
NOISE_BLOCK = 4096


def noise_block(rounds_left: int) -> int:
    """How many per-round draws a bandit learner generates at once: ``min(NOISE_BLOCK,
    rounds_left)`` (at least 1), with ``rounds_left = T - t`` counting the current round.

    A block never holds more draws than the game can use: a ``T = 64`` game draws 64
    values, not 4096 (the exact samplers' cost grows with the block, and an audit plays
    thousands of short games). The draws are data-independent, so the block size changes
    which values a seed yields but not their law: every drawn value is still a fresh
    i.i.d. draw from the calibrated distribution, and the privacy guarantee is unchanged.
    The scalar learners and their vector forms (:mod:`agents.vector`) size their blocks
    with this function alike, so that they stay bit-identical per seed.
    """
    return max(1, min(NOISE_BLOCK, int(rounds_left)))


class NoiseQueue:
    """A noise strategy's exact integers, handed out one at a time and drawn from the
    learner's generator in blocks of :func:`noise_block` (the draws still to come).

    The blocks are drawn by :class:`~agents.privacy.noise.ExactNoise` (the one refill of
    exact noise) and handed out as Python ints.

    Args:
        strategy: A calibrated exact strategy (``draw_int(rng, n)``).

    Attributes:
        exact: The :class:`~agents.privacy.noise.ExactNoise` that draws the blocks.
    """

    def __init__(self, strategy) -> None:
        self.strategy = strategy
        self.exact = ExactNoise(strategy)
        self._block: list[int] = []
        self._i = 0

    def next(self, rng: np.random.Generator, left: int) -> int:
        """The next integer; when the block is used up, a new one of
        ``noise_block(left)`` values is drawn, ``left`` counting this draw."""
        if self._i >= len(self._block):
            self._block = self.exact.refill(rng, noise_block(left))[:, 0].tolist()
            self._i = 0
        z = self._block[self._i]
        self._i += 1
        return z


def scalar_release_noise(noise_class, epsilon: float, sensitivity: float, secure: bool,
                         add_noise: object):
    """The strategy of a learner that releases scalars of ``sensitivity``:
    ``noise_class(epsilon, sensitivity, secure=secure)`` calibrated (the learner passes its
    module's :class:`~agents.privacy.noise.DiscreteLaplaceNoise`), or
    :class:`~agents.privacy.noise.NoNoise` when ``add_noise`` is False (the non-private
    limit: exact releases, epsilon infinite).

    Raises:
        ValueError: ``add_noise`` is not True or False.
    """
    if not check_bool("add_noise", add_noise):
        return NoNoise()
    return noise_class(epsilon, sensitivity, secure=secure).calibrate()


def exact_laplace_guarantee(strategy, released: str, exact: str):
    """The guarantee of a learner that releases scalars through ``strategy``.

    With a calibrated :class:`~agents.privacy.noise.DiscreteLaplaceNoise`, the mechanism
    reads ``"exact discrete Laplace (t=..., grid g=2^k, b=t*g=...) <released>"``; with
    :class:`~agents.privacy.noise.NoNoise` (a learner built with ``add_noise=False``:
    the non-private limit) it is ``exact``.

    The budget is checked on the calibrated mechanism itself, in exact rational
    arithmetic (:meth:`~agents.privacy.noise.DiscreteLaplaceNoise.guarantee` without an
    event: pure ``k1 / t``-DP per release), not through the accountant: the learner's
    process then never imports ``dp_accounting``, whose import is most of the start-up
    CPU of an isolated or sandboxed learner.

    Args:
        strategy: The calibrated noise strategy.
        released: What each noise draw is added to, and what the learner does next.
        exact: The mechanism's text when the strategy adds no noise.

    Raises:
        ValueError: If the calibrated mechanism exceeds the budget.
    """
    if not strategy.private:
        return strategy.guarantee(None, mechanism=exact)
    label = (f"exact discrete Laplace (t={strategy.t}, "
             f"grid g=2^{math.frexp(strategy.grid)[1] - 1}, b=t*g={strategy.scale:.6g})")
    return strategy.guarantee(None, mechanism=f"{label} {released}")


# ------------------------------------------------------------------ playing a point
def env_action(domain: Domain, x: np.ndarray, rng: np.random.Generator):
    """The env action for the point ``x`` of the domain.

    * ``Box`` action spaces: ``x`` itself (a copy).
    * ``Discrete(K)`` (arms): an index drawn from the distribution ``x`` on the simplex
      (for a vertex ``e_i`` this is ``i``). The expected loss is ``<theta, x>``.
    * ``MultiBinary(n)`` (subsets): ``x`` must be a 0/1 vertex; it is returned as int8.
    """
    space = domain.action_space
    if isinstance(space, gym.spaces.Discrete):
        cdf = np.cumsum(np.maximum(x, 0.0))
        i = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
        return min(i, domain.dim - 1)
    if isinstance(space, gym.spaces.MultiBinary):
        return np.rint(x).astype(np.int8)
    return np.array(x, dtype=np.float64, copy=True)


def start_point(domain: Domain) -> np.ndarray:
    """The domain's center as a float array, projected into the domain if it lies
    outside (the first point of the FTRL / FTAL learners)."""
    center = np.asarray(domain.center, dtype=np.float64)
    return center if domain.contains(center) else domain.project(center)


def split_rng(rng: np.random.Generator, n: int) -> list[np.random.Generator]:
    """``n`` independent generators seeded from ``rng`` (one stream per purpose)."""
    return [np.random.default_rng(int(s)) for s in rng.integers(0, 2**63 - 1, size=n)]


def softmin(eta: float, cum: np.ndarray) -> np.ndarray:
    """``x_i ∝ exp(-eta * cum_i)``, computed stably (sums to 1 up to rounding).

    Called every round by the exponential-weights learners: ``p.sum()`` is written as
    the ufunc reduction it calls (the same bits, without the method wrapper), ``w.max()``
    as :func:`_largest`.
    """
    w = -eta * cum
    w -= _largest(w)
    p = np.exp(w, out=w)
    return np.divide(p, _sum(p, axis=None), out=p)


#: ``a.max()`` and ``a.sum()`` of a vector, as the ufunc reductions they are.
_max, _sum = np.maximum.reduce, np.add.reduce
#: Up to this size a vector's largest entry is taken by Python's ``max`` of its floats.
_SHORT = 16


def _largest(w: np.ndarray) -> float:
    """``w.max()`` for :func:`softmin`: the built-in ``max`` of the floats of a short
    vector (a third of the cost of numpy's reduction), the reduction otherwise. The
    softmin is the same: the largest value is unique but for the sign of a zero (``x -
    0.0`` and ``x + 0.0`` differ only at ``x = -0.0``, whose ``exp`` is 1 either way), and
    a NaN makes every probability NaN either way."""
    if w.ndim == 1 and w.size <= _SHORT:
        return max(w.tolist())
    return _max(w, axis=None)


# ------------------------------------------------------- linear losses, sensitivities
def require_linear(name: str, loss: LossFamily) -> LinearLoss:
    """The loss family if it is a :class:`LinearLoss` (online *linear* optimization).

    Raises:
        ValueError: For any other family.
    """
    if not isinstance(loss, LinearLoss):
        raise ValueError(f"{name} is an online linear optimization algorithm: it needs "
                         f"linear losses <theta, x>, got {loss!r}")
    return loss


def _norm_index(p: float) -> int:
    q = float(p)
    if q not in (1.0, 2.0, math.inf):
        raise ValueError(f"p={p!r}, expected 1, 2 or inf")
    return {1.0: 0, 2.0: 1, math.inf: 2}[q]


def theta_norm(loss: LinearLoss, p: float) -> float:
    """``||Y||_p = sup_{theta in Theta} ||theta||_p`` for a :class:`LinearLoss`.

    ``"unit"``/``"linf"``: ``N, sqrt(N), 1``; ``"l2"``: ``sqrt(N), 1, 1``;
    ``"l1"``: ``1, 1, 1`` (for ``p = 1, 2, inf``).
    """
    n = loss.dim
    table = {
        "unit": (n, math.sqrt(n), 1.0),
        "linf": (n, math.sqrt(n), 1.0),
        "l2": (math.sqrt(n), 1.0, 1.0),
        "l1": (1.0, 1.0, 1.0),
    }
    return float(table[loss.theta_set][_norm_index(p)])


def replacement_sensitivity(loss: LinearLoss, p: float) -> float:
    """``Delta_p = sup_{theta, theta' in Theta} ||theta - theta'||_p``.

    The sensitivity of a sum of loss vectors when one of them is replaced by another
    admissible one (the neighbouring relation of every private learner here):

    ============  ======================  =====================  ===================
    theta_set     Theta                   ``Delta_1`` (Laplace)  ``Delta_2`` (Gauss)
    ============  ======================  =====================  ===================
    ``"unit"``    ``[0, 1]^N``            ``N``                  ``sqrt(N)``
    ``"linf"``    ``[-1, 1]^N``           ``2N``                 ``2 sqrt(N)``
    ``"l2"``      ``||theta||_2 <= 1``    ``2 sqrt(N)``          ``2``
    ``"l1"``      ``||theta||_1 <= 1``    ``2``                  ``2``
    ============  ======================  =====================  ===================

    ``Delta_inf`` is ``1`` for ``"unit"``, ``2`` otherwise. Derivation, and why this is
    twice the ``||Y||_1`` of Agarwal-Singh for the symmetric sets:
    ``docs/algorithms/private-ftrl.md``.
    """
    n = loss.dim
    table = {
        "unit": (n, math.sqrt(n), 1.0),
        "linf": (2.0 * n, 2.0 * math.sqrt(n), 2.0),
        "l2": (2.0 * math.sqrt(n), 2.0, 2.0),
        "l1": (2.0, 2.0, 2.0),
    }
    return float(table[loss.theta_set][_norm_index(p)])


def loss_width(loss: LinearLoss) -> float:
    """``w = max_i (high_i - low_i)`` over the loss family's parameter box: the width
    of the interval every expert's loss ``theta_i`` lies in (``1`` for ``[0, 1]^N``)."""
    space = loss.param_space
    return float(np.max(np.asarray(space.high) - np.asarray(space.low)))


def hedge_eta(horizon: int, n_experts: int, width: float) -> float:
    """Hedge's learning rate ``eta = sqrt(8 ln N / T) / w``.

    With expert losses in an interval of width ``w`` and any prior ``pi``, Hoeffding's
    lemma gives ``regret vs expert i <= ln(1/pi_i) / eta + eta w^2 T / 8``
    (Cesa-Bianchi & Lugosi 2006, Thm. 2.2 for the uniform prior); this ``eta`` makes the
    uniform-prior bound ``w sqrt(T ln N / 2)``. Shared by ``hedge`` and the entropic
    ``private-ftrl`` so that the two coincide when the noise is switched off.
    """
    return math.sqrt(8.0 * math.log(n_experts) / horizon) / width


def paper_log(horizon: int) -> int:
    """The ``ceil(log T)`` of Agarwal-Singh (base 2: the depth of the tree), clamped to
    ``>= 1`` so that ``T = 1`` (where ``log T = 0``) keeps one noise draw and no formula
    divides by zero. It equals :attr:`AgarwalSinghCounter.draws` for every T."""
    return max(1, (int(horizon) - 1).bit_length())


# ------------------------------------------------- follow the approximate leader
def ftal_leader(domain: Domain, v: np.ndarray, w_sum: np.ndarray, t: int,
                H: float) -> np.ndarray:
    """``argmin_{w in C} <v, w> + (H/2) sum_{tau<=t} ||w - w_tau||^2``.

    Equal to ``Proj_C(w_sum / t - v / (H t))`` with ``w_sum = sum_tau w_tau``
    (Smith & Thakurta 2013, App. C; see :mod:`agents.full_info.pftal`), computed by
    ``domain.project``.

    Raises:
        ValueError: If ``t < 1`` or ``H <= 0``.
    """
    if t < 1:
        raise ValueError(f"t={t!r}, the leader needs at least one past point")
    if not H > 0:
        raise ValueError(f"H={H!r}, expected a strong convexity modulus > 0")
    return domain.project(np.asarray(w_sum, dtype=np.float64) / t
                          - np.asarray(v, dtype=np.float64) / (H * t))


def clip_norm(g: np.ndarray, bound: float, ord: float = 2) -> tuple[np.ndarray, bool]:
    """``g`` scaled onto the ``ord``-norm ball of radius ``bound``, and whether it was
    clipped by more than rounding (relative ``1e-9``). The returned vector always has
    norm ``<= bound`` up to one rounding, whatever the flag."""
    g = np.asarray(g, dtype=np.float64)
    nrm = float(np.linalg.norm(g, ord=ord))
    if nrm <= bound:
        return g, False
    return g * (bound / nrm), nrm > bound * (1.0 + 1e-9)


# ------------------------------------------- convex losses seen through gradients
def require_convex(name: str, loss: LossFamily) -> LossFamily:
    """The loss family if it is convex (its subgradients linearize it from below).

    Raises:
        ValueError: For a non-convex family.
    """
    if not getattr(loss, "convex", False):
        raise ValueError(f"{name} linearizes the losses at the played point: it needs "
                         f"convex losses, got {loss!r}")
    return loss


def clipped_gradient(loss: LossFamily, theta: np.ndarray, x: np.ndarray,
                     bound: float) -> tuple[np.ndarray, bool]:
    """``g = clip(grad f(theta, x))``: the loss's subgradient at ``x`` scaled onto the l2
    ball of radius ``bound`` (:func:`clip_norm`), and whether the clip acted. The
    linear loss ``<g, .>`` fed to an online linear learner in place of ``f(theta, .)``;
    the clip makes every input lie in ``{||g||_2 <= bound}``, the set the privacy
    noise is calibrated to (:func:`gradient_sensitivity`), whatever the env sends."""
    return clip_norm(loss.subgradient(theta, x), bound, 2)


def gradient_sensitivity(bound: float, dim: int, p: float) -> float:
    """``Delta_p = sup ||g - g'||_p`` over ``g, g'`` in the l2 ball of radius ``L = bound``
    in ``R^dim``: ``2 L sqrt(dim)`` for ``p = 1``, ``2 L`` for ``p = 2`` and ``inf``.

    The sensitivity of a sum of clipped gradients (:func:`clipped_gradient`) when one
    round's loss is replaced (the same convention as :func:`replacement_sensitivity`
    and ``pftal``). ``p = 1`` is attained at ``g = -g' = L (1, ..., 1) / sqrt(dim)``,
    ``p = 2`` and ``inf`` at ``g = -g' = L e_1``.
    """
    i = _norm_index(p)
    bound = float(bound)
    return (2.0 * bound * math.sqrt(int(dim)), 2.0 * bound, 2.0 * bound)[i]


# ------------------------------------------------------------------ bandit feedback
def check_bandit_problem(name: str, problem: Problem) -> None:
    """Refuse full-information problems (a bandit learner reads one number per round)."""
    if problem.feedback != "bandit":
        raise ValueError(f"{name} is a bandit learner: it needs bandit feedback [f_t(x_t)]; "
                         f"make the env with feedback='bandit'")


def check_arms_problem(name: str, problem: Problem) -> int:
    """The number of arms K of a K-armed bandit problem (bandit feedback on the simplex
    with a ``Discrete(K)`` action space).

    Raises:
        ValueError: For full-information feedback or another decision set.
    """
    check_bandit_problem(name, problem)
    if not (isinstance(problem.domain, Simplex)
            and isinstance(problem.domain.action_space, gym.spaces.Discrete)):
        raise ValueError(f"{name} plays K arms (a Discrete(K) action space), "
                         f"got {problem.domain!r}")
    return problem.domain.dim


def loss_range(problem: Problem) -> tuple[float, float]:
    """The declared range ``[lo, hi]`` of the bandit feedback ``f_t(x_t)``: the public
    :meth:`~dp_online_envs.problem.Problem.loss_range`.

    Raises:
        ValueError: If ``problem.bound`` is not finite and positive.
    """
    return problem.loss_range()


def check_range(problem: Problem, given) -> tuple[float, float]:
    """``given`` (a pair ``lo < hi`` of finite numbers) or :func:`loss_range`."""
    if given is None:
        return loss_range(problem)
    try:
        lo, hi = (float(v) for v in given)
    except (TypeError, ValueError):
        raise ValueError(f"loss_range={given!r}, expected a pair (lo, hi)") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"loss_range={given!r}, expected finite lo < hi")
    return lo, hi


def scalar_feedback(feedback) -> float:
    """The one number of a bandit feedback (an array of shape ``(1,)`` or a scalar).

    Raises:
        ValueError: If the feedback holds more than one number.
    """
    if type(feedback) is np.ndarray and feedback.shape == (1,):
        return float(feedback[0])
    fb = np.asarray(feedback, dtype=np.float64)
    if fb.size != 1:
        raise ValueError(f"bandit feedback is one number [f_t(x_t)], got shape {fb.shape}")
    return float(fb.reshape(()))


def clipped_loss(agent, feedback, lo: float, hi: float) -> float:
    """The one number of a bandit feedback, clipped to ``[lo, hi]`` (clips counted on
    ``agent.clipped_feedback``): the scalar fast path of ``Agent.clip_feedback``.

    Raises:
        ValueError: On non-finite feedback or more than one number.
    """
    f = scalar_feedback(feedback)
    if not lo <= f <= hi:  # also catches NaN
        if not math.isfinite(f):
            raise ValueError(f"feedback must be finite, got {feedback!r}")
        f = lo if f < lo else hi
        agent.clipped_feedback += 1
    return f
