"""Train a stable-baselines3 PPO policy on DPBandit-MAB-v0 and compare its regret.

    python examples/sb3_ppo.py            # about a minute and a half on one core
    python examples/sb3_ppo.py --timesteps 100000

It needs stable-baselines3 and PyTorch, which the ``[experiments]`` extra does not
install. Install the CPU build of PyTorch first (the default wheel carries CUDA, a
download of gigabytes), then the ``sb3`` extra::

    pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
    pip install -e ".[experiments,sb3]"

PPO's Gaussian policy emits a vector; :func:`dp_online_envs.wrappers.action_adapters.adapt`
turns it into an arm (``LogitsToArm``: the arm with the largest logit).

Why the ``OwnHistory`` wrapper: the bandit env's observation is one number, the loss
just paid (``[f_{t-1}(x_{t-1})]``), without the arm that paid it, and PPO's
``MlpPolicy`` is memoryless (its action depends on the current observation alone). On
the env as it is, the policy maps that last loss to an arm: it cannot remember which
arm has done well in this episode, and since each episode draws new arm means, no
fixed choice is right -- it cannot learn to play the best arm, only a fixed guess. A
bandit algorithm keeps its own statistics; the small wrapper below gives the policy
the same -- the empirical mean loss and the share of plays of each arm (and t / T),
computed from its own actions and the permitted feedback only, so it still sees
nothing a bandit algorithm could not.

Every episode is a fresh instance (the stochastic adversary draws new arm means at each
reset), so PPO has to learn an exploration strategy, not an arm. Afterwards its regret
is measured with ``stable_baselines3.common.evaluation.evaluate_policy`` (the regret
summary is read from the final ``info``) and compared with the learners of the
``agents`` package, run by :func:`dp_online_envs.lab.experiments.run`. PPO is not private.

Expect PPO to lose: after 100 training episodes its regret is near that of playing
arms at random, above EXP3's and in the range of
private EXP2 at epsilon = 1 -- the no-regret learners need no training at all. Longer
training (``--timesteps``) is the experiment to run.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs.lab.experiments import run
from dp_online_envs.lab.experiments.analysis import mean_ci
from dp_online_envs.wrappers.action_adapters import adapt

ENV_ID = "DPBandit-MAB-v0"
#: How to install what this example needs beyond the ``[experiments]`` extra.
INSTALL = ("pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu",
           'pip install -e ".[experiments,sb3]"')


class OwnHistory(gym.Wrapper):
    """Observation = (empirical mean loss of each arm, share of plays of each arm, t / T).

    Built only from the learner's own arms and the feedback ``[f_t(x_t)]`` it is shown,
    so the learner still sees nothing a bandit algorithm could not.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.k = int(env.action_space.n)
        self.horizon = int(env.get_wrapper_attr("problem").horizon)
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape=(2 * self.k + 1,),
                                                dtype=np.float32)

    def _obs(self) -> np.ndarray:
        means = np.where(self.counts > 0, self.sums / np.maximum(self.counts, 1), 0.5)
        share = self.counts / max(self.t, 1)
        return np.concatenate([means, share, [self.t / self.horizon]]).astype(np.float32)

    def reset(self, **kwargs):
        _, info = self.env.reset(**kwargs)
        self.counts = np.zeros(self.k)
        self.sums = np.zeros(self.k)
        self.t = 0
        return self._obs(), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        arm = int(action)
        self.counts[arm] += 1
        self.sums[arm] += float(np.clip(obs[0], 0.0, 1.0))
        self.t += 1
        return self._obs(), reward, terminated, truncated, info


def make_env(horizon: int) -> gym.Env:
    """DPBandit-MAB-v0 with the history observation and the logits adapter."""
    return adapt(OwnHistory(gym.make(ENV_ID, horizon=horizon)))


def ppo_regrets(model, horizon: int, episodes: int, seed: int) -> list[float]:
    """Regret of ``episodes`` games of the trained policy (deterministic actions)."""
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([lambda: Monitor(make_env(horizon))])
    venv.seed(seed)
    regrets: list[float] = []

    def grab(locals_: dict, _globals: dict) -> None:
        if locals_["done"] and "regret" in locals_["info"]:
            regrets.append(float(locals_["info"]["regret"].regret))

    evaluate_policy(model, venv, n_eval_episodes=episodes, deterministic=True, callback=grab,
                    warn=False)
    return regrets


def main(timesteps: int = 100_000, horizon: int = 1000, episodes: int = 8,
         epsilon: float = 1.0, seed: int = 0) -> dict[str, tuple[float, float, float]]:
    try:
        import torch
        from stable_baselines3 import PPO
    except ImportError as exc:
        raise SystemExit(f"this example needs stable-baselines3 and PyTorch ({exc}); install "
                         f"them with:\n  {INSTALL[0]}\n  {INSTALL[1]}") from None

    torch.set_num_threads(1)  # a tiny MLP: more threads only add synchronization
    start = time.perf_counter()
    model = PPO("MlpPolicy", make_env(horizon), n_steps=1000, batch_size=250, n_epochs=5,
                learning_rate=1e-3, ent_coef=0.001, gamma=0.99, seed=seed, verbose=0,
                device="cpu")
    model.learn(total_timesteps=timesteps)
    print(f"trained PPO for {timesteps} steps ({timesteps // horizon} episodes of T={horizon}) "
          f"in {time.perf_counter() - start:.0f} s")

    results = {"ppo (non-private)": mean_ci(ppo_regrets(model, horizon, episodes, seed + 1))}
    learners = [("exp3", None), ("private-exp2", epsilon)]
    for name, eps in learners:
        try:
            records = run(ENV_ID, name, epsilon=eps, horizon=horizon, seeds=episodes)
        except ValueError as exc:  # an agent not registered in this checkout
            print(f"skipping {name}: {exc}")
            continue
        label = name + (f" (eps={eps:g})" if eps is not None else " (non-private)")
        results[label] = mean_ci(r["regret"] for r in records)
    print(f"\nregret after T={horizon} rounds, mean [95% CI] over {episodes} games:")
    for label, (m, lo, hi) in results.items():
        print(f"  {label:<24} {m:8.1f}  [{lo:.1f}, {hi:.1f}]")
    print(f"total {time.perf_counter() - start:.0f} s")
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timesteps", type=int, default=100_000)
    parser.add_argument("--horizon", type=int, default=1000)
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args()
    main(args.timesteps, args.horizon, args.episodes, args.epsilon)
