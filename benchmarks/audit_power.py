"""Time and power of the black-box action audit, scalar and vector.

On ``DPBandit-MAB-v0`` (K = 10), all in this one process (so the timings are ratios
measured under the same load):

1. The grader's path, every learner isolated in its own process
   (:class:`~dp_online_envs.lab.isolation.IsolatedLearner`), at the default settings:
   plain EXP3 declaring ``(1, 0)``-DP (no noise at all) must be refuted;
   ``private-exp2`` at epsilon = 1 must not be.
2. Trials per second of the audit played one run at a time (an in-process
   :class:`~dp_online_envs.lab.audit.ResettingSession`), B runs at a time with the
   per-seed vector learner of ``agents.vector`` (run ``b`` the scalar game of its
   seed: the findings must equal the scalar ones) and, for ``private-exp2``, B runs at
   a time with its audit form (:class:`~agents.vector.arms.SharedStreamPrivateEXP2`:
   independent runs whose uniforms and exact noise come from one generator, one
   ``draw_int(rng, B * T)`` call per chunk; other, equally valid runs, so its own
   finding), for the cheat and for ``private-exp2``: the ratios are the speedups.
   Then where the time of a shared-stream run goes.
3. The power ladder (:func:`~dp_online_envs.lab.audit.audit_power`): ``private-exp2``
   built at ``epsilon * c`` while declaring epsilon = 1, ``c`` in 1, 2, 5, 10, 30,
   100: one run at a time at the default 3000 runs, with the per-seed vector form at
   the same runs (the same findings), with the audit form (what ``audit_power``
   plays) at the same runs and at ``--scale`` times the runs and pilot runs (more
   trials for the CPU time), with the eps lower bounds and verdicts.

CPU time is this process's plus its finished children's (the isolated learners):
what "minutes on two cores" is about when the machine is shared.

``--save FILE`` stores the numbers (:mod:`benchmarks.stored`); :func:`render` draws the
block of ``docs/results.md`` from them. The stored keys ``"batched cpu s"`` and
``"batched"`` of part 2, and the labels of files stored before the rename, keep the
previous release's word ("batched" for the vector path), so that stored files still
render.

    python benchmarks/audit_power.py [--horizon 64] [--runs 3000] [--pilot-runs 400]
        [--scale 3,10,20] [--factors 1,2,5,10,30,100] [--skip-isolated] [--skip-ladder]
        [--save FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import resource
import sys
import time
from typing import Any

import agents
from agents.bandit.exp3 import EXP3
from agents.privacy import PrivacyGuarantee
from agents.vector import make_audit_vector, make_vector
from benchmarks import stored
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


def _finding(f) -> dict[str, Any]:
    """An audit finding as data: its lower bound, verdict, event counts and summary."""
    return {"eps_lb": f.eps_lb, "refuted": f.refuted, "counts": list(f.counts),
            "text": str(f)}


def isolated_audits(settings: AuditSettings) -> list[dict[str, Any]]:
    """Part 1: the cheat and ``private-exp2``, each learner isolated in its process."""
    rows = []
    for name, factory in (("exp3 declaring (1, 0)", EXP3ClaimsPrivacy),
                          ("private-exp2 at eps=1", _private_exp2)):
        f, wall, cpu = _timed(lambda factory=factory: audit_actions(
            isolated(factory), ENV, {}, CLAIM, settings))
        rows.append({"label": name, "wall s": wall, "cpu s": cpu, "games": games(settings),
                     **_finding(f)})
        _progress(f"isolated {name}: {cpu:.1f} s CPU")
    return rows


def speed(settings: AuditSettings) -> list[dict[str, Any]]:
    """Part 2: CPU time of one audit played one run at a time and as vector runs."""
    n = games(settings)
    cases = (("exp3 declaring (1, 0)", "exp3", lambda p: EXP3ClaimsPrivacy(p), {}),
             ("private-exp2 at eps=1", "private-exp2", _private_exp2, {"epsilon": 1.0}))
    rows = []
    for label, name, build, kw in cases:
        scalar, _, cpu_s = _timed(lambda build=build: audit_actions(
            lambda p, s: ResettingSession(build(p)), ENV, {}, CLAIM, settings))
        vector, _, cpu_b = _timed(lambda name=name, kw=kw: audit_actions(
            lambda p, s: make_vector(name, p, **kw), ENV, {}, CLAIM, settings))
        row = {"label": label, "games": n, "scalar cpu s": cpu_s, "batched cpu s": cpu_b,
               "same finding": scalar == vector, "batched": _finding(vector),
               "shared": None}
        if name == "private-exp2":
            shared, _, cpu_h = _timed(lambda name=name, kw=kw: audit_actions(
                lambda p, s: make_audit_vector(name, p, **kw), ENV, {}, CLAIM, settings))
            row["shared"] = {"cpu s": cpu_h, **_finding(shared),
                             **time_shares(settings, cpu_b / n, cpu_h / n)}
        rows.append(row)
        _progress(f"speed {label}: {cpu_s:.1f} s CPU one run at a time")
    return rows


def time_shares(settings: AuditSettings, per_seed: float, shared: float) -> dict[str, float]:
    """Where a vector private-exp2 run's time goes (seconds per game): its exact noise
    (per-seed: one ``T``-value block from each run's generator; shared stream: one
    ``B * T``-value draw for a chunk of B runs) and, on the shared path, the vector env's
    reset (the per-game adversary copies and seed sequences of
    ``LinearVectorEnv.reset``), beside the whole game's ``per_seed`` and ``shared``."""
    import numpy as np

    from dp_online_envs.lab.audit.vector import _vector_env

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
    return {"per-seed game s": per_seed, "per-seed noise block s": block,
            "shared game s": shared, "shared noise draw s": draw, "shared reset s": reset}


