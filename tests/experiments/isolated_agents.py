"""Agents for the isolation tests: misbehaving ones, and a hostile one that looks for the env.

They live in an importable module (not a test file) because a spawned agent process
imports its agent class by name.
"""

from __future__ import annotations

import gc
import inspect
import json
import sys
import time

import numpy as np

import agents
from agents import Agent
from dp_online_envs.lab.experiments.game import GameSpec


class _UniformArm(Agent):
    """A valid bandit agent on arms: a uniformly random arm."""

    name = "test-uniform-arm"
    feedback = "bandit"

    def act(self):
        return int(self.rng.integers(self.problem.domain.dim))

    def update(self, action, feedback) -> None:
        self.t += 1


class RaisesInAct(_UniformArm):
    """Raises in round 3."""

    def act(self):
        if self.t == 2:
            raise ZeroDivisionError("the agent divided by zero in round 3")
        return super().act()


class Hangs(_UniformArm):
    """Sleeps far longer than any timeout in round 2."""

    def act(self):
        if self.t == 1:
            time.sleep(600)
        return super().act()


class SlowToAnswer(_UniformArm):
    """Answers every call after 0.3 s of sleep (no CPU): only a wall-clock budget stops
    it."""

    def act(self):
        time.sleep(0.3)
        return super().act()


class EatsMemory(_UniformArm):
    """Allocates 8 GiB in round 2."""

    def act(self):
        if self.t == 1:
            self.hoard = np.ones(2**30)  # 8 GiB of float64
        return super().act()


class BurnsCpu(_UniformArm):
    """Spins forever in round 2 (only a CPU limit or a timeout stops it)."""

    def act(self):
        if self.t == 1:
            x = 0
            while True:
                x += 1
        return super().act()


class DiesMidFrame(_UniformArm):
    """In round 2, writes the first 10 bytes of a 1000-byte frame on its connection and
    dies by SIGXCPU before the rest: what a CPU limit reached while replying does."""

    def act(self):
        if self.t == 1:
            import multiprocessing.connection
            import os
            import signal
            import struct

            [conn] = [o for o in gc.get_objects()
                      if isinstance(o, multiprocessing.connection.Connection) and not o.closed]
            os.write(conn.fileno(), struct.pack("!i", 1000) + b"x" * 10)
            os.kill(os.getpid(), signal.SIGXCPU)
            time.sleep(60)
        return super().act()


class StallsMidFrame(_UniformArm):
    """In round 2, writes the length prefix of a 1000-byte frame and 10 bytes of it on its
    connection, then waits without ever sending the rest (its process stays alive)."""

    def act(self):
        if self.t == 1:
            import os
            import struct

            os.write(channel().fileno(), struct.pack("!i", 1000) + b"x" * 10)
            time.sleep(600)
        return super().act()


class FloatArm(_UniformArm):
    """Plays 2.5, which is no arm."""

    def act(self):
        return 2.5


class Exits(_UniformArm):
    """Kills its own process in round 2."""

    def act(self):
        if self.t == 1:
            import os

            os._exit(7)
        return super().act()


def channel():
    """The isolated process's end of its channel to the parent (what an attacker finds)."""
    from multiprocessing.connection import Connection

    return next(o for o in gc.get_objects() if isinstance(o, Connection) and not o.closed)


