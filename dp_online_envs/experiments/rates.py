"""The regret rates the agents' papers prove: the slope of the plots' reference lines.

``rate(agent, env_id)`` is the exponent ``a`` of ``R(T) = O~(T^a)`` (log factors and the
dependence on epsilon and the dimension dropped). An agent class may declare its own
with a class attribute ``regret_rate``; otherwise the table below is used, and 0.5 when
the agent is not in it.
"""

from __future__ import annotations

from dp_online_envs.experiments.resolver import AgentResolver, resolve_agent

#: Default exponent for an agent the table does not know.
DEFAULT_RATE = 0.5

#: Exponent by agent name (the paper's headline rate for the agent's main setting).
RATES: dict[str, float] = {
    # full information, linear losses (Agarwal-Singh 2017, Tables 1-2; Freund-Schapire)
    "hedge": 0.5,
    "ftrl": 0.5,
    "private-ftrl": 0.5,
    "private-ftpl": 0.5,
    "online-fw": 0.75,  # Hazan-Kale 2012, projection-free
    # full information, convex losses (Smith-Thakurta 2013): sqrt(T)/eps
    "ftal": 0.5,
    "pftal": 0.5,
    # submodular (Hazan-Kale 2012; Cardoso-Cummings 2019)
    "hazan-kale-submodular": 0.5,
    "submod-pftal": 0.5,
    "bandit-submod-pftal": 0.75,
    "hazan-kale-submodular-bandit": 2.0 / 3.0,
    # bandits: Agarwal-Singh 2017 (private EXP2 / SCRiBLe reduction): sqrt(T)/eps
    "exp3": 0.5,
    "exp2": 0.5,
    "private-exp2": 0.5,
    "private-bandit": 0.5,
    "scrible": 0.5,
    "private-scrible": 0.5,
    # bandit convex optimization: T^{3/4} (FKM 2005; Smith-Thakurta 2013;
    # Garber-Kretzu 2020; Ene-Nguyen-Vladu 2021)
    "fkm": 0.75,
    "bandit-pftal": 0.75,
    "garber-kretzu": 0.75,
    "private-projection-free": 0.75,
}

#: Exponents that depend on the env as well: strongly convex losses are easier.
ENV_RATES: dict[tuple[str, str], float] = {
    ("ftal", "DPFullInfo-StronglyConvex-v0"): 0.0,  # log T (Hazan-Agarwal-Kale 2007)
    ("pftal", "DPFullInfo-StronglyConvex-v0"): 0.0,  # polylog T / eps (Smith-Thakurta Thm. 3)
    ("bandit-pftal", "DPBandit-StronglyConvex-v0"): 2.0 / 3.0,  # oblivious, Thm. 6
}


def rate(agent: str, env_id: str | None = None,
         resolver: AgentResolver | None = None) -> float:
    """The exponent of the agent's proven regret rate (default :data:`DEFAULT_RATE`).

    Args:
        agent: The agent's name (as recorded).
        env_id: The env, for the exponents of :data:`ENV_RATES`.
        resolver: Where the agent's class, and its ``regret_rate`` if it declares one,
            is looked up (``None``: the ``agents`` registry, see :mod:`.resolver`).
    """
    try:
        declared = getattr(resolve_agent(agent, resolver), "regret_rate", None)
    except Exception:  # noqa: BLE001 - an agent that is no longer importable
        declared = None
    if isinstance(declared, (int, float)) and not isinstance(declared, bool):
        return float(declared)
    if env_id is not None and (agent, env_id) in ENV_RATES:
        return ENV_RATES[(agent, env_id)]
    return RATES.get(agent, DEFAULT_RATE)
