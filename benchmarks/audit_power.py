"""Time and power of the black-box action audit, scalar and batched.

On ``DPBandit-MAB-v0`` (K = 10), all in this one process (so the timings are ratios
measured under the same load):

1. The grader's path, every learner isolated in its own process
   (:class:`~dp_online_envs.lab.isolation.IsolatedLearner`), at the default settings:
   plain EXP3 declaring ``(1, 0)``-DP (no noise at all) must be refuted;
   ``private-exp2`` at epsilon = 1 must not be.
2. Trials per second of the audit played one run at a time (an in-process
   :class:`~dp_online_envs.lab.audit.ResettingSession`), B runs at a time with the
   per-seed batched learner of ``agents.vectorized`` (run ``b`` the scalar game of its
   seed: the findings must equal the scalar ones) and, for ``private-exp2``, B runs at
   a time with its audit form (:class:`~agents.vectorized.arms.SharedStreamPrivateEXP2`:
   independent runs whose uniforms and exact noise come from one generator, one
   ``draw_int(rng, B * T)`` call per chunk; other, equally valid runs, so its own
   finding), for the cheat and for ``private-exp2``: the ratios are the speedups.
   Then where the time of a shared-stream run goes.
3. The power ladder (:func:`~dp_online_envs.lab.audit.audit_power`): ``private-exp2``
   built at ``epsilon * c`` while declaring epsilon = 1, ``c`` in 1, 2, 5, 10, 30,
   100: one run at a time at the default 3000 runs, with the per-seed batched form at
   the same runs (the same findings), with the audit form (what ``audit_power``
   plays) at the same runs and at ``--scale`` times the runs and pilot runs (more
   trials for the CPU time), with the eps lower bounds and verdicts.

CPU time is this process's plus its finished children's (the isolated learners):
what "minutes on two cores" is about when the machine is shared.

    python benchmarks/audit_power.py [--horizon 64] [--runs 3000] [--pilot-runs 400]
        [--scale 3,10,20] [--factors 1,2,5,10,30,100] [--skip-isolated] [--skip-ladder]
"""

from __future__ import annotations

import argparse
import dataclasses
import resource
import time

import agents
from agents.bandit.exp3 import EXP3
from agents.privacy import PrivacyGuarantee
from agents.vectorized import make_audit_batched, make_batched
from dp_online_envs.lab.audit import (
    AuditSettings,
    ResettingSession,
    audit_actions,
    audit_power,
)
from dp_online_envs.lab.isolation import IsolatedLearner, IsolationLimits

ENV, CLAIM = "DPBandit-MAB-v0", (1.0, 0.0)


class EXP3ClaimsPrivacy(EXP3):
    """Plain EXP3 declaring (1, 0)-DP: the cheat."""

    name = "bench-exp3-claims-privacy"

    def setup(self, **options) -> None:
        super().setup(**options)
        self.privacy = PrivacyGuarantee(1.0, 0.0, mechanism="none: a false claim")


def _private_exp2(problem):
    return agents.make("private-exp2", problem, epsilon=1.0)


def isolated(factory):
    """``make_session`` of an isolated learner built by ``factory(problem)``."""
    return lambda problem, space: IsolatedLearner(factory, problem, space,
                                                  IsolationLimits(timeout=60.0))


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the isolated learners)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def games(settings: AuditSettings) -> int:
    """Games one audit plays: pilot runs on both sides of 2 pairs per tau, test runs
    on both sides of the kept pair."""
    return 2 * 2 * len(settings.taus) * settings.pilot_runs + 2 * settings.runs


def _timed(fn):
    start, cpu = time.perf_counter(), cpu_seconds()
    out = fn()
    return out, time.perf_counter() - start, cpu_seconds() - cpu


def isolated_audits(settings: AuditSettings) -> None:
    print("1. grader's path (isolated learners, one run at a time)", flush=True)
    for name, factory in (("exp3 declaring (1, 0)", EXP3ClaimsPrivacy),
                          ("private-exp2 at eps=1", _private_exp2)):
        f, wall, cpu = _timed(lambda factory=factory: audit_actions(
            isolated(factory), ENV, {}, CLAIM, settings))
        print(f"  {name} [isolated]: {wall:.1f} s wall, {cpu:.1f} s CPU "
              f"({games(settings) / cpu:.0f} games/s), "
              f"eps_lb = {f.eps_lb:.3f}, refuted = {f.refuted}\n    {f}", flush=True)




def speed(settings: AuditSettings) -> None:
    n = games(settings)
    print(f"2. trials per second, one run at a time vs batched ({n} games per audit)",
          flush=True)
    cases = (("exp3 declaring (1, 0)", "exp3", lambda p: EXP3ClaimsPrivacy(p), {}),
             ("private-exp2 at eps=1", "private-exp2", _private_exp2, {"epsilon": 1.0}))
    for label, name, build, kw in cases:
        scalar, _, cpu_s = _timed(lambda build=build: audit_actions(
            lambda p, s: ResettingSession(build(p)), ENV, {}, CLAIM, settings))
        batched, _, cpu_b = _timed(lambda name=name, kw=kw: audit_actions(
            lambda p, s: make_batched(name, p, **kw), ENV, {}, CLAIM, settings))
        print(f"  {label}: scalar {cpu_s:.2f} s CPU ({n / cpu_s:.0f} games/s); per-seed "
              f"batched {cpu_b:.2f} s CPU ({n / cpu_b:.0f} games/s): ratio "
              f"{cpu_s / cpu_b:.1f}x, same finding: {scalar == batched} (eps_lb = "
              f"{batched.eps_lb:.3f}, counts {batched.counts})", flush=True)
        if name == "private-exp2":
            shared, _, cpu_h = _timed(lambda name=name, kw=kw: audit_actions(
                lambda p, s: make_audit_batched(name, p, **kw), ENV, {}, CLAIM, settings))
            print(f"    shared-stream batched {cpu_h:.2f} s CPU ({n / cpu_h:.0f} games/s): "
                  f"ratio {cpu_s / cpu_h:.1f}x the scalar, {cpu_b / cpu_h:.1f}x the "
                  f"per-seed batched; its own finding (other runs): eps_lb = "
                  f"{shared.eps_lb:.3f}, counts {shared.counts}, refuted = "
                  f"{shared.refuted}", flush=True)
            time_shares(settings, cpu_b / n, cpu_h / n)


