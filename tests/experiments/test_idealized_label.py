"""Idealized is labelled wherever a guarantee or a comparison is shown.

The ``blt`` and ``factorization`` counters release float sums of real-valued Gaussian
noise: their (epsilon, delta) claim holds for the idealized real-valued mechanism only
(their guarantee text says ``[IDEALIZED ...]``). Every place that shows a learner's
privacy level next to others' -- the records, the analysis rows, the HTML report's
tables, the ``dp-online run`` summary, the plots and the rows of docs/results.md --
says "idealized" for them, and only for them.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

from dp_online_envs.lab.experiments import run_sweep
from dp_online_envs.lab.experiments.analysis import summary
from dp_online_envs.lab.experiments.game import IDEALIZED_NOTE, is_idealized
from dp_online_envs.lab.experiments.plots import price_of_privacy
from dp_online_envs.lab.experiments.report import write_report

ROOT = pathlib.Path(__file__).resolve().parents[2]
DELTA = 1e-6
SWEEP = {
    "name": "idealized",
    "envs": [{"id": "DPFullInfo-Experts-v0", "kwargs": {"n_arms": 4}}],
    "agents": ["hedge", {"name": "private-ftrl",
                         "grid": {"counter": ["tree", "blt", "factorization"]}}],
    "epsilons": [1.0, 4.0], "delta": DELTA, "horizons": [64], "seeds": 2,
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("idealized")
    report = run_sweep(SWEEP, results=root, backend="serial", quiet=True)
    assert report.ok and report.played == 14
    return root, report.records


def _counter(row_or_record) -> str | None:
    label = row_or_record["agent_label"]
    found = re.search(r"counter=([a-z-]+)", label)
    return found.group(1) if found else None


def test_records_and_rows_say_idealized_for_the_real_valued_counters_only(results):
    _, records = results
    for r in records:
        idealized = _counter(r) in ("blt", "factorization")
        assert is_idealized(r) is idealized, r["agent_label"]
        assert r["privacy"].endswith(" idealized") is idealized
    rows = summary(records)
    private = [row for row in rows if row["private"]]
    assert len(private) == 6
    for row in private:
        idealized = _counter(row) in ("blt", "factorization")
        assert row["idealized"] is idealized
        expected = f"eps={row['epsilon']:g}, delta={DELTA:g}" + (", idealized" if idealized
                                                                 else "")
        assert row["privacy"] == expected


def test_the_report_labels_the_privacy_column_and_the_headline(results, tmp_path):
    root, _ = results
    html = write_report(root, tmp_path / "report.html").read_text()
    summary_table = html.split("<table id=summary>", 1)[1].split("</table>", 1)[0]
    privacy_cells = {}
    for row in re.findall(r"<tr>(.*?)</tr>", summary_table):
        cells = [c.replace("<wbr>", "") for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        if len(cells) > 3 and cells[1].startswith("private-ftrl"):
            privacy_cells.setdefault(cells[1], set()).add(cells[2])
    assert privacy_cells == {
        "private-ftrl(counter=blt)": {"eps=1, delta=1e-06, idealized",
                                      "eps=4, delta=1e-06, idealized"},
        "private-ftrl(counter=factorization)": {"eps=1, delta=1e-06, idealized",
                                                "eps=4, delta=1e-06, idealized"},
        "private-ftrl(counter=tree)": {"eps=1, delta=1e-06", "eps=4, delta=1e-06"},
    }
    headline = html.split("id=headline", 1)[1].split("id=figures", 1)[0]
    for row in re.findall(r"<tr><td class=l>(private-ftrl[^<]*)</td>(.*?)</tr>", headline):
        label, cells = row
        private_cells = re.findall(r"<td>(.*?)</td>", cells)[:2]  # eps=1, eps=4
        assert all(("idealized</span>" in c) is ("counter=tree" not in label)
                   for c in private_cells), row
    assert IDEALIZED_NOTE.replace("'", "&#x27;") in headline


def test_the_price_of_privacy_plot_labels_the_idealized_lines(results):
    _, records = results
    figure = price_of_privacy(records)
    _, labels = figure.figure.axes[0].get_legend_handles_labels()
    private = [lab for lab in labels if lab.startswith("private-ftrl")]
    assert sorted(private) == ["private-ftrl(counter=blt), idealized",
                               "private-ftrl(counter=factorization), idealized",
                               "private-ftrl(counter=tree)"]


@pytest.mark.parametrize("counter,idealized", [("blt", True), ("tree", False)])
def test_the_run_summary_labels_the_privacy_level(counter, idealized):
    out = subprocess.run(
        [sys.executable, "-m", "dp_online_envs.lab.cli", "run",
         "DPFullInfo-Experts-v0", "private-ftrl", "--epsilon", "1", "--delta", "1e-6",
         "--horizon", "64", "--seeds", "2", "--agent-option", f"counter={counter}",
         "--env-option", "n_arms=4", "--backend", "serial", "--no-reference"],
        capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.strip().startswith("64 "))
    assert ("eps=1, delta=1e-06, idealized" in line) is idealized, out.stdout
    assert (IDEALIZED_NOTE in out.stdout) is idealized


#: How docs/results.md names a learner on the real-valued counters, in a table row.
_REAL_VALUED = re.compile(r"\b(blt|factorization)\b")


def test_every_results_doc_row_with_a_real_valued_counter_says_idealized():
    """A row or a column of a table in docs/results.md that shows the blt or the
    factorization counter (a comparison of learners or of counters at equal privacy)
    says idealized, and so does the template it is generated from."""
    for path in (ROOT / "docs" / "results.md", ROOT / "benchmarks" / "results_template.md"):
        lines = path.read_text().splitlines()
        shown = [(i, line) for i, line in enumerate(lines, 1)
                 if line.startswith("|") and _REAL_VALUED.search(line)]
        assert shown or path.name == "results_template.md"
        for i, line in shown:
            cells = [c.strip() for c in line.strip("|").split("|")]
            for cell in cells:
                ratio = re.fullmatch(r"[a-z-]+ / [a-z-]+", cell)  # of two labelled columns
                setup = cell == "blt setup (s)"  # the time to optimize its coefficients
                if _REAL_VALUED.search(cell) and not (ratio or setup):
                    assert "idealized" in cell, f"{path.name}:{i}: {cell!r}"
