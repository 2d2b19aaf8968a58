"""The results directory: one small JSON file per finished game, written atomically.

Layout::

    RESULTS/
      sweep.json              the last sweep run into this directory (as given)
      games/<game_id>.json    one record per finished game
      plots/                  figures written by ``dp-online plot``

A record is written to a temporary file in ``games/`` (named with the writer's pid),
flushed and fsynced, then moved over its final name with ``os.replace``, so a file named
``<game_id>.json`` is always complete: killing a sweep loses at most the games in
flight, and nothing already written is damaged. Running the sweep again skips every
game whose file exists. Temporary files of dead writers are removed on the next run.
"""

from __future__ import annotations

import json
import os
import pathlib
import tempfile
import warnings
from collections.abc import Iterable
from typing import Any

from dp_online_envs.experiments.errors import ExperimentError
from dp_online_envs.experiments.game import jsonable

_TMP_SUFFIX = ".tmp"


class ResultsStore:
    """A results directory.

    Args:
        root: The directory (created on the first write).
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = pathlib.Path(root)
        self.games_dir = self.root / "games"

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.root)!r})"

    # ----------------------------------------------------------------- writing
    def prepare(self) -> None:
        """Create the directory and remove temporary files left by dead writers."""
        self.games_dir.mkdir(parents=True, exist_ok=True)
        for tmp in self.games_dir.glob(f".*{_TMP_SUFFIX}"):
            pid = _pid_of(tmp.name)
            if pid is None or not _alive(pid):
                tmp.unlink(missing_ok=True)

    def path(self, game_id: str) -> pathlib.Path:
        """Where a game's record lives."""
        return self.games_dir / f"{game_id}.json"

    def write(self, record: dict[str, Any]) -> pathlib.Path:
        """Write one record atomically (temp file in the same directory, then replace)."""
        self.games_dir.mkdir(parents=True, exist_ok=True)
        final = self.path(record["game_id"])
        _atomic_write(final, json.dumps(record, indent=1, default=jsonable))
        return final

    def write_manifest(self, settings: dict[str, Any]) -> None:
        """Keep the sweep's settings (as given) in ``sweep.json``."""
        self.root.mkdir(parents=True, exist_ok=True)
        _atomic_write(self.root / "sweep.json", json.dumps(settings, indent=2, sort_keys=False,
                                                           default=str))

    # ----------------------------------------------------------------- reading
    def finished(self) -> set[str]:
        """Ids of the games with a complete record."""
        if not self.games_dir.is_dir():
            return set()
        return {p.stem for p in self.games_dir.glob("*.json")}

    def load(self) -> list[dict[str, Any]]:
        """Every record, sorted by game id. Unreadable files are skipped with a warning."""
        if not self.games_dir.is_dir():
            return []
        records = []
        for p in sorted(self.games_dir.glob("*.json")):
            try:
                records.append(json.loads(p.read_text()))
            except (OSError, json.JSONDecodeError) as exc:
                warnings.warn(f"skipping unreadable result {p}: {exc}", stacklevel=2)
        return records

    def manifest(self) -> dict[str, Any] | None:
        """The settings of the last sweep run here, if any."""
        path = self.root / "sweep.json"
        if not path.is_file():
            return None
        try:
            return json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            return None


def load_results(source: str | os.PathLike[str] | Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records from a results directory (or a list of records, returned as a list).

    Raises:
        ExperimentError: A directory that does not exist or holds no results.
    """
    if isinstance(source, (str, os.PathLike)):
        root = pathlib.Path(source)
        if not root.is_dir():
            raise ExperimentError(f"results directory {str(root)!r} does not exist")
        records = ResultsStore(root).load()
        if not records:
            raise ExperimentError(f"results directory {str(root)!r} holds no finished game "
                                  "(expected games/*.json written by 'dp-online sweep')")
        return records
    return list(source)


def _atomic_write(final: pathlib.Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{final.stem}.{os.getpid()}.", suffix=_TMP_SUFFIX,
                               dir=final.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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
