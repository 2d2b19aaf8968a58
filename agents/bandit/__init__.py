"""Bandit learners (private and non-private); importing registers them.

One module per algorithm family, named after its agent (a private learner may share the
module of its non-private version: ``private-exp2`` lives in :mod:`agents.bandit.exp2`).
"""

from agents.bandit import (  # noqa: F401  (importing registers the agents)
    adap_ucb,
    bandit_pftal,
    bandit_submod_pftal,
    exp2,
    exp3,
    fkm,
    garber_kretzu,
    hazan_kale_submodular_bandit,
    htinf,
    jdp_linucb,
    ldp_linucb,
    lin_epsilon_greedy,
    lin_ts,
    linucb,
    private_bandit,
    private_batched_htinf,
    private_projection_free,
    private_projection_free_tuned,
    scrible,
    thompson,
    ucb,
)
