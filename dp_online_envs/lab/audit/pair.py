"""The audit of one neighbouring pair with an agent factory: :func:`audit`.

An agent is ``(epsilon, delta)``-DP with respect to loss sequences that differ in one
round if, for every such pair ``S, S'`` and every event ``E`` on its output,
``P[M(S) in E] <= e^epsilon P[M(S') in E] + delta`` (and ``S <-> S'``).

:func:`audit` fixes one pair -- ``S`` (recorded by playing the env, or given) and
``S' = S.replace(tau, theta')`` -- and runs in four steps:

1. record ``S`` (:func:`~dp_online_envs.lab.audit.sequences.record_sequence`);
2. build the pair (:class:`~dp_online_envs.lab.audit.sequences.NeighbourPair`);
3. collect ``runs`` observations per side (:func:`collect`): a fresh agent and seed per
   run, a deterministic replay behind a
   :class:`~dp_online_envs.wrappers.FeedbackGuard`, one view
   (:class:`~dp_online_envs.lab.audit.observe.ReleasesView` -- the values passed through
   ``release``, the boundary the proof covers -- or
   :class:`~dp_online_envs.lab.audit.observe.ActionsView`);
4. test them (:func:`~dp_online_envs.lab.audit.statistics.audit_samples`): a linear
   statistic fitted on a training part, threshold events tested on the rest with
   Clopper-Pearson bounds, Bonferroni over the events.

``eps_lb > epsilon`` refutes the claim at the stated confidence. Limits: a passing
audit is evidence, not proof (one pair, one view, one family of events, finitely many
runs: with ``n`` test runs no audit certifies more than about ``ln(n / ln(2m/alpha))``);
an adaptive adversary is replayed as the fixed sequence it produced when recording.
For a black box seen only through its actions, with a search over pairs and a stated
power, use :func:`~dp_online_envs.lab.audit.audit_actions`. Method and proof:
``docs/algorithms/privacy-auditor.md``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from dp_online_envs.adversaries import LossSequence
from dp_online_envs.lab.audit.observe import ActionsView, ReleasesView, stack_rows, view_of
from dp_online_envs.lab.audit.sequences import (
    Game,
    NeighbourPair,
    is_admissible,
    neighbour_param,
    record_sequence,
    replay_env,
)
from dp_online_envs.lab.audit.statistics import (
    MIN_RUNS,
    AuditResult,
    audit_samples,
    check_confidence,
)
from dp_online_envs.problem import Problem
from dp_online_envs.validation import check_int

__all__ = ["Claim", "Samples", "audit", "collect"]


@dataclass(frozen=True)
class Claim:
    """The privacy an agent declares: ``agent.privacy`` (else ``agent.epsilon`` /
    ``agent.delta``; ``(inf, 0)`` for a non-private agent)."""

    epsilon: float
    delta: float

    @classmethod
    def of(cls, agent: Any) -> Claim:
        """Read (never set) the claim of an agent."""
        g = getattr(agent, "privacy", None)
        if g is not None:
            return cls(float(g.epsilon), float(g.delta))
        if getattr(agent, "epsilon", None) is not None:
            return cls(float(agent.epsilon), float(getattr(agent, "delta", 0.0)))
        return cls(math.inf, 0.0)


@dataclass(frozen=True)
class Samples:
    """What was observed: one feature row per run and side.

    Attributes:
        on_sequence: ``(runs, d)`` features of the runs on ``S``.
        on_neighbour: The same on ``S'`` (one width for both sides).
    """

    on_sequence: np.ndarray
    on_neighbour: np.ndarray


def collect(pair: NeighbourPair, problem: Problem, feedback: str,
            agent_factory: Callable[[int], Any], view: ActionsView | ReleasesView,
            seeds: tuple[np.random.SeedSequence, np.random.SeedSequence], runs: int
            ) -> Samples:
    """Step 3: ``runs`` runs per side, a fresh agent ``agent_factory(seed)`` per run.

    Raises:
        ValueError: A releases view of an agent that released nothing from ``tau`` on.
    """
    rows: list[np.ndarray] = []
    for seq, ss in ((pair.sequence, seeds[0]), (pair.neighbour, seeds[1])):
        env = replay_env(problem, seq, feedback)
        side = []
        for s in (int(v) for v in ss.generate_state(runs, np.uint64)):
            agent = agent_factory(s)
            agent.reset(s)
            env.reset(seed=0)  # the replay is deterministic; the seed only pins np_random
            side.append(view.play(env, agent))
        if isinstance(view, ReleasesView) and all(r.size == 0 for r in side):
            raise ValueError(
                f"the agent released nothing from round tau={pair.tau} on: it must pass its "
                f"private outputs through Agent.release (or audit view='actions')")
        rows += side
    x = stack_rows(rows)
    return Samples(x[:runs], x[runs:])


def _pair(sequence: LossSequence, game: Game, tau: int, neighbour_theta: Any,
          rng: np.random.Generator) -> NeighbourPair:
    """Step 2: check ``S`` and build ``S'`` (default ``theta'``: :func:`neighbour_param`)."""
    loss = game.problem.loss
    bad = [t + 1 for t, th in enumerate(sequence.thetas) if not is_admissible(loss, th)]
    if bad:
        raise ValueError(f"the sequence has inadmissible parameters in rounds {bad[:5]}")
    theta = sequence.thetas[tau - 1]
    if neighbour_theta is None:
        return NeighbourPair.replacing(sequence, tau, neighbour_param(loss, theta, rng))
    nb = np.asarray(neighbour_theta, dtype=np.float64)
    if nb.shape != theta.shape or not np.all(np.isfinite(nb)):
        raise ValueError(f"neighbour_theta has shape {nb.shape}, expected {theta.shape}")
    if not is_admissible(loss, nb):
        raise ValueError(f"neighbour_theta={neighbour_theta!r} is not an admissible "
                         f"parameter of {loss!r}")
    return NeighbourPair.replacing(sequence, tau, nb)


def audit(
    agent_factory: Callable[[int], Any],
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
        agent_factory: ``agent_factory(seed) -> agent``; called once per run (and once
            to read the claim and record the sequence). The claim is read with
            :meth:`Claim.of`.
        env: A :class:`~dp_online_envs.problem.Problem`, a gymnasium env wrapping an
            :class:`~dp_online_envs.envs.OnlineLearningEnv` (a registered env or a
            hand-built one), or a zero-argument callable returning either. Only its
            domain, loss family, feedback, horizon and (for recording) adversary are used.
        tau: The round (1-based) in which the two sequences differ: ``1 <= tau <= T``
            (``<= T - 1`` for the actions view).
        runs: Runs per side (>= 10), split into training and test parts.
        view: ``"releases"`` or ``"actions"``.
        confidence: Confidence of ``eps_lb``, in ``(0, 1)``.
        seed: Seeds everything: the recording run, and a seed sequence giving every run
            of each side its own agent seed.
        sequence: ``S``; default: recorded by playing the env once with a fresh agent,
            horizon ``T`` of the env. Its length is the horizon of the audit.
        neighbour_theta: ``theta'_tau`` of ``S'`` (must be admissible); default
            :func:`~dp_online_envs.lab.audit.sequences.neighbour_param`.
        statistic, thresholds, train_fraction: Event selection, see
            :func:`~dp_online_envs.lab.audit.statistics.audit_samples`.

    Returns:
        The :class:`~dp_online_envs.lab.audit.statistics.AuditResult`.

    Raises:
        ValueError: on an invalid argument (named in the message), an inadmissible
            ``theta'`` or sequence, or a releases-view audit of an agent that released
            nothing from round ``tau`` on.
        TypeError: on an env of an unsupported kind or a factory that is not callable.
    """
    view_of(view, 1, None)  # the name, before anything runs
    runs = check_int("runs", runs, MIN_RUNS)
    conf = check_confidence(confidence)
    check_int("tau", tau, 1)
    if not callable(agent_factory):
        raise TypeError(f"agent_factory must be callable (seed -> Agent), got {agent_factory!r}")
    game = Game.of(env)
    problem = game.problem

    rec_ss, ss0, ss1, theta_ss = np.random.SeedSequence(seed).spawn(4)
    rec_seed = int(rec_ss.generate_state(1, np.uint64)[0])
    agent = agent_factory(rec_seed)
    claim = Claim.of(agent)
    feedback = game.feedback_for(agent)

    # 1. record S
    if sequence is None:
        check_int("tau", tau, 1, problem.horizon)  # before playing
        agent.reset(rec_seed)
        sequence = record_sequence(game, agent, rec_seed, feedback)
    elif not isinstance(sequence, LossSequence):
        sequence = LossSequence(np.asarray(sequence))
    horizon = len(sequence)
    top = horizon - 1 if view == "actions" else horizon
    try:
        check_int("tau", tau, 1, top)
    except ValueError as exc:
        raise ValueError(f"{exc} (the {view} view of a {horizon}-round sequence)") from None
    # 2. the pair
    pair = _pair(sequence, game, tau, neighbour_theta, np.random.default_rng(theta_ss))
    # 3. what is observed
    samples = collect(pair, problem, feedback, agent_factory,
                      view_of(view, tau, problem.domain), (ss0, ss1), runs)
    # 4. the test
    result = audit_samples(samples.on_sequence, samples.on_neighbour, epsilon=claim.epsilon,
                           delta=claim.delta, confidence=conf, statistic=statistic,
                           thresholds=thresholds, train_fraction=train_fraction, view=view)
    return dataclasses.replace(
        result, tau=int(tau), horizon=horizon,
        theta=tuple(float(v) for v in pair.theta),
        neighbour_theta=tuple(float(v) for v in pair.neighbour_theta))


