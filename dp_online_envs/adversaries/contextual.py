r"""The stochastic linear contextual adversary: hidden per-arm parameters, contexts
i.i.d. from a stated law, Bernoulli losses whose means are linear in the context.

The law of one game (:class:`StochasticLinearContexts`), with K arms and contexts in
R^d:

* at reset, the hidden parameters ``theta_a = (1, u_a) / sqrt(2)``, ``a = 1..K``, with
  ``u_a`` i.i.d. uniform on the unit sphere ``S^{d-2}`` (or given);
* each round, the context ``c_t = (1, z_t) / sqrt(2)`` with ``z_t`` i.i.d. uniform on
  ``S^{d-2}`` (or drawn uniformly from a given finite support), independent of
  everything else, so ``||c_t||_2 = 1``;
* the per-arm losses ``theta_t[a] ~ Bernoulli(mu_a(c_t))``, independent across arms and
  rounds given the contexts, with mean ``mu_a(c) = <theta_a, c> = (1 + <u_a, z>) / 2``
  in ``[0, 1]``: linear in the context, bounded, and sub-Gaussian with variance
  proxy 1/4.

:class:`PhasedContexts` (``"adversarial-context"``) keeps the parameters and the losses
and replaces the i.i.d. contexts by an oblivious sequence in phases of doubling length.

The best policy of the game is the per-context best arm ``pi*(c) = argmin_a <theta_a,
c>``, itself a linear policy; the regret ledger of the contextual ids
(:class:`~dp_online_envs.envs.contextual.ContextualRegretRecorder`) compares with it.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from dp_online_envs.adversaries.base import Adversary
from dp_online_envs.domains.base import Domain
from dp_online_envs.domains.simplex import Arms
from dp_online_envs.losses.base import LossFamily
from dp_online_envs.losses.contextual import ContextualLinearLoss
from dp_online_envs.validation import check_int, check_real

#: Mean losses may leave ``[0, 1]`` by this much through rounding (then clipped).
_MEAN_ATOL = 1e-12


class ContextRecord(NamedTuple):
    """What a contextual env tells its regret ledger about one round; never shown to a
    learner (the :class:`~dp_online_envs.wrappers.FeedbackGuard` strips ``info``).

    Attributes:
        context: The round's context ``c_t`` (shown to the learner anyway).
        means: The arms' mean losses ``mu_a(c_t) = <theta_a, c_t>`` (hidden).
    """

    context: np.ndarray
    means: np.ndarray


def _sphere(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """``n`` points uniform on the unit sphere of R^dim (normalized Gaussians)."""
    g = rng.standard_normal((n, dim))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def _lift(z: np.ndarray) -> np.ndarray:
    """``(1, z) / sqrt(2)`` row by row."""
    z = np.atleast_2d(z)
    return np.hstack([np.ones((z.shape[0], 1)), z]) / math.sqrt(2.0)


class ContextualAdversary(Adversary):
    """An adversary that draws a context with each round's losses and keeps the round's
    :class:`ContextRecord` (set by :meth:`next_loss`, cleared at reset)."""

    _record: ContextRecord | None = None

    def last_round(self) -> ContextRecord:
        """The context and the mean losses of the round just drawn.

        Raises:
            RuntimeError: Before the first round.
        """
        if self._record is None:
            raise RuntimeError("no round has been drawn yet")
        return self._record


class StochasticLinearContexts(ContextualAdversary):
    """Contexts i.i.d. from a stated law and Bernoulli losses with means
    ``<theta_a, c_t>`` (the module docstring states the law).

    Draws: at reset, two independent generators are seeded from the env's adversary
    generator (one for the contexts, one for the losses), after the hidden parameters
    are drawn from it; so the contexts of a seed do not depend on the play, and
    neither do the losses.

    Args:
        params: The hidden parameters, a ``(K, d)`` array; default drawn at reset as
            above. Every mean ``<theta_a, c>`` over the law's contexts must lie in
            ``[0, 1]``.
        contexts: A finite support of the context law, an ``(m, d)`` array of points of
            norm at most 1, drawn uniformly; default the lifted sphere above.

    Raises:
        ValueError: On a ``params`` or ``contexts`` array that is not finite, has the
            wrong shape, or gives a mean loss outside ``[0, 1]`` (checked at reset,
            when K and d are known).
    """

    name = "stochastic-linear"

    def __init__(self, params: np.ndarray | None = None,
                 contexts: np.ndarray | None = None) -> None:
        self._given_params = None if params is None else _finite_2d("params", params)
        self._support = None if contexts is None else _finite_2d("contexts", contexts)
        if self._support is not None:
            norms = np.linalg.norm(self._support, axis=1)
            if np.any(norms > 1.0 + 1e-12):
                raise ValueError(f"contexts rejected: row {int(np.argmax(norms))} has norm "
                                 f"{norms.max():.6g}; expected contexts of norm <= 1")
        self.params: np.ndarray | None = None

    # ------------------------------------------------------------------ the game
    def reset(self, np_random: np.random.Generator, domain: Domain, loss: LossFamily,
              horizon: int) -> None:
        """Draw the hidden parameters and seed the context and loss generators.

        Raises:
            ValueError: A game that is not K arms with
                :class:`~dp_online_envs.losses.contextual.ContextualLinearLoss`, or
                parameters / contexts of the wrong shape or with means outside [0, 1].
        """
        if not isinstance(domain, Arms) or not isinstance(loss, ContextualLinearLoss):
            raise ValueError(f"{self.name!r} plays K arms with contextual losses, got "
                             f"{domain!r} and {loss!r}")
        super().reset(np_random, domain, loss, horizon)
        k, d = domain.dim, loss.context_dim
        if self._given_params is None:
            self.params = _lift(_sphere(np_random, k, d - 1))
        else:
            self.params = _check_shape("params", self._given_params, (k, d))
        if self._support is not None:
            _check_shape("contexts", self._support, (self._support.shape[0], d))
            lo, hi = (self._support @ self.params.T).min(), (self._support @ self.params.T).max()
        else:  # <theta, (1, z)/sqrt 2> over the unit sphere: (theta_0 +- ||theta_rest||)/sqrt 2
            rest = np.linalg.norm(self.params[:, 1:], axis=1)
            lo = ((self.params[:, 0] - rest) / math.sqrt(2.0)).min()
            hi = ((self.params[:, 0] + rest) / math.sqrt(2.0)).max()
        if lo < -_MEAN_ATOL or hi > 1.0 + _MEAN_ATOL:
            raise ValueError(f"params rejected: the mean losses <theta_a, c> over the "
                             f"context law range over [{lo:.6g}, {hi:.6g}]; expected [0, 1]")
        seeds = np_random.integers(0, 2**63, size=2)
        self._context_rng = np.random.default_rng(int(seeds[0]))
        self._loss_rng = np.random.default_rng(int(seeds[1]))
        self._t = 0
        self._next = self._draw_context()
        self._record: ContextRecord | None = None

    def _draw_context(self) -> np.ndarray:
        if self._support is not None:
            return self._support[self._context_rng.integers(self._support.shape[0])].copy()
        return _lift(_sphere(self._context_rng, 1, self.loss.context_dim - 1))[0]

    def context(self) -> np.ndarray:
        """The context of the next round (the one :meth:`next_loss` plays next)."""
        return self._next.copy()

    def next_loss(self, t: int) -> np.ndarray:
        """The per-arm losses of round ``t``, in the context :meth:`context` gave."""
        t = check_int("t", t, 1)
        if t != self._t + 1:
            raise ValueError(f"round {t} requested after round {self._t}: contexts are "
                             "played in order")
        c = self._next
        means = np.clip(self.params @ c, 0.0, 1.0)
        losses = (self._loss_rng.random(means.shape[0]) < means).astype(np.float64)
        self._record = ContextRecord(c, means)
        self._t = t
        self._next = self._draw_context()
        return losses

    def __repr__(self) -> str:
        law = "sphere" if self._support is None else f"{self._support.shape[0]} points"
        return f"{type(self).__name__}(contexts={law})"


def _finite_2d(name: str, value: object) -> np.ndarray:
    arr = np.array(value, dtype=np.float64)
    if arr.ndim != 2 or arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} rejected: expected a finite non-empty 2-D array, got "
                         f"shape {arr.shape}")
    arr.setflags(write=False)
    return arr


def _check_shape(name: str, arr: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    if arr.shape != shape:
        raise ValueError(f"{name} rejected: shape {arr.shape}, expected {shape} "
                         "(K arms by d context coordinates)")
    return arr


class PhasedContexts(StochasticLinearContexts):
    """The adversarial-context variant: the same hidden parameters and Bernoulli losses
    of mean ``<theta_a, c_t>``, but the contexts are an oblivious sequence that is not
    i.i.d.: the rounds fall in phases ``j = 0, 1, 2, ...`` of doubling length (rounds
    ``2^j .. 2^{j+1} - 1``), and in phase j the contexts are ``c_t = (1, z_t)/sqrt(2)``
    with ``z_t = (v_j + spread g_t) / ||v_j + spread g_t||``, ``v_j`` a direction uniform
    on ``S^{d-2}`` drawn at the start of the phase and ``g_t`` standard normal. So each
    phase visits a region of context space the earlier ones may not have, and what was
    learnt in one phase need not transfer to the next. The sequence is drawn from the
    adversary's own generator before any action is seen (oblivious), so the regret
    guarantees that hold for arbitrary context sequences (OFUL's) apply, and the ledger's
    comparator, the per-context best arm, is unchanged.

    Args:
        params: As :class:`StochasticLinearContexts`.
        spread: The spread of the contexts about the phase direction, > 0.

    Raises:
        ValueError: On ``spread <= 0`` or bad ``params``.
    """

    name = "adversarial-context"

    def __init__(self, params: np.ndarray | None = None, spread: float = 0.5) -> None:
        super().__init__(params=params)
        self.spread = check_real("spread", spread, 0.0, low_inclusive=False)

    def _draw_context(self) -> np.ndarray:
        round_ = self._t + 1  # the round this context is for
        if round_ & (round_ - 1) == 0:  # a power of two: a new phase, a new direction
            self._direction = _sphere(self._context_rng, 1, self.loss.context_dim - 1)[0]
        z = self._direction + self.spread * self._context_rng.standard_normal(
            self._direction.shape[0])
        return _lift(z / np.linalg.norm(z))[0]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(spread={self.spread})"


class ReplayedExamples(ContextualAdversary):
    """Full-feedback data replayed as bandit feedback (the supervised-to-bandit
    conversion): labelled examples ``(x_i, y_i)``, K classes as K arms.

    Each round an example index ``i`` is drawn uniformly from the n examples, with
    replacement and independently of everything else (so the contexts are i.i.d. from
    the data's empirical law); the context is ``c_t = (1, x_i)/sqrt(2)`` (the rows must
    have norm <= 1) and the per-arm losses are the misclassifications
    ``theta_t[a] = 1[a != y_i]``. The mean loss of arm a in context c is the fraction of
    the examples with the features of c whose label is not a, so the per-context best
    arm is the majority label of those examples (ties: the lowest label), the best
    policy over every policy for this law; a linear learner's regret against it
    includes the approximation error of its model (the data is not generated by one).

    Args:
        features: ``(n, d - 1)`` rows of norm at most 1.
        labels: ``(n,)`` integer labels in ``0..K-1``.

    Raises:
        ValueError: Rows of norm above 1, labels outside ``0..K-1`` (checked at reset),
            or mismatched shapes.
    """

    name = "data"

    def __init__(self, features: np.ndarray, labels: np.ndarray) -> None:
        self.features = _finite_2d("features", features)
        norms = np.linalg.norm(self.features, axis=1)
        if np.any(norms > 1.0 + 1e-12):
            raise ValueError(f"features rejected: row {int(np.argmax(norms))} has norm "
                             f"{norms.max():.6g}; expected rows of norm <= 1")
        lab = np.asarray(labels)
        if lab.shape != (self.features.shape[0],) or lab.dtype.kind not in "iu":
            raise ValueError(f"labels rejected: expected {self.features.shape[0]} integer "
                             f"labels, got shape {lab.shape} of {lab.dtype}")
        self.labels = lab.astype(np.int64)
        self.labels.setflags(write=False)
        # the examples that share features: the empirical law's mean losses
        _, self._group = np.unique(self.features, axis=0, return_inverse=True)
        self._group = self._group.reshape(-1)

    def reset(self, np_random: np.random.Generator, domain: Domain, loss: LossFamily,
              horizon: int) -> None:
        """Check the game against the data and seed the example draws.

        Raises:
            ValueError: A game that is not K arms with contextual losses of dimension
                ``1 + n_features``, or labels outside ``0..K-1``.
        """
        if not isinstance(domain, Arms) or not isinstance(loss, ContextualLinearLoss):
            raise ValueError(f"{self.name!r} plays K arms with contextual losses, got "
                             f"{domain!r} and {loss!r}")
        k, d = domain.dim, loss.context_dim
        if d != self.features.shape[1] + 1:
            raise ValueError(f"context_dim={d} rejected: the data has "
                             f"{self.features.shape[1]} features, so context_dim must be "
                             f"{self.features.shape[1] + 1}")
        if self.labels.min() < 0 or self.labels.max() >= k:
            raise ValueError(f"labels rejected: they range over [{self.labels.min()}, "
                             f"{self.labels.max()}], expected 0..{k - 1} (n_arms={k})")
        super().reset(np_random, domain, loss, horizon)
        counts = np.zeros((self._group.max() + 1, k))
        np.add.at(counts, (self._group, self.labels), 1.0)
        self._means = 1.0 - counts / counts.sum(axis=1, keepdims=True)  # per group
        self._rng = np.random.default_rng(int(np_random.integers(0, 2**63)))
        self._t = 0
        self._next = int(self._rng.integers(self.features.shape[0]))
        self._record: ContextRecord | None = None

    def _context(self, i: int) -> np.ndarray:
        return _lift(self.features[i])[0]

    def context(self) -> np.ndarray:
        """The context of the next round."""
        return self._context(self._next)

    def next_loss(self, t: int) -> np.ndarray:
        """The misclassification losses of round ``t``'s example."""
        t = check_int("t", t, 1)
        if t != self._t + 1:
            raise ValueError(f"round {t} requested after round {self._t}: examples are "
                             "played in order")
        i = self._next
        losses = np.ones(self.domain.dim)
        losses[self.labels[i]] = 0.0
        self._record = ContextRecord(self._context(i), self._means[self._group[i]].copy())
        self._t = t
        self._next = int(self._rng.integers(self.features.shape[0]))
        return losses

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={self.features.shape[0]})"


#: The contextual adversaries by name (the ``adversary`` option of the contextual ids).
CONTEXT_ADVERSARIES: dict[str, type[Adversary]] = {
    cls.name: cls for cls in (StochasticLinearContexts, PhasedContexts)
}
