"""The speed harness (``benchmarks/speed``): its cases run at tiny sizes, the comparison
with the stored baseline flags what it must on hand-made numbers, and the benchmarks
stay out of the test suite. Nothing here is timed, and no time is asserted."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from agents.bandit.exp2 import exp2_parameters
from agents.privacy import COUNTERS
from benchmarks.speed import __main__ as cli
from benchmarks.speed.cases import (
    BUILDS,
    CASES,
    CLOCKS,
    LARGE_EPSILONS,
    SIZES,
    CaseUnavailable,
    child_cpu,
    cumulative_sum,
    time_ratio,
)
from benchmarks.speed.compare import BASELINE, compare, load_baseline, ratios_of_run, regressions
from benchmarks.vectorized_games import lean_exp3

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", list(CASES))
def test_every_case_runs_both_sides_at_its_tiny_size(name, monkeypatch):
    if name == "load-results":  # its results directory settles in 0.1 s here, not 3 s
        from dp_online_envs.lab.experiments import index

        monkeypatch.setattr(index, "SETTLED_NS", 10**8)
    case = CASES[name]
    assert set(case.sizes) == set(SIZES) and case.clock in CLOCKS and case.threshold > 1
    pair = case.pair("tiny")
    assert pair.units > 0
    results = []
    for side in (pair.product, pair.reference):
        work = side()
        try:
            results.append(work.run())
        finally:
            work.close()
    if name == "isolated":  # the learner in its own process plays the same game
        assert isinstance(results[0], float) and results[0] == results[1]


def test_the_counters_reference_is_the_running_sum_of_the_counters_inputs():
    stream = np.random.default_rng(8).uniform(-1.0, 1.0, size=(50, 3))
    assert np.allclose(cumulative_sum(3, 50, 7).run(), stream.sum(axis=0), atol=1e-12)
    assert {n for n in CASES if n.startswith("counter-")} == {f"counter-{n}" for n in COUNTERS}


def test_the_build_case_builds_every_learner_at_the_large_epsilons_uncached():
    from agents.privacy import calibration

    pair = CASES["build-large-epsilon"].pair("tiny")
    calls = []
    for side in (pair.product, pair.product, pair.reference):
        before = sum(calibration.ACCOUNTING_CALLS.values())
        claims = side().run()
        calls.append(sum(calibration.ACCOUNTING_CALLS.values()) - before)
        assert len(claims) == pair.units == len(BUILDS) * len(LARGE_EPSILONS)
        assert [c.delta for c in claims] == [
            delta if name == "private-ftrl" else 0.0  # private-exp2 is Laplace only
            for name, _, delta in BUILDS for _ in LARGE_EPSILONS]
    product, reference = claims_at(pair.product), claims_at(pair.reference)
    assert product == [e for _ in BUILDS for e in LARGE_EPSILONS]
    assert reference == [1.0] * pair.units
    # the caches are cleared before each build: a second run accounts as much as the first
    assert calls[0] == calls[1] > 0 and calls[2] > 0


def claims_at(side):
    """The epsilon of each privacy claim a side's run builds."""
    return [c.epsilon for c in side().run()]


def scalar_private_exp2(horizon, k, eta, gamma, noise_scale):
    """Algorithm 4 + 5 on K arms written round by round in plain Python, drawing from
    the generator in the lean loop's order: its total loss."""
    rng = np.random.default_rng(0)
    mu = rng.uniform(0.3, 0.7, size=(1, k))[0]
    log_w, total = [0.0] * k, 0.0
    for _ in range(horizon):
        top = max(log_w)
        w = [math.exp(v - top) for v in log_w]
        s = sum(w)
        p = [(1.0 - gamma) * (x / s) + gamma / k for x in w]
        cdf = [sum(p[:i + 1]) for i in range(k)]
        u = rng.random(1)[0] * cdf[-1]
        arm = min(sum(c <= u for c in cdf), k - 1)
        loss = float(rng.random(1)[0] < mu[arm])
        total += loss
        loss += rng.laplace(0.0, noise_scale, 1)[0]
        log_w[arm] -= eta * loss / p[arm]
    return total


def test_the_lean_loop_of_the_private_exp2_case_is_private_exp2s_algorithm():
    eta, gamma, _ = exp2_parameters(300, 5, 1.0)
    lean = lean_exp3(1, 300, 5, eta=eta, gamma=gamma, noise_scale=1.0)
    assert lean.shape == (1,)
    assert lean[0] == scalar_private_exp2(300, 5, eta, gamma, 1.0)
    assert lean[0] != lean_exp3(1, 300, 5, eta=eta, gamma=gamma)[0]  # the noise moves play


def test_a_pair_rejects_an_unknown_size():
    with pytest.raises(ValueError, match=r"size='huge' rejected: expected one of \['full', 'tiny'\]"):
        CASES["env-step"].pair("huge")


