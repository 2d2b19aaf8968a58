"""Compare a fresh run's ratios with the stored baseline.

A ratio is the product's time per unit over its reference's, measured in the same run
(:mod:`benchmarks.speed.cases`); lower is better. A fresh ratio more than the case's
threshold times its stored ratio is a regression (``SLOWER``); one below the stored
ratio divided by the threshold is reported as ``faster`` (a baseline worth refreshing),
not as a failure. A case in the baseline that was not run is ``not run``; a case run
without a stored ratio is ``new``. Neither fails.

The baseline file (``benchmarks/speed/baseline.json``) holds, per case, the ratio and
its threshold, with the machine, the load average, the date and the release it was
measured with.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["BASELINE", "Row", "compare", "load_baseline", "ratios_of_run", "regressions",
           "table"]

#: The committed baseline.
BASELINE = Path(__file__).with_name("baseline.json")


def _positive(what: str, value: float) -> float:
    """``value`` as a float, if finite and positive."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value > 0):
        raise ValueError(f"{what}={value!r} rejected: expected a finite number > 0")
    return float(value)


@dataclasses.dataclass(frozen=True)
class Row:
    """One case of a comparison.

    Attributes:
        name: The case.
        baseline: The stored ratio (``None``: not in the baseline).
        fresh: The ratio of this run (``None``: not run).
        threshold: How many times worse than ``baseline`` ``fresh`` may be.
    """

    name: str
    baseline: float | None
    fresh: float | None
    threshold: float

    @property
    def change(self) -> float | None:
        """``fresh / baseline`` (above 1: slower than stored), when both exist."""
        if self.baseline is None or self.fresh is None:
            return None
        return self.fresh / self.baseline

    @property
    def verdict(self) -> str:
        """``"SLOWER"`` (a regression), ``"ok"``, ``"faster"``, ``"new"`` or ``"not run"``."""
        change = self.change
        if change is None:
            return "not run" if self.fresh is None else "new"
        if change > self.threshold:
            return "SLOWER"
        return "faster" if change < 1.0 / self.threshold else "ok"


def compare(fresh: Mapping[str, float], baseline: Mapping[str, Mapping[str, float]],
            default_threshold: float = 1.5) -> list[Row]:
    """The rows of a comparison, baseline cases first (in its order), then new ones.

    Args:
        fresh: ``{case: ratio}`` of this run.
        baseline: ``{case: {"ratio": r, "threshold": x}}`` (the ``"benchmarks"`` of the
            baseline file); a missing threshold is ``default_threshold``.
        default_threshold: The threshold of a case without one (and of new cases).

    Raises:
        ValueError: On a ratio that is not a finite positive number, or a threshold not
            above 1 (it could not tell a regression from noise).
    """
    def threshold(value: Any) -> float:
        value = _positive("threshold", value)
        if value <= 1.0:
            raise ValueError(f"threshold={value!r} rejected: expected a number > 1")
        return value

    default = threshold(default_threshold)
    fresh = {name: _positive(f"ratio of {name}", r) for name, r in fresh.items()}
    rows = [Row(name, _positive(f"stored ratio of {name}", entry["ratio"]), fresh.get(name),
                threshold(entry.get("threshold", default)))
            for name, entry in baseline.items()]
    rows += [Row(name, None, r, default) for name, r in fresh.items() if name not in baseline]
    return rows


def regressions(rows: list[Row]) -> list[Row]:
    """The rows whose verdict is ``SLOWER``."""
    return [row for row in rows if row.verdict == "SLOWER"]


def table(rows: list[Row]) -> str:
    """A plain-text table: case, stored ratio, fresh ratio, fresh / stored, the limit
    and the verdict."""
    def num(x: float | None, fmt: str) -> str:
        return format("-", f">{fmt.split('.')[0]}") if x is None else format(x, fmt)

    head = (f"{'case':<24} {'stored':>8} {'fresh':>8} {'fresh/stored':>13} {'limit':>6}  "
            "verdict")
    lines = [head, "-" * len(head)]
    for row in rows:
        lines.append(f"{row.name:<24} {num(row.baseline, '8.3f')} {num(row.fresh, '8.3f')} "
                     f"{num(row.change, '13.2f')} {row.threshold:>6.2f}  {row.verdict}")
    return "\n".join(lines)


def ratios_of_run(run: Mapping[str, Any], size: str = "full") -> dict[str, float]:
    """``{case: ratio}`` of a pytest-benchmark JSON report written by the harness (each
    benchmark's ``extra_info`` holds its case, its size and its ratio).

    Args:
        run: The report (``--benchmark-json``).
        size: The size the cases must have been built at (the baseline's).

    Raises:
        ValueError: When a benchmark of the report carries no case or ratio (a report
            not written by ``benchmarks/speed/bench_speed.py``, or run with
            ``--benchmark-disable``), or was built at another size.
    """
    out: dict[str, float] = {}
    for bench in run.get("benchmarks", []):
        info = bench.get("extra_info", {})
        if "case" not in info or "ratio" not in info:
            raise ValueError(f"benchmark {bench.get('name')!r} has no case/ratio in its "
                             "extra_info: expected a timed report of "
                             "benchmarks/speed/bench_speed.py")
        if info.get("size") != size:
            raise ValueError(f"benchmark {bench.get('name')!r} was built at size "
                             f"{info.get('size')!r}; its ratio is comparable only at {size!r}")
        out[info["case"]] = info["ratio"]
    return out


def load_baseline(path: Path = BASELINE) -> dict[str, Any]:
    """The baseline document (``{"benchmarks": {case: {"ratio", "threshold", ...}},
    "machine": ..., "date": ..., "release": ...}``).

    Raises:
        ValueError: When the file has no ``"benchmarks"`` mapping.
    """
    doc = json.loads(Path(path).read_text())
    if not isinstance(doc.get("benchmarks"), dict):
        raise ValueError(f"{path}: expected a JSON object with a 'benchmarks' mapping")
    return doc
