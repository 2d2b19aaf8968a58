"""The results directory: one small JSON file per finished game, written atomically.

Layout::

    RESULTS/
      sweep.json              the last sweep run into this directory (as given)
      games/<game_id>.json    one record per finished game
      claims/<game_id>.claim  a game being played right now (pid and host of its player)
      quarantine/             files of games/ that were not usable records, set aside
      index/games.index       the games table, kept by ``load_results`` (see .index)
      plots/                  figures written by ``dp-online plot``

A record is written to a temporary file in ``games/`` (named with the writer's pid),
flushed and fsynced, then moved over its final name with ``os.replace``, so a file named
``<game_id>.json`` is always complete: killing a sweep loses at most the games in
flight, and nothing already written is damaged. Running the sweep again skips every
game whose file holds a usable record. Temporary files of dead writers are removed on
the next run. Files are created like ``open()`` would (mode ``0o666`` less the umask:
``0o644`` under the usual umask), so the group can read the results.

Damaged files. A file of ``games/`` that is not a usable record -- not UTF-8, not JSON,
JSON that is not an object, a record without a key of :data:`REQUIRED_KEYS`, a
``game_id`` that is not the file's name, or a ``schema_version`` other than
:data:`SCHEMA_VERSION` (records written before versions were recorded have none) -- is
moved to ``quarantine/`` by a sweep, with one :class:`DamagedResultWarning` naming it
and the reason, and its game counts as not played (the sweep plays it again). Commands
that only read (``report``, ``export``, ``plot``, :func:`load_records`) move nothing:
they skip such a file with the same warning and leave it in place (an older install
reading a directory shared with a newer one leaves the newer records alone). Nothing
stops on such a file: neither a resume nor a report. A file that is not a regular file
(a FIFO, a device, a socket, or a symbolic link to one) or is larger than
:data:`MAX_RECORD_BYTES` is such a file too: it is never read (so a FIFO cannot hang a
report, nor a link to ``/dev/zero`` fill the memory).

Written files. :func:`atomic_write` (records, reports, exported tables, grading and
leaderboard pages) writes only over a regular file or a new name: it refuses a symbolic
link, a device, a FIFO or a directory in the way with one line naming it (so ``-o
/dev/null`` never replaces the system's ``/dev/null`` with a file), and a file name
longer than the file system takes, before any temporary file is made.

Another game's record. A record is served for a game only if the settings it was
played with -- the seed scheme, env id and version, the env's resolved options, the
agent and its options, epsilon, delta, horizon and seed index
(:data:`~.game.IDENTITY_FIELDS`) -- are the game's (:meth:`ResultsStore.usable_for`);
otherwise it is quarantined the same way, the warning naming each setting that differs,
and the game is played again. (The game id hashes these settings, so this happens only
when a record was written by code that resolved them differently.)

Claims. Before playing a game, a sweep creates ``claims/<game_id>.claim`` with
``O_CREAT | O_EXCL`` (exactly one process can create it) holding its pid and host, and
removes it once the record is written or the game failed. A second sweep on the same
directory leaves claimed games alone and waits for their records, so no game is played
twice. A claim whose process is dead (same host, pid gone, or the pid now belongs to
a process started at another time than the claimant: the claim records its process's
start time where ``/proc`` gives it) is stale: the next sweep takes it over. Claiming runs under an
``fcntl`` lock on ``claims/.lock`` (where
``fcntl`` exists) so two sweeps cannot both take over the same stale claim. A claim
made on another host is never considered stale: if that sweep is dead, delete the file.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import pathlib
import reprlib
import secrets
import socket
import stat
import time
import warnings
from collections.abc import Iterable, Iterator
from typing import Any

from dp_online_envs.lab.experiments.errors import ExperimentError

# SCHEMA_VERSION, the version of the record layout written into every record as
# ``schema_version``, is defined with the record in .game; records with another (or no)
# version are quarantined here and their games replayed.
from dp_online_envs.lab.experiments.game import (
    SCHEMA_VERSION,
    GameSpec,
    jsonable,
    record_id_mismatch,
    settings_mismatch,
)

#: Keys every record of :data:`SCHEMA_VERSION` has (written by ``play_game``).
REQUIRED_KEYS = (
    "game_id", "sweep", "tags", "seed_scheme", "env_id", "env_version", "env_feedback",
    "feedback", "env_kwargs", "env_options", "agent",
    "agent_label", "agent_kwargs", "agent_feedback", "private", "paper", "epsilon", "delta",
    "privacy", "privacy_epsilon", "privacy_delta", "privacy_mechanism", "horizon",
    "seed_index", "env_seed", "agent_seed", "rounds", "regret", "regret_lo", "regret_hi",
    "exact", "pseudo_regret", "learner_loss", "comparator_lo", "comparator_hi", "checkpoints",
    "regret_curve_lo", "regret_curve_hi", "clipped_feedback", "projected_actions", "version",
    "schema_version", "wall_time", "finished_at", "host",
)
#: Keys ``play_game`` writes that older records of the same schema may lack (readers
#: fall back: ``counterpart`` is then the agent class's declared one; a record without
#: ``vectorized`` was played one game at a time; ``switches``, the number of rounds whose
#: action differs from the previous round's, is then unknown; ``agent_options``, the
#: agent's options with their defaults resolved, is then known only as ``agent_kwargs``).
#: ``seed_secret_sha256``, the digest of the seeds' secret (``None`` without one), lets a
#: reader recompute the game id from the record: records that carry it are checked
#: against their id (:func:`~.game.record_id_mismatch`), older ones cannot be.
OPTIONAL_KEYS = ("counterpart", "vectorized", "switches", "agent_options",
                 "seed_secret_sha256")
#: Seconds between two looks at games claimed by another sweep.
CLAIM_POLL_SECONDS = 0.5

_TMP_SUFFIX = ".tmp"

_NO_SPACE = ("free space on that file system (or choose another directory) and run the "
             "command again: finished work is kept")
_NOT_WRITABLE = "choose a directory this user can write to (or fix its permissions)"
#: What to do about a write that failed, by ``errno``.
STORAGE_ADVICE = {
    errno.ENOSPC: _NO_SPACE,
    errno.EDQUOT: _NO_SPACE,
    errno.EFBIG: _NO_SPACE,
    errno.EROFS: "the file system is read-only: choose a directory on a writable one",
    errno.EACCES: _NOT_WRITABLE,
    errno.EPERM: _NOT_WRITABLE,
    errno.ENOTDIR: "a part of the path is a regular file: choose another path",
    errno.EISDIR: "that path is a directory: give a file name",
    errno.EEXIST: "a file is in the way of a directory of that path: choose another path",
    errno.ENAMETOOLONG: "a name in that path is longer than the file system allows: "
                        "choose a shorter one",
}
#: The largest file of ``games/`` read as a record (a record is a few kilobytes: its
#: curves have one point per checkpoint, about 2 log2 T); a larger one is not a record.
MAX_RECORD_BYTES = 16 * 2**20
#: Longest file name when the file system does not say (POSIX NAME_MAX on Linux).
_NAME_MAX = 255


def storage_error(exc: OSError, path: str | os.PathLike[str]) -> ExperimentError | None:
    """One line for a failed write of ``path``: what failed and what to do; ``None`` when
    ``exc`` is no storage problem (a bug, to be raised as it is)."""
    advice = STORAGE_ADVICE.get(exc.errno)
    if advice is None:
        return None
    return ExperimentError(f"cannot write {str(path)!r}: {exc.strerror or exc}; {advice}")


@contextlib.contextmanager
def writing(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn a storage failure (full disk, read-only, not writable) inside the block into
    an :class:`ExperimentError` naming ``path`` (:func:`storage_error`)."""
    try:
        yield
    except OSError as exc:
        error = storage_error(exc, path)
        if error is None:
            raise
        raise error from None
