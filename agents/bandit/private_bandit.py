r"""The private bandit reduction of Agarwal & Singh (ICML 2017), Algorithm 4.

``private-bandit`` (:class:`PrivateBanditReduction`) turns ANY non-private bandit learner
of the package into an ``epsilon``-differentially private one: each round the learner's
action ``x_t`` is played, the observed loss ``f_t(x_t)`` is clipped to its declared
range ``[lo, hi]`` and perturbed with independent Laplace noise, computed EXACTLY on a
grid (:class:`~agents.privacy.noise.DiscreteLaplaceNoise`):

    fed_t = g * (round(clip(f_t(x_t), lo, hi) / g) + Z_t),   P(Z_t = z) ~ exp(-|z| / t),

with ``g`` the largest power of two ``<= (hi - lo) 2^-16``, the integer sensitivity
``k = floor((hi - lo) / g) + 1`` (rounding moves a value by at most ``g/2``) and
``t = ceil(k / epsilon)``: the discrete Laplace mechanism, pure ``k / t <= epsilon``-DP.
``Z_t`` is an integer from the exact sampler of Canonne, Kamath, Steinke (NeurIPS 2020)
and the product is exact in float64, so the released value has exactly the accounted
distribution (a continuous Laplace added in float64 would not: Mironov, CCS 2012). The
noise is data-independent and drawn in blocks of :func:`~agents.common.noise_block`
(``min(NOISE_BLOCK, rounds left)`` values: a short game draws only what it uses; the
block size changes which values a seed yields, not their law, so the privacy is the
same).
Its scale in data units, ``b = t g = (hi - lo)/epsilon (1 + O(2^-16))``, is
:attr:`noise_scale`.

and only ``fed_t`` -- passed through :meth:`~agents.base.Agent.release` -- reaches the
wrapped learner. ``private-exp2`` (EXP2 with exploration, Theorem 4.1) and
``private-scrible`` (SCRiBLe, Theorem 4.5) are this reduction with a fixed base, in
:mod:`agents.bandit.exp2` and :mod:`agents.bandit.scrible`.

Privacy (Lemma 4.2): ``(epsilon, 0)``-DP for loss sequences differing in one round's
loss. Each round's loss enters one Laplace mechanism of sensitivity ``hi - lo`` (the
width of the range, ``2B`` for signed losses in ``[-B, B]``), so the composition over
rounds is parallel: no ``T`` or ``log T`` factor. Declared to ``dp_accounting`` as ONE
``DiscreteLaplaceDpEvent(noise_parameter = 1/t, sensitivity = k)``, checked by
:func:`~agents.privacy.verify_guarantee` at ``delta = 0``. One scalar draw is added to
the observed value for every domain (the paper adds ``<Z_t, x_t>``, ``Z_t ~
Lap^N(||Y||_1 / epsilon)``, off the arms).

Range: :func:`~agents.common.loss_range` -- ``[0, B]`` for linear losses with
parameters in ``[0, 1]^K`` on the simplex / arms / subsets, else ``[-B, B]`` with
``B = problem.bound``; ``loss_range=`` narrows it. Clips are counted in
:attr:`~agents.base.Agent.clipped_feedback`; a non-finite feedback raises.

Base learners receive the noisy (possibly negative) values unclipped: through their
``observe_loss(action, loss)`` when they have one, else through ``update`` with a
finiteness check in place of their ``clip_feedback``. A base whose ``setup`` takes
``noise_scale`` receives ``b`` (EXP2's Theorem 4.1, SCRiBLe's Theorem 4.5 tune to it).
Regret (Lemma 4.3): for linear losses the expected regret is the base's on the noisy
losses.

The privacy proof, the choices that differ from the paper (one scalar draw, the width
as sensitivity) and why the noisy values must stay unclipped:
``docs/algorithms/private-bandit.md``.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from agents.base import Agent, agent_class, register
from agents.common import (
    NoiseQueue,
    check_bandit_problem,
    check_range,
    clipped_loss,
    exact_laplace_guarantee,
    scalar_release_noise,
)
from agents.privacy.noise import DiscreteLaplaceNoise

__all__ = ["PrivateBanditReduction"]

def _finite_only(feedback) -> np.ndarray:
    """Replacement ``clip_feedback`` of a wrapped base: noisy values pass unclipped."""
    fb = np.asarray(feedback, dtype=np.float64).reshape(-1)[:1]
    if not np.all(np.isfinite(fb)):
        raise ValueError(f"feedback must be finite, got {fb!r}")
    return fb


@register
class PrivateBanditReduction(Agent):
    r"""Agarwal-Singh Algorithm 4: Laplace noise on every observed loss, any base learner.

    Privacy proof: ``docs/algorithms/private-bandit.md``.

    Args:
        base: The non-private bandit learner to wrap: a registered name (``"exp2"``,
            ``"exp3"``, ``"scrible"``, ...) or an :class:`~agents.base.Agent` subclass
            with ``feedback = "bandit"`` and ``private = False``.
        base_options: Keyword options of the base's ``setup``. ``noise_scale`` is
            filled in with the Laplace scale when the base accepts it.
        loss_range: ``(lo, hi)`` overriding :func:`~agents.common.loss_range` (the clip enforces it).
        add_noise: ``False`` switches the noise off: the exact clipped losses are
            released (NOT private: the guarantee's epsilon is infinite), the non-private
            limit, where the learner plays as its base, bit for bit.

    Attributes:
        base: The wrapped learner (it only ever sees noisy losses).
        loss_lo, loss_hi: The declared range; ``sensitivity = loss_hi - loss_lo``.
        noise_scale: ``b = t g ~ sensitivity / epsilon``, the noise scale in loss units.
        noise_strategy: The calibrated :class:`~agents.privacy.noise.DiscreteLaplaceNoise`
            (grid ``g``, integer scale ``t``).
    """

    name = "private-bandit"
    description = ("Agarwal-Singh Alg. 4: Lap((hi-lo)/eps) noise on each observed loss, "
                   "then any non-private bandit learner (base=...)")
    paper = "Agarwal & Singh, The Price of Differential Privacy for Online Learning (ICML 2017), Alg. 4, Lemma 4.2"
    feedback = "bandit"
    private = True
    counterpart = "exp2"

    @classmethod
    def counterpart_for(cls, problem, **options) -> str | None:
        """The wrapped base learner (``base=``; ``"exp2"`` by default, fixed in the
        subclasses ``private-exp2`` and ``private-scrible``)."""
        base = options.get("base")
        if base is None or "base" not in inspect.signature(cls.setup).parameters:
            return cls.counterpart
        return base if isinstance(base, str) else getattr(base, "name", None)

    def setup(self, base: str | type[Agent] = "exp2", base_options: dict | None = None,
              loss_range: tuple[float, float] | None = None, add_noise: bool = True) -> None:
        self._setup_reduction(base, base_options, loss_range, add_noise)

    # ----------------------------------------------------------- construction
    def _setup_reduction(self, base, base_options, given_range, add_noise: bool = True
                         ) -> None:
        check_bandit_problem(self.name, self.problem)
        cls = agent_class(base) if isinstance(base, str) else base
        if not (isinstance(cls, type) and issubclass(cls, Agent)):
            raise TypeError(f"base must be an agent name or an Agent subclass, got {base!r}")
        if cls.feedback != "bandit":
            raise ValueError(f"base {cls.name!r} is not a bandit learner (feedback={cls.feedback!r})")
        if cls.private:
            raise ValueError(f"base {cls.name!r} is already private: the reduction wraps a "
                             "non-private learner")
        self.loss_lo, self.loss_hi = check_range(self.problem, given_range)
        self.sensitivity = self.loss_hi - self.loss_lo
        self.noise_strategy = scalar_release_noise(DiscreteLaplaceNoise, self.epsilon,
                                                   self.sensitivity, self.secure, add_noise)
        self._grid = self.noise_strategy.grid
        self.noise_scale = self.noise_strategy.scale
        opts: dict[str, Any] = dict(base_options or {})
        params = inspect.signature(cls.setup).parameters
        if "noise_scale" in params:
            opts.setdefault("noise_scale", self.noise_scale)
        if "loss_range" in params:
            opts.setdefault("loss_range", (self.loss_lo, self.loss_hi))
        self.base = cls(self.problem, seed=None, **opts)
        self._observe = getattr(self.base, "observe_loss", None)
        if self._observe is None:
            self.base.clip_feedback = _finite_only  # noisy values must reach it unclipped
        self.privacy = exact_laplace_guarantee(
            self.noise_strategy,
            f"on each clipped loss in [{self.loss_lo:g}, {self.loss_hi:g}] rounded to the grid "
            f"(each round's loss released once), then {cls.name}",
            exact=f"exact losses, then {cls.name}")

    # --------------------------------------------------------------- the API
    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.base.reset(int(self.rng.integers(2**63)))
        self._noise = NoiseQueue(self.noise_strategy)

    def act(self):
        return self.base.act()

    def update(self, action, feedback) -> None:
        f = clipped_loss(self, feedback, self.loss_lo, self.loss_hi)
        g = self._grid
        if g is None:  # NoNoise: exact losses, not private
            self._feed(action, self.release(f))
            return
        z = self._noise.next(self.rng, self.problem.horizon - self.t)
        # exact: f / g is a power-of-two scaling, round() is half-even to a Python int,
        # and the integer sum (< 2^53 in magnitude) times g is exact in float64
        self._feed(action, self.release((round(f / g) + z) * g))

    def _feed(self, action, noisy: float) -> None:
        if self._observe is not None:
            self._observe(action, noisy)
        else:
            self.base.update(action, np.array([noisy], dtype=np.float64))
        self.t += 1

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.problem.domain!r}, base={self.base.name}, "
                f"epsilon={self.epsilon}, noise_scale={self.noise_scale:.4g})")
