"""Seed-vector games equal the scalar games seed by seed, bit for bit.

For every id x learner pair with a vector path, B = 5 seeds played together give, for
each seed, exactly the actions, the feedback, the clipped-feedback count and the regret
summary (every field, the regret curve included) of the scalar game with that seed.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import agents
from agents.vector import VECTOR, make_vector, vector_refusal
from dp_online_envs.adversaries import make_adversary
from dp_online_envs.envs.registry import build_env
from dp_online_envs.envs.vector_env import (
    LinearVectorEnv,
    make_vector_env,
    vector_support,
)
from dp_online_envs.errors import InvalidActionError
from dp_online_envs.loop import run_rounds, run_vector_rounds

ENV_SEEDS = [11, 12, 13, 14, 15]
AGENT_SEEDS = [21, 22, 23, 24, 25]

#: (env id, learner, epsilon, delta)
PAIRS = [
    ("DPBandit-MAB-v0", "exp3", None, 0.0),
    ("DPBandit-MAB-v0", "exp2", None, 0.0),
    ("DPBandit-MAB-v0", "private-exp2", 1.0, 0.0),
    ("DPFullInfo-Experts-v0", "hedge", None, 0.0),
    ("DPFullInfo-Experts-v0", "ftrl", None, 0.0),
    ("DPFullInfo-Experts-v0", "private-ftrl", 1.0, 0.0),
    ("DPFullInfo-Experts-v0", "private-ftpl", 1.0, 1e-6),
    ("DPFullInfo-Sphere-v1", "ftrl", None, 0.0),
    ("DPFullInfo-Sphere-v1", "private-ftrl", 1.0, 1e-6),
    ("DPFullInfo-Sphere-v1", "private-ftpl", 1.0, 1e-6),
    ("DPFullInfo-Cube-v2", "ftrl", None, 0.0),
    ("DPFullInfo-Cube-v2", "private-ftrl", 1.0, 0.0),
    ("DPFullInfo-Cube-v2", "private-ftpl", 1.0, 1e-6),
    ("DPFullInfo-Cube-v1", "ftrl", None, 0.0),
    ("DPFullInfo-Cube-v1", "private-ftrl", 1.0, 0.0),
    ("DPFullInfo-Cube-v1", "private-ftpl", 1.0, 1e-6),
    ("DPFullInfo-Matroid-v2", "ftrl", None, 0.0),
    ("DPFullInfo-Matroid-v2", "private-ftrl", 1.0, 0.0),
    ("DPFullInfo-Matroid-v2", "private-ftpl", 1.0, 1e-6),
    ("DPFullInfo-Matroid-v1", "ftrl", None, 0.0),
    ("DPFullInfo-Matroid-v1", "private-ftrl", 1.0, 0.0),
    ("DPFullInfo-Matroid-v1", "private-ftpl", 1.0, 1e-6),
]


def scalar_game(env_id, name, horizon, env_seed, agent_seed, eps, delta, env_opts=None,
                agent_opts=None):
    env = build_env(env_id, horizon=horizon, **(env_opts or {}))
    agent = agents.make(name, env.get_wrapper_attr("problem"), epsilon=eps, delta=delta,
                        seed=agent_seed, **(agent_opts or {}))
    agent.reset(agent_seed)
    env.reset(seed=env_seed)
    actions, feedback = [], []

    def hook(t, action, obs):
        actions.append(np.array(action, dtype=np.float64))
        feedback.append(np.array(obs, dtype=np.float64))

    info = run_rounds(env, agent, hook)
    return np.array(actions), np.array(feedback), info["regret"], agent.clipped_feedback


def vector_games(env_id, name, horizon, eps, delta, env_opts=None, agent_opts=None,
                  block=16):
    venv = LinearVectorEnv(env_id, len(ENV_SEEDS), horizon=horizon, block=block,
                           **(env_opts or {}))
    return play_vector_env(venv, name, eps, delta, agent_opts)


def play_vector_env(venv, name, eps, delta, agent_opts=None):
    """Play the ``len(ENV_SEEDS)`` games of ``venv`` (reset with ``ENV_SEEDS``) with the
    vector ``name`` (reset with ``AGENT_SEEDS``): ``(actions, feedback, summaries,
    clipped-feedback counts)``, one row per game."""
    learner = make_vector(name, venv.problem, epsilon=eps, delta=delta,
                           **(agent_opts or {}))
    learner.reset_batch(AGENT_SEEDS)
    venv.reset(seed=ENV_SEEDS)
    actions, feedback = [], []
    done = False
    while not done:
        a = learner.act_batch()
        obs, _, terminated, _, info = venv.step(a)
        learner.update_batch(a, obs)
        actions.append(np.array(a, dtype=np.float64))
        feedback.append(obs.copy())
        done = bool(terminated.all())
    return (np.stack(actions, axis=1), np.stack(feedback, axis=1), info["regret"],
            learner.clipped_feedback)


def assert_same_games(env_id, name, horizon, eps, delta, env_opts=None, agent_opts=None,
                      venv=None):
    """Every game of ``venv`` (default: a ``LinearVectorEnv`` of these options) is the
    scalar game of its seeds: actions, feedback, clip counts and summary."""
    A, F, S, C = (vector_games(env_id, name, horizon, eps, delta, env_opts, agent_opts)
                  if venv is None else play_vector_env(venv, name, eps, delta, agent_opts))
    for b in range(len(ENV_SEEDS)):
        a, f, s, c = scalar_game(env_id, name, horizon, ENV_SEEDS[b], AGENT_SEEDS[b], eps,
                                 delta, env_opts, agent_opts)
        assert np.array_equal(a.reshape(A[b].shape), A[b]), f"actions of seed {b}"
        assert np.array_equal(f.reshape(F[b].shape), F[b]), f"feedback of seed {b}"
        assert s.as_dict() == S[b].as_dict(), f"regret summary of seed {b}"
        assert c == C[b]


@pytest.mark.parametrize(("env_id", "name", "eps", "delta"), PAIRS)
def test_five_vector_seeds_equal_five_scalar_games(env_id, name, eps, delta):
    assert_same_games(env_id, name, 120, eps, delta)


def test_every_listed_learner_has_a_pair():
    assert {p[1] for p in PAIRS} == set(VECTOR)


def test_arms_across_a_uniform_block():
    """4100 rounds: the uniforms (4096 a block) and the exact noise are redrawn mid-game."""
    assert_same_games("DPBandit-MAB-v0", "private-exp2", 4100, 1.0, 0.0, {"n_arms": 3})


def test_arms_with_exploration_and_many_arms():
    """gamma > 0 (the uniform-exploration branch) and K > 64 (the NumPy weight path)."""
    assert_same_games("DPBandit-MAB-v0", "exp3", 150, None, 0.0, {"n_arms": 80},
                      {"gamma": 0.3})


def test_arms_renormalize_like_the_scalar_engine():
    """A huge learning rate pushes log-weights past exp(+-300) every few rounds."""
    assert_same_games("DPBandit-MAB-v0", "exp3", 150, None, 0.0, {"n_arms": 4},
                      {"eta": 500.0})


def test_clipped_feedback_is_counted_like_the_scalar_agent():
    """A narrower declared range clips most losses: same counts, same play."""
    assert_same_games("DPBandit-MAB-v0", "exp3", 150, None, 0.0, None,
                      {"loss_range": (0.2, 0.6)})
    counts = vector_games("DPBandit-MAB-v0", "exp3", 150, None, 0.0, None,
                           {"loss_range": (0.2, 0.6)})[3]
    assert np.all(counts > 0)


def test_full_information_clip_counts_match():
    """Parameters outside the l2 ball: the vector rows count a clip exactly where the
    scalar agent's ``clip_feedback`` does."""
    venv = LinearVectorEnv("DPFullInfo-Sphere-v1", 3, horizon=10)
    learner = make_vector("ftrl", venv.problem)
    learner.reset_batch([1, 2, 3])
    fb = np.array([[3.0] + [0.0] * 9, [0.1] * 10, [0.0] * 9 + [-2.0]])
    a = learner.act_batch()
    learner.update_batch(a, fb)
    scalar = agents.make("ftrl", venv.problem, seed=1)
    counts = []
    for row in fb:
        scalar.reset(1)
        scalar.update(scalar.act(), row)
        counts.append(scalar.clipped_feedback)
    assert learner.clipped_feedback.tolist() == counts == [1, 0, 1]


