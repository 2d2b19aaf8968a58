"""Noise calibration and privacy accounting for the private learners.

Calibration turns a sensitivity and a privacy budget into a noise scale:

* :func:`laplace_scale` -- Laplace mechanism, pure ``epsilon``-DP:
  ``b = Delta_1 / epsilon`` (Dwork, McSherry, Nissim, Smith 2006).
* :func:`gaussian_sigma` -- the *analytic* Gaussian mechanism (Balle & Wang,
  ICML 2018, Thm. 8): the smallest ``sigma`` with
  ``Phi(Delta/(2 sigma) - eps sigma/Delta)
  - e^eps Phi(-Delta/(2 sigma) - eps sigma/Delta) <= delta``.
  It is computed by ``dp_accounting.get_sigma_gaussian`` (for sensitivity 1)
  and scaled by ``Delta_2``; it is strictly smaller than the classical
  ``Delta_2 sqrt(2 ln(1.25/delta)) / epsilon``.
* :func:`discrete_gaussian_sigma` -- the exact discrete Gaussian mechanism on an
  integer grid (Canonne, Kamath, Steinke, NeurIPS 2020): the smallest INTEGER
  ``sigma`` whose ``rho = K2 / (2 sigma^2)``-zCDP guarantee (``K2`` the squared l2
  sensitivity in grid units) is ``(epsilon, delta)``-DP, searched on the accountant
  (:func:`zcdp_rho` route of :func:`accountant_epsilon`).

Accounting goes through Google's ``dp_accounting``: every mechanism describes itself
as a ``dp_accounting.DpEvent`` (normalised to a unit shift, ``noise_multiplier =
noise scale / replace-one sensitivity``, accounted as ``ADD_OR_REMOVE_ONE``) and
:func:`accountant_epsilon` / :func:`verify_guarantee` ask dp_accounting which epsilon
it reaches at a given delta: exact analytic Gaussian for compositions of Gaussians,
basic composition for pure (Laplace) claims, dp_accounting's RDP accountant for
compositions of zCDP events (the discrete Gaussian), the PLD accountant otherwise.
Unsupported events raise ``dp_accounting.UnsupportedEventError``. The cost does not
grow with epsilon.

Why these choices: ``docs/algorithms/privacy-accounting.md``.
"""

from __future__ import annotations

import collections
import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dp_online_envs.validation import (
    check_delta,
    check_epsilon,
    check_gaussian_delta,
    check_real,
)

if TYPE_CHECKING:  # dp_accounting is imported where it is used (its import takes 0.8 s)
    from dp_accounting import dp_event

__all__ = [
    "DEFAULT_NEIGHBOURING",
    "PrivacyGuarantee",
    "accountant_epsilon",
    "compose_epsilon",
    "discrete_gaussian_sigma",
    "gaussian_mu",
    "gaussian_sigma",
    "laplace_scale",
    "verify_guarantee",
    "zcdp_rho",
]

DEFAULT_NEIGHBOURING = "loss sequences differing in one round's loss"

# Slack allowed between a claimed epsilon and the accountant's (pessimistic,
# discretised) PLD estimate, see :func:`verify_guarantee`.
_VERIFY_RTOL = 1e-4
_VERIFY_ATOL = 1e-6


def _guarantee_epsilon(value: object) -> float:
    """The epsilon of a guarantee: a real number ``>= 0``, or ``inf`` (no guarantee).

    A mechanism's epsilon is :func:`dp_online_envs.validation.check_epsilon`'s; a
    statement about a mechanism may also say "no guarantee at all".
    """
    if not isinstance(value, bool) and value == math.inf:
        return math.inf
    return check_real("epsilon", value, 0.0)


# --------------------------------------------------------------------------
# calibration
# --------------------------------------------------------------------------
def laplace_scale(l1_sensitivity: float, epsilon: float) -> float:
    """Scale of the Laplace mechanism for pure ``epsilon``-DP.

    Adding i.i.d. ``Lap(b)`` noise to every coordinate of a query whose l1
    sensitivity is ``Delta_1`` is ``(Delta_1 / b)``-DP (Dwork et al. 2006), so
    ``b = Delta_1 / epsilon``.

    Args:
        l1_sensitivity: ``Delta_1 > 0``, max l1 distance of the query's value on
            neighbouring inputs.
        epsilon: privacy parameter, ``0 < epsilon < inf``.

    Returns:
        The Laplace scale ``b``.

    Raises:
        ValueError: on a non-positive / non-finite argument (named in the message).
    """
    return (check_real("l1_sensitivity", l1_sensitivity, 0.0, low_inclusive=False)
            / check_epsilon(epsilon))


