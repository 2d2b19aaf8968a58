"""Where games are played: in this process, in local worker processes, or on Dask.

Every backend plays the same function (:func:`~dp_online_envs.experiments.game.play_game`)
on the same :class:`~dp_online_envs.experiments.game.GameSpec`, whose seeds come from
its settings, so the records are identical whichever backend runs them. Only the
parent process writes results (see :mod:`.store`); workers return records.

* ``"serial"``: one game after another in this process.
* ``"local"`` (default): a ``concurrent.futures.ProcessPoolExecutor``; nothing to start.
  Workers come from a fork server that has imported the package once (``spawn`` where
  there is no fork server; plain ``fork`` in an interactive session, whose ``__main__``
  -- and the agent classes defined in it -- workers could not re-import). They ignore
  Ctrl-C (the parent cancels what is pending) and exit on their own if the parent dies.
* ``"dask"``: a ``dask.distributed.Client`` on ``scheduler`` (``tcp://HOST:PORT``), or on
  a ``LocalCluster`` started here when no scheduler is given. The workers must have
  this package (and any custom agent's module) importable. Needs the ``dask`` extra.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from dp_online_envs.experiments.errors import ExperimentError
from dp_online_envs.experiments.game import GameSpec, play_game

BACKENDS = ("local", "dask", "serial")
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


def play_safely(spec: GameSpec) -> tuple[str, Any]:
    """``("ok", record)`` or ``("error", traceback text)``: one failing game never stops a sweep."""
    try:
        return "ok", play_game(spec)
    except Exception:  # noqa: BLE001 - reported to the user with its traceback
        return "error", traceback.format_exc()


def execute(
    specs: Sequence[GameSpec],
    *,
    backend: str = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    client: Any = None,
) -> Iterator[Outcome]:
    """Play games on a backend, yielding ``(spec, record, error)`` as each finishes.

    Args:
        specs: The games.
        backend: ``"local"``, ``"dask"`` or ``"serial"``.
        workers: Local processes (default: the CPUs available), or the number of
            workers of the ``LocalCluster`` the dask backend starts without a scheduler.
        scheduler: Dask scheduler address (``tcp://HOST:PORT``); dask backend only.
        client: An existing ``dask.distributed.Client`` (instead of ``scheduler``).

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
        return _serial(specs)
    return _local(specs, n)


# ------------------------------------------------------------------- serial
def _serial(specs: list[GameSpec]) -> Iterator[Outcome]:
    for spec in specs:
        status, payload = play_safely(spec)
        yield (spec, payload, None) if status == "ok" else (spec, None, payload)


# -------------------------------------------------------------------- local
def _mp_context() -> mp.context.BaseContext:
    methods = mp.get_all_start_methods()
    if "fork" in methods and not _main_is_file():
        # An interactive session (REPL, stdin, -c, notebook): workers cannot re-import
        # __main__, where the user's own agent classes live, so they inherit it by fork.
        return mp.get_context("fork")
    if "forkserver" in methods:
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["dp_online_envs", "agents",
                                    "dp_online_envs.experiments.backends"])
        return ctx
    return mp.get_context("spawn")


def _main_is_file() -> bool:
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return bool(path) and os.path.isfile(path)


def _worker_init(parent_pid: int) -> None:
    """Ignore Ctrl-C (the parent handles it) and exit when the parent is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while True:
            time.sleep(0.5)
            try:
                os.kill(parent_pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                os._exit(1)  # the pid was reused by another user's process
            if os.getppid() == 1:  # re-parented to init: our fork server died with it
                os._exit(1)

    if os.name == "posix":
        threading.Thread(target=watch, name="dp-online-parent-watch", daemon=True).start()


def _local(specs: list[GameSpec], workers: int) -> Iterator[Outcome]:
    ex = ProcessPoolExecutor(max_workers=workers, mp_context=_mp_context(),
                             initializer=_worker_init, initargs=(os.getpid(),))
    clean = False
    try:
        futures = {ex.submit(play_safely, spec): spec for spec in specs}
        for fut in as_completed(futures):
            spec = futures[fut]
            try:
                status, payload = fut.result()
            except Exception as exc:  # noqa: BLE001 - a worker died (BrokenProcessPool, ...)
                status, payload = "error", f"{type(exc).__name__}: {exc}"
            yield (spec, payload, None) if status == "ok" else (spec, None, payload)
        clean = True
    finally:
        # On Ctrl-C or when the consumer stops early, do not wait for the queue.
        ex.shutdown(wait=clean, cancel_futures=not clean)


# --------------------------------------------------------------------- dask
def _dask(specs: list[GameSpec], workers: int | None, scheduler: str | None,
          client: Any) -> Iterator[Outcome]:
    try:
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
            cluster = LocalCluster(n_workers=workers or default_workers(), threads_per_worker=1,
                                   processes=True, dashboard_address=":0")
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
        if not finished and futures:
            with contextlib.suppress(Exception):  # best effort while shutting down
                client.cancel(futures)
        if own_client is not None:
            own_client.close()
        if cluster is not None:
            cluster.close()
