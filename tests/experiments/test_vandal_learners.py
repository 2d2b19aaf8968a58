"""A learner cannot rewrite its game: vandals through every door.

A vandal (:mod:`experiments.vandal_agents`) changes every attribute of everything it
holds -- the ``Problem`` and its domain and loss family, the spaces, the metadata, the
spec, the generators -- while it plays a fixed sequence of actions. Through each door
(the scalar env of ``gym.make``, the vector ``LinearVectorEnv``, ``gym.make_vec``'s
scalar games, the in-process runner behind ``dp-online run``, and isolated play) the
regret reported must be the regret of the same play without the vandalism, bit for
bit. The problem a learner holds is a read-only copy: ``problem.domain.radius = 1e-9``
raises ``AttributeError`` (the vandal checks it through every door before it plays), and
a learner that forces the write with ``object.__setattr__`` shrinks its own copy, never
the env's decision set.
"""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest

from dp_online_envs import ENV_IDS
from dp_online_envs.envs.vector_env import (
    VECTOR_ENV_IDS,
    VECTOR_LEARNER_ATTRIBUTES,
    LinearVectorEnv,
)
from dp_online_envs.lab.experiments.runner import run
from dp_online_envs.loop import run_rounds
from dp_online_envs.wrappers import regret_summary
from dp_online_envs.wrappers.feedback import LEARNER_ATTRIBUTES
from experiments.vandal_agents import Vandal, vandalize, write_accepted

T, B, SEED = 24, 3, 12345
MOD = "experiments.vandal_agents:Vandal"
#: The learner's doors of the scalar guard that hold values (not methods).
SCALAR_VALUES = sorted(LEARNER_ATTRIBUTES - {"step", "reset", "render", "close", "summary"})


def _vandalize_scalar_env(env: gym.Env) -> int:
    """Everything a learner holding ``env`` reaches through its public names."""
    changed = 0
    for name in SCALAR_VALUES:
        changed += vandalize(env.get_wrapper_attr(name))
    for name in ("action_space", "observation_space", "metadata", "np_random", "spec"):
        changed += vandalize(getattr(env, name))
    return changed


def _scalar_regret(env_id: str, vandal: bool) -> dict:
    env = gym.make(env_id, horizon=T)
    agent = Vandal(env.get_wrapper_attr("problem"), seed=1, vandal=vandal)
    env.reset(seed=SEED)
    agent.reset(seed=1)
    changed = [_vandalize_scalar_env(env) if vandal else 0]

    def hook(t, action, obs):
        if vandal:
            changed[0] += _vandalize_scalar_env(env)

    run_rounds(env, agent, hook)
    summary = regret_summary(env).as_dict()
    assert (changed[0] > 0 and agent.changed > 0) == vandal
    if vandal:  # its plain writes to the domain and the losses raised (it forced them)
        refused = {name.split(".")[0] for name in agent.refused}
        assert {type(env.unwrapped.domain).__name__,
                type(env.unwrapped.loss).__name__} <= refused, agent.refused
    return summary


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_vandal_on_the_scalar_env_changes_no_regret(env_id):
    assert _scalar_regret(env_id, True) == _scalar_regret(env_id, False)


def test_the_problem_is_a_fresh_copy_sharing_nothing_with_the_env():
    """Shrinking the ball of one's problem raises; forced, it shrinks one's copy only."""
    env = gym.make("DPFullInfo-Sphere-v1", horizon=T)
    mine = env.get_wrapper_attr("problem")
    radius = env.unwrapped.domain.radius
    with pytest.raises(AttributeError, match=r"cannot set Ball\.radius: the decision set a "
                       r"learner receives is a read-only view.*configured when the env is made"):
        mine.domain.radius = 1e-9
    with pytest.raises(AttributeError, match=r"cannot set LinearLoss\.theta_set"):
        mine.loss.theta_set = "ball"
    with pytest.raises(AttributeError, match="radius"):
        del mine.domain.radius
    assert mine.domain.radius == radius
    object.__setattr__(mine.domain, "radius", 1e-9)  # forced: one's own copy
    assert env.unwrapped.domain.radius == radius
    assert env.get_wrapper_attr("problem").domain.radius == radius  # the next copy
    assert mine.domain is not env.unwrapped.domain and mine.loss is not env.unwrapped.loss
    assert env.action_space is not env.unwrapped.action_space