def gaussian_sigma(l2_sensitivity: float, epsilon: float, delta: float) -> float:
    """Standard deviation of the analytic Gaussian mechanism (Balle & Wang 2018).

    ``sigma = Delta_2 * sigma_1(epsilon, delta)`` where ``sigma_1`` is the exact
    (not the ``sqrt(2 ln(1.25/delta))/epsilon``) noise of a sensitivity-1
    Gaussian mechanism that is ``(epsilon, delta)``-DP, computed by
    ``dp_accounting.get_sigma_gaussian`` (Balle & Wang, Thm. 8, bisection on
    Eq. (6)). Valid for every ``epsilon > 0`` (also ``epsilon >= 1``).

    Args:
        l2_sensitivity: ``Delta_2 > 0``.
        epsilon: ``0 < epsilon < inf``.
        delta: ``0 < delta < 1``.

    Returns:
        The per-coordinate noise standard deviation.

    Raises:
        ValueError: on an invalid argument (named in the message).
    """
    sens = check_real("l2_sensitivity", l2_sensitivity, 0.0, low_inclusive=False)
    eps, dlt = check_epsilon(epsilon), check_gaussian_delta(delta)
    return sens * _unit_gaussian_sigma(eps, dlt)


@functools.lru_cache(maxsize=256)
def _unit_gaussian_sigma(eps: float, dlt: float) -> float:
    """``sigma_1(eps, delta)``, nudged up until the exact epsilon is within the claim:
    ``get_epsilon_gaussian(sigma, delta) <= epsilon`` (why:
    ``docs/algorithms/privacy-accounting.md``)."""
    import dp_accounting
    # dp-accounting's bisection divides by zero inside log1p at epsilon >~ 3e7 (a numpy
    # warning, not an error): its answer is still checked below, so the warning is noise.
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        sigma = float(dp_accounting.get_sigma_gaussian(eps, dlt))
        steps = [1e-9] * 64 + [1e-9 * 2.0**k for k in range(1, 64)]  # then geometric
        for step in steps:
            if dp_accounting.get_epsilon_gaussian(sigma, dlt) <= eps:
                return sigma
            sigma *= 1.0 + step
    raise ValueError(f"no Gaussian noise found for epsilon={eps!r}, delta={dlt!r}")


def discrete_gaussian_rho(sq_sensitivity: int, sigma: int) -> float:
    """``rho = K2 / (2 sigma^2)`` of the discrete Gaussian with integer parameter
    ``sigma`` on integer vectors whose squared l2 distance is at most ``K2``, rounded UP
    to the next float (so the accounted rho is never below the true one).

    Canonne, Kamath, Steinke (NeurIPS 2020), Thm. 4: on integer queries of sensitivity
    ``Delta`` the discrete Gaussian ``N_Z(0, sigma^2)`` is ``Delta^2 / (2 sigma^2)``-zCDP;
    independent coordinates compose additively (Bun & Steinke 2016, Lemma 2.3; CKS's
    multivariate statement), giving ``sum_j Delta_j^2 / (2 sigma^2) <= K2 / (2 sigma^2)``.
    """
    return math.nextafter(int(sq_sensitivity) / (2.0 * int(sigma) ** 2), math.inf)


