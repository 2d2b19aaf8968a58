"""``dp-online --version`` answers before the package's imports, with the line argparse
prints, from the one source of the version (the installed metadata); ``import
dp_online_envs`` reads that metadata only when ``__version__`` is asked for."""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import re
import subprocess
import sys
from importlib import metadata

import pytest

from dp_online_envs.lab.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = pathlib.Path(sys.executable).with_name("dp-online")
#: Each way a user starts the command line.
COMMANDS = {"console script": [sys.executable, str(SCRIPT)],
            "python -m": [sys.executable, "-m", "dp_online_envs.lab.cli"]}


def _imported(argv: list[str]) -> tuple[subprocess.CompletedProcess, set[str]]:
    """The finished process ``argv`` and the modules it imported (``-X importtime``'s
    report, asked for through the environment so that the command line is unchanged)."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env=env, check=False)
    modules = set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", out.stderr, re.M))
    return out, modules


@pytest.mark.parametrize("how", list(COMMANDS))
def test_version_is_answered_before_numpy_and_the_envs_are_imported(how):
    if how == "console script" and not SCRIPT.is_file():
        pytest.fail(f"no console script at {SCRIPT}: install the package (pip install -e .)")
    out, modules = _imported([*COMMANDS[how], "--version"])
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"dp-online {metadata.version('dp-online-envs')}\n"
    assert "dp_online_envs" in modules  # the answer comes from the package's first lines
    assert not {"numpy", "gymnasium", "dp_online_envs.envs"} & modules


def test_the_early_answer_is_the_line_argparse_prints():
    early = subprocess.run([*COMMANDS["python -m"], "--version"], capture_output=True,
                           text=True, timeout=120, cwd=ROOT, check=True)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert early.stdout == printed.getvalue()


def test_any_other_command_line_takes_the_full_path():
    """``--version`` with another argument is argparse's (the same line), and a library
    process whose arguments happen to be ``--version`` imports the package as always."""
    out, modules = _imported([*COMMANDS["python -m"], "--version", "list"])
    assert out.returncode == 0 and out.stdout == f"dp-online {metadata.version('dp-online-envs')}\n"
    assert "numpy" in modules
    library = subprocess.run([sys.executable, "-c", "import dp_online_envs; print(len("
                              "dp_online_envs.ENV_IDS) > 0)", "--version"],
                             capture_output=True, text=True, timeout=120, cwd=ROOT, check=True)
    assert library.stdout == "True\n"


def test_import_reads_the_version_only_when_it_is_asked_for():
    probe = """
import importlib.metadata as m
calls = []
real = m.version
def version(name):
    calls.append(name)
    return real(name)
m.version = version
import dp_online_envs
print(calls)
from dp_online_envs import __version__
print(calls, __version__, dp_online_envs.__version__, calls)
"""
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, cwd=ROOT, check=True)
    v = metadata.version("dp-online-envs")
    assert out.stdout.splitlines() == ["[]", f"['dp-online-envs'] {v} {v} ['dp-online-envs']"]
