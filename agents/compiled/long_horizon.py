"""Set-up and results of the compiled games (:mod:`agents.compiled.kernels`).

A compiled game is set up by the Python path itself -- the same env
(:func:`dp_online_envs.envs.registry.build_env`), the same learner
(:func:`agents.make`), reset with the seeds of :func:`agents.play` -- and the
compiled loop then plays every round from the generators those resets made. So the
law of the game is the Python path's by construction, and where the compiled arithmetic
repeats the Python one operation for operation (it does, see the kernels), the same
numbers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from agents.bandit.garber_kretzu import GarberKretzu
from agents.bandit.private_projection_free import PrivateProjectionFree
from agents.base import make
from agents.compiled import kernels
from agents.privacy.counters.base import EXACT_NOISE_BLOCK
from agents.privacy.discrete import word_source
from dp_online_envs.adversaries.stochastic import StochasticAdversary
from dp_online_envs.domains.base_polytope import SubmodularBasePolytope
from dp_online_envs.domains.birkhoff import Birkhoff
from dp_online_envs.domains.flow import FlowPolytope
from dp_online_envs.domains.matroid import PartitionMatroid
from dp_online_envs.envs.registry import build_env
from dp_online_envs.loop import game_seeds
from dp_online_envs.losses.linear import LinearLoss

__all__ = ["SUPPORTED_AGENTS", "CompiledGame", "kernel_arguments", "play_compiled",
           "play_compiled_seeds", "polytope_arrays"]

#: The learners the compiled loop plays.
#: The generator a game without counter noise hands the kernel (never drawn from).
_IDLE = np.random.default_rng(0)

SUPPORTED_AGENTS = ("garber-kretzu", "garber-kretzu-tuned", "private-projection-free",
                    "private-projection-free-tuned")


@dataclasses.dataclass(frozen=True)
class CompiledGame:
    """The result of one compiled game.

    Attributes:
        regret: ``learner_loss - comparator``.
        trivial_regret: Trivial play's (the domain's center every round) regret in the
            same game (the same losses).
        learner_loss, trivial_loss: ``sum_t f_t(x_t)`` and ``sum_t f_t(center)``.
        comparator: ``min_x sum_t f_t(x)`` (the linear oracle on the cumulative parameter).
        horizon, seed: The game.
        zeta, alpha, zeta_clamped: The learner's smoothing radius, shrink and whether the
            radius is clamped at ``r / 2``.
        lmo_calls, fw_cap_hits: Linear-oracle calls; Garber-Kretzu's capped projections.
        actions: The first ``record`` actions, shape ``(record, dim)``.
    """

    regret: float
    trivial_regret: float
    learner_loss: float
    trivial_loss: float
    comparator: float
    horizon: int
    seed: int
    zeta: float
    alpha: float
    zeta_clamped: bool
    lmo_calls: int
    fw_cap_hits: int
    actions: np.ndarray


def polytope_arrays(domain) -> tuple[int, tuple]:
    """``(kind, polytope)`` of :func:`agents.compiled.kernels.play_game` for a domain
    (the layout is documented at :data:`agents.compiled.kernels.MATROID`).

    Raises:
        ValueError: A domain whose linear oracle is not compiled (named): the compiled
            polytopes are the partition (and uniform) matroids, the s-t path polytopes of
            DAGs, the cardinality-based submodular base polytopes and the Birkhoff
            polytopes.
    """
    none = np.zeros(0, dtype=np.int64)
    nofloat = np.zeros(0)
    if isinstance(domain, PartitionMatroid):
        capacities = domain.capacities.astype(np.int64)
        return kernels.MATROID, (np.array([capacities.sum()], dtype=np.int64),
                                 domain._block_of.astype(np.int64), capacities,
                                 none, none, none, nofloat)
    if isinstance(domain, FlowPolytope):
        incoming = domain._incoming
        ptr = np.cumsum([0] + [len(ins) for ins in incoming]).astype(np.int64)
        return kernels.FLOW, (
            np.array([domain.n_nodes, domain.source, domain.sink], dtype=np.int64),
            domain.edges[:, 0].astype(np.int64), domain.edges[:, 1].astype(np.int64),
            np.array([v for v in domain.order if incoming[v]], dtype=np.int64), ptr,
            np.array([e for ins in incoming for e in ins], dtype=np.int64),
            domain.useful.astype(np.float64))
    if isinstance(domain, SubmodularBasePolytope) and domain.is_cardinality_based:
        return kernels.SUBMODULAR_BASE, (np.array([domain.n], dtype=np.int64), none, none,
                                         none, none, none,
                                         np.asarray(domain._card, dtype=np.float64))
    if isinstance(domain, Birkhoff):
        return kernels.BIRKHOFF, (np.array([domain.n], dtype=np.int64), none, none, none,
                                  none, none, nofloat)
    raise ValueError(f"{domain!r}: the compiled loop needs a partition (or uniform) "
                     f"matroid, s-t path (DAG), cardinality-based submodular base or "
                     f"Birkhoff polytope")


def _setup(env_id: str, agent: str, horizon: int, seed: int, env_kw: dict,
           agent_kw: dict, noise: bool):
    """The Python path's env and learner, reset as :func:`agents.play` resets them."""
    if agent not in SUPPORTED_AGENTS:
        raise ValueError(f"agent={agent!r}: the compiled loop plays {SUPPORTED_AGENTS}")
    env = build_env(env_id, horizon=horizon, **env_kw)
    base = env.unwrapped
    try:
        polytope_arrays(base.domain)
    except ValueError as exc:
        raise ValueError(f"{env_id}: {exc}") from None
    if not isinstance(base.loss, LinearLoss):
        raise ValueError(f"{env_id}: the compiled loop needs linear losses, got {base.loss!r}")
    learner = make(agent, env.get_wrapper_attr("problem"), seed=seed, **agent_kw)
    private = isinstance(learner, PrivateProjectionFree)
    if private:
        if learner.counter_name != "tree" or learner.noise not in ("laplace", None):
            raise ValueError(f"{agent}: the compiled loop runs the tree counter with Laplace "
                             f"noise (or none), got counter={learner.counter_name!r}, "
                             f"noise={learner.noise!r}")
        if not noise:
            learner.noise = None  # exact sums from the next reset: NOT private
    elif not isinstance(learner, GarberKretzu):
        raise ValueError(f"{agent}: not a learner the compiled loop plays")
    env_seed, agent_seed = game_seeds(seed)
    learner.reset(agent_seed)
    env.reset(seed=env_seed)
    adversary = base.adversary
    if not (isinstance(adversary, StochasticAdversary) and adversary._box_block()):
        raise ValueError(f"{env_id}: the compiled loop needs the two-point box draws of a "
                         f"stochastic adversary (e.g. planted-vertex), got {adversary!r}")
    return env, learner, private


