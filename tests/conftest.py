"""Suite-wide fixtures."""

import signal

import pytest


@pytest.fixture(autouse=True)
def _sigint_handler_restored():
    """Give SIGINT back its handler after each test: a command run in-process that is
    interrupted leaves SIGINT ignored (its process is exiting), and the processes a later
    test starts would inherit that."""
    before = signal.getsignal(signal.SIGINT)
    yield
    if signal.getsignal(signal.SIGINT) is not before and before is not None:
        signal.signal(signal.SIGINT, before)
