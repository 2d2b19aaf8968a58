"""EXP2 is one class whose round is chosen once from the domain; CounterAgent's counter
comes from one frozen spec."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import numpy as np
import pytest

import agents.bandit.exp2 as exp2_module
from agents import make
from agents.bandit.exp2 import EXP2, PrivateEXP2
from agents.counter_agent import CounterSpec
from dp_online_envs import build_env


def _problem(env_id: str, **kw):
    return build_env(env_id, horizon=50, **kw).get_wrapper_attr("problem")


def test_exp2_is_one_class_that_picks_its_round_from_the_domain():
    arms = make("exp2", _problem("DPBandit-MAB-v0"))
    verts = EXP2(_problem("DPBandit-Linear-v1", domain="cube", dim=3))
    assert type(arms) is EXP2 and type(verts) is EXP2 and arms.name == "exp2"
    assert arms.plays_arms and arms.actions is None
    assert not verts.plays_arms and verts.actions.shape == (8, 3)
    assert arms.n_actions == 10 and verts.n_actions == 8
    assert np.sum(arms.probabilities()) == pytest.approx(1.0)
    assert np.sum(verts.probabilities()) == pytest.approx(1.0)


def test_private_exp2_wraps_the_implementation_of_its_domain():
    agent = make("private-exp2", _problem("DPBandit-Linear-v1", domain="cube", dim=3),
                 epsilon=1.0)
    assert isinstance(agent, PrivateEXP2) and type(agent.base) is EXP2
    assert not agent.base.plays_arms


def test_exp2_has_no_constructor_dispatch_and_lists_its_options():
    assert "__new__" not in vars(EXP2)
    assert not [c for c in vars(exp2_module).values()
                if isinstance(c, type) and issubclass(c, EXP2) and c is not EXP2]
    assert list(inspect.signature(EXP2).parameters)[-4:] == [
        "eta", "gamma", "noise_scale", "loss_range"]


@pytest.mark.parametrize("env_id,kw", [("DPBandit-MAB-v0", {}),
                                       ("DPBandit-Linear-v1", {"domain": "cube", "dim": 3})])
def test_exp2_copies_and_pickles_keep_their_type_and_play(env_id, kw):
    agent = make("exp2", _problem(env_id, **kw), seed=0)
    clones = [copy.deepcopy(agent), pickle.loads(pickle.dumps(agent))]
    played = [agent.act() for _ in range(5)]
    for clone in clones:
        assert type(clone) is EXP2
        assert [np.asarray(clone.act()).tolist() for _ in range(5)] == [
            np.asarray(a).tolist() for a in played]


def test_exp2_refuses_a_domain_without_enumerable_vertices():
    with pytest.raises(ValueError, match="enumerable vertices|linear losses"):
        make("exp2", _problem("DPBandit-Linear-v1", domain="ball"))


def test_counter_spec_is_frozen_and_built_once():
    agent = make("private-ftrl", _problem("DPFullInfo-Experts-v0"), epsilon=1.0)
    spec = agent.counter_spec
    assert spec == CounterSpec(counter="agarwal-singh", noise="laplace",
                               sensitivity=agent.sensitivity, epsilon=1.0, delta=0.0,
                               horizon=50, dim=10)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.noise = None  # type: ignore[misc]
    assert (agent.counter_name, agent.noise, agent.counter_sensitivity) == (
        "agarwal-singh", "laplace", spec.sensitivity)


def test_spec_overrides_reach_the_counter():
    agent = make("private-projection-free", _problem("DPBandit-Matroid-v1"), epsilon=1.0)
    spec = agent.counter_spec
    assert spec.horizon == agent.rounds and spec.dim == agent.geometry.rank
    counter = agent._make_counter(np.random.default_rng(0))
    assert (counter.horizon, counter.dim) == (agent.rounds, agent.geometry.rank)


def test_noise_off_switches_the_next_counter_to_exact_sums():
    agent = make("private-ftrl", _problem("DPFullInfo-Experts-v0"), epsilon=1.0, seed=0)
    agent.noise = None
    assert agent.counter_spec.noise is None
    counter = agent._make_counter(np.random.default_rng(0))
    assert counter.noise is None and counter.max_noise_variance() == 0.0
