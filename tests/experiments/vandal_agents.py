"""Vandals: learners that change everything they hold about their game.

:func:`vandalize` walks every object reachable from what a learner is given (the
``Problem``, its domain and loss family, the spaces, the metadata, the spec, the
generators) and changes every attribute it can: numbers and arrays overwritten, strings
replaced, generators drawn from, frozen dataclasses forced with ``object.__setattr__``.
:class:`Vandal` does it to its own problem while it plays a fixed sequence of actions
(so its play is the same whether it vandalizes or not), which is what the hostile
tests compare. The module is importable by name, so an isolated (spawned) agent
process can build the vandal too.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from agents import Agent

#: Objects the walk does not enter: code and classes (changing a class is changing the
#: program, not the game's description; in-process Python cannot stop that), and
#: immutable leaves.
_SKIP = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
         types.MethodType, types.BuiltinMethodType, property, str, bytes, bool, int,
         float, complex, type(None))


def _scrambled(value: Any) -> Any:
    """The value a vandal writes in place of ``value`` (``value`` itself if none)."""
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return not value
    if isinstance(value, (int, np.integer)):
        return type(value)(1)
    if isinstance(value, (float, np.floating)):
        return type(value)(1e-9)
    if isinstance(value, str):
        return value + "-vandalized"
    return value


def vandalize(root: Any, _seen: set[int] | None = None,
              refused: list[str] | None = None) -> int:
    """Change every attribute, item and array reachable from ``root``.

    An attribute whose write raises is forced with ``object.__setattr__``; with
    ``refused`` given, ``"Class.name"`` of each such attribute is appended to it.

    Returns:
        How many values were changed (so a test can check the walk found something).
    """
    seen = set() if _seen is None else _seen
    if id(root) in seen or isinstance(root, _SKIP):
        return 0
    seen.add(id(root))
    changed = 0
    if isinstance(root, np.ndarray):
        if root.flags.writeable and root.dtype.kind in "fiub":
            root[...] = 1 if root.dtype.kind in "iub" else 1e-9
            return 1
        return 0
    if isinstance(root, np.random.Generator):
        root.random(1000)  # shift whatever stream this is
        return 1
    if isinstance(root, dict):
        for key in list(root):
            changed += vandalize(root[key], seen, refused)
            new = _scrambled(root[key])
            if new is not root[key]:
                root[key] = new
                changed += 1
        return changed
    if isinstance(root, list):
        for i, item in enumerate(root):
            changed += vandalize(item, seen, refused)
            new = _scrambled(item)
            if new is not item:
                root[i] = new
                changed += 1
        return changed
    if isinstance(root, (tuple, set, frozenset)):
        return sum(vandalize(item, seen, refused) for item in root)
    attrs = getattr(root, "__dict__", None)
    if attrs is None:
        return 0
    for name, value in list(attrs.items()):
        changed += vandalize(value, seen, refused)
        new = _scrambled(value)
        if new is not value:
            try:
                setattr(root, name, new)
            except Exception:  # a frozen dataclass or a read-only view: force it
                if refused is not None:
                    refused.append(f"{type(root).__name__}.{name}")
                try:
                    object.__setattr__(root, name, new)
                except Exception:
                    continue
            changed += 1
    return changed


def write_accepted(problem: Any) -> list[str]:
    """The plain writes (``setattr``/``delattr``) that the problem's domain and loss family
    accept: empty for a read-only view. Each write is of the value already there."""
    accepted = []
    for obj in (problem.domain, problem.loss):
        for name in ["name", *vars(obj)]:
            value = getattr(obj, name)
            try:
                setattr(obj, name, value)
            except AttributeError as exc:
                assert f"cannot set {type(obj).__name__}.{name}" in str(exc), exc
                assert "a game is configured when the env is made" in str(exc), exc
            else:
                accepted.append(f"{type(obj).__name__}.{name} = ...")
        try:
            delattr(obj, "name")
        except AttributeError:
            pass
        else:
            accepted.append(f"del {type(obj).__name__}.name")
    return accepted


class Vandal(Agent):
    """Plays a fixed sequence of points (or arms) drawn from its own seed, and, with
    ``vandal=True``, vandalizes its problem every round.

    The points are vertices of the decision set (``linear_minimizer`` of random
    directions), computed before any vandalism, so the play is the same either way.
    Built, it first tries plain writes to its problem's domain and loss family and
    refuses to play (``RuntimeError``) if any is accepted: through every door a
    learner's problem is a read-only view.
    """

    name = "test-vandal"
    feedback = "bandit"

    def setup(self, vandal: bool = True) -> None:
        accepted = write_accepted(self.problem)
        if accepted:
            raise RuntimeError(f"the learner's problem accepted writes: {accepted}")
        self.vandal = vandal
        self.refused: list[str] = []
        domain = self.problem.domain
        rng = np.random.default_rng(2024)
        if domain.action_space.__class__.__name__ == "Discrete":
            self.plan = [int(a) for a in rng.integers(domain.action_space.n,
                                                      size=self.problem.horizon)]
        else:
            self.plan = [np.asarray(domain.linear_minimizer(rng.standard_normal(domain.dim)),
                                    dtype=np.float64).copy()
                         for _ in range(self.problem.horizon)]
        self.changed = 0

    def act(self):
        if self.vandal:  # from the first round on (a harness may check the problem first)
            self.changed += vandalize(self.problem, refused=self.refused)
        return self.plan[min(self.t, len(self.plan) - 1)]

    def update(self, action, feedback) -> None:
        self.t += 1
