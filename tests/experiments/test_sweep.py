"""Sweeps as data: expansion into games, seeding, and validation errors."""

from __future__ import annotations

import pytest

from dp_online_envs import ENV_IDS
from dp_online_envs.lab.experiments import ExperimentError, load_sweep, parse_sweep
from dp_online_envs.lab.experiments.game import GameSpec

from .conftest import needs_agents


def test_product_of_envs_agents_epsilons_horizons_seeds(small_sweep):
    small_sweep["horizons"] = [100, 300]
    sweep = parse_sweep(small_sweep)
    # hedge: 2 horizons x 3 seeds; private-ftrl: 2 counters x 2 eps x 2 horizons x 3 seeds
    assert len(sweep) == 6 + 24
    hedge = [g for g in sweep.games if g.agent == "hedge"]
    assert all(g.epsilon is None and g.delta is None for g in hedge)
    labels = {g.label for g in sweep.games}
    assert labels == {"hedge", "private-ftrl(counter=tree)", "private-ftrl(counter=agarwal-singh)"}
    assert all(g.tags == {"suite": "tests"} and g.sweep == "small" for g in sweep.games)
    assert len({g.game_id for g in sweep.games}) == len(sweep)


def test_blocks_override_and_tag_their_games():
    needs_agents("exp3")
    sweep = parse_sweep({
        "name": "blocks", "horizons": [50], "seeds": [0, 2], "epsilons": [1],
        "experiments": [
            {"name": "bandit", "envs": ["DPBandit-MAB-v0"], "agents": ["exp3"]},
            {"name": "full", "envs": [{"id": "DPFullInfo-Experts-v0", "kwargs": {"n_arms": 4}}],
             "agents": ["private-ftrl"], "epsilons": [0.5, 2]},
        ],
    })
    assert sorted((g.env_id, g.agent, g.epsilon, g.seed_index) for g in sweep.games) == [
        ("DPBandit-MAB-v0", "exp3", None, 0), ("DPBandit-MAB-v0", "exp3", None, 2),
        ("DPFullInfo-Experts-v0", "private-ftrl", 0.5, 0),
        ("DPFullInfo-Experts-v0", "private-ftrl", 0.5, 2),
        ("DPFullInfo-Experts-v0", "private-ftrl", 2.0, 0),
        ("DPFullInfo-Experts-v0", "private-ftrl", 2.0, 2),
    ]
    assert {g.tags["experiment"] for g in sweep.games} == {"bandit", "full"}
    assert all(g.env_kwargs == {"n_arms": 4} for g in sweep.games if g.agent == "private-ftrl")


def test_seeds_come_from_the_settings():
    a = GameSpec("DPFullInfo-Experts-v0", "private-ftrl", 1.0, 0.0, 300, 0)
    same = GameSpec("DPFullInfo-Experts-v0", "private-ftrl", 1, 0, 300, 0, tags={"x": 1})
    assert (a.game_id, a.agent_seed, a.env_seed) == (same.game_id, same.agent_seed, same.env_seed)
    other_eps = GameSpec("DPFullInfo-Experts-v0", "private-ftrl", 2.0, 0.0, 300, 0)
    other_seed = GameSpec("DPFullInfo-Experts-v0", "private-ftrl", 1.0, 0.0, 300, 1)
    hedge = GameSpec("DPFullInfo-Experts-v0", "hedge", None, None, 300, 0)
    assert len({a.game_id, other_eps.game_id, other_seed.game_id, hedge.game_id}) == 4
    assert len({a.agent_seed, other_eps.agent_seed, other_seed.agent_seed}) == 3
    # common random numbers: same env settings and seed index -> same loss sequence
    assert a.env_seed == other_eps.env_seed == hedge.env_seed != other_seed.env_seed
    # the hash is pinned: changing it silently would orphan every results directory
    # (seed scheme dp-online/seed-v2: the env's version and resolved options are hashed)
    assert a.game_id == "1d5e98c08970a4fdaefe2626"
    # the game is what is played: writing a default out is the same game
    written = GameSpec("DPFullInfo-Experts-v0", "private-ftrl", 1.0, 0.0, 300, 0,
                       env_kwargs={"n_arms": 10, "adversary": "stochastic"})
    assert (written.game_id, written.env_seed) == (a.game_id, a.env_seed)
    assert GameSpec("DPFullInfo-Experts-v0", "private-ftrl", 1.0, 0.0, 300, 0,
                    env_kwargs={"n_arms": 9}).game_id != a.game_id


