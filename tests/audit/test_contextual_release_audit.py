"""The release audit of a contextual game (:func:`dp_online_envs.lab.audit.audit`,
``view="releases"``): the recorded sequence keeps each round's context, the neighbour
changes round ``tau``'s loss vector only, the replay shows the learner the recorded
contexts; ``jdp-linucb`` and ``ldp-linucb`` at their epsilon are not refuted, their
noise-free twins and the learners built with a tenth of the noise (10x epsilon, the
claim kept) are.

What is tested: both learners pass every value their proof covers through
``Agent.release`` (``jdp-linucb``: the binary-tree counter's noisy per-arm sums;
``ldp-linucb``: each round's noisy report), and those releases are claimed
``(epsilon, delta)``-DP with respect to one round's data (its context and loss vector;
``jdp-linucb``'s joint DP of the actions follows from it by the billboard lemma). The
audit's pairs change one round's loss vector and keep every context, a subset of those
neighbours, so ``eps_lb > epsilon`` refutes the claim on the releases.

The game: one arm (the change lands in the block the auditor's statistic reads, whatever
the noise makes the learner play: the learners' claim holds for every K), contexts in
R^2, ``T = 2``, ``tau = 1``. Settings and seed fixed before measuring (audit seeds 0-19,
replication 100-119, 3000 runs per side; ``docs/algorithms/privacy-auditor.md``,
"Contextual games").
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import agents
from dp_online_envs import build_env
from dp_online_envs.adversaries import LossSequence
from dp_online_envs.lab.audit import AuditSettings, audit, audit_actions
from dp_online_envs.lab.audit.sequences import (
    ContextualLossSequence,
    Game,
    NeighbourPair,
    record_sequence,
    replay_env,
)

ENV = "DPBandit-ContextualLinear-v0"
LEARNERS = ("jdp-linucb", "ldp-linucb")
#: The audit: fixed in advance (module docstring).
HORIZON, TAU, RUNS, SEED = 2, 1, 3000, 0
CLAIM = {"epsilon": 1.0, "delta": 1e-5}


def _env(horizon: int = HORIZON, n_arms: int = 1, **kw):
    return build_env(ENV, horizon=horizon, n_arms=n_arms, loss_kwargs={"context_dim": 2}, **kw)


def _contexts_and_losses(seed: int, horizon: int, n_arms: int, actions):
    """Brute force: the env played by hand; contexts from its adversary's round records,
    losses from its own recording, observations as the learner saw them."""
    env = _env(horizon, n_arms, record_losses=True)
    env.reset(seed=seed)
    contexts, observations = [], []
    for a in actions:
        obs, *_ = env.step(a)
        contexts.append(env.unwrapped.adversary.last_round().context)
        observations.append(obs)
    return np.stack(contexts), env.unwrapped.played_losses().thetas, np.stack(observations)


def test_record_keeps_each_rounds_context_and_loss_vector():
    env = _env(horizon=6, n_arms=3)
    learner = agents.make("uniform", env.get_wrapper_attr("problem"), seed=4)
    seq = record_sequence(Game.of(env), learner, seed=5, feedback="bandit")
    # the stochastic contexts and losses of a seed do not depend on the play
    contexts, thetas, _ = _contexts_and_losses(5, 6, 3, [0] * 6)
    assert isinstance(seq, ContextualLossSequence)
    np.testing.assert_array_equal(seq.contexts, contexts)
    np.testing.assert_array_equal(seq.thetas, thetas)


def test_the_replay_shows_the_learner_what_the_game_showed():
    env = _env(horizon=6, n_arms=3)
    problem = env.get_wrapper_attr("problem")
    seq = record_sequence(Game.of(env), agents.make("uniform", problem, seed=1), seed=7,
                          feedback="bandit")
    actions = [0, 2, 1, 1, 0, 2]
    *_, shown = _contexts_and_losses(7, 6, 3, actions)
    replay = replay_env(problem, seq)
    first, _ = replay.reset(seed=0)
    original, _ = _env(horizon=6, n_arms=3).reset(seed=7)
    np.testing.assert_array_equal(first, original)  # [0, 0, c_1]
    replayed = np.stack([replay.step(a)[0] for a in actions])
    np.testing.assert_array_equal(replayed, shown)


def test_the_neighbour_changes_one_loss_vector_and_keeps_every_context():
    env = _env(horizon=4, n_arms=2)
    problem = env.get_wrapper_attr("problem")
    seq = record_sequence(Game.of(env), agents.make("uniform", problem, seed=0), seed=3,
                          feedback="bandit")
    pair = NeighbourPair.replacing(seq, 2, 1.0 - seq.thetas[1])
    assert isinstance(pair.neighbour, ContextualLossSequence)
    np.testing.assert_array_equal(pair.neighbour.contexts, seq.contexts)
    changed = np.flatnonzero(np.any(pair.neighbour.thetas != seq.thetas, axis=1))
    assert changed.tolist() == [1]
    moved = seq.contexts.copy()
    moved[2] = -moved[2]
    with pytest.raises(ValueError, match=r"contexts differ in rounds \[3\]"):
        NeighbourPair(seq, ContextualLossSequence(seq.thetas, moved), 2)
    with pytest.raises(ValueError, match="one sequence has contexts and the other not"):
        NeighbourPair(seq, LossSequence(seq.thetas), 2)


def test_bad_sequences_and_replays_are_refused():
    thetas = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"expected contexts of norm <= 1"):
        ContextualLossSequence(thetas, np.full((3, 2), 0.8))
    with pytest.raises(ValueError, match=r"one context per round"):
        ContextualLossSequence(thetas, np.zeros((2, 2)))
    problem = _env(horizon=3, n_arms=2).get_wrapper_attr("problem")
    with pytest.raises(ValueError, match="a contextual game replays a ContextualLossSequence"):
        replay_env(problem, LossSequence(thetas))
    plain = build_env("DPBandit-MAB-v0", n_arms=2, horizon=3).get_wrapper_attr("problem")
    with pytest.raises(ValueError, match="a sequence with contexts needs a contextual game"):
        replay_env(plain, ContextualLossSequence(thetas, np.zeros((3, 2))))
    three = _env(horizon=3, n_arms=3)
    with pytest.raises(ValueError, match=r"the sequence has 2 arms and contexts in R\^2"):
        replay_env(three.get_wrapper_attr("problem"),
                   ContextualLossSequence(thetas, np.zeros((3, 2)))).reset(seed=0)
    with pytest.raises(ValueError, match="contextual game is recorded with its own adversary"):
        record_sequence(Game.of(problem), agents.make("uniform", problem, seed=0), 0, "bandit")


def test_the_action_audit_refuses_a_contextual_game():
    def session(problem, space):  # never reached
        raise AssertionError("the session was built")

    with pytest.raises(ValueError, match="is a contextual game: the action audit"):
        audit_actions(session, ENV, {"n_arms": 2}, (1.0, 1e-5),
                      AuditSettings(horizon=4, runs=10, pilot_runs=10))


def _audit(name: str, runs: int = RUNS, **built):
    """The audit of ``name`` built with ``built`` options, claiming :data:`CLAIM`, on
    ``runs`` runs per side."""
    env = _env()
    problem = env.get_wrapper_attr("problem")

    def factory(seed):
        agent = agents.make(name, problem, seed=seed, **{**CLAIM, **built})
        agent.privacy = replace(agent.privacy, **CLAIM)  # the claim (false unless honest)
        return agent

    return audit(factory, env, tau=TAU, runs=runs, seed=SEED, view="releases")


@pytest.mark.parametrize("name", LEARNERS)
def test_the_learner_at_its_epsilon_is_not_refuted(name):
    # a third of the runs (the false-refutation guard needs no power; at 3000 runs on
    # audit seeds 0-19 and 100-119 eps_lb was at most 0.031 and 0.236)
    result = _audit(name, runs=1000)
    assert result.passed and result.eps_lb <= CLAIM["epsilon"], str(result)
    assert (result.epsilon, result.delta) == (CLAIM["epsilon"], CLAIM["delta"])


@pytest.mark.parametrize("name", LEARNERS)
def test_the_noise_free_twin_is_refuted(name):
    result = _audit(name, runs=300, add_noise=False)  # eps_lb 5.69 at 3000 runs
    assert not result.passed and result.eps_lb > CLAIM["epsilon"], str(result)


@pytest.mark.parametrize("name", LEARNERS)
def test_a_tenth_of_the_noise_is_refuted(name):
    """Built at 10x epsilon (a tenth of the noise scale) while claiming epsilon: the
    released sums are Gaussian-DP with mu = 1.09 for these neighbours."""
    result = _audit(name, epsilon=10.0 * CLAIM["epsilon"])
    assert not result.passed and result.eps_lb > CLAIM["epsilon"], str(result)
