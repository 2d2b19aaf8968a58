"""Agents in their own process: the feedback boundary as an operating-system boundary.

:class:`IsolatedLearner` is the parent's proxy of an agent that runs in a separate
process, a fresh interpreter (not a fork of the process that holds the env). The
agent's process receives the public :class:`~dp_online_envs.problem.Problem`, its seed
and, each round, the round's permitted feedback; it sends back an action and nothing
else ever crosses. The env, the adversary, the recorder and their generators never
exist in the agent's process, so no Python trick there (``env.unwrapped``, frame
walking, ``gc.get_objects()``, copying a generator) can reach them. With a
:class:`~dp_online_envs.lab.sandbox.Sandbox` in the limits (what ``dp-online grade`` uses),
the process runs in a bubblewrap sandbox: no network, no file but its own, no view of
the parent's processes (see :mod:`dp_online_envs.lab.sandbox`).

Protocol (a socket pair, length-prefixed frames, synchronous). The parent starts the
process with one pickled setup frame (the factory, the problem; the parent's data: the
agent's process unpickles it). **Nothing the agent's process sends is unpickled or
executed**: every frame it may send is fixed-size binary or a small JSON object whose
types and sizes are checked, and anything else fails the game with the reason:

====================  ==========================================================
parent -> agent        agent -> parent
====================  ==========================================================
``A``                  ``a`` + the action: ``size`` float64 (the index of a
``S`` + feedback f64   ``Discrete`` space; the 0/1 vector of a ``MultiBinary`` one)
``R`` + int64 seed     ``k`` (``R`` with ``R`` + ``b"-"``: no seed)
``F`` [+ feedback]     ``s`` + JSON ``{"clipped_feedback": int, "privacy": null or
                       [epsilon, delta, text]}`` (at most :data:`MAX_SUMMARY` bytes)
``C`` (close)          --
--                     ``e`` + traceback text (UTF-8, at most :data:`MAX_TEXT` bytes)
====================  ==========================================================

Limits: every call waits at most ``timeout`` seconds, a game's calls together at most
``game_seconds`` and every call of every process under the limits ends by ``deadline``
(the agent's process is killed and :class:`AgentFailure` raised); ``memory_bytes`` and
``cpu_seconds`` are set with :func:`resource.setrlimit` (``RLIMIT_AS``, ``RLIMIT_CPU``)
in the agent's process after its imports (with a sandbox, ``memory_bytes`` is shared by
its processes: ``RLIMIT_AS`` is ``memory_bytes / processes``, with ``RLIMIT_NPROC``,
``RLIMIT_NOFILE`` and ``RLIMIT_FSIZE``). A crash, a timeout, a refused limit, a malformed frame or a
malformed action all raise :class:`AgentFailure` with the reason; the experiment runner
records the game as failed.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pathlib
import pickle
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

import gymnasium as gym
import numpy as np

from dp_online_envs.lab.sandbox import SANDBOX_ENV, Sandbox
from dp_online_envs.problem import Problem
from dp_online_envs.validation import check_int, check_real

#: ``factory(problem) -> learner`` with ``act``, ``update``, ``reset(seed)``; must be
#: picklable by reference (a class, a ``functools.partial`` of one, or a module-level
#: function, of a module the agent's process can import by name).
LearnerFactory = Callable[[Problem], Any]
#: Largest error frame (traceback text) read from an agent's process, in bytes.
MAX_TEXT = 64 * 1024
#: Largest end-of-game summary read from an agent's process, in bytes.
MAX_SUMMARY = 4096
#: Longest mechanism text a summary may declare, in characters.
MAX_MECHANISM = 1000


class AgentFailure(RuntimeError):
    """An isolated agent crashed, timed out, broke a limit or sent a malformed action.

    Attributes:
        reason: One line: what went wrong.
        detail: The agent's traceback, when it raised.
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason + (f"\n{detail}" if detail else ""))
        self.reason = reason
        self.detail = detail


#: The largest ``memory_bytes`` or ``cpu_seconds`` accepted (``setrlimit`` overflows above).
MAX_LIMIT = 2**62


