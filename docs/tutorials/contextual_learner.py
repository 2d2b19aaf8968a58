# %% [markdown]
# # Your own contextual learner
#
# On the contextual ids the learner sees a feature vector (the *context*) every round,
# picks one of K arms and pays, and sees, that arm's loss only. This page plugs a
# learner of your own into `DPBandit-ContextualLinear-v0`, plays it against the
# suite's `linucb` on the same seeded games, and audits a claim of joint differential
# privacy. The game and the learners are derived in
# [the contextual bandits page](../algorithms/contextual-bandits.md); the price of
# privacy of the suite's private contextual learners is a study of
# [the results](../results.md).
#
# **What a learner sees.** Round t's observation is `[loss of the arm played, the
# context it was played in, the next round's context]`: `1 + 2d` numbers (zeros in place
# of the context after the last round). The game loop hands a learner the observation
# of each step, so round 1 is played before any context is seen.

# %%
import gymnasium as gym
import numpy as np

import agents
import dp_online_envs  # noqa: F401  (registers the ids)
from dp_online_envs.lab.audit.one_run import AuditGame, OneRunSettings, audit_one_run
from dp_online_envs.lab.experiments import run
from dp_online_envs.lab.experiments.analysis import paired_gap

env = gym.make("DPBandit-ContextualLinear-v0", horizon=2000)
problem = env.get_wrapper_attr("problem")  # what a learner may know before it starts
K, d = problem.domain.dim, problem.loss.context_dim
print(f"K = {K} arms, contexts in R^{d}, {problem.horizon} rounds, feedback: "
      f"{problem.feedback}")
print("an observation holds", env.observation_space.shape[0], "numbers")

# %% [markdown]
# ## A minimal learner
#
# A learner is an `agents.Agent` subclass: its options are the keyword parameters of
# `setup` (each with a default), `reset` starts a game (all randomness from
# `self.rng`, seeded there), `act` returns the arm, `update` reads the observation.
# This one keeps a ridge regression of the loss on the context per arm and plays the
# arm of least predicted loss, a uniformly random arm with probability `explore`.
# (`agents.bandit.contextual.LinearContextualAgent` keeps the same statistics with
# Sherman-Morrison updates and clips the feedback to the declared bounds: subclass it
# and write `choose(context)` only.)

# %%
class GreedyRidge(agents.Agent):
    """Per-arm ridge regression of the loss on the context, played greedily; a
    uniformly random arm with probability ``explore`` (and on round 1)."""

    name = "greedy-ridge"
    feedback = "bandit"  # it needs only the loss of the arm it played

    def setup(self, explore: float = 0.05, ridge: float = 1.0) -> None:
        self.k, self.d = self.problem.domain.dim, self.problem.loss.context_dim
        self.explore, self.ridge = explore, ridge

    def reset(self, seed=None) -> None:
        super().reset(seed)
        self.gram = np.stack([self.ridge * np.eye(self.d)] * self.k)  # A_a
        self.target = np.zeros((self.k, self.d))  # b_a
        self.context = None  # round 1 is played before any context is seen

    def act(self) -> int:
        if self.context is None or self.rng.random() < self.explore:
            return int(self.rng.integers(self.k))
        theta = np.linalg.solve(self.gram, self.target[..., None])[..., 0]
        return int(np.argmin(theta @ self.context))

    def update(self, action, feedback) -> None:
        loss, played = feedback[0], feedback[1:1 + self.d]
        self.gram[action] += np.outer(played, played)
        self.target[action] += loss * played
        self.context = feedback[1 + self.d:]  # the context of the coming round
        self.t += 1


summary = agents.play(env, GreedyRidge(problem, seed=0), seed=1)
print(f"greedy-ridge: regret {summary.regret:.1f} after {summary.rounds} rounds "
      f"(pseudo-regret {summary.pseudo_regret:.1f})")

# %% [markdown]
# ## Against `linucb`, on the same seeded games
#
# The lab's `run` takes the class itself (it need not be registered) and plays seeded
# games; a game's seed derives from its settings and its seed index only, so seed index
# `i` is the same game for both learners, and the comparison is paired: the Student-t
# interval of the mean of the per-seed differences.

