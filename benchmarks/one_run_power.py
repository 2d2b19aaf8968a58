"""The one-run audit's power on each registered private learner, at the leaderboard's
audit settings.

For every registered private learner, on the first audit game of its feedback kind it
plays (:data:`~dp_online_envs.lab.leaderboard.score.AUDIT_GAMES`), at every scored
horizon of the default benchmark (``T`` in 1024 and 4096, 16 games each), claiming
epsilon = 1: the learner built at ``epsilon * c`` for each noise cut ``c`` (its
noise-free twin is ``c`` = :data:`~dp_online_envs.lab.audit.one_run.TWIN_FACTOR`),
in process, one learner after another. Prints one line per (learner, cut): the right
guesses of the reported rule with their two-sided 95% Clopper-Pearson interval, the
bound, the verdict and the CPU seconds::

    python benchmarks/one_run_power.py [--seed S] [--cuts 3,10000] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import time

import agents
import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs.envs import build_env
from dp_online_envs.lab.audit.one_run import AuditGame, OneRunSettings, audit_one_run
from dp_online_envs.lab.audit.statistics import clopper_pearson
from dp_online_envs.lab.leaderboard.score import AUDIT_GAMES, default_benchmark

#: Learners whose claims need delta > 0 (as the leaderboard plays them).
NEEDS_DELTA = {"private-ftpl", "private-ftpl-grad", "private-lazy-mw"}


def audit_game(cls) -> tuple[str, dict] | None:
    """The first audit game of the learner's kind it accepts (``None``: none)."""
    for env, kwargs in AUDIT_GAMES.get(cls.feedback, ()):
        problem = build_env(env, horizon=64, **kwargs).get_wrapper_attr("problem")
        try:
            cls(problem, epsilon=1.0, delta=1e-6 if cls.name in NEEDS_DELTA else 0.0, seed=0)
        except (ValueError, TypeError):
            continue
        return env, dict(kwargs)
    return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=101)
    parser.add_argument("--cuts", default="3,10000")
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args(argv)
    bench = default_benchmark()
    settings = OneRunSettings(games=bench.audit_games, seed=args.seed)
    cuts = [float(c) for c in args.cuts.split(",")]
    names = args.only or sorted(a.name for a in agents.list_agents()
                                if agents.agent_class(a.name).private)
    print(f"audit seed {args.seed}; T = {bench.audit_horizons}, {bench.audit_games} games "
          "each; claim epsilon = 1", flush=True)
    for name in names:
        cls = agents.agent_class(name)
        found = audit_game(cls)
        if found is None:
            print(f"{name}: plays no audit game", flush=True)
            continue
        env, kwargs = found
        games = [AuditGame(env, kwargs, h) for h in bench.audit_horizons]
        delta = 1e-6 if name in NEEDS_DELTA else 0.0
        for c in cuts:
            start = time.process_time()

            def make(problem, space, seed, c=c, cls=cls, delta=delta):
                return cls(problem, epsilon=c, delta=delta, seed=seed)

            f = audit_one_run(make, games, (1.0, delta), settings)
            lo, hi = clopper_pearson(f.correct, f.guesses, 0.95) if f.guesses else (0.0, 1.0)
            print(f"{name} on {env} cut {c:g}: {f.correct}/{f.guesses} right "
                  f"[{lo:.2f}, {hi:.2f}], eps_lb {f.eps_lb:.2f}, "
                  f"{'REFUTED' if f.refuted else 'not refuted'}, rr {f.rr_epsilon:.3g}, "
                  f"{time.process_time() - start:.1f} s CPU", flush=True)


if __name__ == "__main__":
    main()
