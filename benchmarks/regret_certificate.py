"""Width of the certified regret interval and the game time it costs.

For the convex families without an exact comparator (distance, absolute, hinge,
logistic), the :class:`~dp_online_envs.wrappers.RegretRecorder` brackets the regret in
``[regret_lo, regret_hi]``. This plays the same seeded game twice in one process:

* ``new``: the default comparator (dual certificate + smoothed Newton,
  :func:`dp_online_envs.hindsight.minimize_smoothed`);
* ``old``: the previous projected-subgradient / Frank-Wolfe solver with averaged
  linear minorants (:func:`dp_online_envs.hindsight.minimize_convex_sum`), selected by
  patching the family lookup so that every family falls back on it,

and prints the relative width ``(hi - lo) / |mid|`` of the final interval, the worst
relative width over the regret curve's checkpoints, and the wall-clock time of the
whole game (learner, env and recorder) with its ratio ``new / old``. The games are
identical (same seeds, and the comparator does not feed back into the game).

Usage::

    python benchmarks/regret_certificate.py [--horizon 8192] [--reps 3] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym  # noqa: E402

import dp_online_envs  # noqa: E402,F401  (registers the env ids)
from agents import make, play  # noqa: E402
from dp_online_envs import hindsight  # noqa: E402

#: (env id, loss, agent, horizon factor): full-information FTAL on the l2 ball (the
#: certificate's reference setting), then oracle-only polytopes (bandit defaults use the distance loss).
CASES = [
    ("DPFullInfo-Convex-v1", "distance", "ftal", 1.0),
    ("DPFullInfo-Convex-v1", "absolute", "ftal", 1.0),
    ("DPFullInfo-Convex-v1", "hinge", "ftal", 1.0),
    ("DPFullInfo-Convex-v1", "logistic", "ftal", 1.0),
    ("DPFullInfo-Matroid-v1", "distance", "online-fw", 0.25),
    ("DPFullInfo-Matroid-v1", "absolute", "online-fw", 0.25),
    ("DPFullInfo-Matroid-v1", "hinge", "online-fw", 0.25),
    ("DPFullInfo-Matroid-v1", "logistic", "online-fw", 0.25),
    ("DPBandit-Flow-v1", "distance", "garber-kretzu", 0.25),
    ("DPBandit-Birkhoff-v1", "distance", "garber-kretzu", 0.25),
]


def _rel_width(lo: float, hi: float) -> float:
    mid = 0.5 * (lo + hi)
    return (hi - lo) / abs(mid) if mid != 0.0 else (0.0 if hi == lo else float("inf"))


def run(env_id: str, loss: str, agent_name: str, horizon: int, seed: int,
        old: bool) -> tuple[float, float, float, float]:
    """One game: ``(seconds, final relative width, worst checkpoint width, regret mid)``."""
    env = gym.make(env_id, horizon=horizon, loss=loss)
    agent = make(agent_name, env.get_wrapper_attr("problem"), seed=seed)
    patch = (mock.patch.object(hindsight, "_smooth_family", lambda _loss: None) if old
             else mock.patch.object(hindsight, "_smooth_family", hindsight._smooth_family))
    with patch:
        start = time.perf_counter()
        s = play(env, agent, seed=seed, agent_seed=seed)  # one game for old and new
        seconds = time.perf_counter() - start
    worst = max(_rel_width(a, b) for a, b in zip(s.regret_curve_lo, s.regret_curve_hi))
    return seconds, _rel_width(s.regret_lo, s.regret_hi), worst, s.regret


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=8192)
    parser.add_argument("--reps", type=int, default=3, help="timing repetitions (min kept)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="first four cases, one rep")
    args = parser.parse_args()
    cases = CASES[:4] if args.quick else CASES
    reps = 1 if args.quick else args.reps
    print(f"{'env':<22} {'loss':<9} {'agent':<14} {'T':>5} {'regret':>9} "
          f"{'width old':>10} {'width new':>10} {'curve old':>10} {'curve new':>10} "
          f"{'t old':>7} {'t new':>7} {'ratio':>6}")
    for env_id, loss, agent_name, factor in cases:
        horizon = max(16, int(args.horizon * factor))
        res = {}
        for old in (True, False):
            runs = [run(env_id, loss, agent_name, horizon, args.seed, old) for _ in range(reps)]
            res[old] = (min(r[0] for r in runs), *runs[0][1:])
        (t_old, w_old, c_old, _), (t_new, w_new, c_new, reg) = res[True], res[False]
        print(f"{env_id:<22} {loss:<9} {agent_name:<14} {horizon:>5} {reg:>9.3f} "
              f"{w_old:>10.2e} {w_new:>10.2e} {c_old:>10.2e} {c_new:>10.2e} "
              f"{t_old:>6.2f}s {t_new:>6.2f}s {t_new / t_old:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
