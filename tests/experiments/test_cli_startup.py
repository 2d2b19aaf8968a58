"""The command line starts without its heavy parts, says when an option is ignored, and
lets a report leave trivial play out."""

from __future__ import annotations

import json
import subprocess
import sys

from dp_online_envs.lab import cli
from dp_online_envs.lab.experiments import run_sweep

#: Imported only by the commands that use them, or (scipy) by the code that uses it (the
#: speed of ``dp-online --help`` is measured by benchmarks/cli_startup.py).
HEAVY = ("torch", "stable_baselines3", "pandas", "pyarrow", "matplotlib", "dask", "tqdm",
         "yaml", "agents", "scipy", "dp_online_envs.lab.grading", "dp_online_envs.lab.audit",
         "dp_online_envs.lab.experiments.runner", "dp_online_envs.lab.experiments.report")


def test_importing_the_command_line_imports_no_heavy_part():
    code = ("import json, sys, dp_online_envs.lab.cli as c; c.build_parser(); "
            f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert json.loads(out.stdout) == []


def test_epsilon_and_delta_on_a_non_private_agent_are_ignored_with_a_warning(capsys):
    args = ["run", "DPFullInfo-Experts-v0", "hedge", "--horizon", "10", "--seeds", "1",
            "--backend", "serial", "--no-reference", "--quiet"]
    assert cli.main([*args, "--epsilon", "1", "--delta", "1e-6"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == ["dp-online run: warning: 'hedge' is not private: --epsilon and --delta "
                   "ignored (its games are non-private)"]
    assert cli.main([*args, "--epsilon", "1"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "dp-online run: warning: 'hedge' is not private: --epsilon ignored (its games are "
        "non-private)"]
    assert cli.main(args) == 0
    assert capsys.readouterr().err == ""


def test_report_no_reference_plays_nothing(tmp_path, monkeypatch):
    from dp_online_envs.lab.experiments import plots

    monkeypatch.setattr(plots, "make_figures", lambda records: [])  # not tested here
    res = tmp_path / "res"
    run_sweep({"name": "s", "envs": ["DPFullInfo-Experts-v0"], "agents": ["hedge"],
               "horizons": [20], "seeds": 2}, results=res, backend="serial", quiet=True)
    before = sorted(p.name for p in (res / "games").iterdir())
    assert cli.main(["report", str(res), "-o", str(tmp_path / "r.html"), "--no-reference"]) == 0
    assert sorted(p.name for p in (res / "games").iterdir()) == before
    assert "No reference agent ran here" in (tmp_path / "r.html").read_text()


def test_the_experiments_package_declares_each_lazy_name_for_static_readers_too():
    """The names imported on first use are the ones in ``__all__`` and the ones the
    ``TYPE_CHECKING`` block imports (what the API reference reads), each from its home."""
    import ast
    import importlib

    import dp_online_envs.lab.experiments as package

    tree = ast.parse(open(package.__file__, encoding="utf-8").read())
    static = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for imp in node.body:
                for alias in imp.names:
                    static[alias.name] = imp.module.rsplit(".", 1)[-1]
    assert static == package._HOME and package.__all__ == sorted(package._HOME)
    for name, home in package._HOME.items():
        module = importlib.import_module(f"dp_online_envs.lab.experiments.{home}")
        assert getattr(package, name) is getattr(module, name)
