r"""EXP2 with uniform exploration (Agarwal & Singh 2017, Algorithm 5) and ``private-exp2``.

* ``exp2`` -- :class:`EXP2`, non-private: exponential weights over a finite action set
  ``A`` mixed with the uniform distribution ``mu``: the K arms (the vertices ``e_i``
  of the simplex, ``Discrete(K)``) or the vertices of any other domain that lists at
  most :data:`MAX_ACTIONS` of them.
* ``private-exp2`` -- :class:`PrivateEXP2`, Algorithm 4 (the private reduction,
  :mod:`agents.bandit.private_bandit`) around EXP2 with the parameters of Theorem 4.1.

Algorithm 5: ``q_1`` uniform; each round ``p_t = (1 - gamma) q_t + gamma mu``, play
``a_t ~ p_t``, estimate ``l~_t = P_t^+ a_t a_t^T l_t`` with ``P_t = E_{a ~ p_t}[a a^T]``,
update ``q_{t+1}(a) ∝ q_t(a) exp(-eta <a, l~_t>)``. For arms ``P_t = diag(p_t)`` and
``l~_t = (l_t / p_t(i_t)) e_{i_t}`` (:class:`~agents.bandit.arms.ArmsExpWeights`).

Parameters (Theorem 4.1), ``N = |A|`` actions, ``T`` rounds, normalized losses
``||l_t||_inf <= 1`` carrying Laplace noise of scale ``lambda`` (``1/epsilon`` inside
``private-exp2``; ``0`` for ``exp2``), natural logarithms:

    eta   = sqrt( ln N / (2 N T (1 + 2 lambda^2 ln(NT))) ),
    gamma = eta N sqrt(1 + 2 lambda^2 ln(NT)),          mu(a) = 1/N.

Regret (Thm. 4.1) ``O(sqrt(N T ln N) (1 + lambda sqrt(ln(NT))))``, i.e.
``O(sqrt(NT log T log N)/epsilon)`` for ``private-exp2``. ``gamma="proof"`` sets
``gamma = eta N (1 + 4 lambda ln(NT))``, the sufficient condition stated in the proof.

Clamps: ``gamma`` is clamped to ``[0, 1]`` (the formula exceeds 1 when
``T < N ln N / 2``; :attr:`EXP2.gamma_clamped` records it; ``eta`` is kept); ``N = 1``
gives ``eta = gamma = 0``.

Losses: on arms ``l = (f - lo) / (hi - lo)`` with the declared range ``[lo, hi]``
(:func:`~agents.common.loss_range`; the identity on ``DPBandit-MAB-v0``), on other sets
``l = f / B`` with ``B = max(|lo|, |hi|)``; ``lambda = noise_scale`` on that scale. On
non-arm sets the theorem's formulas are a default (the theorem covers arms only).

Derivations -- the loss normalization, noisy negative losses, and the gap between the
theorem's parameters and its proof's condition: ``docs/algorithms/exp2.md``.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np

from agents.bandit.arms import ArmsExpWeights
from agents.bandit.private_bandit import PrivateBanditReduction
from agents.base import Agent, register
from agents.common import check_bandit_problem, check_range
from dp_online_envs.domains import Simplex
from dp_online_envs.domains.base import Domain
from dp_online_envs.losses import LinearLoss
from dp_online_envs.problem import Problem
from dp_online_envs.validation import check_int, check_real

__all__ = ["EXP2", "MAX_ACTIONS", "PrivateEXP2",
           "exp2_parameters", "plays_arms", "theorem_4_1_parameters"]

#: Largest finite action set (number of vertices) EXP2 enumerates.
MAX_ACTIONS = 4096


def theorem_4_1_parameters(horizon: int, n_actions: int, noise_scale: float = 0.0
                           ) -> tuple[float, float]:
    """``(eta, gamma)`` of Agarwal-Singh Theorem 4.1, gamma NOT clamped.

    ``c = 1 + 2 lambda^2 ln(N T)``, ``eta = sqrt(ln N / (2 N T c))``,
    ``gamma = eta N sqrt(c)``; ``lambda = noise_scale`` on the ``||l||_inf <= 1`` scale.
    """
    n, t = check_int("n_actions", n_actions, 1), check_int("horizon", horizon, 1)
    lam = check_real("noise_scale", noise_scale, 0.0)
    c = 1.0 + 2.0 * lam * lam * math.log(n * t)
    eta = math.sqrt(math.log(n) / (2.0 * n * t * c))
    return eta, eta * n * math.sqrt(c)


def exp2_parameters(horizon: int, n_actions: int, noise_scale: float = 0.0,
                    gamma: str | float = "theorem") -> tuple[float, float, bool]:
    """``(eta, gamma, clamped)``: Theorem 4.1's eta and gamma clamped to ``[0, 1]``.

    ``gamma="theorem"`` (Thm. 4.1), ``"proof"`` (``eta N (1 + 4 lambda ln(NT))``, the
    sufficient condition of the proof) or a number in ``[0, 1]``.
    """
    eta, g = theorem_4_1_parameters(horizon, n_actions, noise_scale)
    if gamma == "proof":
        g = eta * n_actions * (1.0 + 4.0 * float(noise_scale) * math.log(n_actions * horizon))
    elif gamma != "theorem":
        if isinstance(gamma, str):
            raise ValueError(f"gamma={gamma!r} rejected: expected 'theorem', 'proof' or a real "
                             "number in [0, 1]")
        return eta, check_real("gamma", gamma, 0.0, 1.0), False
    clamped = not 0.0 <= g <= 1.0
    return eta, min(max(g, 0.0), 1.0), clamped


def plays_arms(domain: Domain) -> bool:
    """Whether EXP2 plays ``domain`` as K arms: the simplex with a ``Discrete(K)``
    action space (its vertices ``e_i`` played by index)."""
    return isinstance(domain, Simplex) and isinstance(domain.action_space, gym.spaces.Discrete)


@register
class EXP2(ArmsExpWeights):
    r"""EXP2 with uniform exploration (Agarwal-Singh Alg. 5; Bubeck et al. 2012).

    One class plays every finite action set, with Theorem 4.1's parameters (module
    docstring) and ``N`` the number of actions. How a round is computed is fixed once
    from the domain, in ``setup``: on K arms (:func:`plays_arms`) it is the arms engine
    :class:`~agents.bandit.arms.ArmsExpWeights` (``l~_t = (l_t / p_t(i_t)) e_{i_t}``,
    O(K) per round); on every other domain with at most :data:`MAX_ACTIONS` enumerable
    vertices it is the general form: ``P_t = sum_a p_t(a) a a^T``,
    ``l~_t = P_t^+ a_t (f_t / B)`` (a pseudo-inverse, ``d x d``), ``mu`` uniform on
    ``A``, the loss normalized as ``l = f / B`` with ``B = max(|lo|, |hi|)`` (no shift:
    a shift is not a linear loss there).

    Args:
        eta: Learning rate (per unit of normalized loss); default Theorem 4.1.
        gamma: ``"theorem"`` (default), ``"proof"`` or a mixing weight in ``[0, 1]``.
        noise_scale: Scale of the zero-mean Laplace noise the feedback carries, in
            units of the feedback (set by the private reduction; 0 = non-private).
        loss_range: ``(lo, hi)`` overriding the declared range of the feedback.

    Attributes:
        eta, gamma: The parameters in use; ``gamma_clamped``: whether Theorem 4.1's
            gamma exceeded 1 and was clamped.
        lam: The noise scale on the normalized loss scale (Theorem 4.1's ``lambda``).
        n_actions: ``N``, the number of actions.
        actions: The actions ``A``, one vertex a row; ``None`` on K arms
            (:attr:`plays_arms`).

    Raises:
        ValueError: On a non-arm domain: non-linear losses, or a domain without at most
            :data:`MAX_ACTIONS` enumerable vertices.
    """

    name = "exp2"
    description = ("EXP2 with uniform exploration (Agarwal-Singh Alg. 5), "
                   "eta = sqrt(ln N / 2NT), gamma = eta N")
    paper = ("Agarwal & Singh ICML 2017, Alg. 5 / Thm. 4.1; Bubeck, Cesa-Bianchi, Kakade "
             "2012 (EXP2 with exploration)")
    feedback = "bandit"
    private = False

    def setup(self, eta: float | None = None, gamma: str | float = "theorem",
              noise_scale: float = 0.0, loss_range: tuple[float, float] | None = None) -> None:
        p = self.problem
        check_bandit_problem(self.name, p)
        self.noise_scale = check_real("noise_scale", noise_scale, 0.0)
        self._lo, self._hi = check_range(p, loss_range)
        if plays_arms(p.domain):
            self.actions = None
            self._width = self._hi - self._lo
            n = p.domain.dim
        else:
            self.actions = _vertex_actions(p)
            self._width = max(abs(self._lo), abs(self._hi))   # l = f / B, no shift
            self._space = p.domain.action_space
            n = len(self.actions)
        self.lam = self.noise_scale / self._width
        self.n_actions = n
        eta_thm, g, self.gamma_clamped = exp2_parameters(p.horizon, n, self.lam, gamma)
        self.eta = eta_thm if eta is None else check_real("eta", eta, 0.0)
        self.gamma = g
        if self.actions is None:
            self._init_arms(n)

    @property
    def plays_arms(self) -> bool:
        """Whether this game is played by the arms engine (the domain is K arms)."""
        return self.actions is None

    def reset(self, seed: int | None = None) -> None:
        if self.actions is None:
            return ArmsExpWeights.reset(self, seed)
        Agent.reset(self, seed)  # the general form keeps none of the arms engine's state
        self._log_weights = np.zeros(self.n_actions)
        self._action_index = 0

    def probabilities(self) -> np.ndarray:
        """``p_t = (1 - gamma) q_t + gamma / N`` of the next round."""
        if self.actions is None:
            return ArmsExpWeights.probabilities(self)
        q = np.exp(self._log_weights - self._log_weights.max())
        q /= q.sum()
        return (1.0 - self.gamma) * q + self.gamma / self.n_actions

    def act(self):
        if self.actions is None:
            return ArmsExpWeights.act(self)
        p = self.probabilities()
        cdf = np.cumsum(p)
        i = min(int(np.searchsorted(cdf, self.rng.random() * cdf[-1], side="right")),
                self.n_actions - 1)
        self._action_index, self._probs = i, p
        a = self.actions[i]
        if isinstance(self._space, gym.spaces.Discrete):
            return i
        if isinstance(self._space, gym.spaces.MultiBinary):
            return np.rint(a).astype(np.int8)
        return a.copy()

    def observe_loss(self, action, loss: float) -> None:
        """Update with the scalar loss of ``action`` (not clipped: may be noisy/negative)."""
        if self.actions is None:
            return ArmsExpWeights.observe_loss(self, action, loss)
        a, probs = self.actions[self._action_index], self._probs
        cov = (self.actions * probs[:, None]).T @ self.actions        # P_t = E[a a^T]
        est = np.linalg.pinv(cov, hermitian=True) @ a * (loss / self._width)
        self._log_weights -= self.eta * (self.actions @ est)
        self._log_weights -= self._log_weights.max()
        self.t += 1


def _vertex_actions(p: Problem) -> np.ndarray:
    """The finite action set ``A`` of a non-arm problem, one vertex a row.

    Raises:
        ValueError: Non-linear losses, or a domain without at most :data:`MAX_ACTIONS`
            enumerable vertices.
    """
    if not isinstance(p.loss, LinearLoss):
        raise ValueError(f"exp2 on a non-arm finite set needs linear losses, got {p.loss!r}")
    verts = p.domain.vertices()
    if verts is None or len(verts) > MAX_ACTIONS:
        raise ValueError(f"exp2 needs a finite action set of at most {MAX_ACTIONS} "
                         f"enumerable vertices; {p.domain!r} has "
                         f"{'too many' if verts is not None else 'no enumerable'} vertices")
    return np.asarray(verts, dtype=np.float64)


@register
class PrivateEXP2(PrivateBanditReduction):
    r"""``private-exp2``: Algorithm 4 around EXP2 with Theorem 4.1's parameters.

    Each loss (clipped to ``[lo, hi]``; ``[0, 1]`` on ``DPBandit-MAB-v0``) gets
    ``Lap((hi - lo)/epsilon)`` noise, is released, and is fed to :class:`EXP2` with
    ``lambda = 1/epsilon`` in Theorem 4.1. Regret ``O(sqrt(NT log T log N)/epsilon)``;
    ``(epsilon, 0)``-DP (:mod:`agents.bandit.private_bandit`). Non-private limit
    (:attr:`counterpart`): ``exp2``, played bit for bit with the noise switched off
    (``docs/algorithms/exp2.md``).

    Args:
        eta: Learning rate passed to EXP2 (default Theorem 4.1 with ``lambda = 1/epsilon``).
        gamma: ``"theorem"`` (default), ``"proof"`` or a mixing weight in ``[0, 1]``,
            passed to EXP2.
        loss_range: ``(lo, hi)`` overriding the declared range.
        add_noise: ``False`` switches the noise off: the exact clipped losses are
            released (NOT private: the guarantee's epsilon is infinite), the non-private
            limit, where the learner plays as ``exp2``, bit for bit.
    """

    name = "private-exp2"
    description = ("Agarwal-Singh Thm. 4.1: EXP2 with exploration on Lap((hi-lo)/eps)-noised "
                   "losses, eps-DP")
    paper = "Agarwal & Singh, The Price of Differential Privacy for Online Learning (ICML 2017), Alg. 4+5, Thm. 4.1"
    counterpart = "exp2"

    def setup(self, eta: float | None = None, gamma: str | float = "theorem",
              loss_range: tuple[float, float] | None = None, add_noise: bool = True) -> None:
        self._setup_reduction(EXP2, {"eta": eta, "gamma": gamma}, loss_range, add_noise)

    @property
    def eta(self) -> float:
        return self.base.eta

    @property
    def gamma(self) -> float:
        return self.base.gamma
