"""The grader's one door to the privacy audit (:mod:`dp_online_envs.lab.audit`).

The grader uses the one-run audit (:mod:`dp_online_envs.lab.audit.one_run`)::

    OneRunSettings(games, confidence, seed, min_gap, ratio, history)
    AuditGame(env_id, env_kwargs, horizon)
    audit_one_run(make_learner, games, claim, settings) -> OneRunFinding
    one_run_power(reference, games, claim, settings, factors=...) -> AuditPower
    finding.with_twin(twin_finding, TWIN_FACTOR) -> OneRunFinding   (the power on the learner)

where ``make_learner(problem, action_space, seed)`` returns a learner with
``reset(seed)``, ``act()``, ``update(action, feedback)``, ``finish()`` and ``close()``
(the grader passes a fresh :class:`~dp_online_envs.lab.isolation.IsolatedLearner` of the
submission per game, as each graded game has). Going through this module keeps the
grader's audit calls in one place (and lets tests count them).
"""

from __future__ import annotations

from dp_online_envs.lab.audit.one_run import (
    TWIN_FACTOR,
    AuditGame,
    OneRunFinding,
    OneRunSettings,
    audit_one_run,
    one_run_power,
    rr_power,
)
from dp_online_envs.lab.audit.power import AuditPower

__all__ = ["TWIN_FACTOR", "AuditGame", "AuditPower", "OneRunFinding", "OneRunSettings",
           "audit_one_run", "one_run_power", "rr_power"]
