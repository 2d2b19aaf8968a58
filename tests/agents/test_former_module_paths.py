"""The agents' former module paths import for one release, with a ``DeprecationWarning``,
as the renamed modules themselves (no file remains at a former path)."""

from __future__ import annotations

import importlib
import pathlib
import sys
import warnings

import pytest

import agents

ROOT = pathlib.Path(agents.__file__).resolve().parent.parent
FORMER = {
    "agents.batched": "agents.vector",
    "agents.batched.arms": "agents.vector.arms",
    "agents.vectorized": "agents.vector",
    "agents.vectorized.base": "agents.vector.base",
    "agents.vectorized.counters": "agents.vector.counters",
    "agents.bandit.adap": "agents.bandit.adap_ucb",
    "agents.bandit.bandit_submod": "agents.bandit.bandit_submod_pftal",
    "agents.bandit.batched": "agents.bandit.private_batched_htinf",
    "agents.bandit.projection_free": "agents.bandit.private_projection_free",
    "agents.bandit.reduction": "agents.bandit.private_bandit",
    "agents.bandit.tuned_projection_free": "agents.bandit.private_projection_free_tuned",
    "agents.full_info.ftpl": "agents.full_info.private_ftpl",
    "agents.full_info.l2p": "agents.full_info.private_lazy_mw",
}


@pytest.mark.parametrize("old", sorted(FORMER))
def test_a_former_agents_path_warns_and_is_the_new_module(old):
    parent = old.rpartition(".")[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        importlib.import_module(parent)  # a former parent warns on its own
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"^{old} moved to {FORMER[old]};"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(FORMER[old])
    path = ROOT / old.replace(".", "/")
    assert not path.exists() and not path.with_suffix(".py").exists()


def test_every_registered_agent_lives_in_a_current_module():
    for info in agents.list_agents():
        module = agents.agent_class(info.name).__module__
        assert module not in FORMER and (ROOT / (module.replace(".", "/") + ".py")).exists()
