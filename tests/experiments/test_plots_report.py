"""Figures, the HTML report, the statistics behind them, and the progress bar."""

from __future__ import annotations

import base64
import io
import sys
from html.parser import HTMLParser

import numpy as np
import pytest
from scipy import stats

from dp_online_envs.lab.experiments import analysis, parse_sweep, run_games, run_sweep, runner
from dp_online_envs.lab.experiments.plots import make_figures, plot_results
from dp_online_envs.lab.experiments.rates import DEFAULT_RATE, rate
from dp_online_envs.lab.experiments.report import write_report


@pytest.fixture(scope="module")
def records():
    from .conftest import SMALL

    return run_games(parse_sweep(SMALL).games, backend="serial").records


def test_mean_ci_is_the_student_t_interval():
    x = [1.0, 2.0, 4.0, 7.0]
    m, lo, hi = analysis.mean_ci(x)
    half = stats.t.ppf(0.975, 3) * np.std(x, ddof=1) / 2
    assert (m, lo, hi) == pytest.approx((3.5, 3.5 - half, 3.5 + half))
    # one value, or no spread: the point, give or take rounding (relative to the values)
    assert analysis.mean_ci([5.0]) == (5.0, 5.0 - 5 * analysis.ROUNDING, 5.0 + 5 * analysis.ROUNDING)
    assert analysis.mean_ci([0.25, 0.25]) == (0.25, 0.25 - analysis.ROUNDING,
                                              0.25 + analysis.ROUNDING)


def test_summary_groups_by_setting_with_the_price_of_privacy(records):
    rows = analysis.summary(records)
    assert len(rows) == 5 and all(r["n"] == 3 for r in rows)
    hedge = next(r for r in rows if r["agent"] == "hedge")
    assert hedge["privacy"] == "non-private" and hedge["vs_baseline"] == pytest.approx(1.0)
    for r in rows:
        assert r["baseline"] == "hedge"
        assert r["vs_baseline"] == pytest.approx(r["regret_mean"] / hedge["regret_mean"])
        assert r["regret_ci_lo"] <= r["regret_mean"] <= r["regret_ci_hi"]
    assert analysis.counters_in(records) == {
        ("DPFullInfo-Experts-v0", "private-ftrl"): ["agarwal-singh", "tree"]}


def test_rates_table():
    assert rate("hedge") == 0.5 and rate("online-fw") == 0.75
    assert rate("pftal", "DPFullInfo-StronglyConvex-v1") == 0.0
    assert rate("an-agent-nobody-wrote") == DEFAULT_RATE == 0.5


def test_figures_are_saved_as_png_and_svg(records, tmp_path):
    names = [f.name for f in make_figures(records)]
    assert names == ["price_of_privacy", "regret_curves_DPFullInfo-Experts-v0", "counters"]
    paths = plot_results(records, tmp_path)
    assert sorted(p.name for p in paths) == sorted(f"{n}.{x}" for n in names
                                                   for x in ("png", "svg"))
    for p in paths:
        head = p.read_bytes()[:200]
        assert head.startswith(b"\x89PNG") if p.suffix == ".png" else b"<svg" in head


def test_no_legend_covers_an_axes(records):
    """Every legend lies outside every axes of its figure (so it covers no curve, band or
    point), drawn as the report draws it."""
    import matplotlib

    figures = make_figures(records)
    seen = 0
    for f in figures:
        f.figure.canvas.draw()
        renderer = f.figure.canvas.get_renderer()
        boxes = [ax.get_window_extent(renderer) for ax in f.figure.axes if ax.get_visible()]
        for ax in f.figure.axes:
            legend = ax.get_legend()
            if legend is None:
                continue
            seen += 1
            box = legend.get_window_extent(renderer)
            assert not any(box.overlaps(b) for b in boxes), (f.name, ax.get_title())
        matplotlib.pyplot.close(f.figure)
    assert seen >= 3


def test_a_ratio_is_coloured_by_its_interval_not_by_thresholds():
    from dp_online_envs.lab.experiments.report import ratio_class

    assert ratio_class(1.03, 1.14) == "bad"    # x1.09 [1.03, 1.14]: above 1
    assert ratio_class(0.5, 0.97) == "good"
    assert ratio_class(0.9, 2.5) == ""         # contains 1: not told apart
    assert ratio_class(None, None) == "" and ratio_class(1.2, None) == ""
    assert ratio_class(1.0 - analysis.ROUNDING, 1.0 + analysis.ROUNDING) == ""