def test_yaml_and_toml_files_describe_the_same_sweep(tmp_path):
    (tmp_path / "s.yaml").write_text(
        "name: s\nenvs: [DPFullInfo-Experts-v0]\nagents: [hedge, private-ftrl]\n"
        "epsilons: [1, 2]\ndelta: 1e-5\nhorizons: [100]\nseeds: 2\ntags: {a: b}\n")
    (tmp_path / "s.toml").write_text(
        'name = "s"\nenvs = ["DPFullInfo-Experts-v0"]\nagents = ["hedge", "private-ftrl"]\n'
        "epsilons = [1, 2]\ndelta = 1e-5\nhorizons = [100]\nseeds = 2\n[tags]\na = \"b\"\n")
    from_yaml, from_toml = load_sweep(tmp_path / "s.yaml"), load_sweep(tmp_path / "s.toml")
    assert [g.game_id for g in from_yaml.games] == [g.game_id for g in from_toml.games]
    assert len(from_yaml) == 2 + 4
    assert {g.delta for g in from_yaml.games if g.agent == "private-ftrl"} == {1e-5}


@pytest.mark.parametrize("change, bad, valid", [
    ({"envs": ["DPBandit-MAB-v9"]}, "'DPBandit-MAB-v9'", ENV_IDS[0]),
    ({"agents": ["hedgehog"]}, "'hedgehog'", "private-ftrl"),
    ({"epsilon": [1]}, "['epsilon']", "epsilons"),
    ({"epsilons": [1, 0]}, "epsilon=0", "> 0"),
    ({"epsilons": [-0.5]}, "epsilon=-0.5", "> 0"),
    ({"delta": 1.5}, "delta=1.5", "[0, 1)"),
    ({"horizons": [0]}, "horizon=0", ">= 1"),
    ({"seeds": 0}, "seeds=0", ">= 1"),
    ({"envs": [{"id": "DPFullInfo-Experts-v0", "kwargs": {"n_arm": 3}}]}, "'n_arm'", "n_arms"),
    ({"envs": [{"id": "DPFullInfo-Experts-v0", "kwargs": {"horizon": 3}}]}, "'horizon'",
     "horizons"),
    ({"envs": ["DPBandit-MAB-v0"]}, "'hedge' needs full-information feedback", "upgraded"),
    ({"envs": ["DPFullInfo-Sphere-v1"]}, "'hedge' cannot play DPFullInfo-Sphere-v1", "simplex"),
    ({"agents": [{"name": "private-ftrl", "kwargs": {"counter": "abacus"}}]}, "'abacus'",
     "honaker"),
])
def test_invalid_sweeps_name_the_bad_value_and_the_choices(small_sweep, change, bad, valid):
    small_sweep.update(change)
    with pytest.raises(ExperimentError) as err:
        parse_sweep(small_sweep)
    assert bad in str(err.value) and valid in str(err.value)


def test_private_agent_without_epsilons_is_refused(small_sweep):
    del small_sweep["epsilons"]
    with pytest.raises(ExperimentError, match="private-ftrl.*epsilons"):
        parse_sweep(small_sweep)


def test_skip_incompatible_drops_pairs_the_env_cannot_serve():
    needs_agents("exp2")
    sweep = parse_sweep({"envs": ["DPBandit-MAB-v0", "DPFullInfo-Experts-v0"],
                         "agents": ["hedge", "exp2"], "horizons": [50],
                         "skip_incompatible": True})
    assert sorted((g.env_id, g.agent) for g in sweep.games) == [
        ("DPBandit-MAB-v0", "exp2"), ("DPFullInfo-Experts-v0", "exp2"),
        ("DPFullInfo-Experts-v0", "hedge")]
    assert len(sweep.skipped) == 1 and "DPBandit-MAB-v0 x hedge" in sweep.skipped[0]


@pytest.mark.parametrize("name, text, expect", [
    ("bad.yaml", "envs: [DPFullInfo-Experts-v0\nagents: hedge\n", "malformed"),
    ("bad.toml", "envs = [\n", "malformed"),
    ("list.yaml", "- DPFullInfo-Experts-v0\n", "must be a mapping"),
    ("sweep.ini", "[x]\n", "unknown format '.ini'"),
])
def test_malformed_files_are_reported(tmp_path, name, text, expect):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ExperimentError, match=expect):
        load_sweep(path)


def test_missing_file(tmp_path):
    with pytest.raises(ExperimentError, match="does not exist"):
        load_sweep(tmp_path / "nope.yaml")


