"""The grader's one door to the black-box action audit (:mod:`dp_online_envs.lab.audit`).

The grader uses::

    AuditSettings(horizon, runs, pilot_runs, confidence, seed, taus)
    audit_actions(make_session, env_id, env_kwargs, claim, settings) -> AuditFinding
    audit_power(reference, env_id, env_kwargs, claim, settings, factors=...) -> AuditPower

where ``make_session(problem, action_space)`` returns a session with ``reset(seed)``,
``act()`` and ``update(action, feedback)`` (the grader passes an
:class:`~dp_online_envs.lab.isolation.IsolatedLearner` of the submission). Going through
this module keeps the grader's audit calls in one place (and lets tests count them).
"""

from __future__ import annotations

from dp_online_envs.lab.audit import (
    AuditFinding,
    AuditPower,
    AuditSettings,
    audit_actions,
    audit_power,
)

__all__ = ["AuditFinding", "AuditPower", "AuditSettings", "audit_actions", "audit_power"]