def _vector_regret(env_id: str, vandal: bool) -> list[dict]:
    venv = LinearVectorEnv(env_id, B, horizon=T)
    agents = [Vandal(venv.problem, seed=1, vandal=vandal) for _ in range(B)]
    venv.reset(seed=SEED)
    for agent in agents:
        agent.reset(seed=1)
    for _ in range(T):
        if vandal:
            for name in sorted(VECTOR_LEARNER_ATTRIBUTES - {"summary"}):
                vandalize(venv.get_attr(name))
            for name in ("problem", "single_action_space", "single_observation_space",
                         "action_space", "observation_space", "metadata", "spec",
                         "np_random"):
                vandalize(getattr(venv, name))
        actions = np.stack([np.asarray(a.act()) for a in agents])
        venv.step(actions)
        for a, x in zip(agents, actions):
            a.update(x, None)
    return [s.as_dict() for s in venv.summaries()]


@pytest.mark.parametrize("env_id", VECTOR_ENV_IDS)
def test_a_vandal_on_the_vector_env_changes_no_regret(env_id):
    assert _vector_regret(env_id, True) == _vector_regret(env_id, False)


def _sync_regret(env_id: str, vandal: bool) -> list[dict]:
    envs = gym.make_vec(env_id, num_envs=B, horizon=T)
    agents = [Vandal(p, seed=1, vandal=vandal) for p in envs.get_attr("problem")]
    envs.reset(seed=SEED)
    for agent in agents:
        agent.reset(seed=1)
    summaries: list = [None] * B
    for _ in range(T):
        if vandal:
            for name in SCALAR_VALUES:
                vandalize(envs.get_attr(name))
            for name in ("single_action_space", "single_observation_space",
                         "action_space", "observation_space", "metadata", "np_random"):
                vandalize(getattr(envs, name))
        actions = np.stack([np.asarray(a.act()) for a in agents])
        _, _, term, _, info = envs.step(actions)
        for b in np.flatnonzero(term):
            summaries[b] = info["regret"][b].as_dict()
        for a, x in zip(agents, actions):
            a.update(x, None)
    return summaries


@pytest.mark.parametrize("env_id", ["DPFullInfo-Sphere-v1", "DPBandit-MAB-v0"])
def test_a_vandal_on_make_vec_scalar_games_changes_no_regret(env_id):
    assert _sync_regret(env_id, True) == _sync_regret(env_id, False)


def _run_regret(env_id: str, vandal: bool, isolate: bool) -> tuple:
    [record] = run(env_id, MOD, horizon=T, seeds=[0], backend="serial",
                   agent_kwargs={"vandal": vandal}, isolate=isolate)
    return tuple(record[k] for k in sorted(record) if "regret" in k)


@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "isolated"])
@pytest.mark.parametrize("env_id", ["DPFullInfo-Sphere-v1", "DPBandit-Linear-v1"])
def test_a_vandal_in_a_run_changes_no_regret(env_id, isolate):
    """``dp-online run`` (in-process, the default, and ``--isolate``): the record's
    regret is the same play's; in-process, the vandal shrank its own ball to 1e-9."""
    vandalized = _run_regret(env_id, True, isolate)
    assert vandalized == _run_regret(env_id, False, isolate)
    assert vandalized and all(np.isfinite(v) for v in vandalized if isinstance(v, float))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_write_to_a_learners_domain_and_losses_raises(env_id):
    """Every attribute of the domain and loss family a learner holds refuses a plain
    write and a delete; the copies keep the env's classes (``type(domain) is Ball``
    checks hold) and leave the env's own objects writable by the env."""
    env = gym.make(env_id, horizon=T)
    mine = env.get_wrapper_attr("problem")
    assert write_accepted(mine) == []
    assert write_accepted(env.unwrapped.problem) != []  # the env's own: not a view
    assert type(mine.domain) is type(env.unwrapped.domain)
    assert type(mine.loss) is type(env.unwrapped.loss)
    assert mine.domain.center.shape == (mine.domain.dim,)  # cached values still fill in
    assert write_accepted(copy.deepcopy(mine)) == []
    try:
        pickled = pickle.dumps(mine)
    except (AttributeError, TypeError, pickle.PicklingError):  # a set function's lambda
        return
    assert write_accepted(pickle.loads(pickled)) == []
