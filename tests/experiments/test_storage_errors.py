"""A full disk and a read-only results directory: one line naming the path and what to
do, never a half-written file under a finished name, and a resume that completes the
sweep once space is back.

The failures are simulated (``ENOSPC`` at the ``fsync`` of a record after its bytes were
written, as a file system over quota or a network one reports it; ``EROFS`` where the
first file is created), so that the tests run anywhere, without mounting a file system.
"""

from __future__ import annotations

import errno
import json
import os

import pytest

from dp_online_envs.lab import cli
from dp_online_envs.lab.experiments import ResultsStore, run_sweep, stable_view
from dp_online_envs.lab.experiments import store as store_module
from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.store import check_record

REAL_FSYNC = os.fsync


class Disk:
    """``os.fsync`` of the store that fails with ENOSPC from the ``full_after``-th call on
    (the temporary file then holds the record's bytes: a half-finished write)."""

    def __init__(self, full_after: int) -> None:
        self.calls, self.full_after, self.full = 0, full_after, True

    def fsync(self, fd: int) -> None:
        self.calls += 1
        if self.full and self.calls > self.full_after:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        REAL_FSYNC(fd)


def _leftovers(root) -> list[str]:
    """Temporary files and claims left in a results directory."""
    return sorted(p.name for p in (root / "games").glob(".*")) + \
        sorted(p.name for p in (root / "claims").glob("*.claim"))


def test_a_full_disk_mid_sweep_stops_with_one_line_and_the_resume_completes_it(
        small_sweep, tmp_path, monkeypatch, capsys):
    reference = {r["game_id"]: stable_view(r) for r in run_sweep(
        small_sweep, results=tmp_path / "reference", backend="serial", quiet=True).records}
    root = tmp_path / "results"
    sweep_file = tmp_path / "small.json"
    sweep_file.write_text(json.dumps(small_sweep))
    disk = Disk(full_after=5)  # sweep.json, then 4 records
    monkeypatch.setattr(store_module.os, "fsync", disk.fsync)
    argv = ["sweep", str(sweep_file), "--results", str(root), "--backend", "serial", "--quiet"]
    assert cli.main(argv) == cli.EXIT_USAGE
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"dp-online sweep: error: cannot write '{root / 'games'}")
    assert "No space left on device; free space on that file system" in line
    kept = sorted((root / "games").glob("*.json"))
    assert len(kept) == 4 and _leftovers(root) == []  # no temporary file, no claim
    for path in kept:  # every file under a finished name is a complete record
        record = json.loads(path.read_text())
        assert check_record(record, path.stem) is None
        assert stable_view(record) == reference[path.stem]
    # still full: the same one line again, nothing changed
    before = {p.name: p.read_bytes() for p in kept}
    assert cli.main(argv) == cli.EXIT_USAGE
    assert "No space left on device" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in sorted((root / "games").glob("*.json"))} == before
    disk.full = False  # space is back: the resume plays only the missing games
    report = run_sweep(sweep_file, results=root, backend="serial", quiet=True)
    assert (report.played, report.reused) == (len(reference) - 4, 4)
    assert {r["game_id"]: stable_view(r) for r in report.records} == reference
    assert _leftovers(root) == []


def test_a_claim_that_cannot_be_written_is_not_left_behind(tmp_path, monkeypatch):
    store = ResultsStore(tmp_path)
    store.prepare()

    def half(obj, fh):
        fh.write('{"pid": ')
        fh.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(store_module.json, "dump", half)
    with pytest.raises(ExperimentError, match=r"^cannot write '.*g1\.claim': No space left "
                                              r"on device; free space"):
        store.claim("g1")
    assert not list(store.claims_dir.glob("*.claim"))


def _read_only(monkeypatch, *modules):
    """Creating any file fails with EROFS (what a read-only mount does, even for root)."""
    real = os.open

    def refuse(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(store_module.os, "open", refuse)


@pytest.fixture
def finished(small_sweep, tmp_path):
    small_sweep["seeds"] = 1
    root = tmp_path / "results"
    run_sweep(small_sweep, results=root, backend="serial", quiet=True)
    return root


def test_report_into_a_read_only_results_directory_is_one_line(finished, monkeypatch, capsys):
    _read_only(monkeypatch)
    assert cli.main(["report", str(finished)]) == cli.EXIT_USAGE
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == (f"dp-online report: error: cannot write '{finished / 'report.html'}': "
                    "Read-only file system; the file system is read-only: choose a directory "
                    "on a writable one")
    assert not (finished / "report.html").exists()


def test_plot_into_a_read_only_results_directory_is_one_line(finished, monkeypatch, capsys):
    from matplotlib.figure import Figure

    def refuse(self, fname, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(fname))

    monkeypatch.setattr(Figure, "savefig", refuse)
    assert cli.main(["plot", str(finished)]) == cli.EXIT_USAGE
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"dp-online plot: error: cannot write '{finished / 'plots'}")
    assert line.endswith(".png': Read-only file system; the file system is read-only: choose "
                         "a directory on a writable one")
    assert not list((finished / "plots").glob("*"))  # no figure, no temporary file


def test_a_sweep_into_a_read_only_directory_is_refused_before_playing(
        small_sweep, tmp_path, monkeypatch):
    _read_only(monkeypatch)
    with pytest.raises(ExperimentError, match=r"^results directory '.*' is not usable: "
                                              r"Read-only file system; the file system is "
                                              r"read-only: choose a directory"):
        run_sweep(small_sweep, results=tmp_path / "results", backend="serial", quiet=True)
