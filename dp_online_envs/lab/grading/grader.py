"""Grading: play every submission isolated on hidden seeds, audit it, score it.

:func:`grade` is what ``dp-online grade`` runs. For an :class:`~.assignment.Assignment`
and a list of submission files it

1. derives the games' seeds from the instructor's secret (the runner's
   ``seed_secret``); the secret reaches no submission process: each runs in a
   bubblewrap sandbox (:mod:`dp_online_envs.lab.sandbox`: its own file and the libraries
   only, a scratch directory, no network, no view of the grader's processes, a clean
   environment) and receives its seeds only as isolation frames. Where the sandbox
   cannot start, :func:`grade` refuses unless ``unsafe_no_sandbox`` is set (then the
   secret's environment variable is only removed from the environment the
   submissions' plain processes inherit);
2. plays the references on every env x horizon x hidden seed (in process, or isolated
   with ``isolate_references``), through the experiment runner;
3. for each submission: finds its learner class in a sandboxed process
   (:func:`~.submission.probe_submission`), plays it isolated (own sandboxed process,
   the assignment's limits, :func:`submission_limits`) on the same games, reads the budget it declares from its
   end-of-game summary, and audits that claim with the one-run audit
   (:mod:`dp_online_envs.lab.audit.one_run`): more games of every env and horizon, each
   played as a graded game is (a fresh sandboxed process, the learner built and reset
   once with its seed, ``T`` rounds of the env's own losses, the end-of-game summary),
   so nothing a learner can see tells an audit game from a graded one; every round is
   a canary, paired after the game;
4. scores it (:func:`score`) and keeps the reasons of every lost point.

The audit's power (what it refutes of the assignment's reference learner with its
noise cut) depends on the assignment only: it is measured once per grading run, in a
worker process while the submissions are graded (it is shown in every report, never
scored), and cached in the output directory keyed by the settings. The CPU time of each
submission's grading and of its audit (the grader's and every process it ran, the
sandboxed ones read from ``/proc`` before they are stopped:
:func:`~dp_online_envs.lab.isolation.isolated_cpu_seconds`) is in its report.

Nothing a submission releases through ``Agent.release`` is read: the audit observes
actions only, which a submission cannot hide.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import math
import os
import pathlib
import pickle
import re
import resource
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

import numpy as np

from dp_online_envs.lab.experiments.backends import local_pool, submit_all
from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.game import (
    VOLATILE_FIELDS,
    GameSpec,
    feedback_option,
    stable_hash,
)
from dp_online_envs.lab.experiments.resolver import AgentResolver
from dp_online_envs.lab.experiments.runner import progress_bar, run_games
from dp_online_envs.lab.experiments.sweep import make_games
from dp_online_envs.lab.grading import audit_step
from dp_online_envs.lab.grading.assignment import Assignment, EnvEntry
from dp_online_envs.lab.grading.grades import (
    UNSAFE_MODE,
    ClassGrades,
    Grade,
    Part,
    SettingResult,
    finite_json,
)
from dp_online_envs.lab.grading.report import write_reports, write_submission
from dp_online_envs.lab.grading.submission import (
    SubmissionError,
    SubmissionLoader,
    file_sha256,
    probe_submission,
    submission_names,
)
from dp_online_envs.lab.isolation import (
    AgentFailure,
    IsolatedLearner,
    IsolationLimits,
    isolated_cpu_seconds,
)
from dp_online_envs.lab.sandbox import Sandbox, sandbox_unavailable
from dp_online_envs.loop import seed_of

#: Record fields left out of a grade: the volatile ones, and the seeds (derived from the
#: secret: whoever holds them can replay the hidden games).
HIDDEN_FIELDS = (*VOLATILE_FIELDS, "env_seed", "agent_seed")
#: Relative slack when comparing a declared budget with the required one.
BUDGET_RTOL = 1e-9
#: The fewest sandboxed games a grading process plays at once (threads, each driving its
#: own sandboxed learner): a game's two sides take turns, each waiting while the other
#: computes, so one game at a time leaves the process's CPU idle about half the time.
MIN_GAMES_AT_ONCE = 2
#: Sandboxed games in flight per CPU of the machine, over every process grading at once:
#: a game keeps at most one CPU busy (its sides take turns). Not more: measured on two
#: busy cores, four games in one grading process cost about 1.5x the CPU per round of
#: one or two and finished no sooner (its threads share one interpreter lock, taken
#: again after every frame's read).
GAMES_PER_CPU = 1


def games_at_once(processes: int = 1) -> int:
    """Sandboxed games each of ``processes`` grading processes plays at once (its graded
    games, then its audit's): :data:`GAMES_PER_CPU` per CPU this process may run on,
    shared by the processes, at least :data:`MIN_GAMES_AT_ONCE`."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(MIN_GAMES_AT_ONCE, math.ceil(GAMES_PER_CPU * cpus / max(1, processes)))


# ---------------------------------------------------------------------- secret
def seed_secret(assignment: Assignment, secret: str) -> str:
    """The runner's ``seed_secret`` for an assignment: a digest of its name and the secret
    (two assignments graded with one secret get unrelated seeds)."""
    return hashlib.sha256(f"dp-online-grade\0{assignment.name}\0{secret}".encode()).hexdigest()


def audit_seed(assignment: Assignment, secret: str) -> int:
    """The audit's seed, derived from the secret (a submission cannot foresee its runs)."""
    digest = hashlib.sha256(f"audit\0{seed_secret(assignment, secret)}".encode()).digest()
    return seed_of(np.random.SeedSequence(int.from_bytes(digest[:16], "big")))


@contextlib.contextmanager
def hidden_variable(name: str | None) -> Iterator[None]:
    """Remove the environment variable ``name`` while the block runs (restored after).

    Processes started in the block (the submissions') inherit an environment without
    it. It does not hide the variable from a process that reads the grader's initial
    environment through ``/proc/<pid>/environ``: that is why graded submissions run in
    the sandbox, which sees no process of the grader and starts with an environment of
    its own (this only matters with ``--unsafe-no-sandbox``).
    """
    saved = os.environ.pop(name, None) if name else None
    try:
        yield
    finally:
        if saved is not None:
            os.environ[name] = saved  # type: ignore[index]


# ---------------------------------------------------------------------- grading
def grade(assignment: Assignment, submissions: Sequence[str | os.PathLike[str]], *,
          out_dir: str | os.PathLike[str] | None = None, secret: str | None = None,
          backend: str = "serial", workers: int | None = None, quiet: bool = True,
          resolver: AgentResolver | None = None, unsafe_no_sandbox: bool = False,
          resume: bool = True, progress: Callable[[str], None] | None = None) -> ClassGrades:
    """Grade submission files on an assignment (see the module docstring).

    With ``out_dir``, each submission's report is written (all or nothing) as soon as it
    is graded, with its processes' output in ``log.txt``; the class tables when all are.

    Args:
        assignment: The validated assignment.
        submissions: ``.py`` files (see :func:`~.submission.find_submissions`).
        out_dir: Write the reports here (:mod:`~.report`); ``None``: don't.
        secret: The instructor's secret (default: read as the assignment says).
        backend: The runner's backend (``"serial"``, ``"local"``) for the references (a
            submission's games are played :func:`games_at_once` at a time, in threads
            of the process grading it).
        workers: Local worker processes: with several submissions to grade, each is
            graded (games and audit) in one of ``workers`` processes; with one, the
            references' games are spread over them.
        quiet: No progress bar.
        resolver: Resolves the references (``None``: the ``agents`` registry).
        unsafe_no_sandbox: Grade in plain processes when the sandbox cannot start
            (the reports say so); ``False``: refuse instead.
        resume: Keep the stored grade of a submission whose file and grading (the
            assignment, the secret's seeds, the sandbox mode, this release) are
            unchanged since it was written in ``out_dir``.
        progress: Called with one line per submission graded or kept (``None``: no
            lines).

    Returns:
        The grades, in the order of ``submissions``.

    Raises:
        ExperimentError: The secret is missing, or the sandbox cannot start and
            ``unsafe_no_sandbox`` is not set (one line naming why).
        RuntimeError: A reference failed (the assignment, not a submission, is wrong).
    """
    secret = assignment.secret.value() if secret is None else secret
    sandboxed = sandbox_mode(unsafe_no_sandbox)
    keyed = seed_secret(assignment, secret)
    settings = dataclasses.replace(assignment.audit.settings,
                                   seed=audit_seed(assignment, secret))
    run = functools.partial(run_games, backend=backend, workers=workers, quiet=quiet,
                            seed_secret=keyed)
    mode = Sandbox(processes=assignment.processes).describe() if sandboxed else UNSAFE_MODE
    with hidden_variable(assignment.secret.env), contextlib.ExitStack() as stack:
        power_of = _power_started(assignment, settings, out_dir, resolver,
                                  stack if submissions else None)
        references = _reference_records(assignment, run, resolver)
        frame = ClassGrades(assignment, [], [_public(r) for r in references], None, "",
                            mode)
        job = _Job(assignment, run, references, settings, sandboxed,
                   None if out_dir is None else pathlib.Path(out_dir))
        grades = _grade_all(job, [pathlib.Path(p) for p in submissions], frame, power_of,
                            grading_key(assignment, keyed, mode), workers or 1, resume,
                            progress)
        power, power_text = power_of()
    result = dataclasses.replace(frame, grades=grades, power=power, power_text=power_text)
    if out_dir is not None:
        result.out_dir = write_reports(result, out_dir)
    return result


@dataclasses.dataclass(frozen=True)
class _Job:
    """What grading one submission needs (sent whole to a worker process)."""

    assignment: Assignment
    run: Any
    references: list[dict[str, Any]]
    settings: Any
    sandboxed: bool
    out_dir: pathlib.Path | None

    names: dict[str, str] = dataclasses.field(default_factory=dict)
    #: Sandboxed games played at once (:func:`games_at_once`).
    at_once: int = MIN_GAMES_AT_ONCE

    def __call__(self, path: pathlib.Path) -> tuple[Grade, float]:
        """The submission's grade and the seconds it took."""
        start = time.perf_counter()
        return _grade_safely(self, path), time.perf_counter() - start

    def name(self, path: pathlib.Path) -> str:
        """The submission's name (its report directory and row): given by :attr:`names`
        (the file's path as given to it), else the file's own safe name."""
        return self.names.get(str(path)) or submission_names([path])[0]


def grading_key(assignment: Assignment, keyed: str, mode: str) -> str:
    """A digest of everything a grade depends on besides the submission's file: the
    assignment (its secret's source left out), the hidden seeds' key, the sandbox mode
    and this release."""
    from dp_online_envs import __version__

    plain = dataclasses.replace(assignment, source="", secret=dataclasses.replace(
        assignment.secret, salt=None))
    return stable_hash({"assignment": repr(plain), "seeds": stable_hash(keyed),
                        "mode": mode, "release": __version__})


def stored_grade(out_dir: pathlib.Path, path: pathlib.Path, key: str,
                 name: str | None = None) -> Grade | None:
    """The grade stored in ``out_dir`` for the file ``path`` named ``name`` (``None``: its
    name alone, :func:`~.submission.submission_names`), if its file and grading key are
    those of this run (else ``None``: graded again)."""
    page = out_dir / (submission_names([path])[0] if name is None else name)
    try:
        run = json.loads((page / "run.json").read_text(encoding="utf-8"))
        if run.get("key") != key or run.get("sha256") != file_sha256(path):
            return None
        return Grade.from_dict(json.loads((page / "grade.json").read_text(encoding="utf-8")),
                               run.get("audit_cpu_seconds"), run.get("cpu_seconds"))
    except (OSError, ValueError, AttributeError):
        return None  # missing or damaged: graded again


def _grade_all(job: _Job, paths: list[pathlib.Path], frame: ClassGrades,
               power_of: Callable[[], tuple[dict[str, Any] | None, str]], key: str,
               workers: int, resume: bool, progress: Callable[[str], None] | None
               ) -> list[Grade]:
    """Every submission's grade: kept from ``out_dir`` when unchanged, else graded (in
    ``workers`` processes when several are to be); each written as soon as it is done,
    with the audit's power (``power_of()``: measured meanwhile) filled in."""
    grades: dict[int, Grade] = {}
    names = submission_names(paths)
    job = dataclasses.replace(job, names={str(p): n for p, n in zip(paths, names)})
    if job.out_dir is not None and resume:
        for i, path in enumerate(paths):
            kept = stored_grade(job.out_dir, path, key, names[i])
            if kept is not None:
                grades[i] = kept
                if progress is not None:
                    progress(f"{names[i]}: unchanged since its stored grade, kept "
                             f"({kept.score:.3g} / {kept.total:g})")
    todo = [i for i in range(len(paths)) if i not in grades]

    def done(i: int, g: Grade, seconds: float) -> None:
        power, power_text = power_of()
        g = dataclasses.replace(g, power=power, power_text=power_text)
        grades[i] = g
        if job.out_dir is not None:
            write_submission(g, dataclasses.replace(frame, power=power,
                                                    power_text=power_text), job.out_dir,
                             {"key": key, "sha256": g.sha256,
                              "audit_cpu_seconds": g.audit_cpu_seconds,
                              "cpu_seconds": g.cpu_seconds})
        if progress is not None:
            progress(f"[{len(grades)}/{len(paths)}] {g.submission}: {g.score:.3g} / "
                     f"{g.total:g} ({seconds:.0f} s)")

    if workers <= 1 or len(todo) <= 1:
        job = dataclasses.replace(job, at_once=games_at_once(1))
        for i in todo:
            done(i, *job(paths[i]))
    else:
        serial = dataclasses.replace(job, run=functools.partial(
            job.run, backend="serial", workers=None, quiet=True),
            at_once=games_at_once(min(workers, len(todo))))
        with local_pool(min(workers, len(todo)), preload=["agents"]) as pool:
            futures = dict(zip(submit_all(pool, serial, [paths[i] for i in todo]), todo))
            for future in as_completed(futures):
                done(futures[future], *future.result())
    return [grades[i] for i in range(len(paths))]


def sandbox_mode(unsafe_no_sandbox: bool) -> bool:
    """Whether submissions are graded sandboxed: ``True`` when the sandbox starts here;
    ``False`` when it cannot and ``unsafe_no_sandbox`` is set.

    Raises:
        ExperimentError: The sandbox cannot start and ``unsafe_no_sandbox`` is not set.
    """
    why = sandbox_unavailable()
    if why is None:
        return True
    if not unsafe_no_sandbox:
        raise ExperimentError(f"grading refused: the submissions' sandbox cannot start "
                              f"({why}); --unsafe-no-sandbox grades without one")
    return False


def submission_limits(assignment: Assignment, path: pathlib.Path, sandboxed: bool,
                      log: pathlib.Path | None = None) -> IsolationLimits:
    """The assignment's limits for one submission: sandboxed with its own file only and the
    assignment's ``processes``; its processes' output appended to ``log`` (started empty;
    ``None``: dropped). The submission's wall-clock budget is not set here (see
    :func:`_grade_one`: its ``deadline`` starts when its grading does)."""
    limits = assignment.limits
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_bytes(b"")
        limits = dataclasses.replace(limits, log=str(log))
    if not sandboxed:
        return limits
    return dataclasses.replace(limits, sandbox=Sandbox(files=(str(path),),
                                                       processes=assignment.processes))


def _reference_records(assignment: Assignment, run: Any,
                       resolver: AgentResolver | None) -> list[dict[str, Any]]:
    specs: list[GameSpec] = []
    for ref in assignment.references:
        for env in assignment.envs:
            for horizon in assignment.horizons:
                specs += make_games(env.id, ref.name, epsilon=ref.epsilon,
                                    delta=ref.delta, horizon=horizon, seeds=assignment.seeds,
                                    env_kwargs=dict(env.kwargs), agent_kwargs=dict(ref.kwargs),
                                    tags={"role": "reference"}, sweep=assignment.name,
                                    resolver=resolver)
    report = run(specs, isolate=assignment.limits if assignment.isolate_references else False,
                 desc="references")
    if report.failures:
        spec, error = report.failures[0]
        raise RuntimeError(f"reference {spec.label} failed on {spec.env_id} (T={spec.horizon}, "
                           f"seed {spec.seed_index}): {failure_reason(error)}")
    return report.records


def _power_started(assignment: Assignment, settings: Any, out_dir: Any,
                   resolver: AgentResolver | None, stack: contextlib.ExitStack | None
                   ) -> Callable[[], tuple[dict[str, Any] | None, str]]:
    """The audit's power against the assignment's reference, as a call that returns it
    (``(power, text)``, cached in ``out_dir``): read from the cache when it holds these
    settings' power, else measured in a worker process of its own (a :func:`local_pool`
    entered on ``stack``) while the submissions are graded (it is shown, never scored);
    in this process, before the call returns, without ``stack`` (nothing to grade
    meanwhile) or when ``resolver`` does not pickle. The call waits for the measurement
    and raises what it raised."""
    key, cache, found = _power_cache(assignment, settings, out_dir)
    if found is not None:
        return lambda: found
    args = (assignment, settings, resolver)
    try:
        pickle.dumps(args)
    except Exception:  # noqa: BLE001 - a resolver of the caller's that cannot travel
        stack = None
    if stack is None:
        measured = _measure_power(args)
        _store_power(cache, key, measured)
        return lambda: measured
    pool = stack.enter_context(local_pool(1, preload=["agents"]))
    future = submit_all(pool, _measure_power, [args])[0]
    got: list[tuple[dict[str, Any] | None, str]] = []

    def power_of() -> tuple[dict[str, Any] | None, str]:
        if not got:
            got.append(future.result())
            _store_power(cache, key, got[0])
        return got[0]
    return power_of


def _power_cache(assignment: Assignment, settings: Any, out_dir: Any
                 ) -> tuple[str, pathlib.Path | None, tuple[dict[str, Any] | None, str] | None]:
    """``(key, cache file, stored power or None)`` for the audit's power of these
    settings (no cache file without ``out_dir``; a damaged one holds nothing)."""
    ref = assignment.reference(assignment.audit.reference)
    env = assignment.audit.env
    claim = (assignment.epsilon, assignment.delta)
    factors = assignment.audit.power_factors
    key = stable_hash({"reference": ref.name, "kwargs": dict(ref.kwargs), "env": env.id,
                       "env_kwargs": dict(env.kwargs), "claim": claim,
                       "horizons": list(assignment.horizons), "audit": "one-run",
                       "settings": dataclasses.asdict(settings), "factors": factors})
    cache = None if out_dir is None else pathlib.Path(out_dir) / "audit_power.json"
    if cache is not None and cache.is_file():
        try:
            stored = json.loads(cache.read_text())
            if stored.get("key") == key:
                return key, cache, (stored["power"], stored["text"])
        except (OSError, ValueError, KeyError, AttributeError):
            pass  # a damaged cache is measured again
    return key, cache, None


def _measure_power(args: tuple[Assignment, Any, AgentResolver | None]
                   ) -> tuple[dict[str, Any] | None, str]:
    """``(power as a dict, its text)``: :func:`~.audit_step.one_run_power` on the
    assignment's audit reference, played in process (a module-level task for a worker)."""
    assignment, settings, resolver = args
    ref = assignment.reference(assignment.audit.reference)
    env = assignment.audit.env
    factors = assignment.audit.power_factors
    games = [audit_step.AuditGame(env.id, dict(env.kwargs), h) for h in assignment.horizons]
    power = audit_step.one_run_power(ref.name, games, (assignment.epsilon, assignment.delta),
                                     settings,
                                     **({} if factors is None else {"factors": factors}),
                                     options=dict(ref.kwargs), resolver=resolver)
    return finite_json(power.to_dict()), str(power)


def _store_power(cache: pathlib.Path | None, key: str,
                 found: tuple[dict[str, Any] | None, str]) -> None:
    """Keep the measured power in ``cache`` under ``key`` (nothing without a cache)."""
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"key": key, "power": found[0], "text": found[1]},
                                    indent=1))


