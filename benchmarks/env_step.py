"""Per-round cost of DPBandit-MAB-v0 (K=10, all wrappers) relative to CartPole-v1.

Both envs are made with ``gym.make`` (so both carry Gymnasium's own wrappers) and
stepped with a fixed action in the same process; the report is the ratio of the
median per-step times over several repeats (a ratio, not a wall-clock assert).

    python benchmarks/env_step.py
"""

from __future__ import annotations

import statistics
import time

import gymnasium as gym

import dp_online_envs  # noqa: F401  (registers the ids)


def per_step_seconds(env_id: str, action, steps: int, **kwargs) -> float:
    env = gym.make(env_id, **kwargs)
    env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    return (time.perf_counter() - start) / steps


def main(steps: int = 50_000, repeats: int = 5) -> float:
    ours, cart = [], []
    for _ in range(repeats):
        cart.append(per_step_seconds("CartPole-v1", 0, steps))
        ours.append(per_step_seconds("DPBandit-MAB-v0", 3, steps, horizon=steps))
    ours_s, cart_s = statistics.median(ours), statistics.median(cart)
    ratio = ours_s / cart_s
    print(f"CartPole-v1 step:       {cart_s * 1e6:7.2f} us")
    print(f"DPBandit-MAB-v0 step:   {ours_s * 1e6:7.2f} us  (K=10, RegretRecorder + FeedbackGuard)")
    print(f"ratio MAB / CartPole:   {ratio:7.2f}x  (target <= 3x)")
    return ratio


if __name__ == "__main__":
    main()
