"""Helpers shared by the agent tests (imported as a plain module: tests/agents is on
sys.path under pytest's default import mode)."""

import dataclasses
import math

import gymnasium as gym
import numpy as np

import dp_online_envs  # noqa: F401  (registers the ids)
from agents import make, play
from agents.privacy import gaussian_sigma, noise_strategy

T_SHORT = 200
DELTA = 1e-6


def make_env(env_id: str, horizon: int = T_SHORT, **kw) -> gym.Env:
    """A registered env with a short default horizon."""
    return gym.make(env_id, horizon=horizon, **kw)


def problem_of(env: gym.Env):
    """The public problem of a registered env."""
    return env.get_wrapper_attr("problem")


def play_agent(name: str, env: gym.Env, seed: int = 0, **kw):
    """Build agent ``name`` for ``env`` and play one seeded game: ``(agent, summary)``."""
    agent = make(name, problem_of(env), seed=seed, **kw)
    return agent, play(env, agent, seed=seed, agent_seed=seed)


def center_regret(env: gym.Env, seed: int) -> float:
    """Regret of always playing the domain's center (a learner that learns nothing)."""
    domain = problem_of(env).domain
    env.reset(seed=seed)
    done, info = False, {}
    while not done:
        _, _, done, _, info = env.step(domain.center)
    return info["regret"].regret_hi


def discrete_gaussian_scale(sens, levels, dim, eps, delta):
    """``sigma g`` of the exact discrete Gaussian of a tree counter; it is within 12% above
    the analytic continuous sigma for ``sqrt(levels) sens`` (the zCDP accounting and the
    grid's sqrt(dim) cost, see DiscreteGaussianNoise), checked here as well."""
    s = noise_strategy("discrete-gaussian", eps, delta, sens).for_dim(dim).calibrate(
        copies=levels).scale
    assert 1.0 < s / gaussian_sigma(math.sqrt(levels) * sens, eps, delta) < 1.12
    return s


def played_points(agent, env: gym.Env, seed: int, reset_seed: int | None = None) -> np.ndarray:
    """The points an agent plays in one game: env reset with ``seed``, the agent with
    ``reset_seed`` (default: ``seed``)."""
    agent.reset(seed if reset_seed is None else reset_seed)
    env.reset(seed=seed)
    problem = env.get_wrapper_attr("problem")
    out, done = [], False
    while not done:
        a = agent.act()
        out.append(problem.domain.to_point(a))
        obs, _, done, _, _ = env.step(a)
        agent.update(a, obs)
    return np.stack(out)


def claiming(agent, epsilon: float):
    """``agent`` declaring ``epsilon`` whatever it was built at (an auditor's false claim
    when the agent was built with less noise)."""
    agent.privacy = dataclasses.replace(agent.privacy, epsilon=epsilon)
    return agent


def tenth_noise_audits(monkeypatch, module, name: str, n_arms: int, horizon: int,
                       epsilon: float, seed: int):
    """The pair audit of a K-armed learner whose noise is a ``module.DiscreteLaplaceNoise``
    built as ``DiscreteLaplaceNoise(epsilon, sensitivity, ...)``: first with the noise of
    ``10 epsilon`` (a tenth of it) while the claim stays ``epsilon``, then honest, on the
    same neighbouring pair (every arm's loss flips 1 -> 0 in round 1, so a release of
    round 1's loss moves by the full sensitivity whatever arm is played; 1000 runs).

    Returns:
        ``(weak_agent, weak_result, honest_agent, honest_result)``, the agents built with
        seed 0 (the monkeypatch is undone before the honest audit).
    """
    from dp_online_envs import build_env
    from dp_online_envs.lab.audit import audit

    env = build_env("DPBandit-MAB-v0", horizon=horizon, n_arms=n_arms)
    problem = env.get_wrapper_attr("problem")

    def run():
        def factory(s):
            return claiming(make(name, problem, epsilon=epsilon, seed=s), epsilon)
        return factory(0), audit(factory, env, tau=1, runs=1000, seed=seed,
                                 sequence=np.ones((horizon, n_arms)),
                                 neighbour_theta=np.zeros(n_arms))

    real = module.DiscreteLaplaceNoise
    monkeypatch.setattr(module, "DiscreteLaplaceNoise",
                        lambda epsilon, sensitivity, **kw: real(10.0 * epsilon, sensitivity,
                                                                **kw))
    weak = run()
    monkeypatch.undo()
    return (*weak, *run())
