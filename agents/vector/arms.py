"""Vector exponential weights over K arms: ``exp3``, ``exp2`` on arms, ``private-exp2``.

:class:`VectorArms` plays B games of :class:`~agents.bandit.arms.ArmsExpWeights`
(the engine of ``exp3`` and ``exp2`` on arms) in one numpy pass per round, with the
scalar engine's arithmetic in the same order: the uniforms are drawn in blocks of
:func:`~agents.common.noise_block` from each game's generator (as the scalar agent
does), the arm is the
bisection of the sequential cumulative weights (arm-major weights, the K rows added
one after the other, as ``itertools.accumulate``), the weight sum is the last of them
(Python's ``sum`` of the list, left to right; for ``K > 64`` numpy's pairwise sum of
each game's weights, as the scalar ``w.sum()``), and the new weight is ``math.exp``
(libm, as the scalar code, not numpy's SIMD exp). Each game's actions and weights are therefore the scalar
game's, bit for bit. The rare renormalization (a log-weight leaving ``exp(+-300)``)
runs per game with the scalar code's operations.

:class:`VectorPrivateEXP2` adds the private reduction (Algorithm 4 of Agarwal-Singh):
each game's exact discrete Laplace integers drawn :func:`~agents.common.noise_block`
(``min(NOISE_BLOCK, rounds left)``) at a time from its reduction generator, as the
scalar reduction draws them, ``fed = (rint(f / g) + Z) g`` (exact, as the scalar
``round(f / g)``), fed unclipped to the vector engine.

:class:`SharedStreamPrivateEXP2` is the same learner for the privacy audit, which needs
B *independent* runs with noise of exactly the calibrated law, not the scalar game of
each seed: ONE generator (seeded from the B run seeds) draws, per block of
:func:`~agents.common.noise_block` rounds, all B runs' uniforms in one
``random((B, n))`` call and all B runs' exact noise in one
``draw_int(rng, B * n)`` call (row ``b`` is run ``b``'s). Run ``b``'s randomness is
then its own positions of one i.i.d. stream (no value is used by two runs), the noise
is i.i.d. with the sampler's exact law, and the arithmetic per run is
:class:`VectorPrivateEXP2`'s; what differs is which values a seed yields (a run is
not the scalar game of its seed). Derivation: ``docs/algorithms/privacy-auditor.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.bandit.arms import LOG_LIMIT, ArmsExpWeights
from agents.base import Agent
from agents.common import noise_block
from agents.privacy.noise import ExactNoise, VectorExactNoise
from agents.vector.base import VectorAgent, clip_bandit_rows, exp_list
from dp_online_envs._former_paths import former_names
from dp_online_envs.validation import check_int

__all__ = ["VectorArms", "VectorPrivateEXP2", "SharedStreamPrivateEXP2"]


class _ArmsState:
    """The exponential-weights state of B games: ``ArmsExpWeights``' fields as arrays,
    arm-major (``(K, B)``: one row per arm, so the cumulative sum over the arms is K-1
    additions of contiguous rows, the scalar ``accumulate`` order)."""

    def __init__(self, engine: ArmsExpWeights, rngs: list[np.random.Generator]) -> None:
        self.e = engine
        self.c = engine.arms_constants
        self.rngs = rngs
        b, k = len(rngs), engine.k
        self.cols = np.arange(b)
        self.lw = np.zeros((k, b))          # -eta * summed estimates
        self.shift = np.zeros(b)            # weights are exp(lw - shift)
        self.w = np.ones((k, b))
        self.cdf = np.empty((k, b))
        self.wsum = np.full(b, float(k))    # large K: numpy sums of each game's weights
        self.u = np.empty((b, 0))           # uniforms, one column per round
        self.rounds = 0
        self.ui = 0
        self.arm = np.zeros(b, dtype=np.intp)
        self.p = np.full(b, 1.0 / k)

    def _uniforms(self) -> np.ndarray:
        if self.ui >= self.u.shape[1]:
            # the scalar engine's block (the rounds left, at most NOISE_BLOCK)
            n = noise_block(self.e.problem.horizon - self.rounds)
            self.u = np.empty((len(self.rngs), n))
            for r, row in zip(self.rngs, self.u):
                r.random(out=row)
            self.ui = 0
        u = self.u[:, self.ui]
        self.ui += 1
        return u

    def act(self) -> np.ndarray:
        c = self.c
        u = self._uniforms()
        g, k, w, cdf = self.e.gamma, c.k, self.w, self.cdf
        cdf[0] = w[0]
        for j in range(1, k):  # sequential, as itertools.accumulate / np.cumsum
            np.add(cdf[j - 1], w[j], out=cdf[j])
        wsum = cdf[-1] if c.scalar_weights else self.wsum
        target = (u - g) * c.inv_one_minus_gamma * wsum
        arm = np.add.reduce(cdf <= target, axis=0, dtype=np.intp)  # bisect_right
        bad = (arm >= k) | (w[np.minimum(arm, k - 1), self.cols] <= 0.0)
        if g > 0.0:
            explore = u < g
            arm = np.where(explore, np.minimum((u * c.k_over_gamma).astype(np.intp), k - 1),
                           arm)
            bad &= ~explore
        for b in np.flatnonzero(bad):  # rounding at the top end: last positive weight
            arm[b] = max(j for j in range(k) if w[j, b] > 0.0)
        self.arm = arm
        self.p = c.one_minus_gamma * w[arm, self.cols] / wsum + c.gamma_over_k
        return arm

    def observe(self, actions: np.ndarray, loss: np.ndarray) -> None:
        c = self.c
        if not np.array_equal(actions, self.arm):
            raise ValueError("update_batch needs the actions of the last act_batch")
        arm, cols = self.arm, self.cols
        v = self.lw[arm, cols] - c.eta_per_width * (loss - c.lo) / self.p
        self.lw[arm, cols] = v
        ex = v - self.shift
        ok = (ex > -LOG_LIMIT) & (ex < LOG_LIMIT)
        if ok.all():
            self.w[arm, cols] = exp_list(ex)
        else:
            self.w[arm[ok], cols[ok]] = exp_list(ex[ok])
            for b in np.flatnonzero(~ok):
                self._renormalize(b)
        if not c.scalar_weights:  # the scalar float(w.sum()): numpy's (pairwise) sum of a row
            self.wsum = np.ascontiguousarray(self.w.T).sum(axis=1)
        self.rounds += 1

    def _renormalize(self, b: int) -> None:
        lw = self.lw[:, b].tolist()
        shift = max(lw)
        self.shift[b] = shift
        if self.c.scalar_weights:  # the scalar list code: math.exp of each Python float
            self.w[:, b] = [math.exp(v - shift) for v in lw]
        else:
            self.w[:, b] = np.exp(np.asarray(lw) - shift)


class _SharedArmsState(_ArmsState):
    """:class:`_ArmsState` whose uniforms come from one generator for all B games:
    ``rng.random((B, n))`` per block, row ``b`` game ``b``'s."""

    def __init__(self, engine: ArmsExpWeights, rng: np.random.Generator,
                 num_envs: int) -> None:
        super().__init__(engine, [rng] * num_envs)
        self.rng = rng

    def _uniforms(self) -> np.ndarray:
        if self.ui >= self.u.shape[1]:
            n = noise_block(self.e.problem.horizon - self.rounds)
            self.u = self.rng.random((len(self.cols), n))
            self.ui = 0
        u = self.u[:, self.ui]
        self.ui += 1
        return u


