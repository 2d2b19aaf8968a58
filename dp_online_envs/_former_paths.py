"""Former import paths, kept for one release with a ``DeprecationWarning``.

The harness moved from ``dp_online_envs.{experiments,audit,grading,isolation,sandbox}``
into :mod:`dp_online_envs.lab` (the command line from ``dp_online_envs.experiments.cli``
to :mod:`dp_online_envs.lab.cli`); the renderings from ``dp_online_envs.envs.rendering``
to :mod:`dp_online_envs.rendering` (below both the env and the wrappers); the learners' modules took their agents' names
(``agents.full_info.l2p`` is ``agents.full_info.private_lazy_mw``, ...); the vector
learners and the modules that play them took Gymnasium's word, "vector"
(``agents.batched`` and ``agents.vectorized`` are ``agents.vector``,
``dp_online_envs.lab.experiments.batched`` is ``dp_online_envs.lab.experiments.vector``,
``dp_online_envs.lab.audit.batched`` is ``dp_online_envs.lab.audit.vector``). No file
remains at a former path: an import finder placed first on ``sys.meta_path`` answers a
former name with the module of the new one
(the same module object, so classes, ``isinstance`` and pickles are shared), and
``python -m dp_online_envs.experiments.cli`` runs the command line. Nothing is imported
until a former name is asked for; this module names the lab and the agents only as
strings.

Former names inside a module (``agents.vector.make_batched`` is
``agents.vector.make_vector``, ...) are answered by the module's ``__getattr__``
(:func:`former_names`), with a ``DeprecationWarning`` naming the new name.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Callable, Mapping
from types import CodeType, ModuleType
from typing import Any

#: Former module names (and their submodules) -> the new ones; the longest prefix wins.
FORMER_PATHS = {
    "dp_online_envs.experiments.cli": "dp_online_envs.lab.cli",
    "dp_online_envs.experiments.batched": "dp_online_envs.lab.experiments.vector",
    "dp_online_envs.experiments": "dp_online_envs.lab.experiments",
    "dp_online_envs.audit.batched": "dp_online_envs.lab.audit.vector",
    "dp_online_envs.audit": "dp_online_envs.lab.audit",
    "dp_online_envs.lab.experiments.batched": "dp_online_envs.lab.experiments.vector",
    "dp_online_envs.lab.audit.batched": "dp_online_envs.lab.audit.vector",
    "dp_online_envs.grading": "dp_online_envs.lab.grading",
    "dp_online_envs.isolation": "dp_online_envs.lab.isolation",
    "dp_online_envs.sandbox": "dp_online_envs.lab.sandbox",
    "dp_online_envs.envs.rendering": "dp_online_envs.rendering",
    "agents.batched": "agents.vector",
    "agents.vectorized": "agents.vector",
    "agents.bandit.adap": "agents.bandit.adap_ucb",
    "agents.bandit.bandit_submod": "agents.bandit.bandit_submod_pftal",
    "agents.bandit.batched": "agents.bandit.private_batched_htinf",
    "agents.bandit.projection_free": "agents.bandit.private_projection_free",
    "agents.bandit.reduction": "agents.bandit.private_bandit",
    "agents.bandit.tuned_projection_free": "agents.bandit.private_projection_free_tuned",
    "agents.full_info.ftpl": "agents.full_info.private_ftpl",
    "agents.full_info.l2p": "agents.full_info.private_lazy_mw",
}


def new_name(name: str) -> str | None:
    """The module a former name now lives at (``None`` if ``name`` is not a former one)."""
    for old in sorted(FORMER_PATHS, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            return FORMER_PATHS[old] + name[len(old):]
    return None


def former_names(namespace: dict[str, Any], renames: Mapping[str, str]
                 ) -> Callable[[str], Any]:
    """A module's ``__getattr__`` (PEP 562) that answers each former name of ``renames``
    (former -> new) with the object of its new name and a ``DeprecationWarning`` naming
    that name, for one release.

    Args:
        namespace: The module's ``globals()`` (its ``__name__``; the new names live there).
        renames: Each former public name and the name it now has in the same module.

    Returns:
        The ``__getattr__``; it raises :class:`AttributeError` for any other name.
    """
    module = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        new = renames.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} is now {module}.{new}; the old name goes away in "
                      f"the next release", DeprecationWarning, stacklevel=2)
        return namespace[new]

    return __getattr__


def _message(old: str, new: str) -> str:
    return f"{old} moved to {new}; the old path goes away in the next release"


class _Alias(importlib.abc.Loader):
    """Loads a former name as the module of its new one (imported, then shared)."""

    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(_message(spec.name, self.new), DeprecationWarning, stacklevel=2)
        module = importlib.import_module(self.new)
        self._spec = module.__spec__  # the import machinery overwrites it; see exec_module
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self._spec  # the module is the new one, already executed

    def get_code(self, fullname: str) -> CodeType:
        """What ``python -m <former name>`` runs: a warning, then the new module as main."""
        source = (f"import runpy, warnings\n"
                  f"warnings.warn({_message(fullname, self.new)!r}, DeprecationWarning)\n"
                  f"runpy.run_module({self.new!r}, run_name='__main__', alter_sys=True)\n")
        return compile(source, f"<{fullname}>", "exec")


class _FormerPathFinder(importlib.abc.MetaPathFinder):
    """Finds the former names (only those): see :data:`FORMER_PATHS`."""

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (idempotent)."""
    if not any(isinstance(f, _FormerPathFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _FormerPathFinder())