@functools.lru_cache(maxsize=1024)
def discrete_gaussian_sigma(sq_sensitivity: int, epsilon: float, delta: float,
                            limit: int) -> int:
    """The smallest integer ``sigma`` whose discrete Gaussian is ``(epsilon, delta)``-DP.

    ``sq_sensitivity = K2`` is the (integer) squared l2 sensitivity in grid units, all
    noised blocks together; the accountant sees ``ZCDpEvent(`` :func:`discrete_gaussian_rho`
    ``(K2, sigma))`` and its epsilon decreases with ``sigma``, so the smallest passing
    integer is bracketed (doubling or halving from the analytic Gaussian's ``sigma``),
    then found by :func:`_smallest_passing` on :func:`accountant_epsilon`. ``sigma`` is
    an integer (``sigma^2`` a rational with denominator 1), rounded UP: the accounted
    epsilon is ``<= epsilon``.

    Args:
        sq_sensitivity: ``K2 >= 1``.
        epsilon: ``0 < epsilon < inf``.
        delta: ``0 < delta < 1``.
        limit: The largest ``sigma`` the sampler accepts.

    Raises:
        ValueError: If no ``sigma <= limit`` meets the budget (named in the message).
    """
    from dp_accounting import dp_event
    k2 = int(sq_sensitivity)
    eps, dlt = check_epsilon(epsilon), check_gaussian_delta(delta)
    if k2 < 1:
        raise ValueError(f"sq_sensitivity must be an integer >= 1, got {sq_sensitivity!r}")

    def epsilon_at(sigma: int) -> float:
        return accountant_epsilon(dp_event.ZCDpEvent(discrete_gaussian_rho(k2, sigma)), dlt)

    start = max(1, math.ceil(math.sqrt(k2) * _unit_gaussian_sigma(eps, dlt)))
    # lo fails (or is 0), hi passes; their epsilons (inf for sigma = 0)
    lo, e_lo, hi, e_hi = 0, math.inf, start, epsilon_at(start)
    if e_hi <= eps:
        while hi > 1 and (e := epsilon_at(hi // 2)) <= eps:
            hi, e_hi = hi // 2, e
        if hi > 1:
            lo, e_lo = hi // 2, e
    else:
        lo, e_lo = start, e_hi
        while (e_hi := epsilon_at(hi := 2 * lo)) > eps:
            lo, e_lo = hi, e_hi
            if lo > limit:
                raise ValueError(
                    f"no discrete Gaussian sigma <= {limit} gives (epsilon={epsilon!r}, "
                    f"delta={delta!r})-DP for squared sensitivity {k2} on the grid")
    hi = _smallest_passing(epsilon_at, eps, lo, e_lo, hi, e_hi)
    if hi > limit:
        raise ValueError(
            f"the discrete Gaussian for (epsilon={epsilon!r}, delta={delta!r}) needs "
            f"sigma={hi} > {limit} grid steps: the sampler's int64 range is exceeded")
    return hi


def _smallest_passing(epsilon_at, eps: float, lo: int, e_lo: float, hi: int,
                      e_hi: float) -> int:
    """The smallest integer ``sigma`` in ``(lo, hi]`` with ``epsilon_at(sigma) <= eps``,
    given ``e_lo = epsilon_at(lo) > eps >= e_hi = epsilon_at(hi)`` and an epsilon that
    does not increase with ``sigma`` (``e_lo`` may be ``inf``).

    The answer is bisection's, in fewer calls of the accountant: each step guesses the
    crossing by interpolating ``log epsilon`` linearly in ``log sigma`` (nearly linear:
    epsilon falls about as ``1 / sigma``), looks at the guess and its neighbour across
    the guessed crossing, and falls back to halving the bracket whenever a step did not
    halve it: 4-6 calls where bisection takes about 24 at ``sigma ~ 3 10^6``.
    """
    while hi - lo > 1:
        width = hi - lo
        if 0 < e_hi < e_lo < math.inf and lo >= 1:
            share = math.log(e_lo / eps) / math.log(e_lo / e_hi)
            guess = round(lo * (hi / lo) ** share)
            guess = min(max(guess, lo + 1), hi - 1)
        else:
            guess = (lo + hi) // 2
        e = epsilon_at(guess)
        if e <= eps:
            hi, e_hi = guess, e
            if guess - 1 > lo and (e := epsilon_at(guess - 1)) > eps:
                lo, e_lo = guess - 1, e
            elif guess - 1 > lo:
                hi, e_hi = guess - 1, e
        else:
            lo, e_lo = guess, e
            if guess + 1 < hi and (e := epsilon_at(guess + 1)) <= eps:
                hi, e_hi = guess + 1, e
            elif guess + 1 < hi:
                lo, e_lo = guess + 1, e
        if hi - lo > width // 2 and hi - lo > 1:  # a slow step: halve the bracket once
            mid = (lo + hi) // 2
            if (e := epsilon_at(mid)) <= eps:
                hi, e_hi = mid, e
            else:
                lo, e_lo = mid, e
    return hi


# --------------------------------------------------------------------------
# guarantees and accounting
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class PrivacyGuarantee:
    """An ``(epsilon, delta)``-DP statement about a mechanism.

    Attributes:
        epsilon: ``epsilon >= 0`` (``inf`` means: no guarantee).
        delta: ``0 <= delta <= 1``.
        neighbouring: the neighbouring relation the statement refers to.
        mechanism: a human-readable description of the mechanism.
        idealized: ``True`` when the statement holds for the idealized real-valued
            mechanism only, NOT for its float64 computation (continuous Laplace or
            Gaussian noise added in floating point leaks through the low-order bits:
            Mironov, CCS 2012). ``False``: the released values are computed exactly
            as the accounted mechanism (integer arithmetic on a grid, exact
            samplers; see :mod:`agents.privacy.discrete`).
    """

    epsilon: float
    delta: float
    neighbouring: str = DEFAULT_NEIGHBOURING
    mechanism: str = ""
    idealized: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _guarantee_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_real("delta", self.delta, 0.0, 1.0))

    @property
    def is_pure(self) -> bool:
        """True for a pure (``delta = 0``) guarantee."""
        return self.delta == 0.0

    def __str__(self) -> str:
        what = f" for {self.mechanism}" if self.mechanism else ""
        caveat = (" [IDEALIZED: holds for the real-valued mechanism, not for its "
                  "float64 computation]" if self.idealized else "")
        return (f"({self.epsilon:.6g}, {self.delta:.3g})-DP{what} "
                f"w.r.t. {self.neighbouring}{caveat}")


def compose_epsilon(*parts: PrivacyGuarantee | float) -> PrivacyGuarantee:
    """Basic (sequential) composition: ``(sum eps_i, sum delta_i)``.

    Valid for adaptive composition (Dwork et al. 2006/2010). It is loose for
    many Gaussian parts; compose their ``DpEvent`` s with
    ``dp_accounting.ComposedDpEvent`` and :func:`verify_guarantee` instead.

    Args:
        *parts: guarantees, or bare floats meaning pure ``epsilon``-DP under the
            default neighbouring relation.

    Returns:
        The composed guarantee (delta capped at 1).

    Raises:
        ValueError: with no parts, or parts under different neighbouring relations.
    """
    if not parts:
        raise ValueError("compose_epsilon needs at least one guarantee")
    gs = [p if isinstance(p, PrivacyGuarantee) else PrivacyGuarantee(p, 0.0)
          for p in parts]
    relations = {g.neighbouring for g in gs}
    if len(relations) != 1:
        raise ValueError(f"cannot compose guarantees under different neighbouring relations: "
                         f"{sorted(relations)}")
    return PrivacyGuarantee(
        epsilon=sum(g.epsilon for g in gs),
        delta=min(1.0, sum(g.delta for g in gs)),
        neighbouring=gs[0].neighbouring,
        mechanism=" + ".join(g.mechanism or "?" for g in gs),
    )


def _pure_epsilon(event: dp_event.DpEvent) -> float:
    """Pure-DP epsilon of ``event`` by basic composition (exact for delta=0)."""
    from dp_accounting import dp_event
    if isinstance(event, dp_event.NoOpDpEvent):
        return 0.0
    if isinstance(event, dp_event.LaplaceDpEvent):
        return math.inf if event.noise_multiplier == 0 else 1.0 / event.noise_multiplier
    if isinstance(event, dp_event.DiscreteLaplaceDpEvent):
        # P(y) ~ exp(-a |y|) on the integers, integer sensitivity k: epsilon = a k
        return float(event.noise_parameter) * event.sensitivity
    if isinstance(event, dp_event.SelfComposedDpEvent):
        return event.count * _pure_epsilon(event.event) if event.count else 0.0
    if isinstance(event, dp_event.ComposedDpEvent):
        return math.fsum(_pure_epsilon(e) for e in event.events)
    return math.inf  # Gaussian, non-private, ...: no pure guarantee


def gaussian_mu(event: dp_event.DpEvent) -> float | None:
    """``mu = sqrt(sum_i 1 / m_i^2)`` if ``event`` composes only Gaussian events.

    ``m_i`` are the noise multipliers of the ``GaussianDpEvent`` s (no-op events count
    0, a multiplier of 0 gives ``inf``). Such an event is ``(epsilon, delta)``-DP exactly
    when the Gaussian mechanism with noise multiplier ``1 / mu`` is (Dong, Roth, Su,
    "Gaussian Differential Privacy", JRSS-B 2022, Cor. 3.3; see
    ``docs/algorithms/privacy-accounting.md``).

    Returns:
        ``mu`` (``0`` for an event that releases nothing), or ``None`` when the event
        holds any other mechanism.
    """
    from dp_accounting import dp_event
    if isinstance(event, dp_event.NoOpDpEvent):
        return 0.0
    if isinstance(event, dp_event.GaussianDpEvent):
        m = float(event.noise_multiplier)
        return math.inf if m == 0 else 1.0 / m
    if isinstance(event, dp_event.SelfComposedDpEvent):
        inner = gaussian_mu(event.event)
        return None if inner is None else math.sqrt(event.count) * inner
    if isinstance(event, dp_event.ComposedDpEvent):
        parts = [gaussian_mu(e) for e in event.events]
        if any(p is None for p in parts):
            return None
        return math.sqrt(math.fsum(p * p for p in parts))
    return None


def zcdp_rho(event: dp_event.DpEvent) -> float | None:
    """``rho = sum_i rho_i`` if ``event`` composes only ``ZCDpEvent`` s with ``xi = 0``.

    zCDP composes additively, also adaptively (Bun & Steinke, TCC 2016, Lemma 2.3).
    No-op events count 0.

    Returns:
        ``rho``, or ``None`` when the event holds any other mechanism.
    """
    from dp_accounting import dp_event
    if isinstance(event, dp_event.NoOpDpEvent):
        return 0.0
    if isinstance(event, dp_event.ZCDpEvent):
        return float(event.rho) if event.xi == 0 else None
    if isinstance(event, dp_event.SelfComposedDpEvent):
        inner = zcdp_rho(event.event)
        return None if inner is None else event.count * inner
    if isinstance(event, dp_event.ComposedDpEvent):
        parts = [zcdp_rho(e) for e in event.events]
        return None if any(p is None for p in parts) else math.fsum(parts)
    return None


#: Renyi orders of the zCDP route: ``1 + 10^u`` for 4000 values of ``u`` evenly spaced
#: in ``[log10(0.0101), 7]`` (dp_accounting's conversion needs orders above 1.01). The
#: optimal order ``1 + sqrt(ln(1/delta) / rho)`` lies inside for every budget used here,
#: and neighbouring orders differ by 0.4%, so the grid costs a negligible fraction of
#: epsilon (``tests/privacy/test_discrete_gaussian.py`` compares with the continuous
#: minimum).
ZCDP_ORDERS = 1.0 + np.logspace(math.log10(0.0101), 7.0, 4000)


@functools.lru_cache(maxsize=4096)
def _zcdp_epsilon(rho: float, d: float) -> float:
    """Epsilon of ``rho``-zCDP at ``delta = d`` by dp_accounting's RDP accountant (the
    conversion of Canonne, Kamath, Steinke 2020, Prop. 12, minimised over
    :data:`ZCDP_ORDERS`)."""
    from dp_accounting import dp_event
    from dp_accounting.rdp import RdpAccountant
    accountant = RdpAccountant(orders=ZCDP_ORDERS)
    accountant.compose(dp_event.ZCDpEvent(rho))
    return float(accountant.get_epsilon(d))


#: How often each accounting route was taken (``"gaussian"``: closed form of Balle &
#: Wang; ``"pure"``: basic composition at delta = 0; ``"zcdp"``: the RDP accountant on
#: zCDP events; ``"pld"``: the PLD accountant), a diagnostic: e.g. whether a large
#: epsilon ever reached the PLD accountant's privacy-loss grid (whose size grows with it).
ACCOUNTING_CALLS: collections.Counter[str] = collections.Counter()


def accountant_epsilon(event: dp_event.DpEvent, delta: float) -> float:
    """Epsilon that ``event`` achieves at ``delta`` according to dp_accounting.

    Three routes, all through ``dp_accounting``:

    * ``delta > 0``, Gaussian mechanisms only: the exact analytic
      ``get_epsilon_gaussian(1 / mu, delta)`` (:func:`gaussian_mu`; Balle & Wang,
      ICML 2018, Thm. 8);
    * ``delta > 0``, zCDP events only (the exact discrete Gaussian): ``rho`` summed
      (:func:`zcdp_rho`) and converted by dp_accounting's ``RdpAccountant`` over
      :data:`ZCDP_ORDERS`;
    * ``delta > 0``, any other event: ``PLDAccountant.get_epsilon(delta)``
      (pessimistic discretisation);
    * ``delta = 0``: basic composition of the Laplace parts (exact for pure DP), after
      asking the accountant whether it supports the event.

    Why not the PLD accountant everywhere: ``docs/algorithms/privacy-accounting.md``.

    Args:
        event: the mechanism's ``dp_accounting.DpEvent``.
        delta: ``0 <= delta < 1``.

    Returns:
        The epsilon (``inf`` for non-private events).

    Raises:
        dp_accounting.UnsupportedEventError: for events the accountant cannot handle.
        ValueError: for an invalid delta.
    """
    d = check_delta(delta)
    try:
        hash(event)
    except TypeError:  # composed events hold lists: not cacheable
        return _accountant_epsilon.__wrapped__(event, d)
    return _accountant_epsilon(event, d)


@functools.lru_cache(maxsize=256)
def _accountant_epsilon(event: dp_event.DpEvent, d: float) -> float:
    """Body of :func:`accountant_epsilon`, cached for hashable (immutable) events."""
    import dp_accounting
    from dp_accounting.pld import PLDAccountant
    accountant = PLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    if d == 0.0:
        # Only ask whether the accountant knows the event: composing would build a
        # privacy-loss grid whose size grows with epsilon (tens of GB near 1e6).
        if not accountant.supports(event):
            raise dp_accounting.UnsupportedEventError(f"unsupported event: {event!r}")
        ACCOUNTING_CALLS["pure"] += 1
        return _pure_epsilon(event)
    mu = gaussian_mu(event)
    if mu is not None:
        ACCOUNTING_CALLS["gaussian"] += 1
        if mu == 0.0:
            return 0.0
        if math.isinf(mu):
            return math.inf
        return float(dp_accounting.get_epsilon_gaussian(1.0 / mu, d))
    rho = zcdp_rho(event)
    if rho is not None:
        ACCOUNTING_CALLS["zcdp"] += 1
        return _zcdp_epsilon(rho, d)
    ACCOUNTING_CALLS["pld"] += 1
    accountant.compose(event)  # raises UnsupportedEventError on unknown events
    return float(accountant.get_epsilon(d))


def verify_guarantee(
    event: dp_event.DpEvent,
    epsilon: float,
    delta: float,
    *,
    mechanism: str = "",
    neighbouring: str = DEFAULT_NEIGHBOURING,
    idealized: bool = False,
) -> PrivacyGuarantee:
    """Checks through the accountant that ``event`` is ``(epsilon, delta)``-DP.

    Args:
        event: the mechanism's ``dp_accounting.DpEvent``.
        epsilon: the claimed epsilon.
        delta: the claimed delta (0 for a pure claim).
        mechanism: description stored in the returned guarantee.
        neighbouring: neighbouring relation stored in the returned guarantee.
        idealized: stored in the returned guarantee (see :class:`PrivacyGuarantee`).

    Returns:
        The guarantee with the epsilon *reported by the accountant* at ``delta``.

    Raises:
        ValueError: if the accountant's epsilon exceeds the claim by more than
            ``1e-4`` relative + ``1e-6`` absolute (discretisation slack).
        dp_accounting.UnsupportedEventError: for events it cannot account.
    """
    claimed = _guarantee_epsilon(epsilon)
    achieved = accountant_epsilon(event, delta)
    if not achieved <= claimed * (1 + _VERIFY_RTOL) + _VERIFY_ATOL:
        raise ValueError(
            f"accountant reports epsilon={achieved!r} at delta={delta!r}, "
            f"above the claimed epsilon={epsilon!r} for {event!r}")
    return PrivacyGuarantee(achieved, float(delta), neighbouring, mechanism, idealized)
