"""The agent catalog (:data:`agents.catalog.HOMES`): ``import agents`` imports no learner,
and every name is still found, listed, resolved and guarded as when all were imported.

The laziness is only visible in a fresh interpreter (this one has imported every
learner), so those checks run in a child process.
"""

from __future__ import annotations

import importlib
import json
import pathlib
import subprocess
import sys

import agents
from agents.base import _REGISTRY
from agents.catalog import HOMES

ROOT = pathlib.Path(agents.__file__).resolve().parent.parent


def _fresh(code: str) -> dict:
    """What ``code`` (run in a fresh interpreter) prints as JSON on its last line."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=ROOT, check=False)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_catalog_is_what_the_learner_modules_register():
    """Every module that registers an agent (its source has ``@register``) imported: the
    agents of the ``agents`` package are exactly the catalog's names, each in its home."""
    for path in sorted((ROOT / "agents").rglob("*.py")):
        if "@register" in path.read_text():
            importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
    registered = {name: cls.__module__ for name, cls in _REGISTRY.items()
                  if cls.__module__.split(".")[0] == "agents"}
    assert registered == HOMES


def test_import_agents_imports_no_learner_and_a_lookup_imports_its_own():
    learners = sorted(set(HOMES.values()))
    found = _fresh(f"""
import json, sys
import agents
before = [m for m in {learners!r} + ["agents.vector", "agents.common"] if m in sys.modules]
cls = agents.agent_class("hedge")
after = sorted(m for m in {learners!r} if m in sys.modules)
try:
    agents.agent_class("exp33")
except ValueError as exc:
    unknown = str(exc)
print(json.dumps({{"before": before, "after": after, "hedge": cls.__module__,
                  "unknown": unknown}}))
""")
    assert found["before"] == []
    assert found["hedge"] == "agents.full_info.hedge"
    # the lookup imported its family (agents.full_info's __init__ imports its modules)
    # and no bandit learner
    assert found["after"] == sorted(m for m in set(HOMES.values())
                                    if m.startswith("agents.full_info."))
    # an unknown name: every built-in agent is imported to list them
    assert found["unknown"] == ("unknown agent 'exp33'; did you mean 'exp3'? registered: "
                                f"{sorted(HOMES)}")


def test_a_fresh_interpreter_lists_every_agent_and_reaches_the_submodules():
    found = _fresh("""
import json, sys
import agents
out = {"submodule": agents.bandit.exp3.__name__}  # before any lookup imports it
out["listed"] = [info.name for info in agents.list_agents()]
out["descriptions"] = {info.name: info.description for info in agents.list_agents()}
out["names"] = agents.registry.names()
try:
    agents.no_such_module
except AttributeError as exc:
    out["missing"] = str(exc)
print(json.dumps(out))
""")
    assert found["listed"] == sorted(HOMES)
    assert found["descriptions"] == {n: agents.agent_class(n).description for n in HOMES}
    assert found["names"] == sorted(HOMES)
    assert found["submodule"] == "agents.bandit.exp3"
    assert found["missing"] == "module 'agents' has no attribute 'no_such_module'"


def test_a_class_taking_a_built_in_name_is_refused_before_its_module_is_imported():
    """A user's class named ``hedge``, registered before ``hedge``'s module was imported,
    is refused as it was when every learner was imported with the package."""
    found = _fresh("""
import json, sys
import agents
class Mine(agents.Agent):
    name = "hedge"
    description = "not hedge"
    feedback = "full"
    private = False
    def act(self):
        return 0
    def update(self, action, feedback):
        pass
try:
    agents.register(Mine)
    out = {"refused": None}
except ValueError as exc:
    out = {"refused": str(exc)}
out["hedge"] = agents.agent_class("hedge").__module__
print(json.dumps(out))
""")
    assert found == {"refused": "an agent named 'hedge' is already registered",
                     "hedge": "agents.full_info.hedge"}
