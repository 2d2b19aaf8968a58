"""Wrappers: the regret ledger, the feedback boundary, action adapters for RL agents, and
adapters for other libraries' evaluation loops."""

from dp_online_envs.wrappers.action_adapters import LogitsToArm, LogitsToSimplex, adapt
from dp_online_envs.wrappers.feedback import FeedbackGuard
from dp_online_envs.wrappers.peers import CopyableGame, LossTally
from dp_online_envs.wrappers.regret import (
    REGRET_INFO_KEY,
    RegretRecorder,
    RegretSummary,
    TruncationSummary,
    find_recorder,
    log_checkpoints,
    regret_summary,
)

__all__ = [
    "REGRET_INFO_KEY",
    "CopyableGame",
    "FeedbackGuard",
    "LogitsToArm",
    "LogitsToSimplex",
    "LossTally",
    "RegretRecorder",
    "RegretSummary",
    "TruncationSummary",
    "adapt",
    "find_recorder",
    "log_checkpoints",
    "regret_summary",
]