@pytest.mark.parametrize(("name", "eps", "delta"), [("ftrl", None, 0.0),
                                                     ("private-ftrl", 1.0, 0.0),
                                                     ("private-ftpl", 1.0, 1e-6)])
def test_full_information_games_with_clipped_l2_losses_side_by_side(name, eps, delta):
    """Loss vectors of norm 0.3 to 2.5 (half outside the l2 ball, some scaled to norm 1
    where rounding puts the scaled row an ulp outside): the vector learner's B games
    and B scalar learners fed the same rows play the same points, bit for bit, with the
    same clip counts."""
    problem = build_env("DPFullInfo-Sphere-v1", horizon=80).get_wrapper_attr("problem")
    rng = np.random.default_rng(9)
    rows = rng.normal(size=(80, len(AGENT_SEEDS), problem.dim))
    rows /= np.linalg.norm(rows, axis=2, keepdims=True)
    rows[::3] *= rng.uniform(0.3, 2.5, size=rows[::3].shape[:2])[..., None]
    learner = make_vector(name, problem, epsilon=eps, delta=delta)
    learner.reset_batch(AGENT_SEEDS)
    scalars = [agents.make(name, problem, epsilon=eps, delta=delta, seed=s) for s in AGENT_SEEDS]
    for agent, seed in zip(scalars, AGENT_SEEDS):
        agent.reset(seed)
    for feedback in rows:
        actions = learner.act_batch()
        for agent, action, row in zip(scalars, actions, feedback):
            assert np.array_equal(agent.act(), action)
            agent.update(action, row)
        learner.update_batch(actions, feedback)
    assert learner.clipped_feedback.tolist() == [a.clipped_feedback for a in scalars]
    assert np.all(learner.clipped_feedback > 5)


