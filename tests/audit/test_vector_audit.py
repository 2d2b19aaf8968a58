"""The action audit played B runs at a time (dp_online_envs.lab.audit.vector).

Against the scalar path: the same run seeds give the same scores, bit for bit, hence
the same events, counts and bound; each run is its own seed's game (no generator is
shared between runs, whatever the chunking); an exactly eps-DP learner (randomized
response) audited on the vector path is not refuted at eps and is refuted below.
"""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.vector import make_vector
from dp_online_envs.lab.audit import (
    AgentSession,
    AuditSettings,
    ResettingSession,
    audit_actions,
    audit_power,
)
from dp_online_envs.lab.audit import actions as actions_mod
from dp_online_envs.lab.audit import vector as vector_mod
from dp_online_envs.lab.audit.actions import audit_problem, candidates
from dp_online_envs.lab.audit.scores import statistics_for
from dp_online_envs.lab.audit.vector import vector_scores

from .audit_agents import RandomizedResponseArm, VectorRandomizedResponse

MAB = "DPBandit-MAB-v0"
CLAIM = (1.0, 0.0)
SMALL = AuditSettings(horizon=16, runs=150, pilot_runs=40, taus=(1, 2), seed=11)


def _scalar(name, **kw):
    return lambda problem, space: ResettingSession(agents.make(name, problem, **kw))


def _vector(name, **kw):
    return lambda problem, space: make_vector(name, problem, **kw)


def _both_scores(name, env_id, env_kwargs, horizon, runs, seed, **kw):
    """The scores of every statistic on both sides of the first candidate pair, scalar
    and vector, with the same run seeds."""
    problem, space = audit_problem(env_id, env_kwargs, horizon)
    pair = candidates(problem, (1,))[0]
    stats = statistics_for(pair)
    seeds = tuple(np.random.SeedSequence(seed).spawn(2))
    scalar = actions_mod._play(ResettingSession(agents.make(name, problem, **kw)), problem,
                               space, pair, stats, seeds, runs)
    seeds = tuple(np.random.SeedSequence(seed).spawn(2))
    vector = vector_scores(make_vector(name, problem, **kw), env_id, env_kwargs, problem,
                             space, pair, stats, seeds, runs)
    return scalar, vector


# ------------------------------------------------------------ same seeds, same scores
@pytest.mark.parametrize(("name", "kw"), [("exp3", {}), ("private-exp2", {"epsilon": 1.0})])
def test_vector_scores_equal_scalar_scores_bit_for_bit_on_arms(name, kw):
    (s0, s1), (b0, b1) = _both_scores(name, MAB, {}, 16, 60, 4, **kw)
    assert s0.shape == b0.shape == (60, len(statistics_for(
        candidates(audit_problem(MAB, {}, 16)[0], (1,))[0])))
    assert np.array_equal(s0, b0) and np.array_equal(s1, b1)
    assert s0.tobytes() == b0.tobytes() and s1.tobytes() == b1.tobytes()
    assert len(np.unique(s0, axis=0)) > 1  # the runs differ: a real comparison


def test_vector_scores_equal_scalar_scores_on_points():
    """Hedge on Experts plays simplex points: the per-run scores (both kinds) agree."""
    (s0, s1), (b0, b1) = _both_scores("hedge", "DPFullInfo-Experts-v0", {}, 8, 12, 2)
    assert s0.tobytes() == b0.tobytes() and s1.tobytes() == b1.tobytes()


@pytest.mark.parametrize(("name", "kw"), [("exp3", {}), ("private-exp2", {"epsilon": 1.0})])
def test_vector_audit_gives_the_scalar_finding(name, kw):
    scalar = audit_actions(_scalar(name, **kw), MAB, {}, CLAIM, SMALL)
    vector = audit_actions(_vector(name, **kw), MAB, {}, CLAIM, SMALL)
    assert vector == scalar  # counts, bound, pair, statistic and event: all equal
    assert vector.counts == scalar.counts


# audit_power's vector references (private-exp2's shared-stream form, and the
# per-seed form giving the one-run-at-a-time findings): test_shared_stream_audit.py


