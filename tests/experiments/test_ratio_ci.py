"""The paired ratio interval of the report (Fieller's), against its definition: the set
of ratios that the paired t-test of ``a - rho b`` does not reject."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dp_online_envs.lab.experiments.analysis import ROUNDING, ratio_ci, summary


def _not_rejected(a, b, rho, level=0.95):
    return stats.ttest_1samp(np.asarray(a) - rho * np.asarray(b), 0.0).pvalue >= 1 - level


@pytest.mark.parametrize("seed", range(6))
def test_the_interval_is_the_set_the_paired_t_test_does_not_reject(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    b = rng.uniform(50, 150, n)
    a = 1.7 * b + rng.normal(0, 20, n)
    ratio, lo, hi = ratio_ci(a, b)
    assert ratio == pytest.approx(a.mean() / b.mean(), rel=1e-15)
    assert lo < ratio < hi
    grid = np.linspace(lo - 1.0, hi + 1.0, 4001)
    # the same paired t-test at every rho of the grid, in one call (one row a rho)
    pvalues = stats.ttest_1samp(a[None, :] - grid[:, None] * b[None, :], 0.0, axis=1).pvalue
    inside = grid[pvalues >= 0.05]
    assert _not_rejected(a, b, inside[0]) and not _not_rejected(a, b, inside[0] - (grid[1] - grid[0]))
    step = grid[1] - grid[0]
    assert inside[0] == pytest.approx(lo, abs=step) and inside[-1] == pytest.approx(hi, abs=step)
    # at the ends the test is exactly at its level
    for end in (lo, hi):
        p = stats.ttest_1samp(a - end * b, 0.0).pvalue
        assert p == pytest.approx(0.05, abs=1e-9)


def test_pairing_narrows_the_interval_of_correlated_seeds():
    rng = np.random.default_rng(7)
    hard = rng.uniform(0, 1000, 10)  # seeds differ a lot, both learners alike
    a, b = 1.2 * hard + rng.normal(0, 5, 10), hard + rng.normal(0, 5, 10)
    _, lo, hi = ratio_ci(a, b)
    assert 1.0 < lo < 1.2 < hi < 1.4
    _, lo2, hi2 = ratio_ci(a, rng.permutation(b))  # pairing broken: much wider
    assert lo2 is None or hi2 - lo2 > 3 * (hi - lo)


def test_an_indistinct_denominator_gives_an_unbounded_interval():
    a = [10.0, 12.0, 11.0]
    b = [-5.0, 6.0, 0.5]  # mean not significantly different from 0
    ratio, lo, hi = ratio_ci(a, b)
    assert math.isfinite(ratio) and (lo, hi) == (None, None)
    assert ratio_ci([3.0], [2.0]) == (1.5, None, None)
    with pytest.raises(ValueError, match="one length, got 2 and 3"):
        ratio_ci([1.0, 2.0], [1.0, 2.0, 3.0])


def _record(agent, seed, regret, eps=None, counterpart=None):
    return {"env_id": "E-v0", "horizon": 10, "agent": agent, "epsilon": eps, "delta": None,
            "seed_index": seed, "regret": regret, "regret_lo": regret, "regret_hi": regret,
            "learner_loss": regret, "private": eps is not None, "counterpart": counterpart,
            "exact": True}


def test_summary_pairs_rows_by_seed_index():
    base = [10.0, 20.0, 30.0, 40.0]
    private = [12.0, 25.0, 33.0, 47.0]
    records = ([_record("hedge", i, r) for i, r in enumerate(base)]
               + [_record("p", i, r, eps=1.0, counterpart="hedge")
                  for i, r in enumerate(private)]
               + [_record("center", i, 100.0 + i) for i in range(3)])  # seeds 0..2 only
    rows = {r["agent"]: r for r in summary(records)}
    p = rows["p"]
    expect = ratio_ci(private, base)
    assert (p["vs_counterpart"], p["vs_counterpart_lo"], p["vs_counterpart_hi"]) == \
        pytest.approx(expect)
    assert (p["vs_baseline"], p["vs_baseline_lo"], p["vs_baseline_hi"]) == pytest.approx(expect)
    # the ratio and its interval both on the seeds both played (not the ratio of the
    # rows' means over all their seeds)
    ratio, lo, hi = ratio_ci(private[:3], [100.0, 101.0, 102.0])
    assert (p["vs_trivial"], p["vs_trivial_lo"], p["vs_trivial_hi"]) == pytest.approx(
        (ratio, lo, hi))
    assert ratio == pytest.approx(np.mean(private[:3]) / 101.0)
    assert ratio != pytest.approx(np.mean(private) / 101.0)


def test_pairs_without_spread_give_the_exact_ratio_not_an_unbounded_interval():
    """Deterministic learners on one window: every pair is the same, so the interval is
    the ratio itself give or take rounding (these values used to round ``disc`` below 0
    and read unbounded)."""
    a, b = [2.925331171282606] * 2, [2.926918017751575] * 2
    ratio, lo, hi = ratio_ci(a, b)
    assert lo == ratio - ROUNDING and hi == ratio + ROUNDING
    assert ratio_ci([1.0, 1.0], [0.0, 0.0])[1:] == (None, None)  # b not away from 0