@dataclasses.dataclass(frozen=True)
class IsolationLimits:
    """Limits on an isolated agent.

    Attributes:
        timeout: Seconds one call (``act`` with its ``update``, ``reset``) may take.
        startup_timeout: Seconds to start the process and build the agent (imports
            included).
        memory_bytes: The memory of the agent's process (``None``: no limit): its
            ``RLIMIT_AS``; with a sandbox, the memory of the sandbox as a whole: each of
            its at most ``sandbox.processes`` processes and threads gets ``RLIMIT_AS`` of
            ``memory_bytes // sandbox.processes``, so their address spaces together stay
            within ``memory_bytes`` (the sandbox's ``/scratch`` and ``/dev/shm`` tmpfs
            come on top; ``memfd`` and System V memory are refused).
        cpu_seconds: Seconds of CPU the agent's process may spend on the agent: building
            it and playing (``None``: no limit). The count starts when the limits are set,
            after the process has imported the package and the modules its target names
            (a learner given as ``module:Class`` is imported before, a graded submission's
            file after); the CPU spent before is bounded by ``startup_timeout`` only. It
            is ``RLIMIT_CPU`` of the process, set to the whole seconds it has used by then
            (rounded up) plus ``cpu_seconds``, so the agent gets at least ``cpu_seconds``
            and less than one second more: SIGXCPU ends the game past it, SIGKILL one
            second later.
        game_seconds: Wall-clock seconds a game's calls may take together, from the
            learner built to its summary (``None``: no budget beyond ``timeout`` per
            call); past it the game fails with the reason.
        deadline: A :func:`time.monotonic` instant after which no process under these
            limits is started and no call is waited for (``None``: none); the grader
            sets it from a submission's wall-clock budget. ``time.monotonic`` is one
            clock for every process of a machine.
        sandbox: Run the agent's process in this bubblewrap sandbox (``None``: a plain
            process with the parent's environment, ``sys.path`` and working directory).
        log: Append the process's stdout and stderr to this file, at most ``log_bytes``
            of it (``None``: a sandboxed process's output is dropped, a plain process
            writes to the parent's stdout and stderr).
        log_bytes: The most the log file grows to, over every process writing to it
            (what is over is dropped, and one line says so).
    """

    timeout: float = 10.0
    startup_timeout: float = 120.0
    memory_bytes: int | None = None
    cpu_seconds: int | None = None
    game_seconds: float | None = None
    deadline: float | None = None
    sandbox: Sandbox | None = None
    log: str | None = None
    log_bytes: int = 64 * 2**10

    def __post_init__(self) -> None:
        for name in ("timeout", "startup_timeout"):
            check_real(name, getattr(self, name), 0.0, low_inclusive=False)
        for name in ("game_seconds", "deadline"):
            if getattr(self, name) is not None:
                check_real(name, getattr(self, name), 0.0, low_inclusive=False)
        for name in ("memory_bytes", "cpu_seconds"):
            if getattr(self, name) is not None:  # below 2^62: setrlimit takes a C integer
                check_int(name, getattr(self, name), 1, MAX_LIMIT)
        if self.sandbox is not None and not isinstance(self.sandbox, Sandbox):
            raise TypeError(f"sandbox={self.sandbox!r} rejected: expected a Sandbox or None")
        if self.log is not None and not isinstance(self.log, str):
            raise TypeError(f"log={self.log!r} rejected: expected a file path (str) or None")
        check_int("log_bytes", self.log_bytes, 0, MAX_LIMIT)


_ACT, _STEP, _ACTION, _ERROR = b"A", b"S", b"a", b"e"
_RESET, _FINISH, _CLOSE, _OK, _SUMMARY = b"R", b"F", b"C", b"k", b"s"
_NO_SEED = b"-"
#: How long a side polls for the other's frame before it blocks. A blocked process's
#: idle CPU takes tens of microseconds to wake on a virtual machine; polling briefly
#: keeps a round trip at a few microseconds while the other side answers quickly, and
#: costs at most this much CPU per frame when it does not.
SPIN_SECONDS = 2e-4
#: Frames between two looks at the machine's load: a side polls only while the load
#: average leaves a CPU free (``load < CPUs - 0.5``). On a busy machine polling takes
#: the CPU the other side needs: measured with two cores and a load of ten, a round
#: took 1-2 ms with polling and 0.3-0.4 ms without (and less CPU).
SPIN_CHECK = 256


class _SpinState:
    """Whether polling pays in this process now (shared by its threads; a lost update
    between threads only shifts the next look at the load)."""

    frames = 0
    allowed = True


_SPIN = _SpinState()


def _spin_allowed() -> bool:
    """Whether to poll before blocking: the load average is looked up every
    :data:`SPIN_CHECK` frames."""
    if _SPIN.frames % SPIN_CHECK == 0:
        try:
            cpus = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = os.cpu_count() or 1
        try:
            _SPIN.allowed = os.getloadavg()[0] < cpus - 0.5
        except OSError:
            _SPIN.allowed = cpus > 1
    _SPIN.frames += 1
    return _SPIN.allowed


#: What the agent's process runs: import this module and serve the socket on fd ``{fd}``.
_BOOT = ("import sys; sys.path[:{keep}] = {path!r}; "
         "from dp_online_envs.lab.isolation import _child_main; "
         "_child_main({fd}, {uid}, {lifeline})")


class _Poller:
    """Whether a frame is waiting on one descriptor, with a ``select.poll`` object built
    once: ``Connection.poll`` builds a selector per call, about 6 microseconds of CPU,
    twice a frame on each side.

    Args:
        fd: The descriptor (the channel's socket).
    """

    def __init__(self, fd: int) -> None:
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)

    def poll(self, timeout: float | None) -> bool:
        """Whether the descriptor is readable (a frame, or the other end closed) within
        ``timeout`` seconds (``None``: forever), rounded up to whole milliseconds."""
        ms = None if timeout is None else math.ceil(max(timeout, 0.0) * 1000)
        return bool(self._poll.poll(ms))


def _spin(conn: Any) -> bool:
    """Whether a frame is waiting on ``conn`` (anything with ``poll(timeout)``: a
    :class:`_Poller`), polled for at most :data:`SPIN_SECONDS` while the machine has a
    CPU free (:func:`_spin_allowed`; on a busy machine: ``False`` at once, no call)."""
    if _spin_allowed():
        end = time.perf_counter() + SPIN_SECONDS
        while not conn.poll(0):
            if time.perf_counter() >= end:
                return False
            os.sched_yield()  # lets the other side run first when they share a CPU
        return True
    return False


