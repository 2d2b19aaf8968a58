"""Options of the speed harness (``bench_speed.py``): ``--speed-rounds``, ``--speed-size``."""

from __future__ import annotations

import pytest

from benchmarks.speed.cases import SIZES


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("speed", "the speed harness (benchmarks/speed)")
    group.addoption("--speed-rounds", type=int, default=7,
                    help="timed rounds of each side of each case (default 7; one warm-up more)")
    group.addoption("--speed-size", choices=SIZES, default="full",
                    help="the size the cases are built at (default full; tiny: a smoke run)")


@pytest.fixture
def speed_rounds(request: pytest.FixtureRequest) -> int:
    rounds = request.config.getoption("speed_rounds")
    if rounds < 1:
        raise pytest.UsageError(f"--speed-rounds={rounds} rejected: expected at least 1")
    return rounds


@pytest.fixture
def speed_size(request: pytest.FixtureRequest) -> str:
    return request.config.getoption("speed_size")
