"""The report tells the truth at a glance: trivial play next to every learner, the
learners not told apart from it marked, the missing games of an unfinished sweep listed
first, and tables that stay inside the page."""

from __future__ import annotations

import copy
import json
import math
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from scipy import stats

from dp_online_envs.lab.experiments import analysis, parse_sweep, run_games, run_sweep
from dp_online_envs.lab.experiments import report as rep
from dp_online_envs.lab.experiments.game import GameSpec
from dp_online_envs.lab.html_page import CSS

SWEEP = {"name": "truth", "envs": ["DPFullInfo-Experts-v0"], "agents": ["hedge", "private-ftrl"],
         "epsilons": [1.0, 4.0], "horizons": [100], "seeds": 4}
TRIVIAL = [100.0, 110.0, 90.0, 105.0]


@pytest.fixture(autouse=True)
def no_figures(monkeypatch):
    """The figures are tested elsewhere (test_plots_report.py); here they only cost time."""
    monkeypatch.setattr(rep.plots, "make_figures", lambda records: [])


@pytest.fixture(scope="module")
def played():
    return run_games(parse_sweep(SWEEP).games, backend="serial").records


def _set_regret(record, value):
    record.update(regret=value, regret_lo=value, regret_hi=value)


def _constructed(played, eps1_gap):
    """The played records with known regrets, and trivial play (``center``) added:
    hedge learns, private FTRL at eps=4 learns, at eps=1 it is trivial play plus
    ``eps1_gap`` (per seed)."""
    records = copy.deepcopy(played)
    center = []
    for r in records:
        i = r["seed_index"]
        if r["agent"] == "hedge":
            _set_regret(r, 10.0 + i)
            c = copy.deepcopy(r)
            c.update(agent="center", agent_label="center", game_id=f"center{i}")
            _set_regret(c, TRIVIAL[i])
            center.append(c)
        elif r["epsilon"] == 4.0:
            _set_regret(r, TRIVIAL[i] - [50.0, 52.0, 48.0, 51.0][i])
        else:
            _set_regret(r, TRIVIAL[i] + eps1_gap[i])
    return records + center


def _paired_hi(a, b):
    d = np.subtract(a, b)
    return d.mean() + stats.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / math.sqrt(d.size)


def test_not_learning_is_a_paired_interval_against_trivial_play_that_reaches_zero(played):
    indistinct = [3.0, -2.0, 4.0, 1.0]
    rows = {(r["agent"], r["epsilon"]): r
            for r in analysis.summary(_constructed(played, indistinct))}
    eps1, eps4 = rows[("private-ftrl", 1.0)], rows[("private-ftrl", 4.0)]
    # against the definition: the paired t interval of (regret - trivial) per seed
    assert _paired_hi([t + g for t, g in zip(TRIVIAL, indistinct)], TRIVIAL) >= 0
    assert eps1["not_learning"] is True and eps4["not_learning"] is False
    assert rows[("hedge", None)]["not_learning"] is False
    assert rows[("center", None)]["not_learning"] is None  # trivial play itself
    assert eps1["trivial"] == pytest.approx(np.mean(TRIVIAL))
    m, lo, hi = analysis.mean_ci(TRIVIAL)
    assert (eps1["trivial_ci_lo"], eps1["trivial_ci_hi"]) == pytest.approx((lo, hi))
    # worse than trivial play is not learning either
    worse = {(r["agent"], r["epsilon"]): r
             for r in analysis.summary(_constructed(played, [20.0, 22.0, 19.0, 21.0]))}
    assert worse[("private-ftrl", 1.0)]["not_learning"] is True
    # a small, consistent gain is learning: pairing tells it from the seeds' spread
    small = [-3.0, -2.5, -3.5, -3.0]
    assert _paired_hi([t + g for t, g in zip(TRIVIAL, small)], TRIVIAL) < 0
    assert analysis.summary(_constructed(played, small))[1]["not_learning"] is False
    # without a reference agent, or with one shared seed, there is no verdict
    assert all(r["not_learning"] is None for r in analysis.summary(played))
    assert analysis.paired_gap({0: 1.0}, {0: 2.0, 1: 3.0}) is None


def _marks(html):
    return html.count(f">{rep.NOT_LEARNING}</span>")


