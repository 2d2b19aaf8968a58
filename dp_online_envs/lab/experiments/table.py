"""Results as tables: one row per game, and a long table of the regret curves.

::

    from dp_online_envs.lab.experiments import load_results, load_curves
    games = load_results("results/price_of_privacy")    # one row per game
    curves = load_curves("results/price_of_privacy")    # one row per game x checkpoint

``load_results`` flattens each record: the nested settings ``tags``, ``env_kwargs``,
``env_options`` (every option of the env, resolved), ``agent_kwargs`` and
``agent_options`` (every option of the agent, resolved) become columns ``tags.<key>``,
``env_kwargs.<key>``, ``env_options.<key>``, ``agent_kwargs.<key>`` and
``agent_options.<key>`` (missing where a game has no such option; an option whose value
is a list or a mapping is written as its JSON text), and the curve lists
(``checkpoints``, ``regret_curve_lo``, ``regret_curve_hi``) are left to the curves
table. ``load_curves`` has the columns :data:`CURVE_COLUMNS`: the game's id and main
settings (join on ``game_id`` for the rest), the round ``checkpoint``, and the
certified regret bounds ``regret_lo`` / ``regret_hi`` at that round.

:func:`export_results` (``dp-online export RESULTS -o FILE``) writes both tables as
Parquet or CSV. pandas (and pyarrow, for Parquet) come with the ``experiments`` extra;
they are imported only here, when a table is asked for.
"""

from __future__ import annotations

import io
import json
import os
import pathlib
from collections.abc import Iterable
from typing import Any

from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.index import indexed_table
from dp_online_envs.lab.experiments.store import (
    atomic_write,
    check_output,
    load_records,
    storage_error,
)

#: Record keys holding settings as a mapping; flattened into ``<key>.<option>`` columns.
NESTED_KEYS = ("tags", "env_kwargs", "env_options", "agent_kwargs", "agent_options")
#: Record keys holding the regret curve; they go to the curves table.
CURVE_KEYS = ("checkpoints", "regret_curve_lo", "regret_curve_hi")
#: Settings repeated on every row of the curves table.
CURVE_SETTINGS = ("game_id", "sweep", "env_id", "agent_label", "privacy", "epsilon", "delta",
                  "horizon", "seed_index")
#: Columns of the curves table.
CURVE_COLUMNS = CURVE_SETTINGS + ("checkpoint", "regret_lo", "regret_hi")
#: File formats of :func:`export_results`, by extension.
FORMATS = (".parquet", ".csv")
#: The version of :func:`games_table`'s layout: an index written for another is rebuilt
#: (change it with the table's columns or types).
GAMES_TABLE_KEY = "games-table-1"

def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ExperimentError("results tables need pandas: pip install "
                              "'dp-online-envs[experiments]'") from None
    return pandas


def flatten_record(record: dict[str, Any]) -> dict[str, Any]:
    """One row of the games table: nested settings as ``<key>.<option>``, no curve lists."""
    row: dict[str, Any] = {}
    for key, value in record.items():
        if key in CURVE_KEYS:
            continue
        if key in NESTED_KEYS and isinstance(value, dict):
            for option, v in value.items():
                row[f"{key}.{option}"] = (json.dumps(v, sort_keys=True)
                                          if isinstance(v, (list, dict)) else v)
        else:
            row[key] = value
    return row


def load_results(source: str | os.PathLike[str] | Iterable[dict[str, Any]]) -> Any:
    """The games of a results directory as a tidy ``pandas.DataFrame``, one row per game.

    A results directory is read through its games index (:mod:`.index`): a columnar
    copy of this table kept beside the records, served only when it agrees with every
    record file and rebuilt from the records otherwise, so that reading a directory of
    many games costs about what reading one Parquet file of the table does.

    Args:
        source: A results directory (files that are not usable records are skipped with
            a warning and left in place, see :mod:`.store`) or records.

    Returns:
        One row per game, sorted by ``game_id``; the columns are the record's keys in
        record order with the nested settings flattened (see the module docstring).

    Raises:
        ExperimentError: pandas is not installed, or the directory does not exist or
            holds no result.
    """
    _pandas()
    if isinstance(source, (str, os.PathLike)) and pathlib.Path(source).is_dir():
        return indexed_table(source, games_table, GAMES_TABLE_KEY)
    return games_table(load_records(source))


def games_table(records: list[dict[str, Any]]) -> Any:
    """The games table of ``records`` (:func:`load_results`' frame): one flattened row
    per record (:func:`flatten_record`), sorted by ``game_id``."""
    pd = _pandas()
    records = sorted(records, key=lambda r: r["game_id"])
    return pd.DataFrame([flatten_record(r) for r in records])


