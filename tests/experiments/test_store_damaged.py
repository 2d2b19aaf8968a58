"""Damaged results files, the schema version, unusable results paths and file modes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings

import pytest

from dp_online_envs.lab.experiments import (
    SCHEMA_VERSION,
    DamagedResultWarning,
    ExperimentError,
    ResultsStore,
    load_records,
    run_sweep,
    stable_view,
)
from dp_online_envs.lab.experiments import store as store_module
from dp_online_envs.lab.experiments.report import write_report

from .conftest import SMALL
from .test_runner import FIELDS

CLI = [sys.executable, "-m", "dp_online_envs.lab.cli"]


def _small() -> dict:
    return json.loads(json.dumps(SMALL))


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A results directory holding the 15 games of the small sweep."""
    root = tmp_path_factory.mktemp("finished")
    report = run_sweep(_small(), results=root, backend="serial", quiet=True)
    assert report.played == 15
    return root


@pytest.fixture
def results(finished, tmp_path):
    """A fresh copy of the finished results directory."""
    root = tmp_path / "results"
    shutil.copytree(finished, root)
    return root


def _one_game(root):
    path = sorted((root / "games").glob("*.json"))[0]
    return path, json.loads(path.read_text())


def _without(record, key):
    return {k: v for k, v in record.items() if k != key}


DAMAGE = {
    "not UTF-8": (lambda r: b'{"game_id": "\xff\xfe"}', "not UTF-8 text"),
    "truncated JSON": (lambda r: json.dumps(r).encode()[:50], "not JSON"),
    "JSON list": (lambda r: b"[1, 2, 3]", "JSON list, expected an object"),
    "only the game id": (lambda r: json.dumps({"game_id": r["game_id"],
                                               "schema_version": SCHEMA_VERSION}).encode(),
                         "missing key(s) ['sweep', 'tags'"),
    "bare game id": (lambda r: json.dumps({"game_id": r["game_id"]}).encode(),
                     "no schema_version"),
    "missing regret": (lambda r: json.dumps(_without(r, "regret")).encode(),
                       "missing key(s) ['regret']"),
    "no schema version": (lambda r: json.dumps(_without(r, "schema_version")).encode(),
                          "no schema_version (written before records carried one"),
    "unknown schema version": (lambda r: json.dumps({**r, "schema_version": 99}).encode(),
                               f"unknown schema_version 99 (this version reads {SCHEMA_VERSION})"),
    "another game's record": (lambda r: json.dumps({**r, "game_id": "0" * 24}).encode(),
                              "game_id '000000000000000000000000' does not match the file"),
    "regret is text": (lambda r: json.dumps({**r, "regret": "low"}).encode(),
                       "regret='low', expected a number"),
    "agent options not an object": (lambda r: json.dumps({**r, "agent_options": [1]}).encode(),
                                    "agent_options=[1], expected an object"),
    "curves of unequal length": (
        lambda r: json.dumps({**r, "regret_curve_lo": r["regret_curve_lo"][:-1]}).encode(),
        "must be lists of equal length"),
}


def test_a_record_written_before_agent_options_is_still_read(results):
    _, record = _one_game(results)
    assert store_module.check_record(_without(record, "agent_options")) is None
    assert store_module.check_record(record) is None


def test_required_keys_are_what_play_game_writes():
    assert set(store_module.REQUIRED_KEYS) | set(store_module.OPTIONAL_KEYS) == FIELDS
    assert not set(store_module.REQUIRED_KEYS) & set(store_module.OPTIONAL_KEYS)


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_a_damaged_file_is_quarantined_once_and_its_game_replayed(results, kind):
    damage, reason = DAMAGE[kind]
    path, record = _one_game(results)
    bad = damage(record)
    path.write_bytes(bad)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = run_sweep(_small(), results=results, backend="serial", quiet=True)
    damaged = [w for w in caught if issubclass(w.category, DamagedResultWarning)]
    assert len(damaged) == 1
    message = str(damaged[0].message)
    assert str(path) in message and reason in message, message
    assert (again.played, again.reused, again.ok) == (1, 14, True)
    moved = results / "quarantine" / path.name
    assert moved.read_bytes() == bad  # set aside as it was
    replayed = json.loads(path.read_text())
    assert stable_view(replayed) == stable_view(record)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing left to warn about
        assert len(load_records(results)) == 15


