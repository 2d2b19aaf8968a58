"""Playing a leaderboard: the learners' games, the yardsticks, the audits, the rows.

:func:`build_board` is what ``dp-online leaderboard`` runs. Every game goes through the
experiment runner (:func:`~dp_online_envs.lab.experiments.runner.run_games`) into the
results store ``RESULTS/games`` (a rerun plays only the games that have no record; any
backend, Dask included), with seeds derived from the secret. Audit findings and the
audit's power are kept in ``RESULTS/audits`` keyed by everything they depend on, so a
rerun with the same secret reads them back; those not stored yet are measured on local
worker processes (:func:`~dp_online_envs.lab.experiments.backends.run_tasks`). Nothing
on a row depends on time, host or order of play: the same secret gives the same rows.

Learners are registered names (played in process) or ``.py`` files with one
``agents.Agent`` subclass, handled exactly as ``dp-online grade`` handles a submission:
the file is imported only in sandboxed isolated processes
(:func:`~dp_online_envs.lab.grading.submission.probe_submission`), and every game and
audit game runs in its own sandboxed process that receives only the problem, its seed
and its feedback.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import pathlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dp_online_envs.envs.registry import env_config
from dp_online_envs.lab.experiments import analysis
from dp_online_envs.lab.experiments.backends import default_workers, run_tasks
from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.game import GameSpec, feedback_option, stable_hash
from dp_online_envs.lab.experiments.resolver import AgentResolver, resolve_agent
from dp_online_envs.lab.experiments.runner import run_games
from dp_online_envs.lab.experiments.store import atomic_write
from dp_online_envs.lab.experiments.sweep import make_games
from dp_online_envs.lab.grading import audit_step
from dp_online_envs.lab.grading.grader import declared_budget, failure_reason
from dp_online_envs.lab.grading.grades import finite_json
from dp_online_envs.lab.grading.submission import (
    SubmissionError,
    SubmissionLoader,
    file_sha256,
    probe_submission,
    safe_name,
)
from dp_online_envs.lab.isolation import (
    AgentFailure,
    IsolatedLearner,
    IsolationLimits,
)
from dp_online_envs.lab.leaderboard.score import (
    AUDIT_GAMES,
    AUDIT_REFERENCES,
    BENCHMARK_DELTA,
    SCORE_VERSION,
    TRIVIAL,
    Benchmark,
    Interval,
    Yardstick,
    benchmark_score,
    family,
    game_scores,
    id_score,
    yardstick,
)
from dp_online_envs.lab.sandbox import Sandbox
from dp_online_envs.loop import seed_of

#: Relative slack when comparing a declared epsilon with the table's.
BUDGET_RTOL = 1e-9


def board_secret(secret: str) -> str:
    """The runner's ``seed_secret``: a digest of the score's version and the secret."""
    return hashlib.sha256(f"dp-online-leaderboard\0{SCORE_VERSION}\0{secret}".encode()
                          ).hexdigest()


# ---------------------------------------------------------------------- learners
@dataclasses.dataclass(frozen=True)
class Learner:
    """One learner on the board.

    Attributes:
        name: Its row's name: the registered name, or the file's stem made safe
            (:func:`~dp_online_envs.lab.grading.submission.safe_name`).
        cls: The agent class (a :class:`~.submission.SubmissionLoader` for a file);
            ``None`` when the file could not be loaded.
        path: The submission file (``None``: a registered learner).
        sha256: The file's digest (``""``: a registered learner).
        limits: A submission's isolation limits, sandboxed (``None``: in process).
        error: Why a submission could not be loaded (``""``: it could).
    """

    name: str
    cls: Any
    path: str | None = None
    sha256: str = ""
    limits: IsolationLimits | None = None
    error: str = ""

    @property
    def feedback(self) -> str:
        """``"bandit"`` or ``"full"`` (``"?"`` for a file that could not be loaded)."""
        return "?" if self.cls is None else str(self.cls.feedback)

    @property
    def private(self) -> bool:
        """Whether it takes an epsilon (a submission: its class's ``private``)."""
        if self.cls is None:
            return False
        return bool(self.cls.info.private) if self.path else bool(self.cls.private)

    @property
    def agent(self) -> str:
        """The name its games are stored under (a file's includes its digest, so an
        edited file is played again)."""
        return self.name if self.path is None else f"submission:{self.name}@{self.sha256[:16]}"


def load_learners(names: Sequence[str], *, limits: IsolationLimits, sandboxed: bool,
                  resolver: AgentResolver | None = None) -> list[Learner]:
    """The learners named: registered names, and ``.py`` files probed in a sandbox.

    Args:
        names: Registered agent names and ``.py`` paths.
        limits: The submissions' limits (their sandbox is added here).
        sandboxed: Confine each submission to its sandbox (else plain processes).
        resolver: Resolves the names (``None``: the ``agents`` registry).

    Raises:
        ExperimentError: An unknown name, a path that is not a ``.py`` file, or the
            same learner twice.
    """
    out: list[Learner] = []
    for given in names:
        if given.endswith(".py"):
            path = pathlib.Path(given)
            if not path.is_file():
                raise ExperimentError(f"learner {given!r}: no such .py file")
            path = path.resolve()
            name = safe_name(path.stem)  # a row's name, never a formula or a path
            mine = dataclasses.replace(limits, sandbox=Sandbox(files=(str(path),))
                                       ) if sandboxed else limits
            digest = file_sha256(path)
            try:
                info = probe_submission(path, mine)
            except SubmissionError as exc:
                out.append(Learner(name, None, str(path), digest, mine, exc.reason))
                continue
            except Exception as exc:  # noqa: BLE001 - one file never stops the board
                reason = f"probing the file failed: {type(exc).__name__}: {exc}"
                out.append(Learner(name, None, str(path), digest, mine,
                                   reason.splitlines()[0][:300]))
                continue
            out.append(Learner(name, SubmissionLoader(info), str(path), digest, mine))
        else:
            out.append(Learner(given, resolve_agent(given, resolver)))
    seen = [learner.name for learner in out]
    twice = sorted({n for n in seen if seen.count(n) > 1})
    if twice:
        raise ExperimentError(f"learners {twice} given twice (rows are named by learner "
                              "name or file stem)")
    return out


# --------------------------------------------------------------------- rows
@dataclasses.dataclass
class Row:
    """A learner at one privacy level: its scores, its claim, its audit.

    Attributes:
        learner: The learner's name.
        source: ``"registered"`` or the submission file's name.
        feedback: ``"bandit"`` or ``"full"``.
        epsilon, delta: The budget it was asked to play at (``None``: non-private).
        declared: ``(epsilon, delta, mechanism)`` it declared at the end of its games.
        ids: Per id: ``{"score", "lo", "hi"}`` or ``{"status": why it has none}``.
        score: The benchmark score (``None``: none, see ``reason``).
        coverage: ``(ids played, scorable ids of its kind)``.
        reason: Why it has no score, or ``""``.
        audit: The audit's finding (``OneRunFinding.to_dict()``), or ``None``.
        audit_game: The game it was audited on, ``{"env_id", "env_kwargs"}`` (``None``:
            not audited).
        audit_note: Why there is no finding, or ``""``.
        ranked: Whether it is ranked in its table (scored, and for a private learner: a
            declared budget within the table's that the audit of its kind's audit game
            ran on and does not refute, with power on it: its noise-free twin refuted
            and enough guesses, the finding's ``verdict`` ``"not refuted"``; a verdict
            ``"no audit power"`` is not ranked as audited).
        rank: Its place among the ranked rows of its table.
    """

    learner: str
    source: str
    feedback: str
    epsilon: float | None
    delta: float | None
    declared: tuple[float, float, str] | None = None
    ids: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    score: Interval | None = None
    coverage: tuple[int, int] = (0, 0)
    reason: str = ""
    audit: dict[str, Any] | None = None
    audit_game: dict[str, Any] | None = None
    audit_note: str = ""
    ranked: bool = False
    rank: int | None = None

    @property
    def refuted(self) -> bool:
        """Whether the audit refuted its declared claim."""
        return bool(self.audit and self.audit.get("refuted"))

    @property
    def key(self) -> str:
        """The row's file name stem (learner and privacy)."""
        return self.learner + ("" if self.epsilon is None else f"_eps{self.epsilon:g}")

    @property
    def table(self) -> tuple[str, float | None]:
        """Its table: feedback kind and epsilon."""
        return self.feedback, self.epsilon


@dataclasses.dataclass
class Board:
    """A played leaderboard.

    Attributes:
        benchmark: The games.
        rows: Every learner at every privacy level.
        sticks: ``(id, horizon) -> Yardstick``.
        curves: ``(row key or reference name, id) -> curve at the largest horizon``.
        power: ``(audit game id, epsilon) -> (AuditPower.to_dict(), text)``.
        notes: What the page must say about the benchmark (unscorable games).
    """

    benchmark: Benchmark
    rows: list[Row]
    sticks: dict[tuple[str, int], Yardstick]
    curves: dict[tuple[str, str], dict[str, list[float]]]
    power: dict[tuple[str, float], tuple[dict[str, Any], str]]
    notes: list[str]


# --------------------------------------------------------------------- playing
def build_board(learners: Sequence[Learner], benchmark: Benchmark, *, results: pathlib.Path,
                secret: str, backend: str = "serial", workers: int | None = None,
                quiet: bool = True, resolver: AgentResolver | None = None,
                progress: Callable[[str], None] | None = None) -> Board:
    """Play (or read back) every game and audit, and score every row.

    Args:
        learners: From :func:`load_learners`.
        benchmark: The games.
        results: The board's results directory (``games/`` and ``audits/`` in it).
        secret: Keys the hidden seeds and the audits' seeds.
        backend, workers, quiet: The runner's (submissions' games run isolated). The
            audits and the power measurements, each a whole task, run on ``workers``
            local processes (default: the CPUs available; one after another with
            ``backend='serial'``, and the power measurements with a ``resolver``,
            which need not pickle); the findings do not depend on it.
        resolver: Resolves the yardsticks' learners (``None``: the ``agents`` registry).
        progress: Called with a line before the audits and the power measurements not
            stored yet, and a line per learner at the end.

    Raises:
        RuntimeError: A yardstick's game failed (the benchmark, not a learner, is wrong).
    """
    keyed = board_secret(secret)
    run = functools.partial(run_games, results=results / "games", backend=backend,
                            workers=workers, quiet=quiet, seed_secret=keyed)
    sticks, yard_records = _yardsticks(benchmark, run, resolver)
    notes = [f"{env_id} at T = {h}: no reference beats trivial play (margin "
             f"{s.margin:.4g}); left out of every score" for (env_id, h), s in sticks.items()
             if not s.scorable]
    curves: dict[tuple[str, str], dict[str, list[float]]] = {}
    top = max(benchmark.horizons)
    for env_id in benchmark.ids:
        for name, recs in yard_records.items():
            mine = [r for r in recs if r["env_id"] == env_id and r["horizon"] == top]
            if mine:
                curves[(name, env_id)] = _curve(mine)
    rows: list[Row] = []
    audits: list[tuple[Row, _AuditJob]] = []
    _prefetch(learners, benchmark, run, sticks)
    for learner in learners:
        levels: list[float | None] = list(benchmark.epsilons) if learner.private else [None]
        for eps in levels:
            row, records = _play(learner, eps, benchmark, run, sticks)
            rows.append(row)
            for env_id in benchmark.ids:
                mine = [r for r in records if r["env_id"] == env_id and r["horizon"] == top]
                if mine:
                    curves[(row.key, env_id)] = _curve(mine)
            if eps is not None and row.declared is not None and not row.reason:
                job = _audit_job(row, learner, benchmark, results, keyed)
                if job is not None:
                    audits.append((row, job))
    n = 1 if backend == "serial" else workers or default_workers()
    found = _findings(_audit_finding, [j for _, j in audits], n, "auditing {} claims",
                      progress)
    for (row, _), finding in zip(audits, found):
        _set_audit(row, finding)
    wanted: dict[tuple[str, float], _PowerJob] = {}
    for row in rows:
        if row.audit_game is not None and row.epsilon is not None:
            where = (row.audit_game["env_id"], row.epsilon)
            if where not in wanted:
                wanted[where] = _power_job(row.audit_game, row.epsilon, benchmark, results,
                                           keyed, resolver)
    measured = _findings(_power_finding, list(wanted.values()),
                         1 if resolver is not None else n,
                         "measuring the audit's power {} time(s)", progress)
    power = {where: (value[0], value[1]) for where, value in zip(wanted, measured)}
    for row in rows:
        _rank_flag(row)
    if progress is not None:
        for learner in learners:
            progress(f"{learner.name}: " + "; ".join(_short(r) for r in rows
                                                      if r.learner == learner.name))
    for table in sorted({r.table for r in rows}, key=lambda t: (t[0], t[1] or 0.0)):
        ranked = sorted((r for r in rows if r.table == table and r.ranked),
                        key=lambda r: (-r.score.score, r.learner))  # type: ignore[union-attr]
        for i, r in enumerate(ranked, 1):
            r.rank = i
    return Board(benchmark, rows, sticks, curves, power, notes)


def _short(row: Row) -> str:
    where = "" if row.epsilon is None else f"eps={row.epsilon:g} "
    if row.score is None:
        return f"{where}no score ({row.reason})"
    return f"{where}{row.score.score:.3f}" + (" refuted" if row.refuted else "")


def _curve(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    c = analysis.curve(records)
    return {k: [float(x) for x in v] for k, v in c.items()}


def _yardsticks(benchmark: Benchmark, run: Any, resolver: AgentResolver | None
                ) -> tuple[dict[tuple[str, int], Yardstick], dict[str, list[dict[str, Any]]]]:
    """Trivial play and the references on every id and horizon."""
    specs: list[GameSpec] = []
    for env_id in benchmark.ids:
        for name in (TRIVIAL, *family(env_id).nonprivate):
            for h in benchmark.horizons:
                specs += make_games(env_id, name, epsilon=None, delta=None, horizon=h,
                                    seeds=benchmark.seeds, tags={"role": "yardstick"},
                                    sweep="leaderboard", resolver=resolver)
    report = run(specs, desc="yardsticks")
    if report.failures:
        spec, error = report.failures[0]
        raise RuntimeError(f"yardstick {spec.label} failed on {spec.env_id} (T={spec.horizon}, "
                           f"seed {spec.seed_index}): {failure_reason(error)}")
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in report.records:
        by[r["agent"]].append(r)
    sticks = {}
    for env_id in benchmark.ids:
        for h in benchmark.horizons:
            def regrets(name: str, env_id: str = env_id, h: int = h) -> list[float]:
                return [r["regret"] for r in sorted(by[name], key=lambda r: r["seed_index"])
                        if r["env_id"] == env_id and r["horizon"] == h]

            sticks[(env_id, h)] = yardstick(regrets(TRIVIAL), {
                n: regrets(n) for n in family(env_id).nonprivate})
    return sticks, dict(by)


def _specs(learner: Learner, eps: float | None, env_id: str, benchmark: Benchmark
           ) -> tuple[list[GameSpec], str]:
    """A learner's games of one id, or ``([], why it cannot play the id)``."""
    if learner.path is not None:
        specs = [GameSpec(env_id, learner.agent, eps, None if eps is None else 0.0, h, s,
                          {}, {}, {"role": "learner"}, "leaderboard", learner.cls)
                 for h in benchmark.horizons for s in range(benchmark.seeds)]
        return specs, ""
    why = ""
    for delta in ((None,) if eps is None else (0.0, BENCHMARK_DELTA)):
        try:
            specs = [spec for h in benchmark.horizons
                     for spec in make_games(env_id, learner.cls, epsilon=eps, delta=delta,
                                            horizon=h, seeds=benchmark.seeds,
                                            tags={"role": "learner"}, sweep="leaderboard")]
            return [dataclasses.replace(s, agent=learner.name) for s in specs], ""
        except ExperimentError as exc:
            why = why or str(exc).removeprefix("run: ")
    return [], why


def _prefetch(learners: Sequence[Learner], benchmark: Benchmark, run: Any,
              sticks: dict[tuple[str, int], Yardstick]) -> None:
    """Play every registered learner's games in one run (one pool of workers for all;
    the rows then read them back from the store)."""
    specs = []
    for learner in learners:
        if learner.path is not None or learner.cls is None:
            continue
        for eps in (list(benchmark.epsilons) if learner.private else [None]):
            for env_id in benchmark.ids:
                if env_config(env_id).feedback == learner.feedback and any(
                        sticks[(env_id, h)].scorable for h in benchmark.horizons):
                    specs += _specs(learner, eps, env_id, benchmark)[0]
    run(specs, desc="learners")


def _refusal(reason: str) -> bool:
    """Whether an isolated game's failure is the learner refusing the problem (raising
    ``ValueError``/``TypeError`` while it is built), as a registered learner's dry build
    is read."""
    return reason.startswith(("agent raised during starting the agent: ValueError",
                              "agent raised during starting the agent: TypeError"))


def _play(learner: Learner, eps: float | None, benchmark: Benchmark, run: Any,
          sticks: dict[tuple[str, int], Yardstick]) -> tuple[Row, list[dict[str, Any]]]:
    """One row: play the learner on every id of its kind and score it."""
    source = "registered" if learner.path is None else pathlib.Path(learner.path).name
    row = Row(learner.name, source, learner.feedback, eps,
              None if eps is None else 0.0)
    if learner.cls is None:
        row.reason = learner.error
        return row, []
    kind = [i for i in benchmark.ids if env_config(i).feedback == learner.feedback]
    scorable = [i for i in kind if any(sticks[(i, h)].scorable for h in benchmark.horizons)]
    all_records: list[dict[str, Any]] = []
    per_id: dict[str, Interval | None] = {}
    for env_id in scorable:
        specs, why = _specs(learner, eps, env_id, benchmark)
        if not specs:
            row.ids[env_id] = {"status": f"cannot play: {why}"}
            per_id[env_id] = None
            continue
        if eps is not None:
            row.delta = specs[0].delta
        isolate = learner.limits or False
        if learner.path is not None:  # one game first: a learner refusing the id says so
            first = run(specs[:1], isolate=isolate, desc=f"{learner.name} {env_id}")
            refused = [failure_reason(e) for _, e in first.failures]
            if refused and _refusal(refused[0]):
                row.ids[env_id] = {"status": f"cannot play: {refused[0]}"}
                per_id[env_id] = None
                continue
            report = first if refused else run(specs, isolate=isolate,
                                                desc=f"{learner.name} {env_id}")
        else:
            report = run(specs, isolate=isolate, desc=f"{learner.name} {env_id}")
        failures = [(s, failure_reason(e)) for s, e in report.failures]
        all_records += report.records
        if failures:
            spec, reason = failures[0]
            row.ids[env_id] = {"status": f"failed: {reason}"}
            row.reason = row.reason or (f"{len(failures)} game(s) failed on {env_id} "
                                        f"(T={spec.horizon}): {reason}")
            continue
        projected = [r for r in report.records if r["projected_actions"]]
        if projected:
            r = projected[0]
            row.ids[env_id] = {"status": f"infeasible actions: {r['projected_actions']}"}
            row.reason = row.reason or (f"{r['projected_actions']} infeasible action(s) "
                                        f"(outside the decision set) on {env_id} "
                                        f"(T={r['horizon']})")
            continue
        parts = []
        for h in benchmark.horizons:
            stick = sticks[(env_id, h)]
            if stick.scorable:
                regrets = [r["regret"] for r in sorted(report.records,
                                                       key=lambda r: r["seed_index"])
                           if r["horizon"] == h]
                parts.append(game_scores(regrets, stick))
        s = id_score(parts)
        row.ids[env_id] = {"score": s.score, "lo": s.lo, "hi": s.hi}
        per_id[env_id] = s
    row.coverage = (sum(v is not None for v in per_id.values()), len(scorable))
    if all_records:
        declared, note = declared_budget(all_records)
        row.declared = declared
        if eps is not None and declared is None:
            row.audit_note = note
    if row.reason:
        return row, all_records
    if not scorable:
        row.reason = f"no scorable id of its feedback kind ({learner.feedback})"
    elif row.coverage[0] == 0:
        row.reason = "cannot play any id of its feedback kind"
    else:
        row.score = benchmark_score(per_id, benchmark.seeds)
    return row, all_records


def _rank_flag(row: Row) -> None:
    """Whether the row is ranked; a private row that is not says why (``audit_note``):
    nothing unaudited is ranked among the private learners."""
    if row.score is None:
        return
    if row.epsilon is None:
        row.ranked = True
        return
    if row.declared is None:
        row.audit_note = row.audit_note or "declares no privacy budget"
        return
    if row.audit is None:
        row.audit_note = row.audit_note or "not audited, so not ranked"
        return
    if row.refuted:
        return
    if row.audit.get("verdict") != "not refuted":
        row.audit_note = row.audit_note or (
            "no audit power, so not ranked as audited: " + str(row.audit.get("power", "")))
        return
    if row.declared[0] > row.epsilon * (1 + BUDGET_RTOL):
        row.audit_note = (f"declares epsilon {row.declared[0]:g}, weaker than this table's "
                          f"{row.epsilon:g}")
        return
    row.ranked = True


# --------------------------------------------------------------------- audits
def _audit_seed(keyed: str, eps: float) -> int:
    digest = hashlib.sha256(f"audit\0{keyed}\0{eps!r}".encode()).digest()
    return seed_of(np.random.SeedSequence(int.from_bytes(digest[:16], "big")))


def _settings(benchmark: Benchmark, keyed: str, eps: float) -> Any:
    return audit_step.OneRunSettings(games=benchmark.audit_games, seed=_audit_seed(keyed, eps))


def _stored(path: pathlib.Path, key: str) -> Any:
    """The value kept in ``path`` under ``key``; ``None`` when missing, damaged or kept
    under another key."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored.get("key") == key:
            return stored["value"]
    except (OSError, ValueError, AttributeError):
        pass  # missing or damaged: computed again
    return None


def _cached(path: pathlib.Path, key: str, make: Callable[[], Any]) -> Any:
    """``make()``, kept in ``path`` under ``key`` (read back when the key matches)."""
    value = _stored(path, key)
    if value is not None:
        return value
    value = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps({"key": key, "value": value}, indent=1, sort_keys=True))
    return value


def _findings(measure: Callable[[Any], Any], jobs: Sequence[Any], workers: int, what: str,
              progress: Callable[[str], None] | None) -> list[Any]:
    """``measure(job)`` of every job (an :class:`_AuditJob` or a :class:`_PowerJob`):
    the stored ones read here, the others measured on ``workers`` local processes
    (announced to ``progress`` as ``what``, formatted with their number)."""
    out = [_stored(job.path, job.key) for job in jobs]
    todo = [i for i, value in enumerate(out) if value is None]
    if todo and progress is not None:
        progress(f"{what.format(len(todo))} on {min(workers, len(todo))} worker(s)")
    for i, value in zip(todo, run_tasks(measure, [jobs[i] for i in todo], workers=workers,
                                        preload=["agents"])):
        out[i] = value
    return out


class _Refused(Exception):
    """A registered learner refusing the audit game's problem (as it refuses an id)."""


def audit_game_text(game: dict[str, Any]) -> str:
    """``env_id`` with its options, e.g. ``DPBandit-Matroid-v2 (adversary='stochastic')``."""
    opts = ", ".join(f"{k}={v!r}" for k, v in sorted(game["env_kwargs"].items()))
    return game["env_id"] + (f" ({opts})" if opts else "")


@dataclasses.dataclass(frozen=True)
class _AuditJob:
    """One audit of a row's claim: plain data, so that a worker process can run it.

    Attributes:
        learner: The row's learner.
        feedback: Its feedback kind.
        eps, delta: The row's table (the learner is built with them).
        claim: The declared ``(epsilon, delta)`` the audit tests.
        settings: The one-run audit's settings.
        candidates: The audit games of the feedback kind, ``(env_id, env_kwargs)``.
        refused: ``env_id -> reason`` for the candidates the benchmark saw it refuse.
        horizons: The horizons of the audit's games (every scored one).
        path, key: Where the finding is kept, and the key it is kept under.
    """

    learner: Learner
    feedback: str
    eps: float
    delta: float
    claim: tuple[float, float]
    settings: Any
    candidates: tuple[tuple[str, Any], ...]
    refused: dict[str, str]
    horizons: tuple[int, ...]
    path: pathlib.Path
    key: str


def _audit_job(row: Row, learner: Learner, benchmark: Benchmark, results: pathlib.Path,
               keyed: str) -> _AuditJob | None:
    """The one-run audit of the row's declared claim on the first of its feedback kind's
    audit games (:data:`~.score.AUDIT_GAMES`) the learner plays; ``None``, with
    ``row.audit_note`` saying why, when its kind has no audit game."""
    candidates = AUDIT_GAMES.get(row.feedback, ())
    if not candidates:
        row.audit_note = f"not audited, so not ranked: no audit game for feedback {row.feedback!r}"
        return None
    assert row.epsilon is not None and row.declared is not None
    eps, delta = row.epsilon, row.delta or 0.0
    claim = (row.declared[0], row.declared[1])
    settings = _settings(benchmark, keyed, eps)
    key = stable_hash({"version": SCORE_VERSION, "learner": learner.agent, "eps": eps,
                       "twin": audit_step.TWIN_FACTOR, "delta": delta, "claim": claim,
                       "settings": settings.to_dict(),
                       "games": [[env, dict(kw)] for env, kw in candidates],
                       "horizons": list(benchmark.audit_horizons),
                       "feedback": [feedback_option(env, learner.cls) or ""
                                    for env, _ in candidates]})
    refused = {env: row.ids[env]["status"].removeprefix("cannot play: ")
               for env, _ in candidates
               if row.ids.get(env, {}).get("status", "").startswith("cannot play")}
    return _AuditJob(learner, row.feedback, eps, delta, claim, settings,
                     tuple((env, dict(kw)) for env, kw in candidates), refused,
                     benchmark.audit_horizons, results / "audits" / f"{key[:24]}.json", key)


def _set_audit(row: Row, found: dict[str, Any]) -> None:
    """Put an audit's finding (:func:`_audit_finding`) on its row."""
    row.audit, row.audit_game = found.get("finding"), found.get("game")
    row.audit_note = found.get("note", "")


def _audit_finding(job: _AuditJob) -> dict[str, Any]:
    """The job's finding (``finding`` and ``game``) or ``note`` saying why there is
    none, read back from its file or measured and kept there."""
    learner = job.learner

    def make_learner_at(eps: float) -> Callable[[Any, Any, int], Any]:
        def make_learner(problem: Any, space: Any, seed: int) -> Any:
            if learner.limits is None:
                try:
                    return learner.cls(problem, epsilon=eps, delta=job.delta, seed=seed)
                except (ValueError, TypeError) as exc:
                    raise _Refused(f"{type(exc).__name__}: {exc}") from exc
            factory = functools.partial(learner.cls, epsilon=eps, delta=job.delta, seed=seed)
            return IsolatedLearner(factory, problem, space, learner.limits)

        return make_learner

    def audit() -> dict[str, Any]:
        refusals = []
        for env, kwargs in job.candidates:
            if env in job.refused:  # the benchmark saw it refuse the id
                refusals.append(f"{env}: {job.refused[env]}")
                continue
            game = {"env_id": env, "env_kwargs": dict(kwargs)}
            games = [audit_step.AuditGame(env, kwargs, h) for h in job.horizons]
            try:  # with the power on this learner: its noise-free twin
                finding = audit_step.audit_with_twin(make_learner_at, job.eps, games,
                                                     job.claim, job.settings)
            except _Refused as exc:
                refusals.append(f"{env}: {exc}")
                continue
            except AgentFailure as exc:
                if _refusal(exc.reason):
                    refusals.append(f"{env}: {exc.reason}")
                    continue
                return {"note": f"not audited, so not ranked: the learner failed under "
                                f"audit on {audit_game_text(game)}: {exc.reason}"}
            except Exception as exc:  # noqa: BLE001 - one file never stops the board
                if job.learner.path is None:  # a registered learner's fault is the code's
                    raise
                why = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
                return {"note": f"not audited, so not ranked: the audit could not run the "
                                f"learner on {audit_game_text(game)}: {why}"}
            return {"finding": finite_json(finding.to_dict()), "game": game}
        return {"note": f"not audited, so not ranked: plays none of the audit games of "
                        f"{job.feedback} learners ({'; '.join(refusals)})"}

    return _cached(job.path, job.key, audit)


@dataclasses.dataclass(frozen=True)
class _PowerJob:
    """What the audit on one game refutes of its reference's noise cuts at one epsilon:
    plain data, so that a worker process can measure it (see :func:`_power_job`)."""

    reference: str
    games: tuple[Any, ...]
    eps: float
    settings: Any
    factors: tuple[float, ...]
    resolver: AgentResolver | None
    path: pathlib.Path
    key: str


def _power_job(game: dict[str, Any], eps: float, benchmark: Benchmark, results: pathlib.Path,
               keyed: str, resolver: AgentResolver | None) -> _PowerJob:
    """What the audit on ``game`` refutes of its reference's noise cuts
    (:data:`~.score.AUDIT_REFERENCES`) at ``eps``."""
    settings = _settings(benchmark, keyed, eps)
    env, kwargs = game["env_id"], game["env_kwargs"]
    reference = AUDIT_REFERENCES[env]
    key = stable_hash({"version": SCORE_VERSION, "reference": reference, "env": env,
                       "env_kwargs": kwargs, "eps": eps, "settings": settings.to_dict(),
                       "factors": benchmark.power_factors,
                       "horizons": list(benchmark.audit_horizons)})
    return _PowerJob(reference, tuple(audit_step.AuditGame(env, kwargs, h)
                                      for h in benchmark.audit_horizons),
                     eps, settings, tuple(benchmark.power_factors), resolver,
                     results / "audits" / f"power-{key[:24]}.json", key)


def _power_finding(job: _PowerJob) -> list[Any]:
    """The job's power (as JSON values) and its sentence, read back or measured."""
    def measure() -> list[Any]:
        p = audit_step.one_run_power(job.reference, list(job.games), (job.eps, 0.0),
                                     job.settings, factors=job.factors, resolver=job.resolver)
        return [finite_json(p.to_dict()), str(p)]

    return _cached(job.path, job.key, measure)


__all__ = ["Board", "Learner", "Row", "board_secret", "build_board",
           "audit_game_text", "load_learners"]
