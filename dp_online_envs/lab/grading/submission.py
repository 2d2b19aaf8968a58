"""Submissions: a ``.py`` file defining exactly one learner (an ``agents.Agent`` subclass).

A submission's code never runs in the grader's process. :func:`probe_submission`
imports the file in an isolated process (under the assignment's limits and sandbox) and
reports the learner class it defines, as a small JSON object whose fields the grader
checks (nothing that process sends is unpickled); :class:`SubmissionLoader` is the picklable stand-in for that
class that the runner ships to the isolated agent's process, where it imports the file
again and builds the learner. The grader's process only ever holds the file's path.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import inspect
import json
import pathlib
import re
import sys
from typing import Any

from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.resolver import AgentResolver, default_resolver
from dp_online_envs.lab.isolation import (
    AgentFailure,
    IsolatedProcess,
    IsolationLimits,
    checked_json,
)
from dp_online_envs.lab.sandbox import SandboxUnavailable
from dp_online_envs.problem import Problem


class SubmissionError(RuntimeError):
    """A submission that cannot be graded at all (no learner, several, an import error).

    Attributes:
        reason: One line: what is wrong, for the report.
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason + (f"\n{detail}" if detail else ""))
        self.reason = reason
        self.detail = detail


@dataclasses.dataclass(frozen=True)
class SubmissionInfo:
    """What the probe learned of a submission's learner class.

    Attributes:
        path: The file.
        class_name: The learner class's name in the file.
        name: Its ``name`` attribute.
        feedback: ``"full"`` or ``"bandit"``.
        private: Its ``private`` attribute (whether it takes ``epsilon``).
        paper: Its ``paper`` attribute.
        sha256: Digest of the file's bytes (what was graded).
    """

    path: str
    class_name: str
    name: str
    feedback: str
    private: bool
    paper: str
    sha256: str


def _import_file(path: str) -> Any:
    """Import a ``.py`` file as a module of its own (in the calling process)."""
    digest = hashlib.sha256(path.encode()).hexdigest()[:12]
    module_name = f"dp_online_submission_{digest}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} cannot be imported as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def learner_class(path: str, resolver: AgentResolver | None = None) -> type:
    """The one concrete ``agents.Agent`` subclass defined in the file ``path``.

    Run in a submission's own process only (it executes the file).

    Args:
        path: The ``.py`` file.
        resolver: Its ``base`` is the class a learner subclasses (``None``: the
            ``agents`` registry, whose base is ``agents.Agent``).

    Raises:
        SubmissionError: No such class, or several (the message names them).
    """
    base = (default_resolver() if resolver is None else resolver).base
    module = _import_file(path)
    found = [obj for obj in vars(module).values()
             if isinstance(obj, type) and issubclass(obj, base)
             and obj.__module__ == module.__name__ and not inspect.isabstract(obj)]
    if len(found) != 1:
        names = sorted(c.__name__ for c in found)
        raise SubmissionError(
            f"{pathlib.Path(path).name}: expected exactly one agents.Agent subclass (with act "
            f"and update) defined in the file, found {len(found)}" +
            (f": {names}" if names else ""))
    return found[0]


#: The probe's reply: ``b"p"`` + JSON of these fields (strings at most
#: :data:`MAX_PROBE_TEXT` characters; ``feedback`` one of ``"full"``, ``"bandit"``).
PROBE_FIELDS = {"class_name": str, "name": str, "feedback": str, "private": bool,
                "paper": str}
#: Longest string field of a probe reply, in characters.
MAX_PROBE_TEXT = 500


def _probe(conn: Any, path: str) -> None:
    """The probe's process: import the file, send the class's attributes as JSON (an
    error frame if the import fails)."""
    cls = learner_class(path)  # an exception becomes the error frame (its last line)
    conn.send_bytes(b"p" + json.dumps({
        "class_name": cls.__name__, "name": str(cls.name), "feedback": str(cls.feedback),
        "private": bool(cls.private), "paper": str(cls.paper)}).encode())