# ------------------------------------------------------- one generator per run
def test_chunking_does_not_change_a_run(monkeypatch):
    """Runs split into chunks of 7 give the scores of one chunk of 40: run b is its
    own seed's game whatever else shares its vector pass."""
    problem, space = audit_problem(MAB, {}, 16)
    pair = candidates(problem, (1,))[0]
    stats = statistics_for(pair)

    def scores():
        learner = make_vector("private-exp2", problem, epsilon=1.0)
        return vector_scores(learner, MAB, {}, problem, space, pair, stats,
                              tuple(np.random.SeedSequence(9).spawn(2)), 40)

    whole = scores()
    monkeypatch.setattr(vector_mod, "BATCH_GAMES", 7)
    chunked = scores()
    assert all(np.array_equal(a, b) for a, b in zip(whole, chunked))


def test_each_run_draws_its_own_noise():
    """Two runs with different seeds draw different exact noise, and a run's noise is
    what the scalar learner reset with its seed draws: a vector path that reused one
    seed's generator for another would fail both."""
    problem, _ = audit_problem(MAB, {}, 16)
    learner = make_vector("private-exp2", problem, epsilon=1.0)
    learner.reset_batch([5, 6])
    arms = learner.act_batch()
    learner.update_batch(arms, np.ones((2, 1)))
    noise = learner._noise
    assert noise.shape == (16, 2)  # the block is the game's 16 rounds, not 4096
    assert not np.array_equal(noise[:, 0], noise[:, 1])
    for b, seed in enumerate((5, 6)):
        scalar = agents.make("private-exp2", problem, epsilon=1.0, seed=seed)
        scalar.reset(seed)
        scalar.update(scalar.act(), np.ones(1))
        assert scalar._noise._block == noise[:, b].tolist()  # its NoiseQueue


# ------------------------------------------------------------------ validity
def test_randomized_response_at_exactly_eps_is_not_refuted_on_the_vector_path():
    """Randomized response at eps = 1 on the round-1 loss is exactly 1-DP on its
    actions: the vector audit must not refute eps = 1, must refute eps = 0.5, and
    gives the scalar audit's finding."""
    settings = AuditSettings(horizon=8, runs=1500, pilot_runs=200, taus=(1, 2), seed=5)

    def vector(problem, space):
        return VectorRandomizedResponse(problem, rr_epsilon=1.0)

    f = audit_actions(vector, MAB, {"n_arms": 2}, CLAIM, settings)
    assert not f.refuted and 0.5 < f.eps_lb <= 1.0, str(f)
    assert f.tau == 1
    assert audit_actions(vector, MAB, {"n_arms": 2}, (0.5, 0.0), settings).refuted

    def scalar(problem, space):
        return AgentSession(lambda seed: RandomizedResponseArm(problem, seed=seed,
                                                               rr_epsilon=1.0))

    assert audit_actions(scalar, MAB, {"n_arms": 2}, CLAIM, settings) == f


def test_false_refutations_on_the_vector_path_are_rare():
    """As the scalar test: 10 seeds at the true epsilon, at most 2 refutations."""
    lbs = [audit_actions(lambda p, s: VectorRandomizedResponse(p, rr_epsilon=1.0), MAB,
                         {"n_arms": 2}, CLAIM,
                         AuditSettings(horizon=2, runs=1000, pilot_runs=100, taus=(1,),
                                       seed=seed)).eps_lb for seed in range(10)]
    assert sum(lb > 1.0 for lb in lbs) <= 2, lbs
    assert min(lbs) > 0.6, lbs


# ------------------------------------------------------------------ refusals
def test_a_vector_session_needs_an_id_with_a_vector_path():
    with pytest.raises(ValueError, match="vector path"):
        audit_actions(lambda p, s: VectorRandomizedResponse(p), "DPBandit-Linear-v1", {},
                      CLAIM, SMALL)


def test_not_a_session_names_both_kinds():
    with pytest.raises(TypeError, match="or a vector session"):
        audit_actions(lambda p, s: object(), MAB, {}, CLAIM, SMALL)


def test_vectorize_must_be_a_bool():
    with pytest.raises(TypeError, match="vectorize"):
        audit_power("private-exp2", MAB, {}, CLAIM, SMALL, factors=(2,), vectorize="yes")
