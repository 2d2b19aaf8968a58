# %% [markdown]
# # Your first private learner
#
# `DPBandit-MAB-v0` is a 10-armed bandit: each round the learner pulls an arm, pays
# that arm's loss in `[0, 1]` and sees only that number. Here `private-exp2`
# (Agarwal and Singh 2017, Theorem 4.1), which is epsilon-differentially private with
# respect to the loss sequence, plays it next to the non-private `exp3` and a learner
# that pulls a uniformly random arm.

# %%
import gymnasium as gym
import matplotlib.pyplot as plt

import agents
import dp_online_envs  # noqa: F401  (registers the ids)

T = 2000
env = gym.make("DPBandit-MAB-v0", horizon=T)
problem = env.get_wrapper_attr("problem")  # what a learner may know before it starts
print(problem.feedback, problem.horizon, problem.loss_range())

# %% [markdown]
# `agents.make` builds a learner for the problem; `agents.play` plays one game and
# returns the `RegretSummary`: the regret against the best fixed arm in hindsight,
# at log-spaced checkpoints and at T.

# %%
learners = {
    "private-exp2 (epsilon = 1)": agents.make("private-exp2", problem, epsilon=1.0, seed=0),
    "exp3 (non-private)": agents.make("exp3", problem, seed=0),
    "uniform (no learning)": agents.make("uniform", problem, seed=0),
}
summaries = {label: agents.play(env, agent, seed=1) for label, agent in learners.items()}
for label, s in summaries.items():
    print(f"{label:28s} regret {s.regret:8.1f} after {s.rounds} rounds")
print(learners["private-exp2 (epsilon = 1)"].privacy)

# %% [markdown]
# All three faced the same losses (the env's seed is the game's seed). The regret
# curves:

# %%
fig, ax = plt.subplots(figsize=(6, 3.5))
for label, s in summaries.items():
    ax.plot(s.checkpoints, s.regret_curve_hi, marker=".", label=label)
ax.set_xscale("log")
ax.set_xlabel("round t")
ax.set_ylabel("regret R(t)")
ax.legend()
fig.tight_layout()

# %% [markdown]
# The private learner pays for its noise, and still learns: its regret grows more
# slowly than the uniform arm's linear regret. How much privacy costs, across
# epsilons and seeds, is the next tutorial.
