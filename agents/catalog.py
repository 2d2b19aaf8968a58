"""Where each built-in agent is registered: its name and the module that defines it.

``import agents`` imports none of the learners' modules (each pulls its own solvers and
samplers); :func:`agents.base.agent_class` imports a name's module on its first lookup,
and :func:`agents.base.list_agents` imports them all. This table is data only (no
imports), as Gymnasium's registry names an env's entry point before importing it;
``tests/agents/test_agent_catalog.py`` checks it against what the modules register.
"""

from __future__ import annotations

__all__ = ["HOMES"]

#: Every built-in agent's name -> the module whose import registers it.
HOMES: dict[str, str] = {
    "adap-klucb": "agents.bandit.adap_ucb",
    "adap-ucb": "agents.bandit.adap_ucb",
    "bandit-pftal": "agents.bandit.bandit_pftal",
    "bandit-submod-pftal": "agents.bandit.bandit_submod_pftal",
    "exp2": "agents.bandit.exp2",
    "private-exp2": "agents.bandit.exp2",
    "exp3": "agents.bandit.exp3",
    "fkm": "agents.bandit.fkm",
    "garber-kretzu": "agents.bandit.garber_kretzu",
    "hazan-kale-submodular-bandit": "agents.bandit.hazan_kale_submodular_bandit",
    "htinf": "agents.bandit.htinf",
    "jdp-linucb": "agents.bandit.jdp_linucb",
    "ldp-linucb": "agents.bandit.ldp_linucb",
    "lin-epsilon-greedy": "agents.bandit.lin_epsilon_greedy",
    "lin-ts": "agents.bandit.lin_ts",
    "linucb": "agents.bandit.linucb",
    "private-bandit": "agents.bandit.private_bandit",
    "private-batched-htinf": "agents.bandit.private_batched_htinf",
    "private-projection-free": "agents.bandit.private_projection_free",
    "garber-kretzu-tuned": "agents.bandit.private_projection_free_tuned",
    "private-projection-free-tuned": "agents.bandit.private_projection_free_tuned",
    "private-scrible": "agents.bandit.scrible",
    "scrible": "agents.bandit.scrible",
    "thompson": "agents.bandit.thompson",
    "kl-ucb": "agents.bandit.ucb",
    "ucb1": "agents.bandit.ucb",
    "ftrl": "agents.full_info.ftrl",
    "private-ftrl": "agents.full_info.ftrl",
    "private-ftrl-grad": "agents.full_info.ftrl",
    "hazan-kale-submodular": "agents.full_info.hazan_kale_submodular",
    "hedge": "agents.full_info.hedge",
    "online-fw": "agents.full_info.online_fw",
    "ons": "agents.full_info.ons",
    "ftal": "agents.full_info.pftal",
    "pftal": "agents.full_info.pftal",
    "private-ftpl": "agents.full_info.private_ftpl",
    "private-ftpl-grad": "agents.full_info.private_ftpl",
    "private-lazy-mw": "agents.full_info.private_lazy_mw",
    "submod-pftal": "agents.full_info.submod_pftal",
    "center": "agents.reference",
    "uniform": "agents.reference",
}
