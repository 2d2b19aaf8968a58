"""The continual counter of the tree-aggregation learners: :class:`CounterAgent`.

Seven private learners release noisy prefix sums of their losses, gradients or
gradient estimates through one continual counter of :mod:`agents.privacy`
(``private-ftrl``, ``private-ftpl``, ``pftal``, ``submod-pftal``, ``bandit-pftal``,
``bandit-submod-pftal``, ``private-projection-free``). Each describes its counter by
one frozen :class:`CounterSpec`, built in :meth:`CounterAgent._use_counter`; every
counter of the learner is built from it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from agents.privacy import GAUSSIAN_ONLY, ContinualCounter, make_counter
from dp_online_envs.validation import check_gaussian_delta

__all__ = ["CounterAgent", "CounterSpec"]


@dataclasses.dataclass(frozen=True)
class CounterSpec:
    """Everything a learner's continual counter is built from.

    Attributes:
        counter: A key of :data:`agents.privacy.COUNTERS`.
        noise: ``"laplace"`` (pure epsilon-DP, the counter's delta is 0),
            ``"gaussian"`` ((epsilon, delta)-DP) or ``None`` (exact sums, NOT
            private: the non-private limit).
        sensitivity: Sensitivity of one counter input (l1 for Laplace, l2 for
            Gaussian) the noise is calibrated to.
        epsilon: Budget the counter is calibrated to.
        delta: The learner's delta (used by Gaussian noise only).
        horizon: Number of counter inputs ``T``.
        dim: Dimension of one input.
        secure: Draw the noise from the OS cryptographic generator.

    The learners' ``"laplace"`` is built as ``"discrete-laplace"``, the EXACT
    :class:`~agents.privacy.noise.DiscreteLaplaceNoise` (grid rounding, integer
    noise), and ``"gaussian"`` as ``"discrete-gaussian"``, the EXACT
    :class:`~agents.privacy.noise.DiscreteGaussianNoise`, except on the counters with
    real coefficients (:data:`agents.privacy.GAUSSIAN_ONLY`: ``"factorization"`` and
    ``"blt"``): there it stays the real-valued Gaussian, whose guarantee is marked
    idealized.
    """

    counter: str
    noise: str | None
    sensitivity: float
    epsilon: float
    delta: float
    horizon: int
    dim: int
    secure: bool = False

    @property
    def exact_noise(self) -> str | None:
        """The noise kind the counter is built with (see the class docstring)."""
        if self.noise == "laplace":
            return "discrete-laplace"
        if self.noise == "gaussian" and self.counter not in GAUSSIAN_ONLY:
            return "discrete-gaussian"
        return self.noise

    def build(self, rng: np.random.Generator) -> ContinualCounter:
        """A fresh counter drawing its noise from ``rng`` (through :func:`make_counter`,
        which turns the noise name and budget into a noise strategy)."""
        noise = self.exact_noise
        if self.secure and noise not in ("discrete-laplace", "discrete-gaussian"):
            raise ValueError(f"secure=True needs an exact noise: the {self.counter!r} "
                             "counter's Gaussian noise is real-valued")
        extra = {"secure": True} if self.secure else {}
        return make_counter(self.counter, self.horizon, self.dim, noise=noise,
                            epsilon=self.epsilon,
                            delta=self.delta if self.noise == "gaussian" else 0.0,
                            sensitivity=self.sensitivity, rng=rng, **extra)


class _SpecField:
    """Read-only attribute of a :class:`CounterAgent` showing one field of its spec."""

    def __init__(self, field: str) -> None:
        self.field = field

    def __get__(self, agent: Any, owner: type | None = None) -> Any:
        return self if agent is None else getattr(agent.counter_spec, self.field)


class CounterAgent:
    """Mixin for an agent that privatizes a running sum with one continual counter.

    In ``setup`` the agent calls :meth:`_use_counter` once: it fixes the
    :attr:`counter_spec` and calibrates a probe counter (noise scale, guarantee). In
    ``reset`` it builds the counter of the game with ``self._make_counter(rng)``, which
    is calibrated exactly like the probe. Mix it in before the agent's base class
    (``class A(CounterAgent, Agent)``).

    Attributes:
        counter_spec: The :class:`CounterSpec`.
        noise_scale: Scale of one noise draw of the counter (Laplace ``b`` or
            Gaussian ``sigma``), set by :meth:`_calibrate_counter`.
        levels: Tree levels of the dyadic counters (``None`` for ``"factorization"`` and
            ``"blt"``).
        counter_name, counter_sensitivity: The spec's ``counter`` and ``sensitivity``.
        noise: The spec's noise kind. Setting it to ``None`` switches the noise off
            from the next ``reset`` (exact sums, NOT private: the guarantee's epsilon is
            infinite): the non-private limit, where the learner plays exactly like its
            :attr:`~agents.base.Agent.counterpart`.
    """

    counter_spec: CounterSpec

    def _use_counter(self, counter: str, noise: str | None, sensitivity: float,
                     **fields: Any) -> ContinualCounter:
        """Fixes :attr:`counter_spec` and returns a calibrated probe counter.

        The spec's epsilon, delta, horizon and dim are the learner's ``epsilon``,
        ``delta`` and its problem's ``horizon`` and ``dim`` unless ``fields`` replaces
        them (e.g. ``horizon=rounds`` for a vector learner).

        Raises:
            ValueError: See :meth:`_make_counter`.
        """
        p = self.problem
        spec = CounterSpec(counter=counter, noise=noise, sensitivity=float(sensitivity),
                           epsilon=self.epsilon, delta=self.delta, horizon=p.horizon,
                           dim=p.dim, secure=getattr(self, "secure", False))
        self.counter_spec = dataclasses.replace(spec, **fields)
        return self._calibrate_counter()

    def _make_counter(self, rng: np.random.Generator) -> ContinualCounter:
        """A fresh counter of the spec, drawing its noise from ``rng``.

        Raises:
            ValueError: A Gaussian-only counter (``"factorization"``, ``"blt"``: see
                :data:`agents.privacy.GAUSSIAN_ONLY`) with ``delta = 0`` (the message says
                to pass a delta), or any invalid counter parameter.
        """
        spec = self.counter_spec
        if spec.counter in GAUSSIAN_ONLY:
            check_gaussian_delta(self.delta, hint=(
                f"{self.name}: counter={spec.counter!r} adds only Gaussian noise, but delta=0 "
                "asks for Laplace noise (pure epsilon-DP): pass a delta in (0, 1) (delta=1e-6 "
                "in Python, --delta 1e-6 on the command line), or use a counter for pure "
                "epsilon-DP ('tree', 'agarwal-singh' or 'honaker')"))
        return spec.build(rng)

    def _calibrate_counter(self) -> ContinualCounter:
        """Builds a probe counter, sets ``noise_scale`` and ``levels``, returns the probe.

        The caller takes the guarantee from it (``self.privacy = probe.guarantee()``)
        or does its own accounting.
        """
        probe = self._make_counter(np.random.default_rng(0))
        self.noise_scale = float(probe.draw_scale)
        self.levels = getattr(probe, "levels", None)
        return probe

    @property
    def counter(self) -> ContinualCounter:
        """The continual counter of the current game (built by ``reset`` with
        :meth:`_make_counter`)."""
        return self._counter

    # ------------------------------------------------------ views of the spec
    counter_name = _SpecField("counter")
    counter_sensitivity = _SpecField("sensitivity")

    @property
    def noise(self) -> str | None:
        return self.counter_spec.noise

    @noise.setter
    def noise(self, value: str | None) -> None:
        self.counter_spec = dataclasses.replace(self.counter_spec, noise=value)
