"""The statistics of an audit: Clopper-Pearson bounds, the epsilon lower bound, events.

Every event ``E`` on a mechanism's output gives, from the ``(epsilon, delta)``-DP
inequality ``P[M(S') in E] <= e^epsilon P[M(S) in E] + delta``,

    epsilon >= ln( (P[M(S') in E] - delta) / P[M(S) in E] ).

With one-sided Clopper-Pearson bounds at level ``(1 - confidence) / (2 m)`` on the two
probabilities of each of ``m`` events fixed in advance (Bonferroni over the ``2 m``
bounds), ``eps_lb = max_j ln((p1_lo_j - delta) / p0_hi_j)`` is ``<= epsilon`` with
probability ``>= confidence``. Proof: ``docs/algorithms/privacy-auditor.md``.

* :func:`clopper_pearson`, :func:`eps_lower_bound` -- the two bounds.
* :class:`Event`, :func:`threshold_events`, :func:`best_event` -- threshold events
  ``{s >= c}`` / ``{s <= c}`` on a scalar statistic, chosen on one set of runs and
  tested on another.
* :func:`audit_samples`, :class:`AuditResult` -- the whole test on given feature
  vectors (a linear statistic fitted on a training part, events tested on the rest).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from dp_online_envs.validation import check_delta, check_int, check_real

__all__ = [
    "AuditResult",
    "Event",
    "EventTest",
    "audit_samples",
    "best_event",
    "check_confidence",
    "clopper_pearson",
    "eps_lower_bound",
    "threshold_events",
]

_STATISTICS = ("lda", "mean-diff")
#: Fewest runs per side :func:`audit_samples` accepts.
MIN_RUNS = 10


def check_confidence(confidence: object) -> float:
    """``confidence`` as a float in the open interval ``(0, 1)`` (else ``ValueError``)."""
    return check_real("confidence", confidence, 0.0, 1.0, low_inclusive=False,
                      high_inclusive=False)


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided Clopper-Pearson (exact binomial) interval for ``p`` from ``k`` of ``n``.

    Each end is a one-sided bound at level ``(1 - confidence) / 2``:
    ``lo = Beta^{-1}(a; k, n - k + 1)`` (0 when ``k = 0``) and
    ``hi = Beta^{-1}(1 - a; k + 1, n - k)`` (1 when ``k = n``), ``a = (1 - confidence)/2``.
    Both are conservative for every true ``p``.

    Raises:
        ValueError: unless ``n >= 1``, ``0 <= k <= n`` (integers) and ``0 < confidence < 1``.
    """
    n = check_int("n", n, 1)
    k = check_int("k", k, 0, n)
    a = 0.5 * (1.0 - check_confidence(confidence))
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1.0 - a, k + 1, n - k))
    return lo, hi


def eps_lower_bound(
    k1: int, n1: int, k0: int, n0: int, *,
    delta: float = 0.0, confidence: float = 0.95, tests: int = 1,
) -> float:
    """``ln((p1_lo - delta) / p0_hi)`` from event counts on two neighbouring inputs.

    ``k1`` of ``n1`` runs on the numerator side and ``k0`` of ``n0`` runs on the other
    side fell in the event. The bounds are Clopper-Pearson one-sided bounds at level
    ``(1 - confidence) / (2 tests)`` each, so that the maximum over ``tests`` events is
    a valid lower bound on epsilon with probability ``>= confidence`` (Bonferroni).

    Returns:
        The bound, ``-inf`` when ``p1_lo <= delta``.

    Raises:
        ValueError: on invalid counts, delta, confidence or tests.
    """
    conf = check_confidence(confidence)
    tests = check_int("tests", tests, 1)
    check_delta(delta)
    per_event = 1.0 - (1.0 - conf) / tests
    lo1 = clopper_pearson(k1, n1, per_event)[0]
    hi0 = clopper_pearson(k0, n0, per_event)[1]
    if lo1 <= delta:
        return -math.inf
    return math.log((lo1 - float(delta)) / hi0)


