"""Write your own learner and compare it with the private ones (a course exercise).

    python examples/custom_agent.py

A learner subclasses :class:`agents.Agent`: it declares the feedback it needs
(``"bandit"``: only the loss of its own action), sets itself up from the public
:class:`~dp_online_envs.Problem` in ``setup``, and implements ``act`` (the next action)
and ``update`` (learn from the feedback). All its randomness comes from ``self.rng``,
which ``reset(seed)`` re-seeds, so the runner can replay any game exactly.

The runner (:func:`dp_online_envs.lab.experiments.run`) takes the class itself, plays
complete seeded games in worker processes and returns one record per game (regret,
regret curve, ...). Here the course's epsilon-greedy learner is compared with
``private-exp2`` (Agarwal & Singh 2017, epsilon-DP) and non-private EXP3 on the
10-armed stochastic bandit ``DPBandit-MAB-v0``.

To use the learner in a sweep file, make it importable and name it
``"my_module:EpsilonGreedy"`` in ``agents:`` (or decorate it with
``@agents.register`` and import it before the sweep runs).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import agents
import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs.lab.experiments import run
from dp_online_envs.lab.experiments.analysis import mean_ci

ENV_ID = "DPBandit-MAB-v0"


class EpsilonGreedy(agents.Agent):
    """Epsilon-greedy with a decaying exploration rate (Auer, Cesa-Bianchi & Fischer 2002).

    Round t explores (a uniform arm) with probability ``min(1, c K / t)`` and otherwise
    plays the arm with the lowest empirical mean loss; every arm is tried once first.
    Not private: the empirical means depend on every loss seen.

    Options:
        c: Exploration constant (default 5).
    """

    name = "course-epsilon-greedy"
    description = "epsilon-greedy, epsilon_t = min(1, c K / t), non-private"
    paper = "Auer, Cesa-Bianchi & Fischer, Finite-time analysis of the MAB problem, 2002"
    feedback = "bandit"
    private = False

    def setup(self, c: float = 5.0) -> None:
        space = self.problem.domain.action_space
        if not isinstance(space, gym.spaces.Discrete):
            raise ValueError(f"{self.name} plays arms (a Discrete action space), got {space}")
        if not c > 0:
            raise ValueError(f"c={c!r}, expected a number > 0")
        self.k = int(space.n)
        self.c = float(c)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)  # seeds self.rng, sets self.t = 0
        self.counts = np.zeros(self.k)
        self.sums = np.zeros(self.k)

    def act(self) -> int:
        untried = np.flatnonzero(self.counts == 0)
        if untried.size:
            return int(untried[0])
        if self.rng.random() < min(1.0, self.c * self.k / (self.t + 1)):
            return int(self.rng.integers(self.k))
        return int(np.argmin(self.sums / self.counts))

    def update(self, action, feedback) -> None:
        loss = float(self.clip_feedback(feedback)[0])  # [f_t(x_t)], clipped to [-B, B]
        self.counts[int(action)] += 1
        self.sums[int(action)] += loss
        self.t += 1


def evaluate(horizon: int = 2000, seeds: int = 10, epsilon: float = 1.0) -> dict[str, tuple]:
    """Mean final regret (with its 95% CI) of each learner over ``seeds`` games."""
    contenders = [(EpsilonGreedy, None), ("private-exp2", epsilon), ("exp3", None)]
    out = {}
    for agent, eps in contenders:
        name = agent if isinstance(agent, str) else agent.name
        records = run(ENV_ID, agent, epsilon=eps, horizon=horizon, seeds=seeds)
        label = name + (f" (eps={eps:g})" if eps is not None else "")
        out[label] = (mean_ci(r["regret"] for r in records), records[0]["privacy"])
    print(f"{ENV_ID}, T={horizon}: final regret, mean [95% CI] over {seeds} seeded games")
    for label, ((m, lo, hi), privacy) in out.items():
        print(f"  {label:<28} {m:8.1f}  [{lo:7.1f}, {hi:7.1f}]   {privacy}")
    return out


if __name__ == "__main__":  # needed: the runner's worker processes import this file
    evaluate()
