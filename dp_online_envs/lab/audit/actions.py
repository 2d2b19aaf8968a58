"""A black-box privacy audit of a learner seen only through its actions.

:func:`audit_actions` plays a *session* (:mod:`~dp_online_envs.lab.audit.sessions`: an
isolated process, or an in-process adapter; or a vector session, B runs at a time,
:mod:`~dp_online_envs.lab.audit.vector`) on pairs of loss sequences that differ in one
round and tests the learner's claimed ``(epsilon, delta)`` on the actions alone.

1. **Candidates.** For every ``tau`` in ``settings.taus`` and both directions, a pair
   ``S`` = the same parameter ``theta`` in every round, ``S'`` = ``S`` with
   ``theta'`` in round ``tau`` (``theta``, ``theta'`` = the low corner of the parameter
   set, clipped, and the admissible point farthest from it; on ``DPBandit-MAB-v0``
   every arm's loss 0 vs 1, so whichever arm the learner plays in round ``tau`` sees
   0 vs 1, the change that moves it most). Losses that stay constant elsewhere leave the
   learner nothing else to react to.
2. **Statistics built for actions** (:class:`Statistic`), over a window of rounds
   ``tau + 1 .. tau + w`` (``w = 1, 2, 4, ...`` and the rest of the game): ``replays``
   -- ``sum <x_t, x_tau>``, for arms the number of plays of the arm played in round
   ``tau`` (a learner that saw a high loss there plays it less); ``exposure`` --
   ``sum f(theta', x_t) - f(theta, x_t)``, how much the later plays avoid the changed
   loss (a generic fallback for continuous actions).
3. **Pilot.** ``pilot_runs`` runs per side of every candidate pair, every statistic
   computed on each run. For each (pair, statistic), the :data:`KEPT_EVENTS`
   threshold events ``{s >= c}`` / ``{s <= c}`` (at quantiles of the pooled pilot
   scores) with the largest bound *predicted for the test* (:func:`pilot_events`: the
   bound ``runs`` test runs would give at the pilot's estimated probabilities); the
   (pair, statistic, events) with the largest prediction is kept.
4. **Test.** ``runs`` fresh runs per side (seeds never used by the pilot) of the kept
   pair; Clopper-Pearson bounds at level ``(1 - confidence) / (2 m)`` over the ``m``
   kept events give ``eps_lb``, and ``eps_lb > epsilon`` refutes the claim.

Validity: the pilot's runs are independent of the test's, and everything the pilot
chooses (pair, statistic, events) is fixed before the test runs are played, so
conditionally on the pilot each test count is binomial with the true probability and
``P[eps_lb > epsilon] <= 1 - confidence`` for an ``(epsilon, delta)``-DP learner,
whatever the pilot chose (no correction for the candidates is needed; the Bonferroni
factor is the ``m`` events tested). Proof and power: ``docs/algorithms/privacy-auditor.md``.

Power: a passing audit means only that this search found nothing; report it with
:func:`~dp_online_envs.lab.audit.audit_power` (the smallest noise cut of a reference learner
the same audit refutes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from dp_online_envs.adversaries import LossSequence
from dp_online_envs.lab.audit.scores import Statistic, points_of, run_scores, statistics_for
from dp_online_envs.lab.audit.sequences import (
    NeighbourPair,
    is_admissible,
    is_contextual,
    neighbour_param,
    replay_env,
)
from dp_online_envs.lab.audit.sessions import (
    Session,
    SessionFactory,
    VectorSession,
    VectorSessionFactory,
    run_seeds,
)
from dp_online_envs.lab.audit.statistics import (
    Event,
    EventTest,
    best_event,
    check_confidence,
    eps_lower_bound,
    threshold_events,
)
from dp_online_envs.lab.audit.vector import check_vector_env, vector_scores
from dp_online_envs.loop import run_rounds
from dp_online_envs.problem import Problem
from dp_online_envs.validation import check_delta, check_epsilon, check_int

__all__ = ["DEFAULT_SETTINGS", "KEPT_EVENTS", "AuditFinding", "AuditSettings", "Statistic",
           "audit_actions", "audit_problem", "candidates", "pilot_events", "statistics_for"]

#: Tail masses of the pilot quantiles that become candidate thresholds.
TAIL_MASSES = (0.5, 0.3, 0.2, 0.1, 0.05, 0.03, 0.02, 0.01)
#: How many events the pilot passes to the test (its Bonferroni factor).
KEPT_EVENTS = 3


@dataclass(frozen=True)
class AuditSettings:
    """Settings of an action audit.

    Attributes:
        horizon: ``T`` of the audit's game (the session is built for it): short games
            move a learner more per round, long ones give the statistic more rounds.
        runs: Test runs per side of the kept pair.
        pilot_runs: Pilot runs per side of every candidate pair (they choose the pair,
            the statistic and the events; never reused by the test).
        confidence: Confidence of the bound, in ``(0, 1)``.
        seed: Seeds every run (pilot and test seeds are disjoint).
        taus: The rounds ``tau`` tried (each in ``[1, horizon - 1]``).

    Raises:
        ValueError: An invalid setting, named with what was expected.
    """

    horizon: int = 64
    runs: int = 3000
    pilot_runs: int = 400
    confidence: float = 0.95
    seed: int = 0
    taus: tuple[int, ...] = (1, 2)

    def __post_init__(self) -> None:
        check_int("horizon", self.horizon, 2)
        check_int("runs", self.runs, 10)
        check_int("pilot_runs", self.pilot_runs, 10)
        check_confidence(self.confidence)
        check_int("seed", self.seed, 0)
        taus = tuple(self.taus) if isinstance(self.taus, (tuple, list)) else None
        if not taus:
            raise ValueError(f"taus={self.taus!r}, expected a non-empty tuple of rounds in "
                             f"[1, {self.horizon - 1}]")
        for tau in taus:
            check_int("tau", tau, 1, self.horizon - 1)
        if len(set(taus)) != len(taus):
            raise ValueError(f"taus={self.taus!r} repeats a round")
        object.__setattr__(self, "taus", tuple(int(t) for t in taus))

    def to_dict(self) -> dict[str, Any]:
        """The settings as plain JSON values."""
        d = asdict(self)
        d["taus"] = list(self.taus)
        return d


@dataclass(frozen=True)
class AuditFinding:
    """The outcome of :func:`audit_actions`.

    Attributes:
        claimed_epsilon, claimed_delta: The claim tested.
        eps_lb: Lower bound on the learner's epsilon, valid with probability
            ``>= confidence`` (``-inf``: no event separated the sides beyond delta).
        refuted: ``eps_lb > claimed_epsilon``: the claim is false (at that confidence).
        confidence: Confidence of ``eps_lb``.
        runs: Test runs per side.
        tau: The round in which the kept pair differs.
        statistic: What was counted (one line).
        event: The best event and the side it is likelier on.
        counts: Test runs in the event ``(on S, on S')``.
        neighbour: The kept pair (one line).
    """

    claimed_epsilon: float
    claimed_delta: float
    eps_lb: float
    refuted: bool
    confidence: float
    runs: int
    tau: int
    statistic: str
    event: str
    counts: tuple[int, int]
    neighbour: str

    def to_dict(self) -> dict[str, Any]:
        """The finding as plain JSON values (``eps_lb`` ``-inf`` as ``None``)."""
        d = asdict(self)
        d["counts"] = list(self.counts)
        if not np.isfinite(self.eps_lb):
            d["eps_lb"] = None
        return d

    def __str__(self) -> str:
        verdict = ("REFUTED" if self.refuted else
                   "not refuted (evidence, not proof: see the audit's power)")
        k0, k1 = self.counts
        return (f"action audit of ({self.claimed_epsilon:g}, {self.claimed_delta:g})-DP: "
                f"eps_lb = {self.eps_lb:.4g} at {100 * self.confidence:g}% confidence -> "
                f"{verdict}; {self.neighbour}; statistic: {self.statistic}; event "
                f"{self.event}: {k0}/{self.runs} runs on S, {k1}/{self.runs} on S'")


#: The default settings.
DEFAULT_SETTINGS = AuditSettings()


# --------------------------------------------------------------------------
# candidates and runs
# --------------------------------------------------------------------------
def _fmt(theta: np.ndarray) -> str:
    v = np.asarray(theta, dtype=np.float64)
    if v.size > 1 and np.all(v == v[0]):
        return f"({v[0]:g}, ..., {v[0]:g}) [{v.size} coordinates]"
    return "(" + ", ".join(f"{x:.3g}" for x in v) + ")"


def candidates(problem: Problem, taus: tuple[int, ...]) -> tuple[NeighbourPair, ...]:
    """The candidate pairs: constant ``theta``, ``theta'`` in round ``tau``, both ways.

    ``theta_lo`` is the low corner of the parameter set (clipped to it), ``theta_hi``
    the admissible point farthest from it
    (:func:`~dp_online_envs.lab.audit.sequences.neighbour_param`).

    Raises:
        ValueError: The corners are not admissible parameters of the loss family.
    """
    loss, horizon = problem.loss, problem.horizon
    low = np.asarray(loss.param_space.low, dtype=np.float64)
    lo = np.asarray(loss.clip_param(np.where(np.isfinite(low), low, 0.0)), dtype=np.float64)
    hi = neighbour_param(loss, lo)
    for th in (lo, hi):
        if not is_admissible(loss, th):  # pragma: no cover - clip_param makes them so
            raise ValueError(f"{_fmt(th)} is not an admissible parameter of {loss!r}")
    out = []
    for tau in taus:
        for base, changed in ((lo, hi), (hi, lo)):
            seq = LossSequence(np.tile(base, (horizon, 1)))
            text = (f"S: theta_t = {_fmt(base)} in every round; S': theta_{tau} = "
                    f"{_fmt(changed)} (tau={tau} of T={horizon})")
            out.append(NeighbourPair.replacing(seq, tau, changed, text))
    return tuple(out)


class _ActionLog:
    """The ``on_round`` hook that keeps the actions of one run."""

    __slots__ = ("actions",)

    def __init__(self) -> None:
        self.actions: list[Any] = []

    def __call__(self, t: int, action: Any, feedback: np.ndarray) -> None:
        self.actions.append(action)


def _play(session: Session, problem: Problem, space: gym.Space, pair: NeighbourPair,
          stats: tuple[Statistic, ...], seeds: tuple[np.random.SeedSequence, ...], runs: int
          ) -> tuple[np.ndarray, np.ndarray]:
    """``(scores on S, scores on S')``, each ``(runs, len(stats))``."""
    out = []
    for seq, ss in ((pair.sequence, seeds[0]), (pair.neighbour, seeds[1])):
        env = replay_env(problem, seq)
        scores = np.empty((runs, len(stats)))
        for i, seed in enumerate(run_seeds(ss, runs)):
            log = _ActionLog()
            session.reset(int(seed))
            env.reset(seed=0)  # the replay is deterministic
            run_rounds(env, session, log)
            points = points_of(log.actions, problem.domain, space)
            scores[i] = run_scores(points, pair, problem.loss, stats)
        out.append(scores)
    return out[0], out[1]


def pilot_events(pilot0: np.ndarray, pilot1: np.ndarray, *, delta: float, confidence: float,
                 test_runs: int, keep: int = KEPT_EVENTS) -> tuple[tuple[Event, ...], float]:
    """The ``keep`` threshold events expected to give the largest bound in the test.

    Candidates: :func:`~dp_online_envs.lab.audit.statistics.threshold_events` at
    :data:`TAIL_MASSES`. Each is scored by the bound the test would give (``test_runs``
    runs per side, Bonferroni over ``keep``) if its two probabilities were the pilot's
    estimates ``(hits + 1/2) / (n + 1)``: this weighs a rare but lopsided event against
    a common, mildly lopsided one at the test's size, not the pilot's.

    Returns:
        ``(events, predicted bound of the best)``.
    """
    events = threshold_events(pilot0, pilot1, TAIL_MASSES)
    n = len(pilot0)
    ranked = []
    for ev in events:
        k0, k1 = ev.hits(pilot0), ev.hits(pilot1)
        num, den = (k1, k0) if ev.neighbour_likelier else (k0, k1)
        k_num = min(round((num + 0.5) / (n + 1) * test_runs), test_runs)
        k_den = min(round((den + 0.5) / (n + 1) * test_runs), test_runs)
        predicted = eps_lower_bound(k_num, test_runs, k_den, test_runs, delta=delta,
                                    confidence=confidence, tests=keep)
        ranked.append((predicted, len(ranked), ev))
    ranked.sort(key=lambda r: (-r[0], r[1]))
    return tuple(ev for _, _, ev in ranked[:keep]), float(ranked[0][0])


def _separation(s0: np.ndarray, s1: np.ndarray) -> float:
    """``|mean1 - mean0| / sqrt(var0/n + var1/n)`` (0 for two constant equal sides)."""
    diff = abs(float(s1.mean() - s0.mean()))
    se = float(np.sqrt((s0.var() + s1.var()) / len(s0)))
    if se == 0.0:
        return 0.0 if diff == 0.0 else np.inf
    return diff / se


def audit_problem(env_id: str, env_kwargs: Mapping[str, Any], horizon: int
                  ) -> tuple[Problem, gym.Space]:
    """The public problem and action space of ``env_id`` with ``env_kwargs`` at the
    audit's ``horizon`` (a ``horizon`` in ``env_kwargs`` is replaced by it)."""
    from dp_online_envs.envs import build_env

    if not isinstance(env_kwargs, Mapping):
        raise TypeError(f"env_kwargs must be a mapping of env options, got {env_kwargs!r}")
    kwargs = {k: v for k, v in env_kwargs.items() if k != "horizon"}
    env = build_env(env_id, horizon=horizon, **kwargs)
    try:
        return env.get_wrapper_attr("problem"), env.action_space
    finally:
        env.close()


def check_claim(claim: object) -> tuple[float, float]:
    """``(epsilon, delta)`` validated (epsilon in ``(0, inf)``, delta in ``[0, 1)``)."""
    if not isinstance(claim, (tuple, list)) or len(claim) != 2:
        raise ValueError(f"claim={claim!r}, expected a pair (epsilon, delta)")
    return check_epsilon(claim[0]), check_delta(claim[1])


# --------------------------------------------------------------------------
# the audit
# --------------------------------------------------------------------------
def audit_actions(make_session: SessionFactory | VectorSessionFactory, env_id: str,
                  env_kwargs: Mapping[str, Any],
                  claim: tuple[float, float],
                  settings: AuditSettings = DEFAULT_SETTINGS) -> AuditFinding:
    """Test a black box's claim ``(epsilon, delta)`` on its actions (module docstring).

    Args:
        make_session: ``make_session(problem, action_space) -> Session`` (one run at a
            time), or ``-> VectorSession`` (the runs B at a time in a vector env,
            :mod:`~dp_online_envs.lab.audit.vector`: the same finding for a vector
            learner whose games are the scalar learner's, in a fraction of the time;
            ids with a vector path only), called once, with the audit's problem
            (``env_id`` at ``settings.horizon``). The audit owns the session: it
            calls its ``close()`` (if it has one) when done, on success and on error
            alike.
        env_id: A registered env id (only its domain and loss family are used: the
            audit replays its own sequences).
        env_kwargs: Options of the env (a ``horizon`` among them is replaced by
            ``settings.horizon``).
        claim: The declared ``(epsilon, delta)``.
        settings: :class:`AuditSettings`.

    Returns:
        The :class:`AuditFinding`.

    Raises:
        ValueError: An invalid claim, setting or env option, or a contextual game.
        TypeError: ``make_session`` did not return a session or a vector session.
        Exception: Whatever the session raises (e.g.
            :class:`~dp_online_envs.lab.isolation.AgentFailure`) propagates.
    """
    epsilon, delta = check_claim(claim)
    if not isinstance(settings, AuditSettings):
        raise TypeError(f"settings must be an AuditSettings, got {settings!r}")
    problem, space = audit_problem(env_id, env_kwargs, settings.horizon)
    if is_contextual(problem):
        raise ValueError(f"{env_id} is a contextual game: the action audit's candidate "
                         "sequences have no contexts; audit a contextual learner's releases "
                         "with dp_online_envs.lab.audit.audit(..., view='releases') (it "
                         "records the contexts and keeps them in the neighbour)")
    pairs = candidates(problem, settings.taus)
    pilot_root, test_root = np.random.SeedSequence(settings.seed).spawn(2)
    pilot_seeds = pilot_root.spawn(len(pairs))

    session = make_session(problem, space)
    try:
        if isinstance(session, VectorSession):
            check_vector_env(env_id, env_kwargs, pairs[0])

            def play(pair: NeighbourPair, stats: tuple[Statistic, ...],
                     seeds: tuple[np.random.SeedSequence, ...], runs: int) -> Any:
                return vector_scores(session, env_id, env_kwargs, problem, space, pair,
                                      stats, seeds, runs)
        elif isinstance(session, Session):
            def play(pair: NeighbourPair, stats: tuple[Statistic, ...],
                     seeds: tuple[np.random.SeedSequence, ...], runs: int) -> Any:
                return _play(session, problem, space, pair, stats, seeds, runs)
        else:
            raise TypeError(f"make_session must return a session (reset(seed), act(), "
                            f"update(action, feedback)) or a vector session "
                            f"(reset_batch(seeds), act_batch(), update_batch(actions, "
                            f"feedback)), got {type(session).__name__}")
        # pilot: the pair, statistic and events whose predicted test bound is largest
        best: tuple[float, int, NeighbourPair, Statistic, tuple[Event, ...]] | None = None
        for c, (pair, ss) in enumerate(zip(pairs, pilot_seeds)):
            stats = statistics_for(pair)
            p0, p1 = play(pair, stats, tuple(ss.spawn(2)), settings.pilot_runs)
            for j, stat in enumerate(stats):
                events, predicted = pilot_events(p0[:, j], p1[:, j], delta=delta,
                                                 confidence=settings.confidence,
                                                 test_runs=settings.runs)
                if best is None or predicted > best[0]:
                    best = (predicted, c, pair, stat, events)
        assert best is not None
        _, _, pair, stat, events = best
        # the test: fresh seeds, the kept pair, statistic and events
        s0, s1 = play(pair, (stat,), tuple(test_root.spawn(2)), settings.runs)
    finally:
        close = getattr(session, "close", None)
        if callable(close):
            close()
    result: EventTest = best_event(events, s0[:, 0], s1[:, 0], delta=delta,
                                   confidence=settings.confidence)
    discrete = isinstance(space, gym.spaces.Discrete)
    return AuditFinding(
        claimed_epsilon=epsilon, claimed_delta=delta, eps_lb=float(result.eps_lb),
        refuted=bool(result.eps_lb > epsilon), confidence=float(settings.confidence),
        runs=settings.runs, tau=pair.tau,
        statistic=stat.describe(discrete, settings.horizon, pair.tau),
        event=f"{result.event} [Bonferroni over {result.tests} events]",
        counts=result.counts, neighbour=pair.description)
