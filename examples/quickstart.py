"""Play a simple agent on DPBandit-Matroid-v2 and print its regret.

    python examples/quickstart.py

The agent is the "play the center" baseline: it always plays the center of the
matroid polytope's inner ball (a point every learner could start from), so its regret
is what a learner that learns nothing pays.
"""

from __future__ import annotations

import gymnasium as gym

import dp_online_envs  # noqa: F401  (registers the env ids)


def main(horizon: int = 2000, seed: int = 0) -> None:
    env = gym.make("DPBandit-Matroid-v2", horizon=horizon)
    problem = env.get_wrapper_attr("problem")
    print(f"decision set: {problem.domain!r}, loss: {problem.loss!r}")
    print(f"T={problem.horizon}  L={problem.lipschitz:.3g}  B={problem.bound:.3g}  "
          f"D={problem.diameter:.3g}  feedback={problem.feedback}")

    obs, info = env.reset(seed=seed)
    x = problem.domain.center
    terminated = False
    while not terminated:
        obs, reward, terminated, truncated, info = env.step(x)  # obs = [f_t(x_t)]
    summary = info["regret"]
    print(f"cumulative loss {summary.learner_loss:.2f}, regret in "
          f"[{summary.regret_lo:.2f}, {summary.regret_hi:.2f}] after {summary.rounds} rounds")
    for t, r in zip(summary.checkpoints, summary.regret_curve_hi):
        print(f"  R({t:5d}) <= {r:9.3f}")


if __name__ == "__main__":
    main()
