"""Agents in their own process: the feedback boundary as an operating-system boundary.

:class:`IsolatedLearner` is the parent's proxy of an agent that runs in a separate
process, *spawned* (a fresh interpreter, not a fork of the process that holds the env).
The agent's process receives the public :class:`~dp_online_envs.problem.Problem`, its
seed and, each round, the round's permitted feedback; it sends back an action and
nothing else ever crosses. The env, the adversary, the recorder and their generators
never exist in the agent's process, so no Python trick there (``env.unwrapped``, frame
walking, ``gc.get_objects()``, copying a generator) can reach them.

Protocol (one :func:`multiprocessing.Pipe`, synchronous). Per round one fixed-size
binary frame each way: the parent sends ``b"S"`` + the previous round's feedback as
float64 bytes (``b"A"`` alone in the first round), the agent's process applies
``update`` then ``act`` and answers ``b"a"`` + the action as float64 bytes (the
index of a ``Discrete`` space; the 0/1 vector of a ``MultiBinary`` one). Setup, reset
and the end-of-game summary are pickled control messages; an error is ``b"e"`` + the
traceback text.

Limits: every call waits at most ``timeout`` seconds (the agent's process is killed and
:class:`AgentFailure` raised); ``memory_bytes`` and ``cpu_seconds`` are set with
:func:`resource.setrlimit` (``RLIMIT_AS``, ``RLIMIT_CPU``) in the agent's process after
its imports. A crash, a timeout, a refused limit or a malformed action all raise
:class:`AgentFailure` with the reason; the experiment runner records the game as failed.
"""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
import os
import pickle
import signal
import time
import traceback
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from dp_online_envs.problem import Problem
from dp_online_envs.validation import check_int, check_real

#: ``factory(problem) -> learner`` with ``act``, ``update``, ``reset(seed)``; must be
#: picklable (a class, a ``functools.partial`` of one, or a module-level function).
LearnerFactory = Callable[[Problem], Any]


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
        memory_bytes: ``RLIMIT_AS`` of the agent's process (``None``: no limit).
        cpu_seconds: ``RLIMIT_CPU`` of the agent's process (``None``: no limit).
    """

    timeout: float = 10.0
    startup_timeout: float = 120.0
    memory_bytes: int | None = None
    cpu_seconds: int | None = None

    def __post_init__(self) -> None:
        for name in ("timeout", "startup_timeout"):
            check_real(name, getattr(self, name), 0.0, low_inclusive=False)
        for name in ("memory_bytes", "cpu_seconds"):
            if getattr(self, name) is not None:  # below 2^62: setrlimit takes a C integer
                check_int(name, getattr(self, name), 1, MAX_LIMIT)


_ACT, _STEP, _ACTION, _ERROR = b"A", b"S", b"a", b"e"
#: How long a side polls for the other's frame before it blocks. A blocked process's
#: idle CPU takes tens of microseconds to wake on a virtual machine; polling briefly
#: keeps a round trip at a few microseconds while the other side answers quickly, and
#: costs at most this much CPU per frame when it does not.
SPIN_SECONDS = 2e-4


def _wait(conn: Any, timeout: float | None) -> bool:
    """Whether a frame arrived on ``conn`` within ``timeout`` seconds (``None``: forever)."""
    if conn.poll(0):
        return True
    end = time.perf_counter() + SPIN_SECONDS
    while time.perf_counter() < end:
        os.sched_yield()  # lets the other side run first when they share a CPU
        if conn.poll(0):
            return True
    return conn.poll(timeout)


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


def _encode_action(action: Any, size: int, kind: str) -> bytes:
    """The action frame, or ``ValueError`` naming what is wrong with the action."""
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
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    if limits.cpu_seconds is not None:
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))


def _serve(conn: Any, factory: LearnerFactory, problem: Problem, size: int, kind: str,
           limits: IsolationLimits) -> None:
    """The agent's process: build the learner, then answer frames until told to stop."""
    try:
        _set_limits(limits)
        learner = factory(problem)
    except BaseException:  # noqa: BLE001 - reported to the parent
        conn.send_bytes(_ERROR + traceback.format_exc().encode())
        return
    conn.send_bytes(b"k")
    action: Any = None
    while True:
        try:
            _wait(conn, None)
            frame = conn.recv_bytes()
        except EOFError:
            return
        op = frame[:1]
        try:
            if op == _STEP:
                learner.update(action, np.frombuffer(frame, dtype=np.float64, offset=1).copy())
                action = learner.act()
                conn.send_bytes(_encode_action(action, size, kind))
            elif op == _ACT:
                action = learner.act()
                conn.send_bytes(_encode_action(action, size, kind))
            else:
                message = pickle.loads(frame)
                if message[0] == "reset":
                    learner.reset(message[1])
                    action = None
                    conn.send_bytes(b"k")
                elif message[0] == "finish":
                    if message[1] is not None:
                        learner.update(action, np.asarray(message[1], dtype=np.float64))
                    conn.send_bytes(pickle.dumps(_summary(learner)))
                else:  # "close"
                    return
        except BaseException:  # noqa: BLE001 - reported to the parent
            conn.send_bytes(_ERROR + traceback.format_exc().encode())
            return


