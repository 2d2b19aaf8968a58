"""Rounds per CPU second of ``private-exp2`` (env and wrappers included) vs SMPyBandits' Exp3.

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

Each side runs ``repeats`` times ``rounds`` rounds; the median rounds per CPU second
(``time.process_time`` of the process playing: the other jobs of a shared machine do
not inflate it; both sides run on one thread) is reported and the ratio ours /
SMPyBandits (the target is >= 2). The script also times ``act()`` + ``update()`` alone
(on pre-drawn feedback), the part that compares with a policy alone. ``env.step``
against Gymnasium's CartPole and the full loop against a lean numpy loop of the same
algorithm are cases of the speed harness (``python -m benchmarks.speed``), which builds
its game with :func:`full_loop`. ``--save FILE`` stores the rates
(:mod:`benchmarks.stored`); :func:`render` draws the block of ``docs/results.md``.

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

* full loop (env + wrappers): float Laplace (the mechanism before) 72.6k, 74.8k, 77.2k,
  76.7k; exact discrete 72.5k, 71.8k, 68.4k, 69.6k;
* ``act()`` + ``update()`` alone: float 460k, 494k, 509k, 493k; exact 374k, 375k,
  365k, 352k.

The full loop keeps ~94% (the target is >= 80%); the agent alone ~75%. (Those draws
were numpy's; the samplers now run compiled where numba is installed, the same integers
at 75-80 ns a value once a process has done ``discrete.COMPILE_AFTER`` draws' worth of
numpy work: ``docs/guides/performance.md``, "Exact noise".) ``--secure``
draws the integers from ``os.urandom`` (``secure=True``): about 1.6 us per noise draw
instead of 0.5 us; the full loop then ran at 65.1k and 67.6k rounds/s against 72.7k
with PCG64 (about 91%).

    python benchmarks/exp2_speed.py [--arms 10] [--rounds 200000] [--repeats 5] [--secure]
        [--venv DIR] [--save FILE]
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
from typing import Any

import gymnasium as gym

import agents
import dp_online_envs  # noqa: F401  (registers the ids)
from benchmarks import stored

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
        start = time.process_time()
        for t in range(rounds):
            arm = policy.choice()
            policy.getReward(arm, rewards[t, arm])
        rates.append(rounds / (time.process_time() - start))
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
    """Rounds per CPU second of the full loop (:func:`full_loop`), one value per repeat."""
    rates = []
    for r in range(repeats):
        play = full_loop(k, rounds, r, name, secure)
        start = time.process_time()
        play()
        rates.append(rounds / (time.process_time() - start))
    return rates


def agent_only(k: int, rounds: int, repeats: int, name: str = "private-exp2") -> list[float]:
    """Rounds per CPU second of ``act()`` + ``update()`` alone, on pre-drawn feedback."""
    import numpy as np

    problem = gym.make("DPBandit-MAB-v0", n_arms=k, horizon=rounds).get_wrapper_attr("problem")
    rng = np.random.default_rng(0)
    feedback = list((rng.random((rounds, 1)) < 0.5).astype(np.float64))
    rates = []
    for r in range(repeats):
        kw = {"epsilon": 1.0} if agents.agent_class(name).private else {}
        agent = agents.make(name, problem, seed=r, **kw)
        act, update = agent.act, agent.update
        start = time.process_time()
        for obs in feedback:
            update(act(), obs)
        rates.append(rounds / (time.process_time() - start))
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
        where = "a throw-away virtualenv (subprocess)"
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


def measure(k: int, rounds: int, repeats: int, venv: str | None, secure: bool
            ) -> dict[str, Any]:
    """Every side's rates (rounds per CPU second, one per repeat); SMPyBandits' with its
    versions, or the reason it could not be measured."""
    data: dict[str, Any] = {"agent alone": agent_only(k, rounds, repeats),
                            "full loop": ours(k, rounds, repeats)}
    if secure:
        data["full loop, secure"] = ours(k, rounds, repeats, secure=True)
    try:
        data["smpybandits"] = smpybandits(k, rounds, repeats, venv)
    except (OSError, subprocess.CalledProcessError, IndexError, ValueError) as exc:
        detail = getattr(exc, "stderr", None) or ""
        data["smpybandits"] = {"error": f"{type(exc).__name__}: {exc} {detail}"[-500:]}
    return data


def _rate(rates: list[float]) -> str:
    med = statistics.median(rates)
    return (f"{med / 1e3:.1f}k rounds/s ({1e6 / med:.2f} us/round; repeats "
            f"{min(rates) / 1e3:.1f}k-{max(rates) / 1e3:.1f}k)")


def render(doc: dict[str, Any]) -> str:
    """The markdown block of a stored document of :func:`measure`."""
    cfg, data = doc["settings"], doc["data"]
    ours_rate = statistics.median(data["full loop"])
    alone = statistics.median(data["agent alone"])
    lines = [f"K = {cfg['arms']}, {cfg['rounds']} rounds x {cfg['repeats']} repeats, median "
             "rounds per CPU second:", "",
             f"- `private-exp2` with env and wrappers (full loop): {_rate(data['full loop'])}",
             f"- `private-exp2` `act()` + `update()` alone: {_rate(data['agent alone'])}"]
    if "full loop, secure" in data:
        lines.append(f"- the full loop with `secure=True`: {_rate(data['full loop, secure'])}")
    smpy = data["smpybandits"]
    if "error" in smpy:
        lines += [f"- SMPyBandits' Exp3: not measured ({smpy['error']})"]
    else:
        theirs = statistics.median(smpy["rates"])
        lines += [f"- SMPyBandits {smpy['version']} `Exp3` alone (`choice` + `getReward`; "
                  f"{smpy['where']}, numpy {smpy['numpy']}, scipy {smpy['scipy']}): "
                  f"{_rate(smpy['rates'])}", "",
                  f"Ratio: the full loop runs **{ours_rate / theirs:.2f}x** SMPyBandits' "
                  f"policy alone (target >= 2); `private-exp2` alone "
                  f"{alone / theirs:.2f}x."]
    lines += ["", "The env step against Gymnasium's CartPole and this full loop against a "
              "lean numpy loop of the same algorithm: "
              + stored.speed_harness("`env-step` and `private-exp2` cases",
                                     "python -m benchmarks.speed", "stored ratios")]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arms", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--venv", default=None, help="reuse / keep the SMPyBandits virtualenv here")
    ap.add_argument("--secure", action="store_true",
                    help="also time private-exp2 with secure=True (OS generator)")
    stored.add_save_argument(ap)
    args = ap.parse_args(argv)
    run = stored.Measurement("exp2-speed", {"arms": args.arms, "rounds": args.rounds,
                                            "repeats": args.repeats, "secure": args.secure,
                                            "clock": "CPU time (time.process_time)"})
    doc = run.document(measure(args.arms, args.rounds, args.repeats, args.venv, args.secure))
    stored.save(args.save, doc)
    print(render(doc))


if __name__ == "__main__":
    main()
