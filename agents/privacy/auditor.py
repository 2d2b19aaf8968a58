"""Black-box privacy auditor: an empirical lower bound on an agent's epsilon.

What is tested
--------------
An agent is ``(epsilon, delta)``-DP with respect to loss sequences that differ in one
round if, for every pair of such neighbours ``S, S'`` and every event ``E`` on its
output,

    P[M(S) in E] <= e^epsilon * P[M(S') in E] + delta            (and S <-> S').

:func:`audit` fixes one neighbouring pair -- a loss sequence ``S`` (recorded by playing
the env, or given) and ``S' = S.replace(tau, theta')`` -- runs the agent ``runs``
times on each (fresh seed every run, deterministic :class:`ReplayAdversary` replay
behind a :class:`~dp_online_envs.wrappers.FeedbackGuard`, so the agent sees only the
feedback it is entitled to), and looks at one of two views of its output:

* ``view="releases"``: the values the agent passed through
  :meth:`~agents.base.Agent.release` (the privacy boundary its proof covers) that were
  released while ``t >= tau - 1`` rounds were completed, i.e. everything that can
  depend on ``theta_tau`` (an agent may release before or after incrementing
  ``self.t``; values released earlier are identically distributed on both sides and
  are dropped, which is post-processing);
* ``view="actions"``: the points ``domain.to_point(a_t)`` played in rounds
  ``t >= tau + 1`` (the action of round ``tau`` is chosen before ``theta_tau``).

Every event ``E`` gives ``epsilon >= ln((P[M(S') in E] - delta) / P[M(S) in E])``.
On a training part of the runs (``train_fraction``) a linear statistic is fitted and
``m`` candidate events ``{s > c_j}`` / ``{s < c_j}`` are fixed; on the test part
one-sided Clopper-Pearson bounds at level ``(1 - confidence) / (2 m)`` (Bonferroni
over the ``2 m`` bounds) give

    eps_lb = max_j ln( (p1_lo_j - delta) / p0_hi_j ),

which is ``<= epsilon`` with probability ``>= confidence`` if the agent is
``(epsilon, delta)``-DP: ``eps_lb > epsilon`` refutes the claim. The method and the
proof: ``docs/algorithms/privacy-auditor.md``.

Limits: a passing audit (``eps_lb <= epsilon``) is evidence, not proof. It covers
one neighbouring pair, one view, one family of events and a finite number of runs;
with ``n`` test runs per side no audit can certify more than about
``ln(n / ln(2m/alpha))``, so it detects gross miscalibration (a missing factor, a
forgotten sensitivity) rather than small slack. The replay is oblivious: adaptive
adversaries are replayed as the fixed sequence they produced in the recording run.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import gymnasium as gym
import numpy as np
from scipy import stats

from dp_online_envs.adversaries import LossSequence, ReplayAdversary
from dp_online_envs.envs.online_env import OnlineLearningEnv
from dp_online_envs.loop import run_rounds
from dp_online_envs.problem import Problem
from dp_online_envs.validation import check_delta, check_int, check_real
from dp_online_envs.wrappers import FeedbackGuard

if TYPE_CHECKING:  # pragma: no cover
    from agents.base import Agent

__all__ = [
    "VIEWS",
    "AuditResult",
    "audit",
    "audit_samples",
    "clopper_pearson",
    "eps_lower_bound",
    "neighbour_param",
    "replay_env",
]

#: The two views of an agent's output the auditor can test.
VIEWS = ("releases", "actions")
_STATISTICS = ("lda", "mean-diff")
_MIN_RUNS = 10


# --------------------------------------------------------------------------
# statistics of counts
# --------------------------------------------------------------------------
def _check_confidence(confidence: object) -> float:
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
    a = 0.5 * (1.0 - _check_confidence(confidence))
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
    conf = _check_confidence(confidence)
    tests = check_int("tests", tests, 1)
    check_delta(delta)
    per_event = 1.0 - (1.0 - conf) / tests
    lo1 = clopper_pearson(k1, n1, per_event)[0]
    hi0 = clopper_pearson(k0, n0, per_event)[1]
    if lo1 <= delta:
        return -math.inf
    return math.log((lo1 - float(delta)) / hi0)


# --------------------------------------------------------------------------
# the result
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditResult:
    """Outcome of an audit.

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


