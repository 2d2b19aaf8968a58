"""The studies' sweep files and replays: every study is a sweep file and an analysis
module, each plays the games its analysis pairs (the same seeds for every learner, each
seed one loss sequence), and each schedule split replays its stored games exactly.

Kept apart from ``tests/test_studies.py`` (the analyses' verdicts on hand-made results),
which the CPU-portability check reruns at a lower SIMD level: nothing here decides a
verdict on a float.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pandas as pd
import pytest

from dp_online_envs.envs.registry import ENV_IDS
from dp_online_envs.lab.experiments.sweep import load_sweep

ROOT = pathlib.Path(__file__).resolve().parents[1]
STUDIES = ROOT / "benchmarks" / "studies"
sys.path.insert(0, str(STUDIES))

import paired_stats as ps  # noqa: E402  (the studies' shared statistics)

#: A study's analysis module, loaded afresh.
analysis = ps.study_module
MAB = "DPBandit-MAB-v0"
#: The studies whose learners all play the same games (paired seeds).
PAIRED_STUDIES = ("newer-learners", "private-experts", "private-stochastic",
                  "full-info-rates", "bandit-convex", "privacy-limit", "full-info-pftal",
                  "bandit-submodular")


def test_every_study_is_a_sweep_file_and_an_analysis_module_named_in_make_results():
    spec = importlib.util.spec_from_file_location("make_results",
                                                  ROOT / "benchmarks" / "make_results.py")
    make_results = importlib.util.module_from_spec(spec)
    sys.modules["make_results"] = make_results  # dataclasses look their module up
    spec.loader.exec_module(make_results)
    studies = sorted(p.name for p in STUDIES.iterdir() if (p / "sweep.yaml").exists()
                     and (p / "analysis.py").exists())
    blocks = [s for s in make_results.sections() if s.study]
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


def test_the_separation_study_plays_each_ids_family_as_the_leaderboard_defines_it():
    from dp_online_envs.lab.leaderboard.score import family

    sweep = load_sweep(STUDIES / "separation" / "sweep.yaml")
    for env_id in ENV_IDS:
        agents = {g.agent for g in sweep.games if g.env_id == env_id}
        fam = family(env_id)
        assert {fam.nonprivate[0], fam.private} <= agents, (env_id, agents)


@pytest.mark.parametrize("name", PAIRED_STUDIES)
def test_a_paired_study_plays_every_learner_on_the_same_games(name):
    """Within one env setting and horizon, every learner and epsilon plays the same seed
    indices, and one seed index is one loss sequence (one env seed)."""
    sweep = load_sweep(STUDIES / name / "sweep.yaml")
    cells: dict = {}
    for g in sweep.games:
        cell = cells.setdefault((g.env_id, repr(sorted(g.env_kwargs.items())), g.horizon), {})
        cell.setdefault((g.label, g.epsilon), set()).add(g.seed_index)
    for key, by_learner in cells.items():
        assert len({frozenset(s) for s in by_learner.values()}) == 1, key
        games = [g for g in sweep.games if (g.env_id, repr(sorted(g.env_kwargs.items())),
                                            g.horizon) == key]
        for index in {g.seed_index for g in games}:
            assert len({g.env_seed for g in games if g.seed_index == index}) == 1, key


def test_newer_learners_has_enough_seeds_for_a_95_interval_under_each_adversary():
    sweep = load_sweep(STUDIES / "newer-learners" / "sweep.yaml")
    seeds = {}
    for g in sweep.games:
        if g.horizon == 32000:
            seeds.setdefault(g.env_kwargs.get("adversary", "stochastic"), set()).add(
                g.seed_index)
    assert len(seeds["stochastic"]) >= 8 and len(seeds["lower-bound"]) >= 16


def test_the_exp2_split_replays_the_game_and_its_exploration_is_the_played_mixtures():
    """exp2 and private-exp2 replayed on a short MAB game: the record's realized regret
    bit for bit, the parts add up to the expected regret, and the exploration part is a
    brute-force recomputation from the probabilities each round played (``q_t`` taken
    back out of ``p_t = (1 - gamma) q_t + gamma / K``, the arms' losses one by one from
    the env's loss); a game off K arms is refused."""
    from dp_online_envs.envs.registry import build_env
    from dp_online_envs.lab.experiments.game import play_game
    from dp_online_envs.lab.experiments.sweep import parse_sweep

    fir = analysis("full-info-rates")
    sweep = parse_sweep({"envs": [MAB], "horizons": [200], "seeds": 1, "epsilons": [10],
                         "agents": ["exp2", "private-exp2"]})
    for spec in sweep.games:
        split = fir.exploration_split(spec)
        assert split["regret"] == play_game(spec)["regret"]
        env = build_env(spec.env_id, horizon=spec.horizon)
        agent = spec.agent_class()(env.get_wrapper_attr("problem"), epsilon=spec.epsilon,
                                   delta=spec.delta or 0.0, seed=spec.agent_seed)
        agent.reset(spec.agent_seed)
        env.reset(seed=spec.env_seed)
        k, gamma = env.get_wrapper_attr("problem").dim, agent.gamma
        played = explored = 0.0
        done = False
        while not done:
            p = (agent.base if spec.agent == "private-exp2" else agent).probabilities()
            action = agent.act()
            obs, _, done, _, info = env.env.step(action)
            agent.update(action, obs)
            theta = info["round"].theta
            losses = [env.unwrapped.loss.value(theta, np.eye(k)[i]) for i in range(k)]
            q = (p - gamma / k) / (1.0 - gamma)
            played += sum(pi * li for pi, li in zip(p, losses))
            explored += sum(pi * li for pi, li in zip(p, losses)) - sum(
                qi * li for qi, li in zip(q, losses))
        comparator = info["regret"].learner_loss - info["regret"].regret
        assert 0.0 < gamma < 1.0 and split["gamma"] == gamma
        assert split["exploration"] == pytest.approx(explored, rel=1e-9, abs=1e-9)
        assert split["exploration"] > 0.0
        assert split["expected"] == pytest.approx(played - comparator, rel=1e-9, abs=1e-9)
        assert split["expected"] == pytest.approx(split["exploration"] + split["remainder"],
                                                  rel=1e-12, abs=1e-9)
    off_arms = parse_sweep({"envs": ["DPBandit-Matroid-v2"], "horizons": [5], "seeds": 1,
                            "agents": ["exp2"]}).games[0]
    with pytest.raises(ValueError, match="expected a game on K arms"):
        fir.exploration_split(off_arms)


def test_the_exp2_split_replays_only_the_exploring_learners_of_the_bandit_rates():
    """``--split`` replays exp2 and private-exp2 on the MAB id, not trivial play nor the
    experts learners (whose play has no exploration to split)."""
    fir = analysis("full-info-rates")
    asked = {}
    fir.STUDY.store_splits = lambda results, wanted, split, **kw: asked.update(
        wanted=wanted, split=split)
    fir.store_splits("nowhere")
    games = load_sweep(STUDIES / "full-info-rates" / "sweep.yaml").games
    kept = {(g.agent, g.env_id) for g in games if asked["wanted"](g)}
    assert kept == {("exp2", MAB), ("private-exp2", MAB)}
    assert asked["split"] is fir.exploration_split


def test_the_bandit_submodular_study_plays_the_ids_defaults_with_8_seeds_below_100000():
    sweep = load_sweep(STUDIES / "bandit-submodular" / "sweep.yaml")
    assert {g.env_id for g in sweep.games} == {"DPBandit-Submodular-v2"}
    assert all(not g.env_kwargs for g in sweep.games)
    seeds = {}
    for g in sweep.games:
        seeds.setdefault(g.horizon, set()).add(g.seed_index)
    assert sorted(seeds) == [1000, 3162, 10000, 31623, 100000]
    discovery = {t: {s for s in seeds[t] if s < 5000} for t in seeds}
    assert all(len(discovery[t]) == 8 for t in sorted(seeds)[:-1])
    assert discovery[100000] <= discovery[1000] and len(discovery[100000]) >= 4  # paired
    assert {(g.agent, g.epsilon) for g in sweep.games} == {
        ("center", None), ("hazan-kale-submodular-bandit", None),
        ("bandit-submod-pftal", 1.0), ("bandit-submod-pftal", 10.0),
        ("bandit-submod-pftal", 100.0)}


def test_the_real_data_study_pairs_its_games_and_plays_each_ids_family():
    """Within one env setting and horizon a learner plays a subset of the seed indices
    of the largest set there (the deterministic learners on the portfolio's one window
    play fewer), and one seed index is one loss sequence."""
    from dp_online_envs.lab.leaderboard.score import family

    rd = analysis("real-data")
    sweep = load_sweep(STUDIES / "real-data" / "sweep.yaml")
    cells: dict = {}
    for g in sweep.games:
        cell = cells.setdefault((g.env_id, repr(sorted(g.env_kwargs.items())), g.horizon), {})
        cell.setdefault((g.label, g.epsilon, g.delta), set()).add(g.seed_index)
    for key, by_learner in cells.items():
        largest = max(by_learner.values(), key=len)
        assert all(s <= largest for s in by_learner.values()), key
        games = [g for g in sweep.games if (g.env_id, repr(sorted(g.env_kwargs.items())),
                                            g.horizon) == key]
        for index in {g.seed_index for g in games}:
            assert len({g.env_seed for g in games if g.seed_index == index}) == 1, key
    for env_id, agents in rd.SEPARATION.items():
        fam = family(env_id)
        assert agents == (rd.TRIVIAL, fam.nonprivate[0], fam.private)
        played = {(g.agent, g.horizon) for g in sweep.games if g.env_id == env_id}
        t = rd.horizon_of(env_id)
        assert {(a, t) for a in agents} | {(rd.TRIVIAL, t // 4)} <= played


def test_the_real_data_sweeps_step_is_the_learners_noise_balanced_step():
    rd = analysis("real-data")
    steps = rd.sweep_steps()
    assert sorted(steps) == [1.0, 10.0]
    rd.check_steps(steps)  # raises once the learner's noise (so its balanced step) moves


def test_the_real_data_sweep_plays_the_pairs_the_screen_finds_at_their_ranges():
    """The screen is recomputed from the data at render time; the sweep's candidate
    pairs must be the ones it finds (else the table reads "not played")."""
    import importlib.metadata

    try:
        importlib.metadata.distribution("skfolio")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("the 'realdata' extra (skfolio, which ships the prices) is not installed")
    rd = analysis("real-data")
    screen = {(tuple(pair), rng) for _, pair, rng in rd.pair_screen()}
    sweep = load_sweep(STUDIES / "real-data" / "sweep.yaml")
    played = {(tuple(p.env_kwargs["tickers"]), (p.env_kwargs["loss_kwargs"]["r_min"],
                                                p.env_kwargs["loss_kwargs"]["r_max"]))
              for p in sweep.parts if p.tags["experiment"].startswith("screen")}
    assert played == screen and len(screen) == 4


def test_the_exploration_split_replays_the_game_and_splits_its_expected_regret():
    """A replayed game has the record's realized regret, bit for bit; its remainder is
    the Lovász points' regret (checked against the env's own Lovász extension at each
    played point, an independent formula) and its exploration part is what is left of
    the expected regret."""
    from dp_online_envs.envs.registry import build_env
    from dp_online_envs.lab.experiments.game import play_game
    from dp_online_envs.lab.experiments.sweep import parse_sweep

    bs = analysis("bandit-submodular")
    sweep = parse_sweep({"envs": ["DPBandit-Submodular-v2"], "horizons": [60], "seeds": 1,
                         "epsilons": [10], "agents": [
                             {"name": "bandit-submod-pftal", "kwargs": {"gamma": 0.25}},
                             "hazan-kale-submodular-bandit"]})
    for spec in sweep.games:
        split = bs.exploration_split(spec)
        assert split["regret"] == play_game(spec)["regret"]
        assert split["expected"] == pytest.approx(split["exploration"] + split["remainder"],
                                                  abs=1e-9)
        env = build_env(spec.env_id, horizon=spec.horizon)
        agent = spec.agent_class()(env.get_wrapper_attr("problem"), epsilon=spec.epsilon,
                                   delta=spec.delta or 0.0, seed=spec.agent_seed,
                                   **spec.agent_kwargs)
        agent.reset(spec.agent_seed)
        env.reset(seed=spec.env_seed)
        lovasz, done = 0.0, False
        while not done:
            x = agent.point_played
            action = agent.act()
            obs, _, done, _, info = env.env.step(action)
            agent.update(action, obs)
            lovasz += env.unwrapped.loss.value(info["round"].theta, x)
        summary = info["regret"]
        assert split["remainder"] == pytest.approx(
            lovasz - (summary.learner_loss - summary.regret), rel=1e-9, abs=1e-9)
        assert split["gamma"] == agent.gamma
    assert bs.exploration_split(sweep.games[0])["gamma"] == 0.25


def test_a_schedule_split_is_checked_against_its_record_and_resumes(tmp_path):
    """``Study.store_splits``: only the games asked for, each replay's regret checked
    against its record (a replay of another game is refused), a rerun computes only what
    the split file lacks."""
    sys.path.insert(0, str(STUDIES))
    from paired_stats import Study

    folder = tmp_path / "study"
    folder.mkdir()
    (folder / "sweep.yaml").write_text(
        "name: t\nresults: results/t\nenvs: [DPBandit-MAB-v0]\nagents: [uniform]\n"
        "horizons: [5]\nseeds: 3\n")
    study = Study(folder / "analysis.py")
    games = load_sweep(study.sweep).games
    frame = pd.DataFrame({"game_id": [g.game_id for g in games], "regret": [1.0, 2.0, 3.0]})
    study.load = lambda results: frame
    replayed = dict(zip(frame.game_id, frame.regret))
    calls = []

    def split(spec):
        calls.append(spec.seed_index)
        return {"regret": replayed[spec.game_id], "part": 0.5}

    assert study.store_splits(tmp_path, lambda g: g.seed_index != 2, split) == 2
    assert sorted(study.load_splits(tmp_path)) == sorted(frame.game_id[:2])
    assert study.store_splits(tmp_path, lambda g: True, split) == 1 and calls == [0, 1, 2]
    (tmp_path / Study.SPLIT_FILE).unlink()
    replayed[games[1].game_id] = 9.0
    with pytest.raises(RuntimeError, match=r"gives regret 9.0, its record 2.0"):
        study.store_splits(tmp_path, lambda g: True, split)