@pytest.mark.parametrize("blocks, expected", [
    ([{"seeds": 3}], 3),
    ([{"seeds": 3}, {"seeds": [1, 5, 7]}, {"seeds": 5, "horizons": [50, 60]}], 7 + 5),
    ([{"seeds": [4, 2, 4]}, {"seeds": [2, 9]}, {"seeds": 2, "horizons": [60]}], 3 + 2),
    ([{"seeds": 2, "agents": ["hedge", {"name": "hedge", "kwargs": {"eta": 0.5}}]},
      {"seeds": 4}], 4 + 2),
])
def test_the_count_of_games_equals_the_games_listed(blocks, expected):
    sweep = parse_sweep({"envs": ["DPFullInfo-Experts-v0"], "agents": ["hedge"],
                         "horizons": [50], "experiments": blocks})
    assert len(sweep) == expected
    assert len(sweep.games) == len({g.game_id for g in sweep.games}) == expected


def test_includes_tells_the_sweeps_games_from_others(small_sweep):
    sweep = parse_sweep(small_sweep)
    for game in sweep.games:
        assert sweep.includes({**game.identity(), "agent": game.agent})
    outside = {**sweep.games[-1].identity(), "seed_index": 3}
    assert not sweep.includes(outside)
    assert not sweep.includes({**sweep.games[0].identity(), "epsilon": 2.0})
    assert not sweep.includes({"game_id": "x"})


def test_a_hundred_million_seeds_are_counted_not_listed(small_sweep):
    import tracemalloc

    parse_sweep(dict(small_sweep, seeds=1))  # imports and registries, before measuring
    tracemalloc.start()
    try:
        sweep = parse_sweep(dict(small_sweep, seeds=100_000_000))
        n = len(sweep)
        last = {"env_id": "DPFullInfo-Experts-v0", "env_kwargs": {}, "agent": "hedge",
                "agent_kwargs": {}, "epsilon": None, "delta": None, "horizon": 300,
                "seed_index": 99_999_999}
        inside, outside = sweep.includes(last), sweep.includes({**last, "seed_index": 10**8})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert n == 5 * 100_000_000  # hedge, and private-ftrl x 2 counters x 2 epsilons
    assert inside and not outside
    assert peak < 4 * 2**20, f"{peak / 2**20:.1f} MiB"


def test_dry_run_counts_a_hundred_million_seeds(small_sweep, tmp_path):
    import json
    import subprocess
    import sys

    path = tmp_path / "huge.json"
    path.write_text(json.dumps(dict(small_sweep, seeds=100_000_000)))
    out = subprocess.run([sys.executable, "-m", "dp_online_envs.lab.cli", "sweep",
                          str(path), "--dry-run", "--results", str(tmp_path / "res")],
                         check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"500000000 games (0 done) -> {tmp_path / 'res'}\n"
    assert not (tmp_path / "res").exists()  # a dry run creates nothing


#: Adversary options that build but that the game refuses at its first reset (a mean of
#: another length, outside the parameter box, not finite) or at build (an unknown
#: option, a bad value): each is one line naming the value, at parse time.
BAD_ADVERSARY = [
    ({"mean": [0.1, 0.2]}, r"mean has shape \(2,\), expected \(10,\)"),
    ({"mean": [0.5] * 9 + [2.0]}, "mean is not an admissible parameter"),
    ({"mean": [0.5] * 9 + ["nan"]}, "must be finite"),
    ({"mean": "x"}, "could not convert string to float: 'x'"),
    ({"gap": -1}, r"gap=-1 rejected: expected a real number in \[0, 1\)"),
    ({"bogus": 1}, "unexpected keyword argument 'bogus'"),
]


def _bad_adversary_sweep(options):
    return {"name": "bad", "agents": ["exp3"], "horizons": [20], "seeds": 2,
            "envs": [{"id": "DPBandit-MAB-v0",
                      "kwargs": {"adversary": "stochastic", "adversary_kwargs": options}}]}


@pytest.mark.parametrize("options, match", BAD_ADVERSARY)
def test_bad_adversary_options_are_refused_when_the_sweep_is_read(options, match):
    needs_agents("exp3")
    with pytest.raises(ExperimentError, match=match) as err:
        parse_sweep(_bad_adversary_sweep(options))
    assert "\n" not in str(err.value) and "DPBandit-MAB-v0 with options" in str(err.value)


def test_dry_run_refuses_bad_adversary_options_in_one_line(tmp_path):
    """Not a traceback per game when the sweep runs: one line, exit 2, nothing made."""
    import json
    import subprocess
    import sys

    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_bad_adversary_sweep({"mean": [0.1, 0.2]})))
    out = subprocess.run([sys.executable, "-m", "dp_online_envs.lab.cli", "sweep",
                          str(path), "--dry-run", "--results", str(tmp_path / "res")],
                         check=False, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") <= 1 and "Traceback" not in out.stderr
    assert "mean has shape (2,), expected (10,)" in out.stderr
    assert not (tmp_path / "res").exists()
