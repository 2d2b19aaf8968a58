"""The games index (``RESULTS/index/games.index``): load_results is served from it only
while it agrees with every record file; missing, changed, added or replaced records, a
damaged or foreign index, a read-only directory, a crash and a concurrent writer all
leave load_results equal to the table built from the records themselves."""

from __future__ import annotations

import errno
import json
import os
import pathlib
import shutil
import types
import warnings

import pandas as pd
import pytest
import yaml

from dp_online_envs.lab.experiments import export_results, load_records, load_results, run_sweep
from dp_online_envs.lab.experiments import index as index_module
from dp_online_envs.lab.experiments import store as store_module
from dp_online_envs.lab.experiments.store import DamagedResultWarning
from dp_online_envs.lab.experiments.table import games_table

ROOT = pathlib.Path(__file__).resolve().parents[2]
README_SWEEP = ROOT / "examples" / "sweeps" / "price_of_privacy.yaml"


@pytest.fixture(scope="module")
def readme_results(tmp_path_factory):
    """The README's sweep (every learner, counter and epsilon of it) at horizon 16, one
    seed: 33 records whose option columns mix numbers, names and booleans."""
    sweep = yaml.safe_load(README_SWEEP.read_text())
    sweep.update(horizons=[16], seeds=1)
    root = tmp_path_factory.mktemp("readme") / "results"
    assert run_sweep(sweep, results=root, backend="serial", quiet=True).ok
    return root


@pytest.fixture
def results(readme_results, tmp_path):
    """A fresh copy of the README sweep's results, without an index."""
    root = tmp_path / "results"
    shutil.copytree(readme_results, root, ignore=shutil.ignore_patterns("index"))
    return root


def from_records(root) -> pd.DataFrame:
    return games_table(load_records(root))


