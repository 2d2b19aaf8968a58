"""A game's identity is the game it plays: the env's version and resolved options.

The case this guards against: a results directory written while ``DPBandit-Matroid``
had its former defaults (uniform matroid n=8, rank 3, distance loss) and resumed after
they changed (n=3, rank 2, linear loss) under the same id used to serve the old record
for the new game, silently, because the game id hashed only the options the user wrote.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import warnings

import pytest

from dp_online_envs.envs import registry
from dp_online_envs.envs.history import VERSION_HISTORY, history_section
from dp_online_envs.lab.experiments import (
    DamagedResultWarning,
    ResultsStore,
    run,
    run_games,
    stable_view,
)
from dp_online_envs.lab.experiments.analysis import summary
from dp_online_envs.lab.experiments.game import GameSpec, settings_mismatch
from dp_online_envs.lab.experiments.sweep import make_games

ROOT = pathlib.Path(__file__).resolve().parents[2]

ID = "DPBandit-Matroid-v1"
#: The defaults ``DPBandit-Matroid`` had before (planted adversary already).
BEFORE = {"n": 8, "rank": 3, "loss": "distance"}


def _specs():
    return make_games(ID, "center", epsilon=None, delta=None, horizon=200, seeds=1)


def _center(results=None):
    return run(ID, "center", horizon=200, seeds=1, results=results, backend="serial")[0]


def test_a_record_of_the_former_defaults_is_not_served_for_the_new_game(tmp_path,
                                                                        monkeypatch):
    current = registry.ENV_CONFIGS[ID]
    before = dataclasses.replace(current, defaults={**current.defaults, **BEFORE})
    with monkeypatch.context() as m:  # the id as it was before its defaults changed
        m.setitem(registry.ENV_CONFIGS, ID, before)
        old = _center(tmp_path)
    assert old["env_options"]["n"] == 8 and old["env_options"]["loss"] == "distance"

    specs = _specs()
    report = run_games(specs, results=tmp_path, backend="serial")
    assert (report.played, report.reused) == (1, 0)  # not the old record
    new = report.records[0]
    assert stable_view(new) == stable_view(_center())  # the game as played today
    assert new["game_id"] != old["game_id"] and new["regret"] != old["regret"]
    assert (new["env_options"]["n"], new["env_options"]["rank"],
            new["env_options"]["loss"]) == (3, 2, "linear")
    # both records stay in the directory, and the analysis shows two games, not one
    records = ResultsStore(tmp_path).load()
    assert sorted(r["game_id"] for r in records) == sorted([old["game_id"], new["game_id"]])
    assert sorted(row["env"] for row in summary(records)) == [
        ID, f"{ID}(loss=distance, n=8, rank=3)"]


def test_the_store_refuses_a_record_whose_resolved_settings_differ(tmp_path):
    record = _center(tmp_path)
    path = ResultsStore(tmp_path).path(record["game_id"])
    forged = {**record, "env_options": {**record["env_options"], **BEFORE}, "regret": -1.0}
    # a record written before records carried the secret's digest: its id cannot be
    # recomputed, so its settings are compared with the game's
    del forged["seed_secret_sha256"]
    path.write_text(json.dumps(forged))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = run_games(_specs(), results=tmp_path,
                          backend="serial")
    damaged = [str(w.message) for w in caught if issubclass(w.category, DamagedResultWarning)]
    assert len(damaged) == 1 and str(path) in damaged[0]
    assert ("resolved settings differ from the game asked for: env_options['loss'] "
            "'distance' in the record, 'linear' in the game") in damaged[0]
    assert "env_options['n'] 8 in the record, 3 in the game" in damaged[0]
    assert (again.played, again.reused) == (1, 0)
    assert json.loads((tmp_path / "quarantine" / path.name).read_text()) == forged
    assert stable_view(again.records[0]) == stable_view(record)


@pytest.mark.parametrize("field,value", [("env_version", 0), ("seed_scheme", "dp-online/seed-v1"),
                                         ("horizon", 201), ("agent", "uniform")])
def test_every_identity_field_of_a_record_is_checked(field, value):
    spec = _specs()[0]
    record = {**spec.identity(), field: value}
    assert settings_mismatch({**spec.identity()}, spec) is None
    assert settings_mismatch(record, spec) == (
        f"resolved settings differ from the game asked for: {field} {value!r} in the "
        f"record, {spec.identity()[field]!r} in the game")


def test_the_identity_hashes_the_version_and_the_resolved_options():
    v1 = GameSpec(ID, "center", None, None, 200, 0)
    v0 = GameSpec("DPBandit-Matroid-v0", "center", None, None, 200, 0)
    v1_as_v0 = GameSpec(ID, "center", None, None, 200, 0, env_kwargs={
        **BEFORE, "adversary": "oblivious"})
    written = GameSpec(ID, "center", None, None, 200, 0,
                       env_kwargs={"n": 3, "rank": 2, "loss": "linear"})
    assert (v1.identity()["env_version"], v0.identity()["env_version"]) == (1, 0)
    assert v1_as_v0.identity()["env_options"] == v0.identity()["env_options"]
    # same options, other version: another game (the id is part of it too)
    assert len({v1.game_id, v0.game_id, v1_as_v0.game_id}) == 3
    assert written.game_id == v1.game_id and written.env_seed == v1.env_seed
    assert v1.identity()["env_options"]["loss_kwargs"] == {}


@pytest.mark.parametrize("former", registry.FORMER_IDS)
def test_a_former_version_builds_its_former_defaults(former):
    """A former version is the id's former game again: its row is today's with the
    former options (``-v0``: the first game, with an oblivious adversary)."""

    config = registry.ENV_CONFIGS[former]
    current = next(c for c in registry.CONFIGS if c.name == config.name)
    assert former not in registry.ENV_IDS and current.id in registry.ENV_IDS
    assert config.version < current.version
    changed = {k: v for k, v in config.defaults.items() if current.defaults.get(k) != v}
    assert (config.version > 0 or changed.get("adversary", "oblivious") == "oblivious"
            or config.name.endswith("Portfolio"))
    # the id's version history names the former value of every option that changed
    v0 = dict(VERSION_HISTORY[config.name])[config.version]
    for key, value in changed.items():
        text = f"{key}={value!r}"
        assert (text if len(text) < 60 else f"{key}=") in v0, (former, text)
    for key, value in config.loss_defaults.items():
        if current.loss_defaults.get(key) != value:
            assert f"{key!r}: {value!r}" in v0, (former, key)


def test_every_id_has_one_version_history_listing_its_versions():
    import dp_online_envs.envs.online_env as online_env

    names = {c.name for c in registry.ENV_CONFIGS.values()}
    assert set(VERSION_HISTORY) == names
    for config in registry.ENV_CONFIGS.values():
        versions = [v for v, _ in VERSION_HISTORY[config.name]]
        assert config.version in versions and versions == sorted(versions, reverse=True)
        assert versions[0] == max(c.version for c in registry.ENV_CONFIGS.values()
                                  if c.name == config.name), config.id
    # the docstring's Version History section is written from the data
    section = online_env.OnlineLearningEnv.__doc__.split("## Version History", 1)[1]
    assert history_section() in section


def test_every_env_page_shows_its_own_history_and_no_other():
    """The generated page of each id lists its game's versions, and no other game's name
    slips into its history (a multi-line docstring bullet once gave DPBandit-MAB's page
    DPBandit-Classes' header and Classes no entry)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate", ROOT / "docs" / "generate.py")
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    history = generate.version_history()
    for env_id in registry.ENV_IDS:
        name = registry.ENV_CONFIGS[env_id].name
        page = (ROOT / "docs" / "environments" / f"{generate.slug(env_id)}.md").read_text()
        shown = page.split("## Version history\n\n", 1)[1].split("\n\n", 1)[0]
        assert shown.splitlines() == [generate.plain(line) for line in history[name]], env_id
        assert not any(other in shown for other in VERSION_HISTORY if other != name
                       and not name.startswith(other)), env_id


def test_former_ids_make_the_former_game_through_gymnasium():
    import gymnasium as gym

    with pytest.warns(DeprecationWarning, match="DPBandit-Matroid-v0 is out of date"):
        env = gym.make("DPBandit-Matroid-v0")
    base = env.unwrapped
    assert repr(base.domain) == "UniformMatroid(n=8, k=3)"
    assert type(base.loss).__name__ == "DistanceLoss" and base.adversary.name == "oblivious"
    now = gym.make(ID).unwrapped
    assert repr(now.domain) == "UniformMatroid(n=3, k=2)" and now.adversary.name == "planted"
