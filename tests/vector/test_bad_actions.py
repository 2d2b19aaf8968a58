"""Actions and settings the vector games must refuse or correct exactly as the scalar
env does: points off the simplex (the sum-to-one half of the membership test), complex
actions, and horizons beyond what the regret ledger holds."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from dp_online_envs import InvalidActionError
from dp_online_envs.envs.vector_env import LinearVectorEnv
from dp_online_envs.problem import MAX_HORIZON

T, SEEDS = 3, [7, 8]


@pytest.mark.parametrize("point", [np.zeros(10), np.full(10, 0.05), np.full(10, 0.2)],
                         ids=["zeros", "sum-half", "sum-two"])
def test_a_point_off_the_simplex_is_projected_as_the_scalar_env_does(point):
    """Non-negative points whose coordinates do not sum to one are not on the simplex:
    all zeros would otherwise pay loss 0 every round."""
    venv = LinearVectorEnv("DPFullInfo-Experts-v0", len(SEEDS), horizon=T)
    venv.reset(seed=SEEDS)
    losses = [venv.step(np.stack([point] * len(SEEDS)))[1] for _ in range(T)]
    assert venv.unwrapped.projected_actions.tolist() == [T] * len(SEEDS)
    for b, seed in enumerate(SEEDS):
        env = gym.make("DPFullInfo-Experts-v0", horizon=T)
        env.reset(seed=seed)
        scalar = [env.step(point)[1] for _ in range(T)]
        assert [r[b] for r in losses] == scalar
        assert min(-r for r in scalar) > 0.0  # the projection (uniform play) pays
    strict = LinearVectorEnv("DPFullInfo-Experts-v0", 1, horizon=T, invalid_action="raise")
    strict.reset(seed=0)
    with pytest.raises(InvalidActionError, match="outside the simplex domain"):
        strict.step(point[None])


@pytest.mark.parametrize("env_id", ["DPFullInfo-Sphere-v1", "DPFullInfo-Experts-v0"])
def test_complex_actions_are_refused_and_change_nothing(env_id):
    venv = LinearVectorEnv(env_id, 2, horizon=T, invalid_action="raise")
    venv.reset(seed=0)
    dim = venv.problem.domain.dim
    with pytest.raises(ValueError, match=r"actions are complex \(complex128\); expected real"):
        venv.step(np.full((2, dim), 1.0 / dim) + 0j)
    assert venv.unwrapped.rounds.tolist() == [0, 0]
    env = gym.make(env_id, horizon=T, invalid_action="raise")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action is complex \(complex128\); expected real"):
        env.step(np.full(dim, 1.0 / dim) + 1e-3j)


@pytest.mark.parametrize("horizon", [MAX_HORIZON + 1, 2**62, 2**63, 10**30])
def test_horizons_beyond_the_ledger_are_refused_in_one_line(horizon):
    assert MAX_HORIZON == 2**53  # float64 sums count unit losses exactly up to here
    assert float(MAX_HORIZON - 1) + 1.0 == MAX_HORIZON == float(MAX_HORIZON) + 1.0
    expected = rf"horizon={horizon} rejected: expected an integer in \[1, 2\*\*53\]"
    with pytest.raises(ValueError, match=expected):
        LinearVectorEnv("DPBandit-MAB-v0", 2, horizon=horizon)
    with pytest.raises(ValueError, match=expected):
        gym.make("DPBandit-MAB-v0", horizon=horizon)
    assert gym.make("DPBandit-MAB-v0", horizon=MAX_HORIZON).reset(seed=0)  # the bound itself
