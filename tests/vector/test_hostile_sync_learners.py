"""Hostile learners against ``gym.make_vec(id, num_envs=B)``, door by door: ``spec``,
``env_fns``, ``get_attr``, ``call``, ``envs``, ``unwrapped``.

The experimenter gives the adversary as an object (a replay of every coming loss) or
its options (the mean of the losses, from which the best arm follows). A learner
holding the vector env walks every public name it has (never ``.env``, ``.unwrapped``
of a scalar env, nor a name starting with ``_``: the documented in-process limit) and
must find neither. The same walk finds both in Gymnasium's own ``SyncVectorEnv``
(``vectorization_mode="sync"``), which shows the walk is strong enough.
"""

from __future__ import annotations

import copy
import functools
import pickle
import types

import gymnasium as gym
import numpy as np
import pytest

from dp_online_envs.adversaries import LossSequence, ReplayAdversary
from dp_online_envs.envs.sync_vector import GuardedSyncVectorEnv
from dp_online_envs.wrappers.feedback import LEARNER_ATTRIBUTES, WITHHELD

T, B = 30, 3
THETAS = np.random.default_rng(1).random((T, 10))
MEAN = np.linspace(0.15, 0.85, 10)


def _secrets() -> list[dict]:
    return [{"adversary": ReplayAdversary(LossSequence(THETAS.copy()))},
            {"adversary": "stochastic", "adversary_kwargs": {"mean": MEAN.copy()}}]


def _is_secret(value) -> bool:
    if isinstance(value, (ReplayAdversary, LossSequence)):
        return True
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return any(value.shape == s.shape and np.array_equal(value, s) for s in (THETAS, MEAN))
    return False


_LEAVES = (str, bytes, int, float, bool, complex, type(None), type, types.ModuleType,
           types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def _walk(root, depth: int = 7) -> list[str]:
    """The paths of the secrets reachable from ``root`` through public names (no name
    starting with ``_``, no ``env``/``unwrapped`` of a scalar env) and containers; a
    closure's cells count as reachable (``f.__closure__`` is public Python)."""
    found, seen = [], set()

    def visit(obj, path, d):
        if _is_secret(obj):
            found.append(path)
            return
        if d == 0 or id(obj) in seen or isinstance(obj, _LEAVES[:7]) or \
                isinstance(obj, (np.ndarray, np.random.Generator)):
            return
        seen.add(id(obj))
        if isinstance(obj, dict):
            for k, v in list(obj.items()):
                visit(v, f"{path}[{k!r}]", d - 1)
            return
        if isinstance(obj, (list, tuple, set, frozenset)):
            for i, v in enumerate(list(obj)):
                visit(v, f"{path}[{i}]", d - 1)
            return
        if isinstance(obj, (types.FunctionType, functools.partial)):
            for i, cell in enumerate(getattr(obj, "__closure__", None) or ()):
                visit(cell.cell_contents, f"{path}.__closure__[{i}]", d - 1)
            for name in ("args", "keywords"):
                if hasattr(obj, name):
                    visit(getattr(obj, name), f"{path}.{name}", d - 1)
            return
        if isinstance(obj, _LEAVES):
            return
        for name in dir(obj):
            if name.startswith("_") or name in ("env", "unwrapped"):
                continue
            try:
                value = getattr(obj, name)
            except Exception:  # noqa: BLE001  (a withheld door raises: nothing found)
                continue
            if isinstance(value, types.MethodType):
                continue
            visit(value, f"{path}.{name}", d - 1)

    visit(root, "envs", depth)
    return found


@pytest.mark.parametrize("kwargs", _secrets(), ids=["replay-object", "adversary-mean"])
def test_gymnasiums_own_sync_env_leaks_what_the_walk_looks_for(kwargs):
    plain = gym.make_vec("DPBandit-MAB-v0", num_envs=B, horizon=T, vectorization_mode="sync",
                         **kwargs)
    assert _walk(plain) and _walk(plain.spec) and _walk(plain.env_fns)


@pytest.mark.parametrize("kwargs", _secrets(), ids=["replay-object", "adversary-mean"])
def test_no_public_name_of_make_vec_reaches_the_adversary(kwargs):
    envs = gym.make_vec("DPBandit-MAB-v0", num_envs=B, horizon=T, **kwargs)
    assert type(envs) is GuardedSyncVectorEnv
    envs.reset(seed=3)
    envs.step(np.zeros(B, dtype=np.int64))
    assert _walk(envs) == []
    assert envs.unwrapped is envs and envs.unwrapped.spec.kwargs["adversary"] == WITHHELD
    spec = envs.spec
    assert spec.kwargs["adversary"] == WITHHELD and spec.kwargs["adversary_kwargs"] is None
    text = pickle.dumps(spec)
    assert THETAS.tobytes() not in text and MEAN.tobytes() not in text
    assert b"ReplayAdversary" not in text
    with pytest.raises(ValueError, match="unknown adversary"):
        gym.make_vec(spec)  # the withheld adversary does not rebuild
    with pytest.raises(AttributeError, match="withholds 'env_fns'"):
        envs.env_fns  # noqa: B018
    for scalar in envs.envs:  # the scalar envs' own doors
        assert scalar.spec.kwargs["adversary"] == WITHHELD
        assert scalar.get_wrapper_attr("spec").kwargs["adversary"] == WITHHELD


@pytest.mark.parametrize("door", ["get_attr", "call"])
def test_get_attr_and_call_answer_only_the_guards_names(door):
    envs = gym.make_vec("DPBandit-MAB-v0", num_envs=B, horizon=T, **_secrets()[0])
    envs.reset(seed=3)
    for name in ("env", "unwrapped", "adversary", "env_fns", "spec_kwargs", "envs",
                 "get_wrapper_attr", "played_losses", "totals"):
        with pytest.raises(AttributeError, match=f"withholds {name!r}"):
            getattr(envs, door)(name)
    for name in sorted(LEARNER_ATTRIBUTES - {"step", "reset", "close", "render", "summary"}):
        assert len(getattr(envs, door)(name)) == B
    assert all(s.kwargs["adversary"] == WITHHELD for s in envs.get_attr("spec"))
    with pytest.raises(AttributeError, match="refuses set_attr"):
        envs.set_attr("horizon", [1] * B)


def test_the_guarded_sync_env_cannot_be_copied_or_pickled():
    envs = gym.make_vec("DPBandit-MAB-v0", num_envs=B, horizon=T)
    for attempt in (copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="cannot be copied or pickled"):
            attempt(envs)


def test_the_seeds_are_not_handed_out():
    envs = gym.make_vec("DPBandit-MAB-v0", num_envs=B, horizon=T)
    envs.reset(seed=3)
    assert envs.np_random_seed == (-1,) * B
    assert envs.get_attr("np_random") == envs.np_random
