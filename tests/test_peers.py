"""Neighbouring libraries plug in: river's ``bandit.evaluate`` through
:class:`~dp_online_envs.wrappers.CopyableGame`, stable-baselines3's ``evaluate_policy``
on a vectorized env (an agent of the suite and a PPO policy), ``agents.play`` on an env
of another library, the public loss range, and a base class that reserves no plain
name. Each path is checked against a replay of the same game by hand."""

from __future__ import annotations

import copy
import math
import pathlib
import random

import gymnasium as gym
import numpy as np
import pytest

import agents
from dp_online_envs import Problem
from dp_online_envs.domains import Arms
from dp_online_envs.losses import LinearLoss
from dp_online_envs.wrappers import CopyableGame

ENV = "DPBandit-MAB-v0"
T = 60


def replay(seed: int, arms: list[int]) -> tuple[list[float], float]:
    """The rewards and the learner's loss of ``arms`` played on a fresh game seeded ``seed``."""
    env = gym.make(ENV, horizon=len(arms))
    env.reset(seed=seed)
    rewards = []
    for arm in arms:
        _, reward, terminated, _, info = env.step(arm)
        rewards.append(reward)
    assert terminated
    return rewards, info["regret"].learner_loss


# ------------------------------------------------------------------------------ river
def test_river_bandit_evaluate_plays_every_policy_on_the_episode_seeds_game():
    from river import bandit

    policies = [bandit.UCB(delta=1, seed=1), bandit.EpsilonGreedy(epsilon=0.1, seed=2)]
    trace = list(bandit.evaluate(policies, CopyableGame(ENV, horizon=T), n_episodes=2, seed=7))
    assert len(trace) == 2 * 2 * T
    rng = random.Random(7)  # how river seeds each episode's game
    for episode in range(2):
        seed = rng.randint(0, 2**32)
        rng.randint(0, 2**32 - 1)  # its action-space seed
        for policy in range(2):
            steps = [s for s in trace if s["episode"] == episode and s["policy_idx"] == policy]
            rewards, learner_loss = replay(seed, [s["arm"] for s in steps])
            assert [s["reward"] for s in steps] == rewards
            assert math.isclose(-steps[-1]["reward_stat"], learner_loss, rel_tol=1e-12)


def test_unit_rewards_use_the_public_loss_range():
    env = CopyableGame(ENV, horizon=T, unit_rewards=True)
    assert env.get_wrapper_attr("problem").loss_range() == (0.0, 1.0)
    env.reset(seed=3)
    arms = [t % 10 for t in range(T)]
    unit = [env.step(a)[1] for a in arms]
    assert unit == [1.0 + r for r in replay(3, arms)[0]]  # (hi - f) / (hi - lo), f = -r


def test_a_copy_is_refused_once_a_round_is_played():
    env = CopyableGame(ENV, horizon=T)
    env.reset(seed=1)
    twin = copy.deepcopy(env)  # right after reset: a new game on the same seed
    assert [twin.step(0)[1] for _ in range(3)] == [env.step(0)[1] for _ in range(3)]
    with pytest.raises(TypeError, match="3 rounds played"):
        copy.deepcopy(env)
    with pytest.raises(TypeError, match="unit_rewards"):
        CopyableGame(ENV, unit_rewards=1)


def test_river_given_a_plain_env_is_told_the_line_to_write():
    """What a river user types first, gym.make(id) straight into bandit.evaluate, fails
    with an error that names CopyableGame with the env's own id."""
    from river import bandit

    with pytest.raises(TypeError) as caught:
        list(bandit.evaluate([bandit.UCB(delta=1, seed=1)], gym.make(ENV, horizon=T),
                             n_episodes=1, seed=0))
    assert f"CopyableGame('{ENV}', unit_rewards=True)" in str(caught.value)


# ----------------------------------------------------------------- stable-baselines3
def vec_env(n: int):
    from stable_baselines3.common.vec_env import DummyVecEnv

    return DummyVecEnv([lambda: gym.make(ENV, horizon=T)] * n)


def episode_losses(model, n_envs: int, episodes: int) -> tuple[list[float], list[float]]:
    """``evaluate_policy``'s episode rewards and the learner losses the games reported."""
    from stable_baselines3.common.evaluation import evaluate_policy

    venv = vec_env(n_envs)
    venv.seed(11)
    reported: list[float] = []

    def keep(local_vars, _globals):
        info = local_vars["info"]
        if local_vars["done"]:
            reported.append(info["regret"].learner_loss)

    rewards, lengths = evaluate_policy(model, venv, n_eval_episodes=episodes,
                                       return_episode_rewards=True, callback=keep, warn=False)
    assert lengths == [T] * episodes
    return sorted(-r for r in rewards), sorted(reported)


def test_sb3_evaluate_policy_plays_an_agent_on_a_vectorized_env():
    problem = gym.make(ENV, horizon=T).get_wrapper_attr("problem")
    agent = agents.make("exp3", problem, seed=5)
    losses, reported = episode_losses(agent, n_envs=2, episodes=4)
    # evaluate_policy sums float32 rewards; the env's ledger sums float64 losses
    assert len(losses) == 4 and losses == pytest.approx(reported, rel=1e-5)


