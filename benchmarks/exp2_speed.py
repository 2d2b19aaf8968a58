"""Rounds per second of ``private-exp2`` (env and wrappers included) vs SMPyBandits' Exp3.

What is timed
-------------
* ours: the full loop of :func:`agents.play` -- ``a = agent.act()``,
  ``env.step(a)``, ``agent.update(a, obs)`` -- with ``env = gym.make("DPBandit-MAB-v0",
  n_arms=K)`` (Gymnasium's OrderEnforcing + PassiveEnvChecker, our FeedbackGuard +
  RegretRecorder, the stochastic adversary and the regret comparator) and
  ``agent = agents.make("private-exp2", problem, epsilon=1)`` (Laplace noise, release,
  EXP2 with Theorem 4.1's parameters).
* SMPyBandits: its ``Policies.Exp3`` policy ALONE (default ``gamma``), ``choice()`` +
  ``getReward(arm, reward)`` per round on pre-drawn Bernoulli rewards of a K-armed
  instance -- no environment, no regret bookkeeping.

Each side runs ``repeats`` times ``rounds`` rounds; the median rounds/s is reported and
the ratio ours / SMPyBandits (the target is >= 2). For reference the script also times
``env.step`` alone and ``act()`` + ``update()`` alone (on pre-drawn feedback). The
machine is shared: rates move by ~20% between runs; the ratio is what is reported.

How SMPyBandits is run
----------------------
SMPyBandits 0.9.7 (its latest release on PyPI, 2019) imports ``scipy.special.btdtri``,
which SciPy removed in 1.14, so it cannot be imported next to this project's SciPy. The
script first tries ``import SMPyBandits`` in-process; if that fails it creates a
throw-away virtualenv under a temporary directory (``python -m venv``), runs
``pip install SMPyBandits "scipy<1.14"`` there (about 20 s; SciPy 1.13 and a NumPy 2.2
come with it), and measures the policy in a subprocess of that venv's Python. The venv
is deleted afterwards (``--venv DIR`` reuses / keeps one). SMPyBandits is NOT a
dependency of this project.

Exact noise
----------------------
Since the discrete mechanism landed, private-exp2 releases ``g (round(f/g) + Z)`` with
``Z`` from the exact discrete Laplace sampler (``agents/privacy/discrete.py``: about
0.5 us per draw in int64 numpy, against 0.02 us for ``rng.laplace``), drawn in blocks
of ``NOISE_BLOCK``. Measured on the shared 2-core machine, K = 10, 100000 rounds x 5
repeats, median rounds/s, four interleaved runs of each:

* full loop (env + wrappers): float Laplace (commit 7cad7fd) 72.6k, 74.8k, 77.2k,
  76.7k; exact discrete 72.5k, 71.8k, 68.4k, 69.6k;
* ``act()`` + ``update()`` alone: float 460k, 494k, 509k, 493k; exact 374k, 375k,
  365k, 352k.

The full loop keeps ~94% (the target is >= 80%); the agent alone ~75%. ``--secure``
draws the integers from ``os.urandom`` (``secure=True``): about 1.6 us per noise draw
instead of 0.5 us; the full loop then ran at 65.1k and 67.6k rounds/s against 72.7k
with PCG64 (about 91%).

    python benchmarks/exp2_speed.py [--arms 10] [--rounds 200000] [--repeats 5] [--secure]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym

import agents
import dp_online_envs  # noqa: F401  (registers the ids)

_SMPY_CHILD = textwrap.dedent("""
    import json, statistics, sys, time, warnings
    import numpy as np
    warnings.filterwarnings("ignore")
    from SMPyBandits.Policies import Exp3
    k, rounds, repeats = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    rng = np.random.default_rng(0)
    mu = rng.uniform(0.3, 0.7, k)
    rewards = (rng.random((rounds, k)) < 1.0 - mu).astype(float)   # reward = 1 - loss
    rates = []
    for _ in range(repeats):
        policy = Exp3(k)
        policy.startGame()
        start = time.perf_counter()
        for t in range(rounds):
            arm = policy.choice()
            policy.getReward(arm, rewards[t, arm])
        rates.append(rounds / (time.perf_counter() - start))
    import SMPyBandits, scipy
    print(json.dumps({"rates": rates, "version": SMPyBandits.__version__,
                      "numpy": np.__version__, "scipy": scipy.__version__}))