def test_a_report_survives_damaged_files(results, tmp_path):
    paths = sorted((results / "games").glob("*.json"))
    paths[0].write_bytes(b"\x80\x81")
    paths[1].write_text("{}")
    with pytest.warns(DamagedResultWarning) as caught:
        out = write_report(results, tmp_path / "report.html", references=False)
    assert sorted(str(w.message).split(":")[0] for w in caught) == sorted(map(str, paths[:2]))
    assert "<p class=meta>13 games in " in out.read_text()
    assert all("skipped (left in place" in str(w.message) for w in caught)
    assert not (results / "quarantine").exists()  # a report only reads: it moves nothing
    assert paths[0].read_bytes() == b"\x80\x81" and paths[1].read_text() == "{}"


def test_the_same_file_damaged_twice_keeps_both_copies(results):
    path, _ = _one_game(results)
    for text in ("[1]", "[2]"):
        path.write_text(text)
        with pytest.warns(DamagedResultWarning):
            ResultsStore(results).load()
    assert sorted(p.read_text() for p in (results / "quarantine").iterdir()) == ["[1]", "[2]"]


def test_the_cli_warns_in_one_line_and_resumes(results):
    path, _ = _one_game(results)
    path.write_bytes(b"\xff")
    sweep = results.parent / "small.json"
    sweep.write_text(json.dumps(_small()))
    out = subprocess.run(CLI + ["sweep", str(sweep), "--results", str(results), "--quiet",
                                "--backend", "serial"],
                         check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [
        f"dp-online: warning: {path}: not UTF-8 text (byte 0); not a usable record, moved to "
        f"{results / 'quarantine' / path.name} (its game will be played again)"]
    assert "1 games played, 14 reused, 0 failed" in out.stdout


# ------------------------------------------------------------ unusable --results
def test_a_results_path_that_is_a_file_is_an_experiment_error(tmp_path):
    target = tmp_path / "taken"
    target.write_text("not a directory")
    for root in (target, target / "sub"):
        with pytest.raises(ExperimentError, match=f"results directory '{root}' is not usable: "
                                                  f"'{target}' is not a directory"):
            run_sweep(_small(), results=root, backend="serial", quiet=True)
    assert target.read_text() == "not a directory"


def test_a_directory_that_refuses_files_is_an_experiment_error(tmp_path, monkeypatch):
    def refuse(directory, stem, suffix):
        raise PermissionError(13, "Permission denied", str(directory))

    monkeypatch.setattr(store_module, "_create_unique", refuse)
    with pytest.raises(ExperimentError, match=f"'{tmp_path}' is not usable: Permission denied; "
                                              "choose a directory this user can write to"):
        ResultsStore(tmp_path).prepare()


@pytest.mark.parametrize("command", [
    ["sweep", "{sweep}", "--results", "{bad}"],
    ["sweep", "{sweep}", "--results", "{bad}", "--dry-run"],
    ["run", "DPFullInfo-Experts-v0", "hedge", "--horizon", "20", "--seeds", "1",
     "--results", "{bad}"],
])
def test_the_cli_reports_an_unusable_results_path_in_one_line(tmp_path, command):
    blocker = tmp_path / "somefile"
    blocker.write_text("")
    sweep = tmp_path / "small.json"
    sweep.write_text(json.dumps(_small()))
    args = [a.format(sweep=sweep, bad=blocker / "sub") for a in command]
    out = subprocess.run(CLI + args, check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.splitlines() == [
        f"dp-online {command[0]}: error: results directory '{blocker / 'sub'}' is not usable: "
        f"'{blocker}' is not a directory (expected a writable directory)"]


# ------------------------------------------------------------------ file modes
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640)])
def test_results_files_follow_the_umask_like_open(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        run_sweep(dict(_small(), seeds=1), results=tmp_path, backend="serial", quiet=True)
    finally:
        os.umask(old)
    files = [tmp_path / "sweep.json", *(tmp_path / "games").glob("*.json")]
    assert len(files) == 6
    assert {f.stat().st_mode & 0o777 for f in files} == {mode}


def test_a_file_that_cannot_be_moved_is_skipped_with_a_warning(results, monkeypatch):
    path, _ = _one_game(results)
    path.write_text("[]")

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", str(src))

    monkeypatch.setattr(store_module.os, "rename", refuse)
    with pytest.warns(DamagedResultWarning, match="could not move it to .*Permission denied"):
        records = ResultsStore(results).load()
    assert len(records) == 14 and path.read_text() == "[]"
