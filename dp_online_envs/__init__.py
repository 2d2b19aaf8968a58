"""dp-online-envs: Gymnasium environments for differentially private online learning.

Importing the package registers every environment id (see :data:`ENV_IDS`);
``gym.make("dp_online_envs:DPBandit-Matroid-v1")`` imports it on demand.
"""

from dp_online_envs.envs import ENV_CONFIGS, ENV_IDS, OnlineLearningEnv, build_env, register_all
from dp_online_envs.errors import InvalidActionError
from dp_online_envs.problem import Problem
from dp_online_envs.wrappers import FeedbackGuard, RegretRecorder, RegretSummary

__version__ = "0.1.0"

register_all()

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
