"""dp-online-envs: Gymnasium environments for differentially private online learning.

Importing the package registers every environment id (see :data:`ENV_IDS`);
``gym.make("dp_online_envs:DPBandit-Matroid-v2")`` imports it on demand.
"""

from dp_online_envs.startup import quiet_interrupt_while_starting

quiet_interrupt_while_starting()  # first: the imports below take the command line a while

from importlib import metadata as _metadata  # noqa: E402

from dp_online_envs import _former_paths  # noqa: E402
from dp_online_envs.envs import ENV_CONFIGS, ENV_IDS, OnlineLearningEnv, build_env, register_all  # noqa: E402
from dp_online_envs.errors import InvalidActionError  # noqa: E402
from dp_online_envs.problem import Problem  # noqa: E402
from dp_online_envs.wrappers import FeedbackGuard, RegretRecorder, RegretSummary  # noqa: E402

try:  # one source: the installed distribution's metadata (pyproject.toml's version)
    __version__ = _metadata.version("dp-online-envs")
except _metadata.PackageNotFoundError:  # a source checkout that was never installed
    __version__ = "0+unknown"

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
