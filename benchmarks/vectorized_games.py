"""Run-steps per CPU second of vector games against the scalar path.

What is timed (one run-step = one round of one seed's game)
-----------------------------------------------------------
* vector: ``LinearVectorEnv("DPBandit-MAB-v0", B)`` and the vector learner
  (``agents.vector.make_vector``) played by ``dp_online_envs.loop.run_vector_rounds``:
  the stochastic adversary's losses (drawn in blocks per seed), the feedback, the regret
  ledger (checkpoints included) and the learner; each seed's game equals the scalar
  game with that seed, bit for bit (``tests/vector``). Setup (the B resets of env and
  learner) is timed too.
* scalar: ``agents.play`` on ``build_env("DPBandit-MAB-v0")`` for a few seeds (the
  registered env with its wrappers, one seed after the other).

Each side is timed ``repeats`` times in the same process (interleaved) and the median
is reported with the ratio vector / scalar, in CPU time of this process
(``time.process_time``: the other jobs of a shared machine do not inflate it; numpy
runs these loops on one thread). ``--full-info`` adds the full-information pairs
(``--full-seeds`` games of ``--full-horizon`` rounds, once; the scalar side is timed on
five seeds).

The vector path against a lean numpy EXP3 over as many games (:func:`lean_exp3`: no
env, no regret ledger, no per-seed streams) is the speed harness's ``vectorized`` case
(``python -m benchmarks.speed -k vectorized``), which builds its games with
:func:`vector_game`. ``--save FILE`` stores the rates (:mod:`benchmarks.stored`; the
vector side under the key ``"batched"``, the previous release's word, so that stored
files still render); :func:`render` draws the block of ``docs/results.md`` from them.

Usage::

    PYTHONPATH=. python benchmarks/vectorized_games.py [--seeds 1000] [--horizon 2000]
        [--repeats 3] [--full-info] [--save FILE]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import agents
from agents.vector import make_vector
from benchmarks import stored
from dp_online_envs.envs.registry import build_env
from dp_online_envs.envs.vector_env import LinearVectorEnv
from dp_online_envs.loop import run_vector_rounds

ENV_ID = "DPBandit-MAB-v0"


def timed(work: Callable[[], None], steps: int) -> float:
    """Run-steps per CPU second of ``work()``, which plays ``steps`` of them."""
    cpu = time.process_time()
    work()
    return steps / (time.process_time() - cpu)


def vector_game(agent: str, seeds: int, horizon: int, epsilon: float | None
                ) -> Callable[[], None]:
    """``seeds`` games of ``agent`` on the vector env: calling the result resets the
    learner and the env (seeds ``0 .. seeds - 1``) and plays every round."""
    venv = LinearVectorEnv(ENV_ID, seeds, horizon=horizon)
    learner = make_vector(agent, venv.problem, epsilon=epsilon)

    def work() -> None:
        learner.reset_batch(list(range(1000, 1000 + seeds)))
        venv.reset(seed=list(range(seeds)))
        run_vector_rounds(venv, learner)

    return work


def vector_rate(agent: str, seeds: int, horizon: int, epsilon: float | None) -> float:
    """:func:`timed` rates of :func:`vector_game`."""
    return timed(vector_game(agent, seeds, horizon, epsilon), seeds * horizon)


def scalar_rate(agent: str, seeds: int, horizon: int, epsilon: float | None) -> float:
    """:func:`timed` rate of ``agents.play`` over ``seeds`` scalar games."""
    env = build_env(ENV_ID, horizon=horizon)
    learner = agents.make(agent, env.get_wrapper_attr("problem"), epsilon=epsilon)
    return timed(lambda: [agents.play(env, learner, seed=s) for s in range(seeds)],
                 seeds * horizon)


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


def full_info(seeds: int, horizon: int) -> list[dict[str, Any]]:
    """Vector against scalar run-steps per CPU second on the full-information ids."""
    rows = []
    for env_id, agent, eps, delta in FULL_INFO:
        venv = LinearVectorEnv(env_id, seeds, horizon=horizon)
        learner = make_vector(agent, venv.problem, epsilon=eps, delta=delta)
        vector = timed(lambda v=venv, b=learner: agents.play_batch(v, b, range(seeds)),
                       seeds * horizon)
        env = build_env(env_id, horizon=horizon)
        one = agents.make(agent, env.get_wrapper_attr("problem"), epsilon=eps, delta=delta)
        scalar = timed(lambda e=env, a=one: [agents.play(e, a, seed=s) for s in range(5)],
                       5 * horizon)
        rows.append({"env": env_id, "agent": agent, "seeds": seeds, "horizon": horizon,
                     "scalar seeds": 5, "batched": [vector], "scalar": [scalar]})
    return rows


def measure(seeds: int, horizon: int, scalar_seeds: int, repeats: int,
            full: tuple[int, int] | None) -> dict[str, list[dict[str, Any]]]:
    """The rates (one per repeat) of the bandit pairs, and of the full-information pairs
    when ``full`` is ``(seeds, horizon)``."""
    rows = []
    for agent, eps in (("exp3", None), ("private-exp2", 1.0)):
        runs: dict[str, list[float]] = {"batched": [], "scalar": []}
        for _ in range(repeats):
            runs["batched"].append(vector_rate(agent, seeds, horizon, eps))
            runs["scalar"].append(scalar_rate(agent, scalar_seeds, horizon, eps))
        rows.append({"env": ENV_ID, "agent": agent, "seeds": seeds, "horizon": horizon,
                     "scalar seeds": scalar_seeds, **runs})
    return {"pairs": rows + (full_info(*full) if full else [])}


def render(doc: dict[str, Any]) -> str:
    """The markdown block of a stored document of :func:`measure`."""
    lines = ["| env | agent | B x T | vector (run-steps / CPU s) | scalar (seeds timed) "
             "| vector / scalar |", "|---|---|---|---:|---:|---:|"]
    for r in doc["data"]["pairs"]:
        vector, scalar = statistics.median(r["batched"]), statistics.median(r["scalar"])
        lines.append(f"| `{r['env']}` | `{r['agent']}` | {r['seeds']} x {r['horizon']} | "
                     f"{vector:,.0f} | {scalar:,.0f} ({r['scalar seeds']}) | "
                     f"{vector / scalar:.1f} |")
    lines += ["", f"Medians of {doc['settings']['repeats']} interleaved repeats for "
              f"`{ENV_ID}`, one run for the full-information pairs. The vector path "
              "against a lean numpy EXP3 loop: "
              + stored.speed_harness("`vectorized` case",
                                     "python -m benchmarks.speed -k vectorized",
                                     "stored ratio")]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=1000)
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--scalar-seeds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--full-info", action="store_true")
    parser.add_argument("--full-seeds", type=int, default=200)
    parser.add_argument("--full-horizon", type=int, default=1000)
    stored.add_save_argument(parser)
    args = parser.parse_args(argv)
    run = stored.Measurement("vectorized-games", {
        key: getattr(args, key) for key in ("seeds", "horizon", "scalar_seeds", "repeats",
                                            "full_info", "full_seeds", "full_horizon")})
    full = (args.full_seeds, args.full_horizon) if args.full_info else None
    doc = run.document(measure(args.seeds, args.horizon, args.scalar_seeds, args.repeats,
                               full))
    stored.save(args.save, doc)
    print(render(doc))


if __name__ == "__main__":
    main()
