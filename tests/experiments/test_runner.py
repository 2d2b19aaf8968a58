"""The runner: complete seeded games, tidy records, the same records on every backend."""

from __future__ import annotations

import json
import math

import gymnasium as gym
import numpy as np
import pytest

import agents
from dp_online_envs.lab.experiments import (
    ExperimentError,
    parse_sweep,
    run,
    run_games,
    stable_view,
)
from dp_online_envs.lab.experiments.store import OPTIONAL_KEYS, REQUIRED_KEYS
from dp_online_envs.wrappers import log_checkpoints

from .conftest import needs_agents

FIELDS = set(REQUIRED_KEYS) | set(OPTIONAL_KEYS)  # what play_game writes today


def test_run_returns_one_tidy_record_per_seed():
    records = run("DPFullInfo-Experts-v0", "private-ftrl", epsilon=2.0, horizon=400, seeds=3,
                  agent_kwargs={"counter": "tree"}, tags={"who": "test"}, backend="serial")
    assert [r["seed_index"] for r in records] == [0, 1, 2]
    for r in records:
        assert set(r) == FIELDS
        json.dumps(r, allow_nan=False)  # plain JSON
        assert r["rounds"] == r["horizon"] == 400
        assert r["checkpoints"] == log_checkpoints(400).tolist()
        assert len(r["regret_curve_lo"]) == len(r["checkpoints"]) == len(r["regret_curve_hi"])
        assert r["regret_curve_hi"][-1] == pytest.approx(r["regret_hi"])
        assert r["regret_lo"] <= r["regret"] <= r["regret_hi"] and r["exact"]
        assert r["learner_loss"] == pytest.approx(r["regret"] + r["comparator_lo"])
        assert (r["epsilon"], r["delta"], r["privacy"]) == (2.0, 0.0, "(2, 0)-DP")
        assert (r["privacy_epsilon"], r["privacy_delta"]) == (2.0, 0.0)
        assert "BinaryTreeCounter" in r["privacy_mechanism"]
        assert r["agent_label"] == "private-ftrl(counter=tree)"
        assert r["tags"] == {"who": "test"} and r["projected_actions"] == 0
        assert r["clipped_feedback"] == 0 and r["wall_time"] > 0
    assert len({r["agent_seed"] for r in records}) == 3


def test_games_replay_exactly():
    a = run("DPFullInfo-Experts-v0", "hedge", horizon=300, seeds=[4], backend="serial")
    b = run("DPFullInfo-Experts-v0", "hedge", horizon=300, seeds=[4], backend="serial")
    assert stable_view(a[0]) == stable_view(b[0])


def test_non_private_agent_gets_no_epsilon():
    (r,) = run("DPFullInfo-Experts-v0", "hedge", epsilon=1.0, horizon=100, backend="serial")
    assert (r["epsilon"], r["delta"], r["privacy"], r["private"]) == (
        None, None, "non-private", False)
    assert r["privacy_epsilon"] is None


def test_paired_games_face_the_same_losses():
    """Common random numbers: every agent and epsilon of a seed index sees one sequence."""
    hedge = run("DPFullInfo-Experts-v0", "hedge", horizon=200, seeds=2, backend="serial")
    ftrl = run("DPFullInfo-Experts-v0", "private-ftrl", epsilon=1, horizon=200, seeds=2,
               backend="serial")
    for h, f in zip(hedge, ftrl):
        assert h["env_seed"] == f["env_seed"]
        assert h["comparator_lo"] == f["comparator_lo"]  # same best fixed action's loss
    assert hedge[0]["comparator_lo"] != hedge[1]["comparator_lo"]


def test_bandit_agent_on_full_information_env_is_downgraded():
    needs_agents("exp2")
    (r,) = run("DPFullInfo-Experts-v0", "exp2", horizon=200, backend="serial")
    assert (r["env_feedback"], r["feedback"], r["agent_feedback"]) == ("full", "bandit", "bandit")


