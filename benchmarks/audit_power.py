"""Time and power of the black-box action audit at its default settings.

Three measurements on ``DPBandit-MAB-v0`` (K = 10), every learner isolated in its own
process (:class:`~dp_online_envs.isolation.IsolatedLearner`), as a grader runs it:

* plain EXP3 declaring ``(1, 0)``-DP (no noise at all): must be refuted;
* ``private-exp2`` at epsilon = 1: must not be refuted;
* the power ladder (:func:`~dp_online_envs.audit.audit_power`): ``private-exp2`` built
  at ``epsilon * c`` while declaring epsilon = 1, ``c`` in 1, 2, 5, 10, 30, 100
  (in-process: the reference is a registered agent).

Prints wall time (noisy on a shared machine), CPU time (this process plus the isolated
learner's, which is what "minutes on two cores" is about when the machine is shared)
and each finding.

    python benchmarks/audit_power.py [--horizon 64] [--runs 2000] [--pilot-runs 200]
        [--seeds 1] [--factors 1,2,5,10,30,100]
"""

from __future__ import annotations

import argparse
import resource
import time

from agents.bandit.exp3 import EXP3
from agents.privacy import PrivacyGuarantee
from dp_online_envs.audit import AuditSettings, audit_actions, audit_power
from dp_online_envs.isolation import IsolatedLearner, IsolationLimits

ENV, CLAIM = "DPBandit-MAB-v0", (1.0, 0.0)


class EXP3ClaimsPrivacy(EXP3):
    """Plain EXP3 declaring (1, 0)-DP: the cheat."""

    name = "bench-exp3-claims-privacy"

    def setup(self, **options) -> None:
        super().setup(**options)
        self.privacy = PrivacyGuarantee(1.0, 0.0, mechanism="none: a false claim")


def _private_exp2(problem):
    import agents

    return agents.make("private-exp2", problem, epsilon=1.0)


def isolated(factory):
    """``make_session`` of an isolated learner built by ``factory(problem)``."""
    return lambda problem, space: IsolatedLearner(factory, problem, space,
                                                  IsolationLimits(timeout=60.0))


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the isolated learners)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=AuditSettings.horizon)
    parser.add_argument("--runs", type=int, default=AuditSettings.runs)
    parser.add_argument("--pilot-runs", type=int, default=AuditSettings.pilot_runs)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--factors", default="1,2,5,10,30,100")
    parser.add_argument("--skip-ladder", action="store_true")
    args = parser.parse_args()
    for seed in range(args.seeds):
        settings = AuditSettings(horizon=args.horizon, runs=args.runs,
                                 pilot_runs=args.pilot_runs, seed=seed)
        print(f"settings: {settings.to_dict()}", flush=True)
        for name, factory in (("exp3 declaring (1, 0)", EXP3ClaimsPrivacy),
                              ("private-exp2 at eps=1", _private_exp2)):
            start, cpu = time.perf_counter(), cpu_seconds()
            f = audit_actions(isolated(factory), ENV, {}, CLAIM, settings)
            print(f"  {name} [isolated]: {time.perf_counter() - start:.1f} s wall, "
                  f"{cpu_seconds() - cpu:.1f} s CPU, "
                  f"eps_lb = {f.eps_lb:.3f}, refuted = {f.refuted}\n    {f}", flush=True)
        if args.skip_ladder:
            continue
        factors = tuple(float(c) for c in args.factors.split(","))
        start, cpu = time.perf_counter(), cpu_seconds()
        power = audit_power("private-exp2", ENV, {}, CLAIM, settings, factors=factors)
        lbs = ", ".join(f"{c:g}x: {lb:.3f}" for c, lb in zip(power.factors, power.eps_lbs))
        print(f"  power ladder [in-process]: {time.perf_counter() - start:.1f} s wall, "
              f"{cpu_seconds() - cpu:.1f} s CPU; {power}\n"
              f"    eps_lb per noise cut: {lbs}", flush=True)


if __name__ == "__main__":
    main()
