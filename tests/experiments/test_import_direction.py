"""The direction of the dependencies: ``agents`` uses ``dp_online_envs``, not the reverse.

The experiments resolve agent names through an ``AgentResolver`` passed in; the
``agents`` registry is only the default, reached in one function
(:func:`dp_online_envs.lab.experiments.resolver.default_resolver`). These tests hold the
rule statically (no other module of ``dp_online_envs`` imports ``agents``; the
experiments import everything else at module level, optional extras excepted), at run
time (importing every module leaves ``agents`` unimported), and in use (a resolver of
one's own serves sweeps, runs and worker processes without the ``agents`` registry).
"""

from __future__ import annotations

import ast
import dataclasses
import json
import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest

import agents
import dp_online_envs
from dp_online_envs.lab.experiments import ExperimentError, make_games, parse_sweep, run_games
from dp_online_envs.lab.experiments.game import OUTCOME_FIELDS, GameSpec, play_game
from dp_online_envs.lab.experiments.resolver import AgentResolver, default_resolver, resolve_agent
from dp_online_envs.lab.experiments.store import OPTIONAL_KEYS, REQUIRED_KEYS
from dp_online_envs.wrappers import RegretSummary

PACKAGE = pathlib.Path(dp_online_envs.__file__).parent
#: The only place in dp_online_envs that imports the agents package.
SEAM = ("lab/experiments/resolver.py", "default_resolver")
#: Modules the experiments may import inside a function: optional extras (and
#: scipy.stats, slow to import and needed only for confidence intervals).
LAZY_OK = {"yaml", "tomllib", "tomli", "matplotlib", "dask", "tqdm", "pandas", "pyarrow",
           "fcntl", "scipy", "agents"}


def _imports(path: pathlib.Path) -> list[tuple[str, str | None]]:
    """``(module, enclosing function or None)`` of every import statement in a file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[str, str | None]] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name)
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                found.append((child.module, function))
            elif (isinstance(child, ast.Call) and getattr(child.func, "attr", None)
                  == "import_module" and child.args
                  and isinstance(child.args[0], ast.Constant)):
                found.append((str(child.args[0].value), function))
            visit(child, function)

    visit(tree, None)
    return found


def _top(module: str) -> str:
    return module.partition(".")[0]


def test_only_the_seam_imports_agents():
    users = {(str(path.relative_to(PACKAGE)), function)
             for path in PACKAGE.rglob("*.py")
             for module, function in _imports(path) if _top(module) == "agents"}
    assert users == {SEAM}


def test_experiments_import_at_module_level_except_optional_extras():
    lazy = {(path.name, module) for path in (PACKAGE / "lab" / "experiments").glob("*.py")
            for module, function in _imports(path)
            if function is not None and _top(module) not in LAZY_OK}
    assert lazy == set()


def test_importing_every_module_leaves_agents_unimported():
    code = ("import importlib, json, pkgutil, sys, dp_online_envs\n"
            "names = [m.name for m in pkgutil.walk_packages(dp_online_envs.__path__, "
            "'dp_online_envs.')]\n"
            "for n in names: importlib.import_module(n)\n"
            "print(json.dumps({'names': names, 'agents': 'agents' in sys.modules}))")
    out = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                    text=True, check=True, cwd=PACKAGE.parent).stdout)
    assert {"dp_online_envs.lab.cli", "dp_online_envs.lab.experiments.runner",
            "dp_online_envs.lab.experiments.report", "dp_online_envs.lab.isolation"} <= set(out["names"])
    assert out["agents"] is False


def test_the_default_resolver_is_the_agents_registry():
    resolver = default_resolver()
    assert resolver is agents.registry and isinstance(resolver, AgentResolver)
    assert resolver.base is agents.Agent
    assert resolver.names() == [n for n, _ in agents.list_agents()]
    assert resolver.resolve("hedge") is agents.agent_class("hedge")
    assert pickle.loads(pickle.dumps(resolver)) is resolver
    with pytest.raises(ValueError, match="unknown agent"):
        resolver.resolve("nobody")


class Greedy(agents.Agent):
    """Follow the leader on a linear loss: the vertex minimizing the losses so far."""

    name = "greedy"
    feedback = "full"

    def reset(self, seed=None):
        super().reset(seed)
        self.total = np.zeros(self.problem.dim)

    def act(self):
        return self.problem.domain.linear_minimizer(self.total)

    def update(self, action, feedback):
        self.total += self.clip_feedback(feedback)
        self.t += 1


class OwnRegistry:
    """A resolver of one's own: one agent, under a name the agents registry lacks."""

    base = agents.Agent

    def resolve(self, name: str) -> type:
        if name != "my-greedy":
            raise ValueError(name)
        return Greedy

    def names(self) -> list[str]:
        return ["my-greedy"]


def test_a_resolver_of_ones_own_serves_sweeps_runs_and_workers():
    mine = OwnRegistry()
    assert isinstance(mine, AgentResolver)
    sweep = parse_sweep({"envs": ["DPFullInfo-Experts-v0"], "agents": ["my-greedy"],
                         "horizons": [50], "seeds": 2}, resolver=mine)
    assert all(g.agent_cls is Greedy for g in sweep.games)
    serial = run_games(sweep.games, backend="serial")
    local = run_games(sweep.games, backend="local", workers=2)  # classes travel by pickle
    assert serial.ok and local.ok, (serial.failures, local.failures)
    assert [r["agent"] for r in serial.records] == ["my-greedy"] * 2
    strip = [{k: v for k, v in r.items() if k not in ("wall_time", "finished_at")}
             for r in serial.records]
    assert strip == [{k: v for k, v in r.items() if k not in ("wall_time", "finished_at")}
                     for r in local.records]
    # a hand-written game resolves by name with the resolver it is given
    bare = GameSpec("DPFullInfo-Experts-v0", "my-greedy", None, None, 50, 0)
    assert play_game(bare, mine)["regret"] == serial.records[0]["regret"]
    assert run_games([bare], backend="serial", resolver=mine).ok
    # names are looked up in the resolver given, and only there
    with pytest.raises(ExperimentError, match=r"unknown agent 'hedge'; .*\['my-greedy'\]"):
        make_games("DPFullInfo-Experts-v0", "hedge", epsilon=None, delta=None, horizon=10,
                   seeds=1, resolver=mine)
    with pytest.raises(ExperimentError, match="did you mean 'my-greedy'"):
        resolve_agent("my-gredy", mine)
    with pytest.raises(ExperimentError, match="is not a subclass of agents.Agent$"):
        resolve_agent(dict, mine)


def test_the_record_takes_every_summary_field_in_its_place():
    blank = RegretSummary(**{f.name: 0 for f in dataclasses.fields(RegretSummary)})
    summary_fields = set(blank.as_dict())
    assert set(OUTCOME_FIELDS) == summary_fields | {"clipped_feedback"}
    record = play_game(GameSpec("DPFullInfo-Experts-v0", "hedge", None, None, 60, 0))
    assert [k for k in record if k not in OPTIONAL_KEYS] == list(REQUIRED_KEYS)
    for key, as_type in OUTCOME_FIELDS.items():
        assert json.dumps(record[key]) == json.dumps(as_type(record[key]))
    assert type(record["exact"]) is bool and type(record["rounds"]) is int
    assert all(type(c) is int for c in record["checkpoints"])
    assert all(type(v) is float for v in record["regret_curve_lo"] + record["regret_curve_hi"])
