r"""Jointly differentially private LinUCB (Shariff and Sheffet, NeurIPS 2018).

``jdp-linucb`` -- :class:`JDPLinUCB`: Algorithm 1 of Shariff and Sheffet, "Differentially
Private Contextual Linear Bandits" (NeurIPS 2018), LinUCB with changing perturbations,
with their Gaussian instantiation (the shifted symmetric Gaussian noise), on the
disjoint per-arm model of :mod:`agents.bandit.linucb`.

Each round's data is ``y_t = (c_t, l_t)`` in ``R^{d+1}`` (the played context clipped to
the unit ball, the loss clipped to ``[0, 1]``, :meth:`~agents.bandit.contextual.
LinearContextualAgent.read_feedback`). The learner feeds the suite's binary-tree counter
(:class:`~agents.privacy.counters.BinaryTreeCounter`, exact discrete Gaussian noise) one
input a round: the stack over the K arms of the upper triangles of the augmented matrices
``y y^T`` -- ``U(y_t y_t^T)`` in the block of the arm played, zeros elsewhere -- and reads
back per arm the noisy sums

    M~_a = sum_{s: a_s = a} y_s y_s^T + N_a,     N_a symmetric, i.i.d. entries on and
                                                  above the diagonal (the tree's noise),
    A~_a = M~_a[:d, :d] + shift I,   b~_a = M~_a[:d, d],   theta~_a = A~_a^{-1} b~_a,

and plays ``argmin_a theta~_a^T c - beta_t ||c||_{A~_a^{-1}}``. The shift ``2 Upsilon``
keeps the regularizer ``H = N[:d, :d] + shift I`` between ``rho_min = Upsilon`` and
``rho_max = 3 Upsilon`` with probability ``1 - failure_prob / 2`` (all arms, all rounds);
``beta_t`` is the widened radius of their regret theorem (:func:`perturbed_radius`).

Privacy: ``(epsilon, delta)``-JOINT differential privacy (Kearns et al. 2014; Shariff
and Sheffet's joint DP for contextual bandits) with respect to changing ONE round's
data -- its context and its loss vector (every arm's loss): the actions of all OTHER
rounds are ``(epsilon, delta)``-indistinguishable. The action of round t itself is
revealed only to round t and is not protected (a learner whose own action were private
would have linear regret, their first result). Proof: the counter's releases are
``(epsilon, delta)``-DP for an adaptively chosen input stream in which one input moves by
at most ``Delta_2`` in l2 (the calibration below), and the action of round ``s != t`` is
a function of the releases before ``s`` and round ``s``'s own context (the billboard
lemma, Hsu et al. 2014). The arm played at round t enters the input (which block holds
``U(y y^T)``), so the sensitivity covers a change of arm: ``Delta_2 = sqrt((L^2+B^2)^2 +
L^4 + B^4) = sqrt(6)`` for ``L = B = 1`` (:func:`augmented_sensitivity`).

Departures from the paper (``docs/algorithms/contextual-bandits.md``): the noise is the
suite's exact discrete Gaussian calibrated by ``dp_accounting`` for the tree's
``floor(log2 T) + 1`` levels and the real replace-one sensitivity, not the paper's
``sigma^2 = 16 m L~^4 ln(4/delta)^2 / epsilon^2`` (:func:`paper_node_sigma`, kept for
comparison); the union bounds run over K arms; the radius uses ``t`` where the theorem
has ``n``; the Wishart instantiation is not built.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from agents.bandit.contextual import (
    CONTEXT_BOUND_L,
    PARAM_BOUND_S,
    SUB_GAUSSIAN_R,
    LinearContextualAgent,
    check_contextual_problem,
)
from agents.base import register
from agents.counter_agent import CounterSpec
from agents.privacy.noise import NoNoise
from dp_online_envs.validation import check_bool, check_real

__all__ = [
    "JDPLinUCB",
    "NoisyRidgeAgent",
    "augmented_sensitivity",
    "operator_bound",
    "packed_size",
    "paper_node_sigma",
    "log_det_bound",
    "perturbed_radius",
    "target_bound",
]

#: The contextual games' loss bound B (losses in [0, 1]).
LOSS_BOUND_B = 1.0

JOINT_NEIGHBOURING = ("one round's data (its context and its loss vector) changed; "
                      "joint DP: the actions of all the other rounds")


def packed_size(d: int) -> int:
    """Entries of the upper triangle (diagonal included) of a ``(d+1) x (d+1)`` matrix."""
    return (d + 1) * (d + 2) // 2


def augmented_sensitivity(l_bound: float = CONTEXT_BOUND_L,
                          b_bound: float = LOSS_BOUND_B) -> float:
    r"""The l2 sensitivity of the stacked upper triangles ``U(y y^T)`` (one arm's block
    holds it, the others zeros) when one round's ``y = (c, l)``, ``||c|| <= L``,
    ``|l| <= B``, and its arm change:

        ||U(y y^T)||^2 = (||y||^4 + sum_i y_i^4) / 2 <= ((L^2+B^2)^2 + L^4 + B^4) / 2,

    and for two rounds the squared distance is at most the sum of the two squared norms
    (different arms: disjoint blocks; the same arm: ``<U(y y^T), U(y' y'^T)> =
    ((y.y')^2 + sum_i y_i^2 y_i'^2) / 2 >= 0``). So ``Delta_2 = sqrt((L^2+B^2)^2 + L^4 +
    B^4)``, attained by ``y = y' = (e_1, B)`` on two different arms: ``sqrt(6)`` at
    ``L = B = 1``."""
    return math.sqrt((l_bound**2 + b_bound**2) ** 2 + l_bound**4 + b_bound**4)


def paper_node_sigma(horizon: int, epsilon: float, delta: float,
                     l_bound: float = CONTEXT_BOUND_L, b_bound: float = LOSS_BOUND_B) -> float:
    """Shariff and Sheffet's per-node Gaussian noise (their Gaussian instantiation):
    ``sigma^2 = 16 m L~^4 ln(4/delta)^2 / epsilon^2``, ``m = ceil(log2 T) + 1`` nodes,
    ``L~^2 = L^2 + B^2`` (for comparison with the suite's calibration; not used)."""
    m = math.ceil(math.log2(horizon)) + 1 if horizon > 1 else 1
    lt2 = l_bound**2 + b_bound**2
    return math.sqrt(16.0 * m * lt2**2 * math.log(4.0 / delta) ** 2) / epsilon


def operator_bound(entry_scale: float, d: int, n_events: float, failure_prob: float) -> float:
    """``Upsilon = s (4 sqrt(d) + 2 ln(2 n / alpha))``: with probability at least
    ``1 - alpha / 2`` the ``d x d`` symmetric noise matrices of ``n`` events (arms times
    rounds), each with independent ``s``-sub-Gaussian entries on and above the diagonal,
    all have operator norm at most ``Upsilon`` (the bound of Shariff and Sheffet's
    Gaussian instantiation, each event at level ``alpha / (2 n)``)."""
    return entry_scale * (4.0 * math.sqrt(d) + 2.0 * math.log(2.0 * n_events / failure_prob))


def log_det_bound(t: int, d: int, rho_min: float, rho_max: float) -> float:
    """``d ln(rho_max / rho_min + t L^2 / (d rho_min))``: the determinant-trace bound on
    ``ln det(A~) - d ln(rho_min)`` after ``t`` rounds when ``A~ <= V_t + rho_max I``."""
    return d * math.log(rho_max / rho_min + t * CONTEXT_BOUND_L**2 / (d * rho_min))


def perturbed_radius(log_det_ratio: float, k: int, failure_prob: float, rho_max: float,
                     gamma: float) -> float:
    r"""The widened confidence radius of Shariff and Sheffet (their confidence bound
    and regret theorem for bounded regularizers: OFUL's self-normalized bound with a
    regularizer ``rho_min I <= H <= rho_max I`` and a noisy target ``||h||_{A~^{-1}} <=
    gamma``), per arm at level ``alpha/(2K)``:

        beta = R sqrt(2 ln(2K/alpha) + ln det A~ - d ln rho_min) + S sqrt(rho_max) + gamma,

    ``R = 1/2``, ``S = 1``; ``log_det_ratio = ln det A~ - d ln rho_min`` is read from the
    released matrix (post-processing), or bounded by :func:`log_det_bound`."""
    return SUB_GAUSSIAN_R * math.sqrt(2.0 * math.log(2.0 * k / failure_prob)
                                      + max(log_det_ratio, 0.0)) \
        + PARAM_BOUND_S * math.sqrt(rho_max) + gamma


def target_bound(entry_scale: float, d: int, n_events: float, failure_prob: float,
                 rho_min: float) -> float:
    """``gamma = s (sqrt(d) + sqrt(2 ln(2 n / alpha))) / sqrt(rho_min)``: with
    probability ``1 - alpha / 2`` every noise vector ``h`` of the targets (``n`` events,
    ``d`` independent ``s``-sub-Gaussian entries) has ``||h|| <= gamma sqrt(rho_min)``
    (Hsu, Kakade and Zhang 2012), so ``||h||_{A^{-1}} <= gamma`` when ``A >= rho_min I``."""
    return entry_scale * (math.sqrt(d) + math.sqrt(2.0 * math.log(2.0 * n_events
                                                                   / failure_prob))) \
        / math.sqrt(rho_min)


class NoisyRidgeAgent(LinearContextualAgent):
    """Base of the private LinUCB learners: per-arm ridge statistics read from released
    (noisy) sums of the augmented matrices, the shifted regularizer, the widened radius
    and the optimistic choice.

    After ``t`` rounds the regularizer is ``(ridge + shift_t) I`` plus the noise of the
    release, whose entries are ``s_t``-sub-Gaussian (:meth:`entry_scale_at`); with
    ``Upsilon_t =`` :func:`operator_bound` of ``s_t``, ``rho_min = ridge + shift_t -
    Upsilon_t`` and ``rho_max = ridge + shift_t + Upsilon_t`` bound it (with probability
    ``1 - alpha/2``), and the radius is :func:`perturbed_radius` with ``gamma_t =``
    :func:`target_bound` (:meth:`radii`). Subclasses call :meth:`setup_private` from ``setup``, define
    :meth:`entry_scale_at` and call :meth:`absorb` with each release. Nothing exact reaches
    the choice: the base class's pull counts are not kept, its log-determinants are those of
    the released matrices.
    """

    private = True
    needs_delta = True  # Gaussian noise: (epsilon, delta)-DP with delta > 0
    counterpart = "linucb"

    def setup_private(self, alpha: float | None, failure_prob: float, ridge: float,
                      shift: float | None) -> None:
        """Check the problem, ``delta`` and the common options.

        Raises:
            ValueError: A non-contextual game, ``delta = 0`` or an option out of range.
        """
        self.k, self.d = check_contextual_problem(self.name, self.problem)
        if self.delta == 0.0:
            raise ValueError(f"{self.name} adds Gaussian noise ((epsilon, delta)-DP, "
                             "delta > 0): pass a delta in (0, 1), e.g. delta=1e-6 "
                             "(--delta 1e-6 on the command line)")
        self.alpha = None if alpha is None else check_real("alpha", alpha, 0.0)
        self.failure_prob = check_real("failure_prob", failure_prob, 0.0, 1.0,
                                       low_inclusive=False, high_inclusive=False)
        self.base_ridge = check_real("ridge", ridge, 0.0, low_inclusive=False)
        self.fixed_shift = None if shift is None else check_real(
            "shift", shift, 0.0)
        self.sensitivity = augmented_sensitivity()
        self.packed = packed_size(self.d)
        self.width = self.k * self.packed
        self._iu = np.triu_indices(self.d + 1)
        #: rounds x arms: the events the union bounds run over
        self.events = float(self.k * self.problem.horizon)

    def check_radius(self) -> None:
        """Refuse a fixed shift that leaves ``rho_min <= 0`` at the end of the game when the
        radius is the theorem's (``alpha=None``).

        Raises:
            ValueError: Naming the shift and the least one that works.
        """
        horizon = self.problem.horizon
        if self.alpha is None and self.rho_min_at(horizon) <= 0.0:
            need = self.upsilon_at(horizon) - self.base_ridge
            raise ValueError(
                f"{self.name}: shift={self.fixed_shift!r} with ridge={self.base_ridge!r} does "
                f"not keep the regularizer positive definite with high probability: the "
                f"theorem's radius needs shift > Upsilon_T - ridge = {need!r}; pass a "
                "larger shift, shift=None, or a fixed alpha")

    # ------------------------------------------------------------ the calibration
    def entry_scale_at(self, t: int) -> float:
        """``s_t``: the sub-Gaussian scale of one noise entry of the release after ``t``
        rounds."""
        raise NotImplementedError

    def upsilon_at(self, t: int) -> float:
        """``Upsilon_t``: :func:`operator_bound` at ``s_t``."""
        return operator_bound(self.entry_scale_at(t), self.d, self.events, self.failure_prob)

    def shift_at(self, t: int) -> float:
        """The shift after ``t`` rounds: ``2 Upsilon_t``, or the fixed ``shift``."""
        return 2.0 * self.upsilon_at(t) if self.fixed_shift is None else self.fixed_shift

    def rho_min_at(self, t: int) -> float:
        """``ridge + shift_t - Upsilon_t``."""
        return self.base_ridge + self.shift_at(t) - self.upsilon_at(t)

    def rho_max_at(self, t: int) -> float:
        """``ridge + shift_t + Upsilon_t``."""
        return self.base_ridge + self.shift_at(t) + self.upsilon_at(t)

    def gamma_at(self, t: int) -> float:
        """``gamma_t``: :func:`target_bound` at ``s_t`` and ``rho_min``."""
        return target_bound(self.entry_scale_at(t), self.d, self.events, self.failure_prob,
                            self.rho_min_at(t))

    def radii(self, t: int) -> np.ndarray:
        """``beta_a`` of every arm after ``t`` rounds (``alpha`` when given):
        :func:`perturbed_radius` with the log-determinant of the released ``A~_a``, or
        :func:`log_det_bound` where ``A~_a`` is not positive definite (an event of
        probability at most ``alpha / 2``)."""
        if self.alpha is not None:
            return np.full(self.k, self.alpha)
        rho_min, rho_max, gamma = self.rho_min_at(t), self.rho_max_at(t), self.gamma_at(t)
        ratio = self.log_det - self.d * math.log(rho_min)
        ratio = np.where(np.isnan(ratio), log_det_bound(t, self.d, rho_min, rho_max), ratio)
        # perturbed_radius, vectorized over the arms
        return SUB_GAUSSIAN_R * np.sqrt(2.0 * math.log(2.0 * self.k / self.failure_prob)
                                        + np.maximum(ratio, 0.0)) \
            + PARAM_BOUND_S * math.sqrt(rho_max) + gamma

    # ---------------------------------------------------------------- the play
    def reset(self, seed: int | None = None) -> None:
        self.ridge = self.base_ridge + self.shift_at(0)  # the base's A_a before any release
        super().reset(seed)
        #: generator of the privacy noise, apart from the one of round 1's arm (so that
        #: without noise the play is the non-private learner's, round 1 included)
        self.noise_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])

    def pack(self, arm: int, loss: float, c: np.ndarray) -> np.ndarray:
        """The round's input: ``U(y y^T)``, ``y = (c, loss)``, in the block of ``arm``,
        zeros elsewhere (``K (d+1)(d+2)/2`` numbers).

        Raises:
            ValueError: ``arm`` is not in ``[0, K)``.
        """
        if not 0 <= arm < self.k:
            raise ValueError(f"{self.name}: action must be an arm in [0, {self.k}), "
                             f"got {arm!r}")
        y = np.append(c, loss)
        z = np.zeros((self.k, self.packed))
        z[arm] = np.outer(y, y)[self._iu]
        return z.ravel()

    def unpack(self, released: np.ndarray) -> np.ndarray:
        """The symmetric ``(K, d+1, d+1)`` matrices of a released stack."""
        v = np.asarray(released, dtype=np.float64).reshape(self.k, self.packed)
        m = np.zeros((self.k, self.d + 1, self.d + 1))
        i, j = self._iu
        m[:, i, j] = v
        m[:, j, i] = v
        return m

    def absorb(self, released: np.ndarray, t: int) -> None:
        """``A~_a = M~_a[:d,:d] + (ridge + shift_t) I`` (and its inverse) and ``b~_a =
        M~_a[:d, d]`` from a released stack of sums over ``t`` rounds."""
        m = self.unpack(released)
        d = self.d
        self.gram = m[:, :d, :d] + (self.base_ridge + self.shift_at(t)) * np.eye(d)
        self.gram_inv = np.linalg.inv(self.gram)
        sign, log_det = np.linalg.slogdet(self.gram)
        self.log_det = np.where(sign > 0, log_det, np.nan)
        self.target = m[:, :d, d].copy()

    def indices(self, c: np.ndarray) -> np.ndarray:
        """The optimistic (lower-confidence) loss of every arm in context ``c``."""
        return self.estimates() @ c - self.radii(self.t) * self.widths(c)

    def choose(self, c: np.ndarray) -> int:
        return int(np.argmin(self.indices(c)))