def _grade_safely(job: _Job, path: pathlib.Path) -> Grade:
    """:func:`_grade_one`, with any error it did not foresee turned into this submission's
    zero grade and one-line reason: one bad submission never stops the class's grading
    (Ctrl-C still does)."""
    try:
        return _grade_one(job, path)
    except Exception as exc:  # noqa: BLE001 - reported in the grade, not raised
        reason = f"grading failed: {type(exc).__name__}: {exc}".splitlines()[0][:300]
        return Grade(submission=job.name(path), path=str(path), power=None,
                     power_text="",
                     sandbox=(Sandbox(processes=job.assignment.processes).describe()
                              if job.sandboxed else UNSAFE_MODE),
                     sha256=file_sha256(path), learner=None, settings=[], declared=None,
                     audit=None, records=[], parts=_all_zero(job.assignment, reason))


def _grade_one(job: _Job, path: pathlib.Path) -> Grade:
    """Probe, play, audit and score one submission; every failure becomes a reason."""
    name = job.name(path)
    assignment, run, references, settings, sandboxed = (
        job.assignment, job.run, job.references, job.settings, job.sandboxed)
    limits = submission_limits(assignment, path, sandboxed, log=None if job.out_dir is None
                               else job.out_dir / name / "log.txt")
    if assignment.submission_seconds is not None:  # its probe, games and audit together
        limits = dataclasses.replace(
            limits, deadline=time.monotonic() + assignment.submission_seconds)
    blank = functools.partial(Grade, submission=name, path=str(path), power=None,
                              power_text="",
                              sandbox=limits.sandbox.describe() if sandboxed else UNSAFE_MODE)
    start_cpu = _cpu_seconds()
    try:
        info = probe_submission(path, limits)
    except SubmissionError as exc:
        return blank(sha256=file_sha256(path), learner=None, settings=[], declared=None, audit=None,
                     records=[], parts=_all_zero(assignment, exc.reason))
    loader = SubmissionLoader(info)
    learner = {k: v for k, v in dataclasses.asdict(info).items() if k not in ("path", "sha256")}
    try:
        for env in assignment.envs:
            feedback_option(env.id, loader)
    except ExperimentError as exc:
        return blank(sha256=info.sha256, learner=learner, settings=[], declared=None,
                     audit=None, records=[], parts=_all_zero(assignment, str(exc)))
    specs = [GameSpec(env.id, f"submission:{name}", assignment.epsilon, assignment.delta,
                      horizon, seed, dict(env.kwargs), {},
                      {"role": "submission", "submission": name}, assignment.name, loader)
             for env in assignment.envs for horizon in assignment.horizons
             for seed in range(assignment.seeds)]
    records, failed = _play_graded(run, specs, limits, name, job.at_once)
    failures = [(spec, failure_reason(error)) for spec, error in failed]
    declared, declared_note = declared_budget(records)
    cpu = _cpu_seconds()
    finding, audit_reason = _audit(assignment, loader, declared, declared_note, settings,
                                   limits, job.at_once,
                                   None if run.keywords.get("quiet", True) else name)
    end_cpu = _cpu_seconds()
    cpu = None if declared is None else end_cpu - cpu
    results = _settings(assignment, records, failures, references)
    parts = score(assignment, results, declared, declared_note, finding, audit_reason)
    return blank(sha256=info.sha256, learner=learner, settings=results, declared=declared,
                 audit=None if finding is None else finite_json(finding.to_dict()),
                 records=[_public(r) for r in records], parts=parts,
                 audit_cpu_seconds=cpu, cpu_seconds=end_cpu - start_cpu)


