"""The power of an action audit: the smallest noise cut of a reference learner it refutes.

A passing audit says only that the search found nothing. :func:`audit_power` says what
the same audit (same settings, same env, same claim) *can* find: it builds a reference
learner (a registered name, resolved through
:func:`~dp_online_envs.lab.experiments.resolver.resolve_agent`) at ``epsilon * c`` -- a
``c``-fold cut of its noise -- while it keeps declaring ``epsilon``, for each factor
``c``, and reports which claims the audit refutes. ``smallest_refuted = 10`` reads:
"at these settings the audit catches a learner that adds 10 times too little noise".

With ``vectorize=True`` (the default) a reference with a vector form on an id with a
vector path plays its runs B at a time (:mod:`~dp_online_envs.lab.audit.vector`). The
form is the resolver's ``audit_vector`` (``agents.vector.make_audit_vector``) when
it has one, else its ``vector`` (``agents.vector.make_vector``). For
``private-exp2`` that is B independent runs drawn from one generator (seeded from the
run seeds, so from ``settings.seed``): each run a game of the calibrated mechanism,
but not the scalar game of its seed, so the findings are those of other, equally
valid runs, not the one-run-at-a-time findings bit for bit; a reference whose audit
form is its per-seed vector form (e.g. ``exp3``) gives the one-run-at-a-time findings
bit for bit. ``benchmarks/audit_power.py`` measures the time of each path. Any other
reference plays one run at a time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dp_online_envs.lab.audit.actions import (
    DEFAULT_SETTINGS,
    AuditFinding,
    AuditSettings,
    audit_actions,
    audit_problem,
    check_claim,
)
from dp_online_envs.lab.audit.sessions import ResettingSession
from dp_online_envs.problem import Problem
from dp_online_envs.validation import check_real

__all__ = ["DEFAULT_FACTORS", "AuditPower", "audit_power"]

#: The noise cuts tried by default.
DEFAULT_FACTORS = (2.0, 5.0, 10.0, 30.0, 100.0)


@dataclass(frozen=True)
class AuditPower:
    """What an audit can detect.

    Attributes:
        reference: The reference learner's registered name.
        factors: The noise cuts ``c`` tried, ascending.
        refuted: Whether the audit refuted the claim of the ``c``-fold cut, per factor.
        smallest_refuted: The smallest ``c`` refuted (``None``: none up to the largest).
        eps_lbs: The audit's ``eps_lb`` per factor.
        claimed_epsilon: The epsilon every cut declared.
    """

    reference: str
    factors: tuple[float, ...]
    refuted: tuple[bool, ...]
    smallest_refuted: float | None
    eps_lbs: tuple[float, ...] = ()
    claimed_epsilon: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (an infinite ``eps_lb`` as ``None``)."""
        return {
            "reference": self.reference,
            "factors": list(self.factors),
            "refuted": list(self.refuted),
            "smallest_refuted": self.smallest_refuted,
            "eps_lbs": [v if math.isfinite(v) else None for v in self.eps_lbs],
            "claimed_epsilon": self.claimed_epsilon,
            "summary": str(self),
        }

    def __str__(self) -> str:
        if self.smallest_refuted is None:
            return (f"refutes no noise cut of {self.reference} up to "
                    f"{max(self.factors):g}x (a weak audit at these settings)")
        c = self.smallest_refuted
        above = [r for f, r in zip(self.factors, self.refuted) if f >= c]
        tail = "or more" if all(above) else "(not every larger cut)"
        return f"refutes {self.reference} with noise cut {c:g}x {tail}"


def _reference(cls: type, problem: Problem, epsilon: float, delta: float,
               options: Mapping[str, Any], seed: int) -> Any:
    return cls(problem, epsilon=epsilon, delta=delta, seed=seed, **dict(options))


