"""The tree passes ruff with the configuration in ``pyproject.toml`` (pycodestyle,
pyflakes, import order, pyupgrade, bugbear), as CI checks."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    ruff = shutil.which("ruff") or shutil.which("ruff", path=str(Path(sys.executable).parent))
    assert ruff is not None, "ruff is in the test extra: pip install -e '.[test]'"
    out = subprocess.run([ruff, "check", "--no-cache", str(ROOT)], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
