"""The grader's one door to the privacy audit (:mod:`dp_online_envs.lab.audit`).

The grader uses the one-run audit (:mod:`dp_online_envs.lab.audit.one_run`)::

    OneRunSettings(games, confidence, seed, min_gap, ratio, history)
    AuditGame(env_id, env_kwargs, horizon)
    audit_one_run(make_learner, games, claim, settings) -> OneRunFinding
    one_run_power(reference, games, claim, settings, factors=...) -> AuditPower
    finding.with_twin(twin_finding, TWIN_FACTOR) -> OneRunFinding   (the power on the learner)
    audit_with_twin(make_learner_at, epsilon, games, claim, settings) -> OneRunFinding

where ``make_learner(problem, action_space, seed)`` returns a learner with
``reset(seed)``, ``act()``, ``update(action, feedback)``, ``finish()`` and ``close()``
(the grader passes a fresh :class:`~dp_online_envs.lab.isolation.IsolatedLearner` of the
submission per game, as each graded game has). Going through this module keeps the
grader's audit calls in one place (and lets tests count them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dp_online_envs.lab.audit.one_run import (
    TWIN_FACTOR,
    AuditGame,
    LearnerFactory,
    OneRunFinding,
    OneRunSettings,
    audit_one_run,
    one_run_power,
    rr_power,
)
from dp_online_envs.lab.audit.power import AuditPower


def audit_with_twin(make_learner_at: Callable[[float], LearnerFactory], epsilon: float,
                    games: Sequence[AuditGame], claim: tuple[float, float],
                    settings: OneRunSettings, *, workers: int = 1) -> OneRunFinding:
    """The one-run audit of a claim with the audit's power on the learner: the learner
    built at ``epsilon`` (``make_learner_at(epsilon)``) and, when its claim is not
    refuted, its noise-free twin built at ``epsilon * TWIN_FACTOR``, audited on the same
    games with the same settings (so the same seeds) and the same claim
    (:meth:`~dp_online_envs.lab.audit.one_run.OneRunFinding.with_twin`).

    Raises:
        Exception: Whatever :func:`audit_one_run` raises, for the learner or its twin.
    """
    finding = audit_one_run(make_learner_at(epsilon), games, claim, settings, workers=workers)
    if finding.refuted:
        return finding
    twin = audit_one_run(make_learner_at(epsilon * TWIN_FACTOR), games, claim, settings,
                         workers=workers)
    return finding.with_twin(twin, TWIN_FACTOR)

__all__ = ["TWIN_FACTOR", "AuditGame", "AuditPower", "OneRunFinding", "OneRunSettings",
           "audit_one_run", "audit_with_twin", "one_run_power", "rr_power"]
