"""The continual counter of the tree-aggregation learners: :class:`CounterAgent`.

Seven private learners release noisy prefix sums of their losses, gradients or
gradient estimates through one continual counter of :mod:`agents.privacy`
(``private-ftrl``, ``private-ftpl``, ``pftal``, ``submod-pftal``, ``bandit-pftal``,
``bandit-submod-pftal``, ``private-projection-free``). They build it the same way;
this mixin is that one place.
"""

from __future__ import annotations

import numpy as np

from agents.privacy import ContinualCounter, make_counter
from dp_online_envs.validation import check_gaussian_delta


class CounterAgent:
    """Mixin for an agent that privatizes a running sum with one continual counter.

    It builds the counter from attributes the agent sets in ``setup``: once, in
    :meth:`_calibrate_counter`, as a probe that fixes the noise scale and the
    guarantee, and again for every game (``self._counter = self._make_counter(rng)``
    in ``reset``), so the counter of every game is calibrated exactly like the probe.
    Mix it in before the agent's base class (``class A(CounterAgent, Agent)``).

    Set in ``setup``, before :meth:`_calibrate_counter`:
        counter_name: A key of :data:`agents.privacy.COUNTERS`.
        noise: ``"laplace"`` (the counter's ``delta`` is 0) or ``"gaussian"``
            (``delta = self.delta``). Setting it to ``None`` after construction switches
            the noise off from the next ``reset`` (exact sums, NOT private: the tests'
            hook for the non-private limit, where the learner must play exactly like its
            :attr:`~agents.base.Agent.counterpart`).
        sensitivity: Sensitivity of one counter input (l1 for Laplace, l2 for Gaussian).

    Optional overrides (``None``, the default, takes the value in brackets):
        counter_horizon: Number of counter inputs (``problem.horizon``).
        counter_dim: Dimension of one input (``problem.dim``).
        counter_epsilon: Budget the counter is calibrated to (``self.epsilon``).
        counter_sensitivity: Sensitivity the counter is calibrated to (``sensitivity``).

    Attributes (set by :meth:`_calibrate_counter`):
        noise_scale: Scale of one noise draw of the counter (Laplace ``b`` or
            Gaussian ``sigma``).
        levels: Tree levels of the dyadic counters (``None`` for ``"factorization"``).
    """

    counter_horizon: int | None = None
    counter_dim: int | None = None
    counter_epsilon: float | None = None
    counter_sensitivity: float | None = None

    def _make_counter(self, rng: np.random.Generator) -> ContinualCounter:
        """A fresh counter of the configured kind, drawing its noise from ``rng``.

        Raises:
            ValueError: The Gaussian-only ``"factorization"`` counter with ``delta = 0``
                (the message says to pass a delta), or any invalid counter parameter.
        """
        if self.counter_name == "factorization":
            check_gaussian_delta(self.delta, hint=(
                f"{self.name}: counter='factorization' adds only Gaussian noise, but delta=0 "
                "asks for Laplace noise (pure epsilon-DP): pass a delta in (0, 1) (delta=1e-6 "
                "in Python, --delta 1e-6 on the command line), or use a counter for pure "
                "epsilon-DP ('tree', 'agarwal-singh' or 'honaker')"))
        p = self.problem
        return make_counter(
            self.counter_name,
            p.horizon if self.counter_horizon is None else self.counter_horizon,
            p.dim if self.counter_dim is None else self.counter_dim,
            noise=self.noise,
            epsilon=self.epsilon if self.counter_epsilon is None else self.counter_epsilon,
            delta=self.delta if self.noise == "gaussian" else 0.0,
            sensitivity=(self.sensitivity if self.counter_sensitivity is None
                         else self.counter_sensitivity),
            rng=rng,
        )

    def _calibrate_counter(self) -> ContinualCounter:
        """Builds a probe counter, sets ``noise_scale`` and ``levels``, returns the probe.

        The caller takes the guarantee from it (``self.privacy = probe.guarantee()``)
        or does its own accounting.
        """
        probe = self._make_counter(np.random.default_rng(0))
        self.noise_scale = float(probe.draw_scale)
        self.levels = getattr(probe, "levels", None)
        return probe