def same_table(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert list(a.dtypes) == list(b.dtypes) and list(a.columns) == list(b.columns)


def served_without_reading_records(root, monkeypatch) -> pd.DataFrame:
    """load_results with every record read refused: only the index can serve it."""
    def refuse(path):
        raise AssertionError(f"a record was read: {path}")

    with monkeypatch.context() as m:
        m.setattr(index_module, "check_file", refuse)
        return load_results(root)


def test_the_index_is_the_records_table_and_serves_it_without_reading_a_record(
        results, monkeypatch):
    expected = from_records(results)
    assert expected["agent_options.gamma"].map(type).nunique() > 1  # a mixed column
    same_table(load_results(results), expected)  # builds the index
    assert index_module.index_path(results).is_file()
    same_table(served_without_reading_records(results, monkeypatch), expected)


def test_a_missing_record_is_missing_from_the_table(results, monkeypatch):
    load_results(results)
    victim = sorted((results / "games").glob("*.json"))[3]
    victim.unlink()
    table = load_results(results)
    same_table(table, from_records(results))
    assert victim.stem not in set(table["game_id"])
    same_table(served_without_reading_records(results, monkeypatch), table)  # rebuilt


def test_an_added_record_is_in_the_table(results, tmp_path):
    victim = sorted((results / "games").glob("*.json"))[5]
    shutil.move(victim, tmp_path / victim.name)
    assert victim.stem not in set(load_results(results)["game_id"])
    shutil.move(tmp_path / victim.name, victim)  # its old signature: the index never saw it
    table = load_results(results)
    assert victim.stem in set(table["game_id"])
    same_table(table, from_records(results))


def _rewrite_in_place(path: pathlib.Path, old: str, new: str) -> None:
    """Change ``path``'s bytes in place (same inode, same size), its times put back."""
    st = path.stat()
    text = path.read_text()
    assert len(old) == len(new) and text.count(old) == 1
    with open(path, "r+") as fh:
        fh.write(text.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


def test_a_record_changed_in_place_with_its_times_put_back_is_read_again(results):
    load_results(results)
    path = sorted((results / "games").glob("*.json"))[0]
    record = json.loads(path.read_text())
    host = json.dumps(record["host"])
    _rewrite_in_place(path, f'"host": {host}', '"host": "' + "x" * (len(host) - 2) + '"')
    table = load_results(results)
    assert table.loc[table["game_id"] == path.stem, "host"].item() == "x" * (len(host) - 2)
    same_table(table, from_records(results))


def test_a_record_replaced_by_another_file_is_read_again(results):
    load_results(results)
    path = sorted((results / "games").glob("*.json"))[1]
    record = json.loads(path.read_text())
    record["wall_time"] = 123.25
    tmp = path.with_suffix(".new")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, path)
    table = load_results(results)
    assert table.loc[table["game_id"] == path.stem, "wall_time"].item() == 123.25


def test_a_record_changed_into_a_damaged_one_is_skipped_with_a_warning(results):
    load_results(results)
    path = sorted((results / "games").glob("*.json"))[2]
    path.write_text("{}")
    with pytest.warns(DamagedResultWarning, match="left in place"):
        table = load_results(results)
    assert path.stem not in set(table["game_id"]) and path.read_text() == "{}"
    with pytest.warns(DamagedResultWarning, match="left in place"):  # served: warned again
        same_table(load_results(results), table)


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "garbage", "key", "header"])
def test_a_damaged_or_foreign_index_is_rebuilt_from_the_records(results, monkeypatch, damage):
    expected = from_records(results)
    load_results(results)
    path = index_module.index_path(results)
    raw = path.read_bytes()
    if damage == "flip":  # one bit of the table's bytes
        raw = raw[:-200] + bytes([raw[-200] ^ 1]) + raw[-199:]
    elif damage == "truncate":
        raw = raw[: len(raw) // 2]
    elif damage == "empty":
        raw = b""
    elif damage == "garbage":
        raw = os.urandom(len(raw))
    else:
        end = raw.index(b"\n", len(index_module.MAGIC))
        header = json.loads(raw[len(index_module.MAGIC):end])
        if damage == "key":  # written by another version
            header["key"] = "0" * 32
        else:  # the table's columns renamed: a forged header
            header["columns"][5][0] = "forged"
        raw = raw[:len(index_module.MAGIC)] + json.dumps(header).encode() + raw[end:]
    path.write_bytes(raw)
    same_table(load_results(results), expected)
    same_table(served_without_reading_records(results, monkeypatch), expected)  # rewritten


def test_an_index_copied_from_another_results_directory_is_not_served(results, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(results, other)
    (sorted((other / "games").glob("*.json"))[0]).unlink()
    load_results(other)
    (results / "index").mkdir()
    shutil.copy(index_module.index_path(other), index_module.index_path(results))
    same_table(load_results(results), from_records(results))


@pytest.mark.parametrize("kind", ["fifo", "directory", "zero"])
def test_an_index_that_is_no_regular_file_is_never_opened(results, kind):
    path = index_module.index_path(results)
    path.parent.mkdir()
    if kind == "fifo":
        os.mkfifo(path)  # opening it for reading would block
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    same_table(load_results(results), from_records(results))
    assert not path.is_file() or path.is_symlink()  # left as it was, no index written over it


def _read_only(monkeypatch):
    """Creating a file or a directory fails with EROFS (a read-only mount, even for root)."""
    real_open, real_mkdir = os.open, os.mkdir

    def refuse_open(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args, **kwargs)

    def refuse_mkdir(path, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    monkeypatch.setattr(store_module.os, "open", refuse_open)
    monkeypatch.setattr(os, "mkdir", refuse_mkdir)
    del real_mkdir


def _tree(root: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_a_read_only_results_directory_is_read_and_nothing_is_written(results, monkeypatch):
    before = _tree(results)
    with monkeypatch.context() as m:
        _read_only(m)
        same_table(load_results(results), from_records(results))
        same_table(load_results(results), from_records(results))
    assert _tree(results) == before and not (results / "index").exists()


def test_a_stale_index_in_a_read_only_directory_is_not_served(results, monkeypatch):
    load_results(results)
    victim = sorted((results / "games").glob("*.json"))[0]
    victim.unlink()
    index_bytes = index_module.index_path(results).read_bytes()
    with monkeypatch.context() as m:
        _read_only(m)
        table = load_results(results)
    assert victim.stem not in set(table["game_id"])
    assert index_module.index_path(results).read_bytes() == index_bytes  # not rewritten


def test_a_write_that_fails_midway_leaves_no_index_and_no_temporary_file(results, monkeypatch):
    def crash(src, dst):
        raise OSError(errno.EIO, "I/O error")

    with monkeypatch.context() as m:
        m.setattr(store_module.os, "replace", crash)
        same_table(load_results(results), from_records(results))
    assert list((results / "index").iterdir()) == []
    same_table(load_results(results), from_records(results))  # and the next one writes it
    assert index_module.index_path(results).is_file()


def test_a_dead_writers_temporary_file_is_removed_by_the_next_write(results):
    (results / "index").mkdir()
    dead = results / "index" / f".games.{2**22 + 12345}.00ff00ff.tmp"  # no such pid
    dead.write_bytes(b"half an index")
    live = results / "index" / f".games.{os.getpid()}.00ff00ff.tmp"
    live.write_bytes(b"being written")
    same_table(load_results(results), from_records(results))
    assert not dead.exists() and live.exists()


def test_a_record_written_while_the_index_is_built_is_seen_by_the_next_read(results,
                                                                             tmp_path):
    """A sweep writing while a reader rebuilds: the index holds what the reader listed
    and read; the record added after the listing is not in it, and the next read sees
    it (the listing differs) and rebuilds."""
    games = results / "games"
    late = sorted(games.glob("*.json"))[-1]
    shutil.move(late, tmp_path / late.name)
    real = index_module.check_file
    moved = []

    def check_and_write(path):
        if not moved:
            shutil.move(tmp_path / late.name, late)  # the concurrent writer
            moved.append(True)
        return real(path)

    index_module.check_file = check_and_write
    try:
        first = load_results(results)
    finally:
        index_module.check_file = real
    assert late.stem not in set(first["game_id"])
    same_table(load_results(results), from_records(results))
    assert late.stem in set(load_results(results)["game_id"])


def test_a_record_replaced_between_the_listing_and_its_read_is_not_served_stale(results):
    games = results / "games"
    path = sorted(games.glob("*.json"))[0]
    real = index_module.check_file

    def replace_then_read(p):
        if p == path:
            record = json.loads(path.read_text())
            record["wall_time"] = 7.5
            tmp = path.with_suffix(".new")
            tmp.write_text(json.dumps(record))
            os.replace(tmp, path)
        return real(p)

    index_module.check_file = replace_then_read
    try:
        load_results(results)
    finally:
        index_module.check_file = real
    table = load_results(results)
    assert table.loc[table["game_id"] == path.stem, "wall_time"].item() == 7.5
    same_table(table, from_records(results))


def test_a_fifo_in_games_is_skipped_by_the_served_index_without_being_opened(results):
    os.mkfifo(results / "games" / "fifo.json")
    with pytest.warns(DamagedResultWarning, match="a FIFO, not a regular file"):
        first = load_results(results)
    with pytest.warns(DamagedResultWarning, match="a FIFO, not a regular file"):
        same_table(load_results(results), first)


def test_reading_moves_no_record(results):
    (results / "games" / "bad.json").write_text("not json")
    before = sorted(p.name for p in (results / "games").iterdir())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DamagedResultWarning)
        load_results(results)
        load_results(results)
    assert sorted(p.name for p in (results / "games").iterdir()) == before
    assert not (results / "quarantine").exists()


def test_the_readme_sweep_exports_to_parquet_with_stable_types(readme_results, tmp_path):
    """Every learner of the README's sweep in one table: the option columns that mix
    types (gamma: exp3's 0.0, exp2's and private-exp2's names; add_noise: a boolean and
    missing) are text in Parquet, every other column keeps its type."""
    games, curves = export_results(readme_results, tmp_path / "games.parquet")
    back, table = pd.read_parquet(games), load_results(readme_results)
    assert list(back.columns) == list(table.columns) and len(back) == len(table) == 33
    assert set(table["agent"]) == {"hedge", "private-ftrl", "private-exp2", "exp3", "exp2"}
    for column in table.columns:
        kinds = {type(v) for v in table[column] if not pd.isna(v)}
        if table[column].dtype == object and len(kinds) > 1:
            assert {type(v) for v in back[column] if not pd.isna(v)} == {str}, column
            assert [str(v) for v in table[column] if not pd.isna(v)] == \
                [v for v in back[column] if not pd.isna(v)], column
        else:
            pd.testing.assert_series_equal(back[column], table[column], check_dtype=False,
                                           check_exact=True)
    assert len(pd.read_parquet(curves)) == sum(len(r["checkpoints"])
                                               for r in load_records(readme_results))


def test_an_index_that_would_not_decode_to_the_table_is_not_written(results, monkeypatch):
    real = index_module._decode

    def lossy(stored, columns):
        return real(stored, columns).iloc[:, :-1]  # a column lost on the way back

    with monkeypatch.context() as m:
        m.setattr(index_module, "_decode", lossy)
        same_table(load_results(results), from_records(results))
    assert not index_module.index_path(results).exists()


def test_an_index_directory_that_is_a_link_is_not_written_through(results, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (results / "index").symlink_to(elsewhere)
    same_table(load_results(results), from_records(results))
    assert list(elsewhere.iterdir()) == []


def test_a_games_directory_that_cannot_be_listed_is_read_as_the_store_reads_it(results,
                                                                              monkeypatch):
    def unlistable(games):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(games))

    monkeypatch.setattr(index_module, "_listing", unlistable)
    same_table(load_results(results), from_records(results))
    assert not index_module.index_path(results).exists()


def test_the_arrow_file_is_uncompressed_and_starts_aligned(results, monkeypatch):
    """Its buffers are read where they lie: no codec, and the Arrow file at a multiple of
    ALIGNMENT bytes into the index file (the header line padded), which still serves."""
    import pyarrow as pa

    expected = from_records(results)
    load_results(results)
    raw = index_module.index_path(results).read_bytes()
    start = raw.index(b"\n", len(index_module.MAGIC)) + 1
    assert start % index_module.ALIGNMENT == 0 and raw[start:start + 6] == b"ARROW1"
    reader = pa.ipc.open_file(pa.py_buffer(raw[start:]))
    assert reader.num_record_batches == 1
    batch = reader.get_batch(0)
    assert all(buffer is None or buffer.address % 8 == 0 for column in batch.columns
               for buffer in column.buffers())
    stored_size = sum(column.nbytes for column in batch.columns)
    assert len(raw) - start >= stored_size  # no column compressed
    same_table(served_without_reading_records(results, monkeypatch), expected)


def _header(root) -> dict:
    raw = index_module.index_path(root).read_bytes()
    return json.loads(raw[len(index_module.MAGIC):raw.index(b"\n", len(index_module.MAGIC))])


def served_without_listing(root, monkeypatch) -> pd.DataFrame:
    """load_results with the names of games/ refused: only the index's names serve."""
    def refuse(*args):
        raise AssertionError("games/ was listed")

    with monkeypatch.context() as m:
        m.setattr(os, "listdir", refuse)
        return load_results(root)


def test_a_settled_directory_is_not_listed_again_and_an_added_record_is_still_seen(
        results, monkeypatch, tmp_path):
    monkeypatch.setattr(index_module, "SETTLED_NS", -10**15)  # every time is settled
    victim = sorted((results / "games").glob("*.json"))[4]
    shutil.move(victim, tmp_path / victim.name)
    first = load_results(results)
    assert _header(results)["directory"] is not None
    same_table(served_without_listing(results, monkeypatch), first)
    shutil.move(tmp_path / victim.name, victim)  # the directory's times change
    table = load_results(results)
    assert victim.stem in set(table["game_id"])
    same_table(table, from_records(results))


def test_a_directory_changed_in_the_tick_of_its_last_change_is_listed_again(
        results, monkeypatch, tmp_path):
    """A file system whose clock has not moved since games/ last changed: adding a
    record leaves its times as they were, and its recent times are never taken as the
    sign of an unchanged directory."""
    games = results / "games"
    real_fstat, inode = os.fstat, games.stat().st_ino
    frozen = index_module.time.time_ns()

    def fstat(fd):
        st = real_fstat(fd)
        if st.st_ino != inode:
            return st
        return types.SimpleNamespace(st_dev=st.st_dev, st_ino=st.st_ino,
                                     st_mtime_ns=frozen, st_ctime_ns=frozen)

    monkeypatch.setattr(os, "fstat", fstat)
    victim = sorted(games.glob("*.json"))[6]
    shutil.move(victim, tmp_path / victim.name)
    assert victim.stem not in set(load_results(results)["game_id"])
    assert _header(results)["directory"] is None
    shutil.move(tmp_path / victim.name, victim)  # the same (frozen) times
    assert victim.stem in set(load_results(results)["game_id"])


def test_an_index_whose_directory_has_settled_since_is_given_its_times(results,
                                                                      monkeypatch):
    expected = from_records(results)
    load_results(results)  # games/ was just copied: its times are recent
    assert _header(results)["directory"] is None
    monkeypatch.setattr(index_module, "SETTLED_NS", -10**15)
    same_table(load_results(results), expected)  # served, its header rewritten
    assert _header(results)["directory"] is not None
    same_table(served_without_listing(results, monkeypatch), expected)