def test_no_counter_figure_without_several_counters(records):
    one = [r for r in records if r["agent_kwargs"].get("counter") != "tree"]
    assert [f.name for f in make_figures(one)][-1] != "counters"


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.tables, self.rows, self.text = [], [], 0, []
        self._in_summary = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a)
        if tag == "table":
            self.tables.append(a.get("id"))
            self._in_summary = a.get("id") == "summary"
        if tag == "tr" and self._in_summary:
            self.rows += 1

    def handle_endtag(self, tag):
        if tag == "table":
            self._in_summary = False

    def handle_data(self, data):
        self.text.append(data)


def test_report_is_self_contained_with_figures_and_table(small_sweep, tmp_path):
    run_sweep(small_sweep, results=tmp_path / "res", backend="serial", quiet=True)
    path = write_report(tmp_path / "res", tmp_path / "report.html")
    html = path.read_text()
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    parser = _Collect()
    parser.feed(html)
    text = " ".join(parser.text)
    assert len(parser.imgs) == 3
    for img in parser.imgs:
        assert img["src"].startswith("data:image/png;base64,") and img["alt"]
        png = base64.b64decode(img["src"].split(",", 1)[1])
        assert png.startswith(b"\x89PNG")
    assert "summary" in parser.tables
    # header, env heading, 5 settings and trivial play, which the report played
    assert parser.rows == 1 + 1 + 5 + 1
    for needle in ("How much regret does privacy cost?", "95%", "private-ftrl(counter=tree)",
                   "eps=4", "non-private", "numpy", "gymnasium", "dp-online-envs",
                   "Agarwal & Singh", "SeedSequence", "small"):
        assert needle in text, needle
    assert "http://" not in html and "https://" not in html  # nothing fetched from outside
    from dp_online_envs.lab.experiments.report import RATIO_COLOURS

    assert RATIO_COLOURS in html and "each env's largest horizon" in html


def test_the_headline_can_show_every_horizon(small_sweep, tmp_path):
    small_sweep["horizons"] = [100, 200]
    small_sweep["seeds"] = 2
    run_sweep(small_sweep, results=tmp_path / "res", backend="serial", quiet=True)
    one = write_report(tmp_path / "res", tmp_path / "one.html").read_text()
    every = write_report(tmp_path / "res", tmp_path / "all.html", all_horizons=True).read_text()
    assert "DPFullInfo-Experts-v0, T=200</h3>" in one and ", T=100</h3>" not in one
    assert every.index(", T=200</h3>") < every.index(", T=100</h3>")
    assert "at\nevery horizon" in every


def test_progress_bar_only_on_a_terminal(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Tty())
    assert type(runner.progress_bar(10, quiet=True, desc="x")).__name__ == "_NoBar"
    bar = runner.progress_bar(10, quiet=False, desc="x")
    assert type(bar).__name__ == "tqdm"
    bar.close()
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert type(runner.progress_bar(10, quiet=False, desc="x")).__name__ == "LineProgress"
    assert type(runner.progress_bar(10, quiet=True, desc="x")).__name__ == "_NoBar"


def test_redirected_progress_is_a_line_every_interval():
    now = [0.0]
    out = io.StringIO()
    bar = runner.LineProgress(200, desc="sweep", stream=out, interval=10.0,
                              clock=lambda: now[0])
    for t in (1.0, 5.0, 10.0, 12.0, 19.0, 21.0):  # lines at 10 and 21 (10 s after 10)
        now[0] = t
        bar.update(10)
    now[0] = 3725.0
    bar.update(130)
    now[0] = 3726.0
    bar.update(10)  # 1 s later: no line, but the last one comes at close
    bar.close()
    assert out.getvalue().splitlines() == [
        "sweep: 30/200 games (15%), 10s elapsed, about 57s left",
        "sweep: 60/200 games (30%), 21s elapsed, about 49s left",
        "sweep: 190/200 games (95%), 1h02m elapsed, about 3m16s left",
        "sweep: 200/200 games (100%), 1h02m elapsed"]
    bar.close()
    assert len(out.getvalue().splitlines()) == 4  # nothing new: no repeated line
    quiet = io.StringIO()
    short = runner.LineProgress(5, desc="x", stream=quiet, interval=10.0, clock=lambda: 1.0)
    short.update(5)
    short.close()
    assert quiet.getvalue() == ""  # a run shorter than the interval writes nothing