def test_same_seeds_same_games_and_seeds_matter():
    first = vector_games("DPBandit-MAB-v0", "private-exp2", 60, 1.0, 0.0)
    again = vector_games("DPBandit-MAB-v0", "private-exp2", 60, 1.0, 0.0)
    assert np.array_equal(first[0], again[0]) and np.array_equal(first[1], again[1])
    assert not np.array_equal(first[0][0], first[0][1])  # two seeds, two games


def test_integer_seed_means_consecutive_seeds():
    venv = LinearVectorEnv("DPBandit-MAB-v0", 3, horizon=5)
    venv.reset(seed=7)
    a = venv.step(np.zeros(3, dtype=int))[0]
    venv.reset(seed=[7, 8, 9])
    assert np.array_equal(a, venv.step(np.zeros(3, dtype=int))[0])


def test_points_outside_the_domain_are_projected_and_counted_like_the_scalar_env():
    x = np.full(10, 0.5)  # norm 1.58: outside the unit ball
    venv = LinearVectorEnv("DPFullInfo-Sphere-v1", 2, horizon=3)
    venv.reset(seed=[5, 6])
    env = build_env("DPFullInfo-Sphere-v1", horizon=3)
    for _ in range(3):
        *_, info = venv.step(np.stack([x, np.zeros(10)]))
    env.reset(seed=5)
    for _ in range(3):
        *_, last = env.step(x)
    assert last["regret"].as_dict() == info["regret"][0].as_dict()
    assert info["regret"][0].projected_actions == 3 and info["regret"][1].projected_actions == 0
    strict = LinearVectorEnv("DPFullInfo-Sphere-v1", 2, horizon=3, invalid_action="raise")
    strict.reset(seed=0)
    with pytest.raises(InvalidActionError):
        strict.step(np.stack([x, x]))


def test_bad_actions_and_order_are_refused():
    """With autoreset disabled, a step after the last round is refused (the default,
    ``NEXT_STEP``, resets there: ``tests/vector/test_gymnasium_conventions.py``)."""
    venv = LinearVectorEnv("DPBandit-MAB-v0", 2, horizon=2, n_arms=3,
                           autoreset_mode=AutoresetMode.DISABLED)
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(np.zeros(2, dtype=int))
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        venv.step(np.array([0, 3]))
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.array([0.0, 1.0]))
    venv.step(np.array([0, 1]))
    venv.step(np.array([0, 1]))
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(np.array([0, 1]))
    with pytest.raises(ValueError, match="3 seeds"):
        venv.reset(seed=[1, 2, 3])


def test_unsupported_settings_are_named():
    with pytest.raises(ValueError, match="no vector path"):
        LinearVectorEnv("DPBandit-Flow-v1", 2)
    with pytest.raises(ValueError, match="adaptive"):
        LinearVectorEnv("DPBandit-MAB-v0", 2, adversary="punish-favorite")
    with pytest.raises(ValueError, match="linear losses"):
        LinearVectorEnv("DPFullInfo-Matroid-v1", 2, loss="distance")
    assert vector_support("DPBandit-MAB-v0") is None
    assert "no vector path" in vector_support("DPBandit-Linear-v1")
    problem = LinearVectorEnv("DPBandit-MAB-v0", 1).problem
    assert "no vector form" in vector_refusal("scrible", problem)
    with pytest.raises(ValueError, match="no vector form"):
        make_vector("fkm", problem)
    cube = build_env("DPBandit-Linear-v1", horizon=8, domain="cube", dim=3
                     ).get_wrapper_attr("problem")
    assert vector_refusal("exp2", problem) is None
    assert "plays arms only" in vector_refusal("exp2", cube)
    assert "plays arms only" in vector_refusal("private-exp2", cube, epsilon=1.0)