@pytest.mark.parametrize("env_id, agent, kwargs, match", [
    ("DPBandit-MAB-v0", "hedge", {}, "needs full-information feedback"),
    ("Nope-v0", "hedge", {}, "unknown env id 'Nope-v0'"),
    ("DPFullInfo-Experts-v0", "nope", {}, "unknown agent 'nope'"),
    ("DPFullInfo-Experts-v0", "private-ftrl", {}, "private"),
    ("DPFullInfo-Experts-v0", "private-ftrl", {"epsilon": 0.0}, "epsilon=0.0 rejected"),
])
def test_run_refuses_bad_settings(env_id, agent, kwargs, match):
    with pytest.raises(ExperimentError, match=match):
        run(env_id, agent, horizon=50, backend="serial", **kwargs)


class GreedyArm(agents.Agent):
    """A course-style bandit learner: the arm (or vertex) with the lowest mean so far."""

    name = "test-greedy"
    feedback = "bandit"

    def setup(self, explore: int = 1) -> None:
        self.k = self.problem.domain.dim
        self.explore = explore

    def reset(self, seed=None):
        super().reset(seed)
        self.sums, self.counts = np.zeros(self.k), np.zeros(self.k)

    def act(self):
        arm = (self.t % self.k if self.t < self.explore * self.k
               else int(np.argmin(self.sums / np.maximum(self.counts, 1))))
        space = self.problem.domain.action_space
        return arm if isinstance(space, gym.spaces.Discrete) else np.eye(self.k)[arm]

    def update(self, action, feedback):
        arm = int(action) if np.ndim(action) == 0 else int(np.argmax(action))
        self.counts[arm] += 1
        self.sums[arm] += float(self.clip_feedback(feedback)[0])
        self.t += 1


def test_an_unregistered_agent_class_runs():
    records = run("DPBandit-MAB-v0", GreedyArm, horizon=300, seeds=2, backend="serial",
                  agent_kwargs={"explore": 3})
    assert [r["agent"] for r in records] == ["test-greedy"] * 2
    assert records[0]["agent_label"] == "test-greedy(explore=3)"
    assert all(math.isfinite(r["regret"]) for r in records)
    assert "test-greedy" not in dict(agents.list_agents())


def test_local_processes_and_serial_give_identical_records(small_sweep):
    specs = parse_sweep(small_sweep).games
    serial = run_games(specs, backend="serial")
    local = run_games(specs, backend="local", workers=2)
    assert serial.ok and local.ok and serial.played == local.played == len(specs) == 15
    assert [stable_view(r) for r in serial.records] == [stable_view(r) for r in local.records]


def test_a_failing_game_is_reported_not_fatal():
    specs = parse_sweep({"envs": ["DPFullInfo-Experts-v0"], "agents": ["hedge"],
                         "horizons": [50], "seeds": 2}).games
    broken = [specs[0], type(specs[1])(**{**specs[1].__dict__, "agent_kwargs": {"eta": -1.0}})]
    report = run_games(broken, backend="serial")
    assert report.played == 1 and len(report.failures) == 1
    assert "eta" in report.failures[0][1]


def _pid_and_square(x: int) -> tuple[int, int]:
    import os

    if x < 0:
        raise ValueError(f"x={x}, expected x >= 0")
    return os.getpid(), x * x


def test_run_tasks_keeps_the_order_runs_in_workers_and_raises_the_tasks_error():
    import os

    from dp_online_envs.lab.experiments.backends import run_tasks

    out = run_tasks(_pid_and_square, range(6), workers=2)
    assert [v for _, v in out] == [x * x for x in range(6)]
    assert os.getpid() not in {pid for pid, _ in out}  # played by worker processes
    assert run_tasks(_pid_and_square, [3], workers=2) == [(os.getpid(), 9)]  # one task: here
    assert {pid for pid, _ in run_tasks(_pid_and_square, range(3), workers=1)} == {os.getpid()}
    with pytest.raises(ValueError, match="x=-1"):
        run_tasks(_pid_and_square, [1, -1, 2], workers=2)