def _probed(name: str, reply: bytes) -> dict[str, Any]:
    """The probe's fields from its reply, checked (``SubmissionError`` naming the fault)."""
    def bad(why: str) -> SubmissionError:
        return SubmissionError(f"{name}: malformed reply from the process importing the "
                               f"submission: {why}")

    if reply[:1] != b"p":
        raise bad(f"{reply[:16]!r}, expected a frame starting with b'p'")
    obj = checked_json(reply[1:], bad)
    if not isinstance(obj, dict) or sorted(obj) != sorted(PROBE_FIELDS):
        raise bad(f"expected an object with keys {sorted(PROBE_FIELDS)}")
    for key, kind in PROBE_FIELDS.items():
        if type(obj[key]) is not kind:
            raise bad(f"{key}={obj[key]!r:.100}, expected a {kind.__name__}")
        if kind is str and len(obj[key]) > MAX_PROBE_TEXT:
            raise bad(f"{key} of {len(obj[key])} characters, expected at most "
                      f"{MAX_PROBE_TEXT}")
    if obj["feedback"] not in ("full", "bandit"):
        raise bad(f"feedback={obj['feedback']!r}, expected 'full' or 'bandit'")
    return obj


def probe_submission(path: str | pathlib.Path, limits: IsolationLimits) -> SubmissionInfo:
    """Find the learner class of a submission file, importing it in an isolated process.

    Args:
        path: The ``.py`` file.
        limits: Its ``startup_timeout`` bounds the import; its ``sandbox`` (if any)
            confines the process.

    Raises:
        SubmissionError: Not a ``.py`` file, an import that fails or hangs, no learner
            class or several, a malformed reply.
    """
    path = pathlib.Path(path).resolve()
    if path.suffix != ".py" or not path.is_file():
        raise SubmissionError(f"{path.name}: a submission is a .py file")
    try:
        process = IsolatedProcess(_probe, (str(path),), limits)
    except SandboxUnavailable as exc:
        raise SubmissionError(f"{path.name}: the sandbox could not start: {exc}") from None
    except OSError as exc:  # no process could be started (out of processes, memory)
        raise SubmissionError(f"{path.name}: the process importing the submission could "
                              f"not start: {exc}") from None
    except AgentFailure as exc:  # its wall-clock budget already spent
        raise SubmissionError(f"{path.name}: {exc.reason}") from None
    try:
        reply = process.receive(limits.startup_timeout, "importing the submission",
                                1 + 4 * MAX_PROBE_TEXT)
    except AgentFailure as exc:
        raise SubmissionError(_probe_reason(path.name, exc.reason), exc.detail) from None
    finally:
        process.kill()
    return SubmissionInfo(path=str(path), sha256=file_sha256(path), **_probed(path.name, reply))


def file_sha256(path: str | pathlib.Path) -> str:
    """Hex SHA-256 of a file's bytes (``""`` when it is no readable file): what a grade
    records as the graded file."""
    try:
        return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()
    except OSError:  # missing, not a regular file, unreadable (its grade gives the reason)
        return ""


def _probe_reason(name: str, reason: str) -> str:
    """The report's reason for a probe that failed (``reason``: the process's failure)."""
    prefix = "agent raised during importing the submission: "
    if reason.startswith(prefix):
        error = reason[len(prefix):]
        if error.startswith(("SubmissionError: ", "dp_online_envs.lab.grading.submission."
                                                  "SubmissionError: ")):
            return error.split("SubmissionError: ", 1)[1]
        return f"importing the submission raised {error}"
    if reason.startswith("agent timed out"):
        return f"{name}: importing the submission took more than {reason.rsplit(' ', 2)[-2]} s"
    return f"{name}: the process importing the submission failed: {reason}"