def test_progress_counts_rounds_so_a_long_game_weighs_its_horizon():
    """One game of T = 10^3 done in 10 s, one of T = 9.9 * 10^4 to go: 1% of the work,
    about 990 s left (counting games would say 50% and 10 s)."""
    now = [0.0]
    out = io.StringIO()
    bar = runner.LineProgress(2, desc="sweep", stream=out, interval=10.0, clock=lambda: now[0],
                              rounds=100_000)
    now[0] = 10.0
    bar.update(1, 1_000)
    assert out.getvalue().splitlines() == [
        "sweep: 1/2 games (1% of the rounds), 10s elapsed, about 16m30s left"]


def test_price_of_privacy_to_the_counterpart_and_to_the_best(tmp_path):
    # ftrl beats hedge on this instance? Either way the two ratios are told apart: one to
    # the counterpart (hedge, the same algorithm without noise), one to the best.
    sweep = {"name": "twins", "envs": ["DPFullInfo-Experts-v0"],
             "agents": ["hedge", "ftrl", {"name": "hedge", "kwargs": {"eta": 0.5}},
                        "private-ftrl"],
             "epsilons": [1.0, 1e6], "horizons": [200], "seeds": 2}
    records = run_games(parse_sweep(sweep).games, backend="serial").records
    assert {r["counterpart"] for r in records if r["private"]} == {"hedge"}
    assert all(r["counterpart"] is None for r in records if not r["private"])
    rows = analysis.summary(records)
    hedge = next(r for r in rows if r["agent_label"] == "hedge")
    best = min((r for r in rows if not r["private"]), key=lambda r: r["regret_mean"])
    for r in (r for r in rows if r["private"]):
        assert r["counterpart"] == "hedge"
        assert r["vs_counterpart"] == pytest.approx(r["regret_mean"] / hedge["regret_mean"])
        assert r["baseline"] == best["agent_label"]
        assert r["vs_baseline"] == pytest.approx(r["regret_mean"] / best["regret_mean"])
    # at epsilon = 1e6 the private learner is its counterpart up to the (tiny) noise
    huge = next(r for r in rows if r["private"] and r["epsilon"] == 1e6)
    assert huge["vs_counterpart"] == pytest.approx(1.0, rel=0.05)
    for r in (r for r in rows if not r["private"]):
        assert r["vs_counterpart"] is None
    # records written before the field existed: the registry's declaration is used
    old = [{k: v for k, v in r.items() if k != "counterpart"} for r in records]
    assert [r["vs_counterpart"] for r in analysis.summary(old)] == [
        r["vs_counterpart"] for r in rows]
    # without the counterpart in the sweep there is no such ratio, the best one stays
    alone = analysis.summary([r for r in records if r["agent_label"] != "hedge"])
    assert all(r["vs_counterpart"] is None and r["vs_baseline"] is not None
               for r in alone if r["private"])
    html = write_report(records, tmp_path / "r.html").read_text()
    assert "vs hedge" in html and "vs best" in html
    assert "vs same algorithm without noise" in html


def test_reference_agents_give_the_trivial_regret_and_are_never_the_baseline():
    import agents.reference

    assert analysis.REFERENCE_AGENTS == agents.reference.REFERENCE_AGENTS
    sweep = parse_sweep({"name": "ref", "envs": ["DPFullInfo-Experts-v0"],
                         "agents": ["hedge", "center", "uniform"], "epsilons": [1.0],
                         "horizons": [300], "seeds": 2})
    records = run_games(sweep.games, backend="serial").records
    rows = {r["agent"]: r for r in analysis.summary(records)}
    assert rows["center"]["reference"] and rows["uniform"]["reference"]
    assert not rows["hedge"]["reference"]
    trivial = min(rows["center"]["regret_mean"], rows["uniform"]["regret_mean"])
    for r in rows.values():
        assert r["trivial"] == pytest.approx(trivial)
        assert r["baseline"] == "hedge"  # a reference agent is no learner to compare to
    assert rows["hedge"]["vs_trivial"] == pytest.approx(rows["hedge"]["regret_mean"] / trivial)
    assert rows["hedge"]["vs_trivial"] < 0.5  # the default separates learning from not
    from dp_online_envs.lab.experiments.report import render_report

    parser = _Collect()
    parser.feed(render_report(records))
    text = " ".join(parser.text)
    assert "vs no learning" in text and text.count("no learning") >= 3  # header + 2 rows
    assert f"×{rows['hedge']['vs_trivial']:.3g}" in text