def _play_graded(run: Any, specs: list[GameSpec], limits: IsolationLimits, name: str,
                 at_once: int) -> tuple[list[dict[str, Any]], list[tuple[GameSpec, str]]]:
    """A submission's graded games, ``at_once`` of them in flight (threads of this
    process, each playing its game through the runner's serial backend: the work is in
    the sandboxed processes): ``(records, failures)`` in the order of ``specs``."""
    def play(chunk: list[GameSpec]) -> Any:
        return run(chunk, isolate=limits, desc=name, backend="serial", workers=None)

    if at_once <= 1 or len(specs) <= 1:
        reports = [play(specs)]
    else:
        with ThreadPoolExecutor(max_workers=min(at_once, len(specs))) as pool:
            reports = list(pool.map(play, [[spec] for spec in specs]))
    return ([r for report in reports for r in report.records],
            [f for report in reports for f in report.failures])


def _cpu_seconds() -> float:
    """CPU seconds of this process and of the isolated processes it has stopped, each
    with every process it started (:func:`~dp_online_envs.lab.isolation.
    isolated_cpu_seconds`: ``RUSAGE_CHILDREN`` misses a sandbox's processes)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime + isolated_cpu_seconds()


def _audit(assignment: Assignment, loader: SubmissionLoader,
           declared: tuple[float, float, str] | None, declared_note: str,
           settings: Any, limits: IsolationLimits, workers: int = 1,
           shown: str | None = None) -> tuple[Any, str]:
    """``(finding, "")``, or ``(None, why the audit did not run to its end)``.

    The one-run audit plays ``settings.games`` games of every env and horizon, each a
    fresh isolated learner built with the game's seed (as :func:`~dp_online_envs.
    experiments.game.play_game` builds a graded game's) and reset with it once. When
    the claim is not refuted, the same games are played by the submission built at
    :data:`~.audit_step.TWIN_FACTOR` times the assignment's epsilon (its noise-free
    twin, claiming the same): a twin that is not refuted either means the audit could
    not have caught this learner lying (``finding.verdict == "no audit power"``).
    With ``shown`` (the submission's name), the games started show as progress
    (:func:`~dp_online_envs.lab.experiments.runner.progress_bar`: a bar on a terminal,
    else a line every few seconds), each audit its own.
    """
    if declared is None:
        return None, f"not audited: {declared_note}"
    games = audit_games(assignment, loader)

    plan = [g.horizon for g in games] * settings.games
    bars: list[Any] = []

    def make_learner_at(epsilon: float) -> Callable[..., IsolatedLearner]:
        what = "audit" if epsilon == assignment.epsilon else "audit of its noise-free twin"
        bar = progress_bar(len(plan), quiet=shown is None, desc=f"{shown}: {what}",
                           rounds=sum(plan))
        bars.append(bar)

        def make_learner(problem: Any, action_space: Any, seed: int) -> IsolatedLearner:
            bar.update(1, problem.horizon)  # counts the games started
            factory = functools.partial(loader, epsilon=epsilon, delta=assignment.delta,
                                        seed=seed)
            return IsolatedLearner(factory, problem, action_space, limits)
        return make_learner

    try:
        return audit_step.audit_with_twin(make_learner_at, assignment.epsilon, games,
                                          (declared[0], declared[1]), settings,
                                          workers=workers), ""
    except AgentFailure as exc:
        return None, f"the learner failed under audit: {exc.reason}"
    except Exception as exc:  # noqa: BLE001 - a submission's fault is reported, not raised
        return None, f"the audit could not run the learner: {type(exc).__name__}: {exc}"
    finally:
        for bar in bars:
            bar.close()


def audit_games(assignment: Assignment, loader: Any) -> list[audit_step.AuditGame]:
    """The audit's env x horizon settings for a learner: the graded ones, with
    ``feedback="bandit"`` where a bandit learner plays a full-information env (as its
    graded games are played).

    Args:
        assignment: The assignment.
        loader: The learner's class (or :class:`~.submission.SubmissionLoader`).
    """
    games = []
    for env in assignment.envs:
        downgrade = feedback_option(env.id, loader)  # a bandit learner on a full-info env
        kwargs = {**env.kwargs, **({"feedback": downgrade} if downgrade else {})}
        games += [audit_step.AuditGame(env.id, kwargs, h) for h in assignment.horizons]
    return games


def declared_budget(records: list[dict[str, Any]]
                    ) -> tuple[tuple[float, float, str] | None, str]:
    """The budget a submission declared in its games (its ``privacy`` at the end of each).

    Returns:
        ``((epsilon, delta, text), "")``; with different declarations in different
        games, the weakest (largest epsilon and delta) and a note; ``(None, why)`` when
        no game finished or a game declared nothing.
    """
    if not records:
        return None, "no game finished, so no declared budget was read"
    claims = [(r["privacy_epsilon"], r["privacy_delta"], r["privacy_mechanism"])
              for r in records]
    if any(eps is None for eps, _, _ in claims):
        return None, "the learner declared no privacy budget (its privacy attribute is None)"
    for eps, delta, _ in claims:
        if not (isinstance(eps, (int, float)) and isinstance(delta, (int, float))
                and eps >= 0 and 0 <= delta <= 1):  # also refuses NaN
            return None, (f"the learner declared an invalid budget (epsilon={eps!r}, "
                          f"delta={delta!r}); expected epsilon >= 0 and delta in [0, 1]")
    eps = max(c[0] for c in claims)
    delta = max(c[1] for c in claims)
    text = next(c[2] for c in claims if c[0] == eps)
    distinct = {(c[0], c[1]) for c in claims}
    note = "" if len(distinct) == 1 else (f"the learner declared {len(distinct)} different "
                                          "budgets in its games; the weakest is graded")
    return (float(eps), float(delta), str(text)), note


def _settings(assignment: Assignment, records: list[dict[str, Any]],
              failures: list[tuple[GameSpec, str]],
              references: list[dict[str, Any]]) -> list[SettingResult]:
    rule = assignment.grading.regret
    share = rule.points / (len(assignment.envs) * len(assignment.horizons))
    out = []
    for env in assignment.envs:
        for horizon in assignment.horizons:
            def here(r: dict[str, Any], env: EnvEntry = env, horizon: int = horizon) -> bool:
                return (r["env_id"] == env.id and r["env_kwargs"] == dict(env.kwargs)
                        and r["horizon"] == horizon)

            mine = [r for r in records if here(r)]
            failed = tuple(reason for spec, reason in failures
                           if spec.env_id == env.id and spec.env_kwargs == dict(env.kwargs)
                           and spec.horizon == horizon)
            refs: dict[str, list[float]] = defaultdict(list)
            for r in references:
                if here(r):
                    refs[r["agent_label"]].append(r["regret"])
            means = {label: sum(v) / len(v) for label, v in refs.items()}
            projected = sum(int(r["projected_actions"]) for r in mine)
            regret = sum(r["regret"] for r in mine) / len(mine) if mine and not failed else None
            if failed or projected or regret is None:
                earned = 0.0
            else:
                earned = share * rule.fraction(regret, means[rule.reference])
            out.append(SettingResult(env.label, horizon, len(mine) + len(failed), failed,
                                     projected, regret, means, share, earned))
    return out


def score(assignment: Assignment, settings: list[SettingResult],
          declared: tuple[float, float, str] | None, declared_note: str, finding: Any,
          audit_reason: str) -> list[Part]:
    """The three parts of a grade, each with the reason for what it earned.

    * regret: each env x horizon earns its share when no game failed (crash, timeout,
      limit, NaN, malformed or infeasible action: zero for that setting) in proportion
      to :meth:`~.assignment.RegretRule.fraction`;
    * declared: all points when the learner declares ``epsilon <= required`` and
      ``delta <= required`` in every game and the audit does not refute that claim,
      none otherwise (a refuted claim earns nothing for being declared);
    * audit: all points when the action audit of the declared claim ran, did not
      refute it, and had power on this learner (its noise-free twin refuted, enough
      guesses for a leaky mechanism to be refuted:
      :attr:`~dp_online_envs.lab.audit.one_run.OneRunFinding.has_power`); none when it
      refutes the claim, and none with the reason "no audit power" when it could not
      have caught this learner lying (an unchecked claim earns no audit points).
    """
    rule = assignment.grading
    lost = []
    for s in settings:
        if s.failed:
            lost.append(f"{s.env} T={s.horizon}: {len(s.failed)} of {s.games} games failed "
                        f"({s.failed[0]})")
        elif s.projected:
            lost.append(f"{s.env} T={s.horizon}: {s.projected} infeasible action(s) "
                        "(outside the decision set)")
        elif s.earned < s.points:
            ref = s.references[rule.regret.reference]
            lost.append(f"{s.env} T={s.horizon}: mean regret {s.regret:.4g} vs "
                        f"{rule.regret.reference} {ref:.4g} (full points up to "
                        f"x{rule.regret.factor:g}, none from x{rule.regret.zero_at:g})")
    regret = Part("regret", rule.regret.points, sum(s.earned for s in settings),
                  "; ".join(lost) or f"within x{rule.regret.factor:g} of "
                                     f"{rule.regret.reference} on every setting")
    eps, delta = assignment.epsilon, assignment.delta
    if declared is None:
        declared_part = Part("declared", rule.declared, 0.0, declared_note)
    elif finding is not None and finding.refuted:
        declared_part = Part("declared", rule.declared, 0.0,
                             f"declares ({declared[0]:g}, {declared[1]:g})-DP, but the audit "
                             "refutes that claim: a refuted claim earns nothing")
    elif declared[0] <= eps * (1 + BUDGET_RTOL) and declared[1] <= delta * (1 + BUDGET_RTOL):
        declared_part = Part("declared", rule.declared, rule.declared,
                             f"declares ({declared[0]:g}, {declared[1]:g})-DP within the "
                             f"required ({eps:g}, {delta:g})" +
                             (f"; {declared_note}" if declared_note else ""))
    else:
        declared_part = Part("declared", rule.declared, 0.0,
                             f"declares ({declared[0]:g}, {declared[1]:g})-DP, weaker than the "
                             f"required ({eps:g}, {delta:g})")
    if finding is None:
        audit = Part("audit", rule.audit, 0.0, audit_reason)
    elif finding.refuted:
        audit = Part("audit", rule.audit, 0.0,
                     f"refuted: eps_lb = {finding.eps_lb:.3g} > declared epsilon "
                     f"{finding.claimed_epsilon:g} at {100 * finding.confidence:g}% confidence")
    elif finding.verdict == "no audit power":
        audit = Part("audit", rule.audit, 0.0,
                     f"no audit power: not refuted (eps_lb = {finding.eps_lb:.3g}), but the "
                     f"audit could not have caught this learner lying ({finding.power_text()}"
                     "); a claim the audit cannot check earns no audit points")
    else:
        audit = Part("audit", rule.audit, rule.audit,
                     f"not refuted (eps_lb = {finding.eps_lb:.3g} <= {finding.claimed_epsilon:g}"
                     f"); evidence, not proof; power on this learner: {finding.power_text()}")
    return [regret, declared_part, audit]


def _all_zero(assignment: Assignment, reason: str) -> list[Part]:
    rule = assignment.grading
    return [Part("regret", rule.regret.points, 0.0, reason),
            Part("declared", rule.declared, 0.0, reason),
            Part("audit", rule.audit, 0.0, reason)]


_FAILURE = re.compile(r"^(?:[\w.]+\.)?AgentFailure: (.+)$", re.MULTILINE)


def failure_reason(error: str) -> str:
    """One line from a failed game's traceback: the isolated agent's failure, else the
    exception line that ended it."""
    found = _FAILURE.search(error)
    if found:
        return found.group(1).strip()
    lines = [ln.strip() for ln in error.strip().splitlines() if ln.strip()]
    exc = [ln for ln in lines if re.match(r"^[\w.]+(Error|Exception|Warning|Interrupt|Exit)\b",
                                          ln)]
    return (exc[-1] if exc else lines[-1] if lines else "unknown error")[:300]


def _public(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in HIDDEN_FIELDS}


__all__ = ["UNSAFE_MODE", "ClassGrades", "Grade", "Part", "SettingResult", "audit_seed",
           "declared_budget", "failure_reason", "grade", "hidden_variable", "sandbox_mode",
           "score", "seed_secret", "submission_limits"]
