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


@pytest.fixture(autouse=True)
def _no_results_in_the_checkout(request):
    """Fail a test that leaves a ``results/`` directory (the sweeps' default output) in the
    working directory: a record left there is reused by the next run, whatever CPU or
    code played it, so every test writes its results under its own temporary path."""
    default = request.config.rootpath / "results"
    existed = default.exists()
    yield
    assert existed or not default.exists(), (
        f"{request.node.nodeid} left {default}; give its sweep results=tmp_path / ...")