def _problem(settings: AuditSettings):
    from dp_online_envs.lab.audit.actions import audit_problem

    return audit_problem(ENV, {}, settings.horizon)[0]


def ladder(settings: AuditSettings, factors: tuple[float, ...], label: str,
           vectorize: bool, resolver=None) -> dict[str, Any]:
    """One power ladder: its settings, time and findings per noise cut."""
    power, wall, cpu = _timed(lambda: audit_power("private-exp2", ENV, {}, CLAIM, settings,
                                                  factors=factors, vectorize=vectorize,
                                                  resolver=resolver))
    _progress(f"ladder {label}: {cpu:.1f} s CPU")
    return {"label": label, "runs": settings.runs, "pilot runs": settings.pilot_runs,
            "games": len(factors) * games(settings), "wall s": wall, "cpu s": cpu,
            "summary": str(power), "factors": list(power.factors),
            "eps_lbs": list(power.eps_lbs), "refuted": list(power.refuted)}


def measure(settings: AuditSettings, factors: tuple[float, ...], scales: list[int],
            skip_isolated: bool = False, skip_ladder: bool = False) -> dict[str, Any]:
    """Parts 1 to 3 (module docstring) as data."""
    data: dict[str, Any] = {
        "isolated": [] if skip_isolated else isolated_audits(settings),
        "speed": speed(settings), "ladders": []}
    if skip_ladder:
        return data
    ladders = data["ladders"]
    ladders.append(ladder(settings, factors, "one run at a time", vectorize=False))
    ladders.append(ladder(settings, factors, "per-seed vector", vectorize=True,
                          resolver=agents.per_seed_registry))
    ladders.append(ladder(settings, factors, "shared-stream vector (audit_power's "
                          "default)", vectorize=True))
    for scale in scales:
        big = dataclasses.replace(settings, runs=settings.runs * scale,
                                  pilot_runs=settings.pilot_runs * scale)
        ladders.append(ladder(big, factors, f"shared-stream vector, {scale}x the runs",
                              vectorize=True))
    data["same findings one at a time / per-seed"] = (
        ladders[0]["eps_lbs"] == ladders[1]["eps_lbs"]
        and ladders[0]["refuted"] == ladders[1]["refuted"])
    return data


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _counts(finding: dict[str, Any]) -> str:
    return "(" + ", ".join(str(c) for c in finding["counts"]) + ")"


def _ladder_lines(row: dict[str, Any]) -> list[str]:
    lbs = ", ".join(f"{c:g}x: {lb:.3f}{' R' if r else ''}"
                    for c, lb, r in zip(row["factors"], row["eps_lbs"], row["refuted"]))
    return [f"  {row['label']} (runs {row['runs']}, pilot runs {row['pilot runs']}, "
            f"{row['games']} games): {row['wall s']:.1f} s wall, {row['cpu s']:.1f} s CPU; "
            f"{row['summary']}", f"    eps_lb per noise cut (R: refuted): {lbs}"]


