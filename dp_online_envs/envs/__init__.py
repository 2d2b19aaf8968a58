"""The online learning environment and the registered configurations."""

from dp_online_envs.envs.online_env import OnlineLearningEnv
from dp_online_envs.envs.registry import ENV_CONFIGS, ENV_IDS, LOSSES, build_env, register_all

__all__ = ["ENV_CONFIGS", "ENV_IDS", "LOSSES", "OnlineLearningEnv", "build_env", "register_all"]
