"""Games in flight report the rounds they have played, so the progress of one long game
moves before it ends (serial backend and local workers), and the records do not change.

No wall clock is asserted: the report intervals are set to 0 (a report at every look at
the clock, every ``PROGRESS_CHECK_ROUNDS`` rounds) or driven by an injected clock.
"""

from __future__ import annotations

import io
import re
import sys

from dp_online_envs.lab.experiments import backends, runner
from dp_online_envs.lab.experiments.game import play_game, stable_view
from dp_online_envs.lab.experiments.sweep import make_games

EVERY = backends.PROGRESS_CHECK_ROUNDS  # 256


def _games(horizon: int, seeds: int) -> list:
    return make_games("DPBandit-MAB-v0", "exp3", horizon=horizon, seeds=seeds,
                      epsilon=None, delta=None)


def test_a_round_ticker_reports_at_most_every_interval_at_its_looks():
    """Rounds of 10 ms, a look every 16 rounds, a report at least 1 s after the last:
    rounds 112 (1.12 s), 224 (2.24 s, 1.12 s after) and 336, each of the 112 rounds
    since the report before."""
    now, reports = [0.0], []
    ticker = backends.RoundTicker(reports.append, seconds=1.0, every=16, clock=lambda: now[0])
    at = []
    for t in range(1, 400):
        now[0] = t * 0.01
        before = len(reports)
        ticker(t, None, None)
        if len(reports) > before:
            at.append(t)
    assert at == [112, 224, 336]
    assert reports == [112, 112, 112]


def test_one_long_serial_game_prints_progress_lines_before_it_ends(monkeypatch):
    """One game of 2000 rounds: a line for each report of its rounds (every 256 rounds,
    0/1 games finished), then the last line; the record is the game's without reports."""
    monkeypatch.setattr(runner, "PROGRESS_SECONDS", 0.0)
    monkeypatch.setattr(backends, "GAME_PROGRESS_SECONDS", 0.0)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)  # not a terminal: LineProgress lines
    [spec] = _games(2000, 1)
    report = runner.run_games([spec], backend="serial", quiet=False, desc="long")
    lines = err.getvalue().splitlines()
    shares = [int(m.group(2)) for m in
              (re.match(r"long: (\d)/1 games \((\d+)% of the rounds\)", x) for x in lines)
              if m and m.group(1) == "0"]
    assert shares == [round(100 * k * EVERY / 2000) for k in range(1, 2000 // EVERY + 1)]
    assert lines[-1].startswith("long: 1/1 games (100% of the rounds)")
    assert stable_view(report.records[0]) == stable_view(play_game(spec))


def test_local_workers_report_every_game_in_flight_before_its_outcome(monkeypatch):
    """Two games on two worker processes: each reports 256 rounds five times (1500
    rounds), every report before its game's outcome; the records are the serial ones."""
    monkeypatch.setattr(backends, "GAME_PROGRESS_SECONDS", 0.0)  # sent to the workers
    specs = _games(1500, 2)
    events = []
    outcomes = backends.execute(specs, backend="local", workers=2,
                                on_rounds=lambda gid, n: events.append(("rounds", gid, n)))
    records = {}
    for spec, record, error in outcomes:
        assert error is None, error
        events.append(("done", spec.game_id, None))
        records[spec.game_id] = record
    for spec in specs:
        mine = [e for e in events if e[1] == spec.game_id]
        assert mine == [("rounds", spec.game_id, EVERY)] * (1500 // EVERY) + [
            ("done", spec.game_id, None)]
        assert stable_view(records[spec.game_id]) == stable_view(play_game(spec))


def test_a_report_after_its_games_outcome_is_not_counted_twice(monkeypatch):
    """A game's outcome adds the rounds it has not reported; a report that arrives after
    the outcome is dropped, so the share never passes the rounds of the games."""
    monkeypatch.setattr(runner, "PROGRESS_SECONDS", 0.0)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)

    def execute(specs, on_rounds=None, **_):
        for spec in specs:
            on_rounds(spec.game_id, 100)
            yield spec, play_game(spec), None
            on_rounds(spec.game_id, 50)  # late

    monkeypatch.setattr(runner, "execute", execute)
    runner.run_games(_games(200, 2), backend="serial", quiet=False, desc="x")
    shown = [re.match(r"x: (\d)/2 games \((\d+)% of the rounds\)", line).groups()
             for line in err.getvalue().splitlines()]
    assert shown == [("0", "25"), ("1", "50"), ("1", "75"), ("2", "100")]


def test_a_quiet_run_asks_for_no_reports(monkeypatch):
    """Without a progress display the games carry no ticker (nothing to pay for)."""
    seen = []
    real = backends.execute

    def spy(specs, **kw):
        seen.append(kw.get("on_rounds"))
        return real(specs, **kw)

    monkeypatch.setattr(runner, "execute", spy)
    runner.run_games(_games(20, 1), backend="serial", quiet=True)
    assert seen == [None]


def test_the_reports_reference_phase_shows_its_progress(monkeypatch, tmp_path, capsys):
    """``write_report`` on results without trivial play plays the reference agent's
    games with a progress line as a run's (quiet: none)."""
    from dp_online_envs.lab.experiments.report import REPORT_REFERENCE, write_report
    from dp_online_envs.lab.experiments.runner import run

    monkeypatch.setattr(runner, "PROGRESS_SECONDS", 0.0)
    records = run("DPFullInfo-Experts-v0", "hedge", horizon=300, seeds=2, backend="serial")
    capsys.readouterr()
    write_report(records, tmp_path / "r.html", backend="serial")
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].startswith(f"reference games ({REPORT_REFERENCE}, trivial play): 2/2 "
                                "games (100% of the rounds)")
    write_report(records, tmp_path / "q.html", backend="serial", quiet=True)
    assert capsys.readouterr().err == ""


def test_the_time_left_of_an_enormous_game_is_said_in_days_or_years():
    """A legal horizon of 10^15 rounds at 10^5 rounds a second: about 317 years."""
    assert [runner.duration(s) for s in (42, 185, 7620, 2 * 86_400 + 3 * 3600 + 59,
                                         10**15 / 1e5)] == [
        "42s", "3m05s", "2h07m", "2d03h", "317 years"]
    assert runner.duration(2 * 86_400 - 1) == "47h59m"
    assert runner.duration(2 * 31_557_600 - 1) == "730d11h"
