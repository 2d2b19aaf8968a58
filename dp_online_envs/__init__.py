"""dp-online-envs: Gymnasium environments for differentially private online learning.

Importing the package registers every environment id (see :data:`ENV_IDS`);
``gym.make("dp_online_envs:DPBandit-Matroid-v2")`` imports it on demand.
``__version__`` is the installed distribution's version, read on first use.
"""

from dp_online_envs.startup import (
    answer_version_early,
    installed_version,
    quiet_interrupt_while_starting,
)

answer_version_early()  # `dp-online --version` needs none of the imports below
quiet_interrupt_while_starting()  # the imports below take the command line a while

from dp_online_envs import _former_paths  # noqa: E402
from dp_online_envs.envs import ENV_CONFIGS, ENV_IDS, OnlineLearningEnv, build_env, register_all  # noqa: E402
from dp_online_envs.errors import InvalidActionError  # noqa: E402
from dp_online_envs.problem import Problem  # noqa: E402
from dp_online_envs.wrappers import FeedbackGuard, RegretRecorder, RegretSummary  # noqa: E402

register_all()
_former_paths.install()  # the lab's former import paths, for one release

__all__ = [
    "ENV_CONFIGS",
    "ENV_IDS",
    "FeedbackGuard",
    "InvalidActionError",
    "OnlineLearningEnv",
    "Problem",
    "RegretRecorder",
    "RegretSummary",
    "build_env",
]


def __getattr__(name: str) -> str:
    """``__version__``: the installed distribution's version (pyproject.toml's; ``0+unknown``
    in a checkout never installed), read on first use, then kept (PEP 562)."""
    if name == "__version__":
        version = globals()["__version__"] = installed_version()
        return version
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