def _summary(learner: Any) -> dict[str, Any]:
    """What the parent may know of the learner after the game (for the record)."""
    privacy = getattr(learner, "privacy", None)
    return {
        "clipped_feedback": int(getattr(learner, "clipped_feedback", 0)),
        "privacy": None if privacy is None else
        (float(privacy.epsilon), float(privacy.delta), str(privacy)),
    }


class IsolatedLearner:
    """The parent's proxy of a learner that runs in its own spawned process.

    It has the learner interface (``reset``, ``act``, ``update``), so the one game loop
    (:func:`dp_online_envs.loop.run_rounds`) plays it like an in-process agent. ``update``
    only stores the feedback; the next ``act`` (or :meth:`finish`) ships it with the
    request, one round trip per round. Use as a context manager (or call
    :meth:`close`): the agent's process is stopped on exit, killed if it hangs.

    Args:
        factory: ``factory(problem) -> learner``, picklable; called in the agent's process.
        problem: The public problem (the only thing about the game the agent receives).
        action_space: The env's action space (how actions are framed).
        limits: Time, memory and CPU limits.

    Raises:
        AgentFailure: The process could not start or build the learner in time.
    """

    def __init__(self, factory: LearnerFactory, problem: Problem, action_space: gym.Space,
                 limits: IsolationLimits | None = None) -> None:
        self.limits = limits if limits is not None else IsolationLimits()
        self._size, self._kind = _action_codec(action_space)
        self._pending: np.ndarray | None = None
        self._summary: dict[str, Any] | None = None
        ctx = mp.get_context("spawn")
        self._conn, child = ctx.Pipe(duplex=True)
        self._process = ctx.Process(
            target=_serve, args=(child, factory, problem, self._size, self._kind, self.limits),
            name="dp-online-agent", daemon=True)
        self._process.start()
        child.close()
        try:
            self._expect_ok(self.limits.startup_timeout, "starting the agent")
        except AgentFailure:
            self.close()
            raise

    # ------------------------------------------------------------- learner API
    def reset(self, seed: int | None = None) -> None:
        """Reset the learner for a new game with ``seed``."""
        self._pending = None
        self._summary = None
        self._send(pickle.dumps(("reset", seed)))
        self._expect_ok(self.limits.timeout, "reset")

    def act(self) -> Any:
        """The learner's next action (its pending update is applied first)."""
        if self._pending is None:
            self._send(_ACT)
        else:
            self._send(_STEP + self._pending.tobytes())
            self._pending = None
        reply = self._receive(self.limits.timeout, "act")
        if reply[:1] != _ACTION:
            raise AgentFailure(f"malformed reply {reply[:16]!r} to act")
        values = np.frombuffer(reply, dtype=np.float64, offset=1)
        if self._kind == "discrete":
            return int(values[0])
        if self._kind == "binary":
            return values.astype(np.int8)
        return values.copy()

    def update(self, action: Any, feedback: np.ndarray) -> None:
        """Keep the round's feedback for the agent (sent with the next request)."""
        self._pending = np.ascontiguousarray(feedback, dtype=np.float64)

    def finish(self) -> dict[str, Any]:
        """Deliver the last feedback and return the learner's summary.

        Returns:
            ``{"clipped_feedback": int, "privacy": (epsilon, delta, text) or None}``.
        """
        pending, self._pending = self._pending, None
        self._send(pickle.dumps(("finish", None if pending is None else pending.tolist())))
        reply = self._receive(self.limits.timeout, "finish")
        self._summary = pickle.loads(reply)
        return self._summary

    def close(self) -> None:
        """Stop the agent's process (killed if it does not exit within a second)."""
        if self._process.is_alive():
            try:
                self._conn.send_bytes(pickle.dumps(("close",)))
            except (OSError, ValueError):
                pass
            self._process.join(1.0)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._conn.close()

    def __enter__(self) -> IsolatedLearner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --------------------------------------------------------------- plumbing
    def _send(self, frame: bytes) -> None:
        try:
            self._conn.send_bytes(frame)
        except (OSError, ValueError):
            raise self._died("sending to the agent") from None

    def _receive(self, timeout: float, what: str) -> bytes:
        try:
            ready = _wait(self._conn, timeout)
        except (OSError, EOFError):
            raise self._died(what) from None
        if not ready:
            self._process.kill()
            self._process.join()
            raise AgentFailure(f"agent timed out: no answer to {what} within {timeout:g} s")
        try:
            reply = self._conn.recv_bytes()
        except (OSError, EOFError):
            raise self._died(what) from None
        if reply[:1] == _ERROR:
            self._process.join(5.0)
            text = reply[1:].decode(errors="replace")
            last = text.strip().splitlines()[-1] if text.strip() else "error"
            raise AgentFailure(f"agent raised during {what}: {last}", text)
        return reply

    def _expect_ok(self, timeout: float, what: str) -> None:
        reply = self._receive(timeout, what)
        if reply != b"k":
            raise AgentFailure(f"malformed reply {reply[:16]!r} to {what}")

    def _died(self, what: str) -> AgentFailure:
        self._process.join(5.0)
        code = self._process.exitcode
        if code is not None and code < 0:
            name = signal.Signals(-code).name
            hint = {"SIGXCPU": " (CPU limit exceeded)", "SIGKILL": " (killed)"}.get(name, "")
            return AgentFailure(f"agent process died during {what}: {name}{hint}")
        return AgentFailure(f"agent process exited during {what} (exit code {code})")