# --------------------------------------------------------------------------
# threshold events on a scalar statistic
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Event:
    """``{s >= threshold}`` (``upper``) or ``{s <= threshold}`` on a scalar statistic.

    Attributes:
        threshold: ``c``.
        upper: ``True`` for ``s >= c``, ``False`` for ``s <= c``.
        neighbour_likelier: Which side is the numerator of the bound: ``True`` when the
            event is expected likelier on ``S'`` (the neighbour), ``False`` on ``S``.
    """

    threshold: float
    upper: bool
    neighbour_likelier: bool

    def hits(self, scores: np.ndarray) -> int:
        """How many of ``scores`` fall in the event."""
        s = np.asarray(scores, dtype=np.float64)
        return int(np.sum(s >= self.threshold) if self.upper else np.sum(s <= self.threshold))

    def __str__(self) -> str:
        side = "S'" if self.neighbour_likelier else "S"
        return f"s {'>=' if self.upper else '<='} {self.threshold:.6g} (likelier on {side})"


@dataclass(frozen=True)
class EventTest:
    """One event tested on two sets of runs.

    Attributes:
        event: The event.
        eps_lb: Its bound (Bonferroni over ``tests`` events).
        counts: Hits ``(on S, on S')``.
        runs: Runs per side.
        tests: The Bonferroni factor.
    """

    event: Event
    eps_lb: float
    counts: tuple[int, int]
    runs: int
    tests: int


def threshold_events(scores: np.ndarray, neighbour_scores: np.ndarray,
                     tail_masses: tuple[float, ...] = (0.5, 0.2, 0.1, 0.05, 0.02, 0.01)
                     ) -> tuple[Event, ...]:
    """Events chosen on a pilot: thresholds at quantiles of the pooled scores.

    For each tail mass ``q`` the upper event ``{s >= c}`` takes ``c`` the ``1 - q``
    quantile of the pooled scores and the lower event ``{s <= c}`` the ``q`` quantile;
    an event's numerator side is the side whose pilot scores fall in it more often
    (ties: ``S'``). Duplicates are dropped. Only the pilot is read, so the events are
    fixed before the runs they are tested on.
    """
    s0 = np.asarray(scores, dtype=np.float64).reshape(-1)
    s1 = np.asarray(neighbour_scores, dtype=np.float64).reshape(-1)
    pooled = np.concatenate([s0, s1])
    out: list[Event] = []
    for q in tail_masses:
        for upper, level in ((True, 1.0 - q), (False, q)):
            c = float(np.quantile(pooled, level, method="inverted_cdf"))
            probe = Event(c, upper, True)
            likelier = probe.hits(s1) / max(len(s1), 1) >= probe.hits(s0) / max(len(s0), 1)
            ev = Event(c, upper, bool(likelier))
            if ev not in out:
                out.append(ev)
    return tuple(out)


def best_event(events: tuple[Event, ...], scores: np.ndarray, neighbour_scores: np.ndarray,
               *, delta: float = 0.0, confidence: float = 0.95) -> EventTest:
    """The event with the largest bound on the test runs, Bonferroni over all ``events``.

    Raises:
        ValueError: No events, or sides of different sizes.
    """
    if not events:
        raise ValueError("no events to test")
    s0 = np.asarray(scores, dtype=np.float64).reshape(-1)
    s1 = np.asarray(neighbour_scores, dtype=np.float64).reshape(-1)
    if s0.size != s1.size:
        raise ValueError(f"both sides need the same number of runs, got {s0.size} and {s1.size}")
    m, n = len(events), int(s0.size)
    best: EventTest | None = None
    for ev in events:
        k0, k1 = ev.hits(s0), ev.hits(s1)
        num, den = (k1, k0) if ev.neighbour_likelier else (k0, k1)
        lb = eps_lower_bound(num, n, den, n, delta=delta, confidence=confidence, tests=m)
        if best is None or lb > best.eps_lb:
            best = EventTest(ev, lb, (k0, k1), n, m)
    assert best is not None
    return best


