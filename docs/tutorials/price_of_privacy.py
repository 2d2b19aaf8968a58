# %% [markdown]
# # The price of privacy
#
# How much regret does epsilon-differential privacy cost? The lab's `run` plays
# seeded games of one setting and returns one record per game; here `private-exp2`
# on `DPBandit-MAB-v0` at four epsilons against the non-private `exp3`, 16 seeds
# each, all seeds of a setting played at once (`vectorize=True`; each seed's game is
# the scalar game bit for bit).

# %%
import matplotlib.pyplot as plt

from dp_online_envs.lab.experiments import run
from dp_online_envs.lab.experiments.analysis import mean_ci

T, SEEDS = 2000, 16
EPSILONS = [0.25, 0.5, 1.0, 4.0]
common = dict(horizon=T, seeds=SEEDS, backend="serial", vectorize=True)
private = {eps: run("DPBandit-MAB-v0", "private-exp2", epsilon=eps, **common)
           for eps in EPSILONS}
baseline = run("DPBandit-MAB-v0", "exp3", **common)


def mean_interval(records):
    """Mean regret and the half-width of its 95% Student-t interval over the seeds."""
    mean, lo, hi = mean_ci(rec["regret"] for rec in records)
    return mean, (hi - lo) / 2


base_mean, base_half = mean_interval(baseline)
print(f"exp3 (non-private): regret {base_mean:.1f} ± {base_half:.1f}")
for eps, records in private.items():
    m, h = mean_interval(records)
    print(f"private-exp2, epsilon = {eps:4}: regret {m:.1f} ± {h:.1f} "
          f"({m / base_mean:.2f}x exp3)")

# %% [markdown]
# The same games, as a plot with 95% intervals over the seeds:

# %%
means, halves = zip(*(mean_interval(private[e]) for e in EPSILONS))
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.errorbar(EPSILONS, means, yerr=halves, marker="o", capsize=3, label="private-exp2")
ax.axhspan(base_mean - base_half, base_mean + base_half, alpha=0.3, color="gray",
           label="exp3 (non-private)")
ax.set_xscale("log")
ax.set_xticks(EPSILONS, [f"{e:g}" for e in EPSILONS])  # a plain label at each epsilon
ax.minorticks_off()
ax.set_xlabel("epsilon")
ax.set_ylabel(f"regret at T = {T}")
ax.legend()
fig.tight_layout()

# %% [markdown]
# The whole study (four learners, six epsilons, three horizons) is one command,
# resumable, with an HTML report: `dp-online sweep examples/sweeps/price_of_privacy.yaml`
# (see [experiments and sweeps](../guides/sweeps.md)).