def test_the_report_marks_not_learning_and_shows_every_regret_with_its_interval(played):
    records = _constructed(played, [3.0, -2.0, 4.0, 1.0])
    html = rep.render_report(records)
    # the mark in the headline cell and in the full table, plus the two legends
    assert _marks(html) == 2 + 2 and rep._e(rep.NOT_LEARNING_RULE) in html
    learning = rep.render_report(_constructed(played, [-60.0, -61.0, -59.0, -60.0]))
    assert _marks(learning) == 1  # the legend of the headline section only
    headline = html[html.index("id=headline"):html.index("id=figures")]
    for row in analysis.summary(records):  # absolute regret and its interval, every row
        assert (f"{rep._num(row['regret_ci_lo'])}, {rep._num(row['regret_ci_hi'])}]"
                in headline), row["agent_label"]
    assert "Trivial play (center, no learning)" in headline


def test_the_report_plays_trivial_play_on_the_same_seeds_when_missing(played, tmp_path):
    specs = rep.reference_games(played)
    assert [(s.agent, s.seed_index, s.horizon) for s in specs] == [
        ("center", i, 100) for i in range(4)]
    hedge = {r["seed_index"]: r for r in played if r["agent"] == "hedge"}
    for s in specs:  # the same losses as the games of its seed index
        h = hedge[s.seed_index]
        twin = GameSpec(h["env_id"], h["agent"], None, None, h["horizon"], s.seed_index,
                        h["env_kwargs"])
        assert s.env_seed == twin.env_seed
    res = tmp_path / "res"
    run_sweep(SWEEP, results=res, backend="serial", quiet=True)
    html = rep.write_report(res, tmp_path / "r.html", backend="serial").read_text()
    assert "4 games of the reference agent <code>center</code>" in html
    assert sum("center" in p.name or json.loads(p.read_text())["agent"] == "center"
               for p in (res / "games").glob("*.json")) == 4  # kept for the next report
    again = rep.write_report(res, tmp_path / "r2.html", backend="serial").read_text()
    assert "games of the reference agent" not in again  # nothing left to play
    assert rep.reference_games([*played, *run_games(specs, backend="serial").records]) == []
    bare = rep.write_report(played, tmp_path / "r3.html", references=False).read_text()
    assert "No reference agent ran here" in bare


def test_an_unfinished_sweep_lists_its_missing_settings_first(tmp_path):
    res = tmp_path / "res"
    run_sweep(SWEEP, results=res, backend="serial", quiet=True)
    complete = rep.write_report(res, tmp_path / "full.html", references=False).read_text()
    assert "Incomplete sweep" not in complete
    for p in (res / "games").glob("*.json"):
        r = json.loads(p.read_text())
        if (r["epsilon"] == 4.0) or (r["agent"] == "hedge" and r["seed_index"] in (1, 2)):
            p.unlink()
    html = rep.write_report(res, tmp_path / "part.html", references=False).read_text()
    body = html[html.index("<body>"):]
    first = body[:body.index("<h2")]  # before the first section
    assert "Incomplete sweep truth:</b> 6 of its 12 games have no record, in 2 settings" \
        " (1 with no seed played at all)" in first
    items = re.findall(r"<li>(.*?)</li>", first)
    assert items == [
        "DPFullInfo-Experts-v0 &middot; T=100 &middot; hedge &middot; non-private: seeds 1-2",
        "DPFullInfo-Experts-v0 &middot; T=100 &middot; private-ftrl &middot; eps=4: seeds 0-3"
        " (no seed played)"]
    assert rep._seed_list([5, 0, 1, 2, 7, 8]) == "0-2, 5, 7-8"
    # a sweep too large to list its games: said so, not listed
    huge = {**json.loads((res / "sweep.json").read_text()), "seeds": rep.MISSING_CHECKED}
    text = rep.render_report([json.loads(p.read_text()) for p in (res / "games").glob("*.json")],
                             manifest=huge)
    assert (f"<b>Completeness not checked:</b> the sweep has {3 * rep.MISSING_CHECKED} games, "
            f"more than the {rep.MISSING_CHECKED}") in text


class _Tables(HTMLParser):
    """The class of each table's parent element."""

    def __init__(self):
        super().__init__()
        self.stack, self.parents = [], []

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.parents.append(self.stack[-1] if self.stack else None)
        if tag not in ("br", "wbr", "img", "meta", "input"):
            self.stack.append((tag, dict(attrs).get("class")))

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass


def test_every_table_scrolls_inside_its_box(played):
    parser = _Tables()
    parser.feed(rep.render_report(_constructed(played, [3.0, -2.0, 4.0, 1.0])))
    assert len(parser.parents) >= 5
    assert set(parser.parents) == {("div", "scroll")}
    assert ".scroll{overflow-x:auto" in CSS
