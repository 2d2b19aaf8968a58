"""The release channel: where a learner's released values go while someone listens.

A private learner passes every value its privacy proof covers through its
``release(value)`` (``agents.Agent.release``), which hands it to the listener of the
current context, if any. The black-box auditor listens
(:class:`~dp_online_envs.lab.audit.ReleasesView`) without touching the learner: nothing is
set on it and nothing is patched. The listener is a :class:`contextvars.ContextVar`,
so concurrent audits in other threads or tasks do not see each other's releases.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

#: ``listener(round, value)``: ``round`` is the learner's count of completed rounds.
ReleaseListener = Callable[[int, Any], None]

_LISTENER: ContextVar[ReleaseListener | None] = ContextVar("release_listener", default=None)

__all__ = ["ReleaseListener", "listening", "release_listener"]


def release_listener() -> ReleaseListener | None:
    """The listener of the current context (``None``: nobody listens)."""
    return _LISTENER.get()


@contextmanager
def listening(listener: ReleaseListener) -> Iterator[None]:
    """Send every value released in this context to ``listener`` until the block ends."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)