def test_time_ratio_is_the_ratio_of_the_medians():
    assert time_ratio([2.0, 4.0, 100.0], [1.0, 2.0, 3.0]) == 2.0
    assert time_ratio([3.0], [4.0]) == 0.75
    with pytest.raises(ValueError, match="reference times"):
        time_ratio([1.0], [])
    with pytest.raises(ValueError, match=r"product times \[0.0\]"):
        time_ratio([0.0], [1.0])


BASE = {"a": {"ratio": 2.0, "threshold": 1.5}, "b": {"ratio": 10.0, "threshold": 2.0},
        "c": {"ratio": 1.0}}


def verdicts(fresh, baseline=BASE):
    return {row.name: row.verdict for row in compare(fresh, baseline)}


def test_an_equal_run_passes():
    rows = compare({"a": 2.0, "b": 10.0, "c": 1.0}, BASE)
    assert [r.verdict for r in rows] == ["ok", "ok", "ok"] and regressions(rows) == []
    assert [r.change for r in rows] == [1.0, 1.0, 1.0]


def test_a_ratio_beyond_its_threshold_is_a_regression_and_within_it_is_not():
    # a: limit 1.5 x 2.0 = 3.0; b: 2.0 x 10 = 20; c: the default 1.5 x 1.0
    assert verdicts({"a": 3.01, "b": 19.9, "c": 1.49}) == {"a": "SLOWER", "b": "ok", "c": "ok"}
    assert verdicts({"a": 2.99, "b": 20.1, "c": 1.51}) == {"a": "ok", "b": "SLOWER",
                                                           "c": "SLOWER"}
    rows = compare({"a": 4.0, "b": 10.0}, BASE)
    assert [r.name for r in regressions(rows)] == ["a"]


def test_faster_new_and_not_run_do_not_fail():
    rows = compare({"a": 1.0, "d": 5.0}, BASE)
    assert {r.name: r.verdict for r in rows} == {"a": "faster", "b": "not run",
                                                 "c": "not run", "d": "new"}
    assert regressions(rows) == []


@pytest.mark.parametrize("bad, match", [
    ({"fresh": {"a": 0.0}}, "ratio of a=0.0 rejected"),
    ({"fresh": {"a": math.nan}}, "ratio of a=nan rejected"),
    ({"baseline": {"a": {"ratio": -1.0}}}, "stored ratio of a=-1.0 rejected"),
    ({"baseline": {"a": {"ratio": 1.0, "threshold": 1.0}}}, "threshold=1.0 rejected"),
    ({"default_threshold": 0.5}, "threshold=0.5 rejected"),
])
def test_bad_numbers_are_rejected_by_name(bad, match):
    args = {"fresh": {"a": 1.0}, "baseline": {"a": {"ratio": 1.0}}, "default_threshold": 1.5}
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        compare(**args)


def report(ratios, size="full"):
    """A pytest-benchmark report as the harness writes it (only what is read)."""
    return {"machine_info": {"node": "host", "system": "Linux", "release": "6", "machine": "x",
                             "cpu": {"brand_raw": "CPU", "count": 2}},
            "benchmarks": [{"name": f"test_speed[{n}]", "extra_info": {
                "case": n, "size": size, "ratio": r, "product": "p", "reference": "q",
                "unit": "round", "units": 10, "product_s": [r], "reference_s": [1.0]}}
                for n, r in ratios.items()]}


def test_ratios_are_read_from_a_report_of_the_harness_at_the_baselines_size():
    assert ratios_of_run(report({"a": 2.0, "b": 3.0})) == {"a": 2.0, "b": 3.0}
    with pytest.raises(ValueError, match="built at size 'tiny'"):
        ratios_of_run(report({"a": 2.0}, size="tiny"))
    with pytest.raises(ValueError, match="no case/ratio"):
        ratios_of_run({"benchmarks": [{"name": "test_other", "extra_info": {}}]})


