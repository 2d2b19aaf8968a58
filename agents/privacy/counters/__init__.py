"""Continual counters: private prefix sums of a stream of vectors.

A continual counter receives ``z_1, ..., z_T`` in ``R^dim`` one at a time and
after each ``z_t`` releases a noisy prefix sum ``S_t + eta_t`` with
``S_t = sum_{s <= t} z_s``.  Neighbouring streams differ in ONE ``z_t``; the
``sensitivity`` of a counter is the largest norm of that difference (l1 for
Laplace noise, l2 for Gaussian noise).  It is the caller's job to make it true
(clip or bound the inputs); a counter cannot check it.

All the counters are linear: every internal value is (exact partial sum) +
(data-independent noise), and the release is a fixed linear function of those
values.  The implementations therefore keep the exact running sum ``S_t`` and
the noise process separately and return ``S_t + eta_t``; this is the same
output as summing noisy nodes, and ``noise=None`` gives exact prefix sums.

A counter is a structure (which noise draws enter which release) and a noise
strategy of :mod:`agents.privacy.noise` (how a draw is sampled, its variance,
its calibration and its ``dp_accounting`` event): ``noise=`` takes a
:class:`~agents.privacy.noise.NoiseStrategy` or its name.

Exact arithmetic: with :class:`~agents.privacy.noise.DiscreteLaplaceNoise` (the
learners' default for pure DP) or :class:`~agents.privacy.noise.DiscreteGaussianNoise`
(their default for ``delta > 0`` on the tree counters) a counter rounds every input onto the strategy's grid
(step ``g``, a power of two), keeps the prefix sums and the noise as int64 and releases
``(S_t + eta_t) * g``: the tree and Agarwal-Singh releases are integer multiples of
``g``, computed exactly (``|S_t + eta_t| < 2^53`` is checked); Honaker's estimates are
float64 post-processing of the exact integer noisy node sums (it keeps the node sums
for this). With the real-valued strategies (``"laplace"``, ``"gaussian"``) the
guarantee holds for the idealized real-valued mechanism only and is marked so; the
factorization counter has real coefficients and is Gaussian-only, hence always
idealized.

Privacy holds for adaptively chosen inputs (``z_t`` may depend on earlier
releases): for the tree counters see Smith & Thakurta (NeurIPS 2013, Sec. 1,
footnote 1: the tree-based sum is adaptively secure, also for delta > 0); for
Gaussian noise through a lower-triangular factorization see Denisov, McMahan,
Rush, Smith, Thakurta (NeurIPS 2022), whose adaptive-streams result covers
:class:`FactorizationCounter`.

Counters (see :data:`COUNTERS`): ``"tree"`` :class:`BinaryTreeCounter`,
``"agarwal-singh"`` :class:`AgarwalSinghCounter`, ``"honaker"``
:class:`HonakerCounter`, ``"factorization"`` :class:`FactorizationCounter`, ``"blt"``
:class:`BLTCounter`.

Modules, each importing only the ones before it: :mod:`.base` (the
:class:`ContinualCounter` interface and its exact-noise buffer), :mod:`.tree` (the
dyadic-tree counters), :mod:`.factorization` (square-root factorization), :mod:`.blt`
(buffered linear Toeplitz); this package adds :func:`make_counter` and the tables
:data:`COUNTERS` and :data:`GAUSSIAN_ONLY`.
"""

from __future__ import annotations

from dp_online_envs.validation import did_you_mean

from .base import EXACT_NOISE_BLOCK, ContinualCounter
from .blt import BLTCounter
from .factorization import FactorizationCounter
from .tree import AgarwalSinghCounter, BinaryTreeCounter, HonakerCounter, popcount

__all__ = [
    "COUNTERS",
    "EXACT_NOISE_BLOCK",
    "GAUSSIAN_ONLY",
    "AgarwalSinghCounter",
    "BLTCounter",
    "BinaryTreeCounter",
    "ContinualCounter",
    "FactorizationCounter",
    "HonakerCounter",
    "make_counter",
    "popcount",
]

_CLASSES: dict[str, type[ContinualCounter]] = {
    cls.name: cls
    for cls in (BinaryTreeCounter, AgarwalSinghCounter, HonakerCounter, FactorizationCounter,
                BLTCounter)
}

#: Names of the counters that take Gaussian noise only.
GAUSSIAN_ONLY: frozenset[str] = frozenset(n for n, c in _CLASSES.items() if c.gaussian_only)

#: name -> one-line description of every counter :func:`make_counter` builds.
COUNTERS: dict[str, str] = {
    "tree": "binary-tree mechanism (Dwork et al. 2010; Smith-Thakurta 2013 App. A Alg. 2)",
    "agarwal-singh": "tree with identically distributed noise, ceil(log2 T) draws per "
                     "release (Agarwal-Singh 2017 Alg. 2)",
    "honaker": "tree with online inverse-variance node estimates (Honaker 2015), "
               "about half the tree's variance",
    "factorization": "square-root factorization of the prefix-sum matrix, Gaussian only "
                     "(Henzinger-Upadhyay-Upadhyay 2023; Fichtenberger et al. 2023)",
    "blt": "buffered-linear-Toeplitz factorization, O(dim) work per step, Gaussian only "
           "(Dvijotham-McMahan-Pillutla-Steinke-Thakurta 2024)",
}


def make_counter(name: str, horizon: int, dim: int, **kwargs) -> ContinualCounter:
    """Builds the counter called ``name`` (a key of :data:`COUNTERS`).

    Args:
        name: ``"tree"``, ``"agarwal-singh"``, ``"honaker"``, ``"factorization"`` or
            ``"blt"``.
        horizon: ``T``.
        dim: input dimension.
        **kwargs: keyword arguments of :class:`ContinualCounter`
            (``noise``, ``epsilon``, ``delta``, ``sensitivity``, ``rng``; ``buffers``
            for ``"blt"``).

    Raises:
        ValueError: for an unknown name or invalid parameters.
    """
    try:
        cls = _CLASSES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown counter name={name!r};{did_you_mean(name, _CLASSES)} choose one of "
            f"{sorted(_CLASSES)}") from None
    return cls(horizon, dim, **kwargs)
