"""The dp-online command line, run as a real subprocess; the cases that differ only in
their arguments (bad input, the second of two runs) call its ``main`` in this process
after the first of them has gone through a real one."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig

import pytest

from dp_online_envs import ENV_IDS
from dp_online_envs.lab.cli import main

CLI = [sys.executable, "-m", "dp_online_envs.lab.cli"]


def dp_online(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(CLI + list(args), check=False, capture_output=True, text=True, timeout=120, cwd=cwd)


def dp_online_here(capsys, *args: str) -> subprocess.CompletedProcess:
    """The command's ``main`` in this process: its exit status (argparse's own exit
    included) and what it printed; an exception it lets out fails the test as the
    traceback of a real process would."""
    capsys.readouterr()  # what earlier steps printed is not this command's
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(CLI + list(args), code, out, err)


@pytest.fixture(scope="module")
def listed() -> tuple[subprocess.CompletedProcess, dict]:
    """``dp-online list`` and what ``dp-online list --json`` printed, each run once for
    the module (the tests below only read them)."""
    return dp_online("list"), json.loads(dp_online("list", "--json").stdout)


def test_list_shows_envs_and_agents(listed):
    out, data = listed
    assert out.returncode == 0, out.stderr
    for env_id in ENV_IDS:
        assert env_id in out.stdout
    assert "private-ftrl" in out.stdout and "Agarwal & Singh" in out.stdout
    assert "non-private" in out.stdout and "simplex (K experts)" in out.stdout
    assert {e["id"] for e in data["envs"]} == set(ENV_IDS)
    # the former versions are named, apart from the benchmarks
    assert "DPBandit-Matroid-v0" in data["former_envs"]
    assert not set(data["former_envs"]) & set(ENV_IDS)
    assert "Former versions" in out.stdout and "DPBandit-Matroid-v0" in out.stdout
    hedge = next(a for a in data["agents"] if a["name"] == "hedge")
    assert (hedge["feedback"], hedge["privacy"]) == ("full", "non-private")


def test_run_prints_the_regret():
    out = dp_online("run", "DPFullInfo-Experts-v0", "private-ftrl", "--epsilon", "1", "4",
                    "--horizon", "200", "--seeds", "2", "--agent-option", "counter=tree",
                    "--workers", "2")
    assert out.returncode == 0, out.stderr
    assert "final regret" in out.stdout and "eps=1 " in out.stdout and "eps=4 " in out.stdout
    assert "BinaryTreeCounter" in out.stdout


BAD_RUNS = [
    (["run", "DPBandit-MAB-v7", "hedge"], "'DPBandit-MAB-v7'", "DPBandit-MAB-v0"),
    (["run", "DPFullInfo-Experts-v0", "hegde"], "'hegde'", "hedge"),
    (["run", "DPBandit-MAB-v0", "hedge"], "'hedge' needs full-information feedback",
     "agents that can play it"),
    (["run", "DPFullInfo-Experts-v0", "private-ftrl", "--epsilon", "0"], "epsilon=0.0",
     "> 0"),
    (["run", "DPFullInfo-Experts-v0", "private-ftrl", "--epsilon", "-2"], "epsilon=-2.0",
     "> 0"),
    (["run", "DPFullInfo-Experts-v0", "private-ftrl"], "'private-ftrl' is private",
     "--epsilon"),
    (["run", "DPFullInfo-Experts-v0", "hedge", "--env-option", "arms=3"], "'arms'", "n_arms"),
]


@pytest.mark.parametrize("args, bad, valid", BAD_RUNS)
def test_bad_input_names_the_value_and_the_choices(capsys, args, bad, valid):
    """The first case through a real process, the others through ``main`` here."""
    out = dp_online(*args) if args is BAD_RUNS[0][0] else dp_online_here(capsys, *args)
    assert out.returncode == 2
    assert bad in out.stderr and valid in out.stderr
    assert "Traceback" not in out.stderr and out.stderr.startswith("dp-online run: error:")


BAD_SWEEPS = [
    ("envs: [DPFullInfo-Experts-v0\n  agents: [hedge]\n", "malformed", "line"),
    ("envs: [DPFullInfo-Experts-v0]\nagents: [hedge]\nhorizons: [10]\nseed: 3\n", "['seed']",
     "seeds"),
    ("envs: [DPFullInfo-Experts-v0]\nagents: [private-ftrl]\nhorizons: [10]\nepsilons: [1, 0]\n",
     "epsilon=0", "> 0"),
    ("envs: [DPFullInfo-Experts-v0]\nagents: [exp9]\nhorizons: [10]\n", "'exp9'", "hedge"),
]


@pytest.mark.parametrize("text, bad, valid", BAD_SWEEPS)
def test_bad_sweep_files_are_reported_without_traceback(tmp_path, capsys, text, bad, valid):
    """The first case through a real process, the others through ``main`` here."""
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    args = ("sweep", str(path), "--results", str(tmp_path / "r"))
    out = dp_online(*args) if text is BAD_SWEEPS[0][0] else dp_online_here(capsys, *args)
    assert out.returncode == 2
    assert bad in out.stderr and valid in out.stderr and str(path) in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "r").exists()


def test_sweep_plot_report_end_to_end(tmp_path, capsys, monkeypatch):
    sweep = tmp_path / "tiny.yaml"
    sweep.write_text("name: tiny\nenvs: [DPFullInfo-Experts-v0]\nagents: [hedge, private-ftrl]\n"
                     "epsilons: [1, 4]\nhorizons: [200]\nseeds: 2\nresults: out\n")
    out = dp_online("sweep", str(sweep), "--workers", "2", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "6 games played, 0 reused, 0 failed" in out.stdout
    assert "dp-online report" in out.stderr  # the next step is suggested
    assert "game/s" not in out.stderr and "%|" not in out.stderr  # no bar off a terminal
    monkeypatch.chdir(tmp_path)  # the sweep file's results: out, as for the command
    again = dp_online_here(capsys, "sweep", str(sweep), "--quiet")
    assert "0 games played, 6 reused" in again.stdout and again.stderr == ""
    plot = dp_online("plot", "out", cwd=tmp_path)
    assert plot.returncode == 0, plot.stderr
    names = {p.name for p in (tmp_path / "out" / "plots").iterdir()}
    assert {"price_of_privacy.png", "price_of_privacy.svg",
            "regret_curves_DPFullInfo-Experts-v0.png"} <= names
    report = dp_online("report", "out", "-o", "r.html", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert "<table id=summary>" in (tmp_path / "r.html").read_text()
    missing = dp_online_here(capsys, "report", "nowhere")
    assert missing.returncode == 2 and "'nowhere' does not exist" in missing.stderr


def test_console_script_is_installed():
    """``pip install -e .[test]`` installs ``dp-online`` beside the interpreter; a missing
    script is a packaging failure, not a reason to skip."""
    script = shutil.which("dp-online", path=sysconfig.get_path("scripts")) or shutil.which(
        "dp-online")
    assert script is not None, "console script dp-online is not installed"
    out = subprocess.run([script, "--help"], check=False, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "sweep" in out.stdout and "report" in out.stdout


def test_run_prints_trivial_play_on_the_same_games(capsys):
    out = dp_online("run", "DPFullInfo-Experts-v0", "hedge", "--horizon", "200",
                    "--seeds", "2", "--backend", "serial")
    assert out.returncode == 0, out.stderr
    lines = [ln for ln in out.stdout.splitlines() if "center (no learning)" in ln]
    assert len(lines) == 1 and lines[0].split()[0] == "200"
    quiet = dp_online_here(capsys, "run", "DPFullInfo-Experts-v0", "hedge", "--horizon", "200",
                           "--seeds", "2", "--backend", "serial", "--no-reference")
    assert quiet.returncode == 0, quiet.stderr
    assert "no learning" not in quiet.stdout


def test_list_shows_the_reference_agents(listed):
    names = {a["name"]: a for a in listed[1]["agents"]}
    assert names["center"]["privacy"] == names["uniform"]["privacy"] == "non-private"


def test_run_says_when_privacy_was_only_requested(tmp_path, capsys):
    """A class marked private that declares no ``privacy`` shows the requested epsilon
    as requested, not as a guarantee."""
    (tmp_path / "undeclared.py").write_text(
        "from agents.bandit.exp3 import EXP3\n\n\nclass Undeclared(EXP3):\n    private = True\n")
    import os

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")]), *sys.path])}
    out = subprocess.run(CLI + ["run", "DPBandit-MAB-v0", "undeclared:Undeclared", "--epsilon",
                                "1", "--horizon", "50", "--seeds", "1"],
                         check=False, capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env=env)
    assert out.returncode == 0, out.stderr
    assert "eps=1 requested" in out.stdout
    assert "guarantee: none declared" in out.stdout
    declared = dp_online_here(capsys, "run", "DPBandit-MAB-v0", "private-exp2", "--epsilon",
                              "1", "--horizon", "50", "--seeds", "1")
    assert declared.returncode == 0, declared.stderr
    assert "requested" not in declared.stdout and "guarantee: " in declared.stdout
