"""A record is served only for the game its id names, by every reader.

The game id is a hash of the game's settings (and, for secret-seeded games, of the
secret's digest, which records carry as ``seed_secret_sha256``). A record whose settings
or seeds were changed after it was written no longer hashes to its id: sweeps set it
aside and replay its game, reading commands skip it with a warning and leave it in
place, and a list of records with one is refused. Records written before the digest was
recorded cannot be checked and are served as they are (so no stored game is lost).
"""

from __future__ import annotations

import json
import warnings

import pytest

from dp_online_envs.lab.experiments import (
    DamagedResultWarning,
    ExperimentError,
    ResultsStore,
    load_records,
    parse_sweep,
    run_games,
)
from dp_online_envs.lab.experiments.game import IDENTITY_FIELDS, record_id_mismatch
from dp_online_envs.lab.experiments.store import check_record
from dp_online_envs.lab.experiments.table import export_results

SWEEP = {"name": "ids", "envs": ["DPFullInfo-Experts-v0"],
         "agents": ["hedge", "private-ftrl"], "epsilons": [1.0], "horizons": [20], "seeds": 1}
#: One changed setting per identity field (a value of the right type, so only the hash
#: can tell), and the two seeds.
CHANGES = {
    "seed_scheme": "dp-online/seed-v1", "env_id": "DPFullInfo-Experts-v1", "env_version": 9,
    "env_options": {"n_arms": 3}, "agent": "ftrl", "agent_kwargs": {"eta": 0.5},
    "epsilon": 2.0, "delta": 0.5, "horizon": 21, "seed_index": 4,
    "env_seed": 12345, "agent_seed": 12345,
}
assert set(IDENTITY_FIELDS) <= set(CHANGES)


@pytest.fixture(scope="module")
def records():
    return run_games(parse_sweep(json.loads(json.dumps(SWEEP))).games,
                     backend="serial").records


@pytest.fixture(scope="module")
def secret_records():
    return run_games(parse_sweep(json.loads(json.dumps(SWEEP))).games, backend="serial",
                     seed_secret="correct horse battery staple").records


def test_records_carry_the_secrets_digest_and_match_their_ids(records, secret_records):
    assert [r["seed_secret_sha256"] for r in records] == [None, None]
    digests = {r["seed_secret_sha256"] for r in secret_records}
    assert len(digests) == 1 and len(next(iter(digests))) == 16
    assert {r["game_id"] for r in records}.isdisjoint(r["game_id"] for r in secret_records)
    for r in records + secret_records:
        assert check_record(r, r["game_id"]) is None


@pytest.mark.parametrize("key", sorted(CHANGES))
def test_a_changed_setting_or_seed_no_longer_matches_the_id(records, secret_records, key):
    for r in (records[1], secret_records[1]):
        changed = {**r, key: CHANGES[key]}
        reason = check_record(changed, r["game_id"])
        if key in ("env_seed", "agent_seed") and r["seed_secret_sha256"] is not None:
            assert reason is None  # a secret's seeds cannot be recomputed without it
            continue
        assert reason is not None and "the record was changed after it was written" in reason
        assert (key if key.endswith("_seed") else "game_id") in reason


def test_a_digest_of_another_secret_or_type_is_refused(secret_records):
    r = secret_records[0]
    assert "is not the hash" in check_record({**r, "seed_secret_sha256": "0" * 16})
    assert "expected a hex digest or null" in check_record({**r, "seed_secret_sha256": 7})
    # naming no secret: the id is another game's
    assert "is not the hash" in check_record({**r, "seed_secret_sha256": None})


def test_records_written_before_the_digest_are_served_unchecked(records, secret_records):
    """Stored games (the leaderboard's, secret-seeded ones) stay usable."""
    for r in (records[0], secret_records[0]):
        legacy = {k: v for k, v in r.items() if k != "seed_secret_sha256"}
        assert record_id_mismatch(legacy) is None
        assert check_record({**legacy, "epsilon": 3.0}, r["game_id"]) is None


def _tampered_directory(tmp_path, records):
    store = ResultsStore(tmp_path / "results")
    store.prepare()
    for r in records:
        store.write(r)
    bad = {**records[1], "epsilon": 9.0}
    path = store.path(bad["game_id"])
    path.write_text(json.dumps(bad))
    return store, path


def test_every_reader_skips_a_changed_record_and_leaves_it(records, tmp_path):
    store, path = _tampered_directory(tmp_path, records)
    with pytest.warns(DamagedResultWarning, match="is not the hash of the record's settings"):
        served = load_records(store.root)
    assert [r["game_id"] for r in served] == [records[0]["game_id"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DamagedResultWarning)
        export_results(store.root, tmp_path / "t.csv")
    assert records[1]["game_id"] not in (tmp_path / "t.csv").read_text()
    assert path.exists() and not store.quarantine_dir.exists()  # reading moves nothing
    with pytest.raises(ExperimentError, match=r"records\[1\] is not a game record: game_id"):
        load_records([records[0], {**records[1], "epsilon": 9.0}])


def test_a_sweep_sets_a_changed_record_aside_and_replays_its_game(records, tmp_path):
    store, path = _tampered_directory(tmp_path, records)
    specs = parse_sweep(json.loads(json.dumps(SWEEP))).games
    with pytest.warns(DamagedResultWarning, match="moved to"):
        report = run_games(specs, results=store.root, backend="serial")
    assert report.played == 1
    assert json.loads(path.read_text())["epsilon"] == 1.0  # the game's own record again
    assert [p.name for p in store.quarantine_dir.iterdir()] == [path.name]
