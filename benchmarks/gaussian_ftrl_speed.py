"""Rounds per CPU second of a Gaussian ``private-ftrl`` game: float Gaussian vs exact discrete.

What is timed
-------------
The full loop of one game through :func:`dp_online_envs.loop.run_rounds` (env, wrappers,
regret recorder, agent) of ``private-ftrl`` with ``epsilon = 1, delta = 1e-5`` on
``DPFullInfo-Experts-v0`` (``--arms`` experts, horizon ``--rounds``), counter
``--counter`` (default ``"tree"``), under two mechanisms, in the SAME process,
interleaved repeat by repeat (the machine is shared; the ratio is what is reported):

* ``float``: the former mechanism, numpy's ``rng.normal`` added in float64 (the
  counter built with ``noise="gaussian"``; its guarantee is idealized);
* ``exact``: the default, ``noise="discrete-gaussian"`` -- inputs on a
  power-of-two grid, int64 sums, integer noise from the CKS discrete Gaussian sampler
  drawn ``EXACT_NOISE_BLOCK`` vectors per call.

The game's agent construction and reset (calibration, cached after the first game) are
outside the timed region; the first game of each mechanism is a warm-up and not counted.
The clock is the CPU time of the process (``time.process_time``: the other jobs of a
shared machine do not inflate it). ``--save FILE`` stores the rates
(:mod:`benchmarks.stored`); :func:`render` draws the block of ``docs/results.md``.

    python benchmarks/gaussian_ftrl_speed.py [--rounds 1500] [--arms 10] [--repeats 7]
        [--counter tree] [--secure] [--save FILE]

Measured on the shared 2-core machine (2026-11-22, T = 1500, K = 10, counter ``tree``,
7 interleaved repeats, median rounds per wall second), three runs:

* float 5700 / exact 4564 (0.801); float 5452 / exact 4406 (0.808); float 6314 / exact
  5112 (0.810); an earlier run with 9 repeats gave 0.825;
* ``--secure`` (OS generator, about 5.5 us per discrete Gaussian value instead of
  1.2 us): float 5759 / exact 3972 (0.690).

Before the sampler's batch sizing and the scalar-bound draws (same script), the exact
side kept 0.66-0.78; ``--counter honaker`` then gave 0.71.
"""

from __future__ import annotations

import argparse
import statistics
import time

import agents
import dp_online_envs  # noqa: F401  (registers the ids)
from agents import counter_agent
from benchmarks import stored
from dp_online_envs import build_env
from dp_online_envs.loop import run_rounds


def _float_make_counter(real):
    def make(*args, noise, **kwargs):
        return real(*args, noise="gaussian" if noise == "discrete-gaussian" else noise,
                    **kwargs)
    return make


def one_game(mechanism: str, rounds: int, arms: int, counter: str, seed: int,
             secure: bool = False) -> float:
    """Rounds per CPU second of one seeded game under ``mechanism`` (``"float"`` or
    ``"exact"``)."""
    real = counter_agent.make_counter
    if mechanism == "float":
        counter_agent.make_counter = _float_make_counter(real)
    try:
        env = build_env("DPFullInfo-Experts-v0", horizon=rounds, n_arms=arms)
        kw = {"secure": True} if secure and mechanism == "exact" else {}
        agent = agents.make("private-ftrl", env.get_wrapper_attr("problem"), seed=seed,
                            epsilon=1.0, delta=1e-5, counter=counter, **kw)
        assert agent.privacy.idealized is (mechanism == "float")
        agent.reset(seed)
        env.reset(seed=seed)
        start = time.process_time()
        run_rounds(env, agent)
        return rounds / (time.process_time() - start)
    finally:
        counter_agent.make_counter = real


def measure(rounds: int, arms: int, repeats: int, counter: str, secure: bool
            ) -> dict[str, list[float]]:
    """Rounds per CPU second of each mechanism, one per repeat (the warm-up games
    dropped), the two interleaved game by game."""
    rates: dict[str, list[float]] = {"float": [], "exact": []}
    for r in range(repeats + 1):
        for mech in ("float", "exact"):
            rate = one_game(mech, rounds, arms, counter, seed=r, secure=secure)
            if r:  # the first game of each mechanism warms caches up
                rates[mech].append(rate)
    return rates


def render(doc: dict) -> str:
    """The text block of a stored document of :func:`measure`."""
    cfg, rates = doc["settings"], doc["data"]
    med = {m: statistics.median(v) for m, v in rates.items()}
    lines = [f"private-ftrl Gaussian, counter={cfg['counter']}, T={cfg['rounds']}, "
             f"K={cfg['arms']}, {cfg['repeats']} interleaved repeats (median rounds per CPU "
             f"second){', exact side secure=True' if cfg['secure'] else ''}"]
    for m in ("float", "exact"):
        lines.append(f"  {m:5s}: {med[m]:10.0f}   ({', '.join(f'{v:.0f}' for v in rates[m])})")
    lines.append(f"  exact / float = {med['exact'] / med['float']:.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1500)
    ap.add_argument("--arms", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--counter", default="tree")
    ap.add_argument("--secure", action="store_true",
                    help="the exact side draws from the OS generator (secure=True)")
    stored.add_save_argument(ap)
    args = ap.parse_args(argv)
    run = stored.Measurement("gaussian-speed", {
        "rounds": args.rounds, "arms": args.arms, "repeats": args.repeats,
        "counter": args.counter, "secure": args.secure, "epsilon": 1.0, "delta": 1e-5,
        "clock": "CPU time (time.process_time)"})
    doc = run.document(measure(args.rounds, args.arms, args.repeats, args.counter,
                               args.secure))
    stored.save(args.save, doc)
    print(render(doc))


if __name__ == "__main__":
    main()
