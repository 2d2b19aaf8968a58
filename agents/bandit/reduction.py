r"""The private bandit reduction of Agarwal & Singh (ICML 2017), Algorithm 4.

``private-bandit`` (:class:`PrivateBanditReduction`) turns ANY non-private bandit learner
of the package into an ``epsilon``-differentially private one: each round the learner's
action ``x_t`` is played, the observed loss ``f_t(x_t)`` is clipped to its declared
range ``[lo, hi]`` and perturbed with independent Laplace noise,

    fed_t = clip(f_t(x_t), lo, hi) + Z_t,        Z_t ~ Lap(b),   b = (hi - lo) / epsilon,

and only ``fed_t`` -- passed through :meth:`~agents.base.Agent.release` -- reaches the
wrapped learner. ``private-exp2`` (EXP2 with exploration, Theorem 4.1) and
``private-scrible`` (SCRiBLe, Theorem 4.5) are this reduction with a fixed base, in
:mod:`agents.bandit.exp2` and :mod:`agents.bandit.scrible`.

Privacy
-------
Neighbouring loss sequences ``S, S'`` differ in the loss of one round ``tau``
(``f_tau`` replaced by ``f'_tau``). The transcript of the reduction is the sequence of
released values ``fed_1, ..., fed_T``; everything the base learner does (its actions)
is a function of these and of its own randomness, so by post-processing it suffices to
show that the released sequence is ``epsilon``-DP. Each round's loss is used exactly
once, in one noisy observation:

* rounds ``t < tau``: the releases have the same distribution under ``S`` and ``S'``
  (they only depend on ``f_1..f_{t}``, which coincide);
* round ``tau``: conditionally on the history (which fixes ``x_tau``, chosen before
  ``f_tau`` is revealed), ``fed_tau`` is the Laplace mechanism applied to the scalar
  ``clip(f_tau(x_tau))``. Two clipped values differ by at most the width ``hi - lo`` of
  the range (the sensitivity -- for a replaced loss, not the bound ``B`` itself: signed
  losses in ``[-B, B]`` have width ``2B``), so with ``b = (hi - lo)/epsilon`` the
  conditional densities satisfy ``p(fed | S) <= e^epsilon p(fed | S')``;
* rounds ``t > tau``: conditionally on the releases so far, ``fed_t`` uses ``f_t``,
  identical on both sides, and fresh noise; the conditional densities coincide.

Multiplying the conditional densities (chain rule), the likelihood ratio of the whole
transcript equals the ratio of round ``tau`` alone, at most ``e^epsilon``: the
composition over rounds is *parallel* (every datum -- a round's loss -- enters one
``epsilon``-DP mechanism), not sequential, so no ``T`` or ``log T`` factor appears. The
guarantee is declared to ``dp_accounting`` as ONE ``LaplaceDpEvent`` with
``noise_multiplier = b / (hi - lo) = 1/epsilon`` and checked with
:func:`~agents.privacy.verify_guarantee` at ``delta = 0``.

This is Lemma 4.2 of the paper for ``x_t`` a vertex ``e_i`` (the forwarded value
``<l_t + Z_t, e_i> = l_t(i) + Z_t(i)`` is one Laplace draw). For other domains the
paper forwards ``<l_t + Z_t, x_t>`` with a Laplace *vector* ``Z_t ~ Lap^N(lambda)`` and
``lambda = ||Y||_1 / epsilon``; we add one scalar draw to the observed value instead:
the released value is then literally a Laplace mechanism with the right sensitivity,
which needs less noise whenever ``||x_t||_1 > 1`` and keeps the analysis above exact.
The paper's Lemma 4.2 also calibrates to ``B`` (the bound on ``|<l, x>| / ||x||_inf``);
for signed losses a replacement moves the value by up to ``2B``, so we calibrate to the
width of the range (``1`` for the ``[0, 1]`` losses of Theorem 4.1, where the two
agree: ``lambda = 1/epsilon``).

The declared range and the clip
-------------------------------
:func:`~agents.common.loss_range` gives ``[0, B]`` for linear losses with parameters in ``[0, 1]^K``
on the simplex / arms / subsets (every value is non-negative), else ``[-B, B]`` with
``B = problem.bound``; the ``loss_range`` option narrows it (the clip then enforces the
narrower range, so the guarantee holds whatever the env reports). Clips are counted in
:attr:`~agents.base.Agent.clipped_feedback`. A non-finite feedback raises.

The base learner and noisy losses
---------------------------------
The base sees values outside ``[lo, hi]`` (and negative ones). Learners of this
package expose ``observe_loss(action, loss)``, their update on an already-checked
scalar loss without any clip; the reduction calls it directly. For any other bandit
learner the reduction calls its ``update(action, np.array([fed_t]))`` and replaces that
instance's ``clip_feedback`` by a finiteness check (clipping the noisy value to
``[lo, hi]`` would keep the privacy -- post-processing -- but bias the losses, which
breaks Lemma 4.3: the noise must stay zero-mean). Base learners whose ``setup`` takes
a ``noise_scale`` option receive ``b`` there so that they can tune their parameters for
the noise (EXP2's Theorem 4.1, SCRiBLe's Theorem 4.5).

Lemma 4.3 of the paper: for linear losses and zero-mean independent noise, the expected
regret of the reduction equals the expected regret of the base learner on the noisy
losses, so the price of privacy is the base learner's sensitivity to the noise's
magnitude (a factor ``~ lambda log(NT)`` on its range).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from dp_accounting import LaplaceDpEvent

from agents.base import Agent, agent_class, register
from agents.common import NOISE_BLOCK, check_bandit_problem, check_range, clipped_loss
from agents.common import loss_range, scalar_feedback  # noqa: F401  (public, re-exported)
from agents.privacy import laplace_scale, verify_guarantee

__all__ = ["PrivateBanditReduction", "loss_range", "scalar_feedback"]

def _finite_only(feedback) -> np.ndarray:
    """Replacement ``clip_feedback`` of a wrapped base: noisy values pass unclipped."""
    fb = np.asarray(feedback, dtype=np.float64).reshape(-1)[:1]
    if not np.all(np.isfinite(fb)):
        raise ValueError(f"feedback must be finite, got {fb!r}")
    return fb


@register
class PrivateBanditReduction(Agent):
    r"""Agarwal-Singh Algorithm 4: Laplace noise on every observed loss, any base learner.

    See the module docstring for the privacy proof. Options:

    Args (of ``setup``):
        base: The non-private bandit learner to wrap: a registered name (``"exp2"``,
            ``"exp3"``, ``"scrible"``, ...) or an :class:`~agents.base.Agent` subclass
            with ``feedback = "bandit"`` and ``private = False``.
        base_options: Keyword options of the base's ``setup``. ``noise_scale`` is
            filled in with the Laplace scale when the base accepts it.
        loss_range: ``(lo, hi)`` overriding :func:`loss_range` (the clip enforces it).

    Attributes:
        base: The wrapped learner (it only ever sees noisy losses).
        loss_lo, loss_hi: The declared range; ``sensitivity = loss_hi - loss_lo``.
        noise_scale: ``b = sensitivity / epsilon``, the Laplace scale.
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
              loss_range: tuple[float, float] | None = None) -> None:
        self._setup_reduction(base, base_options, loss_range)

    # ----------------------------------------------------------- construction
    def _setup_reduction(self, base, base_options, given_range) -> None:
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
        self.noise_scale = self._noise_scale()
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
        event = LaplaceDpEvent(noise_multiplier=self.noise_scale / self.sensitivity)
        self.privacy = verify_guarantee(
            event, self.epsilon, 0.0,
            mechanism=(f"Laplace(b={self.noise_scale:.6g}) on each clipped loss in "
                       f"[{self.loss_lo:g}, {self.loss_hi:g}] (each round's loss released "
                       f"once), then {cls.name}"))

    def _noise_scale(self) -> float:
        """``b = (hi - lo) / epsilon`` (the Laplace mechanism for one scalar)."""
        return laplace_scale(self.sensitivity, self.epsilon)

    # --------------------------------------------------------------- the API
    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.base.reset(int(self.rng.integers(2**63)))
        self._noise: list[float] = []
        self._ni = 0

    def act(self):
        return self.base.act()

    def update(self, action, feedback) -> None:
        f = clipped_loss(self, feedback, self.loss_lo, self.loss_hi)
        i = self._ni
        if i >= len(self._noise):
            self._noise = self.rng.laplace(0.0, self.noise_scale, NOISE_BLOCK).tolist()
            i = 0
        self._ni = i + 1
        noisy = self.release(f + self._noise[i])
        if self._observe is not None:
            self._observe(action, noisy)
        else:
            self.base.update(action, np.array([noisy], dtype=np.float64))
        self.t += 1

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.problem.domain!r}, base={self.base.name}, "
                f"epsilon={self.epsilon}, noise_scale={self.noise_scale:.4g})")
