"""``counter="blt"`` in every private learner built on a continual counter."""

from __future__ import annotations

import numpy as np
import pytest

from agents import agent_class, list_agents, make
from agents.counter_agent import CounterAgent
from agents.privacy import BLTCounter
from dp_online_envs import build_env
from dp_online_envs.loop import run_rounds

GAUSS = {"epsilon": 1.0, "delta": 1e-5, "counter": "blt"}
#: private counter learner -> (env id, extra agent options)
GAMES = {
    "private-ftrl": ("DPFullInfo-Sphere-v1", {}),
    "private-ftpl": ("DPFullInfo-Experts-v0", {}),
    "pftal": ("DPFullInfo-StronglyConvex-v1", {}),
    "private-ftrl-grad": ("DPFullInfo-Convex-v1", {}),
    "private-ftpl-grad": ("DPFullInfo-Convex-v1", {}),
    "submod-pftal": ("DPFullInfo-Submodular-v1", {}),
    "bandit-pftal": ("DPBandit-Convex-v1", {}),
    "bandit-submod-pftal": ("DPBandit-Submodular-v1", {}),
    "private-projection-free": ("DPBandit-Matroid-v1", {"noise": "gaussian"}),
    "private-projection-free-tuned": ("DPBandit-Matroid-v2", {"noise": "gaussian"}),
}
T = 40


def test_every_private_counter_learner_has_a_game():
    counter_learners = {info.name for info in list_agents()
                        if issubclass(agent_class(info.name), CounterAgent)
                        and agent_class(info.name).private}
    assert counter_learners == set(GAMES)


def _play(name: str, seed: int, **kw) -> tuple[np.ndarray, object]:
    env_id, extra = GAMES[name]
    env = build_env(env_id, horizon=T)
    problem = env.get_wrapper_attr("problem")
    agent = make(name, problem, seed=seed, **{**GAUSS, **extra, **kw})
    agent.reset(seed)
    env.reset(seed=seed)
    points = []
    run_rounds(env, agent, lambda t, a, fb: points.append(problem.domain.to_point(a)))
    return np.stack(points), agent


@pytest.mark.parametrize("name", sorted(GAMES))
def test_learner_runs_on_the_blt_counter(name):
    a, agent = _play(name, seed=3)
    b, _ = _play(name, seed=3)
    c, _ = _play(name, seed=4)
    assert agent.counter_spec.counter == "blt"
    assert isinstance(agent._counter, BLTCounter)
    assert agent._counter.horizon == agent.counter_spec.horizon
    assert "BLTCounter" in agent.privacy.mechanism and agent.privacy.idealized
    assert agent.privacy.epsilon <= 1.0 * (1 + 1e-6) and agent.privacy.delta == 1e-5
    assert agent.noise_scale == agent._counter.draw_scale > 0.0
    assert np.array_equal(a, b) and not np.array_equal(a, c)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_blt_needs_a_delta(name):
    """``delta = 0`` asks for pure DP: refused, with a message saying to pass a delta (the
    learners whose noise is Gaussian anyway say so first, in their own words)."""
    env_id, _ = GAMES[name]
    problem = build_env(env_id, horizon=T).get_wrapper_attr("problem")
    with pytest.raises(ValueError, match=r"^delta=0\.0 rejected: expected a real number in "
                                         r"\(0, 1\) for Gaussian noise.*(delta=1e-6|delta > 0)"
                       ) as err:
        make(name, problem, seed=0, **{**GAUSS, "delta": 0.0})
    if name not in ("private-ftpl", "private-ftpl-grad"):  # Gaussian with every counter
        assert "counter='blt' adds only Gaussian noise" in str(err.value)


@pytest.mark.parametrize("name", ["private-ftrl", "pftal"])
def test_without_noise_the_blt_learner_is_its_counterpart(name):
    """Noise off, the BLT counter releases exact sums: the learner plays its non-private
    counterpart's points bit for bit; with the noise on it does not."""
    env_id, extra = GAMES[name]
    env = build_env(env_id, horizon=T)
    problem = env.get_wrapper_attr("problem")
    other = agent_class(name).counterpart_for(problem, counter="blt")

    def points(agent):
        agent.reset(5)
        env.reset(seed=3)
        out = []
        run_rounds(env, agent, lambda t, a, fb: out.append(problem.domain.to_point(a)))
        return np.stack(out)

    quiet = make(name, problem, seed=0, **{**GAUSS, **extra, "epsilon": 1e6})
    quiet.noise = None
    base = points(make(other, problem, seed=0))
    assert np.array_equal(points(quiet), base)
    noisy = make(name, problem, seed=0, **{**GAUSS, **extra})
    assert not np.array_equal(points(noisy), base)