# --------------------------------------------------------------------------
# the test on feature vectors
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditResult:
    """Outcome of an audit of feature vectors (:func:`audit_samples`,
    :func:`~dp_online_envs.lab.audit.audit`).

    Attributes:
        eps_lb: Lower bound on epsilon valid with probability ``>= confidence``
            (``-inf`` if no event separated the two sides beyond ``delta``).
        epsilon: The epsilon the agent claims (``inf`` for a non-private agent).
        delta: The claimed delta (used in ``eps_lb``).
        view: ``"releases"``, ``"actions"`` (or ``"samples"`` for :func:`audit_samples`).
        runs: Runs per side (training + test).
        n_test: Test runs per side, on which the counts were taken.
        confidence: Confidence of ``eps_lb``.
        tests: Number of events tried (the Bonferroni factor).
        direction: ``"S'>S"`` (the event is likelier on the neighbour ``S'``, which is
            the numerator) or ``"S>S'"``.
        event: The best event, e.g. ``"s > 0.731"``.
        counts: Hits of the best event in the test runs: ``(on S, on S')``.
        statistic: Name of the statistic ``s``.
        tau: The round in which ``S`` and ``S'`` differ (0 for raw samples).
        horizon: ``T`` (0 for raw samples).
        theta: ``theta_tau`` of ``S``.
        neighbour_theta: ``theta'_tau`` of ``S'``.
    """

    eps_lb: float
    epsilon: float
    delta: float
    view: str
    runs: int
    n_test: int
    confidence: float
    tests: int
    direction: str
    event: str
    counts: tuple[int, int]
    statistic: str = "lda"
    tau: int = 0
    horizon: int = 0
    theta: tuple[float, ...] = ()
    neighbour_theta: tuple[float, ...] = ()

    @property
    def passed(self) -> bool:
        """True when the audit found no violation: ``eps_lb <= epsilon``."""
        return self.eps_lb <= self.epsilon

    def __str__(self) -> str:
        verdict = ("PASSED (eps_lb <= claimed epsilon; evidence, not proof)" if self.passed
                   else "FAILED (eps_lb > claimed epsilon: the claim is refuted)")
        where = (f", tau={self.tau} of T={self.horizon}" if self.horizon else "")
        k_s, k_sp = self.counts
        return (
            f"privacy audit [{self.view} view{where}, {self.runs} runs per side]: "
            f"eps_lb = {self.eps_lb:.4g} at {100 * self.confidence:g}% confidence vs claimed "
            f"({self.epsilon:.4g}, {self.delta:.3g})-DP -> {verdict}; best event "
            f"{self.event} ({self.statistic}, {self.direction}): {k_sp}/{self.n_test} "
            f"test runs on S', {k_s}/{self.n_test} on S; Bonferroni over {self.tests} events"
        )


def _tail_masses(n: int) -> np.ndarray:
    return np.array([0.5]) if n == 1 else np.geomspace(0.5, 0.02, n)


