"""Privacy toolkit of the learners: calibration, accounting, continual counters.

* :mod:`.calibration` -- Laplace / analytic-Gaussian noise scales,
  :class:`PrivacyGuarantee`, and accounting through ``dp_accounting``.
* :mod:`.counters` -- continual counters (private prefix sums): binary tree,
  Agarwal-Singh identically distributed tree, Honaker's variance-reduced tree,
  square-root factorization; :mod:`.counters.blt` the buffered-linear-Toeplitz counter.
* :mod:`.noise` -- the counters' noise strategies: exact discrete Laplace and discrete
  Gaussian (grid, integer noise), real-valued Laplace and Gaussian (guarantees marked
  idealized), none.
* :mod:`.discrete` -- exact samplers (Canonne-Kamath-Steinke 2020) in int64.

The black-box privacy auditor runs games, so it lives with the code that does:
:mod:`dp_online_envs.lab.audit`.
"""

from .calibration import (
    DEFAULT_NEIGHBOURING,
    PrivacyGuarantee,
    accountant_epsilon,
    compose_epsilon,
    discrete_gaussian_sigma,
    gaussian_sigma,
    laplace_scale,
    verify_guarantee,
)
from .counters import (
    COUNTERS,
    GAUSSIAN_ONLY,
    AgarwalSinghCounter,
    BinaryTreeCounter,
    BLTCounter,
    ContinualCounter,
    FactorizationCounter,
    HonakerCounter,
    make_counter,
)
from .noise import (
    DiscreteGaussianNoise,
    DiscreteLaplaceNoise,
    GaussianNoise,
    LaplaceNoise,
    NoiseStrategy,
    NoNoise,
    noise_strategy,
)

__all__ = [
    "COUNTERS",
    "DEFAULT_NEIGHBOURING",
    "GAUSSIAN_ONLY",
    "AgarwalSinghCounter",
    "BLTCounter",
    "BinaryTreeCounter",
    "ContinualCounter",
    "DiscreteGaussianNoise",
    "DiscreteLaplaceNoise",
    "FactorizationCounter",
    "GaussianNoise",
    "HonakerCounter",
    "LaplaceNoise",
    "NoNoise",
    "NoiseStrategy",
    "PrivacyGuarantee",
    "accountant_epsilon",
    "compose_epsilon",
    "discrete_gaussian_sigma",
    "gaussian_sigma",
    "laplace_scale",
    "make_counter",
    "noise_strategy",
    "verify_guarantee",
]
