"""The vector learners read the scalar learners by public names only.

``agents.vector`` computes the scalar games' numbers from the scalar agents' and
counters' constants and state; it reads them through public, documented names, never
through another object's ``_private`` attribute; and no module of ``agents`` or of the
game (``dp_online_envs`` outside the lab) imports a private name of another package (a
package may import its own private submodules). Read from the source (``ast``); the
checks also run on small sources written here, so each can be seen to fail.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def foreign_private_reads(source: str) -> list[str]:
    """``owner._name`` attribute reads whose owner is not ``self`` or ``cls``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
            found.append(f"{ast.unparse(node.value)}.{node.attr}")
    return found


def private_imports(source: str, package: str) -> list[str]:
    """``from module import _name`` in a module of ``package``: private names taken from
    another package (``from package import _submodule`` is the package's own)."""
    return [f"{node.module}.{alias.name}" for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ImportFrom) and node.module != package
            for alias in node.names if alias.name.startswith("_")
            and not alias.name.startswith("__")]


def _sources(*packages: str) -> dict[str, str]:
    return {str(path.relative_to(ROOT)): path.read_text()
            for package in packages for path in sorted((ROOT / package).rglob("*.py"))
            if "lab" not in path.relative_to(ROOT).parts}


def _package(path: str) -> str:
    return ".".join(pathlib.Path(path).parent.parts)


def test_the_vector_learners_read_no_private_attribute_of_another_object():
    reads = {path: foreign_private_reads(src)
             for path, src in _sources("agents/vector").items()}
    assert {path: r for path, r in reads.items() if r} == {}


def test_no_module_imports_a_private_name_of_another():
    imports = {path: private_imports(src, _package(path))
               for path, src in _sources("agents", "dp_online_envs").items()}
    assert {path: i for path, i in imports.items() if i} == {}


def test_the_checks_find_what_they_look_for():
    src = ("class A:\n    def f(self, e):\n        return self._x + e._small + e.k + "
           "type(self).__name__ + self.prototype._grid\n")
    assert sorted(foreign_private_reads(src)) == ["e._small", "self.prototype._grid"]
    src = "from a.b import _c, d\nfrom e import __version__\nfrom f import _g\n"
    assert private_imports(src, "f") == ["a.b._c"]
    assert _package("agents/vector/arms.py") == "agents.vector"