class Payload:
    """Unpickling it creates the directory ``path``: code run by whoever unpickles it."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        import os

        return os.mkdir, (self.path,)


class SendsPickle(_UniformArm):
    """Answers the end of its game with a pickle whose loading would create ``marker``."""

    def setup(self, marker: str = "") -> None:
        self.marker = marker

    def update(self, action, feedback) -> None:
        super().update(action, feedback)
        if self.t == self.problem.horizon:  # the last update: the parent awaits the summary
            import os
            import pickle

            channel().send_bytes(pickle.dumps(Payload(self.marker)))
            os._exit(0)


class SendsBadSummary(_UniformArm):
    """Answers the end of its game with a summary frame of the wrong shape."""

    def update(self, action, feedback) -> None:
        super().update(action, feedback)
        if self.t == self.problem.horizon:
            import os

            channel().send_bytes(b's{"clipped_feedback": "lots", "privacy": [1, 0, "x"]}')
            os._exit(0)


class SendsShortAction(_UniformArm):
    """Answers round 2 with an action frame of 3 bytes."""

    def act(self):
        if self.t == 1:
            import os

            channel().send_bytes(b"a\x00\x01")
            os._exit(0)
        return super().act()


class CountsUpdates(_UniformArm):
    """Plays arm ``min(updates so far in this game, K - 1)``: the arm tells how many
    feedbacks reached it since its last reset."""

    def act(self):
        return min(self.t, self.problem.domain.dim - 1)


class ShowsLimits(_UniformArm):
    """Raises in its first ``act`` with its process's address-space and CPU limits and the
    CPU seconds it has used."""

    def act(self):
        import resource

        used = resource.getrusage(resource.RUSAGE_SELF)
        raise RuntimeError(f"RLIMIT_AS={resource.getrlimit(resource.RLIMIT_AS)} "
                           f"RLIMIT_CPU={resource.getrlimit(resource.RLIMIT_CPU)} "
                           f"USED={used.ru_utime + used.ru_stime}")


#: Names of the objects that must never exist in an isolated agent's process.
SECRET_TYPES = ("OnlineLearningEnv", "FeedbackGuard", "RegretRecorder", "Adversary",
                "StochasticAdversary", "LossSequence")


class Snoop(_UniformArm):
    """Looks for the env by every in-process trick and writes what it found to ``report``.

    Tricks: ``gc.get_objects()`` for env, wrapper, recorder and adversary objects; every
    frame reachable with ``sys._getframe`` and ``inspect.stack()`` for locals holding
    them; and rebuilding the env from the public seed scheme (every seed index below
    ``guesses`` with the env's default options), checking whether a twin's first loss
    explains the feedback it got.
    """

    name = "test-snoop"

    def setup(self, report: str = "", env_id: str = "DPBandit-MAB-v0", guesses: int = 8,
              rounds: int = 16) -> None:
        self.report, self.env_id, self.guesses, self.rounds = report, env_id, guesses, rounds
        self.found: dict[str, list[str]] = {"gc": [], "frames": [], "twins": []}
        self.seen: list[tuple[int, float]] = []

    def act(self):
        if self.t == 0:
            self._look_around()
        return super().act()

    def update(self, action, feedback) -> None:
        self.seen.append((int(action), float(np.asarray(feedback).reshape(-1)[0])))
        if len(self.seen) == self.rounds:
            self._rebuild()
            with open(self.report, "w") as f:
                json.dump(self.found, f)
        super().update(action, feedback)

    def _look_around(self) -> None:
        for obj in gc.get_objects():
            names = {b.__name__ for b in type(obj).__mro__}
            if names & set(SECRET_TYPES):
                self.found["gc"].append(type(obj).__name__)
        frame = sys._getframe()
        while frame is not None:
            for value in list(frame.f_locals.values()):
                if type(value).__name__ in SECRET_TYPES:
                    self.found["frames"].append(type(value).__name__)
            frame = frame.f_back
        for info in inspect.stack():
            for value in list(info.frame.f_locals.values()):
                if type(value).__name__ in SECRET_TYPES:
                    self.found["frames"].append(type(value).__name__)

    def _rebuild(self) -> None:
        """Twin envs from the runner's public seed scheme: does one replay our feedback?"""
        from dp_online_envs.envs.registry import build_env

        for index in range(self.guesses):
            spec = GameSpec(self.env_id, "x", None, None, self.problem.horizon, index)
            twin = build_env(self.env_id, horizon=self.problem.horizon)
            twin.reset(seed=spec.env_seed)
            replay = [float(twin.step(arm)[0][0]) for arm, _ in self.seen]
            if replay == [paid for _, paid in self.seen]:
                self.found["twins"].append(str(index))


__all__ = ["BurnsCpu", "EatsMemory", "Exits", "FloatArm", "Hangs", "Payload", "RaisesInAct",
           "SendsBadSummary", "SendsPickle", "SendsShortAction", "Snoop", "agents", "channel"]
