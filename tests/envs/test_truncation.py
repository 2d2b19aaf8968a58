"""Games cut short by a TimeLimit: what ``info`` says, and the regret of the rounds played.

A game ends at its ``horizon`` (``terminated``, ``info["regret"]``). A ``TimeLimit``
(``gym.make(id, max_episode_steps=k)``) sits outside the env: the truncating step's
``info`` is empty unless the caller wraps ``TruncationSummary`` outside it; either way
``agents.play`` returns the regret of the k rounds played.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import agents
from dp_online_envs import ENV_IDS, RegretSummary
from dp_online_envs.wrappers import TruncationSummary
from dp_online_envs.wrappers.regret import regret_summary


def _truncated_game(limit: int, horizon: int = 50, seed: int = 0, summary: bool = True):
    env = gym.make("DPBandit-MAB-v0", horizon=horizon, n_arms=4, record_losses=True,
                   max_episode_steps=limit)
    if summary:
        env = TruncationSummary(env)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    losses, infos, flags = [], [], []
    for _ in range(limit):
        _, reward, terminated, truncated, info = env.step(int(rng.integers(4)))
        losses.append(-reward)
        infos.append(info)
        flags.append((terminated, truncated))
    return env, losses, infos, flags


@pytest.mark.parametrize("limit", [1, 7, 49])
def test_truncated_game_reports_the_exact_regret_of_the_rounds_played(limit):
    env, losses, infos, flags = _truncated_game(limit)
    assert flags[-1] == (False, True)
    summary = infos[-1]["regret"]
    assert isinstance(summary, RegretSummary)
    thetas = env.unwrapped.played_losses().thetas  # (limit, n_arms); f(theta, arm) = theta[arm]
    assert thetas.shape == (limit, 4)
    best = thetas.sum(axis=0).min()
    assert summary.rounds == limit and summary.exact
    assert summary.learner_loss == pytest.approx(sum(losses), abs=1e-12)
    assert summary.regret == pytest.approx(sum(losses) - best, abs=1e-12)
    assert summary.checkpoints[-1] == limit
    assert summary.regret_curve_lo[-1] == pytest.approx(summary.regret, abs=1e-12)


def test_info_stays_empty_until_the_truncating_step():
    _, _, infos, flags = _truncated_game(12)
    assert all(info == {} for info in infos[:-1])
    assert all(f == (False, False) for f in flags[:-1])


def test_a_time_limit_alone_truncates_with_empty_info_and_the_recorder_keeps_the_regret():
    """No spec adds ``TruncationSummary`` (``gym.make_vec``'s ``vector_entry_point`` mode
    refuses specs with additional wrappers): ``info`` stays empty at the truncation, and
    the experimenter's door gives the same summary the wrapper would have put there."""
    env, _, infos, flags = _truncated_game(9, summary=False)
    assert flags[-1] == (False, True) and all(info == {} for info in infos)
    wrapped = _truncated_game(9)[2][-1]["regret"]
    assert regret_summary(env).as_dict() == wrapped.as_dict()


def test_untruncated_games_are_unchanged():
    env = gym.make("DPBandit-MAB-v0", horizon=6)
    env.reset(seed=1)
    infos = [env.step(0)[4] for _ in range(6)]
    assert all(i == {} for i in infos[:-1]) and infos[-1]["regret"].rounds == 6


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_id_reports_regret_at_its_horizon_and_on_a_wrapped_truncation(env_id):
    assert gym.spec(env_id).additional_wrappers == ()
    env = gym.make(env_id, horizon=5)
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(5):
        *_, terminated, truncated, info = env.step(env.action_space.sample())
    assert (terminated, truncated) == (True, False) and info["regret"].rounds == 5
    cut = gym.make(env_id, horizon=20, max_episode_steps=5)
    for env in (cut, TruncationSummary(gym.make(env_id, horizon=20, max_episode_steps=5))):
        env.reset(seed=0)
        env.action_space.seed(0)
        for _ in range(5):
            *_, truncated, info = env.step(env.action_space.sample())
        assert truncated and regret_summary(env).rounds == 5
        assert info == {} if env is cut else info["regret"].rounds == 5


def test_play_returns_the_truncated_regret_with_or_without_the_wrapper():
    summaries = []
    for wrap in (False, True):
        env = gym.make("DPFullInfo-Experts-v0", horizon=40, n_arms=3, max_episode_steps=15)
        env = TruncationSummary(env) if wrap else env
        agent = agents.make("hedge", env.get_wrapper_attr("problem"), seed=0)
        summaries.append(agents.play(env, agent, seed=2))
    assert summaries[0].rounds == 15
    assert summaries[0].as_dict() == summaries[1].as_dict()