def _vector_maker(res: Any, cls: type, env_id: str, env_kwargs: Mapping[str, Any],
                  settings: AuditSettings, claim: tuple[float, float],
                  options: Mapping[str, Any]) -> Any:
    """``make(problem, epsilon) -> vector learner`` if the reference has a vector form
    on ``env_id``'s vector path, else ``None``."""
    from dp_online_envs.envs.vector_env import VECTOR_ENV_IDS, vector_support
    from dp_online_envs.lab.experiments.resolver import vector_method

    # the audit's form (independent runs, possibly one generator for all) if the
    # resolver offers one, else the per-seed vector form
    vector = vector_method(res, "audit_vector") or vector_method(res, "vector")
    if vector is None or env_id not in VECTOR_ENV_IDS:
        return None
    # the audit replays its own sequences: the env's adversary options do not matter
    kwargs = {k: v for k, v in env_kwargs.items()
              if k not in ("horizon", "adversary", "adversary_kwargs")}
    if vector_support(env_id, horizon=settings.horizon, **kwargs) is not None:
        return None
    problem, _ = audit_problem(env_id, env_kwargs, settings.horizon)
    try:
        vector(cls, problem, epsilon=claim[0], delta=claim[1], **dict(options))
    except (ValueError, TypeError):
        return None  # no vector form of this configuration: one run at a time

    def make(problem: Problem, epsilon: float) -> Any:
        return vector(cls, problem, epsilon=epsilon, delta=claim[1], **dict(options))

    return make


def audit_power(reference: str, env_id: str, env_kwargs: Mapping[str, Any],
                claim: tuple[float, float], settings: AuditSettings = DEFAULT_SETTINGS,
                factors: Sequence[float] = DEFAULT_FACTORS, *,
                options: Mapping[str, Any] | None = None, resolver: Any = None,
                vectorize: bool = True) -> AuditPower:
    """Run :func:`~dp_online_envs.lab.audit.audit_actions` on noise cuts of a reference.

    For each ``c`` in ``factors`` the reference is built in-process, once, as
    ``cls(problem, epsilon=epsilon * c, delta=delta, **options)`` (a ``c``-fold smaller
    noise scale for a Laplace learner), played as a
    :class:`~dp_online_envs.lab.audit.sessions.ResettingSession` (``reset(seed)`` per run),
    or as its vector form (``vectorize``; B runs at a time: the audit form of the
    module docstring), and audited against the claim ``(epsilon, delta)`` with the same
    ``settings``.

    Args:
        reference: A registered agent name (or ``"module:Class"``).
        env_id, env_kwargs, claim, settings: As for the audit being qualified.
        factors: Noise cuts ``c >= 1`` (sorted, duplicates dropped).
        options: Keyword options of the reference.
        resolver: Where names are looked up (default: the agents registry).
        vectorize: Play the runs B at a time when the reference has a vector form
            (independent runs of the same learner, module docstring; ``False``: one
            run at a time, as before).

    Returns:
        The :class:`AuditPower`.

    Raises:
        ValueError: An invalid factor or claim; an unknown reference (``ExperimentError``).
        TypeError: ``vectorize`` is not a bool.
    """
    from dp_online_envs.lab.experiments.resolver import default_resolver, resolve_agent

    epsilon, delta = check_claim(claim)
    if isinstance(factors, (str, bytes)) or not isinstance(factors, Sequence) or not factors:
        raise ValueError(f"factors={factors!r}, expected a non-empty sequence of reals >= 1")
    cuts = tuple(sorted({check_real("factor", f, 1.0) for f in factors}))
    if not isinstance(vectorize, bool):
        raise TypeError(f"vectorize must be a bool, got {vectorize!r}")
    cls = resolve_agent(reference, resolver)
    opts = dict(options or {})
    res = default_resolver() if resolver is None else resolver
    vector = (_vector_maker(res, cls, env_id, env_kwargs, settings, (epsilon, delta), opts)
              if vectorize else None)
    findings: list[AuditFinding] = []
    for c in cuts:
        def make_session(problem: Problem, space: Any, c: float = c) -> Any:
            if vector is not None:
                return vector(problem, epsilon * c)
            return ResettingSession(_reference(cls, problem, epsilon * c, delta, opts, 0))

        findings.append(audit_actions(make_session, env_id, env_kwargs, (epsilon, delta),
                                      settings))
    refuted = tuple(f.refuted for f in findings)
    smallest = next((c for c, r in zip(cuts, refuted) if r), None)
    return AuditPower(reference=str(reference), factors=cuts, refuted=refuted,
                      smallest_refuted=smallest, eps_lbs=tuple(f.eps_lb for f in findings),
                      claimed_epsilon=epsilon)