def render(doc: dict[str, Any]) -> str:
    """The text block of a stored document of :func:`measure`."""
    data, lines = doc["data"], [f"settings: {doc['settings']['audit']}"]
    if data["isolated"]:
        lines.append("1. grader's path (isolated learners, one run at a time)")
    for r in data["isolated"]:
        lines += [f"  {r['label']} [isolated]: {r['wall s']:.1f} s wall, {r['cpu s']:.1f} s "
                  f"CPU ({r['games'] / r['cpu s']:.0f} games/s), eps_lb = {r['eps_lb']:.3f}, "
                  f"refuted = {r['refuted']}", f"    {r['text']}"]
    n = data["speed"][0]["games"]
    lines.append(f"2. trials per second, one run at a time vs vector ({n} games per audit)")
    for r in data["speed"]:
        s, b, f = r["scalar cpu s"], r["batched cpu s"], r["batched"]
        lines.append(f"  {r['label']}: scalar {s:.2f} s CPU ({n / s:.0f} games/s); per-seed "
                     f"vector {b:.2f} s CPU ({n / b:.0f} games/s): ratio {s / b:.1f}x, "
                     f"same finding: {r['same finding']} (eps_lb = {f['eps_lb']:.3f}, "
                     f"counts {_counts(f)})")
        h = r["shared"]
        if h is None:
            continue
        lines.append(f"    shared-stream vector {h['cpu s']:.2f} s CPU ({n / h['cpu s']:.0f} "
                     f"games/s): ratio {s / h['cpu s']:.1f}x the scalar, {b / h['cpu s']:.1f}x "
                     f"the per-seed vector; its own finding (other runs): eps_lb = "
                     f"{h['eps_lb']:.3f}, counts {_counts(h)}, refuted = {h['refuted']}")
        audit = doc["settings"]["audit"]
        per_seed, shared = h["per-seed game s"], h["shared game s"]
        lines.append(
            f"  where a vector private-exp2 run's time goes: per-seed, its exact noise (one "
            f"{audit['horizon']}-value block from its own generator) "
            f"{1e6 * h['per-seed noise block s']:.0f} us of the {1e6 * per_seed:.0f} us per "
            f"game ({100 * h['per-seed noise block s'] / per_seed:.0f}%); shared stream, its "
            f"share of one {audit['runs']}x{audit['horizon']}-value draw "
            f"{1e6 * h['shared noise draw s']:.1f} us and of the vector env's reset "
            f"{1e6 * h['shared reset s']:.1f} us of the {1e6 * shared:.0f} us per game "
            f"({100 * h['shared noise draw s'] / shared:.0f}% and "
            f"{100 * h['shared reset s'] / shared:.0f}%)")
    ladders = data["ladders"]
    if not ladders:
        return "\n".join(lines)
    slow = ladders[0]["cpu s"]
    lines.append("3. power ladder: private-exp2 built at eps*c, declaring eps = 1")
    lines += _ladder_lines(ladders[0]) + _ladder_lines(ladders[1])
    lines.append(f"  same findings: {data['same findings one at a time / per-seed']}; "
                 f"ratio {slow / ladders[1]['cpu s']:.1f}x")
    lines += _ladder_lines(ladders[2])
    lines.append(f"    ratio {slow / ladders[2]['cpu s']:.1f}x the one-run-at-a-time ladder")
    for row in ladders[3:]:
        lines += _ladder_lines(row)
        lines.append(f"    CPU time {row['cpu s'] / slow:.2f}x that of the one-run-at-a-time "
                     f"ladder at {ladders[0]['runs']} runs")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=AuditSettings.horizon)
    parser.add_argument("--runs", type=int, default=AuditSettings.runs)
    parser.add_argument("--pilot-runs", type=int, default=AuditSettings.pilot_runs)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", default="3,10,20",
                        help="comma-separated multiples of runs and pilot runs for the "
                             "vector ladder")
    parser.add_argument("--factors", default="1,2,5,10,30,100")
    parser.add_argument("--skip-isolated", action="store_true")
    parser.add_argument("--skip-ladder", action="store_true")
    stored.add_save_argument(parser)
    args = parser.parse_args(argv)
    settings = AuditSettings(horizon=args.horizon, runs=args.runs,
                             pilot_runs=args.pilot_runs, seed=args.seed)
    factors = tuple(float(c) for c in args.factors.split(","))
    scales = [int(s) for s in args.scale.split(",")]
    run = stored.Measurement("audit-power", {
        "audit": settings.to_dict(), "factors": list(factors), "scales": scales,
        "skip isolated": args.skip_isolated, "skip ladder": args.skip_ladder})
    doc = run.document(measure(settings, factors, scales, args.skip_isolated,
                               args.skip_ladder))
    stored.save(args.save, doc)
    print(render(doc))


if __name__ == "__main__":
    # the isolated learners' processes unpickle the factories by their module's name:
    # run them as benchmarks.audit_power's, not as __main__'s (not importable there)
    from benchmarks.audit_power import main as _main

    _main()
