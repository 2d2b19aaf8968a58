"""dp-online --version and the wording of its one-line errors."""

from __future__ import annotations

import pathlib
import subprocess
import sys
from importlib import metadata

import pytest

import dp_online_envs
from dp_online_envs.lab.cli import package_version

CLI = [sys.executable, "-m", "dp_online_envs.lab.cli"]


def dp_online(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(CLI + list(args), check=False, capture_output=True, text=True,
                          timeout=120)


def test_version_prints_the_package_version():
    out = dp_online("--version")
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"dp-online {package_version()}\n"
    assert package_version() == metadata.version("dp-online-envs") == dp_online_envs.__version__


def test_the_version_has_one_source_the_installed_metadata():
    """``__version__`` is read from the installed distribution (pyproject.toml's version,
    no second copy in the code); a checkout never installed says so."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    root = pathlib.Path(__file__).resolve().parents[2]
    declared = tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
    assert dp_online_envs.__version__ == declared == metadata.version("dp-online-envs")
    assert f'"{declared}"' not in (root / "dp_online_envs" / "__init__.py").read_text()
    probe = ("import importlib.metadata as m\n"
             "def missing(name):\n    raise m.PackageNotFoundError(name)\n"
             "m.version = missing\n"
             "import dp_online_envs\nprint(dp_online_envs.__version__)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, timeout=120, cwd=root)
    assert out.stdout.strip() == "0+unknown"


def _error(*args: str) -> str:
    out = dp_online(*args)
    assert out.returncode == 2, out.stdout
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    return lines[0]


RUN = ("run", "DPFullInfo-Experts-v0", "--horizon", "10", "--seeds", "1", "--backend", "serial",
       "--quiet")


@pytest.mark.parametrize("args, expected", [
    (("run", "DPFullInfo-Expert-v0", "hedge"), "did you mean 'DPFullInfo-Experts-v0'?"),
    (("run", "DPFullInfo-Experts-v0", "hedg"), "did you mean 'hedge'?"),
    ((*RUN, "hedge", "--env-option", "n_arms=1.5"),
     "dp-online run: error: DPFullInfo-Experts-v0 with options {'n_arms': 1.5}: n_arms=1.5 "
     "rejected: expected an integer >= 1, got a float"),
    ((*RUN, "private-ftrl", "--epsilon", "1", "--delta", "2"),
     "dp-online run: error: delta=2.0 rejected: expected a real number in [0, 1)"),
])
def test_run_errors_are_one_line_without_a_location_prefix(args, expected):
    line = _error(*args)
    assert expected in line
    assert "command line" not in line


def test_factorization_without_delta_says_to_pass_delta():
    line = _error(*RUN, "private-ftrl", "--epsilon", "1", "--agent-option",
                  "counter=factorization")
    assert "counter='factorization'" in line and "--delta" in line
    out = dp_online(*RUN, "private-ftrl", "--epsilon", "1", "--delta", "1e-6",
                    "--agent-option", "counter=factorization")
    assert out.returncode == 0, out.stderr
