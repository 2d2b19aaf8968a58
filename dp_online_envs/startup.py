"""A quiet Ctrl-C while the ``dp-online`` command line is still importing.

Python turns SIGINT into ``KeyboardInterrupt`` wherever the main thread is, also inside
the imports that take the command line its first second or two (numpy, gymnasium,
scipy). Interrupted there, the process would print the import machinery's traceback.
:func:`quiet_interrupt_while_starting` is the first thing the package does: in the
``dp-online`` process only (its console script, or ``python -m
dp_online_envs.lab.cli``), and only while SIGINT still has Python's default
handler, it installs one that prints one line and exits with status 130 (nothing has
been written yet: no command has started). :func:`main <dp_online_envs.lab.cli.
main>` restores the default handler with :func:`restore_default_interrupt` once the
imports are done; library users are never affected.
"""

from __future__ import annotations

import os
import signal
import sys

#: The exit status of an interrupted command (128 + SIGINT), as a shell reports it.
EXIT_INTERRUPTED = 130
#: The module the ``dp-online`` console script runs.
CLI_MODULE = "dp_online_envs.lab.cli"
#: Its former name, still runnable with ``python -m`` for one release.
FORMER_CLI_MODULE = "dp_online_envs.experiments.cli"


def _is_command_line() -> bool:
    """Whether this process is the ``dp-online`` command (script or ``python -m``).

    Read from ``sys.orig_argv`` (the interpreter's own command line), which worker
    processes do not inherit: multiprocessing's spawn copies ``sys.argv`` only."""
    orig = getattr(sys, "orig_argv", [])
    if len(orig) > 1 and os.path.basename(orig[1]) in ("dp-online", "dp-online.exe"):
        return True
    return any(a == "-m" and b in (CLI_MODULE, FORMER_CLI_MODULE)
               for a, b in zip(orig, orig[1:]))


def _exit_quietly(signum: int, frame: object) -> None:
    """Exit 130 at once with one line (no command has started: nothing to clean up)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C changes nothing
    os.write(2, b"interrupted while starting; nothing was run\n")
    os._exit(EXIT_INTERRUPTED)


def quiet_interrupt_while_starting() -> None:
    """In the ``dp-online`` process, make a Ctrl-C during its imports exit quietly."""
    if _is_command_line() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _exit_quietly)


def restore_default_interrupt() -> None:
    """Hand SIGINT back to Python (``KeyboardInterrupt``) if the start-up guard holds it."""
    if signal.getsignal(signal.SIGINT) is _exit_quietly:
        signal.signal(signal.SIGINT, signal.default_int_handler)