def time_shares(settings: AuditSettings, per_seed: float, shared: float) -> None:
    """Where a batched private-exp2 run's time goes: its exact noise (per-seed: one
    ``T``-value block from each run's generator; shared stream: one ``B * T``-value
    draw for a chunk of B runs) and, on the shared path, the vector env's reset (the
    per-game adversary copies and seed sequences of ``LinearVectorEnv.reset``)."""
    import numpy as np

    from dp_online_envs.lab.audit.batched import _vector_env

    problem = _problem(settings)
    ns = agents.make("private-exp2", problem, epsilon=1.0).noise_strategy
    rng, n, T, B = np.random.default_rng(0), 200, settings.horizon, settings.runs
    start = time.process_time()
    for _ in range(n):
        ns.draw_int(rng, T)
    block = (time.process_time() - start) / n
    start = time.process_time()
    for _ in range(5):
        ns.draw_int(rng, B * T)
    draw = (time.process_time() - start) / 5 / B
    from dp_online_envs.lab.audit.actions import candidates

    venv = _vector_env(ENV, {}, candidates(problem, (1,))[0].sequence, B)
    start = time.process_time()
    for _ in range(3):
        venv.reset(seed=0)
    reset = (time.process_time() - start) / 3 / B
    venv.close()
    print(f"  where a batched private-exp2 run's time goes: per-seed, its exact noise "
          f"(one {T}-value block from its own generator) {1e6 * block:.0f} us of the "
          f"{1e6 * per_seed:.0f} us per game ({100 * block / per_seed:.0f}%); shared "
          f"stream, its share of one {B}x{T}-value draw {1e6 * draw:.1f} us and of the "
          f"vector env's reset {1e6 * reset:.1f} us of the {1e6 * shared:.0f} us per "
          f"game ({100 * draw / shared:.0f}% and {100 * reset / shared:.0f}%)",
          flush=True)


def _problem(settings: AuditSettings):
    from dp_online_envs.lab.audit.actions import audit_problem

    return audit_problem(ENV, {}, settings.horizon)[0]


def ladder(settings: AuditSettings, factors: tuple[float, ...], label: str,
           vectorize: bool, resolver=None) -> tuple[object, float]:
    power, wall, cpu = _timed(lambda: audit_power("private-exp2", ENV, {}, CLAIM, settings,
                                                  factors=factors, vectorize=vectorize,
                                                  resolver=resolver))
    lbs = ", ".join(f"{c:g}x: {lb:.3f}{' R' if r else ''}"
                    for c, lb, r in zip(power.factors, power.eps_lbs, power.refuted))
    print(f"  {label} (runs {settings.runs}, pilot runs {settings.pilot_runs}, "
          f"{len(factors) * games(settings)} games): {wall:.1f} s wall, {cpu:.1f} s CPU; "
          f"{power}\n    eps_lb per noise cut (R: refuted): {lbs}", flush=True)
    return power, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=AuditSettings.horizon)
    parser.add_argument("--runs", type=int, default=AuditSettings.runs)
    parser.add_argument("--pilot-runs", type=int, default=AuditSettings.pilot_runs)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", default="3,10,20",
                        help="comma-separated multiples of runs and pilot runs for the "
                             "batched ladder")
    parser.add_argument("--factors", default="1,2,5,10,30,100")
    parser.add_argument("--skip-isolated", action="store_true")
    parser.add_argument("--skip-ladder", action="store_true")
    args = parser.parse_args()
    settings = AuditSettings(horizon=args.horizon, runs=args.runs,
                             pilot_runs=args.pilot_runs, seed=args.seed)
    print(f"settings: {settings.to_dict()}", flush=True)
    if not args.skip_isolated:
        isolated_audits(settings)
    speed(settings)
    if args.skip_ladder:
        return
    factors = tuple(float(c) for c in args.factors.split(","))
    print("3. power ladder: private-exp2 built at eps*c, declaring eps = 1", flush=True)
    slow, cpu_slow = ladder(settings, factors, "one run at a time", vectorize=False)
    per_seed, cpu_per_seed = ladder(settings, factors, "per-seed batched", vectorize=True,
                                    resolver=agents.per_seed_registry)
    print(f"  same findings: {slow == per_seed}; ratio {cpu_slow / cpu_per_seed:.1f}x",
          flush=True)
    _, cpu_shared = ladder(settings, factors, "shared-stream batched (audit_power's "
                           "default)", vectorize=True)
    print(f"    ratio {cpu_slow / cpu_shared:.1f}x the one-run-at-a-time ladder",
          flush=True)
    for scale in (int(s) for s in args.scale.split(",")):
        big = dataclasses.replace(settings, runs=settings.runs * scale,
                                  pilot_runs=settings.pilot_runs * scale)
        _, cpu = ladder(big, factors, f"shared-stream batched, {scale}x the runs",
                        vectorize=True)
        print(f"    CPU time {cpu / cpu_slow:.2f}x that of the one-run-at-a-time ladder at "
              f"{settings.runs} runs", flush=True)


if __name__ == "__main__":
    main()
