"""Playing an agent on an environment."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from agents.base import Agent
from dp_online_envs.loop import run_rounds, run_vector_rounds, seed_of
from dp_online_envs.problem import Problem
from dp_online_envs.validation import check_int
from dp_online_envs.wrappers import RegretSummary, regret_summary
from dp_online_envs.wrappers.peers import LossTally


def _same_object(a: object, b: object) -> bool:
    """Same class and, when the class has its own ``repr``, the same repr (the domains
    and loss families show their parameters there)."""
    if type(a) is not type(b):
        return False
    return type(a).__repr__ is object.__repr__ or repr(a) == repr(b)


def problem_differences(agent_problem: Problem, env_problem: Problem) -> list[str]:
    """What differs between the problem an agent was built for and the env's.

    Compared: the feedback kind, the decision set (class, dimension and parameters as
    shown by its ``repr``), the loss family (likewise) and the horizon T, which the
    agents' step sizes, counters and noise depend on. The bounds L, B, D, H are not:
    an agent may be given other bounds on purpose (it clips its feedback to the bounds
    it was given, so its privacy guarantee holds either way).

    Returns:
        One ``"what: agent's vs env's"`` entry per difference (empty when they agree).
    """
    a, e = agent_problem, env_problem
    if a is e:
        return []
    out = []
    if a.feedback != e.feedback:
        out.append(f"feedback: {a.feedback!r} vs {e.feedback!r}")
    if a.domain.dim != e.domain.dim or not _same_object(a.domain, e.domain):
        out.append(f"decision set: {a.domain!r} (dim {a.domain.dim}) vs {e.domain!r} "
                   f"(dim {e.domain.dim})")
    if not _same_object(a.loss, e.loss):
        out.append(f"losses: {a.loss!r} vs {e.loss!r}")
    if a.horizon != e.horizon:
        out.append(f"horizon: {a.horizon} vs {e.horizon}")
    return out


def describe_problem(problem: Problem) -> str:
    """One line naming a problem: feedback, decision set, losses and horizon."""
    return (f"{problem.feedback} feedback on {problem.domain!r} with {problem.loss!r}, "
            f"horizon {problem.horizon}")


def check_agent_fits(agent: Agent, env_problem: Problem) -> None:
    """Refuse an agent built for another problem than the one the env poses.

    Raises:
        ValueError: The agent's problem differs from ``env_problem`` (see
            :func:`problem_differences`); the message names both problems and what
            differs.
    """
    diffs = problem_differences(agent.problem, env_problem)
    if diffs:
        raise ValueError(
            f"agent {agent.name!r} was built for another problem than the env's "
            f"({'; '.join(diffs)}): the agent's is {describe_problem(agent.problem)}, "
            f"the env's is {describe_problem(env_problem)}; build the agent from "
            "env.get_wrapper_attr('problem')")


def _check_play_args(env: Any, agent: Any) -> None:
    """Refuse an env without ``reset``/``step`` or a learner without ``act``/``update``."""
    for obj, name, methods, what in ((env, "env", ("reset", "step"), "an env (gym.make(id))"),
                                     (agent, "agent", ("act", "update"),
                                      "a learner (agents.make(name, problem))")):
        if not all(callable(getattr(obj, m, None)) for m in methods):
            raise TypeError(f"{name} must be {what}, got {type(obj).__name__}: call "
                            "agents.play(env, agent, seed=...)")


def fresh_agent_seed() -> int:
    """A 63-bit agent seed from fresh OS entropy (what :func:`play` uses when the caller
    gives none): unrelated to any game seed, so a learner that searches its own
    generator's seed learns nothing about the env's."""
    return seed_of(np.random.SeedSequence())


def _game_seeds(seed: int | None, agent_seed: int | None) -> tuple[int | None, int]:
    """``(env seed, agent seed)`` of :func:`play`: ``seed`` checked, ``agent_seed``
    checked or fresh (:func:`fresh_agent_seed`).

    Raises:
        ValueError: Either is not ``None`` or an integer ``>= 0``.
    """
    env_seed = None if seed is None else check_int("seed", seed, 0)
    return env_seed, (fresh_agent_seed() if agent_seed is None
                      else check_int("agent_seed", agent_seed, 0))


def play(env: gym.Env, agent: Agent, seed: int | None = None, *,
         agent_seed: int | None = None) -> RegretSummary:
    """Play one complete game and return the regret summary.

    ``seed`` is the game's seed: the env is reset with ``seed`` itself, so
    ``play(env, agent, seed=s)`` faces the losses a hand-written loop gets from
    ``env.reset(seed=s)``. The agent is reset with a seed of its own, never derived from
    ``seed``: ``agent_seed`` if given, else fresh OS entropy (:func:`fresh_agent_seed`),
    so a learner that recovers its generator's seed (by search, when seeds are small)
    learns nothing about the env's. The summary carries the agent's seed as
    ``summary.agent_seed`` (a foreign env's own summary too, if it takes attributes), so
    ``play(env, agent, seed=s, agent_seed=summary.agent_seed)`` replays the game bit for
    bit. The rounds are played by the one game loop,
    :func:`dp_online_envs.loop.run_rounds`. A game cut short by a ``TimeLimit`` returns
    the regret of the rounds played.

    Raises:
        ValueError: The agent was built for another problem than the env's public
            ``Problem`` (another decision set or number of arms, feedback kind, loss
            family or horizon); the message names both. A ``seed`` or ``agent_seed``
            that is not ``None`` or an integer ``>= 0``.
        TypeError: ``env`` is not an env (``reset`` and ``step``) or ``agent`` not a
            learner (``act`` and ``update``), e.g. the two passed in the wrong order.
    """
    _check_play_args(env, agent)
    env_seed, agent_seed = _game_seeds(seed, agent_seed)
    try:
        env_problem = env.get_wrapper_attr("problem")
    except AttributeError:  # not one of the suite's envs: nothing to compare with
        env_problem = None
    if isinstance(env_problem, Problem) and isinstance(getattr(agent, "problem", None), Problem):
        check_agent_fits(agent, env_problem)
    if env_problem is None:
        env = LossTally.wrap(env)
    agent.reset(agent_seed)
    env.reset(seed=env_seed)
    info = run_rounds(env, agent)
    # the experimenter's door when stopped early (a TimeLimit)
    summary = info["regret"] if "regret" in info else regret_summary(env)
    with contextlib.suppress(AttributeError):  # a foreign env's summary may refuse it
        summary.agent_seed = agent_seed  # not a field: equal games compare equal
    return summary


def play_batch(venv: Any, learner: Any, seeds: Sequence[int | None], *,
               agent_seeds: Sequence[int | None] | None = None) -> list[RegretSummary]:
    """Play B complete games at once and return their regret summaries.

    The vector counterpart of :func:`play`: ``venv`` is a vector env
    (:class:`~dp_online_envs.envs.vector_env.LinearVectorEnv`, ``num_envs = B``),
    ``learner`` a vector learner (:func:`agents.vector.make_vector`), and game ``b``
    is seeded exactly as ``play(env, agent, seed=seeds[b], agent_seed=agent_seeds[b])``
    seeds its game (an agent seed left ``None``, or all of them when ``agent_seeds`` is
    ``None``, is fresh entropy), so summary ``b`` equals that game's, bit for bit, and
    carries its agent's seed as ``agent_seed``. The rounds are played by
    :func:`dp_online_envs.loop.run_vector_rounds`.

    Raises:
        TypeError: ``venv`` is not a vector env, or ``learner`` not a vector learner.
        ValueError: ``len(seeds) != venv.num_envs`` (or ``len(agent_seeds)``), a seed
            that is not ``None`` or an integer ``>= 0``, or the learner was built for
            another problem than the env's (see :func:`check_agent_fits`).
    """
    if not isinstance(getattr(venv, "num_envs", None), int):
        raise TypeError(f"venv must be a vector env (gym.make_vec(id, num_envs=B)), "
                        f"got {type(venv).__name__}: play one env with agents.play")
    if not callable(getattr(learner, "reset_batch", None)):
        raise TypeError(f"learner must be a vector learner (agents.vector.make_vector), "
                        f"got {type(learner).__name__}: play a scalar agent with agents.play")
    if isinstance(seeds, (str, bytes)) or not np.iterable(seeds):
        raise TypeError(f"seeds={seeds!r} rejected: expected a list of {venv.num_envs} seeds "
                        "(one per game; None for fresh entropy)")
    seeds = list(seeds)
    if len(seeds) != venv.num_envs:
        raise ValueError(f"got {len(seeds)} seeds for {venv.num_envs} games")
    if agent_seeds is None:
        agent_seeds = [None] * len(seeds)
    elif isinstance(agent_seeds, (str, bytes)) or not np.iterable(agent_seeds):
        raise TypeError(f"agent_seeds={agent_seeds!r} rejected: expected a list of "
                        f"{venv.num_envs} seeds (None for fresh entropy)")
    agent_seeds = list(agent_seeds)
    if len(agent_seeds) != venv.num_envs:
        raise ValueError(f"got {len(agent_seeds)} agent seeds for {venv.num_envs} games")
    check_agent_fits(learner, venv.problem)
    pairs = [_game_seeds(s, a) for s, a in zip(seeds, agent_seeds)]
    learner.reset_batch([a for _, a in pairs])
    venv.reset(seed=[e for e, _ in pairs])
    summaries = list(run_vector_rounds(venv, learner)["regret"])
    for summary, (_, a) in zip(summaries, pairs):
        summary.agent_seed = a
    return summaries
