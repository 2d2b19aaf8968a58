"""``dp-online leaderboard``: the same secret gives the same page byte for byte; a lying
submission is refuted and unranked; a failing one gets its reason in its row."""

from __future__ import annotations

import csv
import dataclasses
import pathlib

import pytest

from agents.full_info.hedge import Hedge
from agents.privacy import PrivacyGuarantee
from dp_online_envs.lab.cli import main
from dp_online_envs.lab.experiments.resolver import resolve_agent
from dp_online_envs.lab.experiments.runner import RunReport
from dp_online_envs.lab.isolation import IsolationLimits
from dp_online_envs.lab.leaderboard import (
    Benchmark,
    Learner,
    build_board,
    load_learners,
    write_board,
)
from dp_online_envs.lab.leaderboard import board as board_module
from dp_online_envs.lab.leaderboard.score import (
    AUDIT_GAMES,
    SCORE_VERSION,
    Interval,
    yardstick,
)
from dp_online_envs.lab.sandbox import sandbox_unavailable

from .liars import BanditHorizonLiar, FullHorizonLiar, HorizonLiar

ROOT = pathlib.Path(__file__).resolve().parents[2]
TINY = ["--ids", "DPBandit-MAB-v0", "--horizons", "64", "--seeds", "2", "--epsilons", "1",
        "--audit-horizon", "256", "--audit-games", "1", "--backend", "serial", "--quiet"]


def _files(out: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file()}


