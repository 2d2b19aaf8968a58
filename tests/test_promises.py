"""The time promises are the harness's: every file that states one holds its text, and
the harness's verdict is the CPU time over the cores against the promise's bound."""

from __future__ import annotations

import pathlib
import re

from benchmarks import promises

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _prose(path: pathlib.Path) -> str:
    """A file's words on one line (comment marks and line breaks gone)."""
    lines = (re.sub(r"^\s*#\s?", "", line) for line in path.read_text().splitlines())
    return " ".join(" ".join(lines).split())


def test_every_file_that_states_a_time_holds_its_promise():
    assert set(promises.PROMISES) == {"main-job", "sb3-ppo"}
    for promise in promises.PROMISES.values():
        for where in promise.where:
            assert promise.text in _prose(ROOT / where), (promise.name, where)
    readme = _prose(ROOT / "README.md")
    assert "about a minute on two idle cores" not in readme  # the former promise
    assert "benchmarks.promises" in readme


def test_the_verdict_is_cpu_over_cores_against_the_bound():
    def job() -> None:
        sum(i * i for i in range(300_000))

    kept = promises.measure(promises.Promise("x", (), "t", 1e6, 2.0, job))
    assert kept["cpu_s"] > 0 and kept["verdict"] == "kept"
    assert abs(kept["idle_estimate_s"] - kept["cpu_s"] / 2.0) <= 1e-3
    broken = promises.measure(promises.Promise("x", (), "t", 0.0, 1.0, job))
    assert broken["verdict"] == "BROKEN"