def _fit_statistic(statistic, x0: np.ndarray, x1: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    if callable(statistic):
        def user(x: np.ndarray) -> np.ndarray:
            s = np.asarray(statistic(x), dtype=np.float64).reshape(-1)
            if s.shape != (x.shape[0],) or not np.all(np.isfinite(s)):
                raise ValueError(f"the statistic must map a ({x.shape[0]}, d) feature matrix "
                                 f"to {x.shape[0]} finite scores, got shape {s.shape}")
            return s
        return user
    w = x1.mean(axis=0) - x0.mean(axis=0)
    if statistic == "lda":
        var = 0.5 * (x0.var(axis=0) + x1.var(axis=0))
        w = w / np.maximum(var, 1e-12 * max(1.0, float(var.max(initial=0.0))))
    return lambda x: x @ w


def audit_samples(
    samples: np.ndarray,
    neighbour_samples: np.ndarray,
    *,
    epsilon: float = math.inf,
    delta: float = 0.0,
    confidence: float = 0.95,
    statistic: str | Callable[[np.ndarray], np.ndarray] = "lda",
    thresholds: int = 5,
    train_fraction: float = 0.5,
    view: str = "samples",
) -> AuditResult:
    """The statistical half of :func:`~dp_online_envs.lab.audit.audit`, on given i.i.d.
    outputs of ``M(S)``, ``M(S')``.

    Args:
        samples: ``(runs, d)`` feature vectors (or ``(runs,)`` scalars) of ``M(S)``.
        neighbour_samples: The same for ``M(S')`` (same shape).
        epsilon, delta: The claim to test (``delta`` enters ``eps_lb``).
        confidence: Confidence of the lower bound, in ``(0, 1)``.
        statistic: ``"lda"`` (class-mean difference over pooled diagonal variance),
            ``"mean-diff"`` or a callable ``(n, d) array -> (n,) scores`` (fixed, not fitted).
        thresholds: Number of quantile thresholds per direction (tail masses from 0.5
            down to 0.02 of the pooled training scores).
        train_fraction: Share of the runs (the first ones) used to fit the statistic.
        view: Label stored in the result.

    Raises:
        ValueError: on mismatched shapes, fewer than 10 runs, or an invalid option.
    """
    conf = check_confidence(confidence)
    check_delta(delta)
    thresholds = check_int("thresholds", thresholds, 1, 100)
    check_real("train_fraction", train_fraction, 0.0, 1.0, low_inclusive=False,
               high_inclusive=False)
    if not callable(statistic) and statistic not in _STATISTICS:
        raise ValueError(f"statistic={statistic!r}, expected one of {_STATISTICS} or a callable")
    x0 = np.asarray(samples, dtype=np.float64)
    x1 = np.asarray(neighbour_samples, dtype=np.float64)
    x0 = x0.reshape(-1, 1) if x0.ndim == 1 else x0
    x1 = x1.reshape(-1, 1) if x1.ndim == 1 else x1
    if x0.ndim != 2 or x0.shape != x1.shape:
        raise ValueError(f"samples must be two arrays of equal shape (runs, d), got "
                         f"{np.shape(samples)} and {np.shape(neighbour_samples)}")
    runs = x0.shape[0]
    check_int("runs", runs, MIN_RUNS)
    if not (np.all(np.isfinite(x0)) and np.all(np.isfinite(x1))):
        raise ValueError("samples must be finite")
    n_train = min(max(1, round(train_fraction * runs)), runs - 1)
    n_test = runs - n_train

    score = _fit_statistic(statistic, x0[:n_train], x1[:n_train])
    pooled = np.concatenate([score(x0[:n_train]), score(x1[:n_train])])
    s0, s1 = score(x0[n_train:]), score(x1[n_train:])
    masses = _tail_masses(thresholds)
    events: list[tuple[str, float]] = []
    for direction, levels in (("S'>S", 1.0 - masses), ("S>S'", masses)):
        for c in np.quantile(pooled, levels):
            if (direction, float(c)) not in events:
                events.append((direction, float(c)))
    m = len(events)

    best = None
    for direction, c in events:
        if direction == "S'>S":
            k_s, k_sp = int(np.sum(s0 > c)), int(np.sum(s1 > c))
            lb = eps_lower_bound(k_sp, n_test, k_s, n_test, delta=delta, confidence=conf, tests=m)
            label = f"s > {c:.4g}"
        else:
            k_s, k_sp = int(np.sum(s0 < c)), int(np.sum(s1 < c))
            lb = eps_lower_bound(k_s, n_test, k_sp, n_test, delta=delta, confidence=conf, tests=m)
            label = f"s < {c:.4g}"
        if best is None or lb > best[0]:
            best = (lb, direction, label, (k_s, k_sp))
    assert best is not None
    name = getattr(statistic, "__name__", "callable") if callable(statistic) else statistic
    return AuditResult(
        eps_lb=float(best[0]), epsilon=float(epsilon), delta=float(delta), view=view,
        runs=runs, n_test=n_test, confidence=conf, tests=m, direction=best[1],
        event=best[2], counts=best[3], statistic=str(name),
    )