class VectorArms(VectorAgent):
    """B games of ``exp3`` or ``exp2`` on arms (module docstring)."""

    names = ("exp3", "exp2")

    @classmethod
    def refusal(cls, prototype: Agent) -> str | None:
        if not (isinstance(prototype, ArmsExpWeights) and prototype.plays_arms):
            return f"{prototype.name} plays arms only here (got {prototype.problem.domain!r})"
        return None

    def _harvest(self, agent: Agent) -> Any:
        return agent.rng

    def _start(self, states: list[Any]) -> None:
        self._state = _ArmsState(self.prototype, states)

    def act_batch(self) -> np.ndarray:
        return self._state.act()

    def update_batch(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        c = self.prototype.arms_constants
        self._state.observe(actions, clip_bandit_rows(self, feedback, c.lo, c.hi))
        self.t += 1


class VectorPrivateEXP2(VectorAgent):
    """B games of ``private-exp2`` (module docstring)."""

    names = ("private-exp2",)

    @classmethod
    def refusal(cls, prototype: Agent) -> str | None:
        if not (isinstance(prototype.base, ArmsExpWeights) and prototype.base.plays_arms):
            return f"private-exp2 plays arms only here (got {prototype.problem.domain!r})"
        if prototype.record_releases:
            return "record_releases is not offered by the vector path"
        return None

    def _harvest(self, agent: Agent) -> Any:
        return agent.rng, agent.base.rng

    def _start(self, states: list[Any]) -> None:
        proto = self.prototype
        self._noise_rngs = [s[0] for s in states]
        #: The games' exact noise, each game's block drawn as its scalar reduction's.
        self.exact_noise = VectorExactNoise(
            [ExactNoise(proto.noise_strategy) for _ in states], self._noise_rngs)
        self._state = _ArmsState(proto.base, [s[1] for s in states])
        self._noise = np.empty((0, self.num_envs), dtype=np.int64)
        self._ni = 0

    def act_batch(self) -> np.ndarray:
        return self._state.act()

    def update_batch(self, actions: np.ndarray, feedback: np.ndarray) -> None:
        proto = self.prototype
        f = clip_bandit_rows(self, feedback, proto.loss_lo, proto.loss_hi)
        g = proto.noise_strategy.grid
        if g is None:  # NoNoise: exact losses (the non-private limit)
            self._state.observe(actions, f)
            self.t += 1
            return
        if self._ni >= self._noise.shape[0]:
            # the scalar reduction's block
            self._noise = self._draw_noise(noise_block(self.problem.horizon - self.t))
            self._ni = 0
        z = self._noise[self._ni]
        self._ni += 1
        # exact: f / g is a power-of-two scaling, rint is half-even as round(), and the
        # integer sum (< 2^53) times g is exact in float64
        self._state.observe(actions, (np.rint(f / g) + z) * g)
        self.t += 1

    def _draw_noise(self, n: int) -> np.ndarray:
        """The next ``n`` rounds' exact noise of every game, ``(n, B)`` int64: each
        game's block from its own reduction generator, as the scalar reduction."""
        return self.exact_noise.refill(n)[:, :, 0]


class SharedStreamPrivateEXP2(VectorPrivateEXP2):
    """B independent runs of ``private-exp2`` from ONE generator: the audit's form.

    :meth:`reset_batch` seeds one ``numpy.random.Generator`` with
    ``SeedSequence(seeds)`` (all B run seeds as its entropy: the same seeds give the
    same runs, other seeds another stream); every ``n = noise_block(T - t)`` rounds it
    draws the B runs' uniforms, ``random((B, n))``, and their exact discrete Laplace
    noise, ``noise_strategy.draw_int(rng, B * n)`` reshaped to ``(B, n)`` (row ``b``
    is run ``b``'s next ``n`` values). The sampler returns i.i.d. draws of the exact
    law (:mod:`agents.privacy.discrete`), so the rows are independent and each has
    the law of one scalar game's noise: every run is a game of the calibrated
    ``epsilon``-DP mechanism, independent of the others (each value position is used
    by one run only). Per round the arithmetic is :class:`VectorPrivateEXP2`'s.

    Not the scalar game of a seed (the contract of :class:`VectorPrivateEXP2`): run
    ``b`` depends on all of ``seeds`` and on ``B`` (the chunking). It is what
    :func:`~dp_online_envs.lab.audit.audit_power` plays (through
    :func:`agents.vector.make_audit_vector`); ``run(..., vectorize=True)`` and the
    sweeps keep :class:`VectorPrivateEXP2`.

    Cost: two generator calls per block for the uniforms and the sampler's ~30 for
    the noise of all B runs (instead of ~30 per run): ``benchmarks/audit_power.py``.
    """

    names = ("private-exp2",)

    def reset_batch(self, seeds: Sequence[int]) -> None:
        """Start ``len(seeds)`` independent runs from one generator seeded with all of
        ``seeds``.

        Raises:
            ValueError: ``seeds`` is empty or holds a value that is not an integer
                ``>= 0``.
        """
        if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or not seeds:
            raise ValueError(f"seeds={seeds!r}, expected a non-empty sequence of "
                             f"integers >= 0")
        entropy = [check_int("seed", s, 0) for s in seeds]
        self.num_envs = len(entropy)
        self.rows = np.arange(self.num_envs)
        self.clipped_feedback = np.zeros(self.num_envs, dtype=np.int64)
        self.t = 0
        self.rng = np.random.default_rng(np.random.SeedSequence(entropy))
        self._state = _SharedArmsState(self.prototype.base, self.rng, self.num_envs)
        self._noise = np.empty((0, self.num_envs), dtype=np.int64)
        self._ni = 0

    def _draw_noise(self, n: int) -> np.ndarray:
        """The next ``n`` rounds' exact noise of every run, ``(n, B)``: one
        ``draw_int(rng, B * n)`` call, row ``b`` of its ``(B, n)`` reshape run ``b``'s."""
        ns = self.prototype.noise_strategy
        return ns.draw_int(self.rng, self.num_envs * n).reshape(self.num_envs, n).T

#: Former names of this module (one release, with a ``DeprecationWarning``).
__getattr__ = former_names(globals(), {
    "BatchedArms": "VectorArms",
    "BatchedPrivateEXP2": "VectorPrivateEXP2",
})
