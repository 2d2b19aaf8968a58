"""The product speaks of itself only: its code, docs, examples, benchmarks and tests
name no tracker issue and no working-tree stamp, which a user cannot look up."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What a user cannot look up: a tracker's issue number, a dirty working-tree stamp, the
#: name of a working session or of one of its helpers ("measured by h17").
FORBIDDEN = re.compile(r"\b[Ii]ssues?[- ]#?\d+|\b[Tt]he issue\b|\+dirty\b|\bby h\d{1,3}\b|\bsession \d+")
#: Text files of the product (what ``git ls-files`` lists under these suffixes).
SUFFIXES = (".py", ".md", ".yaml", ".yml", ".toml", ".txt", ".cfg", ".json", ".html")


def tracked_text_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.split()
    this = Path(__file__).resolve()  # its own examples of what is forbidden
    return [ROOT / f for f in out
            if f.endswith(SUFFIXES) and (ROOT / f).is_file() and (ROOT / f).resolve() != this]


def offending_lines(paths: list[Path], root: Path = ROOT) -> list[str]:
    """``path:line: text`` (``path`` relative to ``root``) of every line that matches
    :data:`FORBIDDEN`."""
    hits = []
    for path in paths:
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if FORBIDDEN.search(line):
                hits.append(f"{path.relative_to(root)}:{n}: {line.strip()[:100]}")
    return hits


def test_no_file_names_a_tracker_issue_or_a_dirty_stamp():
    files = tracked_text_files()
    assert len(files) > 100, "git ls-files found no product files"
    assert offending_lines(files) == []


def test_the_check_finds_what_it_forbids(tmp_path):
    bad = tmp_path / "bad.md"
    bad.write_text("ok\nfixed in issue 12\nstamped 1.0+dirty\nissues 3 and 4\n"
                   "see Issue #7\nmeasured by h17\nthe pre-issue-10 defaults\nas the issue asks\n"
                   "no tissue 5, no issues at all, h2 by h\n")
    hits = offending_lines([bad], root=tmp_path)
    assert [h.split(":")[1] for h in hits] == ["2", "3", "4", "5", "6", "7", "8"]
