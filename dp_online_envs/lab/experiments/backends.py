"""Where games are played: in this process, in local worker processes, or on Dask.

Every backend plays the same function (:func:`~dp_online_envs.lab.experiments.game.play_game`)
on the same :class:`~dp_online_envs.lab.experiments.game.GameSpec`, whose seeds come from
its settings, so the records are identical whichever backend runs them. Only the
parent process writes results (see :mod:`.store`); workers return records.

* ``"serial"``: one game after another in this process.
* ``"local"`` (default): a ``concurrent.futures.ProcessPoolExecutor``; nothing to start.
  Workers come from a fork server that has imported the package once (``spawn`` where
  there is no fork server; plain ``fork`` in an interactive session, whose ``__main__``
  -- and the agent classes defined in it -- workers could not re-import, and for a
  script that starts games outside ``if __name__ == "__main__":``, which workers would
  re-run as they start: see :func:`unguarded_main_line`). They ignore
  Ctrl-C: on ``KeyboardInterrupt`` (or any early stop) the parent cancels what is
  pending, terminates the workers (the games in flight are lost, finished ones were
  already yielded) and joins them with a timeout, without relying on the executor's
  exit-time join. A worker whose parent dies, even by SIGKILL, exits at once: it
  blocks on a pipe whose only write end the parent holds (see :func:`_worker_init`).
* ``"dask"``: a ``dask.distributed.Client`` on ``scheduler`` (``tcp://HOST:PORT``), or on
  a ``LocalCluster`` started here when no scheduler is given. The workers must have
  this package (and any custom agent's module) importable. Needs the ``dask`` extra.

Games in flight report the rounds they have played (``on_rounds(game_id, rounds)`` of
:func:`execute`, at most every :data:`GAME_PROGRESS_SECONDS`, through a
:class:`RoundTicker`), so the progress of one long game moves before it ends: the serial
backend calls it from the game loop, local workers send it through a queue that the
parent reads while it waits for results (at least every :data:`POLL_SECONDS`). The dask
backend reports finished games only. The reports are not part of the game: the records
are the same with or without them.
"""

from __future__ import annotations

import ast
import contextlib
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, as_completed, wait
from multiprocessing.connection import Connection
from typing import Any

from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.game import GameSpec, play_game
from dp_online_envs.loop import RoundHook

BACKENDS = ("local", "dask", "serial")
#: Seconds between two reports of the rounds a game in flight has played.
GAME_PROGRESS_SECONDS = 1.0
#: A game looks at the clock every this many rounds (a report waits for the next look).
PROGRESS_CHECK_ROUNDS = 256
#: Longest wait of the local backend's parent between two reads of its workers' reports.
POLL_SECONDS = 0.5
#: How long the dask backend waits for a scheduler before giving up.
CONNECT_TIMEOUT = "15s"

#: ``(spec, record, error)``: exactly one of ``record`` and ``error`` is ``None``.
Outcome = tuple[GameSpec, "dict[str, Any] | None", "str | None"]


