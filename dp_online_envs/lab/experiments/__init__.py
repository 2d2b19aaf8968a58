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

from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.game import VOLATILE_FIELDS, GameSpec, play_game, stable_view
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

__all__ = [
    "SCHEMA_VERSION",
    "VOLATILE_FIELDS",
    "AgentResolver",
    "DamagedResultWarning",
    "ExperimentError",
    "GameSpec",
    "ResultsStore",
    "RunReport",
    "Sweep",
    "export_results",
    "load_curves",
    "load_records",
    "load_results",
    "load_sweep",
    "make_games",
    "parse_sweep",
    "play_game",
    "run",
    "run_games",
    "run_sweep",
    "stable_view",
]
