"""The three layers and the import graph, read from the source (``ast``, no imports run).

``dp_online_envs`` outside :mod:`dp_online_envs.lab` is the game; ``agents`` the learners;
``dp_online_envs.lab`` the harness. The rules: only the lab imports ``agents``; neither
the game nor ``agents`` imports the lab; and no module reaches itself through imports
(a strongly connected component of more than one module is a circle). Every import
statement counts, those inside functions too, and relative ones are resolved.

The checks are also run on small packages written here, so that each can be seen to
fail; the former import paths of the lab are checked to warn and to serve the same
modules.
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import subprocess
import sys
import warnings

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("dp_online_envs", "agents")
LAB = "dp_online_envs.lab"


def module_files(root: pathlib.Path, packages: tuple[str, ...]) -> dict[str, pathlib.Path]:
    """Dotted module name -> file, for every ``.py`` file of the packages under ``root``."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _known(name: str, modules: dict[str, pathlib.Path]) -> str | None:
    """The longest prefix of ``name`` that is one of ``modules``."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in modules:
            return ".".join(parts[:i])
    return None


def import_graph(root: pathlib.Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Module -> the modules of ``packages`` it imports (any statement, any depth).

    ``from package import name`` counts as importing ``package.name`` where that is a
    module, else ``package``; an import of a name outside ``packages`` is left out.
    Importing ``a.b.c`` also runs the ``__init__`` of the package ``a.b``, so it counts
    as importing ``a.b`` too (not the top-level package, which every module of it has
    run first, nor a package the importer lies in, which is being imported already).
    """
    modules = module_files(root, packages)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets.update(_known(alias.name, modules) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                targets.update(_known(f"{base}.{alias.name}", modules) if
                               f"{base}.{alias.name}" in modules else _known(base, modules)
                               for alias in node.names)
        targets.discard(None)
        for target in list(targets):  # the package __init__ modules the import runs
            parts = target.split(".")
            targets.update(p for p in (".".join(parts[:i]) for i in range(2, len(parts)))
                           if p in modules and not name.startswith(p + "."))
        graph[name] = targets - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def layer_violations(graph: dict[str, set[str]], lab: str = LAB) -> list[tuple[str, str]]:
    """``(importer, imported)`` pairs that break the layers: ``agents`` imported from
    outside the lab, or the lab imported from outside it."""
    return sorted((m, t) for m, targets in graph.items() if not _in(m, lab) for t in targets
                  if (_in(t, "agents") and not _in(m, "agents")) or _in(t, lab))


# ------------------------------------------------------------------ the product
@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """The product's import graph (parsed when this file runs, not when it is
    collected: every worker collects every file)."""
    return import_graph(ROOT, PACKAGES)


def test_the_graph_covers_every_module_and_sees_function_level_imports(graph):
    assert len(graph) == len(module_files(ROOT, PACKAGES)) > 100
    # default_resolver imports agents inside the function; the lab's command line at
    # module level
    assert "agents" in graph["dp_online_envs.lab.experiments.resolver"]
    assert "dp_online_envs.lab.grading" in graph["dp_online_envs.lab.cli"]
    # relative imports are resolved
    assert "agents.privacy.counters.base" in graph["agents.privacy.counters.blt"]


def test_only_the_lab_imports_agents_and_nothing_outside_it_imports_the_lab(graph):
    assert layer_violations(graph) == []
    assert any(_in(m, LAB) and "agents" in t for m, t in graph.items())


def test_there_are_no_import_circles(graph):
    assert circles(graph) == []


# ------------------------------------------------- the checks on packages of our own
def _write(root: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_circles_finds_a_circle_through_a_function_level_and_a_relative_import(tmp_path):
    root = _write(tmp_path, {
        "agents/__init__.py": "",
        "agents/a.py": "from agents import b\n",
        "agents/b.py": "def f():\n    from .c import g\n",
        "agents/c.py": "import agents.a\n",
        "agents/d.py": "import agents.a\n",  # reaches the circle, is not on it
    })
    assert circles(import_graph(root, ("agents",))) == [["agents.a", "agents.b", "agents.c"]]


def test_circles_finds_a_circle_through_the_init_of_a_package(tmp_path):
    """``import game.envs.base`` runs ``game/envs/__init__.py`` first: a wrapper that
    imports a module of the envs package while that package's ``__init__`` imports the
    wrappers is a circle, though no module imports another module of it directly."""
    root = _write(tmp_path, {
        "agents/__init__.py": "",
        "agents/envs/__init__.py": "from agents.envs import registry\n",
        "agents/envs/registry.py": "from agents import wrappers\n",
        "agents/envs/base.py": "X = 1\n",
        "agents/wrappers/__init__.py": "from agents.wrappers.guard import G\n",
        "agents/wrappers/guard.py": "from agents.envs.base import X\n",
    })
    assert circles(import_graph(root, ("agents",))) == [
        ["agents.envs", "agents.envs.registry", "agents.wrappers", "agents.wrappers.guard"]]


def test_layer_violations_names_each_broken_rule(tmp_path):
    root = _write(tmp_path, {
        "dp_online_envs/__init__.py": "",
        "dp_online_envs/game.py": "def f():\n    import agents.x\n",
        "dp_online_envs/lab/__init__.py": "import agents\n",
        "dp_online_envs/lab/run.py": "from dp_online_envs import game\n",
        "dp_online_envs/uses_lab.py": "from .lab import run\n",
        "agents/__init__.py": "from dp_online_envs import game\n",
        "agents/x.py": "from dp_online_envs.lab.run import f\n",
    })
    graph = import_graph(root, PACKAGES)
    assert layer_violations(graph) == [  # importing lab.run runs lab's __init__ too
        ("agents.x", "dp_online_envs.lab"),
        ("agents.x", "dp_online_envs.lab.run"),
        ("dp_online_envs.game", "agents.x"),
        ("dp_online_envs.uses_lab", "dp_online_envs.lab"),
        ("dp_online_envs.uses_lab", "dp_online_envs.lab.run"),
    ]


# ------------------------------------------------------------- the former paths
FORMER = {
    "dp_online_envs.experiments": "dp_online_envs.lab.experiments",
    "dp_online_envs.experiments.runner": "dp_online_envs.lab.experiments.runner",
    "dp_online_envs.experiments.cli": "dp_online_envs.lab.cli",
    "dp_online_envs.audit.actions": "dp_online_envs.lab.audit.actions",
    "dp_online_envs.grading": "dp_online_envs.lab.grading",
    "dp_online_envs.isolation": "dp_online_envs.lab.isolation",
    "dp_online_envs.sandbox": "dp_online_envs.lab.sandbox",
    "dp_online_envs.envs.rendering": "dp_online_envs.rendering",
    "dp_online_envs.lab.experiments.batched": "dp_online_envs.lab.experiments.vector",
    "dp_online_envs.lab.audit.batched": "dp_online_envs.lab.audit.vector",
    "dp_online_envs.experiments.batched": "dp_online_envs.lab.experiments.vector",
    "dp_online_envs.audit.batched": "dp_online_envs.lab.audit.vector",
}


@pytest.mark.parametrize("old", sorted(FORMER))
def test_a_former_path_warns_and_is_the_new_module(old):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        importlib.import_module(old.rpartition(".")[0])  # the parent's own warning
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"^{old} moved to {FORMER[old]};"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(FORMER[old])
    assert module.__name__ == module.__spec__.name == FORMER[old]
    path = ROOT / old.replace(".", "/")
    assert not path.exists() and not path.with_suffix(".py").exists()  # no file stays there


def test_names_outside_the_former_paths_are_not_served():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("dp_online_envs.experimentsx")


def test_the_former_command_line_module_runs_and_warns():
    new = subprocess.run([sys.executable, "-m", "dp_online_envs.lab.cli", "--version"],
                         capture_output=True, text=True, cwd=ROOT)
    old = subprocess.run([sys.executable, "-m", "dp_online_envs.experiments.cli", "--version"],
                         capture_output=True, text=True, cwd=ROOT)
    assert new.returncode == old.returncode == 0
    assert old.stdout == new.stdout != ""
    assert new.stderr == ""
    assert "DeprecationWarning: dp_online_envs.experiments.cli moved to dp_online_envs.lab.cli" \
        in old.stderr


def test_the_console_script_runs_the_lab_command_line():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"dp-online": "dp_online_envs.lab.cli:main"}