def test_vector_entry_point_builds_the_vector_env():
    venv = make_vector_env(num_envs=4, env_id="DPBandit-MAB-v0", horizon=5, n_arms=3)
    assert venv.num_envs == 4 and venv.action_space.shape == (4,)
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (4, 1)
    with pytest.raises(ValueError, match="max_episode_steps"):
        make_vector_env(num_envs=2, env_id="DPBandit-MAB-v0", max_episode_steps=3)


def test_run_vector_rounds_returns_every_summary():
    venv = LinearVectorEnv("DPBandit-MAB-v0", 3, horizon=40)
    learner = make_vector("exp3", venv.problem)
    learner.reset_batch([1, 2, 3])
    venv.reset(seed=[4, 5, 6])
    info = run_vector_rounds(venv, learner)
    assert [s.rounds for s in info["regret"]] == [40, 40, 40]
    assert [s.as_dict() for s in venv.summaries()] == [s.as_dict() for s in info["regret"]]


def test_run_vector_rounds_refuses_games_out_of_lockstep():
    """After a reset of some games only, they would never all end in one step: the loop
    refuses to start instead of playing on forever."""
    venv = LinearVectorEnv("DPBandit-MAB-v0", 3, horizon=40)
    learner = make_vector("exp3", venv.problem)
    learner.reset_batch([1, 2, 3])
    venv.reset(seed=[4, 5, 6])
    for _ in range(5):
        a = learner.act_batch()
        learner.update_batch(a, venv.step(a)[0])
    venv.reset(seed=[7, 8, 9], options={"reset_mask": np.array([True, False, True])})
    with pytest.raises(ValueError, match=r"lockstep, but they are at rounds \[0, 5, 0\]"):
        run_vector_rounds(venv, learner)
    venv.reset(seed=[7, 8, 9])  # every game: in lockstep again
    assert [s.rounds for s in run_vector_rounds(venv, learner)["regret"]] == [40, 40, 40]


@pytest.mark.parametrize("adversary", ["stochastic", "planted", "lower-bound", "switching",
                                       "oblivious", "alternating"])
def test_next_losses_equal_successive_next_loss(adversary):
    env = build_env("DPBandit-MAB-v0", horizon=40, n_arms=5)
    base = env.unwrapped
    one, block = make_adversary(adversary), make_adversary(adversary)
    one.reset(np.random.default_rng(3), base.domain, base.loss, 40)
    block.reset(np.random.default_rng(3), base.domain, base.loss, 40)
    rows = [one.next_loss(t) for t in range(1, 41)]
    assert np.array_equal(np.vstack([block.next_losses(1, 17), block.next_losses(18, 23)]),
                          np.stack(rows))


def test_play_batch_equals_play_seed_by_seed():
    venv = LinearVectorEnv("DPBandit-MAB-v0", 3, horizon=80)
    learner = make_vector("private-exp2", venv.problem, epsilon=0.5)
    summaries = agents.play_batch(venv, learner, seeds=[3, 4, 5])  # fresh agent seeds
    env = build_env("DPBandit-MAB-v0", horizon=80)
    agent = agents.make("private-exp2", env.get_wrapper_attr("problem"), epsilon=0.5)
    assert [agents.play(env, agent, seed=s, agent_seed=b.agent_seed).as_dict()
            for s, b in zip((3, 4, 5), summaries)] == [s.as_dict() for s in summaries]
    chosen = agents.play_batch(venv, learner, seeds=[3, 4, 5], agent_seeds=[7, 8, None])
    assert [s.agent_seed for s in chosen][:2] == [7, 8]
    assert chosen[0].as_dict() == agents.play(env, agent, seed=3, agent_seed=7).as_dict()
    with pytest.raises(ValueError, match="2 seeds for 3 games"):
        agents.play_batch(venv, learner, seeds=[1, 2])
    with pytest.raises(ValueError, match="2 agent seeds for 3 games"):
        agents.play_batch(venv, learner, seeds=[1, 2, 3], agent_seeds=[1, 2])
    other = make_vector("exp3", LinearVectorEnv("DPBandit-MAB-v0", 3, horizon=81).problem)
    with pytest.raises(ValueError, match="another problem"):
        agents.play_batch(venv, other, seeds=[1, 2, 3])


