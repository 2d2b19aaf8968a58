"""Stored results of the benchmark scripts that fill ``docs/results.md``.

A section script measures, then writes its numbers as data: one JSON document
(:func:`document`) holding the section's name, the settings it ran with, the release
(:func:`release`), the date, the machine (CPU, logical CPUs, the load average at the
start and at the end: :class:`Measurement`) and ``data``, whatever the script's
``render(doc)`` needs to draw its markdown block. ``make_results.py`` runs the script
with ``--save FILE`` (:func:`add_save_argument`) when asked to measure, and otherwise
renders the block from the stored file (:func:`load`), never from the script's stdout.
The files live under the checkout's ``results/benchmarks/`` (git-ignored): a block of
``docs/results.md`` records when and with what its numbers were measured, the stored
file the numbers themselves.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["RESULTS_DIR", "Measurement", "MissingResults", "add_save_argument", "document",
           "load", "machine", "release", "save", "stamp", "versions"]

ROOT = Path(__file__).resolve().parents[1]
#: Where ``make_results.py`` keeps the sections' stored results (``NAME.json``; the
#: ``--quick`` runs' in ``quick/``).
RESULTS_DIR = ROOT / "results" / "benchmarks"
#: What a reader runs to measure one section again.
COMMAND = "python benchmarks/make_results.py"


def versions() -> str:
    """Python and the versions of the packages the numbers depend on."""
    names = ("numpy", "scipy", "gymnasium", "dp-accounting", "dp-online-envs")
    parts = [f"Python {sys.version.split()[0]}"]
    for n in names:
        try:
            parts.append(f"{n} {metadata.version(n)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{n} (not installed)")
    return ", ".join(parts)


def release() -> str:
    """The release the numbers were produced with (``dp-online-envs X.Y.Z``): a stamp a
    reader can look up, unlike a working tree's commit."""
    try:
        return f"dp-online-envs {metadata.version('dp-online-envs')}"
    except metadata.PackageNotFoundError:
        return "dp-online-envs (not installed)"


def _cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``; else what :mod:`platform` says)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _load() -> float | None:
    """The 1-minute load average (``None`` where the system has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def machine() -> dict[str, Any]:
    """The machine the numbers were measured on, without its host name."""
    return {"cpu": _cpu_name(), "logical cpus": os.cpu_count(),
            "system": f"{platform.system()} {platform.release()} {platform.machine()}",
            "versions": versions()}


class Measurement:
    """The circumstances of one measurement: built when it starts (the date and the
    load average then), closed by :meth:`document` when it ends (the load then).

    Args:
        section: The section of ``docs/results.md`` the numbers fill.
        settings: The script's settings (its arguments), as JSON-able values.
    """

    def __init__(self, section: str, settings: dict[str, Any]) -> None:
        self.section = section
        self.settings = dict(settings)
        self.started = datetime.datetime.now(datetime.timezone.utc)
        self.load_before = _load()

    def document(self, data: dict[str, Any]) -> dict[str, Any]:
        """The stored document of ``data``, measured since this object was built."""
        return document(self.section, self.settings, data, self.started,
                        (self.load_before, _load()))


def document(section: str, settings: dict[str, Any], data: dict[str, Any],
             started: datetime.datetime, load: tuple[float | None, float | None]
             ) -> dict[str, Any]:
    """A stored result: the section, its settings, the release, the date (UTC, when the
    measurement started), the machine and its load average (1 min) at the start and the
    end, and ``data``."""
    return {"section": section, "settings": settings, "release": release(),
            "date": started.strftime("%Y-%m-%d %H:%M UTC"), "machine": machine(),
            "load average (1 min) before, after": list(load), "data": data}


def add_save_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--save FILE`` option of a section script: where to write its document."""
    parser.add_argument("--save", type=Path, default=None, metavar="FILE",
                        help="also write the numbers as data (JSON) to FILE, which "
                             "make_results.py renders into docs/results.md")


def save(path: Path | None, doc: dict[str, Any]) -> None:
    """Writes ``doc`` to ``path`` as JSON (nothing when ``path`` is ``None``)."""
    if path is None:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, allow_nan=True) + "\n")
    tmp.replace(path)  # a reader never sees half a file


class MissingResults(FileNotFoundError):
    """A section's stored results are absent or unreadable."""


def load(path: Path, section: str) -> dict[str, Any]:
    """The stored document of ``section`` at ``path``.

    Raises:
        MissingResults: When the file is absent, is not JSON, or holds another
            section's results; the message names the command that measures it.
    """
    rerun = f"run `{COMMAND} --only {section}` to measure it"
    path = Path(path)
    if not path.is_file():
        raise MissingResults(f"no stored results for {section!r} at {path}: {rerun}")
    try:
        doc = json.loads(path.read_text())
    except ValueError as exc:
        raise MissingResults(f"stored results of {section!r} at {path} are not JSON "
                             f"({exc}): {rerun}") from None
    if not isinstance(doc, dict) or doc.get("section") != section or "data" not in doc:
        found = doc.get("section") if isinstance(doc, dict) else type(doc).__name__
        raise MissingResults(f"{path} holds no results of {section!r} (found section "
                             f"{found!r}): {rerun}")
    return doc


def stamp(doc: dict[str, Any]) -> str:
    """The stamp of a block: the date and the release of its numbers and the machine's
    load while they were measured."""
    before, after = doc.get("load average (1 min) before, after", (None, None))
    box = doc.get("machine", {})
    load = ("" if before is None else
            f", load average {before:.2f} at the start and {after:.2f} at the end on "
            f"{box.get('logical cpus')} logical CPUs ({box.get('cpu')})")
    return f"{doc['date']}, {doc['release']}{load}"


def speed_harness(cases: str, command: str, stored: str) -> str:
    """The sentence that points a block to the speed harness's cases timing the same
    thing: ``the speed harness's CASES (`COMMAND`; STORED in
    `benchmarks/speed/baseline.json`, tabled in [the performance guide](...)).``

    Args:
        cases: The cases named, in markdown (backticks around each name).
        command: The harness's command line for them.
        stored: What the baseline file keeps of them (``stored ratio``).
    """
    return (f"the speed harness's {cases} (`{command}`; {stored} in "
            "`benchmarks/speed/baseline.json`, tabled in "
            "[the performance guide](guides/performance.md)).")
