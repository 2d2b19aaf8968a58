"""The games index: the games table of a results directory kept in one columnar file
beside its records, so that reading it costs about what reading one Parquet file does.

Layout::

    RESULTS/index/games.index    one line of JSON (the header), then an Arrow IPC file

The Arrow file holds the games table as :func:`~.table.load_results` builds it from the
records (one row per usable record, sorted by game id), column by column (a column that
mixes numbers, names and booleans, as an option of several learners does, as the JSON
text of each value, dictionary-encoded), uncompressed and starting at a multiple of
:data:`ALIGNMENT` bytes into the file (the header's line padded with spaces): reading it
is reading its bytes, without decompressing or copying them. The header holds a CRC-32
of itself and the Arrow bytes, the reader's key (:func:`reader_key`: the index format,
the record schema and its keys, the package's version, the table's own version), each
column's name and encoding, the files of ``games/`` that are not usable records with
the reason, and a digest of the listing the table was built from: the name of every
``*.json`` entry of ``games/`` and the signature of each -- size, modification and
change times (ns), inode, mode --, for the records as ``fstat`` gave them for the very
bytes that were read.

Never trusted over the records. :func:`indexed_table` lists ``games/`` and looks at
every entry (one ``stat`` each, nothing opened), and serves the index only if its
checksum and key are right and the listing's digest is the one the index was built
from. Otherwise -- no index, an index of another reader or version, a damaged one, a
record missing, changed (any write changes a file's change time, which a user cannot
set back; a sweep replaces a record by another inode), added, renamed or set aside --
the records win: the table is built from them, and the index written anew. Files of
``games/`` that are not usable records are skipped with their
:class:`~.store.DamagedResultWarning` either way (the index keeps their reasons), and a
FIFO or a device there is never opened.

The names of ``games/`` are not read again while the directory is as it was when they
were listed for the index (the header keeps its device, inode, modification and change
times; the Arrow file's metadata, the names; every name is still looked at): adding,
removing or renaming an entry sets both times of the directory to the clock's, and a
user cannot set the change time back -- provided the times were at least
:data:`SETTLED_NS` older than the clock when the names were listed, for a file system's
clock moves in ticks, and an entry added in the tick of the change before leaves the
times as they were. A directory changed more recently is listed by every reader until
one finds it settled and writes its times in the header. (The times are compared with
the reader's clock: on a network file system whose server's clock runs behind it by
more than :data:`SETTLED_NS`, a recent change may pass for a settled one.)

Writing. The index is written only when it decodes to exactly the table built from the
records (same columns, dtypes and values), atomically (:func:`~.store.atomic_write`: a
temporary file, fsynced, then renamed; a crash leaves the former index or a temporary
file that the next write removes once its writer is dead). Two readers that rebuild at
once each write a complete index of what they read; either is right, and a later
change of the records is seen by the next reader. Where the index cannot be written --
a read-only results directory, a full disk, ``index`` not a directory, pyarrow not
installed -- the table is returned all the same and nothing is written. Reading never
moves, changes or quarantines a record; the index is the only file a reader writes.
"""

from __future__ import annotations

import array
import functools
import hashlib
import json
import os
import pathlib
import stat
import time
import zlib
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.game import SCHEMA_VERSION
from dp_online_envs.lab.experiments.store import (
    OPTIONAL_KEYS,
    REQUIRED_KEYS,
    _alive,
    _pid_of,
    atomic_write,
    check_file,
    load_records,
    read_regular_stat,
    warn_skipped,
)
from dp_online_envs.startup import installed_version

__all__ = ["INDEX_FORMAT", "MAX_INDEX_BYTES", "index_path", "indexed_table", "reader_key"]

#: The version of the index's layout (:func:`reader_key` holds it).
INDEX_FORMAT = 3
#: The first bytes of an index file.
MAGIC = b"dp-online-envs games index\n"
#: The largest index file read (about 1 kB a game: millions of games fit).
MAX_INDEX_BYTES = 2**32
#: The Arrow file starts this many bytes into the index file, times a whole number: its
#: buffers are read where they lie, aligned as Arrow's are in a file of its own.
ALIGNMENT = 64
#: Where the index lives in a results directory.
INDEX_DIR, INDEX_NAME = "index", "games.index"
#: Builds the games table (a ``pandas.DataFrame``, one row per record sorted by
#: ``game_id``, a default index) from usable records.
TableBuilder = Callable[[list[dict[str, Any]]], Any]
#: How old (ns) the times of ``games/`` must be when it is listed for its listing to
#: be used again while they stay (see the module docstring).
SETTLED_NS = 3 * 10**9