def test_the_command_fails_on_a_regression_and_passes_an_equal_run(tmp_path, capsys):
    base = tmp_path / "baseline.json"
    base.write_text(json.dumps({"release": "r", "date": "d", "benchmarks": BASE}))
    equal, slow = tmp_path / "equal.json", tmp_path / "slow.json"
    equal.write_text(json.dumps(report({"a": 2.0, "b": 10.0, "c": 1.0})))
    slow.write_text(json.dumps(report({"a": 2.0, "b": 25.0, "c": 1.0})))
    assert cli.main(["--compare", str(equal), "--baseline", str(base)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^b\s+10\.000\s+10\.000\s+1\.00\s+2\.00\s+ok$", out, re.M)
    assert cli.main(["--compare", str(slow), "--baseline", str(base)]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^b\s+10\.000\s+25\.000\s+2\.50\s+2\.00\s+SLOWER$", out, re.M)
    assert "1 case(s) slower than their limit: b" in out


def test_a_saved_baseline_holds_ratios_thresholds_and_no_host_name():
    doc = cli.baseline_document(report({"env-step": 1.25}), (0.5, 0.75), 7)
    assert doc["benchmarks"]["env-step"]["ratio"] == 1.25
    assert doc["benchmarks"]["env-step"]["threshold"] == CASES["env-step"].threshold
    assert doc["load average (1 min) before, after"] == [0.5, 0.75]
    assert "host" not in json.dumps(doc) and doc["release"].startswith("dp-online-envs")


def test_the_committed_baseline_covers_every_case_with_its_threshold():
    doc = load_baseline(BASELINE)
    assert set(doc["benchmarks"]) == set(CASES)
    for name, entry in doc["benchmarks"].items():
        assert entry["threshold"] == CASES[name].threshold and entry["ratio"] > 0
    assert re.fullmatch(r"20\d\d-\d\d-\d\d", doc["date"])
    assert doc["release"].startswith("dp-online-envs ") and doc["machine"]["cpu"]
    assert doc["size"] == "full"


def _names(requirements: list[str], extras: dict[str, list[str]]) -> set[str]:
    """The distribution names of ``requirements``, this project's own extras expanded."""
    names = set()
    for req in requirements:
        name = re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0].lower()
        if name == "dp-online-envs":
            inner = re.search(r"\[(.*)\]", req).group(1).split(",")
            names |= _names([d for extra in inner for d in extras[extra.strip()]], extras)
        else:
            names.add(name)
    return names


def test_the_benchmarks_stay_out_of_the_test_suite_and_the_test_extra_has_the_harness():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests"]
    assert [p for p in (ROOT / "benchmarks").rglob("test_*.py")] == []
    extras = project["project"]["optional-dependencies"]
    bench = _names(extras["bench"], extras)
    assert "pytest-benchmark" in bench
    assert bench <= _names(extras["test"], extras)  # .[test] runs the harness too


def test_select_cases_picks_exactly_the_named_cases():
    expr = cli.select_cases(["counter-tree", "private-exp2"])
    assert expr == "test_speed[counter-tree] or test_speed[private-exp2]"


def test_a_case_that_looks_slower_is_rerun_and_keeps_its_best_ratio():
    calls = []

    def rerun(names):
        calls.append(list(names))
        return {"a": 2.5, "b": 30.0}  # a: load passed; b: slower again

    fresh = {"a": 3.5, "b": 25.0, "c": 1.0}
    ratios, notes = cli.confirm_slower(fresh, BASE, rerun)
    assert calls == [["a", "b"]]  # c was within its limit: not rerun
    assert ratios == {"a": 2.5, "b": 25.0, "c": 1.0}
    assert {r.name: r.verdict for r in compare(ratios, BASE)} == {
        "a": "ok", "b": "SLOWER", "c": "ok"}
    assert notes == ["a: 3.500 looked slower, rerun 2.500",
                     "b: 25.000 looked slower, rerun 30.000"]
    assert cli.confirm_slower(fresh, BASE, rerun, reruns=0) == (fresh, [])
    calls.clear()
    assert cli.confirm_slower({"a": 2.0}, BASE, rerun)[1] == [] and calls == []


def test_the_child_clock_counts_what_the_children_measure():
    from benchmarks.speed.cases import child_cpu, child_seconds

    before = child_seconds()
    seconds = child_cpu("sum(range(10**6))", "x = 1").run()
    assert seconds > 0 and child_seconds() == pytest.approx(before + seconds)
    with pytest.raises(RuntimeError, match=r"(?s)failed: .*ZeroDivisionError"):
        child_cpu("1 / 0").run()


def test_the_performance_guide_quotes_the_stored_ratios():
    text = (ROOT / "docs" / "guides" / "performance.md").read_text()
    quoted = {m.group(1): (float(m.group(2)), float(m.group(3))) for m in re.finditer(
        r"^\| `([\w-]+)` \|.*\| ([\d.]+) \| ([\d.]+)x \|$", text, re.M)}
    stored = load_baseline(BASELINE)
    assert quoted == {name: (round(e["ratio"], 2), e["threshold"])
                      for name, e in stored["benchmarks"].items()}
    assert stored["date"] in text and stored["release"] in text


def test_a_child_counts_the_cpu_spent_on_its_behalf_and_writes_its_bytecode(monkeypatch):
    """The start-up cases' children add the CPU of the processes they stopped (the
    expression ``others``, read before and after the timed code: here a counter that
    jumps by 5 s), and run without ``PYTHONDONTWRITEBYTECODE`` (as a user's interpreter,
    which keeps its bytecode cache), whatever the harness's environment says."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    seconds = child_cpu("assert not sys.dont_write_bytecode",
                        "import itertools, sys\n_jump = itertools.count(0, 5).__next__",
                        others="_jump()").run()
    assert 5.0 <= seconds < 6.0


def test_the_sandboxed_case_is_not_run_where_no_sandbox_starts(monkeypatch):
    from dp_online_envs.lab import sandbox

    monkeypatch.setattr(sandbox, "sandbox_unavailable", lambda: "bubblewrap is missing")
    with pytest.raises(CaseUnavailable, match="sandboxed-game needs a sandbox: bubblewrap"):
        CASES["sandboxed-game"].pair("tiny")
