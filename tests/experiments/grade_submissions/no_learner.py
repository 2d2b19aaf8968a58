"""A test submission without a learner class (imports one, defines none)."""

from agents.bandit.exp3 import EXP3  # noqa: F401  (defined elsewhere: not the submission's)

ANSWER = 42
