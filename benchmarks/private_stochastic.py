"""Private stochastic bandits (AdaP-UCB, AdaP-KLUCB; Azize-Basu NeurIPS 2022) against the
adversarial private learners private-exp2 and private-batched-htinf on
``DPBandit-MAB-v0``, under its default i.i.d. adversary (where the stochastic learners'
guarantees hold) and the ``switching`` and ``lower-bound`` adversaries (where they do
not), with the non-private learners of both kinds for reference.

Every learner plays the same games: game seed ``s`` for ``s = 0 .. --seeds - 1`` (the
agent's seed is the game seed too), so two learners' regrets are paired by seed. Regret
is ``summary.regret`` (against the best fixed arm in hindsight). Printed:

1. non-private references (``ucb1``, ``kl-ucb``, ``thompson``, ``exp3``, ``htinf``,
   trivial play ``uniform``), per adversary: mean regret with its Student-t 95% interval
   over the seeds;
2. per adversary, per epsilon: the four private learners' mean regret [95% interval];
3. per adversary, per epsilon: the paired differences ``AdaP - baseline`` (regret of the
   AdaP learner minus the baseline's on the same seed), mean [95% paired t interval], and
   which side the interval supports (``AdaP`` lower, ``baseline`` lower, or ``~`` when it
   contains 0).

Prints markdown (the block of the ``private-stochastic`` section of ``docs/results.md``;
its prose is in ``benchmarks/results_template.md``). Usage::

    python benchmarks/private_stochastic.py                     # the docs/results.md run
    python benchmarks/private_stochastic.py --T 1000 --seeds 3 --eps 1
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from private_bandits import ENV, regrets  # noqa: E402  (the same games, seeds 0..n-1)

from dp_online_envs import build_env  # noqa: E402
from dp_online_envs.lab.experiments.analysis import mean_ci  # noqa: E402

ADAP = ("adap-ucb", "adap-klucb")
BASELINES = ("private-exp2", "private-batched-htinf")
REFERENCES = ("ucb1", "kl-ucb", "thompson", "exp3", "htinf", "uniform")
ADVERSARIES = {"stochastic (default, i.i.d.)": {}, "switching": {"adversary": "switching"},
               "lower-bound": {"adversary": "lower-bound"}}


def ci(x: np.ndarray) -> str:
    """``mean [lo, hi]``: the Student-t 95% interval of the mean over the seeds."""
    m, lo, hi = mean_ci(x)
    return f"{m:.1f} [{lo:.1f}, {hi:.1f}]"


def paired(a: np.ndarray, b: np.ndarray, names: tuple[str, str]) -> str:
    """The paired difference ``a - b`` (same seeds): ``mean [lo, hi]`` and the side its
    95% interval supports (``~`` when the interval contains 0)."""
    m, lo, hi = mean_ci(a - b)
    side = names[0] if hi < 0 else names[1] if lo > 0 else "~"
    return f"{m:+.1f} [{lo:+.1f}, {hi:+.1f}] {side}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--T", type=int, default=10000)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--eps", default="0.1,0.3,1,3")
    args = ap.parse_args(argv)
    epsilons = [float(e) for e in args.eps.split(",")]
    start = time.perf_counter()
    k = build_env(ENV, horizon=10).unwrapped.problem.dim
    print(f"Printed by `python benchmarks/private_stochastic.py --T {args.T} --seeds "
          f"{args.seeds} --eps {args.eps}`: `{ENV}` (K = {k}), T = {args.T}, game seeds "
          f"0..{args.seeds - 1} for every learner (paired), regret against the best fixed "
          f"arm in hindsight, mean [Student-t 95% interval].\n")

    print("### Non-private references\n")
    print("| adversary | " + " | ".join(REFERENCES) + " |")
    print("|---|" + "---|" * len(REFERENCES))
    for adv, env_kw in ADVERSARIES.items():
        cells = [ci(regrets(n, None, args.T, env_kw, args.seeds)) for n in REFERENCES]
        print(f"| {adv} | " + " | ".join(cells) + " |")
    print()

    for adv, env_kw in ADVERSARIES.items():
        r = {(n, e): regrets(n, e, args.T, env_kw, args.seeds)
             for e in epsilons for n in (*ADAP, *BASELINES)}
        print(f"### Adversary: {adv}\n")
        print("| epsilon | " + " | ".join((*ADAP, *BASELINES)) + " |")
        print("|---|" + "---|" * (len(ADAP) + len(BASELINES)))
        for e in epsilons:
            print(f"| {e:g} | " + " | ".join(ci(r[n, e]) for n in (*ADAP, *BASELINES)) + " |")
        print()
        pairs = [(a, b) for a in ADAP for b in BASELINES]
        print("Paired differences (AdaP minus baseline; the side named is the one with the "
              "lower regret where the 95% interval excludes 0):\n")
        print("| epsilon | " + " | ".join(f"{a} - {b}" for a, b in pairs) + " |")
        print("|---|" + "---|" * len(pairs))
        for e in epsilons:
            print(f"| {e:g} | " + " | ".join(
                paired(r[a, e], r[b, e], (a, b)) for a, b in pairs) + " |")
        print()
    print(f"(wall time {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