""")


def full_loop(k: int, rounds: int, seed: int, name: str = "private-exp2",
              secure: bool = False) -> Callable[[], None]:
    """One game of the full loop (env + wrappers + agent), built and reset: calling the
    result plays its ``rounds`` rounds (``secure``: the agent draws its noise from the OS
    generator). Building it is outside any timed region."""
    env = gym.make("DPBandit-MAB-v0", n_arms=k, horizon=rounds)
    kw = {"epsilon": 1.0} if agents.agent_class(name).private else {}
    if secure:
        kw["secure"] = True
    agent = agents.make(name, env.get_wrapper_attr("problem"), seed=seed, **kw)
    agent.reset(seed)
    env.reset(seed=seed)
    act, step, update = agent.act, env.step, agent.update

    def play() -> None:
        for _ in range(rounds):
            a = act()
            obs = step(a)[0]
            update(a, obs)

    return play


def ours(k: int, rounds: int, repeats: int, name: str = "private-exp2",
         secure: bool = False) -> list[float]:
    """Rounds/s of the full loop (:func:`full_loop`), one value per repeat."""
    rates = []
    for r in range(repeats):
        play = full_loop(k, rounds, r, name, secure)
        start = time.perf_counter()
        play()
        rates.append(rounds / (time.perf_counter() - start))
    return rates


def agent_only(k: int, rounds: int, repeats: int, name: str = "private-exp2") -> list[float]:
    """Rounds/s of ``act()`` + ``update()`` alone, on pre-drawn feedback arrays."""
    import numpy as np

    problem = gym.make("DPBandit-MAB-v0", n_arms=k, horizon=rounds).get_wrapper_attr("problem")
    rng = np.random.default_rng(0)
    feedback = list((rng.random((rounds, 1)) < 0.5).astype(np.float64))
    rates = []
    for r in range(repeats):
        kw = {"epsilon": 1.0} if agents.agent_class(name).private else {}
        agent = agents.make(name, problem, seed=r, **kw)
        act, update = agent.act, agent.update
        start = time.perf_counter()
        for obs in feedback:
            update(act(), obs)
        rates.append(rounds / (time.perf_counter() - start))
    return rates


def env_only(k: int, rounds: int, repeats: int) -> list[float]:
    """Rounds/s of ``env.step`` alone (a fixed arm), for reference."""
    rates = []
    for r in range(repeats):
        env = gym.make("DPBandit-MAB-v0", n_arms=k, horizon=rounds)
        env.reset(seed=r)
        step = env.step
        start = time.perf_counter()
        for _ in range(rounds):
            step(3)
        rates.append(rounds / (time.perf_counter() - start))
    return rates


def smpybandits(k: int, rounds: int, repeats: int, venv: str | None = None) -> dict:
    """Rates of SMPyBandits' Exp3 (in-process if importable, else in a venv subprocess)."""
    try:
        import SMPyBandits.Policies  # noqa: F401
        python, where = sys.executable, "in-process interpreter"
    except ImportError:  # with SciPy >= 1.14 (scipy.special.btdtri is gone)
        python = None
    tmp = None
    if python is None:
        root = Path(venv) if venv else Path(tempfile.mkdtemp(prefix="smpy-venv-"))
        tmp = None if venv else root
        python = str(root / "bin" / "python")
        if not Path(python).exists():
            subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
        probe = subprocess.run([python, "-c", "import SMPyBandits.Policies"],
                               capture_output=True, check=False)
        if probe.returncode != 0:
            subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                            "SMPyBandits", "scipy<1.14"], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        where = f"virtualenv {root} (subprocess)"
    try:
        out = subprocess.run([python, "-c", _SMPY_CHILD, str(k), str(rounds), str(repeats)],
                             capture_output=True, text=True, check=True)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    line = [s for s in out.stdout.splitlines() if s.startswith("{")][-1]
    result = json.loads(line)
    result["where"] = where
    return result


def main(argv: list[str] | None = None) -> float:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arms", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--venv", default=None, help="reuse / keep the SMPyBandits virtualenv here")
    ap.add_argument("--secure", action="store_true",
                    help="also time private-exp2 with secure=True (OS generator)")
    args = ap.parse_args(argv)
    k, n, reps = args.arms, args.rounds, args.repeats

    env_rate = statistics.median(env_only(k, n, reps))
    agent_rate = statistics.median(agent_only(k, n, reps))
    ours_rate = statistics.median(ours(k, n, reps))
    smpy = smpybandits(k, n, reps, args.venv)
    smpy_rate = statistics.median(smpy["rates"])
    ratio = ours_rate / smpy_rate
    print(f"K = {k}, {n} rounds x {reps} repeats (median rounds/s)")
    print(f"  env.step alone (DPBandit-MAB-v0, gym.make):       {env_rate:10.0f} /s "
          f"({1e6 / env_rate:.2f} us/step)")
    print(f"  private-exp2 act()+update() alone:                {agent_rate:10.0f} /s "
          f"({1e6 / agent_rate:.2f} us/round)")
    print(f"  private-exp2 + env + wrappers (full loop):        {ours_rate:10.0f} /s "
          f"({1e6 / ours_rate:.2f} us/round)")
    if args.secure:
        sec = statistics.median(ours(k, n, reps, secure=True))
        print(f"  private-exp2 secure=True + env + wrappers:        {sec:10.0f} /s "
              f"({1e6 / sec:.2f} us/round)")
    print(f"  SMPyBandits {smpy['version']} Exp3 alone (choice+getReward): {smpy_rate:10.0f} /s "
          f"[{smpy['where']}; numpy {smpy['numpy']}, scipy {smpy['scipy']}]")
    print(f"  ratio private-exp2 loop / SMPyBandits Exp3:       {ratio:10.2f}x  (target >= 2)")
    return ratio


if __name__ == "__main__":
    main()
