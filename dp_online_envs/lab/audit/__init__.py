"""Black-box privacy audits: empirical lower bounds on a learner's epsilon.

The audits run games (through the one loop, :func:`dp_online_envs.loop.run_rounds`),
so they live beside the other code that runs games. They never import the learners:
agents are passed in as factories or sessions, or named and resolved through
:mod:`dp_online_envs.lab.experiments.resolver`.

* :func:`audit_actions` -- a black box seen only through its actions: a search over
  neighbouring pairs, a statistic built for actions, a pilot and a separate test
  (:mod:`.actions`; what is counted: :mod:`.scores`; the runs B at a time through a
  vector learner: :mod:`.vector`); :func:`audit_power` -- what that audit can
  detect (:mod:`.power`).
* :func:`audit` -- one neighbouring pair and an agent factory, on the actions or on the
  values released through ``release()`` (:mod:`.pair`).
* Steps and statistics: :mod:`.sequences` (record, neighbours, replay),
  :mod:`.observe` (views), :mod:`.statistics` (Clopper-Pearson, the bound, events),
  :mod:`.sessions` (what a black box is).

Method and proofs: ``docs/algorithms/privacy-auditor.md``.
"""

from dp_online_envs._former_paths import former_names
from dp_online_envs.lab.audit.actions import AuditFinding, AuditSettings, audit_actions
from dp_online_envs.lab.audit.observe import VIEWS, ActionsView, ReleasesView
from dp_online_envs.lab.audit.pair import Claim, Samples, audit, collect
from dp_online_envs.lab.audit.power import DEFAULT_FACTORS, AuditPower, audit_power
from dp_online_envs.lab.audit.sequences import (
    Game,
    NeighbourPair,
    neighbour_param,
    record_sequence,
    replay_env,
)
from dp_online_envs.lab.audit.sessions import (
    AgentSession,
    ResettingSession,
    Session,
    SessionFactory,
    VectorSession,
    VectorSessionFactory,
)
from dp_online_envs.lab.audit.statistics import (
    AuditResult,
    Event,
    EventTest,
    audit_samples,
    best_event,
    clopper_pearson,
    eps_lower_bound,
    threshold_events,
)

__all__ = [
    "DEFAULT_FACTORS",
    "VIEWS",
    "ActionsView",
    "AgentSession",
    "AuditFinding",
    "AuditPower",
    "AuditResult",
    "AuditSettings",
    "VectorSession",
    "VectorSessionFactory",
    "Claim",
    "Event",
    "EventTest",
    "Game",
    "NeighbourPair",
    "ReleasesView",
    "ResettingSession",
    "Samples",
    "Session",
    "SessionFactory",
    "audit",
    "audit_actions",
    "audit_power",
    "audit_samples",
    "best_event",
    "clopper_pearson",
    "collect",
    "eps_lower_bound",
    "neighbour_param",
    "record_sequence",
    "replay_env",
    "threshold_events",
]

#: Former names of this module (one release, with a ``DeprecationWarning``).
__getattr__ = former_names(globals(), {
    "BatchedSession": "VectorSession",
    "BatchedSessionFactory": "VectorSessionFactory",
})
