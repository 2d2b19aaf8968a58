"""The dask backend on a LocalCluster started here: the same records as the other backends."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dp_online_envs.lab.experiments import (
    ExperimentError,
    load_records,
    parse_sweep,
    run_games,
    run_sweep,
    stable_view,
)


@pytest.fixture(scope="module")
def scheduler():
    """A two-worker cluster (threads of this process) reachable over TCP."""
    import dask.distributed as distributed  # imported where used, not at collection

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  protocol="tcp", dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def _view(records):
    return sorted((stable_view(r) for r in records), key=lambda r: r["game_id"])


def test_dask_backend_matches_serial_and_local(small_sweep, scheduler, tmp_path):
    assert scheduler.startswith("tcp://")
    on_dask = run_sweep(small_sweep, results=tmp_path, backend="dask", scheduler=scheduler,
                        quiet=True)
    assert on_dask.ok and on_dask.played == 15
    specs = parse_sweep(small_sweep).games
    serial = run_games(specs, backend="serial")
    assert _view(load_records(tmp_path)) == _view(serial.records)
    again = run_sweep(small_sweep, results=tmp_path, backend="dask", scheduler=scheduler,
                      quiet=True)
    assert (again.played, again.reused) == (0, 15)


def test_cli_sweep_on_a_dask_scheduler(tmp_path, scheduler):
    sweep = tmp_path / "s.toml"
    sweep.write_text('name = "dask-cli"\nenvs = ["DPFullInfo-Experts-v0"]\n'
                     'agents = ["hedge", "private-ftrl"]\nepsilons = [2]\nhorizons = [200]\n'
                     "seeds = 2\n")
    out = subprocess.run([sys.executable, "-m", "dp_online_envs.lab.cli", "sweep",
                          str(sweep), "--results", str(tmp_path / "res"), "--backend", "dask",
                          "--scheduler", scheduler, "--quiet"],
                         check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "4 games played" in out.stdout
    local = run_games(parse_sweep({"name": "dask-cli", "envs": ["DPFullInfo-Experts-v0"],
                                   "agents": ["hedge", "private-ftrl"], "epsilons": [2],
                                   "horizons": [200], "seeds": 2}).games, backend="local",
                      workers=2)
    assert _view(load_records(tmp_path / "res")) == _view(local.records)


def test_unreachable_scheduler_is_a_clear_error(small_sweep, tmp_path, monkeypatch):
    from dp_online_envs.lab.experiments import backends

    monkeypatch.setattr(backends, "CONNECT_TIMEOUT", "1s")
    with pytest.raises(ExperimentError, match="cannot reach the Dask scheduler"):
        run_sweep(small_sweep, results=tmp_path, backend="dask",
                  scheduler="tcp://127.0.0.1:9", quiet=True)


def test_scheduler_needs_the_dask_backend(small_sweep, tmp_path):
    with pytest.raises(ExperimentError, match="backend='dask'"):
        run_sweep(small_sweep, results=tmp_path, backend="local", scheduler="tcp://x:1")