def load_curves(source: str | os.PathLike[str] | Iterable[dict[str, Any]]) -> Any:
    """The regret curves as a long ``pandas.DataFrame``: one row per game and checkpoint.

    Returns:
        Columns :data:`CURVE_COLUMNS`; rows by ``game_id`` then ``checkpoint``.

    Raises:
        ExperimentError: As :func:`load_results`.
    """
    pd = _pandas()
    records = sorted(load_records(source), key=lambda r: r["game_id"])
    columns: dict[str, list[Any]] = {c: [] for c in CURVE_COLUMNS}
    for r in records:
        n = len(r["checkpoints"])
        for c in CURVE_SETTINGS:
            columns[c].extend([r.get(c)] * n)
        columns["checkpoint"].extend(r["checkpoints"])
        columns["regret_lo"].extend(r["regret_curve_lo"])
        columns["regret_hi"].extend(r["regret_curve_hi"])
    frame = pd.DataFrame(columns)
    return frame.astype({"checkpoint": "int64", "regret_lo": "float64", "regret_hi": "float64"})


def curves_path(out: str | os.PathLike[str]) -> pathlib.Path:
    """Default file of the curves table: ``FILE``'s stem + ``_curves``, same extension."""
    out = pathlib.Path(out)
    return out.with_name(f"{out.stem}_curves{out.suffix}")


def export_results(results: str | os.PathLike[str] | Iterable[dict[str, Any]],
                   out: str | os.PathLike[str], *,
                   curves: str | os.PathLike[str] | None = None
                   ) -> tuple[pathlib.Path, pathlib.Path]:
    """Write the games table to ``out`` and the curves table next to it.

    The format follows the extension (``.parquet`` or ``.csv``; the curves file takes
    its own extension). Floats are written in full precision: ``pandas.read_csv`` gives
    back the same values (with pandas 2, pass ``float_precision="round_trip"``). In a
    CSV an empty string reads back as a missing value. In Parquet, a column whose values
    mix types (an agent option that is a name for one agent and a number for another)
    is written as text. Each file is written atomically, and only over a regular file or
    a new name (:func:`~.store.atomic_write`): a symbolic link, FIFO or device is refused.

    Args:
        results: A results directory, or records.
        out: File of the games table.
        curves: File of the curves table (default :func:`curves_path` of ``out``).

    Returns:
        ``(games file, curves file)``.

    Raises:
        ExperimentError: An extension other than ``.parquet``/``.csv``, pandas (or
            pyarrow for Parquet) missing, no results, an output path that is no regular
            file or new name, or an unwritable one.
    """
    out = pathlib.Path(out)
    curves = curves_path(out) if curves is None else pathlib.Path(curves)
    for path in (out, curves):
        if path.suffix.lower() not in FORMATS:
            raise ExperimentError(f"cannot export to {str(path)!r}: unknown extension "
                                  f"{path.suffix!r}; valid: {list(FORMATS)}")
        if path.suffix.lower() == ".parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise ExperimentError("Parquet files need pyarrow: pip install "
                                      "'dp-online-envs[experiments]' (or write .csv)") from None
    if out.resolve() == curves.resolve():
        raise ExperimentError(f"the games table and the curves table would both be written to "
                              f"{str(out)!r}: give --curves another file")
    for path in (out, curves):
        check_output(path)  # before anything is read: a device, FIFO or link is refused
    records = load_records(results)
    games_table, curves_table = load_results(records), load_curves(records)
    for table, path in ((games_table, out), (curves_table, curves)):
        if path.suffix.lower() == ".parquet":
            buffer = io.BytesIO()
            _parquet_ready(table).to_parquet(buffer, index=False)
            data: str | bytes = buffer.getvalue()
        else:
            data = table.to_csv(index=False)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, data)
        except OSError as exc:
            raise (storage_error(exc, path) or ExperimentError(
                f"cannot write {str(path)!r}: {exc.strerror or exc}")) from None
    return out, curves


def _parquet_ready(table: Any) -> Any:
    """``table`` with each column whose values mix types (an option that is a name for
    one agent and a number for another, as exp3's and private-exp2's ``gamma``) as text:
    a Parquet column has one type. Missing values stay missing."""
    mixed = [c for c in table.columns if table[c].dtype == object
             and len({type(v) for v in table[c] if not _missing(v)}) > 1]
    if not mixed:
        return table
    table = table.copy()
    for c in mixed:
        table[c] = [None if _missing(v) else str(v) for v in table[c]]
    return table


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)
