"""The grader's one door to the black-box action audit (:mod:`dp_online_envs.audit`).

The grader codes against this API (fixed with the auditor's authors)::

    AuditSettings(horizon=32, runs=2000, pilot_runs=200, confidence=0.95, seed=0)
    audit_actions(make_session, env_id, env_kwargs, claim, settings) -> AuditFinding
    audit_power(reference, env_id, env_kwargs, claim, settings, factors=..., *, options=...,
                resolver=...) -> AuditPower

where ``make_session(problem, action_space)`` returns a session with ``reset(seed)``,
``act()`` and ``update(action, feedback)`` (the grader passes an
:class:`~dp_online_envs.isolation.IsolatedLearner` of the submission).

Until :mod:`dp_online_envs.audit` is in the tree, a **stand-in** with the same shapes is
used: it plays one game of the audit horizon through a session (so a submission that
crashes or hangs under audit is caught) and refutes nothing; its findings say so
(``event = "stand-in: ..."``, :data:`STAND_IN` is ``True``). When the package is
present it is used, and this module only re-exports it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

try:  # the real auditor (issue 12, parts 3 and 6)
    from dp_online_envs.audit import (  # type: ignore[import-not-found]
        AuditFinding,
        AuditPower,
        AuditSettings,
        audit_actions,
        audit_power,
    )

    STAND_IN = False
except ImportError:  # pragma: no cover - replaced when dp_online_envs.audit lands
    STAND_IN = True

    from dp_online_envs.envs.registry import build_env
    from dp_online_envs.loop import run_rounds

    _NOTE = "stand-in: dp_online_envs.audit is not installed, nothing was tested"

    @dataclasses.dataclass(frozen=True)
    class AuditSettings:  # type: ignore[no-redef]
        """Settings of an action audit (the stand-in keeps the real one's fields)."""

        horizon: int = 32
        runs: int = 2000
        pilot_runs: int = 200
        confidence: float = 0.95
        seed: int = 0

    @dataclasses.dataclass(frozen=True)
    class AuditFinding:  # type: ignore[no-redef]
        """What an action audit found (the stand-in's: nothing tested)."""

        claimed_epsilon: float
        claimed_delta: float
        eps_lb: float
        refuted: bool
        confidence: float
        runs: int
        tau: int
        statistic: str
        event: str
        counts: tuple[int, int]
        neighbour: str

        def to_dict(self) -> dict[str, Any]:
            return dataclasses.asdict(self)

    @dataclasses.dataclass(frozen=True)
    class AuditPower:  # type: ignore[no-redef]
        """What the audit could have detected (the stand-in's: nothing)."""

        reference: str
        factors: tuple[float, ...]
        refuted: tuple[bool, ...]
        smallest_refuted: float | None

        def to_dict(self) -> dict[str, Any]:
            return dataclasses.asdict(self)

        def __str__(self) -> str:
            return f"power of the audit against {self.reference}: {_NOTE}"

    def audit_actions(make_session: Callable[[Any, Any], Any], env_id: str,
                      env_kwargs: dict[str, Any], claim: tuple[float, float],
                      settings: AuditSettings) -> AuditFinding:
        """Play one game of ``settings.horizon`` rounds through a session; refute nothing."""
        env = build_env(env_id, horizon=settings.horizon, **env_kwargs)
        try:
            session = make_session(env.get_wrapper_attr("problem"), env.action_space)
            session.reset(settings.seed)
            env.reset(seed=settings.seed)
            run_rounds(env, session)
        finally:
            env.close()
        return AuditFinding(float(claim[0]), float(claim[1]), -math.inf, False,
                            settings.confidence, 1, 0, "none", _NOTE, (0, 0), "none")

    def audit_power(reference: str, env_id: str, env_kwargs: dict[str, Any],
                    claim: tuple[float, float], settings: AuditSettings,
                    factors: Sequence[float] = (), *, options: dict[str, Any] | None = None,
                    resolver: Any = None) -> AuditPower:
        """The stand-in measures no power."""
        return AuditPower(reference, tuple(factors), tuple(False for _ in factors), None)


__all__ = ["STAND_IN", "AuditFinding", "AuditPower", "AuditSettings", "audit_actions",
           "audit_power"]