def _wait(conn: Any, timeout: float | None) -> bool:
    """Whether a frame arrived on ``conn`` within ``timeout`` seconds (``None``: forever):
    :func:`_spin` first, then one blocking poll."""
    return _spin(conn) or conn.poll(timeout)


def _action_codec(space: gym.Space) -> tuple[int, str]:
    """``(size, kind)`` of an action frame for ``space``."""
    if isinstance(space, gym.spaces.Discrete):
        return 1, "discrete"
    if isinstance(space, gym.spaces.MultiBinary):
        return int(np.prod(space.shape)), "binary"
    if isinstance(space, gym.spaces.Box):
        return int(np.prod(space.shape)), "box"
    raise TypeError(f"isolated play supports Discrete, MultiBinary and Box actions, "
                    f"got {space}")


#: One float64 in this machine's byte order (an action frame of a ``Discrete`` space).
_FLOAT = struct.Struct("=d")
#: A frame's length prefix (big-endian, as :class:`multiprocessing.connection.Connection`
#: frames it: the agent's process sends its rare frames through one).
_HEAD = struct.Struct("!i")
#: The action frame of a ``Discrete`` space as it crosses: its prefix and the float64.
_ACTION_HEAD = _HEAD.pack(1 + _FLOAT.size) + b"a"
_ACTION_WIRE = struct.Struct(f"={len(_ACTION_HEAD)}sd")
#: ``act`` without feedback to deliver, as it crosses.
_ACT_WIRE = _HEAD.pack(1) + b"A"
#: A ``struct timeval`` (``SO_RCVTIMEO``).
_TIMEVAL = struct.Struct("@ll")
#: The integers an action frame carries exactly (float64 holds every integer up to 2^53).
_EXACT = 2**53


def _encode_action(action: Any, size: int, kind: str) -> bytes:
    """The action frame, or ``ValueError`` naming what is wrong with the action."""
    if kind == "discrete" and type(action) is int and -_EXACT <= action <= _EXACT:
        return _ACTION + _FLOAT.pack(action)  # the common case, without numpy
    arr = np.asarray(action)
    if arr.size != size:
        raise ValueError(f"action of shape {arr.shape}, expected {size} value(s)")
    if kind in ("discrete", "binary") and arr.dtype.kind not in "iub":
        raise ValueError(f"action {action!r} of dtype {arr.dtype}: expected integers")
    if arr.dtype.kind not in "iubf":
        raise ValueError(f"action {action!r} of dtype {arr.dtype}: expected numbers")
    return _ACTION + np.ascontiguousarray(arr, dtype=np.float64).reshape(-1).tobytes()


def _set_limits(limits: IsolationLimits) -> None:
    import resource  # Unix only: imported where the limits are set, in the agent's process

    if limits.memory_bytes is not None:
        share = limits.memory_bytes // (1 if limits.sandbox is None
                                        else limits.sandbox.processes)
        resource.setrlimit(resource.RLIMIT_AS, (share, share))
    if limits.cpu_seconds is not None:
        # RLIMIT_CPU counts the process's whole CPU time, its imports included: the budget
        # starts from what the process has used so far (rounded up to whole seconds).
        usage = resource.getrusage(resource.RUSAGE_SELF)
        soft = math.ceil(usage.ru_utime + usage.ru_stime) + limits.cpu_seconds
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
    if limits.sandbox is not None:
        for name, value in limits.sandbox.rlimits().items():
            resource.setrlimit(getattr(resource, name), (value, value))


def _send_error(conn: Connection) -> None:
    """Report the exception being handled to the parent (its traceback, truncated)."""
    text = traceback.format_exc().encode(errors="replace")
    if len(text) > MAX_TEXT - 1:  # keep the last lines: they name the exception
        text = text[-(MAX_TEXT - 1):]
    conn.send_bytes(_ERROR + text)


def _drop_privileges(uid: int) -> None:
    """Become ``uid`` (and its gid, no supplementary groups) for good; refuse to go on if
    root could be regained."""
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    try:
        os.setuid(0)
    except PermissionError:
        return
    raise SystemExit("the sandboxed process could regain root: refusing to run")


#: Seconds between two looks of an isolated process at whether its parent is alive.
LIFELINE_SECONDS = 0.5
#: The exit status of an isolated process whose parent died.
EXIT_ORPHANED = 70


def _lifeline(parent: int) -> None:
    """End this process as soon as ``parent``, the process that started it, is gone
    (it is then adopted by another: ``getppid`` changes), however busy its agent is: a
    daemon thread looks every :data:`LIFELINE_SECONDS` (a busy Python loop yields it
    the interpreter every few milliseconds). A grader or a sweep killed with
    ``kill -9`` leaves no agent process running. A sandboxed process has none: it dies
    with bubblewrap (``--die-with-parent``, its own PID namespace), and a thread would
    take one of the few tasks its sandbox may run."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(LIFELINE_SECONDS)
        os._exit(EXIT_ORPHANED)

    threading.Thread(target=watch, name="lifeline", daemon=True).start()


def _child_main(fd: int, uid: int | None, lifeline: bool = True) -> None:
    """The isolated process: hold on to its parent's life (``lifeline``:
    :func:`_lifeline`), read the parent's setup, set the limits, run its target."""
    if lifeline:
        _lifeline(os.getppid())
    if uid is not None:
        _drop_privileges(uid)
    conn = Connection(fd)
    try:
        target, args, limits = pickle.loads(conn.recv_bytes())  # the parent's frame
        _set_limits(limits)
        target(conn, *args)
    except BaseException:  # noqa: BLE001 - reported to the parent
        _send_error(conn)


