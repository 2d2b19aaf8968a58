"""Results as tables: load_results, load_curves and dp-online export."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pandas as pd
import pytest

from agents import agent_options
from dp_online_envs.lab.experiments import (
    ExperimentError,
    export_results,
    load_curves,
    load_records,
    load_results,
    run_sweep,
)
from dp_online_envs.lab.experiments.table import CURVE_COLUMNS, CURVE_KEYS

from .conftest import SMALL

CLI = [sys.executable, "-m", "dp_online_envs.lab.cli"]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """15 games: hedge and private-ftrl with two counters (different agent_kwargs)."""
    root = tmp_path_factory.mktemp("table")
    sweep = json.loads(json.dumps(SMALL))
    sweep["envs"] = [{"id": "DPFullInfo-Experts-v0", "kwargs": {"n_arms": 4}}]
    assert run_sweep(sweep, results=root, backend="serial", quiet=True).ok
    return root


def _same(a, b):
    return (a is None and isinstance(b, float) and math.isnan(b)) or (
        isinstance(b, float) and math.isnan(b) and isinstance(a, float) and math.isnan(a)) \
        or a == b


def test_one_row_per_game_with_flattened_settings(results):
    records = sorted(load_records(results), key=lambda r: r["game_id"])
    table = load_results(results)
    assert len(table) == len(records) == 15
    flat = [k for k in records[0] if k not in CURVE_KEYS + (
        "tags", "env_kwargs", "env_options", "agent_kwargs", "agent_options")]
    options = {f"env_options.{k}" for k in records[0]["env_options"]}
    assert "env_options.n_arms" in options and "env_options.adversary" in options
    played = {f"agent_options.{k}" for r in records for k in r["agent_options"]}
    assert set(table.columns) == set(flat) | options | played | {
        "tags.suite", "env_kwargs.n_arms", "agent_kwargs.counter"}
    for row, record in zip(table.to_dict("records"), records):
        for key in flat:
            assert _same(record[key], row[key]), (key, record[key], row[key])
        assert row["tags.suite"] == record["tags"]["suite"] == "tests"
        assert row["env_kwargs.n_arms"] == row["env_options.n_arms"] == 4
        assert row["env_options.adversary"] == "stochastic"  # the default, resolved
        assert _same(record["agent_kwargs"].get("counter"), row["agent_kwargs.counter"])
        for key, value in record["agent_options"].items():  # the defaults, resolved
            assert _same(value, row[f"agent_options.{key}"]), key
        assert record["agent_options"] == {**agent_options(record["agent"]),
                                           **record["agent_kwargs"]}
    assert list(table["game_id"]) == [r["game_id"] for r in records]
    assert table["regret"].dtype == "float64" and table["horizon"].dtype == "int64"


def test_curves_table_has_one_row_per_game_and_checkpoint(results):
    records = {r["game_id"]: r for r in load_records(results)}
    curves = load_curves(results)
    assert list(curves.columns) == list(CURVE_COLUMNS)
    assert len(curves) == sum(len(r["checkpoints"]) for r in records.values())
    for game_id, group in curves.groupby("game_id", sort=False):
        r = records[game_id]
        assert list(group["checkpoint"]) == r["checkpoints"]
        assert list(group["regret_lo"]) == r["regret_curve_lo"]
        assert list(group["regret_hi"]) == r["regret_curve_hi"]
        assert set(group["agent_label"]) == {r["agent_label"]}
        assert set(group["horizon"]) == {r["horizon"]}


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_export_round_trips(results, tmp_path, suffix):
    games, curves = export_results(results, tmp_path / f"out{suffix}")
    assert curves == tmp_path / f"out_curves{suffix}"
    if suffix == ".parquet":
        back_games, back_curves = pd.read_parquet(games), pd.read_parquet(curves)
    else:
        back_games, back_curves = pd.read_csv(games), pd.read_csv(curves)
    expected = load_results(results)
    if suffix == ".csv":  # CSV has no empty string apart from a missing value
        expected = expected.replace("", float("nan"))
    pd.testing.assert_frame_equal(back_games, expected, check_dtype=False, check_exact=True)
    pd.testing.assert_frame_equal(back_curves, load_curves(results), check_dtype=False,
                                  check_exact=True)


def test_the_cli_exports_with_an_explicit_curves_file(results, tmp_path):
    out = subprocess.run(CLI + ["export", str(results), "-o", str(tmp_path / "games.csv"),
                                "--curves", str(tmp_path / "long.parquet")],
                         check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"games table written to {tmp_path / 'games.csv'}",
                                       f"curves table written to {tmp_path / 'long.parquet'}"]
    assert len(pd.read_csv(tmp_path / "games.csv")) == 15
    assert len(pd.read_parquet(tmp_path / "long.parquet")) == len(load_curves(results))


def test_an_unknown_extension_is_a_one_line_error(results, tmp_path):
    with pytest.raises(ExperimentError, match=r"unknown extension '\.xlsx'; valid: "
                                              r"\['\.parquet', '\.csv'\]"):
        export_results(results, tmp_path / "out.xlsx")
    out = subprocess.run(CLI + ["export", str(results), "-o", str(tmp_path / "out.json")],
                         check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.splitlines() == [
        f"dp-online export: error: cannot export to '{tmp_path / 'out.json'}': unknown "
        "extension '.json'; valid: ['.parquet', '.csv']"]
    assert not list(tmp_path.iterdir())


def test_a_missing_directory_is_an_experiment_error(tmp_path):
    with pytest.raises(ExperimentError, match="does not exist"):
        load_results(tmp_path / "nowhere")


def test_without_pandas_the_error_names_the_extra(results, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(ExperimentError, match=r"pip install 'dp-online-envs\[experiments\]'"):
        load_results(results)


def test_the_experiments_package_does_not_import_pandas():
    code = ("import sys, dp_online_envs.lab.experiments, dp_online_envs.lab.cli; "
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.strip() == "False"