def default_workers() -> int:
    """The number of CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def play_safely(spec: GameSpec, progress: RoundHook | None = None) -> tuple[str, Any]:
    """``("ok", record)`` or ``("error", traceback text)``: one failing game never stops
    a sweep. ``progress``: a round hook of the game in flight (:class:`RoundTicker`)."""
    try:
        return "ok", play_game(spec, progress=progress)
    except Exception:  # noqa: BLE001 - reported to the user with its traceback
        return "error", traceback.format_exc()


class RoundTicker:
    """A round hook (:data:`~dp_online_envs.loop.RoundHook`) that reports the rounds a
    game has played while it plays: ``report(n)``, ``n`` the rounds since the last report,
    at most once every ``seconds`` (the clock is read every ``every`` rounds). The rounds
    after the last report are not reported: the game's end counts them.

    Args:
        report: Called with the rounds played since the last report.
        seconds: Least time between two reports (0: at every look at the clock).
        every: Rounds between two looks at the clock.
        clock: Seconds now (``time.monotonic``).
    """

    def __init__(self, report: Callable[[int], None], *, seconds: float,
                 every: int = PROGRESS_CHECK_ROUNDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.report, self.seconds, self.every, self.clock = report, seconds, every, clock
        self.reported = 0
        self.last = clock()

    def __call__(self, t: int, action: Any, feedback: Any) -> None:
        if t % self.every or self.clock() - self.last < self.seconds:
            return
        self.report(t - self.reported)
        self.reported, self.last = t, self.clock()


def _ticker(game_id: str, on_rounds: Callable[[str, int], None], seconds: float
            ) -> RoundTicker:
    return RoundTicker(lambda n: on_rounds(game_id, n), seconds=seconds)


def execute(
    specs: Sequence[GameSpec],
    *,
    backend: str = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    client: Any = None,
    on_rounds: Callable[[str, int], None] | None = None,
) -> Iterator[Outcome]:
    """Play games on a backend, yielding ``(spec, record, error)`` as each finishes.

    Args:
        specs: The games.
        backend: ``"local"``, ``"dask"`` or ``"serial"``.
        workers: Local processes (default: the CPUs available), or the number of
            workers of the ``LocalCluster`` the dask backend starts without a scheduler.
        scheduler: Dask scheduler address (``tcp://HOST:PORT``); dask backend only.
        client: An existing ``dask.distributed.Client`` (instead of ``scheduler``).
        on_rounds: Called in this process (in the thread iterating the outcomes) with
            ``(game_id, n)`` when a game in flight has played ``n`` more rounds, about
            every :data:`GAME_PROGRESS_SECONDS` (serial and local backends; a game's
            reports come before its outcome). ``None``: no reports.

    Raises:
        ExperimentError: Unknown backend, bad worker count, a scheduler without the dask
            backend, dask not installed, or an unreachable scheduler.
    """
    if backend not in BACKENDS:
        raise ExperimentError(f"unknown backend {backend!r}; valid: {list(BACKENDS)}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ExperimentError(f"workers={workers!r} rejected: expected an integer >= 1")
    if (scheduler is not None or client is not None) and backend != "dask":
        raise ExperimentError(f"a Dask scheduler was given with backend={backend!r}; "
                              "use backend='dask'")
    specs = list(specs)
    if not specs:
        return iter(())
    if backend == "dask":
        return _dask(specs, workers, scheduler, client)
    n = min(workers or default_workers(), len(specs))
    if backend == "serial" or n == 1:
        return _serial(specs, on_rounds)
    return _local(specs, n, on_rounds)


def _agent_packages(specs: Sequence[GameSpec]) -> list[str]:
    """The top-level packages of the games' agent classes (a script's ``__main__`` left
    out): what a fork server imports once for all its workers."""
    return sorted({s.agent_cls.__module__.partition(".")[0] for s in specs
                   if s.agent_cls is not None} - {"__main__"})


# ------------------------------------------------------------------- serial
def _serial(specs: list[GameSpec], on_rounds: Callable[[str, int], None] | None = None
            ) -> Iterator[Outcome]:
    for spec in specs:
        ticker = (None if on_rounds is None
                  else _ticker(spec.game_id, on_rounds, GAME_PROGRESS_SECONDS))
        status, payload = play_safely(spec, ticker)
        yield (spec, payload, None) if status == "ok" else (spec, None, payload)


# -------------------------------------------------------------------- local
def _mp_context(preload: Sequence[str] = ()) -> mp.context.BaseContext:
    """The start method of the local workers; a fork server preloads this package and
    the modules in ``preload`` (the first time it starts; importing is only a warm-up:
    the games import what they need)."""
    methods = mp.get_all_start_methods()
    if "fork" in methods and not _main_is_file():
        # An interactive session (REPL, stdin, -c, notebook): workers cannot re-import
        # __main__, where the user's own agent classes live, so they inherit it by fork.
        return mp.get_context("fork")
    line = unguarded_main_line()
    if line is not None:
        global _warned_unguarded
        if not _warned_unguarded:
            _warned_unguarded = True
            print(UNGUARDED_WARNING.format(where=line), file=sys.stderr)
        if "fork" in methods:  # forked workers inherit __main__: they do not re-run it
            return mp.get_context("fork")
    if "forkserver" in methods:
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["dp_online_envs", *preload,
                                    "dp_online_envs.lab.experiments.backends"])
        return ctx
    return mp.get_context("spawn")


#: The one line printed when a script starts games from its unguarded top level.
UNGUARDED_WARNING = ("dp-online: warning: {where} starts games outside `if __name__ == "
                     "\"__main__\":`; its worker processes are forked so they do not run "
                     "the script again (put the script's top level under that guard)")
_warned_unguarded = False


def unguarded_main_line() -> str | None:
    """``"FILE:LINE"`` when the code running now was called from the top level of the
    main script outside an ``if __name__ == "__main__":`` block, else ``None``.

    A worker started by ``spawn`` or a fork server imports the main script again
    before it takes work, so such a script would start its games again in every worker
    (see :func:`~.runner.started_by_worker_import`). Read from the call stack and the
    script's syntax tree; ``None`` when the script cannot be read.
    """
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    frame = sys._getframe(1)
    while frame is not None and not (frame.f_code.co_name == "<module>"
                                     and frame.f_globals.get("__name__") == "__main__"):
        frame = frame.f_back
    if frame is None or not path:
        return None
    line = frame.f_lineno
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    for node in tree.body:
        if (isinstance(node, ast.If) and _is_main_test(node.test)
                and node.lineno <= line <= (node.end_lineno or node.lineno)):
            return None
    return f"{path}:{line}"


def _is_main_test(test: ast.expr) -> bool:
    """Whether ``test`` is ``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return (any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides)
            and any(isinstance(x, ast.Constant) and x.value == "__main__" for x in sides))


