"""The lab: where learners are played against the games, measured, audited and graded.

``dp_online_envs`` is three layers, each importing only the ones below it:

1. the game (the rest of ``dp_online_envs``: problem, domains, losses, adversaries, envs,
   wrappers, hindsight comparators, validation, and the one round loop and release
   channel that learners and the lab share) -- what a Gymnasium user imports;
2. the learners (the ``agents`` package), which import the game only;
3. the lab (this package), the only code that imports ``agents``, and which nothing
   outside it imports.

It is named for what it holds: the experimenter's bench, not the world the learner plays
in. Its modules form layers of their own: :mod:`.sandbox` (confinement) <
:mod:`.isolation` (a learner in its own process) < :mod:`.experiments` (games, sweeps,
results, reports; the ``agents`` registry is reached in one function,
:func:`~dp_online_envs.lab.experiments.resolver.default_resolver`) < :mod:`.audit`
(black-box privacy audits) < :mod:`.grading` (course assignments) < :mod:`.cli` (the
``dp-online`` command, the composition root); :mod:`.html` holds the HTML helpers the
reports share.

Importing ``dp_online_envs.lab`` imports none of them: each is imported on its own; this
module holds only :func:`lazy_exports`, how its packages defer their imports.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(namespace: dict[str, Any], homes: Mapping[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` that import each public name from its
    module on first use (PEP 562), so that importing one module of the package does not
    import them all.

    Args:
        namespace: The package's ``globals()`` (its ``__name__`` and ``__all__``; a name
            imported is stored there, so the lookup runs once).
        homes: Each public name's module, relative to the package.

    Returns:
        ``(__getattr__, __dir__)``; ``__getattr__`` raises :class:`AttributeError` for a
        name that is not in ``homes``.
    """
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *namespace["__all__"]])

    return __getattr__, __dir__
