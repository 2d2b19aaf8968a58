"""What grading produces: the grade types (:class:`Grade`, :class:`ClassGrades`, ...).

:mod:`.grader` makes them and :mod:`.report` renders them; both import this module,
which imports neither.
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
from typing import Any

from dp_online_envs.lab.grading.assignment import Assignment

__all__ = ["UNSAFE_MODE", "ClassGrades", "Grade", "Part", "SettingResult", "finite_json"]

#: The grading mode's text when submissions ran without a sandbox.
UNSAFE_MODE = ("no sandbox (--unsafe-no-sandbox): submissions ran as plain processes of "
               "the grader's user, able to read its files and processes")


@dataclasses.dataclass(frozen=True)
class Part:
    """One part of a score.

    Attributes:
        name: ``"regret"``, ``"declared"`` or ``"audit"``.
        points: The part's maximum.
        earned: Points earned.
        reason: Why (one line; names what was lost).
    """

    name: str
    points: float
    earned: float
    reason: str


@dataclasses.dataclass(frozen=True)
class SettingResult:
    """A submission on one env and horizon, against the references.

    Attributes:
        env: The env's label.
        horizon: T.
        games: Games played (hidden seeds).
        failed: Reasons of the games that failed (crash, timeout, limit, bad action).
        projected: Infeasible actions the env projected, over the games.
        regret: The submission's mean final regret (``None`` if a game failed).
        references: Mean final regret of each reference.
        points: Points of this setting's share of the regret part.
        earned: Points earned.
    """

    env: str
    horizon: int
    games: int
    failed: tuple[str, ...]
    projected: int
    regret: float | None
    references: dict[str, float]
    points: float
    earned: float


@dataclasses.dataclass
class Grade:
    """The grade of one submission (its JSON record is :meth:`to_dict`).

    Attributes:
        submission: The file's stem (the report's name).
        path: The file.
        sha256: Digest of the graded file (``""`` if unreadable).
        learner: The learner class found (``None`` if none could be graded).
        parts: Regret, declared budget, audit.
        settings: Per env and horizon.
        declared: ``(epsilon, delta, text)`` the learner declared, or ``None``.
        audit: The audit finding as a dict (``None`` if not run).
        power: The audit's power (shared by every submission) as a dict.
        power_text: Its one-line summary.
        records: The submission's game records (seeds and volatile fields removed).
        sandbox: How the submission's processes were confined (one line).
        audit_cpu_seconds: CPU time of its audit, the grader's and the learner's
            processes' (``None`` if not run); measured, so not in :meth:`to_dict`.
        cpu_seconds: CPU time of its whole grading (probe, games, audit), the grader's
            and every process it ran (``None``: not measured); not in :meth:`to_dict`.
    """

    submission: str
    path: str
    sha256: str
    learner: dict[str, Any] | None
    parts: list[Part]
    settings: list[SettingResult]
    declared: tuple[float, float, str] | None
    audit: dict[str, Any] | None
    power: dict[str, Any] | None
    power_text: str
    records: list[dict[str, Any]]
    sandbox: str
    audit_cpu_seconds: float | None = None
    cpu_seconds: float | None = None

    @property
    def score(self) -> float:
        """Points earned."""
        return sum(p.earned for p in self.parts)

    @property
    def total(self) -> float:
        """Points available."""
        return sum(p.points for p in self.parts)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: same secret, same submission -> the same dict."""
        out = dataclasses.asdict(self)
        del out["audit_cpu_seconds"], out["cpu_seconds"]
        out["score"] = self.score
        out["total"] = self.total
        return finite_json(out)

    @classmethod
    def from_dict(cls, data: dict[str, Any], audit_cpu_seconds: float | None = None,
                  cpu_seconds: float | None = None) -> Grade:
        """The grade of :meth:`to_dict`'s dict (a stored ``grade.json``).

        Raises:
            ValueError: ``data`` is not such a dict (named with what is missing).
        """
        try:
            fields = {f.name for f in dataclasses.fields(cls)} - {"audit_cpu_seconds",
                                                                  "cpu_seconds"}
            kept = {k: data[k] for k in fields}
            kept["parts"] = [Part(**p) for p in data["parts"]]
            kept["settings"] = [SettingResult(**{**s, "failed": tuple(s["failed"])})
                                for s in data["settings"]]
            if data["declared"] is not None:
                eps, delta, text = data["declared"]
                kept["declared"] = (float(eps), float(delta), text)  # "inf" too
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a stored grade: {type(exc).__name__}: {exc}") from None
        return cls(**kept, audit_cpu_seconds=audit_cpu_seconds, cpu_seconds=cpu_seconds)


@dataclasses.dataclass
class ClassGrades:
    """Every submission's grade, with what they were compared to.

    Attributes:
        assignment: The assignment.
        grades: One per submission, in the order given.
        references: The references' records (seeds and volatile fields removed).
        power: The audit's power as a dict, and its text.
        sandbox: How the submissions' processes were confined (one line).
        out_dir: Where the reports were written (``None``: not written).
    """

    assignment: Assignment
    grades: list[Grade]
    references: list[dict[str, Any]]
    power: dict[str, Any] | None
    power_text: str
    sandbox: str = UNSAFE_MODE
    out_dir: pathlib.Path | None = None


def finite_json(obj: Any) -> Any:
    """``obj`` with non-finite floats as strings (``"inf"``, ``"-inf"``, ``"nan"``), tuples
    as lists: plain JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else str(obj)
    if isinstance(obj, dict):
        return {str(k): finite_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_json(v) for v in obj]
    return obj

