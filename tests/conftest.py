"""Suite-wide fixtures."""

import compileall
import pathlib
import signal

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def pytest_configure(config):
    """Before any worker starts (in the one process that starts them): the package's
    bytecode written beside its sources, once. The suite starts hundreds of processes
    (isolated and sandboxed learners, the command line), each importing the package;
    where ``PYTHONDONTWRITEBYTECODE`` is set (as on CI) none of them writes it, so on a
    fresh checkout each would compile every module it imports from source."""
    if not hasattr(config, "workerinput"):
        for package in ("dp_online_envs", "agents"):
            compileall.compile_dir(ROOT / package, quiet=1)


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


#: The test files that take longest (seconds of one worker, measured on the idle 2-core
#: machine on 2026-11-29 with the numba cache warm), longest first. They are collected
#: first, and ``--no-loadscope-reorder`` (pyproject's addopts) keeps that order, so that
#: xdist's ``--dist loadfile`` hands them out at the start and the many short files fill
#: both workers around them, instead of one long file running alone at the end (xdist's
#: own reorder puts the files with the most tests first, which ran these last).
SLOW_FILES = (
    "tests/experiments/test_grade_dodgers.py",       # 55 s
    "tests/experiments/test_isolation.py",           # 24 s
    "tests/test_cpu_portability.py",                 # 23 s (two child runs)
    "tests/agents/test_bandit_convex.py",            # 20 s
    "tests/experiments/test_interrupt.py",           # 20 s
    "tests/experiments/test_sandbox_limits.py",      # 17 s
    "tests/test_docs.py",                            # 15 s
    "tests/experiments/test_leaderboard.py",         # 15 s
    "tests/experiments/test_grade.py",               # 14 s
    "tests/experiments/test_grade_attacks.py",       # 14 s
    "tests/agents/test_privacy_audits.py",           # 14 s
    "tests/experiments/test_cli.py",                 # 14 s
    "tests/test_speed_harness.py",                   # 13 s
    "tests/envs/test_registered.py",                 # 13 s
    "tests/audit/test_action_audit.py",              # 12 s
    "tests/agents/test_bandit_submodular.py",        # 12 s
    "tests/experiments/test_grade_class.py",         # 10 s
    "tests/experiments/test_plots_report.py",        # 9 s
    "tests/test_study_sweeps.py",                    # 9 s
    "tests/experiments/test_store_special_files.py",  # 9 s
    "tests/agents/test_compiled.py",                 # 9 s
)


def pytest_collection_modifyitems(session, config, items):
    """Run :data:`SLOW_FILES` first (a stable sort: the order within a file is kept)."""
    rank = {name: i for i, name in enumerate(SLOW_FILES)}
    root = config.rootpath

    def key(item):
        try:
            rel = item.path.relative_to(root).as_posix()
        except ValueError:
            return len(rank)
        return rank.get(rel, len(rank))

    items.sort(key=key)


#: The ``end_to_end`` tests run so far: ``[count, seconds]`` (setup, call and teardown).
_END_TO_END = [0, 0.0]


def pytest_runtest_logreport(report):
    """Count the ``end_to_end`` tests and their seconds (with xdist: in the controller,
    from the workers' reports)."""
    if "end_to_end" in report.keywords:
        _END_TO_END[0] += report.when == "call"
        _END_TO_END[1] += report.duration


def pytest_terminal_summary(terminalreporter):
    """One line: how many ``end_to_end`` tests ran and their seconds of one worker."""
    if _END_TO_END[0]:
        terminalreporter.write_line(f"{_END_TO_END[0]} end_to_end tests: "
                                    f"{_END_TO_END[1]:.0f} s of one worker")