class _Frames:
    """The agent's process's reader of the parent's frames: one read a frame on a busy
    machine (a blocking ``read`` of what is there, the frame whole in the common case),
    after :func:`_spin` on an idle one.

    Args:
        fd: The channel's descriptor.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._poller = _Poller(fd)
        self._rest = b""

    def next(self) -> bytes | None:
        """The next frame, or ``None`` once the parent has closed the channel."""
        if not self._rest:  # the common case: one frame, whole in one read
            _spin(self._poller)
            data = os.read(self._fd, 2**16)
            if len(data) > _HEAD.size and _HEAD.unpack_from(data)[0] == len(data) - _HEAD.size:
                return data[_HEAD.size:]
            if not data:
                return None
            self._rest = data
        data, need = self._rest, _HEAD.size
        while True:
            if len(data) >= _HEAD.size:
                need = _HEAD.size + _HEAD.unpack_from(data)[0]
                if need < _HEAD.size:
                    raise OSError("a frame of negative length")
                if len(data) >= need:
                    self._rest = data[need:]
                    return data[_HEAD.size:need]
            if not data:
                _spin(self._poller)
            chunk = os.read(self._fd, max(2**16, need - len(data)))
            if not chunk:
                return None
            data += chunk


def _serve(conn: Connection, factory: LearnerFactory, problem: Problem, size: int,
           kind: str) -> None:
    """The agent's process: build the learner, then answer frames until told to stop."""
    try:
        learner = factory(problem)
    except BaseException:  # noqa: BLE001 - reported to the parent
        _send_error(conn)
        return
    conn.send_bytes(_OK)
    action: Any = None
    fd = conn.fileno()
    frames = _Frames(fd)
    write, pack, frombuffer, f64 = os.write, _ACTION_WIRE.pack, np.frombuffer, np.float64
    discrete = kind == "discrete"

    def send_action(action: Any) -> None:
        if discrete and type(action) is int and -_EXACT <= action <= _EXACT:
            write(fd, pack(_ACTION_HEAD, action))  # the common case: no numpy, one write
        else:
            conn.send_bytes(_encode_action(action, size, kind))

    while True:
        try:
            frame = frames.next()
        except OSError:
            return
        if frame is None:
            return
        op = frame[:1]
        if op == _STEP and discrete:  # the common round, without a call to spare
            try:
                learner.update(action, frombuffer(frame, dtype=f64, offset=1).copy())
                action = learner.act()
                if type(action) is int and -_EXACT <= action <= _EXACT:
                    write(fd, pack(_ACTION_HEAD, action))
                else:
                    conn.send_bytes(_encode_action(action, size, kind))
            except BaseException:  # noqa: BLE001 - reported to the parent
                _send_error(conn)
                return
            continue
        try:
            if op == _STEP:
                learner.update(action, frombuffer(frame, dtype=f64, offset=1).copy())
                action = learner.act()
                send_action(action)
            elif op == _ACT:
                action = learner.act()
                send_action(action)
            elif op == _RESET:
                learner.reset(None if frame[1:] == _NO_SEED
                              else int(np.frombuffer(frame, dtype=np.int64, offset=1)[0]))
                action = None
                conn.send_bytes(_OK)
            elif op == _FINISH:
                if len(frame) > 1:
                    learner.update(action, frombuffer(frame, dtype=f64, offset=1).copy())
                conn.send_bytes(_SUMMARY + json.dumps(_summary(learner)).encode())
            else:  # _CLOSE
                return
        except BaseException:  # noqa: BLE001 - reported to the parent
            _send_error(conn)
            return


def _summary(learner: Any) -> dict[str, Any]:
    """What the parent may know of the learner after the game (for the record)."""
    privacy = getattr(learner, "privacy", None)
    return {
        "clipped_feedback": int(getattr(learner, "clipped_feedback", 0)),
        "privacy": None if privacy is None else
        [float(privacy.epsilon), float(privacy.delta), str(privacy)],
    }


def checked_json(data: bytes, bad: Callable[[str], Exception]) -> Any:
    """``data`` (UTF-8 JSON sent by an untrusted process) decoded, or ``bad(why)`` raised:
    invalid UTF-8 or JSON, and nesting too deep for the decoder (``RecursionError``)."""
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise bad(f"not JSON ({exc})") from None
    except RecursionError:
        raise bad("JSON nested too deep to decode") from None