@dataclasses.dataclass(frozen=True)
class SubmissionLoader:
    """A picklable stand-in for a submission's learner class.

    The runner treats it as an agent class (``feedback``, ``private``, ``name``,
    ``paper``; calling it builds a learner). Called in the isolated agent's process, it
    imports the submission file there and builds its learner with the assignment's
    budget (``epsilon``/``delta`` only if the learner is private). ``private`` is
    ``False`` here on purpose: the runner then records the budget the learner itself
    declares (its ``privacy``), or none, never the requested one.

    Attributes:
        info: What :func:`probe_submission` found.
    """

    info: SubmissionInfo
    private = False

    @property
    def name(self) -> str:
        """The learner's ``name``."""
        return self.info.name

    @property
    def feedback(self) -> str:
        """The feedback the learner needs."""
        return self.info.feedback

    @property
    def paper(self) -> str:
        """The learner's ``paper``."""
        return self.info.paper

    def __call__(self, problem: Problem, *, epsilon: float | None = None, delta: float = 0.0,
                 seed: int | None = None) -> Any:
        """Build the learner (in the submission's process)."""
        cls = learner_class(self.info.path)
        if cls.private:
            return cls(problem, epsilon=epsilon, delta=delta, seed=seed)
        return cls(problem, seed=seed)


#: A file's stem that names its submission as it is (its report directory, its row):
#: ASCII letters, digits, ``_`` and ``-``, starting with a letter or digit, at most 64.
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def safe_name(stem: str) -> str:
    """``stem`` if it matches :data:`SAFE_NAME`; else its runs of other characters
    replaced by ``_``, without a leading or trailing ``_`` or ``-``, cut to 48 characters
    (``"submission"`` if nothing is left). Never a path component other than a plain
    name, never a spreadsheet formula."""
    if SAFE_NAME.fullmatch(stem):
        return stem
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "_", stem).strip("_-")[:48].strip("_-")
    return cleaned or "submission"


def submission_names(paths: list[pathlib.Path]) -> list[str]:
    """Unique names of the files ``paths`` (one per file, in order): each file's
    :func:`safe_name`, with ``-`` and 8 hex digits of its path's SHA-256 appended when
    another file's name is the same (letter case ignored, as some file systems do)."""
    names = [safe_name(p.stem) for p in paths]
    folded = [n.casefold() for n in names]
    out: list[str] = []
    taken: set[str] = set()
    for path, name, key in zip(paths, names, folded):
        if folded.count(key) > 1:
            digest = hashlib.sha256(str(pathlib.Path(path).resolve()).encode()).hexdigest()
            name = f"{name}-{digest[:8]}"
        while name.casefold() in taken:  # a suffixed name met again: number it
            name = f"{name}-{len(out)}"
        taken.add(name.casefold())
        out.append(name)
    return out


def find_submissions(paths: list[str | pathlib.Path]) -> list[pathlib.Path]:
    """The submission files: each ``.py`` file given, and the ``.py`` files of each
    directory given (not recursive, sorted by name).

    Raises:
        ExperimentError: A path that does not exist, a file that is not ``.py``, a
            directory without ``.py`` files, or the same file twice.
    """
    out: list[pathlib.Path] = []
    for given in paths:
        p = pathlib.Path(given)
        if p.is_dir():
            files = sorted(f for f in p.glob("*.py") if f.is_file())
            if not files:
                raise ExperimentError(f"submissions: directory {str(p)!r} holds no .py file")
            out.extend(files)
        elif p.is_file():
            if p.suffix != ".py":
                raise ExperimentError(f"submissions: {str(p)!r} is not a .py file")
            out.append(p)
        else:
            raise ExperimentError(f"submissions: {str(p)!r} does not exist")
    resolved = [p.resolve() for p in out]
    dupes = sorted({str(p) for p in resolved if resolved.count(p) > 1})
    if dupes:
        raise ExperimentError(f"submissions: {dupes} given twice")
    stems = [p.stem for p in out]
    clash = sorted({s for s in stems if stems.count(s) > 1})
    if clash:
        raise ExperimentError(f"submissions: several files named {clash} (reports are named "
                              "by file name; rename one)")
    return out


__all__ = ["SAFE_NAME", "SubmissionError", "SubmissionInfo", "SubmissionLoader",
           "find_submissions", "learner_class", "probe_submission", "safe_name",
           "submission_names"]
