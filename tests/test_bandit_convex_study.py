"""The bandit convex study's schedule split: every smoothed learner's game replayed with
its realized regret checked bit for bit, split round by round into the perturbation's
cost, the shrink's cost and the unshrunk points' own regret (checked against a
brute-force recomputation from the env's losses and the learners' geometry); and the
regime each step of the split table is given, on hand-made splits whose verdicts are
known (clamped, the schedule the larger part, the theorem's regime, another slope, the
two seed sets disagreeing), with the slope tables' last column following it."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import numpy as np
import pandas as pd
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
STUDY = ROOT / "benchmarks" / "studies" / "bandit-convex"
DISCOVERY, REPLICATION = list(range(8)), list(range(5000, 5008))
FLOW = {"id": "DPBandit-Flow-v1",
        "kwargs": {"grid": [3, 4], "loss": "distance", "adversary": "oblivious"}}
BALL2 = {"id": "DPBandit-Convex-v1",
         "kwargs": {"dim": 2, "loss": "distance", "adversary": "oblivious"}}


@pytest.fixture(scope="module")
def bc():
    spec = importlib.util.spec_from_file_location("study_bandit_convex", STUDY / "analysis.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _radius_and_shrink(agent):
    """``(radius, alpha)`` of a smoothed learner, by its own names."""
    if agent.name == "fkm":
        return agent.smoothing, agent.alpha
    if agent.name == "bandit-pftal":
        return agent.beta, agent.xi
    return agent.zeta, agent.alpha


# One short game per learner family: fkm and bandit-pftal on the ball ids' defaults,
# garber-kretzu on the matroid id (its batch point leaves the center within 400 rounds),
# private-projection-free with Laplace noise on a former polytope and with Gaussian
# noise on the 2-d ball.
GAMES = [
    {"envs": ["DPBandit-StronglyConvex-v1"], "agents": ["fkm", "bandit-pftal"],
     "epsilons": [10], "horizons": [60]},
    {"envs": ["DPBandit-Matroid-v1"], "agents": ["garber-kretzu"], "horizons": [400]},
    {"envs": [FLOW], "agents": ["private-projection-free"], "epsilons": [1],
     "horizons": [60]},
    {"envs": [BALL2], "agents": [{"name": "private-projection-free",
                                  "kwargs": {"noise": "gaussian"}}],
     "epsilons": [1], "delta": 1e-5, "horizons": [60]},
]


@pytest.mark.parametrize("settings", GAMES, ids=["ball", "garber-kretzu", "ppf-laplace",
                                                  "ppf-gaussian"])
def test_the_schedule_split_replays_the_game_and_its_parts_are_the_losses_at_its_points(
        bc, settings):
    """Replayed: the record's realized regret bit for bit, and the remainder exactly
    ``regret - perturbation - shrink``. Brute force: the game played again round by
    round, the points read before each round checked against the geometry (the played
    point is the unperturbed one moved by the radius; the unperturbed one is the
    unshrunk one shrunk by ``alpha`` toward the center; the unshrunk one lies in the
    domain), and each part summed from the env's loss at the played action, not the
    record's loss."""
    from dp_online_envs.envs.registry import build_env
    from dp_online_envs.lab.experiments.game import play_game
    from dp_online_envs.lab.experiments.sweep import parse_sweep

    for spec in parse_sweep({**settings, "seeds": 1}).games:
        split = bc.schedule_split(spec)
        assert split["regret"] == play_game(spec)["regret"]
        assert split["remainder"] == split["regret"] - split["perturbation"] - split["shrink"]
        env = build_env(spec.env_id, horizon=spec.horizon, **spec.env_kwargs)
        agent = spec.agent_class()(env.get_wrapper_attr("problem"), epsilon=spec.epsilon,
                                   delta=spec.delta or 0.0, seed=spec.agent_seed,
                                   **spec.agent_kwargs)
        agent.reset(spec.agent_seed)
        env.reset(seed=spec.env_seed)
        loss, domain = env.unwrapped.loss, agent.problem.domain
        radius, alpha = _radius_and_shrink(agent)
        c = agent.geometry.center
        assert split["clamped"] == float(bc.radius_clamped(agent))
        sums = {"played": 0.0, "perturbation": 0.0, "shrink": 0.0, "unshrunk": 0.0}
        done, info = False, {}
        while not done:
            y, z = bc.SPLIT_POINTS[spec.agent](agent)
            x = agent.act()
            obs, _, done, _, info = env.env.step(x)
            agent.update(x, obs)
            assert np.linalg.norm(x - y) == pytest.approx(radius, rel=1e-9)
            assert y == pytest.approx((1 - alpha) * z + alpha * c, abs=1e-12)
            assert np.allclose(domain.project(z), z, atol=1e-9)
            theta = info["round"].theta
            fx, fy, fz = (float(loss.value(theta, p)) for p in (x, y, z))
            sums["played"] += fx
            sums["perturbation"] += fx - fy
            sums["shrink"] += fy - fz
            sums["unshrunk"] += fz
        comparator = sums["played"] - split["regret"]
        assert split["perturbation"] == pytest.approx(sums["perturbation"], rel=1e-9, abs=1e-9)
        assert split["shrink"] == pytest.approx(sums["shrink"], rel=1e-9, abs=1e-9)
        assert split["remainder"] == pytest.approx(sums["unshrunk"] - comparator,
                                                   rel=1e-9, abs=1e-9)
        assert split["perturbation"] != 0.0 and split["shrink"] != 0.0


# --- hand-made splits: the regime of each step


EXPONENT = 0.75


