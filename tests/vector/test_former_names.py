"""The former names of the vector concept ("batched", "vectorized") work for one release,
each with a ``DeprecationWarning`` naming its new name, and are the new objects.

The former module paths (``agents.vectorized``, ``dp_online_envs.lab.audit.batched``,
...) are checked with the other former paths (``tests/test_layers.py``,
``tests/agents/test_former_module_paths.py``).
"""

from __future__ import annotations

import importlib
import re
import warnings

import pytest

import agents
from dp_online_envs.envs.vector_env import LinearVectorEnv
from dp_online_envs.lab.experiments.game import GameSpec
from dp_online_envs.lab.experiments.resolver import vector_method
from dp_online_envs.lab.experiments.vector import batch_refusal, play_batch

#: (module, former name, new name): every public name renamed.
FORMER_NAMES = [
    ("agents.vector", "make_batched", "make_vector"),
    ("agents.vector", "make_audit_batched", "make_audit_vector"),
    ("agents.vector", "batched_refusal", "vector_refusal"),
    ("agents.vector", "BATCHED", "VECTOR"),
    ("agents.vector", "AUDIT_BATCHED", "AUDIT_VECTOR"),
    ("agents.vector", "BatchedAgent", "VectorAgent"),
    ("agents.vector", "BatchedArms", "VectorArms"),
    ("agents.vector", "BatchedPrivateEXP2", "VectorPrivateEXP2"),
    ("agents.vector", "BatchedHedge", "VectorHedge"),
    ("agents.vector", "BatchedFTRL", "VectorFTRL"),
    ("agents.vector", "BatchedPrivateFTRL", "VectorPrivateFTRL"),
    ("agents.vector", "BatchedPrivateFTPL", "VectorPrivateFTPL"),
    ("agents.vector.base", "BatchedAgent", "VectorAgent"),
    ("agents.vector.arms", "BatchedArms", "VectorArms"),
    ("agents.vector.arms", "BatchedPrivateEXP2", "VectorPrivateEXP2"),
    ("agents.vector.hedge", "BatchedHedge", "VectorHedge"),
    ("agents.vector.ftrl", "BatchedFTRL", "VectorFTRL"),
    ("agents.vector.ftrl", "BatchedPrivateFTRL", "VectorPrivateFTRL"),
    ("agents.vector.ftpl", "BatchedPrivateFTPL", "VectorPrivateFTPL"),
    ("agents.vector.counters", "BatchedAgarwalSingh", "VectorAgarwalSingh"),
    ("agents.privacy.noise", "BatchedExactNoise", "VectorExactNoise"),
    ("dp_online_envs.loop", "run_batched_rounds", "run_vector_rounds"),
    ("dp_online_envs.loop", "BatchedLearner", "VectorLearner"),
    ("dp_online_envs.lab.audit", "BatchedSession", "VectorSession"),
    ("dp_online_envs.lab.audit", "BatchedSessionFactory", "VectorSessionFactory"),
    ("dp_online_envs.lab.audit.sessions", "BatchedSession", "VectorSession"),
    ("dp_online_envs.lab.audit.sessions", "BatchedSessionFactory", "VectorSessionFactory"),
    ("dp_online_envs.lab.audit.vector", "batched_scores", "vector_scores"),
]


def _warning(module: str, old: str, new: str) -> str:
    return f"^{re.escape(f'{module}.{old} is now {module}.{new}')}; the old name goes away"


@pytest.mark.parametrize(("module", "old", "new"), FORMER_NAMES)
def test_a_former_name_warns_and_is_the_new_object(module, old, new):
    mod = importlib.import_module(module)
    assert old not in vars(mod) and new in vars(mod)  # answered by __getattr__ alone
    with pytest.warns(DeprecationWarning, match=_warning(module, old, new)) as caught:
        value = getattr(mod, old)
    assert len(caught) == 1 and value is getattr(mod, new)
    with pytest.warns(DeprecationWarning, match=_warning(module, old, new)):
        exec(f"from {module} import {old} as value", namespace := {})
    assert namespace["value"] is getattr(mod, new)


@pytest.mark.parametrize("module", sorted({m for m, _, _ in FORMER_NAMES}))
def test_other_missing_names_still_raise_attribute_error(module):
    mod = importlib.import_module(module)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match=f"module '{module}' has no attribute 'Batched'"):
            mod.Batched  # noqa: B018
        assert not hasattr(mod, "make_batchedx")


def test_the_registrys_former_methods_warn_and_build_the_vector_forms():
    venv = LinearVectorEnv("DPBandit-MAB-v0", 2, horizon=5)
    with pytest.warns(DeprecationWarning, match=r"^Registry\.batched is now Registry\.vector;"):
        old = agents.registry.batched("exp3", venv.problem)
    with pytest.warns(DeprecationWarning,
                      match=r"^Registry\.audit_batched is now Registry\.audit_vector;"):
        old_audit = agents.registry.audit_batched("private-exp2", venv.problem, epsilon=1.0)
    assert type(old) is type(agents.registry.vector("exp3", venv.problem))
    assert type(old_audit) is type(agents.registry.audit_vector("private-exp2", venv.problem,
                                                                 epsilon=1.0))
    assert type(old_audit).__name__ == "SharedStreamPrivateEXP2"
    # the per-seed registry has no audit form under either name
    assert agents.per_seed_registry.audit_vector is None
    assert agents.per_seed_registry.audit_batched is None


class _FormerResolver:
    """A resolver written for the previous release: ``batched``, not ``vector``."""

    base = agents.Agent

    def resolve(self, name):
        return agents.registry.resolve(name)

    def names(self):
        return agents.registry.names()

    def batched(self, *args, **kwargs):
        return agents.registry.vector(*args, **kwargs)


def _specs(n):
    return [GameSpec(env_id="DPBandit-MAB-v0", agent="exp3", epsilon=None, delta=None,
                     horizon=20, seed_index=i) for i in range(n)]


def test_a_resolver_of_the_previous_release_still_plays_vector_games_and_warns():
    spec = _specs(1)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert batch_refusal(spec, agents.registry) is None  # the new name: no warning
        new = play_batch(_specs(3), agents.registry)
    with pytest.warns(DeprecationWarning, match="the resolver's method 'batched' is now 'vector'"):
        assert batch_refusal(spec, _FormerResolver()) is None
    with pytest.warns(DeprecationWarning, match="the resolver's method 'batched' is now 'vector'"):
        old = play_batch(_specs(3), _FormerResolver())
    volatile = ("wall_time", "finished_at")
    assert ([{k: v for k, v in r.items() if k not in volatile} for r in old] ==
            [{k: v for k, v in r.items() if k not in volatile} for r in new])


def test_vector_method_prefers_the_new_name_and_honours_none():
    class Both(_FormerResolver):
        def vector(self, *args, **kwargs):
            return "new"

    class Neither:
        pass

    class NoAudit(_FormerResolver):
        audit_vector = None
        audit_batched = staticmethod(lambda *a, **k: "old")

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert vector_method(Both(), "vector")() == "new"
        assert vector_method(Neither(), "vector") is None
        assert vector_method(Neither(), "audit_vector") is None
        assert vector_method(NoAudit(), "audit_vector") is None  # None: no such method
