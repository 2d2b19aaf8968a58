"""The contextual study: its sweep plays paired discovery and replication seeds, its
analysis writes a comparison only where both seed sets support it (checked on hand-made
records whose verdicts are known). The tutorial that plugs a learner of one's own into
the contextual ids is checked on the built site (``tests/test_docs.py``)."""

from __future__ import annotations

import importlib.util
import pathlib
import re

import numpy as np
import pandas as pd
import pytest

from dp_online_envs.lab.experiments.sweep import load_sweep

ROOT = pathlib.Path(__file__).resolve().parents[1]
STUDY = ROOT / "benchmarks" / "studies" / "contextual"
LINEAR = "DPBandit-ContextualLinear-v0"
T = 10000
DISCOVERY, REPLICATION = list(range(8)), list(range(5000, 5008))


def load(name: str, path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def study():
    return load("study_contextual", STUDY / "analysis.py")


def records(per_round: dict[tuple[str, float | None], tuple[float, float]],
            seed: int = 0) -> pd.DataFrame:
    """Games on both seed sets: learner ``(label, epsilon)`` loses
    ``per_round[...][0]`` a round on the discovery seeds and ``[1]`` on the replication
    seeds, times a per-seed factor shared by every learner (the instance), plus 1% noise
    of its own."""
    rng = np.random.default_rng(seed)
    instance = {s: 1 + 0.1 * rng.normal() for s in DISCOVERY + REPLICATION}
    rows = []
    for (label, eps), (disc, rep) in per_round.items():
        for s in DISCOVERY + REPLICATION:
            rate = disc if s < 5000 else rep
            rows.append((LINEAR, label, T, eps, s,
                         rate * T * instance[s] * (1 + 0.01 * rng.normal())))
    return pd.DataFrame(rows, columns=["env_id", "agent_label", "horizon", "epsilon",
                                       "seed_index", "regret"])


def by_setting(rows: list[list[str]]) -> dict[tuple[str, str], list[str]]:
    return {(r[0].strip("`"), r[1]): r for r in rows}


def test_a_comparison_is_written_only_where_both_seed_sets_support_it(study):
    frame = records({("uniform", None): (0.3, 0.3), ("linucb", None): (0.01, 0.01),
                     # lower than trivial play on both sets, higher than linucb on both
                     ("jdp-linucb", 1.0): (0.2, 0.2),
                     # lower on the discovery seeds, higher on the replication seeds
                     ("jdp-linucb", 3.0): (0.2, 0.4),
                     ("ldp-linucb", 1.0): (0.3, 0.3), ("ldp-linucb", 3.0): (0.25, 0.25)})
    rows = by_setting(study.private_rows(frame, T))
    both = rows["jdp-linucb", "1"]
    assert both[6] == "lower than `uniform`" and both[4] == "higher than `linucb`"
    # the ratio is given with its interval on each set, its point the ratio of the means
    disc, rep = both[5].split("; replication ")
    for text, seeds in ((disc, DISCOVERY), (rep, REPLICATION)):
        point, lo, hi = map(float, re.findall(r"-?\d+\.\d+", text))
        mine = frame[(frame.agent_label == "jdp-linucb") & (frame.epsilon == 1.0)
                     & frame.seed_index.isin(seeds)].regret.mean()
        trivial = frame[(frame.agent_label == "uniform") & frame.seed_index.isin(seeds)
                        ].regret.mean()
        assert point == pytest.approx(mine / trivial, abs=0.005) and lo <= point <= hi < 1
    split = rows["jdp-linucb", "3"]
    assert split[6] == "not replicated"
    disc, rep = split[5].split("; replication ")
    assert float(disc.split()[0]) < 1 < float(rep.split()[0])
    # equal to trivial play on both sets: neither side shown, never "equal"
    assert rows["ldp-linucb", "1"][6] == "~"
    assert rows["ldp-linucb", "3"][6] == "lower than `uniform`"
    summary = study.verdict_summary(list(rows.values()))
    assert "`jdp-linucb` at ε = 3" in summary.split("Not replicated")[1]
    assert "`jdp-linucb` at ε = 3" not in summary.split("Not replicated")[0]


def test_the_private_difference_and_the_references_replicate_or_say_not(study):
    frame = records({("uniform", None): (0.3, 0.3), ("linucb", None): (0.01, 0.01),
                     ("jdp-linucb", 0.1): (0.2, 0.2), ("ldp-linucb", 0.1): (0.25, 0.25),
                     ("jdp-linucb", 1.0): (0.2, 0.25), ("ldp-linucb", 1.0): (0.25, 0.2)})
    diffs = {r[0]: r for r in study.difference_rows(frame, T)}
    assert diffs["0.1"][2] == "`jdp-linucb` lower"
    assert diffs["1"][2] == "not replicated" and "; replication " in diffs["1"][1]
    linucb, trivial = study.reference_rows(frame, T)
    assert linucb[3] == "lower than `uniform`" and "; replication " in linucb[1]
    # one seed set only: its interval, and no comparison written
    one = frame[frame.seed_index < 5000]
    assert study.reference_rows(one, T)[0][3] == "one seed set only"
    assert "replication" not in study.reference_rows(one, T)[0][2]
    assert {r[6] for r in study.private_rows(one, T)} == {"one seed set only"}
    assert {r[2] for r in study.difference_rows(one, T)} == {"one seed set only"}
    assert "one seed set only" in study.verdict_summary(study.private_rows(one, T))


def test_a_degenerate_seed_is_named(study):
    trivial = {s: 0.3 * T for s in DISCOVERY + REPLICATION}
    assert study.instance_line(trivial, T).endswith("none.")
    trivial[5003] = 0.01 * T  # a uniformly random arm nearly wins this game
    line = study.instance_line(trivial, T)
    assert line.endswith(": 5003.") and "0.010 (seed 5003)" in line


def test_the_sweep_plays_every_learner_on_paired_discovery_and_replication_seeds():
    sweep = load_sweep(STUDY / "sweep.yaml")
    for env_id in ("DPBandit-ContextualLinear-v0", "DPBandit-ContextualClasses-v0"):
        games = [g for g in sweep.games if g.env_id == env_id]
        seeds: dict[tuple[str, float | None], set[int]] = {}
        for g in games:
            seeds.setdefault((g.agent, g.epsilon), set()).add(g.seed_index)
        assert len(seeds) == 2 + 2 * 4, env_id  # linucb, uniform; two private x 4 eps
        assert {frozenset(s) for s in seeds.values()} == {
            frozenset(DISCOVERY + REPLICATION)}, env_id
        for g in games:
            assert g.tags["seed_set"] == ("replication" if g.seed_index >= 5000
                                          else "discovery")
            if g.agent in ("jdp-linucb", "ldp-linucb"):
                assert g.delta > 0 and g.epsilon in (0.1, 0.3, 1, 3)
        # one env seed per seed index whatever the learner: the same games
        for index in DISCOVERY + REPLICATION:
            assert len({g.env_seed for g in games if g.seed_index == index}) == 1
