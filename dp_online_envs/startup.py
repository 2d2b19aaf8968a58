"""What the ``dp-online`` command line needs before the package's imports: a quiet
Ctrl-C while it is still importing, and its version without importing anything.

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

:func:`answer_version_early` comes first of all: ``dp-online --version`` (the console
script or ``python -m dp_online_envs.lab.cli``, with that one argument) prints the version
and exits before the package imports numpy and gymnasium, as argparse would have printed
it after them. The version has one source, the installed distribution's metadata
(pyproject.toml's version), read by :func:`installed_version`; ``dp_online_envs.__version__``
reads it there too, on first use.
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
#: The distribution whose metadata holds the version.
DISTRIBUTION = "dp-online-envs"
#: The version of a source checkout that was never installed (no metadata to read).
UNKNOWN_VERSION = "0+unknown"


def _is_command_line(modules: tuple[str, ...] = (CLI_MODULE, FORMER_CLI_MODULE)) -> bool:
    """Whether this process is the ``dp-online`` command (its script, or ``python -m``
    one of ``modules``).

    Read from ``sys.orig_argv`` (the interpreter's own command line), which worker
    processes do not inherit: multiprocessing's spawn copies ``sys.argv`` only."""
    orig = getattr(sys, "orig_argv", [])
    if len(orig) > 1 and os.path.basename(orig[1]) in ("dp-online", "dp-online.exe"):
        return True
    return any(a == "-m" and b in modules for a, b in zip(orig, orig[1:]))


def installed_version() -> str:
    """The version of dp-online-envs: its installed distribution's metadata (the one
    source), :data:`UNKNOWN_VERSION` in a source checkout that was never installed."""
    from importlib import metadata  # a tenth of the package's import: read on first use

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return UNKNOWN_VERSION


def answer_version_early() -> None:
    """In the ``dp-online`` process with the one argument ``--version``, print
    ``dp-online VERSION`` (what its argparse ``--version`` prints) and exit with status 0
    before anything else is imported.

    ``python -m`` of the command line's former module is left to it (it warns first)."""
    if sys.argv[1:] == ["--version"] and _is_command_line((CLI_MODULE,)):
        sys.stdout.write(f"dp-online {installed_version()}\n")
        raise SystemExit(0)


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
