"""``run(..., vectorize=True)`` and ``vectorize: true`` in sweeps: same records as the
scalar games, played together where a vector path exists, one by one elsewhere."""

from __future__ import annotations

import json

import pytest

from dp_online_envs.lab.experiments import runner
from dp_online_envs.lab.experiments import vector as vector_module
from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.game import GameSpec, stable_view
from dp_online_envs.lab.experiments.sweep import parse_sweep


def _stable(records):
    return [stable_view(r) for r in records]


@pytest.mark.parametrize(("env_id", "agent", "eps", "delta"), [
    ("DPBandit-MAB-v0", "private-exp2", 1.0, 0.0),
    ("DPFullInfo-Cube-v1", "private-ftpl", 1.0, 1e-6),
])
def test_vectorized_run_gives_the_scalar_records(env_id, agent, eps, delta, monkeypatch):
    scalar = runner.run(env_id, agent, epsilon=eps, delta=delta, horizon=60, seeds=3,
                        backend="serial")
    played = []
    original = vector_module.play_batch
    monkeypatch.setattr(runner, "play_batch",
                        lambda specs, resolver=None: played.append(len(specs)) or original(specs))
    vector = runner.run(env_id, agent, epsilon=eps, delta=delta, horizon=60, seeds=3,
                        backend="serial", vectorize=True)
    assert played == [3]  # the three seeds were one batch
    assert _stable(vector) == _stable(scalar)
    assert [r["vectorized"] for r in vector] == [True] * 3
    assert [r["vectorized"] for r in scalar] == [False] * 3


def test_settings_without_a_vector_path_are_played_one_by_one(monkeypatch):
    monkeypatch.setattr(runner, "play_batch", lambda specs, resolver=None: pytest.fail("played together"))
    scalar = runner.run("DPBandit-MAB-v0", "private-bandit", epsilon=1.0, horizon=30,
                        seeds=2, backend="serial")
    vector = runner.run("DPBandit-MAB-v0", "private-bandit", epsilon=1.0, horizon=30,
                        seeds=2, backend="serial", vectorize=True)
    assert _stable(vector) == _stable(scalar)
    assert not any(r["vectorized"] for r in vector)
    flow = GameSpec("DPBandit-Flow-v1", "ftrl", None, None, 10, 0)
    assert "no vector path" in vector_module.batch_refusal(flow)


def test_sweep_vectorize_key(tmp_path):
    data = {"name": "v", "envs": ["DPBandit-MAB-v0"], "agents": ["exp3"], "horizons": [40],
            "seeds": 3, "vectorize": True}
    sweep = parse_sweep(data)
    assert sweep.vectorize is True and parse_sweep({**data, "vectorize": False}).vectorize is False
    report = runner.run_sweep(sweep, results=tmp_path / "r", backend="serial", quiet=True)
    scalar = runner.run_sweep({**data, "vectorize": False}, results=tmp_path / "s",
                              backend="serial", quiet=True)
    assert report.played == 3
    def key(r):
        return r["game_id"]

    assert _stable(sorted(report.records, key=key)) == _stable(sorted(scalar.records, key=key))
    with pytest.raises(ExperimentError, match="vectorize must be true or false"):
        parse_sweep({**data, "vectorize": "yes"})


def test_cli_run_vectorize_flag(capsys):
    """``dp-online run --vectorize``: the same records (exp3's three games, together, and
    the reference agent's, one by one)."""
    from dp_online_envs.lab.cli import main

    assert main(["run", "DPBandit-MAB-v0", "exp3", "--horizon", "50", "--seeds", "3",
                 "--backend", "serial", "--json", "--vectorize"]) == 0
    vector = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert main(["run", "DPBandit-MAB-v0", "exp3", "--horizon", "50", "--seeds", "3",
                 "--backend", "serial", "--json"]) == 0
    scalar = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(vector) == 6 and _stable(vector) == _stable(scalar)