# --------------------------------------------------------------------------
# event selection on feature samples
# --------------------------------------------------------------------------
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
    """The statistical half of :func:`audit`, on given i.i.d. outputs of ``M(S)``, ``M(S')``.

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
    conf = _check_confidence(confidence)
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
    check_int("runs", runs, _MIN_RUNS)
    if not (np.all(np.isfinite(x0)) and np.all(np.isfinite(x1))):
        raise ValueError("samples must be finite")
    n_train = min(max(1, int(round(train_fraction * runs))), runs - 1)
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


# --------------------------------------------------------------------------
# the game side
# --------------------------------------------------------------------------
def _is_admissible(loss, theta: np.ndarray) -> bool:
    return bool(np.allclose(loss.clip_param(theta), theta, rtol=0.0, atol=1e-9))


def neighbour_param(loss, theta: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
    """An admissible parameter far (Euclidean) from ``theta``: the default ``theta'``.

    For a box parameter set (``loss.param_is_box``) it is the opposite corner: each
    coordinate goes to the end of its interval farther from ``theta``. Otherwise the
    farthest of a few admissible candidates: that corner clipped, ``clip_param`` of the
    reflection of ``theta`` through the box centre pushed far out (on a ball this is the
    antipodal boundary point), and 64 ``sample_param`` draws.
    """
    theta = np.asarray(theta, dtype=np.float64)
    space = loss.param_space
    low = np.broadcast_to(np.asarray(space.low, np.float64), theta.shape)
    high = np.broadcast_to(np.asarray(space.high, np.float64), theta.shape)
    corner = np.where(theta - low >= high - theta, low, high)
    if getattr(loss, "param_is_box", False):
        return corner.copy()
    rng = np.random.default_rng(0) if rng is None else rng
    centre = 0.5 * (low + high)
    scale = 1e3 * max(1.0, float(np.max(high - low)))
    away = theta - centre
    norm = float(np.linalg.norm(away))
    candidates = [loss.clip_param(corner), loss.clip_param(-theta)]
    if norm > 0:
        candidates.append(loss.clip_param(centre - scale * away / norm))
    candidates += [loss.clip_param(loss.sample_param(rng)) for _ in range(64)]
    dists = [float(np.linalg.norm(c - theta)) for c in candidates]
    return np.asarray(candidates[int(np.argmax(dists))], dtype=np.float64)


def _replay(domain, loss, native: str, sequence: LossSequence, feedback: str) -> gym.Env:
    env = OnlineLearningEnv(domain, loss, ReplayAdversary(sequence), feedback=native,
                            horizon=len(sequence))
    return FeedbackGuard(env, feedback)


def replay_env(problem: Problem, sequence: LossSequence | np.ndarray,
               feedback: str | None = None) -> gym.Env:
    """``FeedbackGuard(OnlineLearningEnv(domain, loss, ReplayAdversary(sequence)))``.

    The env replays ``sequence`` exactly (``horizon = len(sequence)``) with the
    problem's native feedback, and the guard passes on only ``feedback`` (default: the
    problem's; ``"bandit"`` downgrades a full-information problem).
    """
    seq = sequence if isinstance(sequence, LossSequence) else LossSequence(np.asarray(sequence))
    return _replay(problem.domain, problem.loss, problem.feedback, seq,
                   problem.feedback if feedback is None else feedback)


def _resolve_env(env: Any) -> tuple[Any, Any, str, int, Any, str]:
    """(domain, loss, native feedback, horizon, adversary or None, permitted feedback)."""
    if callable(env) and not isinstance(env, (gym.Env, Problem)):
        env = env()
    if isinstance(env, Problem):
        return env.domain, env.loss, env.feedback, env.horizon, None, env.feedback
    if isinstance(env, gym.Env):
        base = env.unwrapped
        if not isinstance(base, OnlineLearningEnv):
            raise TypeError(f"the env must wrap an OnlineLearningEnv, got {type(base).__name__}")
        try:
            outer = env.get_wrapper_attr("problem").feedback
        except AttributeError:  # pragma: no cover - OnlineLearningEnv has .problem
            outer = base.feedback
        return base.domain, base.loss, base.feedback, base.horizon, base.adversary, outer
    raise TypeError("env must be a Problem, a gymnasium env wrapping an OnlineLearningEnv, "
                    f"or a zero-argument callable returning one; got {type(env).__name__}")


def _claim(agent: Agent) -> tuple[float, float]:
    g = getattr(agent, "privacy", None)
    if g is not None:
        return float(g.epsilon), float(g.delta)
    if getattr(agent, "epsilon", None) is not None:
        return float(agent.epsilon), float(getattr(agent, "delta", 0.0))
    return math.inf, 0.0


def _play(env: gym.Env, agent: Agent, seed: int, view: str, tau: int, domain) -> np.ndarray:
    agent.record_releases = view == "releases"
    agent.reset(seed)
    env.reset(seed=0)  # the replay is deterministic; the seed only pins np_random
    points: list[np.ndarray] = []

    def keep_point(t: int, action: Any, _feedback: np.ndarray) -> None:
        if t > tau:
            points.append(domain.to_point(action))

    run_rounds(env, agent, keep_point if view == "actions" else None)
    if view == "actions":
        return np.concatenate(points) if points else np.zeros(0)
    vals = [np.ravel(v) for r, v in agent.releases if r >= tau - 1]
    return np.concatenate(vals) if vals else np.zeros(0)


def _stack(rows: list[np.ndarray]) -> np.ndarray:
    lengths = {r.size for r in rows}
    if len(lengths) == 1:
        return np.stack(rows)
    width = max(lengths)
    out = np.zeros((len(rows), width + 1))
    for i, r in enumerate(rows):
        out[i, : r.size] = r
        out[i, width] = r.size
    return out


def audit(
    agent_factory: Callable[[int], Agent],
    env: Problem | gym.Env | Callable[[], Problem | gym.Env],
    *,
    tau: int,
    runs: int = 1000,
    view: str = "releases",
    confidence: float = 0.95,
    seed: int = 0,
    sequence: LossSequence | np.ndarray | None = None,
    neighbour_theta: np.ndarray | None = None,
    statistic: str | Callable[[np.ndarray], np.ndarray] = "lda",
    thresholds: int = 5,
    train_fraction: float = 0.5,
) -> AuditResult:
    """Empirical lower bound on the epsilon of an agent (see the module docstring).

    Args:
        agent_factory: ``agent_factory(seed) -> Agent``; called once per run (and once
            to read the claim and record the sequence). The claim is ``agent.privacy``
            (else ``agent.epsilon``/``agent.delta``; ``inf`` for non-private agents).
        env: A :class:`~dp_online_envs.problem.Problem`, a gymnasium env wrapping an
            :class:`OnlineLearningEnv` (a registered env or a hand-built one), or a
            zero-argument callable returning either. Only its domain, loss family,
            feedback, horizon and (for recording) adversary are used.
        tau: The round (1-based) in which the two sequences differ: ``1 <= tau <= T``
            (``<= T - 1`` for the actions view).
        runs: Runs per side (>= 10), split into training and test parts.
        view: ``"releases"`` or ``"actions"``.
        confidence: Confidence of ``eps_lb``, in ``(0, 1)``.
        seed: Seeds everything: the recording run, and a seed sequence giving every run
            of each side its own agent seed.
        sequence: ``S``; default: recorded by playing the env (with ``record_losses``)
            once with a fresh agent, horizon ``T`` of the env. Its length is the
            horizon of the audit.
        neighbour_theta: ``theta'_tau`` of ``S'`` (must be admissible); default
            :func:`neighbour_param` (opposite corner / far point).
        statistic, thresholds, train_fraction: Event selection, see :func:`audit_samples`.

    Returns:
        The :class:`AuditResult`.

    Raises:
        ValueError: on an invalid argument (named in the message), an inadmissible
            ``theta'`` or sequence, or a releases-view audit of an agent that released
            nothing from round ``tau`` on.
        TypeError: on an env of an unsupported kind.
    """
    if view not in VIEWS:
        raise ValueError(f"view={view!r}, expected one of {VIEWS}")
    runs = check_int("runs", runs, _MIN_RUNS)
    conf = _check_confidence(confidence)
    check_int("tau", tau, 1)
    if not callable(agent_factory):
        raise TypeError(f"agent_factory must be callable (seed -> Agent), got {agent_factory!r}")
    domain, loss, native, horizon, adversary, outer = _resolve_env(env)

    root = np.random.SeedSequence(seed)
    rec_ss, ss0, ss1, theta_ss = root.spawn(4)
    rec_seed = int(rec_ss.generate_state(1, np.uint64)[0])
    agent = agent_factory(rec_seed)
    epsilon, delta = _claim(agent)
    wants = getattr(agent, "feedback", "full")
    agent_problem = getattr(agent, "problem", None)
    permitted = ("bandit" if "bandit" in (wants, outer, getattr(agent_problem, "feedback", "full"))
                 else "full")

    if sequence is None:
        check_int("tau", tau, 1, horizon)  # before playing
        adv = "oblivious" if adversary is None else copy.deepcopy(adversary)
        rec = OnlineLearningEnv(domain, loss, adv, feedback=native, horizon=horizon,
                                record_losses=True)
        guarded = FeedbackGuard(rec, permitted)
        agent.reset(rec_seed)
        guarded.reset(seed=rec_seed)
        run_rounds(guarded, agent)
        sequence = rec.played_losses()
    elif not isinstance(sequence, LossSequence):
        sequence = LossSequence(np.asarray(sequence))
    T = len(sequence)
    top = T - 1 if view == "actions" else T
    try:
        check_int("tau", tau, 1, top)
    except ValueError as exc:
        raise ValueError(f"{exc} (the {view} view of a {T}-round sequence)") from None
    bad = [t + 1 for t, th in enumerate(sequence.thetas) if not _is_admissible(loss, th)]
    if bad:
        raise ValueError(f"the sequence has inadmissible parameters in rounds {bad[:5]}")
    theta = sequence.thetas[tau - 1]
    if neighbour_theta is None:
        neighbour = neighbour_param(loss, theta, np.random.default_rng(theta_ss))
    else:
        neighbour = np.asarray(neighbour_theta, dtype=np.float64)
        if neighbour.shape != theta.shape or not np.all(np.isfinite(neighbour)):
            raise ValueError(f"neighbour_theta has shape {neighbour.shape}, expected {theta.shape}")
        if not _is_admissible(loss, neighbour):
            raise ValueError(f"neighbour_theta={neighbour_theta!r} is not an admissible "
                             f"parameter of {loss!r}")
    neighbour_seq = sequence.replace(tau, neighbour)

    features = []
    for seq, ss in ((sequence, ss0), (neighbour_seq, ss1)):
        env_side = _replay(domain, loss, native, seq, permitted)
        seeds = [int(s) for s in ss.generate_state(runs, np.uint64)]
        rows = [_play(env_side, agent_factory(s), s, view, tau, domain) for s in seeds]
        if view == "releases" and all(r.size == 0 for r in rows):
            raise ValueError(
                f"the agent released nothing from round tau={tau} on: it must pass its "
                f"private outputs through Agent.release (or audit view='actions')")
        features.append(rows)
    x = _stack(features[0] + features[1])  # one width for both sides
    result = audit_samples(x[:runs], x[runs:], epsilon=epsilon, delta=delta,
                           confidence=conf, statistic=statistic, thresholds=thresholds,
                           train_fraction=train_fraction, view=view)
    return dataclasses.replace(
        result, tau=int(tau), horizon=T, theta=tuple(float(v) for v in theta),
        neighbour_theta=tuple(float(v) for v in neighbour))