def kernel_arguments(env, learner, private: bool, record: int = 0) -> tuple:
    """The arguments of :func:`agents.compiled.kernels.play_game` for a game set up by
    the Python path (after the resets): the adversary's and the learner's generators
    themselves, the adversary's law, the domain, the learner's parameters and its
    counter's noise."""
    base = env.unwrapped
    adversary, domain = base.adversary, base.domain
    kind, polytope = polytope_arrays(domain)
    g = learner.geometry
    counter = learner._counter if private else None
    strategy = counter.noise_strategy if counter is not None else None
    exact = strategy is not None and strategy.private
    noise_block = (min(getattr(strategy, "block_rows", EXACT_NOISE_BLOCK), 2 * counter.horizon)
                   if exact else 1)
    return (kernels.PRIVATE_PROJECTION_FREE if private else kernels.GARBER_KRETZU,
            int(base.horizon), adversary.np_random, adversary._low, adversary._width,
            adversary._p_high, np.array(domain.center, dtype=np.float64),
            kind, polytope, learner._dir_rng, g.center, np.ascontiguousarray(g.basis),
            float(learner.problem.bound), int(learner.batch), float(learner.eta),
            float(learner.zeta), float(learner.alpha),
            float(getattr(learner, "tolerance", 0.0)),
            int(getattr(learner, "max_fw_iterations", 0)),
            kernels.NOISE_DISCRETE_LAPLACE if exact else kernels.NOISE_NONE,
            word_source(counter._rng if exact else _IDLE),
            int(strategy.t) if exact else 1, float(counter.grid) if exact else 1.0,
            int(counter.levels) if exact else 1, int(noise_block), int(record),
            bool(getattr(learner, "baseline", False)))


