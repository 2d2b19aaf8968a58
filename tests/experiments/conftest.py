"""Small sweeps shared by the experiment tests (each game takes milliseconds)."""

from __future__ import annotations

import copy
import pathlib

import pytest

import agents
import dp_online_envs  # noqa: F401  (registers the env ids)

SMALL = {
    "name": "small",
    "tags": {"suite": "tests"},
    "envs": ["DPFullInfo-Experts-v0"],
    "agents": ["hedge", {"name": "private-ftrl", "grid": {"counter": ["tree", "agarwal-singh"]}}],
    "epsilons": [1.0, 4.0],
    "horizons": [300],
    "seeds": 3,
}


@pytest.fixture
def small_sweep() -> dict:
    """15 games: Hedge (non-private) and private FTRL with two counters at two epsilons."""
    return copy.deepcopy(SMALL)


def needs_agents(*names: str) -> None:
    """Fail unless these agents are registered: every agent a test names ships with the
    package, so a missing one is a bug, not a reason to skip."""
    missing = sorted(set(names) - {n for n, _ in agents.list_agents()})
    assert not missing, f"agents not registered: {missing}"


def live_members(pgid: int) -> list[int]:
    """Processes of a process group that are not zombies (from Linux's ``/proc``)."""
    pids = []
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids
