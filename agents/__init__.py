"""The learners: private algorithms of the four papers and non-private baselines.

``agents.make(name, problem, epsilon=..., delta=..., seed=..., **options)`` builds one
(``agents.agent_options(name)`` lists its options with their defaults);
``agents.list_agents()`` lists the names with a one-line description each;
``agents.registry`` is the registry the experiments resolve agent names with.
"""

import importlib.util

# dp_accounting is imported where a calibration or an accountant needs it (its import,
# which pulls scipy.signal, scipy.stats and scipy.optimize, takes most of a second);
# without it the package refuses to load at once, not at the first private learner.
if importlib.util.find_spec("dp_accounting") is None:  # the core install lacks it
    raise ImportError(
        "the agents package calibrates and accounts privacy with Google's dp-accounting: "
        "pip install 'dp-online-envs[privacy]'"
    )

from agents import bandit, full_info, reference  # noqa: F401,E402  (registers the agents)
from agents.base import Agent, agent_class, agent_options, list_agents, make, register
from agents.loop import play, play_batch
from agents.resolver import per_seed_registry, registry

__all__ = ["Agent", "agent_class", "agent_options", "list_agents", "make", "per_seed_registry", "play",
           "play_batch", "register", "registry"]
