"""The leaderboard's score on hand-computed cases (no game is played)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dp_online_envs.envs.registry import ENV_IDS
from dp_online_envs.lab.leaderboard import score as sc


def test_trivial_scores_zero_and_the_best_reference_one():
    stick = sc.yardstick([10.0, 14.0, 12.0], {"a": [4.0, 6.0, 5.0], "b": [8.0, 8.0, 8.0]})
    assert stick.best == "a" and stick.margin == pytest.approx(12.0 - 5.0)
    assert np.all(sc.game_scores([10.0, 14.0, 12.0], stick) == 0.0)
    # the best reference: (10-4)/7, (14-6)/7, (12-5)/7 -> mean exactly 1
    best = sc.game_scores([4.0, 6.0, 5.0], stick)
    assert best == pytest.approx([6 / 7, 8 / 7, 1.0])
    assert best.mean() == pytest.approx(1.0)


def test_id_and_benchmark_scores_by_hand():
    stick = sc.yardstick([10.0, 10.0], {"ref": [2.0, 2.0]})  # margin 8
    h1 = sc.game_scores([6.0, 2.0], stick)  # 0.5, 1.0
    h2 = sc.game_scores([10.0, 4.0], stick)  # 0.0, 0.75
    s = sc.id_score([h1, h2])
    assert s.per_seed == pytest.approx((0.25, 0.875))
    assert s.score == pytest.approx(0.5625)
    # Student-t 95% interval of two values: mean +- t_{0.975,1} * sd / sqrt(2)
    half = 12.706204736174707 * np.std([0.25, 0.875], ddof=1) / math.sqrt(2)
    assert (s.lo, s.hi) == pytest.approx((0.5625 - half, 0.5625 + half))
    # an id it cannot play counts 0 in the benchmark mean
    b = sc.benchmark_score({"A": s, "B": None}, seeds=2)
    assert b.per_seed == pytest.approx((0.125, 0.4375))
    assert b.score == pytest.approx(0.28125)


def test_no_margin_means_no_score():
    stick = sc.yardstick([5.0, 5.0], {"ref": [6.0, 5.0]})
    assert not stick.scorable
    with pytest.raises(ValueError, match="margin"):
        sc.game_scores([1.0, 1.0], stick)
    with pytest.raises(ValueError, match="one per seed"):
        sc.yardstick([1.0, 2.0], {"ref": [1.0]})
    with pytest.raises(ValueError, match="no scorable horizon"):
        sc.id_score([])


def test_every_benchmark_id_has_a_family_and_the_default_is_versioned():
    for env_id in ENV_IDS:
        fam = sc.family(env_id)
        assert fam.nonprivate and fam.private
    with pytest.raises(ValueError, match="no learner family"):
        sc.family("DPBandit-Nothing-v0")
    b = sc.default_benchmark()
    assert b.ids == tuple(ENV_IDS) and b.epsilons == (0.1, 1.0, 10.0)
    assert sc.SCORE_VERSION == "leaderboard-v4"
    assert b.audit_horizon is None and b.audit_horizons == b.horizons  # every scored T


@pytest.mark.parametrize("bad, match", [
    ({"ids": ()}, "ids is empty"),
    ({"seeds": 1}, "at least 2"),
    ({"horizons": (0,)}, "horizons"),
    ({"epsilons": (-1.0,)}, "epsilons"),
    ({"audit_games": 0}, "audit_games"),
])
def test_bad_benchmark_settings_are_named(bad, match):
    with pytest.raises(ValueError, match=match):
        sc.Benchmark(**{"ids": ("DPBandit-MAB-v0",), **bad})


def test_polytope_references_are_every_natural_baseline_and_the_best_is_their_min():
    for env_id in ("DPBandit-Matroid-v2", "DPBandit-Flow-v2", "DPBandit-Birkhoff-v2"):
        assert sc.family(env_id).nonprivate == ("garber-kretzu", "garber-kretzu-tuned",
                                             "exp2", "fkm")
    assert sc.family("DPBandit-SubmodularBase-v2").nonprivate == (
        "garber-kretzu", "garber-kretzu-tuned", "fkm")  # exp2 refuses this polytope
    assert sc.family("DPFullInfo-Matroid-v2").nonprivate == ("online-fw", "ftrl", "ftal")
    # trivial 10, 14 (mean 12); exp2 3, 5 (mean 4) beats the Garber-Kretzu learners
    stick = sc.yardstick([10.0, 14.0], {"exp2": [3.0, 5.0], "fkm": [6.0, 6.0],
                                     "garber-kretzu": [8.0, 9.0],
                                     "garber-kretzu-tuned": [7.0, 8.0]})
    assert stick.best == "exp2" and stick.margin == 8.0
    # exp2's own score is then 1 on average: ((10-3) + (14-5)) / 2 / 8
    assert sc.game_scores([3.0, 5.0], stick).mean() == 1.0
