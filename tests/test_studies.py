"""The analyses of the studies of docs/results.md: each renders its block from stored
results, checked here on hand-made results whose verdicts are known (every verdict
decided on an interval of floats, so tests/test_cpu_portability.py reruns this file at a
lower SIMD level). The studies' sweep files and their replays: tests/test_study_sweeps.py."""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import pathlib
import sys

import numpy as np
import pandas as pd
import pytest

from dp_online_envs.lab.experiments.sweep import load_sweep

ROOT = pathlib.Path(__file__).resolve().parents[1]
STUDIES = ROOT / "benchmarks" / "studies"
sys.path.insert(0, str(STUDIES))

import paired_stats as ps  # noqa: E402  (the studies' shared statistics)


def analysis(name: str):
    spec = importlib.util.spec_from_file_location(f"study_{name}",
                                                  STUDIES / name / "analysis.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    assert by["garber-kretzu", 4000]["regime"] == ps.SCHEDULE_CLAMPED  # clamped at 1000
    assert by["garber-kretzu", 16000]["regime"] == ps.THEOREMS_REGIME
    # shrink 0.4 of trivial play's 0.5 T outweighs the rest T^0.75 at these T
    assert by["private-projection-free", 16000]["regime"] == ps.SCHEDULE_LARGER
    assert by["garber-kretzu-tuned", 16000]["regime"] == ps.FIXED_SCHEDULE
    assert by["garber-kretzu", 1000]["alpha"] == "0.5 (clamped)"
    assert by["garber-kretzu", 1000]["regime"] == ""  # no previous T


@pytest.mark.parametrize("lo, hi, threshold, below, expected", [
    (0.1, 0.4, 0.5, True, "ok"), (0.6, 0.9, 0.5, True, "FAIL"), (0.4, 0.6, 0.5, True, "~"),
    (None, 0.4, 0.5, True, "ok"), (0.1, None, 0.5, True, "~"), (None, None, 1, True, "~"),
    (0.95, 1.1, 0.9, False, "ok"), (0.5, 0.8, 0.9, False, "FAIL"),
    (math.nan, 0.4, 0.5, True, "ok")])
def test_an_interval_verdict(lo, hi, threshold, below, expected):
    assert analysis("separation").interval_verdict(lo, hi, threshold, below) == expected


# --- the paired comparisons of the newer-learners, private-experts and private-stochastic
# studies, on hand-made frames whose verdicts are known

def seeded_rows(seed, spread, horizons, rows_at, seeds=8):
    """Rows of hand-made games: seed index ``s`` has the level ``c = 1 + spread * N(0, 1)``
    (drawn in turn from ``default_rng(seed)``, shared by the learners: paired), and
    ``rows_at(s, c, t, rng)`` gives its rows at horizon ``t`` (any further draws from
    ``rng``)."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(seeds):
        c = 1 + spread * rng.normal()
        for t in horizons:
            rows += rows_at(s, c, t, rng)
    return rows


def games_frame(rows):
    """A results frame from ``(adversary, label, horizon, epsilon, seed, regret[,
    switches])`` rows (the columns the analyses read)."""
    out = []
    for row in rows:
        adv, label, t, eps, s, regret, *rest = row
        out.append({"env_id": "E", "env_options.adversary": adv, "agent_label": label,
                    "horizon": t, "epsilon": np.nan if eps is None else eps,
                    "delta": np.nan if eps is None else 1e-6,
                    "privacy": "non-private" if eps is None else "(eps, 1e-06)-DP"
                               + (" idealized" if "blt" in label or "factorization" in label
                                  else ""),
                    "seed_index": s, "regret": regret,
                    "switches": rest[0] if rest else 0})
    return pd.DataFrame(out)


def test_newer_learners_names_the_lower_regret_only_where_the_paired_interval_allows():
    nl = analysis("newer-learners")
    rng = np.random.default_rng(2)
    rows = []
    for s in range(10):
        level = 1000 * (1 + 0.3 * rng.normal())  # a seed's shared difficulty
        rows.append(("stochastic", "uniform", 32000, None, s, 2 * level))
        for eps, factor in ((0.1, 1.0), (1.0, 0.5), (3.0, 1.3)):
            exp2 = level * (1 + 0.02 * rng.normal())
            rows += [("stochastic", "private-exp2", 32000, eps, s, exp2),
                     ("stochastic", "private-batched-htinf", 32000, eps, s,
                      exp2 + 50 * (-1) ** s if factor == 1  # mean gap 0: within noise
                      else factor * level * (1 + 0.02 * rng.normal()))]
    got = {r["epsilon"]: r for r in nl.comparison_rows(games_frame(rows), "stochastic", 32000,
                                                        batch=lambda e, t: 7)}
    assert got[1.0]["lower"] == "private-batched-htinf"
    assert got[3.0]["lower"] == "private-exp2"
    assert got[0.1]["lower"] == "~"
    assert 0.45 < float(got[1.0]["ratio"].split()[0]) < 0.55
    assert got[1.0]["private-batched-htinf/trivial"][1] == "below"
    assert got[1.0]["tau"] == 7 and got[1.0]["seeds"] == 10
    block = nl.comparison_block(games_frame(rows), "stochastic", batch=lambda e, t: 7)
    assert "`private-batched-htinf` at ε ∈ {1}, `private-exp2` at ε ∈ {3}" in block
    assert "neither side shown (the interval holds 0) at ε ∈ {0.1}" in block
    assert "not replicated" not in block  # one seed set: nothing to replicate


def test_newer_learners_slopes_are_per_seed_with_a_paired_gap():
    nl = analysis("newer-learners")
    rows = seeded_rows(3, 0.05, (1000, 4000, 16000), lambda s, c, t, rng: [
        ("stochastic", "private-batched-htinf", t, 1.0, s, c * t ** 0.5),
        ("stochastic", "private-exp2", t, 1.0, s, c * t ** 0.9),
        ("stochastic", "uniform", t, None, s, c * t)])  # its slopes are exact
    frame = games_frame(rows)
    assert nl.slope_epsilons(frame) == [1.0]
    block = nl.slope_block(frame, 1.0)
    lines = {line.split(" | ")[0].strip("| "): line for line in block.splitlines()}
    assert "| 0.50 | 0.50 [" in lines["private-batched-htinf"]
    assert "| 0.90 | 0.90 [" in lines["private-exp2"]
    assert "(htinf's is the smaller)" in block
    assert nl.slope_epsilons(games_frame([r for r in rows if r[2] == 1000])) == []  # one T


def test_private_experts_pairs_lazy_mw_with_every_other_learner_and_counts_switches():
    pe = analysis("private-experts")
    rng = np.random.default_rng(4)
    rows = []
    for s in range(12):
        level = 300 * (1 + 0.2 * rng.normal())
        for adv in ("stochastic", "punish-favorite"):
            rows += [(adv, "private-lazy-mw", 2000, 0.1, s, level, 10 + s % 2),
                     (adv, "private-ftrl(counter=tree)", 2000, 0.1, s,
                      level + 150 + 5 * rng.normal(), 1999),
                     (adv, "private-ftrl(counter=blt)", 2000, 0.1, s,
                      level + 40 * rng.normal(), 1999),
                     (adv, "hedge", 2000, None, s, 25.0, 1995),
                     (adv, "center", 2000, None, s, 2 * level, 0)]
    frame = games_frame(rows)
    (obl, adaptive) = pe.difference_rows(frame, 2000)
    assert obl["adversary"] == "stochastic" and adaptive["adversary"] == "punish-favorite"
    from dp_online_envs.lab.experiments.game import env_options

    assert env_options(pe.ENV, {})["adversary"] == pe.ADVERSARIES[0]  # the id's default
    assert obl["private-ftrl(counter=tree)"][1] == "private-lazy-mw"
    assert obl["private-ftrl(counter=blt)"][1] == "~"
    table = pe.regret_rows(frame, 2000)
    by = {r[0]: r for r in table}
    assert by["private-lazy-mw"][3] == "10"  # mean switches: 10.5 printed without decimals
    assert "private-ftrl(counter=blt) (idealized)" in by
    assert by["hedge (non-private)"][1] == "-"
    assert [r[0] for r in table][0] == "private-lazy-mw"


def test_private_experts_slope_block_fits_the_means_and_the_bound():
    pe = analysis("private-experts")
    rows = [("stochastic", name, t, eps, s, (1 + 0.01 * s) * t ** p)
            for s in range(6) for t in (1000, 4000, 16000)
            for name, eps, p in (("private-lazy-mw", 0.1, 0.75), ("hedge", None, 0.5))]
    block = pe.slope_block(games_frame(rows), bound=lambda t, eps, delta: 3 * t ** 0.4)
    lines = {line.split(" | ")[0].strip("| "): line for line in block.splitlines()}
    assert "| 0.75 | 0.75 [" in lines["private-lazy-mw"]
    assert "| 0.50 | 0.50 [" in lines["hedge (non-private)"]
    assert lines["private-lazy-mw: its calibration's bound"].endswith("| 0.40 |  |")
    assert pe.slope_block(games_frame(rows[:4])) == ""  # fewer than three horizons


def test_private_stochastic_verdicts_follow_the_paired_intervals():
    ps = analysis("private-stochastic")

    def at(s, c, t, rng):
        level = 1000 * c
        return [("stochastic", "uniform", t, None, s, 3 * level),
                ("stochastic", "thompson", t, None, s, 0.1 * level + 5 * (-1) ** s),
                ("stochastic", "ucb1", t, None, s, level),
                ("stochastic", "kl-ucb", t, None, s, 3 * level + 100 * (-1) ** s),
                ("stochastic", "exp3", t, None, s, level + 30 * (-1) ** s),
                ("stochastic", "htinf", t, None, s, 0.5 * level),
                ("stochastic", "adap-ucb", t, 1.0, s, 2 * level),
                ("stochastic", "adap-klucb", t, 1.0, s, level + 30 * (-1) ** s),
                ("stochastic", "private-exp2", t, 1.0, s, level),
                ("stochastic", "private-batched-htinf", t, 1.0, s, 4 * level)]

    rows = seeded_rows(5, 0.2, (10000,), at, seeds=10)
    frame = games_frame(rows)
    ref = {r[1]: r for r in ps.reference_rows(frame, 10000)}
    assert ref["thompson"][4] == "yes" and ref["kl-ucb"][4] == "~"
    (diffs,) = ps.reference_differences(frame, 10000)
    assert diffs[0] == "stochastic"
    # ucb1 - exp3: ~; thompson - exp3: thompson; thompson - htinf: thompson; ucb1 - htinf: htinf
    assert diffs[1].endswith("~") and diffs[2].endswith(" htinf")
    assert diffs[5].endswith(" thompson") and diffs[6].endswith(" thompson")
    block = ps.private_block(frame, "stochastic", 10000)
    row = next(line for line in block.splitlines() if line.startswith("| 1 |")
               and "−" not in line and "+" in line)
    cells = [c.strip() for c in row.strip("|").split("|")][1:]
    # adap-ucb - exp2: exp2; adap-ucb - htinf: adap-ucb; adap-klucb - exp2: ~;
    # adap-klucb - htinf: adap-klucb
    assert [c.rsplit(" ", 1)[-1] for c in cells] == ["private-exp2", "adap-ucb", "~",
                                                      "adap-klucb"]
    assert "`private-batched-htinf` at ε ∈ {}" in block  # 4x trivial: not below it
    assert "`adap-klucb` at ε ∈ {1}" in block


@pytest.mark.parametrize("lo, hi, expected", [(-3, -1, "a"), (1, 3, "b"), (-1, 1, "~"),
                                              (None, -1, "~"), (math.nan, 1, "~")])
def test_the_side_an_interval_supports(lo, hi, expected):
    sys.path.insert(0, str(STUDIES))
    from paired_stats import side

    assert side(lo, hi, ("a", "b")) == expected


def test_a_paired_difference_and_ratio_use_the_shared_seeds_only():
    sys.path.insert(0, str(STUDIES))
    from paired_stats import difference, ratio

    a = {0: 10.0, 1: 12.5, 2: 11.0, 3: 12.0, 7: 1e9}  # seed 7 has no partner: ignored
    b = {0: 20.0, 1: 24.0, 2: 22.0, 3: 25.0}
    text, verdict = difference(a, b, ("a", "b"))
    assert verdict == "a" and text.startswith("-11.4 [")
    text, verdict = ratio(a, b)
    assert verdict == "below" and text.startswith("0.50 [0.4")
    assert ratio(b, a)[1] == "above" and difference(b, a, ("b", "a"))[1] == "a"
    assert difference({0: 1.0}, {0: 2.0}, ("a", "b")) == ("n/a", "~")


def test_slopes_and_their_means_use_the_seeds_held_at_every_horizon():
    sys.path.insert(0, str(STUDIES))
    from paired_stats import on_common_seeds, slope_texts

    by = {1000: {0: 10.0, 1: 20.0}, 4000: {0: 20.0, 1: 40.0, 2: 1e6}}  # seed 2: one T only
    assert on_common_seeds(by) == {1000: {0: 10.0, 1: 20.0}, 4000: {0: 20.0, 1: 40.0}}
    of_means, per_seed = slope_texts(by)
    assert of_means == "0.50" and per_seed == "0.50 [0.50, 0.50]"


def test_a_study_reads_only_the_games_of_its_sweep(tmp_path):
    """A record in the results directory that the sweep does not play (an earlier
    version's, say) is left out of the analysis."""
    sys.path.insert(0, str(STUDIES))
    from paired_stats import load_study

    from dp_online_envs.lab.experiments.game import play_game

    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("name: tiny\nenvs: [DPFullInfo-Experts-v0]\nagents: [center]\n"
                     "horizons: [5]\nseeds: 1\n")
    (ours,) = load_sweep(sweep).games
    other = dataclasses.replace(ours, horizon=6)
    frame = load_study([play_game(ours), play_game(other)], sweep)
    assert list(frame.game_id) == [ours.game_id]


# --- the full-information rates study, on hand-made frames whose verdicts are known


def rates_frame(rows):
    """A results frame from ``(env_id, label, horizon, epsilon, seed, regret)`` rows."""
    frame = games_frame([("stochastic", *row[1:]) for row in rows])
    frame["env_id"] = [row[0] for row in rows]
    return frame


EXPERTS = "DPFullInfo-Experts-v0"


def test_full_info_rates_names_a_ratio_side_and_its_trend_only_where_the_interval_does():
    fir = analysis("full-info-rates")
    rows = seeded_rows(5, 0.2, (64, 128, 256, 512), lambda s, c, t, rng: [
        (EXPERTS, "hedge", t, None, s, c * t ** 0.5),
        # ratio 50 T^-0.2 > 1, falling: slope gap -0.2
        (EXPERTS, "private-ftrl", t, 1.0, s, 50 * c * t ** 0.3 * (1 + 0.01 * rng.normal())),
        # the same regret up to a symmetric +-5%: ratio within noise of 1
        (EXPERTS, "private-ftrl", t, 10.0, s, c * t ** 0.5 * (1 + 0.05 * (-1) ** s)),
        (EXPERTS, "private-ftpl", t, 1.0, s, 0.5 * c * t ** 0.5 * (1 + 0.01 * rng.normal()))])
    frame = rates_frame(rows)
    got = {r["T"]: r for r in fir.free_rows(frame)}
    assert sorted(got) == [64, 128, 256, 512] and got[64]["seeds"] == 8
    assert all(got[t][("private-ftrl", 1.0)][1] == "above" for t in got)
    assert all(got[t][("private-ftrl", 10.0)][1] == "~" for t in got)
    assert all(got[t][("private-ftpl", 1.0)][1] == "below" for t in got)
    ratio = float(got[512][("private-ftrl", 1.0)][0].split()[0])
    assert ratio == pytest.approx(50 * 512 ** -0.2, rel=0.02)
    horizons, text, verdict = fir.trend(frame, "private-ftrl", 1.0)
    assert horizons == [64, 128, 256, 512] and verdict == "ratio falls"
    assert text.startswith("-0.20 [")
    assert fir.trend(frame, "private-ftrl", 10.0)[2] == "~"
    block = fir.free_block(frame, rate_check=lambda horizons: True)
    assert "`private-ftrl ε=1` over `hedge`: above 1 at T ∈ {64, 128, 256, 512}" in block
    assert ("`private-ftrl ε=10` over `hedge`: above 1 at T ∈ {}, neither side shown (the "
            "interval holds 1)") in block
    assert "the ratio falls" in block and "cost of the noise alone" in block
    assert "below 1 at T ∈ {64, 128, 256, 512}" in block  # private-ftpl
    assert "different learning rates" in fir.free_block(frame, rate_check=lambda h: False)


def test_full_info_rates_compares_every_counter_to_the_factorization_on_paired_seeds():
    fir = analysis("full-info-rates")
    rng = np.random.default_rng(6)
    rows = []
    for s in range(8):
        level = 200 * (1 + 0.2 * rng.normal())
        for t in (100, 400):
            rows += [(EXPERTS, "private-ftrl(counter=factorization)", t, 0.2, s, level),
                     (EXPERTS, "private-ftrl(counter=tree)", t, 0.2, s,
                      2 * level * (1 + 0.01 * rng.normal())),
                     (EXPERTS, "private-ftrl(counter=honaker)", t, 0.2, s,
                      level * (1 + 0.05 * (-1) ** s))]
    block = fir.counters_block(rates_frame(rows), noise_sd=lambda *a, **k: 7.0)
    lines = [line for line in block.splitlines() if line.startswith("| 400 |")]
    regrets, ratios = lines
    assert regrets.count("(7)") == 3 and "ε = 0.2, δ = 1e-06" in block
    assert "factorization (idealized) [95% CI]" in block
    honaker, tree = ratios.strip("| ").split(" | ")[1:]
    assert honaker.endswith(" ~") and tree.endswith(" above")
    assert float(tree.split()[0]) == pytest.approx(2.0, rel=0.02)


def test_full_info_rates_checks_slopes_against_each_papers_exponent():
    fir = analysis("full-info-rates")

    def at(s, c, t, rng):
        n = 1 + 0.01 * rng.normal()
        return [(EXPERTS, "hedge", t, None, s, c * t ** 0.5 * n),
                (EXPERTS, "private-ftpl", t, 1.0, s, c * t ** 0.9 * n),
                ("DPFullInfo-Matroid-v2", "online-fw", t, None, s, c * t ** 0.75 * n),
                ("DPFullInfo-Matroid-v2", "private-ftpl", t, 1.0, s, c * t ** 0.3 * n)]

    rows = seeded_rows(7, 0.2, (100, 400, 1600), at)
    block = fir.slopes_block(rates_frame(rows))
    cells = {tuple(line.split(" | ")[:2]): line.split(" | ")
             for line in block.splitlines() if line.startswith("| ")}
    assert cells["| hedge", "Experts-v0"][-2] == "~ 0.5"
    assert cells["| private-ftpl ε=1", "Experts-v0"][-2] == "above 0.5"
    assert cells["| online-fw", "Matroid-v2"][-2:] == ["~ 0.75", "0.75 |"]
    assert cells["| private-ftpl ε=1", "Matroid-v2"][-2] == "below 0.5"
    assert "8 paired seeds" in block


def test_full_info_rates_fits_the_rates_and_reads_the_bounds_at_the_ids_defaults():
    fir = analysis("full-info-rates")

    def at(s, c, t, rng):
        n = 1 + 0.01 * rng.normal()
        return [(EXPERTS, "center", t, None, s, 0.3 * t * n),
                (EXPERTS, "hedge", t, None, s, c * t ** 0.5 * n),
                (EXPERTS, "private-ftrl", t, 1.0, s, c * t ** 0.8 * n)]

    rows = seeded_rows(8, 0.2, (1000, 4000, 16000), at)
    block = fir.rates_block(rates_frame(rows))
    lines = {line.split(" | ")[1]: line.split(" | ") for line in block.splitlines()
             if line.startswith("| Experts")}
    assert lines["trivial (center)"][5] == "1.00" and lines["trivial (center)"][7] == "~ 1"
    assert lines["hedge"][7] == "~ 0.5" and lines["hedge"][9] == "0.50"
    assert lines["private-ftrl ε=1"][7] == "above 0.5"
    # no exploration, smoothing or shrink: the full-information slopes are the learners'
    assert lines["trivial (center)"][8] == "reference (linear)"
    assert lines["hedge"][8] == lines["private-ftrl ε=1"][8] == fir.NO_SCHEDULE
    # the bound's noise term hides sqrt(T) far beyond 1e5 at eps = 1
    assert float(lines["private-ftrl ε=1"][9]) < 0.3
    assert "trivial play taken as 0.300 T" in block


def test_the_private_ftrl_bound_uses_the_counters_own_noise():
    fir = analysis("full-info-rates")
    for t in (1000, 4096, 100000):
        fir.check_noise_sd(t, 10, 1.0)
    with pytest.raises(ValueError, match="noise std at T=1000"):
        fir.check_noise_sd(1000, 11, 1.0)  # a formula for 11 experts is 10% off
    # Theorem 4.1's bound at lambda = 0 is that of exp2: sqrt-like, below trivial play
    assert fir.exp2_bound(1e5, 10, 0.0) < fir.exp2_bound(1e5, 10, 1.0) < 1e5


# --- the full-info-rates study: exp2's exploration split off


MAB = "DPBandit-MAB-v0"


def mab_split_frame():
    """A MAB rates frame and its splits, at T = 1000, 3162, 10000 on 8 + 8 seeds: exp2's
    exploration the larger part; private-exp2 at epsilon 1 clamped (gamma = 1) at 1000,
    then free, the remainder growing as T^0.5 on the discovery seeds and as T^0.9 on the
    replication seeds; private-exp2 at epsilon 10 free, the remainder T^0.5 on both
    sets."""
    rows, splits = [], {}

    def add(label, eps, t, s, gamma, explore, rest):
        gid = f"{label}-{eps}-{t}-{s}"
        rows.append({"game_id": gid, "env_id": MAB, "agent_label": label,
                     "epsilon": np.nan if eps is None else eps, "horizon": t,
                     "seed_index": s, "regret": explore + rest})
        if gamma is not None:
            splits[gid] = {"expected": explore + rest, "exploration": explore,
                           "remainder": rest, "gamma": gamma, "regret": explore + rest}

    for s in [*range(8), *range(5000, 5008)]:
        c = 1 + 0.01 * ((7 * s) % 5)
        for t in (1000, 3162, 10000):
            add("center", None, t, s, None, 0.0, 0.3 * c * t)
            add("exp2", None, t, s, 0.1, 3 * c * t ** 0.5, c * t ** 0.5)
            add("private-exp2", 1.0, t, s, 1.0 if t == 1000 else 0.1,
                0.05 * c * t ** 0.5, c * t ** (0.5 if s < 5000 else 0.9))
            add("private-exp2", 10.0, t, s, 0.1, 0.1 * c * t ** 0.5, 10 * c * t ** 0.5)
    return pd.DataFrame(rows), splits


def test_the_exp2_split_calls_a_slope_the_theorems_only_where_the_schedule_leaves_it():
    fir = analysis("full-info-rates")
    frame, splits = mab_split_frame()
    got = {(r[0], r[1]): r for r in fir.split_rows(frame, splits)}
    assert got["exp2", "10,000"][-1] == ps.SCHEDULE_LARGER
    assert got["exp2", "10,000"][5].endswith("(75% [75, 75]; replication 75% [75, 75])")
    assert got["private-exp2 ε=1", "1,000"][3] == "1 (clamped at 1)"
    assert got["private-exp2 ε=1", "3,162"][-1] == ps.SCHEDULE_CLAMPED
    assert got["private-exp2 ε=1", "10,000"][-1] == "not replicated"
    assert "; replication 0.90 [" in got["private-exp2 ε=1", "10,000"][8]
    assert got["private-exp2 ε=10", "3,162"][-1] == ps.THEOREMS_REGIME
    assert got["private-exp2 ε=10", "10,000"][8].startswith("0.50 [")
    assert got["private-exp2 ε=10", "10,000"][2] == "8 + 8"
    # the theorem's regime needs the remainder's slope near 0.5: far from it, another
    for gid, v in splits.items():
        if gid.startswith("private-exp2-10.0-10000"):
            v["remainder"] *= 10000 ** 0.4
            v["expected"] = v["remainder"] + v["exploration"]
    got = {(r[0], r[1]): r for r in fir.split_rows(frame, splits)}
    assert got["private-exp2 ε=10", "10,000"][-1] == ps.ANOTHER_SLOPE
    # an interval that meets 0.5 +- 0.1 but does not lie within it places no slope: the
    # per-seed slopes from 3162 alternate 0.3 and 0.8 (mean 0.55, interval past 0.6)
    for gid, v in splits.items():
        if gid.startswith("private-exp2-10.0-10000"):
            seed = int(gid.rsplit("-", 1)[1])
            v["remainder"] = v["remainder"] / 10000 ** 0.4 * (10000 / 3162) ** (
                -0.2 if seed % 2 else 0.3)
            v["expected"] = v["remainder"] + v["exploration"]
    got = {(r[0], r[1]): r for r in fir.split_rows(frame, splits)}
    assert got["private-exp2 ε=10", "10,000"][8].startswith("0.55 [")
    assert got["private-exp2 ε=10", "10,000"][-1] == ps.SLOPE_NOT_PLACED


def test_section_0_defers_exp2s_slope_to_its_split_and_claims_none_without_one():
    fir = analysis("full-info-rates")
    frame, splits = mab_split_frame()

    def cells(block):
        return {line.split(" | ")[1]: line.split(" | ") for line in block.splitlines()
                if line.startswith("| MAB")}

    block = fir.rates_block(frame, check=False, splits=splits)
    got = cells(block)
    assert got["trivial (center)"][8] == "reference (linear)"
    for name in ("exp2", "private-exp2 ε=1", "private-exp2 ε=10"):
        assert got[name][8] == "only where the split below says theorem's regime"
    assert "**The exploration schedule split off** (`DPBandit-MAB-v0`" in block
    assert "| private-exp2 ε=10 | 3,162 | 8 + 8 | 0.1 |" in block
    assert "2 of 6 slopes from the previous T in the theorem's regime, 1 not replicated" \
        in block
    # over the last horizons: the share at the largest T, the remainder's slope, both sets
    assert ("* `private-exp2 ε=1`: the exploration's share at T = 10,000 [Fieller 95% CI] "
            "0.048 [0.048, 0.048] (replication 0.001 [0.001, 0.001])") in block
    assert ("the remainder's per-seed slope over T = 1,000 .. 10,000 [95% CI] 0.50 [0.50, "
            "0.50] (replication 0.90 [0.90, 0.90])") in block
    # a learner with no complete horizon split: its slope is not claimed
    unsplit = {g: v for g, v in splits.items() if not g.startswith("exp2-")}
    got = cells(fir.rates_block(frame, check=False, splits=unsplit))
    assert got["exp2"][8] == "not claimed: the schedule's part is not split off"
    assert got["private-exp2 ε=10"][8] == "only where the split below says theorem's regime"
    block = fir.split_block(frame, unsplit)
    assert "* `private-exp2 ε=10`" in block and "* `exp2`" not in block
    # no split stored: every exploring learner's slope is not claimed
    block = fir.rates_block(frame, check=False)
    got = cells(block)
    for name in ("exp2", "private-exp2 ε=1", "private-exp2 ε=10"):
        assert got[name][8] == "not claimed: the schedule's part is not split off"
    assert "**The exploration schedule split off**: not computed" in block


# --- the bandit convex study: slopes against the theorems' exponents only where the
# radius is free, and the price of privacy as a paired ratio with Fieller's interval


def convex_frame(rows):
    """A results frame from ``(experiment, env_id, label, horizon, epsilon, seed,
    regret)`` rows."""
    return pd.DataFrame([{"tags.experiment": e, "env_id": env, "agent_label": label,
                          "horizon": t, "epsilon": np.nan if eps is None else eps,
                          "seed_index": s, "regret": regret}
                         for e, env, label, t, eps, s, regret in rows])


def test_bandit_convex_claims_its_ratios_on_at_least_8_paired_seeds():
    bc = analysis("bandit-convex")
    sweep = load_sweep(STUDIES / "bandit-convex" / "sweep.yaml")
    seeds: dict = {}
    for g in sweep.games:
        key = (g.tags["experiment"], g.env_id, g.label, g.epsilon, g.horizon)
        seeds.setdefault(key, set()).add(g.seed_index)
    for env, (pexp, plabel, eps), (bexp, blabel) in bc.BALL_PAIRS + bc.FORMER_PAIRS:
        horizons = {k[-1] for k in seeds if k[:4] == (pexp, env, plabel, eps)}
        assert horizons, (env, plabel)
        for t in horizons:
            shared = seeds[(pexp, env, plabel, eps, t)] & seeds[(bexp, env, blabel, None, t)]
            assert len(shared) >= 8, (env, plabel, t)
    for rows in (bc.BALL_ROWS, bc.FORMER_ROWS):  # every row is a part of the sweep
        for experiment, env, label, eps, _, _ in rows:
            assert (experiment, env, label, eps) in {k[:4] for k in seeds}, (env, label)


@pytest.mark.parametrize("lo, hi, clamped, expected", [
    (0.70, 0.80, False, "yes"), (0.5, 0.6, False, "no"), (0.9, 1.0, False, "no"),
    (0.6, 0.7, False, "~"), (0.70, 0.80, True, "n/a (clamped)"),
    (math.nan, 0.8, False, "~")])
def test_a_slope_is_the_theorems_only_where_its_interval_and_the_radius_allow(
        lo, hi, clamped, expected):
    assert analysis("bandit-convex").exponent_verdict(lo, hi, 0.75, clamped) == expected


def test_bandit_convex_slope_rows_compare_only_unclamped_slopes_with_the_exponent():
    bc = analysis("bandit-convex")
    rows = seeded_rows(7, 0.1, (1000, 4000, 16000), lambda s, c, t, rng: [
        ("x", "E", "fast", t, None, s, c * t ** 0.75),  # its slopes are exact
        ("x", "E", "slow", t, None, s, c * t ** 0.5),
        ("x", "E", "shrunk", t, 1.0, s, c * t ** 0.75),
        ("x", "E", "shrunk", t, 3.0, s, 1e9)])  # another epsilon: not read
    spec = [("x", "E", "fast", None, 0.75, "A"), ("x", "E", "slow", None, 0.75, "B"),
            ("x", "E", "shrunk", 1.0, 0.75, "C"), ("x", "E", "absent", None, 0.75, "D")]
    clamped = {("shrunk", 16000)}
    got = bc.slope_rows(convex_frame(rows), spec,
                        clamped_at=lambda e, env, label, eps, t: (label, t) in clamped)
    assert [r[0] for r in got] == ["fast", "slow", "shrunk ε=1"]  # no games: no row
    fast, slow, shrunk = got
    assert fast[2] == 8 and fast[4] == "0.75" and fast[5].startswith("0.75 [0.75")
    assert fast[7] == "yes" and slow[7] == "no" and slow[4] == "0.50"
    assert shrunk[7] == "n/a (clamped)" and shrunk[8] == "no/yes"
    table = bc.slope_table(convex_frame(rows), spec,
                           clamped_at=lambda *a: False)
    assert "mean regret at T = 1,000 / 4,000 / 16,000" in table


def test_bandit_convex_price_of_privacy_names_a_side_only_where_fieller_allows():
    bc = analysis("bandit-convex")
    rows = seeded_rows(8, 0.3, (1000,), lambda s, c, t, rng: [
        ("b", "E", "base", t, None, s, 100 * c),
        ("p", "E", "twice", t, 1.0, s, 200 * c * (1 + 0.01 * rng.normal())),
        ("p", "E", "same", t, 1.0, s, 100 * c + (-1) ** s),
        ("p", "E", "half", t, 1.0, s, 50 * c)])
    rows.append(("p", "E", "twice", 1000, 1.0, 9, 1e9))  # seed 9 has no partner: ignored
    pairs = [("E", ("p", label, 1.0), ("b", "base")) for label in ("twice", "same", "half")]
    got = bc.privacy_rows(convex_frame(rows), pairs)
    assert [r[-1] for r in got] == ["private higher", "~", "private lower"]
    assert got[0][3] == 8 and got[0][6].startswith("2.0")
    assert got[2][6].startswith("0.50 [0.50, 0.50]")
    assert bc.privacy_summary(got) == ("1 ratios above 1 (privacy costs regret), 1 below 1, "
                                       "1 containing 1 (`~`), 0 not replicated (the two "
                                       "seed sets disagree).")


def test_smith_thakurta_leading_term_and_where_it_falls_below_trivial_play():
    """Thm 17 (convex): chi = B R + (1 + R/r) L + B^3/eps = 1 + 2 + 1 = 4 with every
    constant 1, so the leading term 4 T^{3/4} is below trivial play's 0.5 T from
    T = (4 / 0.5)^4 = 4096."""
    from types import SimpleNamespace

    bc = analysis("bandit-convex")
    agent = SimpleNamespace(
        geometry=SimpleNamespace(rank=1, radius=1.0), epsilon=1.0,
        problem=SimpleNamespace(bound=1.0, lipschitz=1.0,
                                domain=SimpleNamespace(norm_bound=lambda p: 1.0)),
        params=SimpleNamespace(mode="convex", adversary="adaptive", H=None))
    assert bc.st_exponent_and_chi(agent) == (0.75, 4.0)
    assert bc.st_leading_term(agent, 16.0) == pytest.approx(32.0)
    rows = [("ball", "DPBandit-Convex-v1", "center", 1000, None, s, 500.0 + (-1) ** s)
            for s in range(8)]  # mean 500: rate 0.5
    got = bc.crossing_rows(convex_frame(rows), learner=lambda *a: agent)
    assert {r[1] for r in got} == {"Convex-v1"}  # no trivial games on StronglyConvex
    row = got[0]
    assert row[2] == "4" and row[3] == "1,000"
    assert float(row[-1]) == pytest.approx(4096, rel=0.01)


@pytest.mark.parametrize("lo, hi, low, high, expected", [
    (0.45, 0.55, 0.4, 0.6, "yes"), (0.1, 0.3, 0.4, 0.6, "no"), (0.7, 0.8, 0.4, 0.6, "no"),
    (0.35, 0.45, 0.4, 0.6, "~"), (0.9, 1.1, -math.inf, 1.15, "yes"),
    (1.1, 1.2, -math.inf, 1.15, "~"), (1.2, 1.3, -math.inf, 1.15, "no"),
    (None, 1.0, -math.inf, 1.15, "~"), (0.9, math.inf, -math.inf, 1.15, "~")])
def test_an_interval_lies_within_a_band_outside_it_or_straddles_an_edge(lo, hi, low, high,
                                                                        expected):
    sys.path.insert(0, str(STUDIES))
    from paired_stats import band

    assert band(lo, hi, low, high) == expected


# --- the privacy-limit study: the private learners at a large epsilon against their
# declared non-private counterparts, the target claimed only where Fieller's interval allows


def test_privacy_limit_pairs_each_private_learner_with_its_declared_counterpart():
    from agents import agent_class
    from dp_online_envs.envs.registry import build_env

    pl = analysis("privacy-limit")
    sweep = load_sweep(STUDIES / "privacy-limit" / "sweep.yaml")
    for env_id, private, other, trivial in pl.PAIRS:
        problem = build_env(env_id, horizon=64).get_wrapper_attr("problem")
        assert agent_class(private).counterpart_for(problem) == other
        seeds = {name: {g.seed_index for g in sweep.games
                        if g.env_id == env_id and g.agent == name}
                 for name in (private, other, trivial)}
        assert seeds[private] == seeds[other] == seeds[trivial] and len(seeds[other]) >= 16
        assert {g.epsilon for g in sweep.games if g.agent == private} == {1000.0}


def test_privacy_limit_claims_the_target_only_where_the_whole_interval_is_below_it():
    pl = analysis("privacy-limit")
    rows = seeded_rows(9, 0.3, (1000,), lambda s, c, t, rng: [
        ("stochastic", "base", t, None, s, 100 * c),
        ("stochastic", "trivial", t, None, s, 1000.0 + s),
        ("stochastic", "same", t, 1e3, s, 100 * c * (1 + 0.01 * rng.normal())),
        ("stochastic", "worse", t, 1e3, s, 150 * c * (1 + 0.01 * rng.normal())),
        # +-20% around 1.15 x base, alternating: the interval straddles 1.15
        ("stochastic", "edge", t, 1e3, s, 115 * c * (1 + 0.2 * (-1) ** s))], seeds=16)
    frame = games_frame(rows)
    got = {label: pl.pair_row(frame, "E", label, "base", "trivial", 1000, 1e3)
           for label in ("same", "worse", "edge")}
    assert {k: r[-1] for k, r in got.items()} == {"same": "yes", "worse": "no", "edge": "~"}
    assert got["same"][2] == "16"
    assert float(got["same"][7].split()[0]) == pytest.approx(1.0, abs=0.01)
    assert float(got["worse"][7].split()[0]) == pytest.approx(1.5, rel=0.01)
    assert got["same"][5].startswith("1008 [")  # trivial play's mean, for scale
    assert pl.pair_row(frame, "E", "absent", "base", "trivial", 1000, 1e3) is None
    assert pl.summary([got["same"], got["edge"]]) == (
        "`same / base`: the interval (of each seed set, where both were played) lies at or "
        "below 1.15. `edge / base`: the interval straddles 1.15.")


# --- the full-info-pftal study: per-seed slopes, the proof's bound and trivial play


def test_the_smith_thakurta_proof_bound_is_the_papers_formula():
    """Unregularized (strongly convex, ``lam = 0``): ``2 K ln T`` (+ ``4 p K ln^2.5 T /
    eps`` when private) with ``K = (L + H ||C||)^2 / H``; regularized, FTAL's ``lam`` is
    recomputed at ``T``, ``lam = (L/||C||) sqrt(ln T / T)``, so that the bound is
    ``2 K ln T + lam T ||C||^2 / 2``."""
    from types import SimpleNamespace

    fip = analysis("full-info-pftal")

    def agent(private, H, lam):
        problem = SimpleNamespace(dim=3, lipschitz=2.0,
                                  domain=SimpleNamespace(norm_bound=lambda p: 1.5))
        return SimpleNamespace(problem=problem, H=H, regularization=lam, private=private,
                               epsilon=4.0)

    T = 1e4
    K = (2.0 + 0.5 * 1.5) ** 2 / 0.5
    assert fip.proof_bound(agent(False, 0.5, 0.0), T) == pytest.approx(2 * K * math.log(T))
    assert fip.proof_bound(agent(True, 0.5, 0.0), T) == pytest.approx(
        2 * K * math.log(T) + 4 * 3 * K * math.log(T) ** 2.5 / 4.0)
    lam = (2.0 / 1.5) * math.sqrt(math.log(T) / T)
    K = (2.0 + lam * 1.5) ** 2 / lam
    # the agent's own lam (of another horizon) is replaced by the one at T
    assert fip.proof_bound(agent(False, 1.0, 1.0), T) == pytest.approx(
        2 * K * math.log(T) + lam * T * 1.5**2 / 2)


def test_full_info_pftal_fits_per_seed_slopes_and_reads_the_bound_of_each_learner():
    from types import SimpleNamespace

    fip = analysis("full-info-pftal")
    rows = seeded_rows(10, 0.2, (1000, 4000, 16000), lambda s, c, t, rng: [
        ("planted", "center", t, None, s, 0.5 * t),  # its slopes are exact
        ("planted", "pftal", t, 1.0, s, c * t ** 0.5),
        ("planted", "pftal", t, 10.0, s, c * t ** 0.2),
        ("planted", "ftal", t, None, s, c * t ** 0.5 * (1 + 0.2 * (-1) ** s))])
    bounds = []

    def learner(adv, agent, eps, t):
        bounds.append((adv, agent, eps, t))
        problem = SimpleNamespace(dim=1, lipschitz=1.0,
                                  domain=SimpleNamespace(norm_bound=lambda p: 1.0))
        return SimpleNamespace(problem=problem, H=1.0, regularization=0.0,
                               private=eps is not None, epsilon=eps)

    got = {r[1]: r for r in fip.slope_rows(games_frame(rows), learner)}
    assert list(got) == ["center", "pftal ε=1", "pftal ε=10", "ftal"]
    assert got["center"][5] == "1.00" and got["center"][6] == "1.00 [1.00, 1.00]"
    assert got["pftal ε=1"][6].startswith("0.50 [0.50") and got["pftal ε=1"][7] == "yes"
    assert got["pftal ε=10"][7] == "no" and got["pftal ε=10"][2] == "8"
    assert got["ftal"][5] == "0.50"
    # with H = 1 and lam = 0 the bound is 8 ln T (+ 16 ln^2.5 T / eps): its local slope
    # at T is 1 / ln T (+ 2.5 / ln T for the noise term), and it is below 0.5 T early on
    assert float(got["ftal"][8]) == pytest.approx(1 / math.log(16000), abs=0.005)
    assert got["ftal"][9] == "> 1e15" and float(got["ftal"][10]) < 200
    assert bounds == [("planted", "pftal", 1.0, 16000), ("planted", "pftal", 10.0, 16000),
                      ("planted", "ftal", None, 16000)]


def test_full_info_pftal_names_the_side_of_trivial_play_only_where_fieller_allows():
    fip = analysis("full-info-pftal")
    rng = np.random.default_rng(11)
    rows = []
    for s in range(8):
        for t in (1000, 4000):
            level = 0.5 * t * (1 + 0.3 * rng.normal())  # a game's shared difficulty
            rows += [("stochastic", "center", t, None, s, level),
                     ("stochastic", "pftal", t, 1.0, s, 0.2 * level),
                     ("stochastic", "pftal", t, 10.0, s, level * (1 + 0.2 * (-1) ** s)),
                     ("stochastic", "ftal", t, None, s, 2 * level)]
    horizons, got = fip.trivial_rows(games_frame(rows))
    assert horizons == [1000, 4000]
    assert [r[1] for r in got] == ["pftal ε=1", "pftal ε=10", "ftal"]
    assert [r[2].split()[-1] for r in got] == ["below", "~", "above"]
    assert got[0][0] == "stochastic adversary, loss=distance"
    assert got[0][3] == "0.2 [0.2, 0.2] below"  # three significant digits


# --- the bandit submodular study, on hand-made frames whose verdicts are known


def submodular_frame(seeds_at, slopes, levels=None, offsets=None):
    """Regret ``level * c_s * T^(slope + offset_s)`` per (label, epsilon) of ``slopes``,
    seed ``s`` with its own level ``c_s`` (shared by the learners: paired)."""
    rng = np.random.default_rng(9)
    c = 1 + 0.1 * rng.normal(size=8)
    rows = []
    for t, seeds in seeds_at.items():
        for s in range(seeds):
            for (label, eps), slope in slopes.items():
                off = (offsets or {}).get((label, eps), lambda s: 0.0)(s)
                level = (levels or {}).get((label, eps), 1.0)
                rows.append(("stochastic", label, t, eps, s, level * c[s] * t ** (slope + off)))
    return games_frame(rows)


SUB_SEEDS = {1000: 8, 3162: 8, 10000: 8, 31623: 8, 100000: 4}


def test_bandit_submodular_slopes_per_range_and_their_verdicts():
    bs = analysis("bandit-submodular")
    frame = submodular_frame(SUB_SEEDS, {
        ("center", None): 1.0, ("hazan-kale-submodular-bandit", None): 0.7,
        ("bandit-submod-pftal", 1.0): 0.98, ("bandit-submod-pftal", 10.0): 0.85,
        ("bandit-submod-pftal", 100.0): 0.75},
        levels={("center", None): 0.2},
        offsets={("bandit-submod-pftal", 10.0): lambda s: 0.06 * (-1) ** s})
    assert bs.slope_ranges(frame) == [[1000, 3162, 10000, 31623],
                                      [1000, 3162, 10000, 31623, 100000]]
    rows = bs.slope_rows(frame, lead_of=lambda eps, t: lambda T: 0.8 / eps * T ** 0.75)
    by = {(r[0], r[1]): r for r in rows}
    assert len(rows) == 10
    full, part = "1,000 .. 100,000", "1,000 .. 31,623"
    assert by["center", part][2] == 8 and by["center", full][2] == 4  # seeds at every T
    assert by["center", full][6] == "yes" and by["center", full][3] == "1.00"
    assert by["hazan-kale-submodular-bandit", full][6] == "yes"  # 0.7 within 2/3 +- 0.1
    assert by["bandit-submod-pftal ε=1", full][6] == "no"  # 0.98: outside 0.75 +- 0.1
    assert by["bandit-submod-pftal ε=10", full][6] == "~"  # 0.85 +- noise straddles 0.85
    assert by["bandit-submod-pftal ε=100", full][6] == "yes"
    # the leading term 0.8 T^{3/4} / eps against trivial play's 0.2 c T: crosses at
    # T = (4 / (eps mean(c)))^4; only on the private learners' last range
    assert by["bandit-submod-pftal ε=1", part][8] == "" and by["center", full][8] == ""
    # a slope within 0.1 of the exponent is never called the theorem's while the
    # exploration schedule's part of the regret is not split off
    assert by["bandit-submod-pftal ε=100", full][7] == by[
        "hazan-kale-submodular-bandit", full][7] == "not claimed: the schedule's part is not split off"
    assert by["center", full][7] == "reference (linear)"
    rate = 0.2 * np.mean(np.random.default_rng(9).normal(size=8)[:4] * 0.1 + 1)
    cross = by["bandit-submod-pftal ε=1", full][8]
    assert float(cross.split()[0]) == pytest.approx((0.8 / rate) ** 4, rel=0.05)
    lo, hi = (float(x) for x in cross.split("[")[1].rstrip("]").split(", "))
    assert lo < float(cross.split()[0]) < hi  # the higher rate crosses first


def test_bandit_submodular_price_of_privacy_names_a_side_only_where_fieller_allows():
    bs = analysis("bandit-submodular")
    frame = submodular_frame({1000: 8}, {
        ("hazan-kale-submodular-bandit", None): 0.5, ("bandit-submod-pftal", 1.0): 0.5,
        ("bandit-submod-pftal", 10.0): 0.5, ("bandit-submod-pftal", 100.0): 0.5},
        levels={("bandit-submod-pftal", 1.0): 2.0, ("bandit-submod-pftal", 100.0): 0.5},
        offsets={("bandit-submod-pftal", 10.0): lambda s: 0.05 * (-1) ** s})
    got = bs.ratio_rows(frame)
    assert [(r[0], r[-1]) for r in got] == [("ε=1", "private higher"), ("ε=10", "~"),
                                            ("ε=100", "private lower")]
    assert got[0][5].startswith("2.00 [2.00, 2.00]") and got[0][2] == 8


# --- the real-data study


def portfolio_frame(rows):
    """A frame of default-portfolio games from ``(agent, epsilon, seed, regret)``."""
    return pd.DataFrame([{"env_id": "DPFullInfo-Portfolio-v1", "agent": a,
                          "agent_label": a, "env_options.tickers": '["GE", "MSFT"]',
                          "env_options.loss_kwargs": '{"r_max": 1.2, "r_min": 0.8}',
                          "horizon": 8312,
                          "epsilon": np.nan if eps is None else eps,
                          "delta": np.nan if eps is None else 0.0, "seed_index": s,
                          "regret": r} for a, eps, s, r in rows])


def test_real_data_names_pftals_side_of_trivial_play_on_the_portfolio_only_where_fieller_does():
    rd = analysis("real-data")
    rows = [("center", None, s, 2.0) for s in range(16)]  # one window: the same each seed
    rows += [("pftal", 1.0, s, 2.0 * (0.99 + 0.1 * (-1) ** s)) for s in range(16)]
    rows += [("pftal", 2.0, s, 1.6 + 0.01 * s) for s in range(16)]
    rows += [("pftal", 8.0, s, 2.4 + 0.01 * s) for s in range(16)]
    rows += [("center", None, 3, 9.0)]  # duplicate key: the frame of another game
    got = {r[0]: r for r in rd.pftal_rows(portfolio_frame(rows[:-1]))}
    assert got["1"][4] == "neither side shown (the interval holds 1)"
    assert got["1"][5] == "8 of 16" and got["1"][3].startswith("0.99 [")
    assert got["2"][4] == "below trivial play" and got["2"][5] == "0 of 16"
    assert got["8"][4] == "above trivial play" and got["8"][5] == "16 of 16"
    other = portfolio_frame(rows[:-1])
    other["env_options.tickers"] = '["GE", "UNH"]'  # another pair: not the default's
    assert rd.pftal_rows(other) == []


def test_real_data_separation_rows_read_only_the_separation_learners():
    rd = analysis("real-data")
    rows = []
    for s in range(8):
        for t, tr in ((512, 120.0), (2048, 470.0)):
            rows.append(("center", None, 0.0, t, s, tr + s))
        rows += [("ftal", None, 0.0, 2048, s, 2.0 + 0.1 * s),
                 ("pftal", 1.0, 0.0, 2048, s, 400.0 + s),
                 ("pftal", 0.1, 0.0, 2048, s, 1e6),  # another epsilon: not a row
                 ("private-ftrl-grad", 1.0, 1e-6, 2048, s, 280.0),  # not the family's
                 ("ftal", None, 0.0, 1024, s, 1e6)]  # another horizon
    frame = pd.DataFrame([{"env_id": rd.CLS, "agent": a, "agent_label": a,
                           "env_options.loss": "logistic", "horizon": t, "seed_index": s,
                           "epsilon": np.nan if e is None else e,
                           "delta": np.nan if e is None else d, "regret": r}
                          for a, e, d, t, s, r in rows])
    table = rd.separation_block(frame)
    lines = [line for line in table.splitlines()[2:]]
    assert [line.split(" | ")[1] for line in lines] == ["center (trivial)", "ftal", "pftal"]
    assert "< trivial: ok" in lines[2] and "slope > 0.9: ok" in lines[0]


def test_real_data_refuses_a_stale_step():
    rd = analysis("real-data")
    rd.check_steps({1.0: 0.5}, balanced=lambda eps: 0.5)
    with pytest.raises(ValueError, match="epsilon 1 is 0.4.*update the sweep"):
        rd.check_steps({1.0: 0.4}, balanced=lambda eps: 0.5)


def test_real_data_lists_a_learner_below_trivial_play_only_where_fieller_allows():
    rd = analysis("real-data")
    rows = []
    for s in range(8):
        rows.append(("center", None, 0.0, s, 470.0 + s))
        for eps, factor in ((0.1, 1.0), (1.0, 0.6)):
            rows += [("pftal", eps, 0.0, s, factor * (470.0 + s) + 20 * (-1) ** s),
                     ("private-ftrl-grad", eps, 0.0, s, 480.0 + s),  # above: never listed
                     ("private-ftrl-grad", eps, 1e-6, s, 0.5 * (470.0 + s)),
                     ("private-ftpl-grad", eps, 1e-6, s, 0.5 * (470.0 + s))]
    frame = pd.DataFrame([{"env_id": rd.CLS, "agent": a, "agent_label": a,
                           "env_options.loss": "hinge", "horizon": 2048, "seed_index": s,
                           "epsilon": np.nan if e is None else e,
                           "delta": np.nan if e is None else d, "regret": r}
                          for a, e, d, s, r in rows])
    assert rd.below_trivial(frame, "hinge") == (
        "Below trivial play (Fieller interval of the paired ratio to `center` below 1): "
        "pftal at ε ∈ {1}; ftrl-grad Laplace at ε ∈ {}; ftrl-grad Gauss at ε ∈ {0.1, 1}; "
        "ftpl-grad Gauss at ε ∈ {0.1, 1}.")
    assert rd.below_trivial(frame, "logistic").endswith("ftpl-grad Gauss at ε ∈ {}.")


def test_bandit_submodular_gives_no_slope_over_a_range_a_learner_has_not_played():
    bs = analysis("bandit-submodular")
    frame = submodular_frame(SUB_SEEDS, {("center", None): 1.0,
                                         ("bandit-submod-pftal", 1.0): 0.8})
    frame = frame[~((frame.agent_label != "center") & (frame.horizon == 100000))]
    rows = bs.slope_rows(frame, lead_of=lambda eps, t: lambda T: T ** 0.75)
    assert [(r[0], r[1]) for r in rows] == [("center", "1,000 .. 31,623"),
                                            ("center", "1,000 .. 100,000"),
                                            ("bandit-submod-pftal ε=1", "1,000 .. 31,623")]
    assert rows[-1][-1] != ""  # the crossing on the learner's last row


# --- no verdict from rounding: games equal up to the last bits get one verdict on every CPU


def _ulps(value: float, k: int) -> float:
    """``value`` moved by ``k`` units in its last place (what another CPU's kernels do)."""
    return float(value + k * np.spacing(value))


#: Ways two deterministic rows can be "the same" regret: bit for bit, up to one ulp (one
#: CPU's summation order against another's), and up to 1e-12 of their size.
SAME = {"exact": lambda v, s: v, "1 ulp": lambda v, s: _ulps(v, (-1) ** s),
        "1e-12": lambda v, s: v * (1 + 1e-12 * (-1) ** s)}


def _verdicts(same, rng=None):
    """Every interval verdict of the studies on rows that are the same regret (``same(v,
    s)``: the value ``v`` of seed ``s`` as another run gives it), against the null each
    one tests; ``rng`` moves every value by up to 4 ulps more (another CPU)."""
    ps = _paired_stats()
    fir, sep = analysis("full-info-rates"), analysis("separation")
    jitter = (lambda v: v) if rng is None else (lambda v: _ulps(v, int(rng.integers(-4, 5))))
    levels = {s: 1 + 0.2 * s for s in range(8)}
    base = {s: 100.0 * c for s, c in levels.items()}
    mine = {s: jitter(same(v, s)) for s, v in base.items()}
    horizons = (64, 128, 256, 512)
    # regret c T^0.5 exactly: per-seed slopes are 0.5 up to rounding
    by = {t: {s: jitter(same(c * t ** 0.5, s)) for s, c in levels.items()} for t in horizons}
    rows = [(EXPERTS, label, t, eps, s, jitter(same(c * t ** 0.5, s)) if eps else c * t ** 0.5)
            for s, c in levels.items() for t in horizons
            for label, eps in (("hedge", None), ("private-ftrl", 10.0))]
    _, lo, hi = ps.paired_ratio(mine, base)
    slope_lo, slope_hi = ps.mean_ci(list(ps.seed_slopes(by).values()))[1:]
    return {"difference": ps.difference(mine, base, ("lower", "higher"))[1],
            "ratio": ps.ratio(mine, base)[1],
            "separation ratio": sep.interval_verdict(lo, hi, 1.0, below=True),
            "slope side": fir.slope_cells(by, 0.5)[2],
            "slope band": ps.band(slope_lo, slope_hi, 0.5, 0.6),
            "slope within 0.1": ps.exponent_verdict(slope_lo, slope_hi, 0.6),
            "trend": fir.trend(rates_frame(rows), "private-ftrl", 10.0)[2]}


def _paired_stats():
    sys.path.insert(0, str(STUDIES))
    try:
        import paired_stats
    finally:
        sys.path.remove(str(STUDIES))
    return paired_stats


@pytest.mark.parametrize("how", SAME)
def test_no_verdict_is_decided_by_rounding(how):
    """Rows with no spread, or a spread of rounding, against a null they equal up to
    rounding: every verdict is ``~`` (within noise), including a slope exactly on the edge
    of a theorem's band; and it stays so when every value moves by a few more ulps, as on
    a CPU with other kernels."""
    expected = {"difference": "~", "ratio": "~", "separation ratio": "~",
                "slope side": "~ 0.5", "slope band": "~", "slope within 0.1": "~",
                "trend": "~"}
    assert _verdicts(SAME[how]) == expected
    rng = np.random.default_rng(37)
    for _ in range(20):
        assert _verdicts(SAME[how], rng) == expected


def test_a_gap_beyond_rounding_is_decided_by_its_point_even_without_spread():
    """Deterministic rows 1e-6 apart (no spread at all): the point decides, as it should;
    rounding is 1e-9 of the size compared, far below."""
    ps = _paired_stats()
    base = {s: 100.0 * (1 + 0.2 * s) for s in range(8)}
    more = {s: v * (1 + 1e-6) for s, v in base.items()}
    assert ps.difference(more, base, ("lower", "higher"))[1] == "higher"
    assert ps.difference(base, more, ("lower", "higher"))[1] == "lower"
    assert ps.ratio(more, base)[1] == "above" and ps.ratio(base, more)[1] == "below"
    slope = 0.5 + 1e-6
    by = {t: {s: (1 + 0.2 * s) * t ** slope for s in range(8)} for t in (64, 128, 256, 512)}
    assert analysis("full-info-rates").slope_cells(by, 0.5)[2] == "above 0.5"


# --- replication: two disjoint seed sets, a verdict only where both support it


def _two_sets(rows_at, discovery=8, replication=8, seed=11):
    """Hand-made games on the discovery seeds ``0 ..`` and the replication seeds ``5000
    ..``: ``rows_at(s, replicate, rng)`` gives seed ``s``'s rows (``replicate``: whether
    ``s`` is a replication seed)."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in [*range(discovery), *range(5000, 5000 + replication)]:
        rows += rows_at(s, s >= 5000, rng)
    return games_frame(rows)


def test_an_ordering_the_replication_seeds_do_not_support_is_written_not_replicated():
    """private-exp2 beats adap-ucb on the discovery seeds (by 100 +- 1) and not on the
    replication seeds (their regrets alternate +-100 around the same level): the block
    says ``not replicated`` and gives both intervals, never the discovery ordering; an
    ordering both sets support (adap-klucb above private-exp2 by 50 on each) is written."""
    ps = analysis("private-stochastic")

    def at(s, replicate, rng):
        level = 1000 + 10 * rng.normal()
        ucb = level + (100 * (-1) ** s if replicate else 100 + rng.normal())
        return [("stochastic", "uniform", 10000, None, s, 3 * level),
                ("stochastic", "private-exp2", 10000, 0.1, s, level),
                ("stochastic", "adap-ucb", 10000, 0.1, s, ucb),
                ("stochastic", "adap-klucb", 10000, 0.1, s, level + 50 + rng.normal()),
                ("stochastic", "private-batched-htinf", 10000, 0.1, s, 2 * level)]

    block = ps.private_block(_two_sets(at), "stochastic", 10000)
    row = [line for line in block.splitlines() if line.startswith("| 0.1 |")][-1]  # diffs
    cells = [c.strip() for c in row.strip("|").split("|")][1:]
    ucb_exp2, _, klucb_exp2, _ = cells
    assert ucb_exp2.endswith(" not replicated")
    discovery, replication = ucb_exp2.removesuffix(" not replicated").split("; replication ")
    def interval(text):
        return [float(x) for x in text.split("[")[1].rstrip("]").split(", ")]

    assert discovery.startswith("+100.") and interval(discovery)[0] > 0  # excludes 0
    lo, hi = interval(replication)
    assert lo < 0 < hi  # holds 0
    assert klucb_exp2.endswith(" private-exp2") and "; replication +49." in klucb_exp2
    # the same discovery seeds alone name the ordering (nothing to replicate it against)
    alone = ps.private_block(_two_sets(at, replication=0), "stochastic", 10000)
    assert "| +100.5 [+100.0, +101.1] private-exp2 |" in alone
    # the reading restates the orderings from the same verdicts, never by hand
    text = ps.reading(_two_sets(at), 10000)
    assert "`adap-ucb` − `private-exp2`: not replicated at ε ∈ {0.1} (+100.5 [" in text
    assert "`adap-klucb` − `private-exp2`: `private-exp2` lower at ε ∈ {0.1}." in text
    assert "`adap-ucb` − `private-exp2`: `private-exp2` lower at ε ∈ {0.1}." in ps.reading(
        _two_sets(at, replication=0), 10000)
    assert ucb_exp2.startswith("+100.5 [+100.0, +101.1]; replication ")


def test_a_criterion_and_a_slope_the_two_seed_sets_disagree_on_are_not_replicated():
    """The separation criterion (at most half of trivial play) met on the discovery seeds
    only, and a slope within 0.1 of its exponent on the discovery seeds only: both read
    ``not replicated`` with the two intervals."""
    sep, stats = analysis("separation"), _paired_stats()
    rng = np.random.default_rng(3)
    rows = []
    for s in [*range(8), *range(5000, 5008)]:
        tr0, tr = 400 * (1 + 0.01 * rng.normal()), 1600 * (1 + 0.01 * rng.normal())
        share = 0.6 if s >= 5000 else 0.4
        rows += [("E", "center", 1000, s, tr0, None), ("E", "center", 4000, s, tr, None),
                 ("E", "learns", 4000, s, share * tr * (1 + 0.01 * rng.normal()), None)]
    by = {r["learner"]: r for r in sep.id_rows(frame(rows), "E")}
    learns = by["learns"]
    assert learns["criterion"] == "<= trivial/2: not replicated"
    assert learns["ratio"].startswith("0.4") and "; replication 0.6" in learns["ratio"]
    assert learns["seeds"] == "8 + 8"
    assert by["center (trivial)"]["criterion"] == "slope > 0.9: ok"  # both sets agree
    slopes = {t: {s: (t ** (0.75 if s < 5000 else 0.5)) * (1 + 0.01 * ((s * 7) % 5))
                  for s in [*range(8), *range(5000, 5008)]} for t in (1000, 4000, 16000)}
    text, verdict = stats.slope_verdict(
        slopes, lambda lo, hi: stats.exponent_verdict(lo, hi, 0.75))
    assert verdict == stats.NOT_REPLICATED and text.startswith("0.75 [")
    assert "; replication 0.50 [" in text
    same = {t: {s: v for s, v in r.items() if s < 5000} for t, r in slopes.items()}
    assert stats.slope_verdict(same, lambda lo, hi: stats.exponent_verdict(lo, hi, 0.75)
                               )[1] == "yes"


def test_within_noise_is_claimed_only_as_an_equivalence_at_the_stated_margin():
    """Two learners whose paired differences alternate +-1 (interval well inside +-5% of
    trivial play's 3000: equivalent) and two whose differences spread by 800 (interval
    holds 0 but reaches past the margin: no side, and no equivalence either)."""
    ps = analysis("private-stochastic")

    def at(s, replicate, rng):
        wide = 400 * rng.normal()
        return [("stochastic", "uniform", 10000, None, s, 3000.0),
                ("stochastic", "ucb1", 10000, None, s, 1000 + 0.5 * (-1) ** s),
                ("stochastic", "exp3", 10000, None, s, 1000 - 0.5 * (-1) ** s),
                ("stochastic", "kl-ucb", 10000, None, s, 1000 + wide),
                ("stochastic", "htinf", 10000, None, s, 1000 - wide)]

    text = ps.reading(_two_sets(at), 10000)
    assert "margin ±150.0, 5% of trivial play's mean regret" in text
    assert "`ucb1` − `exp3`: equivalent within ±150 (the whole interval" in text
    assert ("`kl-ucb` − `htinf`: neither side shown nor equivalence within the margin."
            in text)
    stats = _paired_stats()
    with pytest.raises(ValueError, match="margin"):
        stats.equivalence({0: 1.0, 1: 2.0}, {0: 1.0, 1: 2.0}, 0)


# --- the bandit submodular study: the exploration schedule split off


def test_the_split_calls_a_slope_the_theorems_only_where_the_schedule_leaves_it():
    """Hand-made splits: gamma clamped at 1 (schedule clamped), the exploration the
    larger part (schedule), a free gamma with the remainder growing as T^0.75 (the
    theorem's regime) and the same with the replication seeds' remainder at T^0.5 (not
    replicated)."""
    bs = analysis("bandit-submodular")
    seeds = [*range(8), *range(5000, 5008)]
    rows, splits = [], {}

    def add(label, eps, t, s, gamma, explore, rest):
        gid = f"{label}-{eps}-{t}-{s}"
        rows.append({"game_id": gid, "agent_label": label, "epsilon": eps, "horizon": t,
                     "seed_index": s, "regret": explore + rest})
        splits[gid] = {"expected": explore + rest, "exploration": explore,
                       "remainder": rest, "gamma": gamma, "regret": explore + rest}

    for s in seeds:
        c = 1 + 0.01 * ((7 * s) % 5)
        for t in (1000, 16000):
            # non-private: clamped at T = 1000, the exploration the larger part after
            add("hazan-kale-submodular-bandit", None, t, s, 1.0 if t == 1000 else 0.4,
                2 * c * t ** 0.8, c * t ** 0.6)
            # private at eps 10: free schedule, the remainder the larger part, T^0.75 on
            # the discovery seeds, T^0.5 on the replication seeds
            rest = c * t ** (0.75 if s < 5000 else 0.5) * 100
            add("bandit-submod-pftal", 10.0, t, s, 0.5, 0.1 * rest, rest)
            # private at eps 100: free, T^0.75 on both sets
            add("bandit-submod-pftal", 100.0, t, s, 0.5, 0.1 * c * t ** 0.75, c * t ** 0.75)
    frame = pd.DataFrame(rows)
    got = {(r[0], r[1]): r for r in bs.split_rows(frame, splits)}
    assert got["hazan-kale-submodular-bandit", "16,000"][-1] == ps.SCHEDULE_CLAMPED
    assert got["hazan-kale-submodular-bandit", "1,000"][3] == "1 (clamped at 1)"
    assert got["bandit-submod-pftal ε=100", "16,000"][-1] == ps.THEOREMS_REGIME
    assert got["bandit-submod-pftal ε=10", "16,000"][-1] == "not replicated"
    assert "; replication 0.50 [" in got["bandit-submod-pftal ε=10", "16,000"][8]
    assert got["bandit-submod-pftal ε=100", "16,000"][5].endswith("(9% [9, 9]; replication 9% [9, 9])")
    # the larger part: a free schedule whose exploration outweighs the rest
    for gid, v in splits.items():
        if gid.startswith("hazan"):
            v["gamma"] = 0.4
    got = {(r[0], r[1]): r for r in bs.split_rows(frame, splits)}
    assert got["hazan-kale-submodular-bandit", "16,000"][-1] == ps.SCHEDULE_LARGER
    # a horizon with a game not split yet is left out
    del splits["bandit-submod-pftal-100.0-16000-5003"]
    got = {(r[0], r[1]) for r in bs.split_rows(frame, splits)}
    assert ("bandit-submod-pftal ε=100", "16,000") not in got