def play_compiled(env_id: str, agent: str, horizon: int, seed: int, *,
                  env_kw: dict[str, Any] | None = None, agent_kw: dict[str, Any] | None = None,
                  noise: bool = True, record: int = 0) -> CompiledGame:
    """One game of ``agent`` on ``env_id`` in the compiled loop.

    The same game as ``agents.play(build_env(env_id, horizon=horizon, **env_kw),
    agents.make(agent, problem, seed=seed, **agent_kw), seed=seed,
    agent_seed=game_seeds(seed)[1])`` (:func:`dp_online_envs.loop.game_seeds`).

    Args:
        env_id: A matroid, s-t path, submodular base or Birkhoff polytope id with linear
            losses and a stochastic box adversary (``DPBandit-Matroid-v2``,
            ``DPBandit-Flow-v2``, ``DPBandit-SubmodularBase-v2``,
            ``DPBandit-Birkhoff-v2``; the domains of :func:`polytope_arrays`).
        agent: One of :data:`SUPPORTED_AGENTS`.
        horizon: ``T >= 1``.
        seed: The game's seed (as :func:`agents.play`'s).
        env_kw, agent_kw: Options of the env and of the learner.
        noise: ``False`` switches the private learner's counter noise off (exact sums,
            NOT private: the non-private limit, which plays as the non-private learner).
        record: Return the first ``record`` actions.

    Raises:
        ValueError: A game or learner the compiled loop does not play (named).
    """
    env, learner, private = _setup(env_id, agent, horizon, seed, dict(env_kw or {}),
                                   dict(agent_kw or {}), noise)
    out = kernels.play_game(*kernel_arguments(env, learner, private, record))
    learner_loss, trivial_loss, theta_sum, actions, outside, lmo_calls, cap_hits = out
    if outside:
        raise RuntimeError(f"{agent} played {outside} points outside the polytope")
    domain = env.unwrapped.domain
    comparator = float(theta_sum @ np.asarray(domain.linear_minimizer(theta_sum)))
    env.close()
    return CompiledGame(
        regret=learner_loss - comparator, trivial_regret=trivial_loss - comparator,
        learner_loss=learner_loss, trivial_loss=trivial_loss, comparator=comparator,
        horizon=int(horizon), seed=int(seed), zeta=float(learner.zeta),
        alpha=float(learner.alpha), zeta_clamped=bool(learner.params.zeta_clamped),
        lmo_calls=int(lmo_calls), fw_cap_hits=int(cap_hits), actions=actions)


def play_compiled_seeds(env_id: str, agent: str, horizon: int, seeds: Sequence[int], *,
                        workers: int = 1, **options: Any) -> list[CompiledGame]:
    """:func:`play_compiled` for each seed, ``workers`` games at a time in threads (the
    compiled loop releases the GIL); the results, in the order of ``seeds``, do not depend
    on ``workers``.

    Raises:
        ValueError: ``workers < 1``, or what :func:`play_compiled` raises.
    """
    if int(workers) < 1:
        raise ValueError(f"workers={workers!r}, expected an integer >= 1")
    if int(workers) == 1:
        return [play_compiled(env_id, agent, horizon, s, **options) for s in seeds]
    with ThreadPoolExecutor(max_workers=int(workers)) as pool:
        return list(pool.map(lambda s: play_compiled(env_id, agent, horizon, s, **options),
                             seeds))