def test_a_batch_of_n_is_n_independent_copies_seeded_from_the_agent():
    problem = gym.make(ENV, horizon=T).get_wrapper_attr("problem")
    batched = agents.make("exp3", problem, seed=5)
    children = np.random.SeedSequence(5).spawn(2)
    singles = [agents.make("exp3", problem, seed=int(c.generate_state(1)[0])) for c in children]
    envs = [gym.make(ENV, horizon=T) for _ in range(4)]
    obs = np.stack([e.reset(seed=20 + i)[0] for i, e in enumerate(envs[:2])])
    single_obs = [e.reset(seed=20 + i)[0] for i, e in enumerate(envs[2:])]
    start = np.array([True, True])
    for _ in range(T):
        actions, _ = batched.predict(obs, episode_start=start)
        alone = [s.predict(o[None], episode_start=start[:1])[0][0]
                 for s, o in zip(singles, single_obs)]
        assert list(actions) == alone
        obs = np.stack([e.step(a)[0] for e, a in zip(envs[:2], actions)])
        single_obs = [e.step(a)[0] for e, a in zip(envs[2:], alone)]
        start = np.array([False, False])
    with pytest.raises(ValueError, match="3 flags for 2 envs"):
        batched.predict(obs, episode_start=np.array([True, False, True]))


def test_sb3_ppo_policy_through_evaluate_policy_on_a_vectorized_env():
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", vec_env(2), n_steps=8, batch_size=8, seed=0, device="cpu")
    losses, reported = episode_losses(model, n_envs=2, episodes=2)
    assert len(losses) == 2 and losses == pytest.approx(reported, rel=1e-5)


# --------------------------------------------------------- agents.play, foreign envs
class ForeignBandit(gym.Env):
    """Another library's K-armed Bernoulli bandit that follows the protocol: the
    observation is ``[f_t(x_t)]``, the reward ``-f_t(x_t)``. It keeps its own ledger."""

    def __init__(self, means, horizon, report: bool = False):
        self.means, self.horizon, self.report = np.asarray(means), horizon, report
        self.action_space = gym.spaces.Discrete(len(means))
        self.observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float64)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.paid = 0, 0.0
        return np.zeros(1), {}

    def step(self, action):
        loss = float(self.np_random.random() < self.means[int(action)])
        self.t += 1
        self.paid += loss
        done = self.t == self.horizon
        info = {"regret": "the env's own"} if (done and self.report) else {}
        return np.array([loss]), -loss, done, False, info


def test_agents_play_runs_a_foreign_env_and_reports_the_learner_loss():
    problem = Problem.build(Arms(3), LinearLoss(3, "unit"), "bandit", 200)
    env = ForeignBandit([0.9, 0.5, 0.1], 200)
    summary = agents.play(env, agents.make("exp3", problem, seed=1), seed=4)
    assert summary.rounds == 200 and summary.learner_loss == env.paid
    assert (summary.regret_lo, summary.regret_hi, summary.exact) == (-math.inf, math.inf, False)
    own = ForeignBandit([0.9, 0.5, 0.1], 200, report=True)
    assert agents.play(own, agents.make("exp3", problem, seed=1), seed=4) == "the env's own"


# --------------------------------------------------------------- the public API
def test_the_loss_range_is_public_and_the_agents_use_it():
    from agents.common import loss_range

    for env_id, expected in ((ENV, (0.0, 1.0)), ("DPFullInfo-Sphere-v1", None)):
        problem = gym.make(env_id).get_wrapper_attr("problem")
        lo, hi = problem.loss_range()
        assert (lo, hi) == (expected or (-problem.bound, problem.bound))
        assert loss_range(problem) == (lo, hi)
    problem = gym.make(ENV).get_wrapper_attr("problem")
    with pytest.raises(ValueError, match="B=inf"):
        Problem(**{**vars(problem), "bound": math.inf}).loss_range()


def test_a_subclass_may_use_the_plain_names_the_base_class_used_to_hold():
    class OwnHelpers(agents.Agent):
        name = "test-own-helpers"
        feedback = "bandit"

        def _seed(self):  # a helper of its own, once shadowed by the base's seed
            return 0

        def act(self):
            self._last_action = self._seed()
            return self._last_action

        def update(self, action, feedback):
            self._episode_seeds = action

    env = gym.make(ENV, horizon=T)
    agent = OwnHelpers(env.get_wrapper_attr("problem"), seed=3)
    assert agents.play(env, agent, seed=0).rounds == T
    assert agent.predict(np.zeros((1, 1)), episode_start=np.array([True]))[0].tolist() == [0]
    assert agent.predict(np.zeros((1, 1)))[0].tolist() == [0]


def test_the_sb3_guide_snippet_collects_each_episodes_regret():
    """The guide's evaluate_policy snippet runs as written and its callback gets the
    env's own regret of every episode (reward is minus the loss, not regret)."""
    import re

    guide = pathlib.Path(__file__).resolve().parents[1] / "docs" / "guides" / "peers.md"
    snippet = re.findall(r"```python\n(.*?)```", guide.read_text(), re.S)[0]
    scope: dict = {}
    exec(compile(snippet, str(guide), "exec"), scope)
    regrets, mean_reward = scope["regrets"], scope["mean_reward"]
    assert len(regrets) == 4 and all(isinstance(r, float) for r in regrets)
    assert mean_reward < 0 and all(r > mean_reward for r in regrets)