def parse_summary(data: bytes) -> dict[str, Any]:
    """The end-of-game summary an agent's process sent, checked field by field.

    Args:
        data: The JSON bytes after the ``s`` of a summary frame.

    Returns:
        ``{"clipped_feedback": int >= 0, "privacy": (epsilon, delta, text) or None}``.

    Raises:
        AgentFailure: Anything but that shape (the reason names what is wrong).
    """
    def bad(why: str) -> AgentFailure:
        return AgentFailure(f"malformed summary from the agent's process: {why}")

    if len(data) > MAX_SUMMARY:
        raise bad(f"{len(data)} bytes, expected at most {MAX_SUMMARY}")
    obj = checked_json(data, bad)
    keys = ["clipped_feedback", "privacy"]
    if not isinstance(obj, dict) or sorted(obj) != keys:
        raise bad(f"expected an object with keys {keys}, got "
                  f"{sorted(obj) if isinstance(obj, dict) else type(obj).__name__}")
    clipped, privacy = obj["clipped_feedback"], obj["privacy"]
    if type(clipped) is not int or not 0 <= clipped < 2**63:
        raise bad(f"clipped_feedback={clipped!r}, expected an integer >= 0")
    if privacy is None:
        return {"clipped_feedback": clipped, "privacy": None}
    if not isinstance(privacy, list) or len(privacy) != 3:
        raise bad(f"privacy={privacy!r:.200}, expected null or [epsilon, delta, text]")
    eps, delta, text = privacy
    if type(eps) not in (int, float) or (type(eps) is int and eps > 2**1023) or (
            math.isnan(eps) or eps < 0):  # an int beyond float64 (inf is sent as a float)
        raise bad(f"epsilon={eps!r:.100}, expected a number >= 0")
    if type(delta) not in (int, float) or not 0 <= delta <= 1:
        raise bad(f"delta={delta!r:.100}, expected a number in [0, 1]")
    if not isinstance(text, str) or len(text) > MAX_MECHANISM:
        raise bad(f"mechanism text of type {type(text).__name__}"
                  + (f" and {len(text)} characters" if isinstance(text, str) else "")
                  + f", expected a string of at most {MAX_MECHANISM} characters")
    return {"clipped_feedback": clipped, "privacy": (float(eps), float(delta), text)}


#: One lock per log file: the processes of a submission append to one log.
_LOG_LOCKS: dict[str, threading.Lock] = {}
_LOG_LOCKS_GUARD = threading.Lock()


def drain_to_log(stream: Any, path: str, cap: int) -> None:
    """Copy ``stream`` (a process's output) to the end of the file ``path`` until the
    file holds ``cap`` bytes; read the rest and drop it (the process never blocks on a
    full pipe), with one line saying so. Closes ``stream`` at its end."""
    with _LOG_LOCKS_GUARD:
        lock = _LOG_LOCKS.setdefault(path, threading.Lock())
    with stream, open(path, "ab") as log:
        while chunk := stream.read1(2**16):
            with lock:
                size = os.fstat(log.fileno()).st_size
                room = cap - size
                if room >= 0:
                    log.write(chunk[:room])
                    if len(chunk) > room:  # once: the line takes the file over the cap
                        log.write(f"\n[log cut at {cap} bytes: the rest is dropped]\n"
                                  .encode())
                log.flush()


#: Seconds between two looks at an isolated process's CPU time while it answers (the CPU
#: of a process that dies on its own is counted up to the last look).
CPU_SAMPLE_SECONDS = 0.25
_STOPPED_CPU = [0.0]
_STOPPED_CPU_LOCK = threading.Lock()


def isolated_cpu_seconds() -> float:
    """CPU seconds (user and system) of every isolated process this process has stopped
    so far, each with every process it started (:func:`tree_cpu_seconds`): what
    ``RUSAGE_CHILDREN`` misses of a sandbox, whose processes are reaped in their own PID
    namespace. Compare two readings to charge what ran in between."""
    with _STOPPED_CPU_LOCK:
        return _STOPPED_CPU[0]


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user and system) of the process ``pid``, of every process under it
    and of every process they have reaped: ``utime + stime + cutime + cstime`` summed over
    the tree, read from ``/proc`` (0 for a process that is gone)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total, seen, todo = 0, set(), [pid]
    parents: dict[int, list[int]] | None = None
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2:].split()  # from field 3 (state) on
        total += sum(int(x) for x in fields[11:15])  # fields 14-17
        try:
            kids = [int(c) for task in os.listdir(f"/proc/{p}/task")
                    for c in pathlib.Path(f"/proc/{p}/task/{task}/children").read_text().split()]
        except FileNotFoundError:  # a kernel without CONFIG_PROC_CHILDREN: scan /proc
            parents = _parents() if parents is None else parents
            kids = parents.get(p, [])
        except OSError:
            kids = []
        todo += kids
    return total / ticks


def _parents() -> dict[int, list[int]]:
    """Every process's children, by parent id, from ``/proc/<pid>/stat``."""
    out: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
            out.setdefault(ppid, []).append(int(name))
    return out


