"""Agents whose module costs CPU to import, for the CPU budget tests: the budget counts
the agent's own work, not the imports its process made before the limits were set."""

from __future__ import annotations

import time

from experiments.isolated_agents import _UniformArm

#: CPU seconds this module burns when it is imported (before the agent is built): more
#: than the tests' one-second budget on its own, so a budget that counted the imports
#: would end the process before its first round.
IMPORT_CPU = 1.2


def burn(seconds: float) -> None:
    """Spend ``seconds`` of this process's CPU time."""
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


burn(IMPORT_CPU)


class BurnsHalfASecond(_UniformArm):
    """Spends 0.5 s of CPU in round 2, then plays a uniform arm."""

    def act(self):
        if self.t == 1:
            burn(0.5)
        return super().act()


class BurnsThreeSeconds(_UniformArm):
    """Spends 3 s of CPU in round 2 (more than a one-second budget and its hard second)."""

    def act(self):
        if self.t == 1:
            burn(3.0)
        return super().act()
