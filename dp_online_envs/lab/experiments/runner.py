"""Running games and sweeps: :func:`run` for one setting, :func:`run_sweep` for a sweep.

Both return tidy records (one flat dict per game; see
:func:`~dp_online_envs.lab.experiments.game.play_game` for the fields). With a results
directory, finished games are read back instead of replayed and every new game is
written as soon as it finishes.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import pathlib
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from dp_online_envs.lab.experiments import store as store_module
from dp_online_envs.lab.experiments.backends import Outcome, execute
from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.game import GameSpec
from dp_online_envs.lab.experiments.resolver import AgentResolver
from dp_online_envs.lab.experiments.store import ResultsStore
from dp_online_envs.lab.experiments.sweep import Sweep, load_sweep, make_games, parse_sweep
from dp_online_envs.lab.experiments.vector import play_batch, split_batchable
from dp_online_envs.lab.isolation import IsolationLimits


@dataclasses.dataclass
class RunReport:
    """What a run did.

    Attributes:
        records: The records of every game asked for that has one (played now or
            read back), in the order the games were given.
        played: Games played in this run.
        reused: Games whose record was already in the results directory, or was
            written there meanwhile by another sweep that had claimed the game.
        failures: ``(spec, error text)`` of the games that raised.
        results: The results directory, if any.
        seconds: Wall time of the run.
    """

    records: list[dict[str, Any]]
    played: int
    reused: int
    failures: list[tuple[GameSpec, str]]
    results: pathlib.Path | None
    seconds: float

    @property
    def ok(self) -> bool:
        """Whether every game has a record."""
        return not self.failures


def run(
    env_id: str,
    agent_name: Any,
    *,
    epsilon: float | None = None,
    delta: float | None = 0.0,
    horizon: int = 1000,
    seeds: int | Iterable[int] = 1,
    env_kwargs: dict[str, Any] | None = None,
    agent_kwargs: dict[str, Any] | None = None,
    tags: dict[str, Any] | None = None,
    backend: str = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    results: str | os.PathLike[str] | None = None,
    quiet: bool = True,
    isolate: bool | IsolationLimits = False,
    seed_secret: str | None = None,
    resolver: AgentResolver | None = None,
    vectorize: bool = False,
) -> list[dict[str, Any]]:
    """Play complete games of one setting and return their records.

    Args:
        env_id: A registered env id.
        agent_name: A registered agent name, ``"module:Class"``, or an ``agents.Agent``
            subclass (your own learner; it need not be registered).
        epsilon: Privacy parameter of a private agent (ignored, recorded as ``None`` and
            "non-private", for a non-private one).
        delta: Privacy parameter of a private agent.
        horizon: Rounds per game.
        seeds: Number of games (seed indices ``0..seeds-1``) or the seed indices.
        env_kwargs: Env options (not ``horizon``/``feedback``: the runner sets them).
        agent_kwargs: Agent options.
        tags: Labels copied into every record.
        backend: ``"local"`` processes (default), ``"serial"`` or ``"dask"``.
        workers: Number of local processes (default: the CPUs available).
        scheduler: Dask scheduler address for ``backend="dask"``.
        results: Optional results directory (finished games are reused).
        quiet: No progress bar.
        isolate: Play each agent in its own spawned process (``True`` for the default
            :class:`~dp_online_envs.lab.isolation.IsolationLimits`, or the limits).
        seed_secret: A secret mixed into every game's seeds, so an agent cannot compute
            the env's seed from the settings (use with ``isolate`` for untrusted agents).
        resolver: Resolves ``agent_name`` (``None``: the ``agents`` registry, see
            :mod:`.resolver`).
        vectorize: Play the seeds together in one vector game where the
            setting has one (:mod:`.vector`; the records are those of the scalar
            games), else one by one.

    Returns:
        One record per seed, in seed order (none in a worker process that is importing
        the main script: :func:`started_by_worker_import`).

    Raises:
        ExperimentError: Unknown env or agent, an agent the env cannot serve, a private
            agent without ``epsilon > 0``, bad options.
        RuntimeError: A game raised (the message carries its traceback).
    """
    if started_by_worker_import():
        return []
    specs = make_games(env_id, agent_name, epsilon=epsilon, delta=delta, horizon=horizon,
                       seeds=seeds, env_kwargs=env_kwargs, agent_kwargs=agent_kwargs, tags=tags,
                       resolver=resolver)
    report = run_games(specs, results=results, backend=backend, workers=workers,
                       scheduler=scheduler, quiet=quiet, isolate=isolate,
                       seed_secret=seed_secret, vectorize=vectorize)
    if report.failures:
        spec, error = report.failures[0]
        raise RuntimeError(f"{len(report.failures)} game(s) failed; the first "
                           f"({spec.label} on {spec.env_id}, seed {spec.seed_index}):\n{error}")
    return report.records


def run_sweep(
    sweep: Sweep | dict[str, Any] | str | os.PathLike[str],
    *,
    results: str | os.PathLike[str] | None = None,
    backend: str = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    client: Any = None,
    quiet: bool = False,
    isolate: bool | IsolationLimits = False,
    seed_secret: str | None = None,
    resolver: AgentResolver | None = None,
    vectorize: bool | None = None,
) -> RunReport:
    """Run every game of a sweep that has no record yet in the results directory.

    Args:
        sweep: A :class:`Sweep`, a sweep mapping, or the path of a sweep file.
        results: Results directory; default the sweep's ``results`` key, else
            ``results/<sweep name>``.
        backend: ``"local"`` (default), ``"dask"`` or ``"serial"``.
        workers: Local processes (default: the CPUs available).
        scheduler: Dask scheduler address (``tcp://HOST:PORT``) for ``backend="dask"``.
        client: An existing ``dask.distributed.Client`` for ``backend="dask"``.
        quiet: No progress (a bar on a terminal, else a line every few seconds,
            :func:`progress_bar`).
        isolate: Play each agent in its own spawned process (see :func:`run`).
        seed_secret: A secret mixed into every game's seeds (see :func:`run`).
        resolver: Resolves the agent names of a sweep mapping or file (``None``: the
            ``agents`` registry, see :mod:`.resolver`); a :class:`Sweep` is resolved.
        vectorize: See :func:`run`; ``None`` (default): the sweep's ``vectorize`` key.

    Raises:
        ExperimentError: An invalid sweep or backend setting.
    """
    if started_by_worker_import():
        return RunReport(records=[], played=0, reused=0, failures=[], results=None, seconds=0.0)
    if isinstance(sweep, dict):
        sweep = parse_sweep(sweep, resolver=resolver)
    elif isinstance(sweep, (str, os.PathLike)):
        sweep = load_sweep(sweep, resolver=resolver)
    elif not isinstance(sweep, Sweep):
        raise ExperimentError(f"sweep={sweep!r} rejected: expected a Sweep, a sweep mapping "
                              "or the path of a sweep file")
    root = pathlib.Path(results if results is not None
                        else sweep.results or pathlib.Path("results") / sweep.name)
    store = ResultsStore(root)
    store.prepare()
    store.write_manifest({"name": sweep.name, "games": len(sweep), **sweep.settings})
    return run_games(sweep.games, results=root, backend=backend, workers=workers,
                     scheduler=scheduler, client=client, quiet=quiet, desc=sweep.name,
                     isolate=isolate, seed_secret=seed_secret,
                     vectorize=sweep.vectorize if vectorize is None else vectorize)


def run_games(
    specs: Sequence[GameSpec],
    *,
    results: str | os.PathLike[str] | None = None,
    backend: str = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    client: Any = None,
    quiet: bool = True,
    desc: str = "games",
    isolate: bool | IsolationLimits = False,
    seed_secret: str | None = None,
    resolver: AgentResolver | None = None,
    vectorize: bool = False,
) -> RunReport:
    """Play the games that have no record yet; write each new record as it finishes.

    With a results directory, damaged files in it, and records whose resolved settings
    differ from the game asked for, are quarantined (and their games played again), and
    each game is claimed before it is played: games claimed by
    another live sweep on the same directory are not played here, their records are
    waited for (see :mod:`.store`), so every game is played once.

    ``isolate`` and ``seed_secret`` are set on every spec (see :func:`run`); a game whose
    isolated agent fails is reported in ``failures`` with the reason, and the others go on.
    With a ``resolver``, every game without an agent class gets it from there first (the
    worker processes then need no registry); without one such games resolve their agent
    by name where they are played, with the ``agents`` registry.

    On ``KeyboardInterrupt`` the games in flight are abandoned (their workers are
    stopped before the exception leaves this function), every game that finished is
    already in the results directory, and the exception propagates: running again
    resumes.

    With ``vectorize``, the games of one setting that have a vector path are
    played together in this process (:mod:`.vector`), the others by the backend.

    Raises:
        ExperimentError: A bad backend setting, or a results path that is not a
            writable directory.
        KeyboardInterrupt: Ctrl-C (SIGINT) while the games were played.
    """
    start = time.perf_counter()
    if started_by_worker_import():
        return RunReport(records=[], played=0, reused=0, failures=[], results=None, seconds=0.0)
    if resolver is not None:
        specs = [s if s.agent_cls is not None
                 else dataclasses.replace(s, agent_cls=s.agent_class(resolver)) for s in specs]
    if isolate or seed_secret is not None:
        limits = (isolate if isinstance(isolate, IsolationLimits)
                  else IsolationLimits() if isolate else None)
        specs = [dataclasses.replace(s, isolation=limits, seed_secret=seed_secret)
                 for s in specs]
    store = ResultsStore(results) if results is not None else None
    done: dict[str, dict[str, Any]] = {}
    if store is not None:
        store.prepare()
        records = {r["game_id"]: r for r in store.load()}
        for spec in specs:  # a record of another game under this id is set aside
            record = store.usable_for(spec, records.get(spec.game_id))
            if record is not None:
                done[spec.game_id] = record
    wanted = {s.game_id for s in specs}
    reused = len(wanted & set(done))
    todo = _unique([s for s in specs if s.game_id not in done])
    failures: list[tuple[GameSpec, str]] = []
    played = 0
    bar = progress_bar(len(todo), quiet=quiet, desc=desc, rounds=sum(s.horizon for s in todo))
    # Rounds reported by games in flight (their outcome adds the rest of their horizon);
    # a report that arrives after its game's outcome is dropped.
    in_flight: dict[str, int] = {}
    ended: set[str] = set()

    def played_rounds(game_id: str, n: int) -> None:
        if game_id not in ended:
            in_flight[game_id] = in_flight.get(game_id, 0) + n
            bar.update(0, n)

    def rest_of(spec: GameSpec) -> int:
        ended.add(spec.game_id)
        return spec.horizon - in_flight.pop(spec.game_id, 0)

    on_rounds = None if isinstance(bar, _NoBar) else played_rounds
    outcomes: Iterator[Outcome] = iter(())
    try:
        while todo:
            if store is None:
                mine, theirs = todo, []
            else:
                claimed = {s.game_id for s in todo if store.claim(s.game_id)}
                mine = [s for s in todo if s.game_id in claimed]
                theirs = [s for s in todo if s.game_id not in claimed]
                if theirs and not quiet:
                    owner = store.claimant(theirs[0].game_id) or {}
                    print(f"{len(theirs)} game(s) are being played by another sweep (pid "
                          f"{owner.get('pid', '?')} on {owner.get('host', '?')}); waiting for "
                          f"their records in {store.root}", file=sys.stderr)
            held = list(mine)  # the claims to release however the games end
            try:
                if vectorize:
                    groups, mine = split_batchable(mine, resolver)
                    for group in groups:
                        for record in play_batch(group, resolver):
                            if store is not None:
                                store.write(record)
                                store.release(record["game_id"])
                            done[record["game_id"]] = record
                            played += 1
                            bar.update(1, int(record["horizon"]))
                outcomes = execute(mine, backend=backend, workers=workers, scheduler=scheduler,
                                   client=client, on_rounds=on_rounds)
                for spec, record, error in outcomes:
                    if record is not None:
                        if store is not None:
                            store.write(record)
                        done[spec.game_id] = record
                        played += 1
                    else:
                        failures.append((spec, error or "unknown error"))
                    if store is not None:
                        store.release(spec.game_id)
                    bar.update(1, rest_of(spec))
            finally:
                if store is not None:
                    for spec in held:
                        store.release(spec.game_id)
            todo = [] if store is None else _wait_for_others(store, theirs, done, bar)
            reused += len([s for s in theirs if s.game_id in done])
    finally:
        # Stop the workers now (on Ctrl-C or an error), not when the generator is
        # garbage-collected: the propagating exception keeps it alive until handled.
        close = getattr(outcomes, "close", None)
        if close is not None:
            close()
        bar.close()
    records = [done[s.game_id] for s in specs if s.game_id in done]
    return RunReport(records=_dedupe(records), played=played, reused=reused, failures=failures,
                     results=None if store is None else store.root,
                     seconds=time.perf_counter() - start)


#: What a worker process prints, once, when it is asked to play games while it imports
#: the main script (see :func:`started_by_worker_import`).
WORKER_IMPORT_WARNING = (
    "dp-online: warning: games were started while a worker process imported the main "
    "script; skipped there (the script needs `if __name__ == \"__main__\":` around its "
    "top level, or every worker re-runs it)")
_warned_worker_import = False


def started_by_worker_import() -> bool:
    """Whether this process is a worker importing the main script (``multiprocessing``'s
    ``spawn`` and ``forkserver`` workers run a script's top level again, as
    ``__mp_main__``, before they take work); then prints :data:`WORKER_IMPORT_WARNING`
    to stderr, once per process.

    :func:`run`, :func:`run_sweep` and :func:`run_games` then play nothing and return
    no record: the games are the parent's to play (a worker that played them too would
    repeat the parent's work, or wait forever for the games the parent has claimed).
    """
    global _warned_worker_import
    if not getattr(multiprocessing.current_process(), "_inheriting", False):
        return False
    if not _warned_worker_import:
        _warned_worker_import = True
        print(WORKER_IMPORT_WARNING, file=sys.stderr)
    return True


def _wait_for_others(store: ResultsStore, theirs: list[GameSpec],
                     done: dict[str, dict[str, Any]], bar: Any) -> list[GameSpec]:
    """Wait until each game claimed by another process has a record or is free again.

    Records that appear are added to ``done``; returns the games whose claim went away
    without a record (their player failed or was stopped): the caller plays them.
    """
    waiting = list(theirs)
    free: list[GameSpec] = []
    while waiting:
        still = []
        for spec in waiting:
            record = store.usable_for(spec, store.read(spec.game_id))
            if record is not None:
                done[spec.game_id] = record
                bar.update(1, spec.horizon)
            elif store.claimant(spec.game_id) is None:
                free.append(spec)
            else:
                still.append(spec)
        waiting = still
        if waiting:
            time.sleep(store_module.CLAIM_POLL_SECONDS)
    return free


def _unique(specs: list[GameSpec]) -> list[GameSpec]:
    first: dict[str, GameSpec] = {}
    for spec in specs:
        first.setdefault(spec.game_id, spec)
    return list(first.values())


def _dedupe(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for r in records:
        if r["game_id"] not in seen:
            seen.add(r["game_id"])
            out.append(r)
    return out


class _NoBar:
    def update(self, n: int = 1, rounds: int = 0) -> None:
        pass

    def close(self) -> None:
        pass


#: Seconds between two progress lines when stderr is not a terminal.
PROGRESS_SECONDS = 10.0


class LineProgress:
    """Progress as plain lines on a stream that is not a terminal (a log file, ``nohup``,
    CI): ``sweep: 40/198 games, 20% of the rounds, 1m05s elapsed, about 4m17s left``, at
    most one line every ``interval`` seconds (when a game finishes or reports rounds
    played), and a last line at :meth:`close` if any was written. A run shorter than
    ``interval`` writes nothing. The share and the time left count rounds, not games: a
    game of ``T = 10^5`` is a hundred games of ``T = 10^3`` of work, and the rounds of
    the games in flight count as they are played (:func:`run_games` passes them on from
    the backends, :func:`~.backends.execute`), so one long game moves the line too.

    Args:
        total: Games to play.
        desc: What the line starts with.
        stream: Where the lines go.
        interval: Seconds between lines.
        clock: Seconds now (``time.monotonic``).
        rounds: Rounds of all the games (``None``: every game counts the same).
    """

    def __init__(self, total: int, *, desc: str, stream: Any, interval: float = PROGRESS_SECONDS,
                 clock: Any = time.monotonic, rounds: int | None = None) -> None:
        self.total, self.desc, self.stream = total, desc, stream
        self.interval, self.clock = interval, clock
        self.rounds = rounds
        self.n = self.shown = self.done = 0
        self.start = self.last = clock()
        self.lines = 0

    def update(self, n: int = 1, rounds: int = 0) -> None:
        """Count ``n`` finished games and ``rounds`` rounds played (``n = 0``: rounds of
        games in flight); write a line if ``interval`` has passed."""
        self.n += n
        self.done += rounds
        if self.clock() - self.last >= self.interval:
            self._line()

    def close(self) -> None:
        """Write the last line (when any line was written and games finished since)."""
        if self.lines and self.n != self.shown:
            self._line()

    def _line(self) -> None:
        now = self.last = self.clock()
        self.shown = self.n
        elapsed = now - self.start
        if self.rounds:
            done, total, what = self.done, self.rounds, " of the rounds"
        else:
            done, total, what = self.n, self.total, ""
        left = (f", about {duration(elapsed * (total - done) / done)} left"
                if 0 < done < total else "")
        share = 100 * done / total if total else 100.0
        print(f"{self.desc}: {self.n}/{self.total} games ({share:.0f}%{what}), "
              f"{duration(elapsed)} elapsed{left}", file=self.stream, flush=True)
        self.lines += 1


class _RoundBar:
    """A tqdm bar counting rounds (its time left weighs each game by its horizon), fed
    by the :class:`LineProgress` calls ``update(games, rounds)``."""

    def __init__(self, bar: Any) -> None:
        self.bar = bar

    def update(self, n: int = 1, rounds: int = 0) -> None:
        self.bar.update(rounds)

    def close(self) -> None:
        self.bar.close()


#: Seconds in a day and in a (Julian) year, for :func:`duration`.
_DAY, _YEAR = 86_400, 31_557_600


def duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``2h07m``, ``3d04h`` (from two days) or ``317 years`` (from
    two years: what a legal but enormous horizon says it will take)."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 2 * _DAY:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s < 2 * _YEAR:
        return f"{s // _DAY}d{s % _DAY // 3600:02d}h"
    return f"{s / _YEAR:,.0f} years"


def progress_bar(total: int, *, quiet: bool, desc: str, rounds: int | None = None) -> Any:
    """A tqdm bar on stderr that appears after 2 s on a terminal; elsewhere (output
    redirected) a :class:`LineProgress` line every :data:`PROGRESS_SECONDS`; nothing
    when quiet or there is nothing to play. Its ``update(games, rounds)`` counts
    finished games and rounds played (``games = 0`` for the rounds of games in flight);
    given ``rounds`` (of all ``total`` games), the share done and the time left count
    rounds."""
    if quiet or total == 0:
        return _NoBar()
    if not _isatty(sys.stderr):
        return LineProgress(total, desc=desc, stream=sys.stderr, rounds=rounds,
                            interval=PROGRESS_SECONDS)
    try:  # tqdm is an optional extra: imported when a bar is wanted
        from tqdm import tqdm
    except ImportError:
        return LineProgress(total, desc=desc, stream=sys.stderr, rounds=rounds,
                            interval=PROGRESS_SECONDS)
    if rounds:
        return _RoundBar(tqdm(total=rounds, desc=desc, unit="round", unit_scale=True,
                              delay=2.0, dynamic_ncols=True, file=sys.stderr, smoothing=0.1))
    return tqdm(total=total, desc=desc, unit="game", delay=2.0, dynamic_ncols=True,
                file=sys.stderr, smoothing=0.1)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


__all__ = ["ExperimentError", "LineProgress", "RunReport", "progress_bar", "run", "run_games", "run_sweep",
           "started_by_worker_import"]
