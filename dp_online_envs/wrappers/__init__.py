"""Wrappers: the regret ledger and the feedback boundary."""

from dp_online_envs.wrappers.feedback import FeedbackGuard
from dp_online_envs.wrappers.regret import RegretRecorder, RegretSummary, log_checkpoints

__all__ = ["FeedbackGuard", "RegretRecorder", "RegretSummary", "log_checkpoints"]