class IsolatedProcess:
    """An untrusted process and its frame channel: the plumbing of :class:`IsolatedLearner`
    and of the grader's submission probe.

    The process runs ``target(conn, *args)`` (module-level, picklable by reference; the
    parent's setup frame carries it) after the limits are set. Every frame it sends is
    read with a size bound and handed back as bytes; error frames, a closed channel, a
    death and a timeout become :class:`AgentFailure`.

    Args:
        target: What the process runs, with its end of the channel first.
        args: Its other arguments (pickled, parent to child).
        limits: Time, memory, CPU limits and the sandbox (``None``: no sandbox).

    Raises:
        SandboxUnavailable: The limits ask for a sandbox that cannot be built here.
    """

    def __init__(self, target: Callable[..., None], args: tuple[Any, ...],
                 limits: IsolationLimits) -> None:
        self.limits = limits
        self.game_end = None  # the budget's end: the earlier of game_end and the deadline
        #: CPU seconds of the process and everything under it, at the last look
        #: (:func:`tree_cpu_seconds`, every :data:`CPU_SAMPLE_SECONDS` while it answers
        #: and when it is stopped).
        self.cpu_seconds = 0.0
        self._counted = False
        if limits.deadline is not None and time.monotonic() >= limits.deadline:
            raise AgentFailure("the submission's wall-clock budget ran out before this "
                               "process could start")
        mine, theirs = socket.socketpair()
        fd = theirs.fileno()
        sandbox = limits.sandbox
        if sandbox is None:
            boot = _BOOT.format(keep="", path=list(sys.path), fd=fd, uid=None, lifeline=True)
            cmd, fds, env, cwd = [sys.executable, "-c", boot], [], None, None
        else:
            uid = sandbox.process_uid()
            boot = _BOOT.format(keep=0, path=sandbox.python_path(), fd=fd, uid=uid,
                                lifeline=False)
            cmd, fds = sandbox.command([sys.executable, "-I", "-B", "-c", boot])
            env, cwd = dict(SANDBOX_ENV), "/"
        if limits.log is not None:
            out, err = subprocess.PIPE, subprocess.STDOUT
        else:
            out = err = None if sandbox is None else subprocess.DEVNULL
        try:
            self._process = subprocess.Popen(
                cmd, pass_fds=(fd, *fds), env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                stdout=out, stderr=err)
        finally:
            theirs.close()
            for extra in fds:
                os.close(extra)
        self._drain = None
        if limits.log is not None:
            self._drain = threading.Thread(target=drain_to_log, daemon=True,
                                           args=(self._process.stdout, limits.log,
                                                 limits.log_bytes))
            self._drain.start()
        self._sock = mine
        self._poller = _Poller(mine.fileno())
        self._buf = bytearray(_HEAD.size + MAX_TEXT)  # what is read and not yet handed back
        self._have = 0
        self._wait_ms = -1  # the socket's receive timeout (SO_RCVTIMEO) in ms (-1: unset)
        self._wait_seconds = -1.0  # the seconds it was last set from
        self._sampled_at = time.monotonic()
        self.send(pickle.dumps((target, args, limits)))

    @property
    def pid(self) -> int:
        """The started process's id (with a sandbox: bubblewrap's)."""
        return self._process.pid

    def alive(self) -> bool:
        """Whether the process is still running."""
        return self._process.poll() is None

    def send(self, frame: bytes) -> None:
        """Send one frame (``AgentFailure`` if the process is gone)."""
        try:
            self._sock.sendall(_HEAD.pack(len(frame)) + frame)
        except (OSError, ValueError):
            raise self.died("sending to the agent") from None

    def ask_action(self, frame: bytes, timeout: float) -> float | None:
        """Send ``frame`` (its length prefix included) and return the float64 of the
        ``Discrete`` action frame that answers it; ``None`` when the answer is any other
        frame (it is then the next :meth:`receive`'s). The round's fast path: one write
        and (on a busy machine) one blocking read, whose wait is the socket's receive
        timeout, unchanged from round to round while no budget ends within ``timeout``.

        Raises:
            AgentFailure: As :meth:`receive` (the process gone, a timeout, a budget).
        """
        try:
            self._sock.sendall(frame)
        except (OSError, ValueError):
            raise self.died("sending to the agent") from None
        now = time.monotonic()
        if (self._have or now + timeout > self._budget_end
                or now - self._sampled_at >= CPU_SAMPLE_SECONDS):
            self._fill(_HEAD.size, timeout, "act")  # the general path
        else:
            self._timeout(timeout)
            _spin(self._poller)
            try:
                got = self._sock.recv_into(self._buf)
            except (BlockingIOError, TimeoutError):  # the receive timeout ran out
                self.kill()
                raise AgentFailure(f"agent timed out: no answer to act within "
                                   f"{timeout:g} s") from None
            except OSError:
                raise self.died("act") from None
            if got == _ACTION_WIRE.size and self._buf.startswith(_ACTION_HEAD):
                return _ACTION_WIRE.unpack_from(self._buf)[1]
            if got == 0:
                raise self.died("act")
            self._have = got
        if self._have > _HEAD.size and self._buf.startswith(_ACTION_HEAD):
            self._fill(_ACTION_WIRE.size, timeout, "act")
            if self._have == _ACTION_WIRE.size:
                self._have = 0
                return _ACTION_WIRE.unpack_from(self._buf)[1]
        return None

    @property
    def game_end(self) -> float | None:
        """The :func:`time.monotonic` instant the game's budget ends (``None``: none yet)."""
        return self._game_end

    @game_end.setter
    def game_end(self, end: float | None) -> None:
        self._game_end = end
        ends = [e for e in (end, self.limits.deadline) if e is not None]
        self._budget_end = min(ends, default=math.inf)

    def receive(self, timeout: float, what: str, maxlength: int) -> bytes:
        """The next frame, at most ``maxlength`` bytes, within ``timeout`` seconds (and
        before :attr:`game_end` and the limits' ``deadline``).

        Raises:
            AgentFailure: Timeout or a budget run out (the process is killed), death, an
                oversized frame, or an error frame (its last line is the reason, the rest
                the detail).
        """
        limit = max(maxlength, MAX_TEXT)
        self._fill(_HEAD.size, timeout, what)
        size = _HEAD.unpack_from(self._buf)[0]
        if not 0 <= size <= limit:  # (-1 prefixes an 8-byte length: over any bound)
            if self._exits_within(1.0):  # a frame cut short by its death: say how it died
                raise self.died(what) from None
            self.kill()
            raise AgentFailure(f"malformed reply to {what}: a frame over {limit} bytes")
        end = _HEAD.size + size
        if len(self._buf) < end:
            self._buf.extend(bytes(end - len(self._buf)))
        self._fill(end, timeout, what)
        reply = bytes(self._buf[_HEAD.size:end])
        self._have -= end
        if self._have:  # the start of a frame sent ahead of its turn: kept for the next
            self._buf[:self._have] = self._buf[end:end + self._have]
        if reply[:1] == _ERROR:
            try:
                self._process.wait(5.0)
            except subprocess.TimeoutExpired:
                self.kill()
            text = reply[1:].decode(errors="replace")
            last = text.strip().splitlines()[-1] if text.strip() else "error"
            raise AgentFailure(f"agent raised during {what}: {last[:300]}", text)
        if len(reply) > maxlength:
            self.kill()
            raise AgentFailure(f"malformed reply {reply[:16]!r} to {what}: {len(reply)} "
                               f"bytes, expected at most {maxlength}")
        return reply

    def _fill(self, size: int, timeout: float, what: str) -> None:
        """Read until ``size`` bytes are buffered (more if they came in the same read),
        within ``timeout`` seconds and before :attr:`game_end` and the ``deadline``: the
        wait is the socket's own receive timeout (``SO_RCVTIMEO``, set again only when it
        changes), so a read is one system call; a side polls first for
        :data:`SPIN_SECONDS` while the machine has a CPU free (:func:`_spin`)."""
        if self._have >= size:
            return
        now = time.monotonic()
        if now - self._sampled_at >= CPU_SAMPLE_SECONDS:
            self._sample_cpu()
        end, budget = now + timeout, ""
        game_end, deadline = self._game_end, self.limits.deadline
        if game_end is not None and game_end < end:
            end, budget = game_end, (f"the game's wall-clock budget of "
                                     f"{self.limits.game_seconds:g} s")
        if deadline is not None and deadline < end:
            end, budget = deadline, "the submission's wall-clock budget"
        if self._have == 0:
            _spin(self._poller)
        with memoryview(self._buf) as view:
            while self._have < size:
                wait = timeout if not budget and now + timeout <= end else end - now
                try:
                    if wait <= 0.0:
                        got = self._sock.recv_into(view[self._have:], 0, socket.MSG_DONTWAIT)
                    else:
                        self._timeout(wait)
                        got = self._sock.recv_into(view[self._have:])
                except (BlockingIOError, TimeoutError):  # the receive timeout ran out
                    now = time.monotonic()
                    if now < end:
                        continue
                    self.kill()
                    if not budget:
                        raise AgentFailure(f"agent timed out: no answer to {what} within "
                                           f"{timeout:g} s") from None
                    raise AgentFailure(f"agent over {budget}: it ran out waiting for "
                                       f"{what}") from None
                except OSError:
                    raise self.died(what) from None
                if got == 0:  # the other end closed: the process died or is ending
                    raise self.died(what)
                self._have += got
                if self._have < size:
                    now = time.monotonic()

    def _timeout(self, seconds: float) -> None:
        """Set the socket's receive timeout to ``seconds``, rounded up to milliseconds."""
        if seconds == self._wait_seconds:
            return
        self._wait_seconds = seconds
        ms = max(1, math.ceil(seconds * 1000))
        if ms != self._wait_ms:
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO,
                                  _TIMEVAL.pack(ms // 1000, ms % 1000 * 1000))
            self._wait_ms = ms

    def close(self) -> None:
        """Stop the process (asked with ``C``, killed if it does not exit within 1 s)."""
        if self.alive():
            self._sample_cpu()  # its CPU, with its children's, before they are reaped
            try:
                self._sock.sendall(_HEAD.pack(len(_CLOSE)) + _CLOSE)
            except (OSError, ValueError):
                pass
            try:
                self._process.wait(1.0)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        self._sock.close()

    def kill(self) -> None:
        """Kill the process (with a sandbox, every process in it) and reap it; its log
        is complete once this returns (a plain process's children that keep the output
        open are waited for at most 5 s)."""
        if self.alive():
            self._sample_cpu()
            self._process.kill()
        self._process.wait()
        if not self._counted:
            self._counted = True
            with _STOPPED_CPU_LOCK:
                _STOPPED_CPU[0] += self.cpu_seconds
        if self._drain is not None:
            self._drain.join(5.0)

    def _sample_cpu(self) -> None:
        """Look at the CPU time of the process's tree (:attr:`cpu_seconds`)."""
        self._sampled_at = time.monotonic()
        self.cpu_seconds = max(self.cpu_seconds, tree_cpu_seconds(self._process.pid))

    def _exits_within(self, seconds: float) -> bool:
        """Whether the process has ended, or ends within ``seconds``."""
        try:
            self._process.wait(seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    def died(self, what: str) -> AgentFailure:
        """The failure of a process that stopped answering during ``what``."""
        try:
            code = self._process.wait(5.0)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self._process.returncode
        if self.limits.sandbox is not None and code is not None and code > 128:
            code = -(code - 128)  # bubblewrap exits with 128 + the signal of its command
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            hint = {"SIGXCPU": " (CPU limit exceeded)", "SIGKILL": " (killed)",
                    "SIGXFSZ": " (file size limit exceeded)"}.get(name, "")
            return AgentFailure(f"agent process died during {what}: {name}{hint}")
        return AgentFailure(f"agent process exited during {what} (exit code {code})")


class IsolatedLearner:
    """The parent's proxy of a learner that runs in its own process.

    It has the learner interface (``reset``, ``act``, ``update``), so the one game loop
    (:func:`dp_online_envs.loop.run_rounds`) plays it like an in-process agent. ``update``
    only stores the feedback; the next ``act`` (or :meth:`finish`) ships it with the
    request, one round trip per round. Use as a context manager (or call
    :meth:`close`): the agent's process is stopped on exit, killed if it hangs.

    Args:
        factory: ``factory(problem) -> learner``, picklable; called in the agent's process.
        problem: The public problem (the only thing about the game the agent receives).
        action_space: The env's action space (how actions are framed).
        limits: Time, memory and CPU limits, and the sandbox.

    Raises:
        AgentFailure: The process could not start or build the learner in time.
        SandboxUnavailable: The limits ask for a sandbox that cannot be built here.
    """

    def __init__(self, factory: LearnerFactory, problem: Problem, action_space: gym.Space,
                 limits: IsolationLimits | None = None) -> None:
        self.limits = limits if limits is not None else IsolationLimits()
        self._size, self._kind = _action_codec(action_space)
        self._pending: bytes | None = None  # the feedback's float64 bytes
        self._summary: dict[str, Any] | None = None
        self._process = IsolatedProcess(_serve, (factory, problem, self._size, self._kind),
                                        self.limits)
        try:
            self._expect_ok(self.limits.startup_timeout, "starting the agent")
        except AgentFailure:
            self.close()
            raise
        if self.limits.game_seconds is not None:  # the game's clock starts once it is built
            self._process.game_end = time.monotonic() + self.limits.game_seconds

    # ------------------------------------------------------------- learner API
    def reset(self, seed: int | None = None) -> None:
        """Reset the learner for a new game with ``seed``."""
        self._pending = None
        self._summary = None
        self._process.send(_RESET + (_NO_SEED if seed is None
                                     else np.int64(seed).tobytes()))
        self._expect_ok(self.limits.timeout, "reset")

    def act(self) -> Any:
        """The learner's next action (its pending update is applied first)."""
        pending, self._pending = self._pending, None
        frame = _ACT_WIRE if pending is None else _HEAD.pack(1 + len(pending)) + _STEP + pending
        if self._kind == "discrete":  # one write, one read: the round's fast path
            value = self._process.ask_action(frame, self.limits.timeout)
            if value is None:
                value = _FLOAT.unpack_from(self._reply(), 1)[0]
            try:
                arm = int(value)
            except (OverflowError, ValueError):  # inf, nan
                arm = None
            if arm != value:
                raise AgentFailure(f"malformed action {np.float64(value)!r}: expected an "
                                   "integer")
            return arm
        self._process.send(frame[_HEAD.size:])
        values = np.frombuffer(self._reply(), dtype=np.float64, offset=1)
        if self._kind == "binary":
            if not np.isin(values, (0.0, 1.0)).all():
                raise AgentFailure(f"malformed action {values.tolist()!r:.200}: expected "
                                   "0/1 values")
            return values.astype(np.int8)
        return values.copy()

    def _reply(self) -> bytes:
        """The action frame answering ``act``, checked for its size and kind."""
        expected = 1 + 8 * self._size
        reply = self._process.receive(self.limits.timeout, "act", expected)
        if reply[:1] != _ACTION or len(reply) != expected:
            self._process.kill()
            raise AgentFailure(f"malformed reply {reply[:16]!r} to act: expected {expected} "
                               f"bytes starting with {_ACTION!r}, got {len(reply)}")
        return reply

    def update(self, action: Any, feedback: np.ndarray) -> None:
        """Keep the round's feedback for the agent (sent with the next request)."""
        if type(feedback) is not np.ndarray or feedback.dtype != np.float64:
            feedback = np.asarray(feedback, dtype=np.float64)
        self._pending = feedback.tobytes()

    def finish(self) -> dict[str, Any]:
        """Deliver the last feedback and return the learner's summary.

        Returns:
            ``{"clipped_feedback": int, "privacy": (epsilon, delta, text) or None}``
            (checked by :func:`parse_summary`).

        Raises:
            AgentFailure: The agent failed, or its summary is malformed.
        """
        pending, self._pending = self._pending, None
        self._process.send(_FINISH + (b"" if pending is None else pending))
        reply = self._process.receive(self.limits.timeout, "finish", 1 + MAX_SUMMARY)
        if reply[:1] != _SUMMARY:
            self._process.kill()
            raise AgentFailure(f"malformed reply {reply[:16]!r} to finish: expected a "
                               f"summary frame starting with {_SUMMARY!r}")
        self._summary = parse_summary(reply[1:])
        return self._summary

    def close(self) -> None:
        """Stop the agent's process (killed if it does not exit within a second)."""
        self._process.close()

    def __enter__(self) -> IsolatedLearner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --------------------------------------------------------------- plumbing
    def _expect_ok(self, timeout: float, what: str) -> None:
        reply = self._process.receive(timeout, what, 1)
        if reply != _OK:
            self._process.kill()
            raise AgentFailure(f"malformed reply {reply[:16]!r} to {what}")
