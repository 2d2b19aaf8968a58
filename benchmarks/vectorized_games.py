"""Run-steps per second of seed-vectorized games against the scalar path and a lean loop.

What is timed (one run-step = one round of one seed's game)
-----------------------------------------------------------
* batched: ``LinearVectorEnv("DPBandit-MAB-v0", B)`` and the batched learner
  (``agents.vectorized.make_batched``) played by ``dp_online_envs.loop.run_batched_rounds``:
  the stochastic adversary's losses (drawn in blocks per seed), the feedback, the regret
  ledger (checkpoints included) and the learner; each seed's game equals the scalar
  game with that seed, bit for bit (``tests/vector``).
* scalar: ``agents.play`` on ``build_env("DPBandit-MAB-v0")`` for a few seeds (the
  registered env with its wrappers, one seed after the other).
* lean: a numpy EXP3 over B seeds written here -- one shared generator, Bernoulli
  losses drawn per round, exponential weights with ``np.exp``, inverse-CDF sampling --
  no env, no regret ledger, no per-seed streams: the floor a batched numpy loop can
  reach on this machine.

Each side is timed ``repeats`` times in the same process (interleaved) and the median
is reported with the ratios batched / lean and batched / scalar, in CPU time of this
process (``time.process_time``: the other jobs of the shared 2-core machine do not
inflate it; numpy runs these loops on one thread) and in wall time (which they do: it
moves by 2x between runs). Setup (the B resets of env and learner) is timed too.

``--full-info`` adds the full-information pairs (batched against scalar only, CPU
time, ``--full-seeds`` games of ``--full-horizon`` rounds; the scalar side is timed on
five seeds and scaled).

Usage::

    PYTHONPATH=. python benchmarks/vectorized_games.py [--seeds 1000] [--horizon 2000]
        [--full-info]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

import agents
from agents.vectorized import make_batched
from dp_online_envs.envs.registry import build_env
from dp_online_envs.envs.vector_env import LinearVectorEnv
from dp_online_envs.loop import run_batched_rounds

ENV_ID = "DPBandit-MAB-v0"


def timed(work: Callable[[], None], steps: int) -> tuple[float, float]:
    """``(run-steps per CPU second, run-steps per wall second)`` of ``work()``."""
    cpu, wall = time.process_time(), time.perf_counter()
    work()
    return steps / (time.process_time() - cpu), steps / (time.perf_counter() - wall)


def batched_game(agent: str, seeds: int, horizon: int, epsilon: float | None
                 ) -> Callable[[], None]:
    """``seeds`` games of ``agent`` on the vector env: calling the result resets the
    learner and the env (seeds ``0 .. seeds - 1``) and plays every round."""
    venv = LinearVectorEnv(ENV_ID, seeds, horizon=horizon)
    learner = make_batched(agent, venv.problem, epsilon=epsilon)

    def work() -> None:
        learner.reset_batch(list(range(1000, 1000 + seeds)))
        venv.reset(seed=list(range(seeds)))
        run_batched_rounds(venv, learner)

    return work


def batched_rate(agent: str, seeds: int, horizon: int, epsilon: float | None
                 ) -> tuple[float, float]:
    """:func:`timed` rates of :func:`batched_game`."""
    return timed(batched_game(agent, seeds, horizon, epsilon), seeds * horizon)


def scalar_rate(agent: str, seeds: int, horizon: int, epsilon: float | None
                ) -> tuple[float, float]:
    env = build_env(ENV_ID, horizon=horizon)
    learner = agents.make(agent, env.get_wrapper_attr("problem"), epsilon=epsilon)
    return timed(lambda: [agents.play(env, learner, seed=s) for s in range(seeds)],
                 seeds * horizon)


def lean_rate(seeds: int, horizon: int, k: int = 10) -> tuple[float, float]:
    """A lean numpy EXP3 over ``seeds`` games (module docstring)."""
    return timed(lambda: lean_exp3(seeds, horizon, k), seeds * horizon)


def lean_exp3(seeds: int, horizon: int, k: int, eta: float | None = None, gamma: float = 0.0,
              noise_scale: float = 0.0) -> np.ndarray:
    """A lean numpy EXP3 over ``seeds`` games at once, the floor of a numpy loop.

    One shared generator (seed 0), Bernoulli losses of means drawn from ``U(0.3, 0.7)``
    per game and arm, exponential weights mixed with ``gamma`` of the uniform
    distribution, inverse-CDF sampling, the importance-weighted estimate of the loss
    plus Laplace noise of scale ``noise_scale``; no env, no regret ledger, no per-seed
    streams. With Theorem 4.1's ``eta`` and ``gamma`` and ``noise_scale = 1/epsilon``
    it is ``private-exp2``'s algorithm (Alg. 4 + 5) on K arms.

    Args:
        seeds: Games played at once (rows of every array).
        horizon: Rounds.
        k: Arms.
        eta: Learning rate; default ``sqrt(2 ln k / (horizon k))``.
        gamma: Weight of the uniform distribution in the sampling distribution.
        noise_scale: Scale of the Laplace noise added to each loss (0: none).

    Returns:
        Each game's total loss.
    """
    rng = np.random.default_rng(0)
    mu = rng.uniform(0.3, 0.7, size=(seeds, k))
    if eta is None:
        eta = np.sqrt(2.0 * np.log(k) / (horizon * k))
    lw = np.zeros((seeds, k))
    rows = np.arange(seeds)
    total = np.zeros(seeds)
    for _ in range(horizon):
        w = np.exp(lw - lw.max(axis=1, keepdims=True))
        p = w / w.sum(axis=1, keepdims=True)
        if gamma:
            p = (1.0 - gamma) * p + gamma / k
        cdf = np.cumsum(p, axis=1)
        u = rng.random(seeds) * cdf[:, -1]
        arm = np.minimum(np.count_nonzero(cdf <= u[:, None], axis=1), k - 1)
        loss = (rng.random(seeds) < mu[rows, arm]).astype(np.float64)
        total += loss
        if noise_scale:
            loss += rng.laplace(0.0, noise_scale, seeds)
        lw[rows, arm] -= eta * loss / p[rows, arm]
    return total


FULL_INFO = [("DPFullInfo-Experts-v0", "hedge", None, 0.0),
             ("DPFullInfo-Experts-v0", "private-ftrl", 1.0, 0.0),
             ("DPFullInfo-Sphere-v1", "ftrl", None, 0.0),
             ("DPFullInfo-Sphere-v1", "private-ftpl", 1.0, 1e-6),
             ("DPFullInfo-Cube-v1", "private-ftrl", 1.0, 1e-6),
             ("DPFullInfo-Matroid-v1", "private-ftpl", 1.0, 1e-6)]


def full_info(seeds: int, horizon: int) -> None:
    """Batched against scalar run-steps per CPU second on the full-information ids."""
    for env_id, agent, eps, delta in FULL_INFO:
        venv = LinearVectorEnv(env_id, seeds, horizon=horizon)
        learner = make_batched(agent, venv.problem, epsilon=eps, delta=delta)
        batched = timed(lambda v=venv, b=learner: agents.play_batch(v, b, range(seeds)),
                        seeds * horizon)[0]
        env = build_env(env_id, horizon=horizon)
        one = agents.make(agent, env.get_wrapper_attr("problem"), epsilon=eps, delta=delta)
        scalar = timed(lambda e=env, a=one: [agents.play(e, a, seed=s) for s in range(5)],
                       5 * horizon)[0]
        print(f"{env_id:22s} {agent:13s} B={seeds} T={horizon} [CPU ] batched "
              f"{batched:,.0f} run-steps/s, scalar {scalar:,.0f} | batched/scalar "
              f"{batched / scalar:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=1000)
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--scalar-seeds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--full-info", action="store_true")
    parser.add_argument("--full-seeds", type=int, default=200)
    parser.add_argument("--full-horizon", type=int, default=1000)
    args = parser.parse_args()
    for agent, eps in (("exp3", None), ("private-exp2", 1.0)):
        runs: dict[str, list[tuple[float, float]]] = {"batched": [], "lean": [], "scalar": []}
        for _ in range(args.repeats):
            runs["batched"].append(batched_rate(agent, args.seeds, args.horizon, eps))
            runs["lean"].append(lean_rate(args.seeds, args.horizon))
            runs["scalar"].append(scalar_rate(agent, args.scalar_seeds, args.horizon, eps))
        for clock, i in (("CPU", 0), ("wall", 1)):
            med = {k: statistics.median(r[i] for r in v) for k, v in runs.items()}
            print(f"{agent:13s} B={args.seeds} T={args.horizon} [{clock:4s}] batched "
                  f"{med['batched']:,.0f} run-steps/s, lean numpy EXP3 {med['lean']:,.0f}, "
                  f"scalar {med['scalar']:,.0f} | batched/lean "
                  f"{med['batched'] / med['lean']:.2f}, batched/scalar "
                  f"{med['batched'] / med['scalar']:.1f}")
    if args.full_info:
        full_info(args.full_seeds, args.full_horizon)


if __name__ == "__main__":
    main()