@pytest.mark.parametrize(("env_id", "name", "eps", "delta"), [
    ("DPFullInfo-Sphere-v1", "private-ftrl", 1.0, 1e-6),    # Gaussian tree noise
    ("DPFullInfo-Experts-v0", "private-ftpl", 50.0, 1e-6),   # extra FTPL noise (> 0)
    ("DPFullInfo-Cube-v1", "private-ftpl", 50.0, 1e-6),
])
def test_float_noise_blocks_refilled_mid_game(env_id, name, eps, delta, monkeypatch):
    """Small float blocks: the Gaussian tree noise and the extra FTPL noise are drawn
    again every few rounds, and the games stay the scalar ones."""
    from agents.vector import counters, ftpl

    monkeypatch.setattr(counters, "FLOAT_BLOCK", 300)
    monkeypatch.setattr(ftpl, "FLOAT_BLOCK", 120)
    assert_same_games(env_id, name, 90, eps, delta)


def test_extra_ftpl_noise_is_used_at_a_large_epsilon():
    env = build_env("DPFullInfo-Experts-v0", horizon=90)
    agent = agents.make("private-ftpl", env.get_wrapper_attr("problem"), epsilon=50.0,
                        delta=1e-6)
    assert agent.perturbation_std() > 0.0


@pytest.mark.parametrize("counter", ["tree", "honaker", "factorization"])
def test_other_counters_row_by_row(counter):
    assert_same_games("DPFullInfo-Sphere-v1", "private-ftrl", 60, 1.0, 1e-6,
                      agent_opts={"counter": counter})


@pytest.mark.parametrize("theta_set", ["unit", "linf", "l2", "l1"])
def test_vector_clip_equals_clip_param_row_by_row(theta_set):
    from agents.vector.base import VectorAgent, clip_full_rows
    from dp_online_envs.losses import LinearLoss

    loss = LinearLoss(6, theta_set)
    rng = np.random.default_rng(4)
    base = rng.uniform(0.0 if theta_set == "unit" else -1.0, 1.0, size=(200, 6))
    rows = base * rng.uniform(0.05, 1.5, size=(200, 1))  # some inside, some outside
    holder = VectorAgent.__new__(VectorAgent)
    holder.problem = type("P", (), {"loss": loss})()
    holder.num_envs = 200
    holder.clipped_feedback = np.zeros(200, dtype=np.int64)
    out = clip_full_rows(holder, rows)
    expected = np.stack([loss.clip_param(r) for r in rows])
    assert np.array_equal(out, expected)
    assert holder.clipped_feedback.tolist() == [
        int(not np.array_equal(e, r)) for e, r in zip(expected, rows)]
    assert 0 < holder.clipped_feedback.sum() < 200


def test_bandit_downgrade_of_a_full_information_id_emits_the_guard_feedback():
    venv = LinearVectorEnv("DPFullInfo-Experts-v0", 2, horizon=4, feedback="bandit")
    assert venv.problem.feedback == "bandit" and venv.single_observation_space.shape == (1,)
    venv.reset(seed=[8, 9])
    env = build_env("DPFullInfo-Experts-v0", horizon=4, feedback="bandit")
    env.reset(seed=8)
    x = np.full(10, 0.1)
    for _ in range(4):
        obs, reward, *_ = venv.step(np.stack([x, x]))
        scalar_obs, scalar_reward, *_ = env.step(x)
        assert obs.shape == (2, 1) and np.array_equal(obs[0], scalar_obs)
        assert reward[0] == scalar_reward


def test_replayed_sequences_vectorize_like_the_scalar_replay():
    """The auditor's setting: one recorded sequence, many learner seeds."""
    from dp_online_envs.adversaries import ReplayAdversary

    seq = np.random.default_rng(2).random((30, 4))
    replay = ReplayAdversary(seq)
    assert np.array_equal(np.vstack([replay.next_losses(1, 7), replay.next_losses(8, 23)]),
                          seq)
    assert_same_games("DPBandit-MAB-v0", "private-exp2", 30, 1.0, 0.0,
                      {"n_arms": 4, "adversary": ReplayAdversary(seq)})