def _main_is_file() -> bool:
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return bool(path) and os.path.isfile(path)


#: How long the parent waits for terminated workers (and then for the executor's
#: manager thread) before killing them, in seconds.
STOP_TIMEOUT = 2.0


#: In a local worker: ``(queue, seconds)`` of the parent's :class:`ProgressChannel`
#: (set by :func:`_worker_init`), or ``None``.
_worker_progress: tuple[Any, float] | None = None


class ProgressChannel:
    """Reports of the games in flight in local workers, read by the parent.

    :func:`local_pool` opens it (a ``SimpleQueue`` of the pool's start method, whose
    writes are locked and synchronous: a report is in the pipe before the worker returns
    its game's result) and hands it to each worker with ``seconds``; games played by
    :func:`_play_reporting` put ``(game_id, rounds)`` in it; :meth:`drain` reads what
    is there without waiting.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.queue: Any = None

    def drain(self) -> list[tuple[str, int]]:
        """The reports sent so far and not yet read."""
        out = []
        while self.queue is not None and not self.queue.empty():
            out.append(self.queue.get())
        return out


def _play_reporting(spec: GameSpec) -> tuple[str, Any]:
    """:func:`play_safely` in a local worker, reporting its rounds to the parent's
    :class:`ProgressChannel` (if the pool has one)."""
    channel = _worker_progress
    if channel is None:
        return play_safely(spec)
    queue, seconds = channel
    return play_safely(spec, RoundTicker(lambda n: queue.put((spec.game_id, n)),
                                         seconds=seconds))


def _worker_init(lifeline: Connection, inherited_writer: Connection | None,
                 progress: tuple[Any, float] | None = None) -> None:
    """Set up a local worker: ignore Ctrl-C and exit as soon as the parent process dies.

    Ctrl-C in a terminal reaches the whole process group; the parent alone decides what
    happens (see :func:`_stop_workers`). ``lifeline`` is the read end of a pipe whose
    only write end the parent holds: the kernel closes it when the parent dies, however
    it dies, so a thread blocked on it sees end-of-file at once and ends the worker. A
    worker cannot watch its parent process instead: under ``forkserver`` that parent is
    the fork server, which outlives the sweep while workers hold its liveness pipe, and
    ``os.kill(pid, 0)`` on the sweep succeeds while it is an unreaped zombie.

    Args:
        lifeline: The read end of the parent's lifeline pipe.
        inherited_writer: Under ``fork``, the write end, which the worker inherited and
            must close (or it would keep its own lifeline open); otherwise ``None``.
        progress: ``(queue, seconds)`` of the pool's :class:`ProgressChannel`, or
            ``None``.
    """
    global _worker_progress
    _worker_progress = progress
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if inherited_writer is not None:
        inherited_writer.close()

    def watch() -> None:
        with contextlib.suppress(EOFError, OSError):
            lifeline.recv_bytes()  # nothing is ever sent: returns only at end-of-file
        os._exit(1)

    threading.Thread(target=watch, name="dp-online-parent-watch", daemon=True).start()


@contextlib.contextmanager
def local_pool(workers: int, preload: Sequence[str] = (),
               progress: ProgressChannel | None = None) -> Iterator[ProcessPoolExecutor]:
    """Local worker processes, set up as the games' are: the start method of
    :func:`_mp_context` (a fork server preloading ``preload``), Ctrl-C left to this
    process, and each worker exiting as soon as this process dies (:func:`_worker_init`).
    With ``progress``, the channel is opened for the pool's workers (tasks that report
    through it: :func:`_play_reporting`).

    Leaving the block normally waits for the workers; leaving it by an exception (Ctrl-C
    or an early stop included) cancels what is pending and stops them at once
    (:func:`_stop_workers`).
    """
    ctx = _mp_context(preload)
    lifeline, writer = ctx.Pipe(duplex=False)
    inherited = writer if ctx.get_start_method() == "fork" else None
    reports = None
    if progress is not None:
        progress.queue = ctx.SimpleQueue()
        reports = (progress.queue, progress.seconds)
    ex = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_init,
                             initargs=(lifeline, inherited, reports))
    try:
        yield ex
        ex.shutdown(wait=True)
    except BaseException:
        with _sigint_ignored():
            _stop_workers(ex)
        raise
    finally:
        writer.close()
        lifeline.close()
        if progress is not None:
            progress.queue.close()
            progress.queue = None


def run_tasks(fn: Callable[[Any], Any], items: Sequence[Any], *, workers: int,
              preload: Sequence[str] = ()) -> list[Any]:
    """``[fn(x) for x in items]`` on up to ``workers`` local worker processes
    (:func:`local_pool`), in the order of ``items``; in this process when ``workers`` is
    1 or there is at most one item.

    ``fn`` and the items must pickle (a module-level function, plain data). The results
    do not depend on ``workers`` when ``fn``'s do not depend on the process it runs in.

    Raises:
        Exception: The first (in the order of ``items``) that ``fn`` raised; the other
            workers are stopped first.
    """
    items = list(items)
    if workers <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    with local_pool(min(workers, len(items)), preload) as ex:
        return [f.result() for f in submit_all(ex, fn, items)]


def submit_all(ex: ProcessPoolExecutor, fn: Callable[[Any], Any],
               items: Sequence[Any]) -> list[Future[Any]]:
    """``fn(x)`` submitted for every item of ``items`` to a :func:`local_pool`, with a
    Ctrl-C held until every submission is made (:func:`_sigint_deferred`: ``submit``
    starts the workers, and none may start unrecorded)."""
    with _sigint_deferred():
        return [ex.submit(fn, x) for x in items]


def _local(specs: list[GameSpec], workers: int,
           on_rounds: Callable[[str, int], None] | None = None) -> Iterator[Outcome]:
    channel = None if on_rounds is None else ProgressChannel(GAME_PROGRESS_SECONDS)
    with local_pool(workers, _agent_packages(specs), channel) as ex:
        futures: dict[Future[tuple[str, Any]], GameSpec] = {}
        seen: set[Future[tuple[str, Any]]] = set()
        try:
            futures = dict(zip(submit_all(ex, _play_reporting, specs), specs))
            if channel is None:
                for fut in as_completed(futures):
                    seen.add(fut)
                    yield _outcome(futures[fut], fut)
                return
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, timeout=POLL_SECONDS,
                                         return_when=FIRST_COMPLETED)
                for game_id, n in channel.drain():  # before the outcomes they precede
                    on_rounds(game_id, n)
                for fut in finished:
                    seen.add(fut)
                    yield _outcome(futures[fut], fut)
        except KeyboardInterrupt:
            with _sigint_ignored():
                _stop_workers(ex)
            # Games that finished while the interrupt was handled are still results.
            finished = [f for f in futures if f not in seen and f.done() and not f.cancelled()
                        and f.exception() is None]
            for fut in finished:
                yield _outcome(futures[fut], fut)
            raise


def _outcome(spec: GameSpec, fut: Future[tuple[str, Any]]) -> Outcome:
    try:
        status, payload = fut.result()
    except Exception as exc:  # noqa: BLE001 - a worker died (BrokenProcessPool, ...)
        status, payload = "error", f"{type(exc).__name__}: {exc}"
    return (spec, payload, None) if status == "ok" else (spec, None, payload)


def _stop_workers(ex: ProcessPoolExecutor, timeout: float = STOP_TIMEOUT) -> None:
    """Cancel pending games and end the workers now, joining them with a timeout.

    ``shutdown(wait=False)`` alone lets the running games finish and leaves the join to
    the executor's exit-time hook, which then blocks the interpreter's exit (and, on a
    second Ctrl-C, prints a traceback). Instead the workers are sent SIGTERM (SIGKILL
    for those still alive after ``timeout``) and joined, and the executor's manager
    thread, which notices the dead workers and fails what is left, is given ``timeout``
    to finish, so the exit-time hook has nothing to wait for.
    """
    # Python < 3.14 has no public way to reach the workers; the attribute exists in
    # every supported version and is read before shutdown() clears it.
    processes = list((getattr(ex, "_processes", None) or {}).values())
    manager = getattr(ex, "_executor_manager_thread", None)
    ex.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        with contextlib.suppress(Exception):  # already gone
            p.terminate()
    deadline = time.monotonic() + timeout
    for p in processes:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.exitcode is None:
            with contextlib.suppress(Exception):
                p.kill()
                p.join(timeout)
    if manager is not None:
        manager.join(timeout)


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT inside the block (main thread only), then restore the handler.

    A second Ctrl-C while the workers are being stopped must not abort the clean-up.
    A handler installed outside Python (``signal.signal`` returns ``None`` for it) is
    not restored: SIGINT stays ignored then.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold a Ctrl-C that arrives inside the block and raise it (``KeyboardInterrupt``)
    when the block ends (main thread only; elsewhere the block runs as is).

    ``ProcessPoolExecutor.submit`` starts the worker processes. Interrupted inside
    ``Process.start()`` after the fork server made the child and before it reported the
    child's pid, the executor never records that worker: the clean-up cannot stop it, and
    it prints a ``FileNotFoundError`` traceback when it unpickles the executor's queues
    after this process removed their semaphores. Deferred, the interrupt arrives once every
    started worker is known. A handler that ignores SIGINT stays in force: then nothing
    is raised.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_IGN)
    if caught and previous not in (signal.SIG_IGN, None):
        raise KeyboardInterrupt


# --------------------------------------------------------------------- dask
def _dask(specs: list[GameSpec], workers: int | None, scheduler: str | None,
          client: Any) -> Iterator[Outcome]:
    try:  # dask is an optional extra
        from dask.distributed import Client, LocalCluster
        from dask.distributed import as_completed as dask_completed
    except ImportError:
        raise ExperimentError("the dask backend needs dask.distributed: "
                              "pip install 'dp-online-envs[dask]'") from None
    cluster = own_client = None
    if client is None:
        if scheduler is not None:
            try:
                client = own_client = Client(scheduler, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError) as exc:
                raise ExperimentError(f"cannot reach the Dask scheduler {scheduler!r}: "
                                      f"{exc}") from None
        else:
            # Its worker processes start with SIGINT ignored (the disposition survives
            # exec), so Ctrl-C in a terminal, which reaches the whole process group, does
            # not make each print a KeyboardInterrupt traceback: this process stops them.
            with _sigint_ignored():
                cluster = LocalCluster(n_workers=workers or default_workers(),
                                       threads_per_worker=1, processes=True,
                                       dashboard_address=":0")
            client = own_client = Client(cluster)
    return _dask_iter(specs, client, own_client, cluster, dask_completed)


def _dask_iter(specs, client, own_client, cluster, dask_completed) -> Iterator[Outcome]:
    futures = []
    finished = False
    try:
        tag = uuid.uuid4().hex[:8]
        futures = [client.submit(play_safely, spec, pure=False,
                                 key=f"dp-online-game-{spec.game_id}-{tag}") for spec in specs]
        by_key = {f.key: spec for f, spec in zip(futures, specs)}
        for fut in dask_completed(futures):
            spec = by_key[fut.key]
            try:
                status, payload = fut.result()
            except Exception as exc:  # noqa: BLE001 - a worker was lost, ...
                status, payload = "error", f"{type(exc).__name__}: {exc}"
            fut.release()
            yield (spec, payload, None) if status == "ok" else (spec, None, payload)
        finished = True
    finally:
        with _sigint_ignored():  # a second Ctrl-C must not abort the clean-up
            if not finished and futures:
                with contextlib.suppress(Exception):  # best effort while shutting down
                    client.cancel(futures)
            if own_client is not None:
                own_client.close()
            if cluster is not None:
                cluster.close()
