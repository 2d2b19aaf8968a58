"""The studies of docs/results.md played through the product: each a sweep file that
``dp-online sweep`` loads, and an analysis module that renders its block from the
stored results (checked here on results whose verdicts are known)."""

from __future__ import annotations

import importlib.util
import math
import pathlib
import sys

import numpy as np
import pandas as pd
import pytest

from dp_online_envs.envs.registry import ENV_IDS
from dp_online_envs.lab.experiments.sweep import load_sweep

ROOT = pathlib.Path(__file__).resolve().parents[1]
STUDIES = ROOT / "benchmarks" / "studies"


def analysis(name: str):
    spec = importlib.util.spec_from_file_location(f"study_{name}",
                                                  STUDIES / name / "analysis.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_study_is_a_sweep_file_and_an_analysis_module_named_in_make_results():
    spec = importlib.util.spec_from_file_location("make_results",
                                                  ROOT / "benchmarks" / "make_results.py")
    make_results = importlib.util.module_from_spec(spec)
    sys.modules["make_results"] = make_results  # dataclasses look their module up
    spec.loader.exec_module(make_results)
    studies = sorted(p.name for p in STUDIES.iterdir() if (p / "sweep.yaml").exists())
    blocks = [s for s in make_results.SECTIONS if s.study]
    assert studies and studies == sorted({s.study for s in blocks})
    for section in blocks:  # a study may render several blocks, each by a named function
        assert callable(getattr(analysis(section.study), section.render))
    for name in studies:
        assert load_sweep(STUDIES / name / "sweep.yaml").games


def test_the_separation_study_plays_every_registered_id_with_trivial_play_on_paired_seeds():
    sweep = load_sweep(STUDIES / "separation" / "sweep.yaml")
    ids = {g.env_id for g in sweep.games}
    assert ids == set(ENV_IDS)
    for env_id in ids:
        games = [g for g in sweep.games if g.env_id == env_id]
        agents = {g.agent for g in games}
        assert "center" in agents and len(agents) >= 3, env_id
        seeds = {(a, h): {g.seed_index for g in games if g.agent == a and g.horizon == h}
                 for a, h in {(g.agent, g.horizon) for g in games}}
        assert len({frozenset(s) for s in seeds.values()}) == 1, env_id  # paired
        assert len({g.horizon for g in games}) >= 2, env_id  # the slope's two horizons
        # same env seed for every learner of one seed index: the same loss sequences
        for index in {g.seed_index for g in games}:
            assert len({g.env_seed for g in games if g.seed_index == index
                        and g.horizon == games[0].horizon}) == 1, env_id


def frame(rows: list[tuple[str, str, int, int, float, float | None]]):
    return pd.DataFrame(rows, columns=["env_id", "agent", "horizon", "seed_index", "regret",
                                       "epsilon"])


def test_the_separation_analysis_gives_the_verdicts_its_intervals_support():
    sep = analysis("separation")
    rng = np.random.default_rng(0)
    rows = []
    for s in range(8):
        tr0, tr = 0.1 * 1000 * (1 + 0.01 * rng.normal()), 0.1 * 4000 * (1 + 0.01 * rng.normal())
        rows += [("E", "center", 1000, s, tr0, None), ("E", "center", 4000, s, tr, None),
                 ("E", "learns", 4000, s, 0.1 * tr * (1 + 0.05 * rng.normal()), None),
                 ("E", "half", 4000, s, 0.5 * tr * (1 + 0.05 * rng.normal()), None),
                 ("E", "private-worse", 4000, s, 2.0 * tr * (1 + 0.05 * rng.normal()), 1.0),
                 ("E", "private-ok", 4000, s, 0.7 * tr * (1 + 0.05 * rng.normal()), 1.0)]
    by_learner = {r["learner"]: r for r in sep.id_rows(frame(rows), "E")}
    assert by_learner["center (trivial)"]["criterion"] == "slope > 0.9: ok"
    assert by_learner["learns"]["criterion"] == "<= trivial/2: ok"
    assert by_learner["half"]["criterion"] == "<= trivial/2: ~"  # 0.5 sits in its interval
    assert by_learner["private-worse"]["criterion"] == "< trivial: FAIL"
    assert by_learner["private-ok"]["criterion"] == "< trivial: ok"
    assert by_learner["private-ok"]["privacy"] == "ε = 1"
    assert 0.09 < float(by_learner["learns"]["ratio"].split()[0]) < 0.11
    # a sublinear trivial play fails the slope
    flat = [row for s in range(8) for row in (("E", "center", 1000, s, 200.0 + s, None),
                                              ("E", "center", 4000, s, 400.0 + 2 * s, None))]
    (row,) = sep.id_rows(frame(flat), "E")
    assert row["criterion"] == "slope > 0.9: FAIL"
    assert sep.table(frame(rows), ids=["E"]).count("\n") == 2 + 4
    assert sep.id_rows(frame(rows), "missing") == []


def test_the_rates_split_the_regret_into_the_shrink_cost_and_the_rest():
    """Regret built as ``alpha x trivial + rest`` with known ``alpha`` and rest slopes: the
    table gives back the shrink cost, the rest, the slopes and the regime each allows."""
    sep = analysis("separation")
    shrinks = {("garber-kretzu", 1000): (0.5, True), ("garber-kretzu", 4000): (0.2, False),
               ("garber-kretzu", 16000): (0.1, False), ("private-projection-free", 1000):
               (0.5, True), ("private-projection-free", 4000): (0.4, False),
               ("private-projection-free", 16000): (0.4, False),
               ("garber-kretzu-tuned", 4000): (0.25, False),
               ("garber-kretzu-tuned", 16000): (0.25, False)}
    rng = np.random.default_rng(1)
    rows = []
    for s in range(8):
        for t in (1000, 4000, 16000):
            tr = 0.5 * t * (1 + 0.01 * rng.normal())
            rows.append(("E", "center", t, s, tr, None))
            for agent in ("garber-kretzu", "private-projection-free", "garber-kretzu-tuned"):
                if (agent, t) in shrinks:
                    eps = 1.0 if agent.startswith("private") else None
                    rest = (1.0 if eps else 3.0) * t**0.75 * (1 + 0.01 * rng.normal())
                    rows.append(("E", agent, t, s, shrinks[agent, t][0] * tr + rest, eps))
    got = sep.rate_rows(frame(rows), "E",
                        shrink_at=lambda env_id, agent, t, eps: shrinks[agent, t])
    by = {(r["learner"], r["T"]): r for r in got}
    tr16 = np.mean([r[4] for r in rows if r[1] == "center" and r[2] == 16000])
    assert float(by["garber-kretzu", 16000]["shrink"].split()[0].replace(",", "")) == \
        pytest.approx(0.1 * tr16, abs=0.5)
    assert float(by["garber-kretzu", 4000]["rest_slope"].split()[0]) == pytest.approx(0.75,
                                                                                    abs=0.02)
    assert by["garber-kretzu", 4000]["regime"] == "clamped"  # clamped at 1000
    assert by["garber-kretzu", 16000]["regime"] == "theorem's regime"
    # shrink 0.4 of trivial play's 0.5 T outweighs the rest T^0.75 at these T
    assert by["private-projection-free", 16000]["regime"].startswith("schedule")
    assert by["garber-kretzu-tuned", 16000]["regime"] == "tuned (fixed shrink)"
    assert by["garber-kretzu", 1000]["alpha"] == "0.5 (clamped)"
    assert by["garber-kretzu", 1000]["regime"] == ""  # no previous T


@pytest.mark.parametrize("lo, hi, threshold, below, expected", [
    (0.1, 0.4, 0.5, True, "ok"), (0.6, 0.9, 0.5, True, "FAIL"), (0.4, 0.6, 0.5, True, "~"),
    (None, 0.4, 0.5, True, "ok"), (0.1, None, 0.5, True, "~"), (None, None, 1, True, "~"),
    (0.95, 1.1, 0.9, False, "ok"), (0.5, 0.8, 0.9, False, "FAIL"),
    (math.nan, 0.4, 0.5, True, "ok")])
def test_an_interval_verdict(lo, hi, threshold, below, expected):
    assert analysis("separation").interval_verdict(lo, hi, threshold, below) == expected


def test_the_separation_study_plays_each_ids_family_as_the_leaderboard_defines_it():
    from dp_online_envs.lab.leaderboard.score import family

    sweep = load_sweep(STUDIES / "separation" / "sweep.yaml")
    for env_id in ENV_IDS:
        agents = {g.agent for g in sweep.games if g.env_id == env_id}
        fam = family(env_id)
        assert {fam.nonprivate[0], fam.private} <= agents, (env_id, agents)