def _case(env, s, t):
    """``(regret, perturbation, shrink, remainder, clamped)`` of hand-made game ``s`` at
    ``t`` on env ``env`` (the remainder's per-seed slope is exact: every seed scales)."""
    c = 1 + 0.01 * (s % 3)
    slope = {"D": 0.5, "E": 0.5 if s >= 5000 else 0.75}.get(env, 0.75)
    rest = c * t ** slope
    schedule = (2.0 if env == "C" and t == 1000 else 0.1) * rest
    perturbation, shrink = 1.5 * schedule, -0.5 * schedule  # shrink's cost negative
    clamped = env == "B" and t == 4000
    return perturbation + shrink + rest, perturbation, shrink, rest, clamped


def _hand_made():
    """Frame and splits: env ``A`` in the theorem's regime, ``B`` clamped at 4,000 only,
    ``C`` the schedule twice the remainder at 1,000 only, ``D`` the remainder's slope
    0.5, ``E`` 0.75 on the discovery seeds and 0.5 on the replication seeds, ``F`` as
    ``A`` with its 4,000 games stored without a shrink part (an old split)."""
    rows, splits = [], {}
    for env in "ABCDEF":
        for s in DISCOVERY + REPLICATION:
            for t in (1000, 4000):
                regret, perturbation, shrink, rest, clamped = _case(
                    "A" if env == "F" else env, s, t)
                gid = f"{env}-{t}-{s}"
                rows.append(("x", env, "fkm", t, np.nan, s, regret, gid))
                splits[gid] = {"regret": regret, "perturbation": perturbation,
                               "shrink": shrink, "remainder": rest, "clamped": float(clamped)}
                if env == "F" and t == 4000:
                    splits[gid] = {"regret": regret, "perturbation": perturbation,
                                   "remainder": regret - perturbation}
    frame = pd.DataFrame(rows, columns=["tags.experiment", "env_id", "agent_label", "horizon",
                                        "epsilon", "seed_index", "regret", "game_id"])
    spec = [("x", env, "fkm", None, EXPONENT, "FKM05") for env in "ABCDEF"]
    return frame, splits, spec


def test_each_step_of_the_split_gets_its_regime_on_both_seed_sets(bc):
    frame, splits, spec = _hand_made()
    got = {(r[1], r[2]): r for r in bc.split_rows(frame, splits, spec)}
    # F's 4,000 games hold no shrink part: that horizon is not listed
    assert set(got) == {(e, t) for e in "ABCDE" for t in ("1,000", "4,000")} | {("F", "1,000")}
    regimes = {e: got[e, "4,000"][-1] for e in "ABCDE"}
    assert regimes == {"A": bc.THEOREM, "B": bc.CLAMPED, "C": bc.SCHEDULE, "D": bc.ANOTHER,
                       "E": "not replicated"}
    assert all(got[e, "1,000"][-1] == "" for e in "ABCDEF")  # no previous T
    a = got["A", "4,000"]
    assert a[3] == "8 + 8" and a[4] == "no" and got["B", "4,000"][4] == "yes"
    # parts of the regret 1.1 rest: perturbation 0.15 rest (14%), shrink -0.05 rest (-5%)
    assert a[6].endswith("(14% [14, 14]; replication 14% [14, 14])")
    assert a[7].endswith("(-5% [-5, -5]; replication -5% [-5, -5])")
    assert a[10].startswith("0.75 [") and "; replication 0.75 [" in a[10]
    e = got["E", "4,000"]
    assert e[10].startswith("0.75 [") and "; replication 0.50 [" in e[10]
    # the regret's slope: C's regret falls from 3 rest to 1.1 rest
    assert float(got["C", "4,000"][9].split()[0]) < 0.1
    assert float(got["D", "4,000"][9].split()[0]) == pytest.approx(0.5, abs=0.005)


def test_the_slope_table_calls_a_slope_the_theorems_only_where_the_split_says_so(bc):
    frame, splits, spec = _hand_made()
    cells = bc.theorem_cells(frame, splits, spec)
    assert cells[("fkm", "A")] == f"{bc.SPLIT_DECIDES}: 1,000 → 4,000"
    for env in "BCDE":
        assert cells[("fkm", env)] == f"{bc.SPLIT_DECIDES}: none"
    assert ("fkm", "F") not in cells  # not split at every T
    rows = bc.slope_rows(frame, spec, clamped_at=lambda *a: False, cells=cells)
    last = {r[1]: r[-1] for r in rows}
    assert last["A"] == cells[("fkm", "A")]
    assert last["F"] == "not claimed: the schedule's part is not split off"
    # no split stored: nothing is claimed
    bare = bc.slope_rows(frame, spec, clamped_at=lambda *a: False,
                         cells=bc.theorem_cells(frame, {}, spec))
    assert {r[-1] for r in bare} == {"not claimed: the schedule's part is not split off"}
    assert "not computed" in bc.split_block(frame, {}, spec)
    assert "| regime |" in bc.split_block(frame, splits, spec)


def test_a_split_stored_without_its_shrink_is_dropped_to_be_computed_again(bc, tmp_path):
    old = {"g1": {"regret": 3.0, "perturbation": 1.0, "remainder": 2.0},
           "g2": {"regret": 3.0, "perturbation": 1.0, "shrink": 0.5, "remainder": 1.5,
                  "clamped": 0.0}}
    (tmp_path / bc.SPLIT_FILE).write_text(json.dumps(old))
    assert bc.drop_splits_without_shrink(tmp_path) == 1
    assert bc.load_splits(tmp_path) == {"g2": old["g2"]}
    assert bc.drop_splits_without_shrink(tmp_path) == 0
