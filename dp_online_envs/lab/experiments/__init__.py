"""Experiments: play games, run sweeps, store results, draw plots, write a report.

The question this package answers with one command is "how much regret does privacy
cost here?"::

    dp-online sweep examples/sweeps/price_of_privacy.yaml
    dp-online report results/price_of_privacy -o report.html

From Python::

    from dp_online_envs.lab.experiments import run, run_sweep
    records = run("DPFullInfo-Experts-v0", "private-ftrl", epsilon=1.0, horizon=2000, seeds=5)

Modules: :mod:`.game` (one game's settings, seeds and record), :mod:`.resolver` (agent
names to classes; the ``agents`` registry is the default), :mod:`.sweep` (sweeps as
data), :mod:`.store` (the results directory), :mod:`.backends` (serial, local
processes, Dask), :mod:`.runner` (``run``, ``run_sweep``), :mod:`.analysis` (means and
confidence intervals), :mod:`.rates` (the papers' regret exponents), :mod:`.plots`,
:mod:`.report`, :mod:`.table` (results as pandas tables; ``load_results``). The command
line, which wires in the ``agents`` registry, is :mod:`dp_online_envs.lab.cli`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dp_online_envs.lab import lazy_exports

if TYPE_CHECKING:  # what static readers (the API reference, type checkers) see; at run
    # time :func:`__getattr__` imports each name from its module on first use
    from dp_online_envs.lab.experiments.errors import ExperimentError
    from dp_online_envs.lab.experiments.game import (
        VOLATILE_FIELDS,
        GameSpec,
        play_game,
        stable_view,
    )
    from dp_online_envs.lab.experiments.resolver import AgentResolver
    from dp_online_envs.lab.experiments.runner import RunReport, run, run_games, run_sweep
    from dp_online_envs.lab.experiments.store import (
        SCHEMA_VERSION,
        DamagedResultWarning,
        ResultsStore,
        load_records,
    )
    from dp_online_envs.lab.experiments.sweep import Sweep, load_sweep, make_games, parse_sweep
    from dp_online_envs.lab.experiments.table import export_results, load_curves, load_results

#: Where each public name lives. The modules are imported when a name is first used, so
#: that importing one module of the package (the command line reads only a few) does not
#: import them all.
_HOME = {
    "ExperimentError": "errors",
    "VOLATILE_FIELDS": "game", "GameSpec": "game", "play_game": "game", "stable_view": "game",
    "AgentResolver": "resolver",
    "RunReport": "runner", "run": "runner", "run_games": "runner", "run_sweep": "runner",
    "SCHEMA_VERSION": "store", "DamagedResultWarning": "store", "ResultsStore": "store",
    "load_records": "store",
    "Sweep": "sweep", "load_sweep": "sweep", "make_games": "sweep", "parse_sweep": "sweep",
    "export_results": "table", "load_curves": "table", "load_results": "table",
}

#: The public names (the keys of :data:`_HOME`).
__all__ = [
    "AgentResolver", "DamagedResultWarning", "ExperimentError", "GameSpec", "ResultsStore",
    "RunReport", "SCHEMA_VERSION", "Sweep", "VOLATILE_FIELDS", "export_results",
    "load_curves", "load_records", "load_results", "load_sweep", "make_games",
    "parse_sweep", "play_game", "run", "run_games", "run_sweep", "stable_view",
]

#: The public names, imported from their module on first use.
__getattr__, __dir__ = lazy_exports(globals(), _HOME)
