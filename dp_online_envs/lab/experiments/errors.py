"""The error every user mistake in an experiment is reported with."""

from __future__ import annotations


class ExperimentError(ValueError):
    """A bad experiment description: unknown env or agent, bad value, malformed file.

    The message names the bad value and, where there is a finite set of valid ones,
    lists them. The ``dp-online`` CLI prints it without a traceback.
    """
