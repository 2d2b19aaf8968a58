"""agents.play refuses an agent built for another problem, naming both problems."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import pytest

import agents
from agents.loop import problem_differences


def _problem(env_id: str, **options):
    return gym.make(env_id, **options).get_wrapper_attr("problem")


def test_another_number_of_arms_is_refused_naming_both():
    env = gym.make("DPBandit-MAB-v0", horizon=20, n_arms=10)
    agent = agents.make("exp3", _problem("DPBandit-MAB-v0", horizon=20, n_arms=5), seed=0)
    with pytest.raises(ValueError) as err:
        agents.play(env, agent, seed=0)
    msg = str(err.value)
    assert "agent 'exp3' was built for another problem than the env's" in msg
    assert "decision set: Arms(k=5) (dim 5) vs Arms(k=10) (dim 10)" in msg
    assert "the agent's is bandit feedback on Arms(k=5)" in msg
    assert "the env's is bandit feedback on Arms(k=10)" in msg


def test_another_feedback_kind_is_refused():
    env = gym.make("DPFullInfo-Convex-v1", horizon=20)
    bandit_view = _problem("DPFullInfo-Convex-v1", horizon=20, feedback="bandit")
    agent = agents.make("fkm", bandit_view, seed=0)
    with pytest.raises(ValueError, match="feedback: 'bandit' vs 'full'"):
        agents.play(env, agent, seed=0)


def test_another_horizon_is_refused():
    env = gym.make("DPFullInfo-Experts-v0", horizon=40, n_arms=4)
    agent = agents.make("hedge", _problem("DPFullInfo-Experts-v0", horizon=20, n_arms=4))
    with pytest.raises(ValueError, match="horizon: 20 vs 40"):
        agents.play(env, agent, seed=0)


def test_another_domain_of_the_same_dimension_is_refused():
    env = gym.make("DPBandit-Matroid-v1", horizon=20, rank=3)
    agent = agents.make("private-projection-free", _problem("DPBandit-Matroid-v1", horizon=20),
                        epsilon=1.0, seed=0)
    with pytest.raises(ValueError,
                       match=r"UniformMatroid\(n=3, k=2\).*vs UniformMatroid\(n=3, k=3\)"):
        agents.play(env, agent, seed=0)


def test_an_equal_problem_from_another_env_instance_plays():
    agent = agents.make("hedge", _problem("DPFullInfo-Experts-v0", horizon=20, n_arms=4))
    env = gym.make("DPFullInfo-Experts-v0", horizon=20, n_arms=4)
    assert problem_differences(agent.problem, env.get_wrapper_attr("problem")) == []
    assert agents.play(env, agent, seed=0).rounds == 20


def test_factorization_counter_without_delta_says_to_pass_delta():
    problem = _problem("DPFullInfo-Experts-v0", horizon=20)
    with pytest.raises(ValueError, match=r"counter='factorization'.*delta=1e-6 in Python"):
        agents.make("private-ftrl", problem, epsilon=1.0, counter="factorization")
    agents.make("private-ftrl", problem, epsilon=1.0, delta=1e-6, counter="factorization")


def test_other_bounds_are_allowed_the_agent_clips_to_its_own():
    env = gym.make("DPFullInfo-Experts-v0", horizon=20, n_arms=4)
    tighter = dataclasses.replace(env.get_wrapper_attr("problem"), bound=0.5, lipschitz=0.5)
    agent = agents.make("hedge", tighter)
    assert agents.play(env, agent, seed=0).rounds == 20


@pytest.mark.parametrize("env_id,agent", [("DPBandit-Matroid-v1", "center"),
                                          ("DPBandit-MAB-v0", "exp3"),
                                          ("DPFullInfo-Experts-v0", "hedge")])
def test_play_with_seed_s_is_the_hand_loop_after_reset_seed_s(env_id, agent):
    """One seed, one game: ``play(env, agent, seed=s)`` faces the losses that
    ``env.reset(seed=s)`` gives a hand-written loop (the README's), round for round, and
    with the agent seeded as ``play`` seeded it (``summary.agent_seed``) the whole game
    is the same, bit for bit."""
    seed, horizon = 11, 60

    def hand_loop(learner, agent_seed):
        env = gym.make(env_id, horizon=horizon, record_losses=True)
        learner.reset(agent_seed)
        obs, info = env.reset(seed=seed)
        terminated = False
        while not terminated:
            action = learner.act()
            obs, _, terminated, _, info = env.step(action)
            learner.update(action, obs)
        return info["regret"], env.unwrapped.played_losses().thetas

    env = gym.make(env_id, horizon=horizon, record_losses=True)
    problem = env.get_wrapper_attr("problem")
    played = agents.play(env, agents.make(agent, problem), seed=seed)
    losses = env.unwrapped.played_losses().thetas
    by_hand, hand_losses = hand_loop(agents.make(agent, problem), played.agent_seed)
    assert losses.tobytes() == hand_losses.tobytes()
    assert played.as_dict() == by_hand.as_dict()
    # the losses are the reset seed's whatever the learner does: trivial play sees them too
    _, center_losses = hand_loop(agents.make("uniform" if agent == "exp3" else "center",
                                             problem), 0)
    assert center_losses.tobytes() == losses.tobytes()
