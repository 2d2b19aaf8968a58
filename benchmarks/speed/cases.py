"""The speed cases: each one a product path and the reference it is measured against.

A :class:`Case` builds a :class:`Pair` for given sizes: two preparers, each returning a
:class:`Round` (built and reset outside any timed region) whose ``run()`` does the
work of one measurement, ``units`` units of it (steps, rounds, run-steps, adds) on
both sides. The harness (``bench_speed.py``) times the two sides round by round and
reports their ratio, product time per unit over reference time per unit: 1.0 is as
fast as the reference, 2.0 twice as slow. Lower is better.

Cases (:data:`CASES`):

* ``env-step``: a step of ``DPBandit-MAB-v0`` (K = 10, ``gym.make`` with both
  wrappers) against a step of Gymnasium's ``CartPole-v1`` (``gym.make``).
* ``private-exp2``: a round of the full loop of ``private-exp2`` (env, wrappers,
  agent; ``benchmarks/exp2_speed.py``) against a lean numpy loop of the same algorithm
  (EXP2 with Theorem 4.1's parameters on Laplace-noised losses; ``lean_exp3`` of
  ``benchmarks/vectorized_games.py`` with one game).
* ``isolated``: a round of ``private-exp2`` played through
  :class:`~dp_online_envs.lab.isolation.IsolatedLearner` (the learner in its own
  process) against the same game in process; both end with the same regret.
* ``vectorized``: a run-step (one round of one seed's game) of ``exp3`` as a vector
  learner (``agents.vector`` on ``LinearVectorEnv``) against the lean numpy EXP3 over
  the same number of games.
* ``counter-NAME``, one per registered counter (:data:`agents.privacy.COUNTERS`): an
  ``add`` (Gaussian noise; ``benchmarks/counter_noise.py``) against one addition of a
  plain running sum over the same inputs.
* ``exact-batched``: a run-step of ``private-exp2`` as a vector learner (1000 seeds, exact
  discrete Laplace noise drawn per seed from each seed's generator, as the scalar game)
  against a run-step of the lean numpy EXP2 with FLOAT Laplace noise over as many games
  (:func:`~benchmarks.vectorized_games.lean_exp3` with Theorem 4.1's parameters): what
  the exact noise costs where many games are played at once.
* ``private-ftrl``: a round of ``private-ftrl`` on ``DPFullInfo-Experts-v0`` (10
  experts, ``epsilon = 1, delta = 1e-5``: exact discrete Gaussian noise, Agarwal-Singh
  counter) with env and wrappers against a step of ``CartPole-v1``.
* ``hedge`` and ``exp3``: a round of ``hedge`` on ``DPFullInfo-Experts-v0`` (10
  experts) and of ``exp3`` on ``DPBandit-MAB-v0`` (K = 10), each with env and wrappers
  through the one game loop, against a step of ``CartPole-v1``: what a round of the two
  plainest loops costs, the env's checks of the learner's action and the learner's of
  its feedback included.
* ``load-results``: :func:`~dp_online_envs.lab.experiments.load_results` of a results
  directory of 3000 records (copies of the README sweep's games,
  ``benchmarks/results_store.py``) whose games index is in place and whose ``games/``
  has settled (unchanged for the index's ``SETTLED_NS``, as after a sweep), against
  ``pandas.read_parquet`` of one Parquet file of the same table (``dp-online export``'s):
  what reading a sweep's games costs, the look at every record file that keeps the
  index honest included.
* ``startup``: ``import agents`` in a fresh interpreter against ``import gymnasium``
  in another (the CPU time each child measures around its import; every isolated or
  sandboxed learner process pays it).
* ``cli-version``: the process ``dp-online --version`` (the console script beside this
  interpreter, else ``python -m dp_online_envs.lab.cli``) against the process ``python
  -c "import gymnasium"``, each whole (the interpreter's start included), its CPU time
  read by a fresh child that runs it (``benchmarks/cli_startup.py``'s measure).
* ``compiled-start``: what a fresh process pays before its first compiled round with
  the kernels cached on disk -- importing the compiled path, a 40-round compiled game
  (:func:`agents.compiled.play_compiled`) and a first draw of the compiled exact
  sampler -- against ``import gymnasium`` in another (CPU time measured by each child;
  a kernel compiled again instead of loaded shows as a ratio in the hundreds).
* ``isolated-start``: an isolated learner (``private-exp2``,
  :class:`~dp_online_envs.lab.isolation.IsolatedLearner`) started, reset, asked for its
  first action and closed, in a fresh process, against ``import gymnasium`` in another
  (CPU time measured by each child, the isolated process's tree included:
  :func:`~dp_online_envs.lab.isolation.isolated_cpu_seconds`): what every isolated
  learner's process costs before its game.
* ``sandboxed-game``: a 200-round game of ``private-exp2`` with the learner sandboxed
  (bubblewrap, :class:`~dp_online_envs.lab.sandbox.Sandbox`) as the grader plays a
  submission, from its start to its close, in a fresh process, against ``import
  gymnasium`` in another (the same clock); :class:`CaseUnavailable` where no sandbox
  starts.
* ``build-large-epsilon``: building a private learner at a large epsilon (300, 1e3 and
  1e6) against building it at epsilon = 1: ``private-ftrl`` on
  ``DPFullInfo-Experts-v0`` and ``private-exp2`` on ``DPBandit-MAB-v0`` (T = 10^4),
  each at ``delta = 0`` (Laplace) and ``delta = 1e-6`` (Gaussian where the learner
  offers it), the calibration and accounting caches cleared before each build. The
  product's claim: the build time does not grow with epsilon (no privacy-loss grid
  whose size grows with it; ``tests/agents/test_privacy_limit.py`` checks that no such
  grid is built).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import agents
import dp_online_envs  # noqa: F401  (registers the ids)
from agents.bandit.exp2 import exp2_parameters
from agents.privacy import COUNTERS, calibration
from benchmarks.cli_startup import dp_online_command
from benchmarks.counter_noise import counter_adds
from benchmarks.exp2_speed import full_loop
from benchmarks.vectorized_games import lean_exp3, vector_game
from dp_online_envs.envs.registry import build_env
from dp_online_envs.lab.isolation import IsolatedLearner
from dp_online_envs.loop import run_rounds

__all__ = ["BUILDS", "CASES", "CHILD_CODE", "CLOCKS", "ISOLATED_SETUP", "ISOLATED_START",
           "LARGE_EPSILONS", "SANDBOXED_GAME", "SIZES", "WHOLE_PROCESS_SETUP", "Case",
           "CaseUnavailable", "Pair",
           "Round", "child_cpu", "child_seconds", "clear_calibration_caches", "cumulative_sum",
           "env_steps", "exp2_game", "learner_game", "private_builds", "private_ftrl_game",
           "time_ratio"]

ROOT = Path(__file__).resolve().parents[2]

#: CPU seconds the child processes of the ``child`` clock measured, summed.
_CHILD_SECONDS = [0.0]


def child_seconds() -> float:
    """The ``child`` clock: the CPU seconds that the child processes of
    :func:`child_cpu` rounds measured around their timed code, summed so far."""
    return _CHILD_SECONDS[0]

#: The sizes a case is built at: ``full`` for the measurement, ``tiny`` to check that it
#: runs (``tests/test_speed_harness.py``), in a fraction of a second.
SIZES = ("full", "tiny")

#: The clocks a case is timed with: ``cpu``, the CPU time of this process (the other jobs
#: of a shared machine do not inflate it; numpy runs these loops on one thread),
#: ``wall``, for a case whose work runs partly in another process, and ``child``, the
#: CPU time a fresh child process measures around its timed code (start-up cases).
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter,
                                          "child": child_seconds}

class CaseUnavailable(RuntimeError):
    """A case that cannot run on this machine (the reason in the message): the harness
    skips it (its verdict ``not run``)."""


#: Arms of the bandit cases and the privacy budget of their private learner.
ARMS, EPSILON = 10, 1.0


def _nothing() -> None:
    """No clean-up."""


@dataclasses.dataclass(frozen=True)
class Round:
    """One measurement's work, prepared: ``run()`` is timed, ``close()`` is not.

    Attributes:
        run: Does the work (``Pair.units`` units of it); what it returns is checked
            by the tests of the harness, never by the timing.
        close: Releases what the round holds (a process, say); called after ``run``.
    """

    run: Callable[[], Any]
    close: Callable[[], None] = _nothing


@dataclasses.dataclass(frozen=True)
class Pair:
    """A product path and its reference, at one size.

    Attributes:
        product: Builds a fresh :class:`Round` of the product path.
        reference: Builds a fresh :class:`Round` of the reference.
        units: Units of work in one ``run()`` of either side.
    """

    product: Callable[[], Round]
    reference: Callable[[], Round]
    units: int


@dataclasses.dataclass(frozen=True)
class Case:
    """A named speed comparison.

    Attributes:
        name: Its key in :data:`CASES` and in the baseline file.
        product: What the product side times.
        reference: What the reference side times.
        unit: The unit of work (``"step"``, ``"round"``, ...).
        build: ``build(**sizes[size])`` returns the :class:`Pair`.
        sizes: Keyword arguments of ``build`` for each of :data:`SIZES`.
        threshold: How many times worse than the stored ratio a fresh one may be before
            the comparison fails (``python -m benchmarks.speed``).
        clock: A key of :data:`CLOCKS`, the same for both sides.
    """

    name: str
    product: str
    reference: str
    unit: str
    build: Callable[..., Pair]
    sizes: Mapping[str, Mapping[str, int]]
    threshold: float = 1.5
    clock: str = "cpu"

    def pair(self, size: str = "full") -> Pair:
        """The :class:`Pair` at ``size`` (one of :data:`SIZES`).

        Raises:
            ValueError: On an unknown size.
        """
        if size not in self.sizes:
            raise ValueError(f"size={size!r} rejected: expected one of {list(self.sizes)}")
        return self.build(**self.sizes[size])


def env_steps(env_id: str, action: Any, steps: int, **kwargs: Any) -> Round:
    """``steps`` steps of ``gym.make(env_id, **kwargs)`` with a fixed ``action``
    (reset when an episode ends), the env made and reset beforehand."""
    env = gym.make(env_id, **kwargs)
    env.reset(seed=0)
    step, reset = env.step, env.reset

    def run() -> None:
        for _ in range(steps):
            _, _, terminated, truncated, _ = step(action)
            if terminated or truncated:
                reset()

    return Round(run, env.close)


def _env_step(steps: int) -> Pair:
    return Pair(product=lambda: env_steps("DPBandit-MAB-v0", 3, steps, horizon=steps),
                reference=lambda: env_steps("CartPole-v1", 0, steps), units=steps)


def _private_exp2(rounds: int) -> Pair:
    eta, gamma, _ = exp2_parameters(rounds, ARMS, 1.0 / EPSILON)
    return Pair(product=lambda: Round(full_loop(ARMS, rounds, seed=1)),
                reference=lambda: Round(functools.partial(
                    lean_exp3, 1, rounds, ARMS, eta=eta, gamma=gamma, noise_scale=1.0 / EPSILON)),
                units=rounds)


def exp2_game(horizon: int, isolated: bool) -> Round:
    """A game of ``private-exp2`` on ``DPBandit-MAB-v0`` (learner seed 1, env seed 2)
    through the one game loop, the learner in its own process (``isolated``) or in this
    one; ``run()`` returns the final regret, the same on both."""
    env = gym.make("DPBandit-MAB-v0", n_arms=ARMS, horizon=horizon)
    problem = env.get_wrapper_attr("problem")
    factory = functools.partial(agents.make, "private-exp2", epsilon=EPSILON, seed=1)
    learner = (IsolatedLearner(factory, problem, env.action_space) if isolated
               else factory(problem))
    learner.reset(1)
    env.reset(seed=2)
    return Round(lambda: run_rounds(env, learner)["regret"].regret,
                 learner.close if isolated else _nothing)


def _isolated(horizon: int) -> Pair:
    return Pair(product=lambda: exp2_game(horizon, isolated=True),
                reference=lambda: exp2_game(horizon, isolated=False), units=horizon)


def _vectorized(seeds: int, horizon: int) -> Pair:
    return Pair(product=lambda: Round(vector_game("exp3", seeds, horizon, None)),
                reference=lambda: Round(functools.partial(lean_exp3, seeds, horizon, ARMS)),
                units=seeds * horizon)


def cumulative_sum(dim: int, adds: int, seed: int) -> Round:
    """A plain running sum of the inputs :func:`~benchmarks.counter_noise.counter_adds`
    feeds a counter (same generator, same shape), one addition per input; ``run()``
    returns the last sum."""
    stream = np.random.default_rng(seed + 1).uniform(-1.0, 1.0, size=(adds, dim))

    def run() -> np.ndarray:
        total = np.zeros(dim)
        for z in stream:
            total = total + z
        return total

    return Round(run)


def _counter(name: str, horizon: int, dim: int) -> Pair:
    budget = {"epsilon": 1.0, "delta": 1e-6, "sensitivity": 1.0}
    return Pair(product=lambda: Round(counter_adds(name, horizon, dim, horizon, 0, budget)),
                reference=lambda: cumulative_sum(dim, horizon, 0), units=horizon)


#: The learners the ``build-large-epsilon`` case builds: ``(agent, env id, delta)``.
BUILDS = (("private-ftrl", "DPFullInfo-Experts-v0", 0.0),
          ("private-ftrl", "DPFullInfo-Experts-v0", 1e-6),
          ("private-exp2", "DPBandit-MAB-v0", 0.0),
          ("private-exp2", "DPBandit-MAB-v0", 1e-6))
#: The large epsilons of the ``build-large-epsilon`` case (its reference builds at 1).
LARGE_EPSILONS = (300.0, 1e3, 1e6)


def clear_calibration_caches() -> None:
    """Empties every cache of :mod:`agents.privacy.calibration` (so that a build times
    the calibration and the accounting, not a cache hit)."""
    for value in vars(calibration).values():
        if callable(getattr(value, "cache_clear", None)):
            value.cache_clear()


def private_builds(epsilons: tuple[float, ...], repeats: int, horizon: int) -> Round:
    """``repeats`` times, every learner of :data:`BUILDS` built at every epsilon of
    ``epsilons`` (problems made beforehand), the calibration caches cleared before each
    build; ``run()`` returns the privacy claims of the last repeat."""
    problems = {env_id: gym.make(env_id, horizon=horizon).get_wrapper_attr("problem")
                for _, env_id, _ in BUILDS}

    def run() -> list[Any]:
        claims = []
        for seed in range(repeats):
            claims = []
            for name, env_id, delta in BUILDS:
                for eps in epsilons:
                    clear_calibration_caches()
                    learner = agents.make(name, problems[env_id], epsilon=eps, delta=delta,
                                          seed=seed)
                    claims.append(learner.privacy)
        return claims

    return Round(run)


def _build_large_epsilon(repeats: int, horizon: int) -> Pair:
    small = (1.0,) * len(LARGE_EPSILONS)  # as many builds as the product side
    return Pair(product=lambda: private_builds(LARGE_EPSILONS, repeats, horizon),
                reference=lambda: private_builds(small, repeats, horizon),
                units=repeats * len(BUILDS) * len(LARGE_EPSILONS))


def _exact_batched(seeds: int, horizon: int) -> Pair:
    eta, gamma, _ = exp2_parameters(horizon, ARMS, 1.0 / EPSILON)
    return Pair(product=lambda: Round(vector_game("private-exp2", seeds, horizon, EPSILON)),
                reference=lambda: Round(functools.partial(
                    lean_exp3, seeds, horizon, ARMS, eta=eta, gamma=gamma,
                    noise_scale=1.0 / EPSILON)),
                units=seeds * horizon)


def learner_game(name: str, env_id: str, rounds: int, seed: int = 1, **options: Any
                 ) -> Round:
    """A game of the learner ``name`` (built with ``options``) on ``env_id`` (10 arms or
    experts, ``horizon = rounds``, the registered env's own wrappers) through the one
    game loop, built and reset beforehand (learner seed ``seed``, env seed ``seed +
    1``); ``run()`` returns the final regret."""
    env = build_env(env_id, horizon=rounds, n_arms=ARMS)
    learner = agents.make(name, env.get_wrapper_attr("problem"), seed=seed, **options)
    learner.reset(seed)
    env.reset(seed=seed + 1)
    return Round(lambda: run_rounds(env, learner)["regret"].regret, env.close)


def private_ftrl_game(rounds: int, seed: int = 1) -> Round:
    """A game of ``private-ftrl`` on ``DPFullInfo-Experts-v0`` (10 experts, ``epsilon =
    1, delta = 1e-5``: the exact discrete Gaussian, the Agarwal-Singh counter): a
    :func:`learner_game`."""
    return learner_game("private-ftrl", "DPFullInfo-Experts-v0", rounds, seed,
                        epsilon=EPSILON, delta=1e-5)


def _private_ftrl(rounds: int) -> Pair:
    return Pair(product=lambda: private_ftrl_game(rounds),
                reference=lambda: env_steps("CartPole-v1", 0, rounds), units=rounds)


def _round_against_cartpole(name: str, env_id: str, rounds: int) -> Pair:
    return Pair(product=lambda: learner_game(name, env_id, rounds),
                reference=lambda: env_steps("CartPole-v1", 0, rounds), units=rounds)


#: The script a :func:`child_cpu` child runs: ``setup``, then ``timed`` between two
#: readings of its CPU clock, whose difference it prints.
#: ``{others}`` is an expression of CPU seconds spent elsewhere on the child's behalf
#: (``0.0``; the isolated cases: the isolated processes it stopped).
CHILD_CODE = """\
import time
{setup}
_start = time.process_time() + {others}
{timed}
print(repr(time.process_time() + {others} - _start))
"""


def child_cpu(timed: str, setup: str = "", others: str = "0.0") -> Round:
    """A fresh Python process (this interpreter, the checkout on its path) runs
    ``setup``, then ``timed``; ``run()`` adds the CPU seconds the child measured around
    ``timed`` (its own, plus the expression ``others`` evaluated before and after,
    defined by ``setup``) to the ``child`` clock and returns them.

    Raises:
        RuntimeError: When the child fails (its standard error in the message).
    """
    # The child writes its bytecode cache, as a user's interpreter does: with
    # PYTHONDONTWRITEBYTECODE set, every child would compile each module edited since its
    # cache was written, which no user pays twice (the warm-up round writes it).
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
           "PYTHONPATH": os.pathsep.join(
               [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    argv = [sys.executable, "-c", CHILD_CODE.format(setup=setup, timed=timed, others=others)]

    def run() -> float:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT,
                              timeout=1800, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"the child of {timed!r} failed: {done.stderr.strip()}")
        seconds = float(done.stdout.strip().splitlines()[-1])
        _CHILD_SECONDS[0] += seconds
        return seconds

    return Round(run)


def _startup(repeats: int) -> Pair:
    return Pair(product=lambda: _children("import agents", "", repeats),
                reference=lambda: _children("import gymnasium", "", repeats), units=repeats)


#: The set-up of a child that times a whole process: ``children_cpu()``, the CPU seconds
#: of the child's finished children (its ``others``).
WHOLE_PROCESS_SETUP = """\
import resource, subprocess
def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime"""


def _whole_processes(argv: list[str], repeats: int) -> Round:
    """``repeats`` children, each running the process ``argv`` (its output discarded)
    and measuring its CPU time, theirs included."""
    timed = f"subprocess.run({argv!r}, check=True, stdout=subprocess.DEVNULL)"
    return _children(timed, WHOLE_PROCESS_SETUP, repeats, others="children_cpu()")


def _cli_version(repeats: int) -> Pair:
    return Pair(product=lambda: _whole_processes([*dp_online_command(), "--version"], repeats),
                reference=lambda: _whole_processes([sys.executable, "-c", "import gymnasium"],
                                                   repeats),
                units=repeats)


#: The timed code of ``compiled-start``: the compiled path's first game and the
#: compiled sampler's first draw, in a fresh process.
COMPILED_START = """\
from agents.compiled import play_compiled
play_compiled("DPBandit-Matroid-v2", "private-projection-free", 40, 0,
              agent_kw={"epsilon": 1.0})
import numpy as np
from agents.privacy import discrete
discrete.COMPILE_AFTER = 0
discrete.discrete_laplace(np.random.default_rng(0), 3, 64)
discrete.discrete_gaussian(np.random.default_rng(0), 3, 64)
discrete.bernoulli_exp_big(np.random.default_rng(0), np.arange(64), 3)
assert discrete._kernels"""


def _compiled_start(repeats: int) -> Pair:
    return Pair(product=lambda: _children(COMPILED_START, "import agents, dp_online_envs",
                                          repeats),
                reference=lambda: _children("import gymnasium", "", repeats), units=repeats)


def _children(timed: str, setup: str, repeats: int, others: str = "0.0") -> Round:
    """``repeats`` :func:`child_cpu` children one after the other, as one round."""
    rounds = [child_cpu(timed, setup, others) for _ in range(repeats)]
    return Round(lambda: [r.run() for r in rounds])


#: The set-up of the isolated cases' children: the game's env and the learner's factory
#: (``private-exp2``, K = 10, epsilon = 1), the isolation layer imported.
ISOLATED_SETUP = """\
import functools
import gymnasium as gym
import agents, dp_online_envs
from dp_online_envs.lab.isolation import IsolatedLearner, IsolationLimits, isolated_cpu_seconds
from dp_online_envs.lab.sandbox import Sandbox
from dp_online_envs.loop import run_rounds
env = gym.make("DPBandit-MAB-v0", n_arms=10, horizon={horizon})
problem = env.get_wrapper_attr("problem")
factory = functools.partial(agents.make, "private-exp2", epsilon=1.0, seed=1)
limits = IsolationLimits(timeout=120.0, startup_timeout=600.0, sandbox={sandbox})"""

#: The timed code of ``isolated-start``: an isolated learner started, reset, asked for
#: its first action and closed.
ISOLATED_START = """\
learner = IsolatedLearner(factory, problem, env.action_space, limits)
learner.reset(1)
learner.act()
learner.close()"""

#: The timed code of ``sandboxed-game``: a game played with the learner sandboxed, as
#: the grader plays a submission's.
SANDBOXED_GAME = """\
learner = IsolatedLearner(factory, problem, env.action_space, limits)
learner.reset(1)
env.reset(seed=2)
assert run_rounds(env, learner)["regret"].regret >= 0
learner.close()"""


def _isolated_start(repeats: int) -> Pair:
    setup = ISOLATED_SETUP.format(horizon=10, sandbox=None)
    return Pair(product=lambda: _children(ISOLATED_START, setup, repeats,
                                          others="isolated_cpu_seconds()"),
                reference=lambda: _children("import gymnasium", "", repeats), units=repeats)


def _sandboxed_game(repeats: int, horizon: int) -> Pair:
    from dp_online_envs.lab.sandbox import sandbox_unavailable

    why = sandbox_unavailable()
    if why is not None:
        raise CaseUnavailable(f"sandboxed-game needs a sandbox: {why}")
    setup = ISOLATED_SETUP.format(horizon=horizon, sandbox="Sandbox()")
    return Pair(product=lambda: _children(SANDBOXED_GAME, setup, repeats,
                                          others="isolated_cpu_seconds()"),
                reference=lambda: _children("import gymnasium", "", repeats), units=repeats)


@functools.lru_cache(maxsize=2)
def stored_results(records: int) -> tuple[Path, Path]:
    """A results directory of ``records`` records
    (:func:`~benchmarks.results_store.synthetic_results`: copies of the README sweep's
    33 games under as many seed indices) whose games index is built, and one Parquet
    file of its games table (``dp-online export``'s); made once per process, removed at
    its exit."""
    import atexit
    import shutil
    import tempfile

    from benchmarks.results_store import parquet_of, synthetic_results
    from dp_online_envs.lab.experiments import load_results
    from dp_online_envs.lab.experiments.index import SETTLED_NS

    tmp = Path(tempfile.mkdtemp(prefix="speed-results-"))
    atexit.register(shutil.rmtree, tmp, True)
    results = synthetic_results(tmp / "results", records)
    load_results(results)  # builds the index
    # a reader takes the index's listing of games/ as it is once the directory has not
    # changed for SETTLED_NS: time the directory as a user finds it after a sweep
    time.sleep(SETTLED_NS / 1e9 + 0.1)
    load_results(results)  # records the settled directory in the index
    return results, parquet_of(results, tmp / "games.parquet")


def _load_results(records: int, reads: int) -> Pair:
    import pandas as pd

    from dp_online_envs.lab.experiments import load_results

    def reading(read: Callable[[Path], Any], path_of: Callable[[], Path]) -> Round:
        path = path_of()
        return Round(lambda: [read(path) for _ in range(reads)][-1])

    return Pair(product=lambda: reading(load_results, lambda: stored_results(records)[0]),
                reference=lambda: reading(pd.read_parquet, lambda: stored_results(records)[1]),
                units=records * reads)


def _cases() -> dict[str, Case]:
    cases = [
        Case("env-step", "DPBandit-MAB-v0 step (K=10, FeedbackGuard + RegretRecorder)",
             "CartPole-v1 step", "step", _env_step,
             {"full": {"steps": 20_000}, "tiny": {"steps": 50}}),
        Case("private-exp2", "private-exp2 + env + wrappers, one round (K=10, eps=1)",
             "lean numpy EXP2 + Laplace noise, one round", "round", _private_exp2,
             {"full": {"rounds": 20_000}, "tiny": {"rounds": 50}}),
        Case("isolated", "private-exp2 round, learner in its own process",
             "the same game in process", "round", _isolated,
             {"full": {"horizon": 5_000}, "tiny": {"horizon": 30}}, threshold=2.0,
             clock="wall"),
        Case("vectorized", "exp3 as a vector learner (agents.vector), one run-step",
             "lean numpy EXP3 over the same games, one run-step", "run-step", _vectorized,
             {"full": {"seeds": 500, "horizon": 600}, "tiny": {"seeds": 3, "horizon": 20}}),
    ]
    cases += [
        Case("exact-batched", "private-exp2 as a vector learner, exact discrete Laplace "
             "noise (1000 seeds), one run-step", "lean numpy EXP2 + float Laplace noise over the "
             "same games, one run-step", "run-step", _exact_batched,
             {"full": {"seeds": 1000, "horizon": 2000}, "tiny": {"seeds": 3, "horizon": 20}}),
        Case("private-ftrl", "private-ftrl + env + wrappers, one round (10 experts, eps=1, "
             "delta=1e-5, exact discrete Gaussian)", "CartPole-v1 step", "round",
             _private_ftrl, {"full": {"rounds": 5000}, "tiny": {"rounds": 30}}),
        Case("hedge", "hedge + env + wrappers, one round (DPFullInfo-Experts-v0, 10 experts)",
             "CartPole-v1 step", "round",
             functools.partial(_round_against_cartpole, "hedge", "DPFullInfo-Experts-v0"),
             {"full": {"rounds": 20_000}, "tiny": {"rounds": 30}}),
        Case("exp3", "exp3 + env + wrappers, one round (DPBandit-MAB-v0, K=10)",
             "CartPole-v1 step", "round",
             functools.partial(_round_against_cartpole, "exp3", "DPBandit-MAB-v0"),
             {"full": {"rounds": 20_000}, "tiny": {"rounds": 30}}),
        Case("startup", "import agents, fresh interpreter", "import gymnasium, fresh "
             "interpreter", "import", _startup, {"full": {"repeats": 3}, "tiny": {"repeats": 1}},
             threshold=2.0, clock="child"),
        Case("cli-version", "dp-online --version, the whole process", "python -c 'import "
             "gymnasium', the whole process", "process", _cli_version,
             {"full": {"repeats": 3}, "tiny": {"repeats": 1}}, threshold=2.0, clock="child"),
        Case("compiled-start", "compiled path's first game + compiled sampler's first draw, "
             "fresh process, kernels cached on disk", "import gymnasium, fresh interpreter",
             "process", _compiled_start, {"full": {"repeats": 2}, "tiny": {"repeats": 1}},
             threshold=2.0, clock="child"),
        Case("isolated-start", "an isolated learner (private-exp2) started, reset, its "
             "first action, closed; its process's CPU included", "import gymnasium, fresh "
             "interpreter", "learner", _isolated_start,
             {"full": {"repeats": 2}, "tiny": {"repeats": 1}}, threshold=2.0, clock="child"),
        Case("sandboxed-game", "a 200-round game of private-exp2 sandboxed as the grader "
             "plays a submission (bubblewrap), from start to close; the sandbox's CPU "
             "included", "import gymnasium, fresh interpreter", "game", _sandboxed_game,
             {"full": {"repeats": 2, "horizon": 200}, "tiny": {"repeats": 1, "horizon": 5}},
             threshold=2.0, clock="child"),
    ]
    for name in COUNTERS:
        cases.append(Case(f"counter-{name}", f"{name} counter add (Gaussian noise, dim 1)",
                          "running-sum addition", "add", functools.partial(_counter, name),
                          {"full": {"horizon": 8192, "dim": 1},
                           "tiny": {"horizon": 16, "dim": 1}}))
    cases.append(Case("load-results", "load_results of a results directory of 3000 "
                      "records, its games index in place", "pandas.read_parquet of one "
                      "Parquet file of the same table", "record", _load_results,
                      {"full": {"records": 3000, "reads": 10},
                       "tiny": {"records": 40, "reads": 1}}))
    cases.append(Case("build-large-epsilon",
                      "a private learner built at epsilon 300, 1e3 or 1e6 (private-ftrl, "
                      "private-exp2; delta 0 and 1e-6)", "the same built at epsilon 1",
                      "build", _build_large_epsilon,
                      {"full": {"repeats": 2, "horizon": 10_000},
                       "tiny": {"repeats": 1, "horizon": 64}}, threshold=2.0))
    return {case.name: case for case in cases}


#: Every speed case, by name.
CASES: dict[str, Case] = _cases()


def time_ratio(product_s: list[float], reference_s: list[float]) -> float:
    """The product's median time over the reference's (both sides do the same units of
    work): the ratio the harness reports and the baseline stores.

    Raises:
        ValueError: When a side has no time, or a time that is not positive.
    """
    for side, times in (("product", product_s), ("reference", reference_s)):
        if not times or min(times) <= 0:
            raise ValueError(f"{side} times {times!r} rejected: expected positive seconds")
    return statistics.median(product_s) / statistics.median(reference_s)