# %%
SEEDS, T = 8, 2000
common = dict(horizon=T, seeds=SEEDS, backend="serial")
mine = {r["seed_index"]: r["regret"]
        for r in run("DPBandit-ContextualLinear-v0", GreedyRidge, **common)}
theirs = {r["seed_index"]: r["regret"]
          for r in run("DPBandit-ContextualLinear-v0", "linucb", **common)}
for seed in range(SEEDS):
    print(f"seed {seed}: greedy-ridge {mine[seed]:6.1f}   linucb {theirs[seed]:6.1f}")
gap, lo, hi = paired_gap(mine, theirs)
print(f"greedy-ridge minus linucb: {gap:+.1f} [{lo:+.1f}, {hi:+.1f}] (95% paired t "
      f"interval over {SEEDS} games)")

# %% [markdown]
# An interval that holds 0 shows neither learner better on these games; it does not
# show them equal. The same comparison in a sweep file takes the class as
# `"module:Class"` in `agents` (the module importable: e.g. `my_learners:GreedyRidge`);
# to make `agents.make("greedy-ridge", ...)` and a plain name in a sweep work,
# decorate the class with `@agents.register` in that module (the registry is the
# process's: register a name once). A study's sweep plays discovery seeds and a
# replication set from seed index 5000 (`seeds: {first: 5000, count: 8}`), as
# `benchmarks/studies/contextual/sweep.yaml` does.
#
# ## Auditing a claim of joint differential privacy
#
# The suite's private contextual learners promise **joint** DP (`jdp-linucb`; and local
# DP of each round's report, `ldp-linucb`, which implies it): changing one round's data
# (its context and its loss vector) moves the distribution of the actions of all OTHER
# rounds by at most `(epsilon, delta)`; the changed round's own action is not protected
# (protecting it forces linear regret). The one-run audit tests such a claim on any
# learner, yours included: it pairs one round in six (the canaries) with a partner loss
# vector drawn from the env's own law given that round's context, plays full games, and
# guesses each canary's coin from the arms of the other rounds, never from the canary's
# own arm. A lower bound `eps_lb` above the claimed epsilon refutes the claim.

# %%
games = [AuditGame("DPBandit-ContextualLinear-v0", {}, 1000)]
settings = OneRunSettings(games=12, seed=0)
claim = (0.01, 1e-5)
finding = audit_one_run(lambda problem, space, seed: GreedyRidge(problem, seed=seed),
                        games, claim, settings)
print("greedy-ridge:", finding)
twin = audit_one_run(lambda problem, space, seed: agents.make(
    "jdp-linucb", problem, epsilon=0.01, delta=1e-5, seed=seed, add_noise=False),
    games, claim, settings)
print("jdp-linucb without its noise:", twin)

# %% [markdown]
# Read the two findings side by side. The noise-free twin of `jdp-linucb` (its noise
# switched off, everything else as calibrated) is refuted: at this setting the audit
# sees a learner whose other-round actions follow one round's loss. Your non-private
# learner is **not** refuted, and that is no evidence that it is private: its guesses
# are right about as often as a coin's, and the reference line says how much leakage
# the audit could have seen on those rounds (randomized response at the `eps'` it
# names). An audit refutes; it never certifies. What it covers, and what it does not:
#
# * only changes of a round's **loss** vector, the context kept (a sub-case of joint
#   DP's neighbouring relation: a refutation is valid, a pass says nothing about changes
#   of the context);
# * `DPBandit-ContextualLinear-v0` under its two adversaries (Bernoulli losses given the
#   context); `DPBandit-ContextualClasses-v0` (one-hot labels) is refused;
# * the actions of the other rounds only: on these ids the values a learner passes
#   through `Agent.release` are not audited, nor is one report of a locally private
#   learner in isolation (local DP).
#
# The derivation and the measured power are in
# [the one-run audit](../algorithms/one-run-audit.md) ("Contextual games: joint DP").
