"""Privacy toolkit of the learners: calibration, accounting, continual counters.

* :mod:`.calibration` -- Laplace / analytic-Gaussian noise scales,
  :class:`PrivacyGuarantee`, and accounting through ``dp_accounting``.
* :mod:`.counters` -- continual counters (private prefix sums): binary tree,
  Agarwal-Singh identically distributed tree, Honaker's variance-reduced tree,
  square-root factorization; :mod:`.blt` the buffered-linear-Toeplitz counter.
* :mod:`.noise` -- the counters' noise strategies: exact discrete Laplace and discrete
  Gaussian (grid, integer noise), real-valued Laplace and Gaussian (guarantees marked
  idealized), none.
* :mod:`.discrete` -- exact samplers (Canonne-Kamath-Steinke 2020) in int64.
* :mod:`.auditor` -- black-box privacy auditor: an empirical lower bound on an
  agent's epsilon from runs on two neighbouring loss sequences.
"""

from .auditor import (
    AuditResult,
    audit,
    audit_samples,
    clopper_pearson,
    eps_lower_bound,
    neighbour_param,
    replay_env,
)
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
    NoNoise,
    NoiseStrategy,
    noise_strategy,
)

__all__ = [
    "COUNTERS",
    "DEFAULT_NEIGHBOURING",
    "GAUSSIAN_ONLY",
    "AgarwalSinghCounter",
    "AuditResult",
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
    "audit",
    "audit_samples",
    "clopper_pearson",
    "compose_epsilon",
    "discrete_gaussian_sigma",
    "eps_lower_bound",
    "gaussian_sigma",
    "laplace_scale",
    "make_counter",
    "neighbour_param",
    "noise_strategy",
    "replay_env",
    "verify_guarantee",
]
