"""The learners: private algorithms of the four papers and non-private baselines.

``agents.make(name, problem, epsilon=..., delta=..., seed=..., **options)`` builds one
(``agents.agent_options(name)`` lists its options with their defaults);
``agents.list_agents()`` lists the names with a one-line description each;
``agents.registry`` is the registry the experiments resolve agent names with.

Importing the package imports no learner: each name's module is imported on its first
lookup (:data:`agents.catalog.HOMES`), and a submodule on its first use as an attribute
(``agents.bandit``, ``agents.vector``), so that every process that plays one learner
(an isolated or sandboxed one) pays for that learner's imports only.
"""

import importlib
import importlib.util
import os

# dp_accounting is imported where a calibration or an accountant needs it (its import,
# which pulls scipy.signal, scipy.stats and scipy.optimize, takes most of a second);
# without it the package refuses to load at once, not at the first private learner.
if importlib.util.find_spec("dp_accounting") is None:  # the core install lacks it
    raise ImportError(
        "the agents package calibrates and accounts privacy with Google's dp-accounting: "
        "pip install 'dp-online-envs[privacy]'"
    )

from agents.base import Agent, agent_class, agent_options, list_agents, make, register  # noqa: E402
from agents.loop import play, play_batch  # noqa: E402
from agents.resolver import per_seed_registry, registry  # noqa: E402
from dp_online_envs._former_paths import new_name  # noqa: E402

__all__ = ["Agent", "agent_class", "agent_options", "list_agents", "make", "per_seed_registry", "play",
           "play_batch", "register", "registry"]


def __getattr__(name: str) -> object:
    """A submodule not imported yet (``agents.bandit``, say), imported on first use; a
    former submodule name (``agents.vectorized``) is its new module, with the former path's
    ``DeprecationWarning`` (:mod:`dp_online_envs._former_paths`)."""
    here = os.path.dirname(__file__)
    if not name.startswith("_") and (os.path.isfile(os.path.join(here, f"{name}.py")) or
                                     os.path.isfile(os.path.join(here, name, "__init__.py")) or
                                     new_name(f"{__name__}.{name}") is not None):
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