@register
class JDPLinUCB(NoisyRidgeAgent):
    r"""Jointly differentially private LinUCB (Shariff and Sheffet 2018, Alg. 1 with the
    shifted Gaussian noise of their Gaussian instantiation) on the disjoint per-arm model: the per-arm
    augmented Gram matrices through the suite's binary-tree counter with exact discrete
    Gaussian noise; ``(epsilon, delta)``-joint DP for one round's (context, loss vector)
    (module docstring). Needs ``delta > 0``.

    Calibration (``docs/algorithms/contextual-bandits.md``): one counter input is the
    stack of ``K (d+1)(d+2)/2`` upper-triangle entries, of l2 sensitivity ``sqrt(6)``
    (:func:`augmented_sensitivity`); the tree's ``floor(log2 T) + 1`` levels are accounted
    by ``dp_accounting`` (zCDP of the discrete Gaussian). A release sums at most
    ``max_t popcount(t)`` node draws, each ``sigma g``-sub-Gaussian, so every noise entry
    is ``s``-sub-Gaussian with ``s = sqrt(max_t popcount(t)) sigma g``
    (:attr:`entry_scale`); ``Upsilon =`` :func:`operator_bound`, ``shift = 2 Upsilon``,
    ``rho_min = ridge + shift - Upsilon``, ``rho_max = ridge + shift + Upsilon``,
    ``gamma =`` :func:`target_bound`, ``beta =`` :func:`perturbed_radius` (:meth:`radii`).
    Regret (their regret theorem with these bounds, OFUL's argument per arm and Cauchy-Schwarz
    over the arms): with probability ``1 - failure_prob``, ``O(beta_T sqrt(K d T log(1 +
    T/(K d rho_min))))`` with ``beta_T = O(sqrt(d log T) + sqrt(Upsilon))`` and
    ``Upsilon = O((sqrt(d) + log(KT/alpha)) log T sqrt(log(1/delta)) / epsilon)`` for
    ``epsilon <= 1``: the paper's ``1/sqrt(epsilon)`` in the regret.

    Args:
        alpha: A fixed radius in place of ``beta_t`` (as ``linucb``'s ``alpha``); ``None``
            (default): the widened radius of the theorem.
        failure_prob: The failure probability (the papers' alpha), in (0, 1).
        ridge: ``linucb``'s ridge lambda > 0, added to the shift (the regularizer is
            ``(ridge + shift) I`` plus the noise; the paper's has no ridge).
        shift: The regularizer's shift; ``None`` (default): ``2 Upsilon``. A given shift
            with ``alpha=None`` must exceed ``Upsilon - ridge`` (else the radius is
            undefined).
        add_noise: ``False`` switches the noise off: the counter releases exact sums
            (NOT private, the guarantee's epsilon is infinite) and everything else --
            shift and radius, calibrated as with noise -- is unchanged: the noise-free
            twin of an audit. With ``shift=lambda`` and ``alpha`` given it plays as
            ``linucb(ridge=lambda, alpha=alpha)``.

    Attributes:
        sensitivity: ``Delta_2 = sqrt(6)``.
        noise_scale: ``sigma g``, one node draw's scale (data units).
        entry_scale: ``s = sqrt(max_t popcount(t)) sigma g``.
        levels: The tree's levels, ``floor(log2 T) + 1``.
        counter_spec: The :class:`~agents.counter_agent.CounterSpec` of the counter.
        paper_sigma: :func:`paper_node_sigma` of this game (for comparison).
    """

    name = "jdp-linucb"
    description = ("Jointly DP LinUCB: tree-based noisy per-arm Gram matrices with a shifted "
                   "regularizer (Shariff-Sheffet 2018), exact discrete Gaussian, delta > 0")
    paper = ("Shariff, Sheffet, Differentially Private Contextual Linear Bandits "
             "(NeurIPS 2018), Alg. 1 with Gaussian noise, and its regret theorem")

    def setup(self, alpha: float | None = None, failure_prob: float = 0.05,
              ridge: float = 1.0, shift: float | None = None, add_noise: bool = True) -> None:
        self.setup_private(alpha, failure_prob, ridge, shift)
        add = check_bool("add_noise", add_noise)
        #: the suite's binary-tree counter with exact discrete Gaussian noise (the
        #: learners' ``"gaussian"``), one input a round
        self.counter_spec = CounterSpec(counter="tree", noise="gaussian",
                                        sensitivity=self.sensitivity, epsilon=self.epsilon,
                                        delta=self.delta, horizon=self.problem.horizon,
                                        dim=self.width, secure=self.secure)
        probe = self.counter_spec.build(np.random.default_rng(0))
        self.levels = probe.levels
        self.noise_scale = float(probe.draw_scale)
        #: ``s = sigma g sqrt(max_t popcount(t))``: a release sums at most that many node
        #: draws, each ``sigma g``-sub-Gaussian
        self.entry_scale = self.noise_scale * math.sqrt(
            probe.max_noise_variance() / probe.noise_strategy.variance)
        self.check_radius()
        self.paper_sigma = paper_node_sigma(self.problem.horizon, self.epsilon, self.delta)
        mechanism = (f"{probe!r} on the per-arm augmented Gram matrices (l2 sensitivity "
                     f"{self.sensitivity:.6g}), then LinUCB on the released sums")
        if add:
            self.privacy = dataclasses.replace(probe.guarantee(), mechanism=mechanism,
                                               neighbouring=JOINT_NEIGHBOURING)
        else:
            self.counter_spec = dataclasses.replace(self.counter_spec, noise=None)
            off = NoNoise()
            self.privacy = dataclasses.replace(
                off.guarantee(off.dp_event(), mechanism="exact Gram sums (noise off), then "
                              "LinUCB"), neighbouring=JOINT_NEIGHBOURING)

    def entry_scale_at(self, t: int) -> float:
        return self.entry_scale

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._counter = self.counter_spec.build(self.noise_rng)

    def update(self, action, feedback) -> None:
        loss, c, nxt = self.read_feedback(feedback)
        z = self.pack(int(action), loss, c)
        released = self.release(self._counter.add(z))
        self.t += 1
        self.absorb(released, self.t)
        self.context = nxt
