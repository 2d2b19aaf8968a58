"""The reference agents ``center`` and ``uniform``: exact center play, uniform draws,
reproducibility, and the linear regret of not learning."""

import numpy as np
import pytest
from scipy import stats

from agents import make, play
from agents.reference import REFERENCE_AGENTS
from dp_online_envs import build_env

ROUNDS = 3000


def _actions(name, env_id, seed, rounds=ROUNDS, **env_kw):
    env = build_env(env_id, horizon=rounds, **env_kw)
    problem = env.get_wrapper_attr("problem")
    agent = make(name, problem, seed=seed)
    feedback = np.zeros(1 if problem.feedback == "bandit" else problem.loss.param_dim)
    out = []
    for _ in range(rounds):
        a = agent.act()
        agent.update(a, feedback)
        out.append(a)
    return out, env.get_wrapper_attr("problem").domain


@pytest.mark.parametrize("env_id", ["DPFullInfo-Experts-v0", "DPFullInfo-Sphere-v1",
                                    "DPFullInfo-Cube-v1", "DPBandit-Matroid-v1",
                                    "DPBandit-Flow-v1", "DPBandit-Birkhoff-v1"])
def test_center_plays_exactly_the_center_on_box_actions(env_id):
    actions, domain = _actions("center", env_id, seed=3, rounds=50)
    for a in actions:
        assert np.array_equal(np.asarray(a), domain.center)


def test_center_on_arms_and_subsets_has_the_center_as_mean():
    arms, domain = _actions("center", "DPBandit-MAB-v0", seed=0)
    counts = np.bincount(arms, minlength=domain.dim)
    assert stats.chisquare(counts).pvalue > 1e-4
    subsets, domain = _actions("center", "DPBandit-Submodular-v1", seed=0)
    mean = np.mean(subsets, axis=0)
    # each coordinate is Bernoulli(1/2): 5 standard deviations
    assert np.all(np.abs(mean - domain.center) < 5 * 0.5 / np.sqrt(ROUNDS))


def test_uniform_arm_frequencies_pass_a_chi_square_test():
    arms, domain = _actions("uniform", "DPBandit-MAB-v0", seed=1)
    counts = np.bincount(arms, minlength=domain.dim)
    assert len(counts) == domain.dim and counts.sum() == ROUNDS
    assert stats.chisquare(counts).pvalue > 1e-4


def test_uniform_subsets_are_uniform_over_all_subsets():
    subsets, domain = _actions("uniform", "DPBandit-Submodular-v1", seed=2, n=4)
    codes = [int("".join(map(str, s)), 2) for s in subsets]
    counts = np.bincount(codes, minlength=16)
    assert stats.chisquare(counts).pvalue > 1e-4


def test_uniform_vertices_are_uniform_over_the_vertex_list():
    actions, domain = _actions("uniform", "DPBandit-Birkhoff-v1", seed=4, n=3)
    vertices = domain.vertices()
    assert len(vertices) == 6  # the 3 x 3 permutation matrices
    idx = [int(np.flatnonzero(np.all(np.isclose(vertices, a), axis=1))[0]) for a in actions]
    assert stats.chisquare(np.bincount(idx, minlength=6)).pvalue > 1e-4


def test_uniform_on_a_ball_is_uniform_on_the_sphere():
    actions, domain = _actions("uniform", "DPFullInfo-Sphere-v1", seed=5, dim=3)
    x = np.asarray(actions)
    radius = domain.inner_ball()[1]
    assert np.allclose(np.linalg.norm(x, axis=1), radius)
    # the mean of the uniform distribution on the sphere is 0: 5 standard deviations
    assert np.all(np.abs(x.mean(axis=0)) < 5 * radius / np.sqrt(3 * ROUNDS))


@pytest.mark.parametrize("name", REFERENCE_AGENTS)
def test_same_seed_same_play(name):
    a, _ = _actions(name, "DPBandit-MAB-v0", seed=9, rounds=200)
    b, _ = _actions(name, "DPBandit-MAB-v0", seed=9, rounds=200)
    c, _ = _actions(name, "DPBandit-MAB-v0", seed=10, rounds=200)
    assert a == b and a != c


@pytest.mark.parametrize("name", REFERENCE_AGENTS)
def test_reference_agents_are_not_private_and_ignore_feedback(name):
    env = build_env("DPFullInfo-Experts-v0", horizon=10)
    problem = env.get_wrapper_attr("problem")
    with pytest.raises(ValueError, match="not private"):
        make(name, problem, epsilon=1.0)
    a = make(name, problem, seed=0)
    b = make(name, problem, seed=0)
    for _ in range(20):
        xa, xb = a.act(), b.act()
        assert np.array_equal(xa, xb)
        a.update(xa, np.zeros(problem.loss.param_dim))
        b.update(xb, np.ones(problem.loss.param_dim))  # different feedback, same play


def test_not_learning_costs_linear_regret_on_the_experts_default():
    env = build_env("DPFullInfo-Experts-v0", horizon=2000)
    problem = env.get_wrapper_attr("problem")
    centre = play(env, make("center", problem, seed=0), seed=0, agent_seed=0)
    hedge = play(env, make("hedge", problem, seed=0), seed=0, agent_seed=0)
    assert centre.regret_hi > 0.05 * 2000  # a constant gap per round
    assert hedge.regret_hi < 0.5 * centre.regret_hi
