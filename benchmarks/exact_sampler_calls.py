"""Generator calls and their cost in one exact discrete-Laplace block of a short game.

What bounds the per-seed vector audit of ``private-exp2``
(``docs/algorithms/privacy-auditor.md``, "Where the vector time goes"): each run draws
one ``T``-value block from its own generator (the audit form,
``SharedStreamPrivateEXP2``, makes these calls once per chunk of runs). This counts the generator calls
one block makes (a wrapper around the
generator that counts ``integers`` calls and passes them on: a stand-in, so the numpy
samplers serve it) and times one ``Generator.integers`` call of a typical size and one
whole block, on the numpy samplers and on the compiled ones
(``agents/privacy/discrete_compiled.py``: the same draws, no generator call from Python;
a process switches to them after ``discrete.COMPILE_AFTER`` draws' worth of work).

    python benchmarks/exact_sampler_calls.py [--horizon 64] [--blocks 400]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import agents
from agents.privacy import discrete
from dp_online_envs.lab.audit.actions import audit_problem


class CountingGenerator:
    """Passes ``integers`` on to a generator and counts the calls."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng, self.calls = rng, 0

    def integers(self, *args, **kwargs):
        self.calls += 1
        return self.rng.integers(*args, **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=64)
    parser.add_argument("--blocks", type=int, default=400)
    args = parser.parse_args()
    problem = audit_problem("DPBandit-MAB-v0", {}, args.horizon)[0]
    ns = agents.make("private-exp2", problem, epsilon=1.0).noise_strategy
    counter = CountingGenerator(np.random.default_rng(0))
    for _ in range(args.blocks):
        ns.draw_int(counter, args.horizon)
    blocks = {}
    for path, after in (("numpy", None), ("compiled", 0)):
        discrete.COMPILE_AFTER = after
        rng = np.random.default_rng(1)
        ns.draw_int(rng, args.horizon)  # the compiled path: loaded before the clock
        start = time.process_time()
        for _ in range(args.blocks):
            ns.draw_int(rng, args.horizon)
        blocks[path] = (time.process_time() - start) / args.blocks
    rng = np.random.default_rng(1)
    start = time.process_time()
    for _ in range(20 * args.blocks):
        rng.integers(0, ns.t, size=50)
    call = (time.process_time() - start) / (20 * args.blocks)
    print(f"{ns}: a {args.horizon}-value block makes {counter.calls / args.blocks:.1f} "
          f"generator calls on average and takes {1e6 * blocks['numpy']:.0f} us "
          f"(compiled: {1e6 * blocks['compiled']:.1f} us); one integers(0, t, size=50) "
          f"call takes {1e6 * call:.1f} us")


if __name__ == "__main__":
    main()