def test_same_secret_same_page_byte_for_byte(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DP_ONLINE_LEADERBOARD_SECRET", "s1")
    learners = ["exp3", "private-exp2", "hedge"]
    for name in ("a", "b"):
        assert main(["leaderboard", *learners, "--results", str(tmp_path / f"r{name}"),
                     "-o", str(tmp_path / name), *TINY]) == 0
    first, second = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert first == second and "index.html" in first and "scores.csv" in first
    assert "rows/private-exp2_eps1.html" in first
    # a rerun on the stored results writes the same files again
    assert main(["leaderboard", *learners, "--results", str(tmp_path / "ra"),
                 "-o", str(tmp_path / "c"), *TINY]) == 0
    assert _files(tmp_path / "c") == first
    monkeypatch.setenv("DP_ONLINE_LEADERBOARD_SECRET", "s2")  # other seeds, other numbers
    assert main(["leaderboard", *learners, "--results", str(tmp_path / "rd"),
                 "-o", str(tmp_path / "d"), *TINY]) == 0
    assert _files(tmp_path / "d")["scores.csv"] != first["scores.csv"]
    page = first["index.html"].decode()
    assert "A subset of the benchmark" in page and SCORE_VERSION in page
    rows = list(csv.DictReader((tmp_path / "a" / "scores.csv").open()))
    assert {r["score_version"] for r in rows} == {SCORE_VERSION}
    by = {(r["learner"], r["id"]): r for r in rows}
    # hedge is full-information: it plays no bandit id, so it has no score
    assert by[("hedge", "benchmark")]["score"] == ""
    assert "no scorable id" in by[("hedge", "benchmark")]["reason"]
    # a one-id board: the benchmark score is the id's score
    assert by[("exp3", "benchmark")]["score"] == by[("exp3", "DPBandit-MAB-v0")]["score"]
    assert by[("private-exp2", "benchmark")]["declared_epsilon"] == "1.0"


def test_audits_on_worker_processes_give_the_serial_page(tmp_path, monkeypatch, capsys):
    """The audits (two claims, two power measurements) run on two local worker
    processes and write the page the serial build writes, byte for byte."""
    monkeypatch.setenv("DP_ONLINE_LEADERBOARD_SECRET", "s1")
    learners = ["private-exp2", "private-bandit"]
    local = [a if a != "serial" else "local" for a in TINY if a != "--quiet"]
    assert main(["leaderboard", *learners, "--results", str(tmp_path / "rs"),
                 "-o", str(tmp_path / "serial"), *TINY]) == 0
    assert main(["leaderboard", *learners, "--results", str(tmp_path / "rl"),
                 "-o", str(tmp_path / "local"), *local, "--workers", "2"]) == 0
    assert "auditing 2 claims on 2 worker(s)" in capsys.readouterr().err
    serial, parallel = _files(tmp_path / "serial"), _files(tmp_path / "local")
    assert serial == parallel
    assert '"refuted"' in serial["board.json"].decode()  # the audits were run


def test_missing_secret_and_unknown_id_are_named(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DP_ONLINE_LEADERBOARD_SECRET", raising=False)
    assert main(["leaderboard", "exp3", "--results", str(tmp_path), "-o", str(tmp_path)]) == 2
    assert "DP_ONLINE_LEADERBOARD_SECRET is not set" in capsys.readouterr().err
    monkeypatch.setenv("DP_ONLINE_LEADERBOARD_SECRET", "s")
    assert main(["leaderboard", "exp3", "--ids", "DPBandit-Nope-v0", "--results",
                 str(tmp_path), "-o", str(tmp_path)]) == 2
    assert "DPBandit-Nope-v0" in capsys.readouterr().err


def test_a_liar_is_refuted_and_unranked_a_crash_has_its_reason(tmp_path):
    files = [ROOT / "examples/course/submissions/cheat.py",
             ROOT / "tests/experiments/grade_submissions/crashes.py"]
    learners = load_learners(["private-exp2", *map(str, files)],
                             limits=IsolationLimits(timeout=5.0),
                             sandboxed=sandbox_unavailable() is None)
    # epsilon 0.1: plain EXP3 claiming it is refuted by six audit games of T = 4096
    # (eps_lb 0.65 to 1.77 over nine secrets; with two games it escapes on two of seven);
    # private-exp2's is 0; one noise cut for the power
    bench = Benchmark(ids=("DPBandit-MAB-v0",), horizons=(64,), seeds=2, epsilons=(0.1,),
                      audit_horizon=4096, audit_games=6, power_factors=(10.0,))
    board = build_board(learners, bench, results=tmp_path / "r", secret="class")
    rows = {r.learner: r for r in board.rows}
    cheat, crash, honest = rows["cheat"], rows["crashes"], rows["private-exp2"]
    assert cheat.declared[:2] == (0.1, 0.0) and cheat.score is not None
    assert cheat.refuted and not cheat.ranked and cheat.rank is None
    # private-exp2's noise-free twin is not refuted either: the audit has no power on
    # it, so it is not ranked as audited, and says why
    assert not honest.refuted and honest.audit["verdict"] == "no audit power"
    assert not honest.ranked and "no audit power" in honest.audit_note
    assert honest.audit["twin"]["factor"] == 1e4 and not honest.audit["twin"]["refuted"]
    assert crash.score is None and "ZeroDivisionError" in crash.reason
    write_board(board, tmp_path / "out")
    page = (tmp_path / "out" / "index.html").read_text()
    cheat_row = next(line for line in page.split("<tr") if "cheat.py" in line)
    assert "<span class=refuted>refuted</span>" in cheat_row and "unranked" in cheat_row
    crash_row = next(line for line in page.split("<tr") if "crashes.py" in line)
    assert "divided by zero" in crash_row


class HedgeClaimsPrivacy(Hedge):
    """Plain Hedge (no noise) declaring epsilon-DP: a full-information liar."""

    name = "hedge-liar"
    private = True

    def setup(self) -> None:
        super().setup()
        self.privacy = PrivacyGuarantee(self.epsilon, 0.0, mechanism="none (a lie)")


def test_full_information_liars_are_refuted_and_the_unaudited_unranked(tmp_path):
    """Full-information learners are audited on DPFullInfo-Experts-v0: Hedge claiming
    epsilon = 1 is refuted and unranked, private-ftrl is ranked, and submod-pftal, which
    cannot play the audit game, is scored but not ranked (nothing unaudited is)."""
    learners = [*load_learners(["private-ftrl", "submod-pftal"], limits=IsolationLimits(),
                               sandboxed=False), Learner("hedge-liar", HedgeClaimsPrivacy)]
    # two audit games of T = 1024 (64 guesses each): Hedge's eps_lb is about 3.7,
    # private-ftrl's 0; one noise cut of private-ftrl for the power
    bench = Benchmark(ids=("DPFullInfo-Experts-v0", "DPFullInfo-Submodular-v2"),
                      horizons=(64,), seeds=2, epsilons=(1.0,), audit_horizon=1024,
                      audit_games=2, power_factors=(1000.0,))
    board = build_board(learners, bench, results=tmp_path / "r", secret="class")
    rows = {r.learner: r for r in board.rows}
    cheat, honest, unaudited = rows["hedge-liar"], rows["private-ftrl"], rows["submod-pftal"]
    assert cheat.score is not None and cheat.declared[:2] == (1.0, 0.0)
    assert cheat.refuted and cheat.audit["eps_lb"] > 1.0 and not cheat.ranked
    assert "moved most" in cheat.audit["rule"]
    assert honest.audit is not None and not honest.refuted
    assert honest.ranked and honest.rank == 1
    assert unaudited.score is not None and unaudited.audit is None
    assert not unaudited.ranked and unaudited.rank is None
    assert "not audited, so not ranked" in unaudited.audit_note
    assert "DPFullInfo-Experts-v0" in unaudited.audit_note
    power, text = board.power[("DPFullInfo-Experts-v0", 1.0)]
    assert power["reference"] == "private-ftrl" and power["smallest_refuted"] == 1000.0
    write_board(board, tmp_path / "out")
    page = (tmp_path / "out" / "index.html").read_text()
    row = next(line for line in page.split("<tr") if "submod-pftal" in line)
    assert "unranked" in row and "not audited" in row
    assert "Audit power at &epsilon; = 1</b> (on DPFullInfo-Experts-v0," in page


def test_an_unaudited_private_row_is_not_ranked():
    """A scored private row within its table's budget but without an audit finding is
    not ranked, and says so."""
    row = board_module.Row("x", "registered", "full", 1.0, 0.0, declared=(1.0, 0.0, "m"),
                           score=Interval.of([0.5, 0.7]))
    board_module._rank_flag(row)
    assert not row.ranked and row.audit_note == "not audited, so not ranked"
    row.audit = {"refuted": False, "eps_lb": 0.0, "verdict": "no audit power", "power": "p"}
    row.audit_note = ""
    board_module._rank_flag(row)
    assert not row.ranked and row.audit_note == "no audit power, so not ranked as audited: p"
    row.audit["verdict"] = "not refuted"
    row.audit_note = ""
    board_module._rank_flag(row)
    assert row.ranked


def test_infeasible_actions_are_the_rows_reason():
    (learner,) = load_learners(["exp3"], limits=IsolationLimits(), sandboxed=False)
    bench = Benchmark(ids=("DPBandit-MAB-v0",), horizons=(8,), seeds=2)
    sticks = {("DPBandit-MAB-v0", 8): yardstick([4.0, 4.0], {"ucb1": [1.0, 1.0]})}

    def fake_run(specs, **_):
        return RunReport([{"env_id": s.env_id, "horizon": s.horizon, "seed_index": s.seed_index,
                           "regret": 1.0, "projected_actions": 3 * s.seed_index,
                           "privacy_epsilon": None, "privacy_delta": None,
                           "privacy_mechanism": None} for s in specs], len(specs), 0, [],
                         None, 0.0)

    row, _ = board_module._play(learner, None, bench, fake_run, sticks)
    assert row.score is None and "3 infeasible action(s)" in row.reason


@pytest.mark.parametrize("name", ["nope-agent"])
def test_unknown_learner_is_named(name):
    from dp_online_envs.lab.experiments.errors import ExperimentError

    with pytest.raises(ExperimentError, match=name):
        load_learners([name], limits=IsolationLimits(), sandboxed=False)


def test_horizon_switching_liars_are_audited_at_the_scored_horizons(tmp_path):
    """Learners that are EXP3 (bandit) or Hedge (full information) in every scored game
    (T = 1024) and private only in longer games: the audit plays every scored horizon,
    drawn as the scored games are, so both are refuted and unranked. Audited at a horizon no
    scored game has (as the audit's fixed T = 16384 once was; here T = 2048, the shortest
    at which the liars play their private forms) neither liar is refuted."""
    learners = [*load_learners(["private-exp2", "private-ftrl"], limits=IsolationLimits(),
                               sandboxed=False),
                Learner(BanditHorizonLiar.name, BanditHorizonLiar),
                Learner(FullHorizonLiar.name, FullHorizonLiar)]
    # 16 games of T = 1024: plain EXP3 claiming 0.1 has eps_lb 1.2-1.8 (four seeds),
    # Hedge about 5.8
    bench = Benchmark(ids=("DPBandit-MAB-v0", "DPFullInfo-Experts-v0"), horizons=(1024,),
                      seeds=2, epsilons=(0.1,), audit_games=16, power_factors=(1000.0,))
    assert bench.audit_horizons == (1024,)
    board = build_board(learners, bench, results=tmp_path / "r", secret="class")
    rows = {r.learner: r for r in board.rows}
    for liar, honest in (("bandit-horizon-liar", "private-exp2"),
                         ("full-horizon-liar", "private-ftrl")):
        cheat = rows[liar]
        assert cheat.score is not None and cheat.declared[:2] == (0.1, 0.0)
        assert cheat.audit["horizons"] == [1024] and cheat.audit["refuted"], cheat.audit
        assert cheat.refuted and not cheat.ranked and cheat.rank is None
        assert not rows[honest].refuted
        assert cheat.score.score > rows[honest].score.score  # it would have ranked first
    # Hedge, private-ftrl's twin, is refuted: private-ftrl is ranked; private-exp2's
    # twin is not, so it is not ranked as audited
    assert rows["private-ftrl"].rank == 1 and rows["private-ftrl"].audit["twin"]["refuted"]
    assert rows["private-exp2"].audit["verdict"] == "no audit power"
    assert not rows["private-exp2"].ranked
    elsewhere = dataclasses.replace(bench, audit_horizon=HorizonLiar.LONG)
    for cls in (BanditHorizonLiar, FullHorizonLiar):
        row = board_module.Row(cls.name, "registered", cls.feedback, 0.1, 0.0,
                               declared=(0.1, 0.0, "m"))
        job = board_module._audit_job(row, Learner(cls.name, cls), elsewhere, tmp_path, "k")
        board_module._set_audit(row, board_module._audit_finding(job))
        assert row.audit["horizons"] == [2048] and not row.refuted, row.audit


class FKMClaimsPrivacy(resolve_agent("fkm")):
    """Plain FKM (no noise) declaring epsilon-DP: a bandit liar that cannot play arms."""

    name = "fkm-liar"
    private = True

    def setup(self) -> None:
        super().setup()
        self.privacy = PrivacyGuarantee(self.epsilon, 0.0, mechanism="none (a lie)")


def _audited(learner, bench, tmp_path, feedback="bandit"):
    row = board_module.Row(learner.name, "registered", feedback, 1.0, 0.0,
                           declared=(1.0, 0.0, "m"))
    job = board_module._audit_job(row, learner, bench, tmp_path, "k")
    if job is not None:
        board_module._set_audit(row, board_module._audit_finding(job))
    return row


def test_a_bandit_learner_refusing_arms_is_audited_on_the_matroid_game(tmp_path):
    """Neither refuses to be audited: both refuse DPBandit-MAB-v0 and get the next audit
    game, the matroid. Plain FKM claiming epsilon = 1 is refuted there (eps_lb about
    2.2 on two games of T = 1024), bandit-pftal (its private form) is not; one that plays
    no audit game is named unaudited, with every game's refusal."""
    bench = Benchmark(ids=("DPBandit-Matroid-v2",), horizons=(64,), seeds=2, epsilons=(1.0,),
                      audit_horizon=1024, audit_games=2)
    liar = _audited(Learner("fkm-liar", FKMClaimsPrivacy), bench, tmp_path)
    honest = _audited(Learner("bandit-pftal", resolve_agent("bandit-pftal")), bench, tmp_path)
    for row in (liar, honest):
        assert row.audit_game == {"env_id": "DPBandit-Matroid-v2",
                                  "env_kwargs": {"adversary": "stochastic"}}
        assert "bandit points" in row.audit["rule"] and row.audit["guesses"] > 0
    assert liar.refuted and liar.audit["eps_lb"] > 1.0
    assert not honest.refuted and honest.audit["eps_lb"] < 1.0
    # a cached finding is read back with its game
    again = _audited(Learner("fkm-liar", FKMClaimsPrivacy), bench, tmp_path)
    assert again.audit == liar.audit and again.audit_game == liar.audit_game

    class Refuses(FKMClaimsPrivacy):
        def setup(self) -> None:
            raise ValueError("plays nothing")

    none = _audited(Learner("refuses", Refuses), bench, tmp_path)
    assert none.audit is None and none.audit_game is None
    assert none.audit_note.startswith("not audited, so not ranked: plays none of the audit "
                                      "games of bandit learners")
    for env, _ in AUDIT_GAMES["bandit"]:
        assert env in none.audit_note


def test_the_page_gives_notes_room_and_lists_the_differing_settings():
    from dp_online_envs.lab.leaderboard.page import NOTE_CHARS, render_index

    long = "not audited, so not ranked: " + "a very long reason " * 20
    rows = [board_module.Row("x", "registered", "bandit", 1.0, 0.0, declared=(1.0, 0.0, "m"),
                             score=Interval.of([0.5, 0.7]), audit_note=long),
            board_module.Row("y", "registered", "bandit", 1.0, 0.0, declared=(1.0, 0.0, "m"),
                             score=Interval.of([0.5, 0.7]),
                             audit={"refuted": False, "eps_lb": 0.0},
                             audit_game={"env_id": "DPBandit-Matroid-v2",
                                         "env_kwargs": {"adversary": "stochastic"}})]
    bench = Benchmark(ids=("DPBandit-MAB-v0",), horizons=(64,), seeds=2, epsilons=(1.0,))
    page = render_index(board_module.Board(bench, rows, {}, {}, {}, []))
    cell = next(c for c in page.split("<td") if "a very long reason" in c)
    assert "class='note l'" in cell and "&hellip;" in cell
    assert f"title='{long}'" in cell  # the full note on hover
    shown = cell.split(">", 3)[2].split("&hellip;")[0]
    assert len(shown) <= NOTE_CHARS
    assert "td.note{white-space:normal;text-align:left;min-width:24em" in page
    assert "on Matroid-v2" in page  # the audit game beside the verdict
    banner = page.split("A subset of the benchmark", 1)[1].split("</div>", 1)[0]
    assert "{" not in banner  # no JSON dict
    assert "<li>horizons: 64 (full benchmark: 1024, 4096)</li>" in banner
    assert "<li>seeds: 2 (full benchmark: 4)</li>" in banner
    assert "<li>epsilons: 1 (full benchmark: 0.1, 1, 10)</li>" in banner
    assert "audit_games" not in banner  # equal settings are not listed


def test_every_registered_private_learners_verdict_is_printed_with_its_power(tmp_path):
    """Each registered private learner audited (one game of T = 64 of its kind's audit
    game: the verdicts here say nothing of the learners, only how they are shown): its
    row's audit cell is "refuted", "not refuted" or "no audit power", its power cell
    names the guesses and the randomized response (and the noise-free twin, played for
    every claim not refuted), a "not refuted" needs the twin refuted, and a "no audit
    power" row is not ranked as audited."""
    from agents import agent_class, list_agents
    from dp_online_envs.lab.leaderboard.page import _audit_word, render_index

    names = sorted(a.name for a in list_agents() if agent_class(a.name).private)
    bench = Benchmark(ids=("DPBandit-MAB-v0",), horizons=(64,), seeds=2, epsilons=(1.0,),
                      audit_games=1)
    rows = []
    for name in names:
        cls = resolve_agent(name)
        delta = 1e-6 if name in ("private-ftpl", "private-ftpl-grad", "private-lazy-mw") else 0.0
        row = board_module.Row(name, "registered", cls.feedback, 1.0, delta,
                               declared=(1.0, delta, "m"), score=Interval.of([0.5, 0.7]))
        job = board_module._audit_job(row, Learner(name, cls), bench, tmp_path, "k")
        board_module._set_audit(row, board_module._audit_finding(job))
        board_module._rank_flag(row)
        rows.append(row)
    audited = [r for r in rows if r.audit is not None]
    # submod-pftal plays no audit game; the private contextual learners play only the
    # contextual ids, which have no audit game yet
    assert {r.learner for r in rows if r.audit is None} == {
        "submod-pftal", "jdp-linucb", "ldp-linucb"}
    page = render_index(board_module.Board(bench, rows, {}, {}, {}, []))
    for row in audited:
        word = _audit_word(row)
        assert word in ("refuted", "not refuted", "no audit power"), (row.learner, word)
        tr = next(t for t in page.split("<tr") if f"rows/{row.key}.html" in t)
        cells = tr.split("<td")
        audit_cell, power_cell = cells[6], cells[7]
        assert word in audit_cell, (row.learner, audit_cell)
        assert "guesses" in power_cell, (row.learner, power_cell)
        if word != "refuted":
            assert row.audit["twin"] is not None and "twin" in power_cell, row.learner
        if word == "not refuted":
            assert row.audit["twin"]["refuted"] and row.ranked, row.learner
        if word == "no audit power":
            assert not row.ranked and "no audit power" in row.audit_note, row.learner