class Listing(NamedTuple):
    """The ``*.json`` entries of ``games/`` and what they lead to."""

    #: Their names, sorted.
    names: list[str]
    #: The signature of each, ``(size, mtime_ns, ctime_ns, inode, mode)``: five entries
    #: of one flat array of 64-bit integers (``5 i .. 5 i + 4`` for the ``i``-th name).
    signatures: array.array
    #: ``[device, inode, mtime_ns, ctime_ns]`` of ``games/`` itself, taken before its
    #: names were read, when its times were settled (:func:`_directory`); else ``None``.
    directory: list[int] | None = None


def index_path(root: str | os.PathLike[str]) -> pathlib.Path:
    """The index file of the results directory ``root``."""
    return pathlib.Path(root) / INDEX_DIR / INDEX_NAME


@functools.cache
def reader_key(table_key: str) -> str:
    """What an index must have been written by to be read here: a digest of the index
    format, the record schema and keys (what makes a record usable), the package's
    version and ``table_key`` (the table's own version, from its builder)."""
    parts = [INDEX_FORMAT, SCHEMA_VERSION, list(REQUIRED_KEYS), list(OPTIONAL_KEYS),
             installed_version(), table_key]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


def _signature(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode


def _listing(games: pathlib.Path) -> Listing:
    """Every ``*.json`` entry of ``games/`` with the signature of what it leads to (one
    ``stat`` each, relative to the directory; nothing is opened). An entry that
    vanished meanwhile has the signature ``(-1, -1, -1, -1, -1)``."""
    fd = _open_directory(games)
    try:
        directory = _directory(fd)
        names = [name for name in os.listdir(fd) if name.endswith(".json")]
        names.sort()
        return Listing(names, _signatures(fd, names), directory)
    finally:
        os.close(fd)


def _known_listing(games: pathlib.Path, directory: list[int], names: list[str]
                   ) -> Listing | None:
    """:func:`_listing`, its names ``names`` not read again, if ``games/`` is still as
    ``directory`` (the settled signature it had when ``names`` were listed): no entry
    has been added, removed or renamed since. ``None`` if it has changed."""
    fd = _open_directory(games)
    try:
        if _directory(fd) != directory:
            return None
        return Listing(names, _signatures(fd, names), directory)
    finally:
        os.close(fd)


def _open_directory(games: pathlib.Path) -> int:
    return os.open(games, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
                   | getattr(os, "O_CLOEXEC", 0))


def _directory(fd: int) -> list[int] | None:
    """``[device, inode, mtime_ns, ctime_ns]`` of the open directory ``fd``, if its
    times are at least :data:`SETTLED_NS` older than the clock; else ``None``."""
    now = time.time_ns()
    st = os.fstat(fd)
    if max(st.st_mtime_ns, st.st_ctime_ns) > now - SETTLED_NS:
        return None
    return [st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns]


def _signatures(fd: int, names: list[str]) -> array.array:
    """The signature of each of ``names`` in the open directory ``fd``."""
    signatures = array.array("q")
    extend, lookup = signatures.extend, os.stat
    for name in names:
        try:
            st = lookup(name, dir_fd=fd)
        except OSError:
            extend(_VANISHED)
            continue
        extend((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode))
    return signatures


_VANISHED = (-1, -1, -1, -1, -1)


def _digest(listing: Listing) -> str:
    """A digest of the names and signatures of a listing."""
    h = hashlib.sha256(_joined(listing.names))
    h.update(listing.signatures.tobytes())
    return h.hexdigest()


def _joined(names: list[str]) -> bytes:
    return "\0".join(names).encode("utf-8", "surrogateescape")


def _split(joined: bytes) -> list[str]:
    return joined.decode("utf-8", "surrogateescape").split("\0") if joined else []


def indexed_table(root: str | os.PathLike[str], build: TableBuilder, table_key: str) -> Any:
    """The games table of the results directory ``root``: from its index when the index
    agrees with every record (see the module docstring), else built from the records by
    ``build`` and the index written anew (where it can be).

    Files of ``games/`` that are not usable records are skipped with a
    :class:`~.store.DamagedResultWarning` and left in place.

    Args:
        root: A results directory (an existing directory).
        build: Builds the table from records (:data:`TableBuilder`).
        table_key: The table's version: an index written for another is not read.

    Raises:
        ExperimentError: ``root`` holds no usable record.
    """
    root = pathlib.Path(root)
    games = root / "games"
    key = reader_key(table_key)
    index = _open(index_path(root), key)
    try:
        listing = None
        if not games.is_dir():
            listing = Listing([], array.array("q"))
        elif index is not None and index.header.get("directory") is not None:
            listing = _known_listing(games, index.header["directory"], index.names())
        if listing is None:
            listing = _listing(games)
    except OSError:  # games/ cannot be listed here: the store's reader says what it can
        return build(load_records(root))
    served = _serve(index, listing)
    if served is not None:
        table, skipped = served
        for name, reason in skipped:
            warn_skipped(games / name, reason, stacklevel=3)
        if listing.directory is not None and listing.directory != index.header.get(
                "directory"):  # settled since it was written: its names serve again
            _store(root, {**index.header, "directory": listing.directory}, index.payload)
        return table
    records: list[dict[str, Any]] = []
    read: dict[str, tuple[int, int, int, int, int]] = {}
    skipped: dict[str, str] = {}
    for name in listing[0]:
        record, reason, st = check_file(games / name)
        if record is not None:
            records.append(record)
            read[name] = _signature(st)
        elif reason is not None:
            skipped[name] = reason
            warn_skipped(games / name, reason, stacklevel=3)
    if not records:
        raise ExperimentError(f"results directory {str(root)!r} holds no finished game "
                              "(expected games/*.json written by 'dp-online sweep')")
    table = build(records)
    # the listing of what was read: a record replaced after the listing was taken has
    # the signature of the bytes read, which the next reader's listing will not match
    listed = array.array("q", listing.signatures)
    for i, name in enumerate(listing.names):
        if name in read:
            listed[5 * i:5 * i + 5] = array.array("q", read[name])
    _write(root, table, listing._replace(signatures=listed), skipped, key)
    return table


# --------------------------------------------------------------------------- reading
class _Index(NamedTuple):
    """An index file whose checksum and key are right."""

    header: dict[str, Any]
    payload: memoryview
    stored: Any  # its Arrow table

    def names(self) -> list[str]:
        """The names of the listing it was built from."""
        return _split((self.stored.schema.metadata or {}).get(b"names", b""))


def _open(path: pathlib.Path, key: str) -> _Index | None:
    """The index file at ``path``, if there is one and its checksum and key are right."""
    try:
        header, payload = _read(path, key)
        return _Index(header, payload, _from_ipc(payload))
    except Exception:  # noqa: BLE001 - any fault of the index: the records win
        return None


def _serve(index: _Index | None, listing: Listing) -> tuple[Any, list[tuple[str, str]]] | None:
    """``(table, skipped files and reasons)`` from ``index`` if it agrees with
    ``listing``, else ``None``."""
    if index is None:
        return None
    try:
        if index.header["listing"] != _digest(listing):
            return None  # a file added, removed, renamed, changed or replaced
        table = _decode(index.stored, index.header["columns"])
        skipped = list(index.header["skipped"].items())
    except Exception:  # noqa: BLE001 - any fault of the index: the records win
        return None
    return table, skipped


def _read(path: pathlib.Path, key: str) -> tuple[dict[str, Any], memoryview]:
    """The header and the Arrow bytes of the index file (a view of the bytes read, not
    a copy), if its magic, key and checksum are right (``ValueError`` otherwise;
    ``OSError`` when it cannot be read). Nothing but a regular file is opened, read at
    the size it has (:func:`~.store.read_regular_stat`); a file that changed meanwhile
    fails the checksum."""
    raw, _ = read_regular_stat(path, MAX_INDEX_BYTES)
    if not raw.startswith(MAGIC):
        raise ValueError("not an index")
    end = raw.index(b"\n", len(MAGIC))
    header = json.loads(raw[len(MAGIC):end])
    payload = memoryview(raw)[end + 1:]
    checksum = header.pop("checksum", None)
    if header.get("key") != key or checksum != _checksum(header, payload):
        raise ValueError("another reader's index, or a damaged one")
    return header, payload


def _checksum(header: dict[str, Any], payload: bytes | memoryview) -> int:
    """The CRC-32 of the header (its other fields) and the Arrow bytes: it tells a
    damaged index (a torn or flipped byte); whoever can write the directory can write
    an index as well as a record, which the listing's digest ties the index to."""
    return zlib.crc32(payload, zlib.crc32(json.dumps(header, sort_keys=True).encode()))


def _decode(stored: Any, columns: list[list[str]]) -> Any:
    """The games table from the index's table (columns ``c0, c1, ...``) and its list of
    ``[name, encoding]``."""
    if stored.column_names != [f"c{i}" for i in range(len(columns))]:
        raise ValueError("the index's columns are not its header's")
    kinds = [kind for _, kind in columns]
    frame = stored.select([i for i, kind in enumerate(kinds) if kind == "value"]
                          ).to_pandas(use_threads=False)
    for i, kind in enumerate(kinds):
        if kind == "json":  # dictionary-encoded: each distinct text decoded once
            coded = stored.column(i).combine_chunks()
            values = np.empty(len(coded.dictionary), dtype=object)
            values[:] = [json.loads(text) for text in coded.dictionary.to_pylist()]
            frame.insert(i, f"c{i}", values[coded.indices.to_numpy()])
    frame.columns = [name for name, _ in columns]
    return frame


# --------------------------------------------------------------------------- writing
def _encode(table: Any) -> tuple[list[Any], list[list[str]]] | None:
    """The index columns of ``table`` (``c0, c1, ...``) and the list of ``[name,
    encoding]``; ``None`` for a table the index cannot hold.

    Encodings: ``value`` for a column of numbers, booleans or text (``pandas``' string
    dtype, or an object column of strings only), stored as Arrow stores it; ``json``
    for any other object column (each value as its JSON text: ``NaN`` for a missing
    value, ``null`` for ``None``, so a mix of numbers, names and booleans comes back
    as it was). :func:`_write` checks that the index decodes to ``table`` before it
    writes it."""
    import pandas as pd
    import pyarrow as pa

    if not len(table.columns) or table.columns[0] != "game_id":
        return None
    arrays, columns = [], []
    for name in table.columns:
        if not isinstance(name, str):
            return None
        column = table[name]
        dtype = column.dtype
        if (isinstance(dtype, pd.StringDtype) or dtype.kind in "bif"
                or (dtype.kind == "O" and all(type(v) is str for v in column))):
            arrays.append(pa.array(column, from_pandas=isinstance(dtype, pd.StringDtype)))
            columns.append([name, "value"])
        elif dtype.kind == "O" and all(v is None for v in column):
            arrays.append(pa.nulls(len(column)))  # Arrow's nulls come back as None
            columns.append([name, "value"])
        elif dtype.kind == "O":
            values = column.tolist()
            if any(v is not None and type(v) not in (str, bool, int, float) for v in values):
                return None
            arrays.append(pa.array([json.dumps(v) for v in values], type=pa.string())
                          .dictionary_encode())
            columns.append([name, "json"])
        else:
            return None
    return arrays, columns


def _to_ipc(table: Any) -> bytes:
    """``table`` as an Arrow IPC file, uncompressed: read back without parsing or
    decompressing, its buffers used where they lie, the cheapest columnar file to load."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _from_ipc(payload: bytes | memoryview) -> Any:
    import pyarrow as pa

    return pa.ipc.open_file(pa.py_buffer(payload),
                            options=pa.ipc.IpcReadOptions(use_threads=False)).read_all()


def _write(root: pathlib.Path, table: Any, listing: Listing, skipped: dict[str, str],
           key: str) -> None:
    """Write the index of ``table`` and ``listing``, where it can be; nothing when it
    cannot (see the module docstring), or when the index would not decode to
    ``table`` exactly."""
    try:
        import pyarrow as pa
    except ImportError:
        return
    encoded = _encode(table)
    if encoded is None:
        return
    arrays, columns = encoded
    payload = _to_ipc(pa.Table.from_arrays(arrays, names=[f"c{i}" for i in
                                                          range(len(columns))],
                                           metadata={b"names": _joined(listing.names)}))
    try:
        back = _decode(_from_ipc(payload), columns)
    except Exception:  # noqa: BLE001
        return
    if not (back.equals(table) and list(back.columns) == list(table.columns)
            and list(back.dtypes) == list(table.dtypes)):
        return
    _store(root, {"key": key, "columns": columns, "listing": _digest(listing),
                  "skipped": skipped, "directory": listing.directory}, payload)


def _store(root: pathlib.Path, fields: dict[str, Any], payload: bytes | memoryview) -> None:
    """Write the index file of header ``fields`` and Arrow bytes ``payload``, where it
    can be (nothing otherwise)."""
    header = json.dumps({**fields, "checksum": _checksum(fields, payload)},
                        separators=(",", ":")).encode()
    # spaces after the header's JSON: the Arrow file starts at a multiple of ALIGNMENT
    head = MAGIC + header + b" " * (-(len(MAGIC) + len(header) + 1) % ALIGNMENT) + b"\n"
    directory = root / INDEX_DIR
    try:
        directory.mkdir(exist_ok=True)
        if not stat.S_ISDIR(os.lstat(directory).st_mode):
            return  # a link or a file in the way: not this reader's to follow
        for tmp in directory.glob(".*.tmp"):  # left by writers that died mid-write
            pid = _pid_of(tmp.name)
            if pid is None or not _alive(pid):
                tmp.unlink(missing_ok=True)
        atomic_write(directory / INDEX_NAME, head + bytes(payload))
    except (OSError, ExperimentError):
        return