_CLAIM_SUFFIX = ".claim"
_NUMBER_KEYS = ("regret", "regret_lo", "regret_hi", "learner_loss", "comparator_lo",
                "comparator_hi")
_INT_KEYS = ("horizon", "seed_index", "rounds", "env_seed", "agent_seed", "clipped_feedback",
             "projected_actions")
#: Integer keys that older records of the same schema may lack.
_OPTIONAL_INT_KEYS = ("switches",)
#: Keys whose value is an object (``agent_options`` is absent from older records).
_MAPPING_KEYS = ("tags", "env_kwargs", "env_options", "agent_kwargs", "agent_options")
_CURVE_KEYS = ("checkpoints", "regret_curve_lo", "regret_curve_hi")


class DamagedResultWarning(UserWarning):
    """A file of a results directory is not a usable record; it was set aside."""


class ResultsStore:
    """A results directory.

    Args:
        root: The directory (created on the first write).
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = pathlib.Path(root)
        self.games_dir = self.root / "games"
        self.claims_dir = self.root / "claims"
        self.quarantine_dir = self.root / "quarantine"

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.root)!r})"

    # ----------------------------------------------------------------- writing
    def prepare(self) -> None:
        """Create the directory, check it is writable, and clean up after dead writers.

        Removes temporary files and stale claims (see the module docstring) left by
        processes that are gone.

        Raises:
            ExperimentError: The path is a file, lies under a file, or is not writable.
        """
        problem = self.problem()
        if problem:
            raise ExperimentError(f"results directory {str(self.root)!r} is not usable: "
                                  f"{problem} (expected a writable directory)")
        try:
            self.games_dir.mkdir(parents=True, exist_ok=True)
            self.claims_dir.mkdir(exist_ok=True)
            fd, probe = _create_unique(self.games_dir, ".probe", _TMP_SUFFIX)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            advice = STORAGE_ADVICE.get(exc.errno, "expected a writable directory")
            raise ExperimentError(
                f"results directory {str(self.root)!r} is not usable: "
                f"{exc.strerror or exc}; {advice}") from None
        for tmp in self.games_dir.glob(f".*{_TMP_SUFFIX}"):
            pid = _pid_of(tmp.name)
            if pid is None or not _alive(pid):
                tmp.unlink(missing_ok=True)
        with self._claims_lock():
            for claim in self.claims_dir.glob(f"*{_CLAIM_SUFFIX}"):
                if _stale(_read_claim(claim)):
                    claim.unlink(missing_ok=True)

    def path(self, game_id: str) -> pathlib.Path:
        """Where a game's record lives."""
        return self.games_dir / f"{game_id}.json"

    def write(self, record: dict[str, Any]) -> pathlib.Path:
        """Write one record atomically (temp file in the same directory, then replace)."""
        final = self.path(record["game_id"])
        with writing(final):
            self.games_dir.mkdir(parents=True, exist_ok=True)
            atomic_write(final, json.dumps(record, indent=1, default=jsonable))
        return final

    def write_manifest(self, settings: dict[str, Any]) -> None:
        """Keep the sweep's settings (as given) in ``sweep.json``."""
        with writing(self.root / "sweep.json"):
            self.root.mkdir(parents=True, exist_ok=True)
            atomic_write(self.root / "sweep.json", json.dumps(settings, indent=2,
                                                              sort_keys=False, default=str))

    # ------------------------------------------------------------------ claims
    def claim(self, game_id: str) -> bool:
        """Claim a game for this process; ``False`` if another live process holds it.

        Also ``False`` when the game already has a usable record (written by a sweep
        that released its claim meanwhile). A stale claim is taken over.
        """
        path = self.claims_dir / f"{game_id}{_CLAIM_SUFFIX}"
        with writing(path):
            self.claims_dir.mkdir(parents=True, exist_ok=True)
            with self._claims_lock():
                for _ in range(2):
                    try:
                        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                    except FileExistsError:
                        if not _stale(_read_claim(path)):
                            return False
                        path.unlink(missing_ok=True)
                        continue
                    try:
                        with os.fdopen(fd, "w") as fh:
                            json.dump({"pid": os.getpid(), "host": socket.gethostname(),
                                       "since": time.time(), "start": _start_time(os.getpid())},
                                      fh)
                    except BaseException:  # no half-written claim is left behind
                        path.unlink(missing_ok=True)
                        raise
                    if self.read(game_id) is not None:
                        path.unlink(missing_ok=True)
                        return False
                    return True
        return False

    def release(self, game_id: str) -> None:
        """Remove this process's claim of a game (no-op if it holds none)."""
        path = self.claims_dir / f"{game_id}{_CLAIM_SUFFIX}"
        owner = _read_claim(path)
        if owner is not None and owner.get("pid") == os.getpid() \
                and owner.get("host") == socket.gethostname():
            with contextlib.suppress(OSError):  # read-only now: stale once this process ends
                path.unlink(missing_ok=True)

    def claimant(self, game_id: str) -> dict[str, Any] | None:
        """``{"pid", "host", "since"}`` of the live process playing a game, else ``None``."""
        owner = _read_claim(self.claims_dir / f"{game_id}{_CLAIM_SUFFIX}")
        return None if owner is None or _stale(owner) else owner

    @contextlib.contextmanager
    def _claims_lock(self) -> Iterator[None]:
        try:
            import fcntl
        except ImportError:  # not POSIX: O_EXCL alone
            yield
            return
        fd = os.open(self.claims_dir / ".lock", os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    # ----------------------------------------------------------------- reading
    def scan(self) -> list[dict[str, Any]]:
        """Every usable record, sorted by game id (nothing is moved or warned about)."""
        if not self.games_dir.is_dir():
            return []
        return [r for r in (_check(p)[0] for p in sorted(self.games_dir.glob("*.json")))
                if r is not None]

    def finished(self) -> set[str]:
        """Ids of the games with a usable record (nothing is moved or warned about)."""
        return {r["game_id"] for r in self.scan()}

    def problem(self) -> str | None:
        """Why the directory could not hold results, without creating anything; else ``None``.

        Looks at the directory, or at its nearest existing parent when it does not
        exist yet: a file there, or a directory this process cannot write to.
        """
        path = self.root
        while not path.exists() and path != path.parent:
            path = path.parent
        if not path.is_dir():
            return f"{str(path)!r} is not a directory"
        if not os.access(path, os.W_OK | os.X_OK):
            return f"{str(path)!r} is not writable"
        return None

    def read(self, game_id: str) -> dict[str, Any] | None:
        """A game's record, or ``None`` when it has no usable one."""
        return _check(self.path(game_id))[0]

    def usable_for(self, spec: GameSpec, record: dict[str, Any] | None
                   ) -> dict[str, Any] | None:
        """``record`` if it is the record of the game ``spec``, else ``None``.

        A record whose resolved settings differ from the game's
        (:func:`~.game.settings_mismatch`) is moved to ``quarantine/`` with a
        :class:`DamagedResultWarning` naming each setting that differs, so the game is
        played again.
        """
        if record is None:
            return None
        reason = settings_mismatch(record, spec)
        if reason is None:
            return record
        self._quarantine(self.path(spec.game_id), reason)
        return None

    def load(self, set_aside: bool = True) -> list[dict[str, Any]]:
        """Every usable record, sorted by game id.

        Each file of ``games/`` that is not a usable record (see the module docstring)
        gets one :class:`DamagedResultWarning` naming the file and the reason, and is
        moved to ``quarantine/`` (when the directory is writable) if ``set_aside``; a
        reader that only reads passes ``set_aside=False`` and the file stays in place.
        """
        if not self.games_dir.is_dir():
            return []
        records = []
        for p in sorted(self.games_dir.glob("*.json")):
            record, reason = _check(p)
            if record is not None:
                records.append(record)
            elif reason is not None and set_aside:
                self._quarantine(p, reason)
            elif reason is not None:
                warn_skipped(p, reason, stacklevel=2)
        return records

    def _quarantine(self, path: pathlib.Path, reason: str) -> None:
        try:
            self.quarantine_dir.mkdir(exist_ok=True)
            target = self.quarantine_dir / path.name
            n = 0
            while target.exists():
                n += 1
                target = self.quarantine_dir / f"{path.stem}.{n}{path.suffix}"
            os.rename(path, target)
        except FileNotFoundError:
            return  # another process set it aside first
        except OSError as exc:
            warnings.warn(f"{path}: {reason}; not a usable record, skipped (could not move it "
                          f"to {self.quarantine_dir}: {exc.strerror or exc})",
                          DamagedResultWarning, stacklevel=3)
            return
        warnings.warn(f"{path}: {reason}; not a usable record, moved to {target} (its game "
                      "will be played again)", DamagedResultWarning, stacklevel=3)

    def manifest(self) -> dict[str, Any] | None:
        """The settings of the last sweep run here, if any."""
        path = self.root / "sweep.json"
        if not path.is_file():
            return None
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            return None


def warn_skipped(path: pathlib.Path, reason: str, stacklevel: int = 2) -> None:
    """The :class:`DamagedResultWarning` of a reader that skips ``path`` (not a usable
    record, for ``reason``) and leaves it in place."""
    warnings.warn(f"{path}: {reason}; not a usable record, skipped (left in place: "
                  "reading moves nothing)", DamagedResultWarning, stacklevel=stacklevel + 1)


def load_records(source: str | os.PathLike[str] | Iterable[dict[str, Any]]
                 ) -> list[dict[str, Any]]:
    """Records from a results directory (or a list of records, returned as a list; an
    empty list too, so a selection of no record gives empty tables).

    Files of ``games/`` that are not usable records are skipped with a warning and left
    in place (reading moves nothing; see :meth:`ResultsStore.load`).

    Raises:
        ExperimentError: A path that is not a directory, a directory without results, or
            a given record that :func:`check_record` refuses (its index and why), or a
            source that is neither a path nor an iterable of records.
    """
    if isinstance(source, (str, os.PathLike)):
        root = pathlib.Path(source)
        if not root.is_dir():
            what = "is not a directory" if root.exists() else "does not exist"
            raise ExperimentError(f"results directory {str(root)!r} {what}")
        records = ResultsStore(root).load(set_aside=False)
        if not records:
            raise ExperimentError(f"results directory {str(root)!r} holds no finished game "
                                  "(expected games/*.json written by 'dp-online sweep')")
        return records
    if isinstance(source, (bytes, dict)) or not isinstance(source, Iterable):
        raise ExperimentError(f"source={reprlib.repr(source)} rejected: expected a results "
                              f"directory or a list of records, got a {type(source).__name__}")
    records = list(source)
    for i, record in enumerate(records):
        reason = check_record(record)
        if reason is not None:
            raise ExperimentError(f"records[{i}] is not a game record: {reason} (expected "
                                  "records as 'dp-online sweep' writes them)")
    return records


def check_record(data: Any, game_id: str | None = None) -> str | None:
    """Why ``data`` is not a usable record of :data:`SCHEMA_VERSION`; ``None`` if it is.

    Args:
        data: Parsed JSON.
        game_id: The id the record must carry (its file name), if known.
    """
    if not isinstance(data, dict):
        return f"JSON {type(data).__name__}, expected an object (a record)"
    version = data.get("schema_version")
    if version is None:
        return (f"no schema_version (written before records carried one; this version "
                f"reads schema_version {SCHEMA_VERSION})")
    if version != SCHEMA_VERSION:
        return f"unknown schema_version {version!r} (this version reads {SCHEMA_VERSION})"
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        return f"missing key(s) {missing}"
    if game_id is not None and data["game_id"] != game_id:
        return f"game_id {data['game_id']!r} does not match the file name"
    for key in _NUMBER_KEYS:
        if isinstance(data[key], bool) or not isinstance(data[key], (int, float)):
            return f"{key}={data[key]!r}, expected a number"
        if not math.isfinite(data[key]):
            return f"{key}={data[key]!r}, expected a finite number"
    if data["pseudo_regret"] is not None and not _finite_number(data["pseudo_regret"]):
        return f"pseudo_regret={data['pseudo_regret']!r}, expected a finite number or null"
    for key in (*_INT_KEYS, *(k for k in _OPTIONAL_INT_KEYS if k in data)):
        if isinstance(data[key], bool) or not isinstance(data[key], int):
            return f"{key}={data[key]!r}, expected an integer"
    for key in _MAPPING_KEYS:
        if key in data and not isinstance(data[key], dict):
            return f"{key}={data[key]!r}, expected an object"
    curves = [data[k] for k in _CURVE_KEYS]
    if not all(isinstance(c, list) for c in curves) or len({len(c) for c in curves}) != 1:
        return f"{', '.join(_CURVE_KEYS)} must be lists of equal length"
    for key, curve in zip(_CURVE_KEYS, curves):
        integers = key == "checkpoints"
        bad = [v for v in curve if not (type(v) is int if integers else _finite_number(v))]
        if bad:
            return (f"{key} holds {bad[0]!r}, expected "
                    f"{'integers' if integers else 'finite numbers'}")
    return record_id_mismatch(data)


def _finite_number(value: Any) -> bool:
    """A JSON number (not a boolean) that is finite."""
    return (not isinstance(value, bool) and isinstance(value, (int, float))
            and math.isfinite(value))


def file_kind(mode: int) -> str:
    """What a file of mode ``mode`` (``st_mode``) is, in words."""
    for test, kind in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "a special file"


def _require_regular(path: pathlib.Path, st: os.stat_result, limit: int) -> None:
    """Raise ``ValueError`` unless ``st`` is a regular file of at most ``limit`` bytes."""
    if not stat.S_ISREG(st.st_mode):
        link = " (through a symbolic link)" if path.is_symlink() else ""
        raise ValueError(f"{file_kind(st.st_mode)}{link}, not a regular file")
    if st.st_size > limit:
        raise ValueError(f"{st.st_size} bytes, larger than any record ({limit} bytes at most)")


def _read_regular(path: pathlib.Path, limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes.

    Never blocks on a FIFO nor reads a device: the file is looked at before it is
    opened, and opened without blocking and looked at again (it may have been replaced
    in between).

    Raises:
        FileNotFoundError: It vanished.
        OSError: It cannot be read.
        ValueError: It is no regular file, or larger than ``limit`` (the message says).
    """
    return read_regular_stat(path, limit)[0]


def read_regular_stat(path: pathlib.Path, limit: int) -> tuple[bytes, os.stat_result]:
    """:func:`_read_regular`, with the ``fstat`` of the file it read (the signature of
    exactly those bytes: a file replaced meanwhile has another inode or times).

    Raises:
        As :func:`_read_regular`.
    """
    _require_regular(path, os.stat(path), limit)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        _require_regular(path, st, limit)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            # read what fstat says is there, plus one byte to see more: a buffer of the
            # limit's size each time would cost a large allocation per record
            want = min(limit, st.st_size) + 1
            raw = fh.read(want)
            if len(raw) == want <= limit:  # grown since its fstat: read on to the limit
                raw += fh.read(limit + 1 - want)
    finally:
        os.close(fd)
    if len(raw) > limit:
        raise ValueError(f"more than {limit} bytes, larger than any record")
    return raw, st


def _check(path: pathlib.Path) -> tuple[dict[str, Any] | None, str | None]:
    """``(record, None)``, ``(None, reason)``, or ``(None, None)`` for a vanished file."""
    record, reason, _ = check_file(path)
    return record, reason


def check_file(path: pathlib.Path
               ) -> tuple[dict[str, Any] | None, str | None, os.stat_result | None]:
    """``(record, None, stat)`` for a usable record (``stat``: the ``fstat`` of the
    bytes read), ``(None, reason, None)`` for a file that is not one, ``(None, None,
    None)`` for a vanished file. Nothing but a regular file is opened."""
    try:
        raw, st = read_regular_stat(path, MAX_RECORD_BYTES)
    except FileNotFoundError:
        return None, None, None
    except OSError as exc:
        return None, f"unreadable ({exc.strerror or exc})", None
    except ValueError as exc:
        return None, str(exc), None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text (byte {exc.start})", None
    try:
        data = json.loads(text)
    except ValueError as exc:
        return None, f"not JSON ({exc})", None
    reason = check_record(data, path.stem)
    return (data, None, st) if reason is None else (None, reason, None)


def _name_max(directory: pathlib.Path) -> int:
    """The longest file name (in bytes) ``directory``'s file system takes."""
    try:
        return int(os.pathconf(directory, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return _NAME_MAX


def _create_unique(directory: pathlib.Path, stem: str, suffix: str) -> tuple[int, str]:
    """Create ``directory/.<stem>.<pid>.<random><suffix>`` exclusively, mode 0o666 - umask
    (``stem`` shortened as needed, so the name fits the file system's name length)."""
    tail = f".{os.getpid()}.{secrets.token_hex(4)}{suffix}"
    room = _name_max(directory) - 1 - len(os.fsencode(tail))
    stem = os.fsencode(stem.lstrip("."))[:max(room, 1)].decode(errors="ignore") or "t"
    while True:
        name = directory / f".{stem}.{os.getpid()}.{secrets.token_hex(4)}{suffix}"
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), str(name)
        except FileExistsError:
            continue


def check_output(final: str | os.PathLike[str]) -> None:
    """Refuse an output path that is not a regular file or a new name, or whose name
    is longer than the file system takes (checked before anything is written).

    Raises:
        ExperimentError: ``final`` is a symbolic link, a directory, a FIFO, a device or
            a socket (one line naming it and what is expected), a part of its path is a
            regular file, or its name is too long.
    """
    final = pathlib.Path(final)
    try:
        st = os.lstat(final)
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:  # a regular file where a directory should be
            raise storage_error(exc, final) from None
        st = None  # a new name (or one the write itself will report on)
    if st is not None and not stat.S_ISREG(st.st_mode):
        what = file_kind(st.st_mode)
        if stat.S_ISLNK(st.st_mode):
            with contextlib.suppress(OSError):
                what += f" (to {os.readlink(final)!r})"
        raise ExperimentError(f"refusing to write {str(final)!r}: it is {what}; expected "
                              "the path of a regular file or a new one")
    parent = final.parent if final.parent.is_dir() else pathlib.Path(".")
    size, limit = len(os.fsencode(final.name)), _name_max(parent)
    if size > limit:
        raise ExperimentError(f"cannot write {str(final)!r}: its name is {size} bytes, "
                              f"longer than the {limit} the file system takes; choose a "
                              "shorter name")


def atomic_write(final: pathlib.Path, text: str | bytes) -> None:
    """Write ``text`` (or bytes) to ``final`` all or nothing: a temporary file in the same
    directory, flushed and fsynced, then moved over ``final`` (removed if anything
    fails). Only a regular file or a new name is written (:func:`check_output`).

    Raises:
        ExperimentError: ``final`` is no regular file, or its name is too long.
        OSError: The write failed.
    """
    final = pathlib.Path(final)
    check_output(final)
    fd, tmp = _create_unique(final.parent, final.stem, _TMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w",
                       **({} if isinstance(text, bytes) else {"encoding": "utf-8"})) as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        check_output(final)  # nothing special has appeared there meanwhile
        os.replace(tmp, final)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _read_claim(path: pathlib.Path) -> dict[str, Any] | None:
    """The claim's content; ``{}`` when it is unreadable (its writer died mid-way)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _stale(owner: dict[str, Any] | None) -> bool:
    """Whether a claim's process is gone (claims from other hosts are never stale)."""
    if owner is None:
        return False
    pid, host = owner.get("pid"), owner.get("host")
    if not isinstance(pid, int) or not isinstance(host, str):
        return True
    if host != socket.gethostname():
        return False
    if not _alive(pid):
        return True
    start = owner.get("start")  # absent in older claims and off Linux
    return start is not None and _start_time(pid) not in (None, start)


def _start_time(pid: int) -> int | None:
    """The start time of process ``pid`` in clock ticks since boot (field 22 of
    ``/proc/<pid>/stat``), which tells a reused pid from the claimant; ``None`` where
    ``/proc`` does not give it."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:  # the command name (field 2) may hold spaces and parentheses: split after it
        return int(stat[stat.rindex(")") + 2:].split()[19])
    except (ValueError, IndexError):
        return None


def _pid_of(name: str) -> int | None:
    parts = name.split(".")  # "", game_id, pid, random, "tmp"
    try:
        return int(parts[2])
    except (IndexError, ValueError):
        return None


def _alive(pid: int) -> bool:
    if pid == os.getpid() or os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
