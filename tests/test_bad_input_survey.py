"""A survey of bad input at every door a user holds, as one table.

Each case feeds one wrong value to one entry point -- the ``dp-online`` commands, sweep
and assignment files, the grader's submissions, ``gym.make`` / ``gym.make_vec`` options,
``agents.make`` and its options, ``agents.play`` / ``play_batch``, the results tables
and store -- and states what a user must get: the exact error type and a message that
names the bad value and what was expected (:data:`CASES`), or, for a value accepted on
purpose, acceptance with the reason it is accepted (``Case.accepted``).

A command-line case runs :func:`dp_online_envs.lab.cli.main` in process and
turns a failing exit into :class:`CliError`: the exit status is
:data:`~dp_online_envs.lab.cli.EXIT_USAGE`, nothing on stderr is a traceback,
and a command's own error is the single line ``dp-online CMD: error: ...`` (argparse's
refusals print the usage first, then their one error line).

``python tests/test_bad_input_survey.py [SUBSTRING ...]`` prints every case's outcome
(``clean``, ``silent``: accepted although wrong, ``vague``: the right kind of error
without the value or what was expected, ``traceback``, ``hang``) instead of asserting.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import pathlib
import re
import signal
import sys
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import agents
import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs import build_env
from dp_online_envs.envs.registry import ENV_IDS
from dp_online_envs.lab import cli
from dp_online_envs.lab.experiments import run_sweep
from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.store import ResultsStore, load_records
from dp_online_envs.lab.experiments.sweep import parse_sweep
from dp_online_envs.lab.experiments.table import export_results, load_curves, load_results
from dp_online_envs.lab.grading import find_submissions, parse_assignment
from dp_online_envs.problem import MAX_HORIZON

ASSIGNMENT = {"name": "t", "envs": ["DPBandit-MAB-v0"], "horizons": [40], "seeds": 2,
              "secret": {"salt": "a salt of some length"}, "privacy": {"epsilon": 1},
              "references": ["private-exp2", "exp3"]}
SWEEP = {"name": "s", "envs": ["DPFullInfo-Experts-v0"], "agents": ["hedge"],
         "horizons": [30], "seeds": 2}


class CliError(Exception):
    """A ``dp-online`` command that failed cleanly; ``str()`` is its last stderr line."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines[-1] if lines else "")
        self.lines = lines


@dataclasses.dataclass
class Context:
    """Files the cases read: a temporary directory and a small results directory."""

    tmp: pathlib.Path
    results: pathlib.Path

    @classmethod
    def build(cls, tmp: pathlib.Path) -> Context:
        results = tmp / "results"
        run_sweep(SWEEP, results=results, backend="serial", quiet=True)
        return cls(tmp, results)

    def file(self, name: str, text: str | bytes) -> pathlib.Path:
        path = self.tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
        return path

    def dir(self, name: str) -> pathlib.Path:
        path = self.tmp / name
        path.mkdir(exist_ok=True)
        return path

    def json(self, name: str, data: Any) -> pathlib.Path:
        return self.file(name, json.dumps(data))

    def cli(self, *argv: str) -> str:
        """Run ``dp-online argv``; its stdout, or :class:`CliError` if it failed."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = cli.main([str(a) for a in argv])
            except SystemExit as exc:  # argparse
                status = exc.code
        text = err.getvalue()
        assert "Traceback" not in text, text
        lines = text.strip().splitlines()
        if status == 0:
            return out.getvalue()
        assert status == cli.EXIT_USAGE, (status, text)
        if not lines[0].startswith("usage:"):  # argparse prints the usage, then one line
            assert len(lines) == 1 and lines[0].startswith(f"dp-online {argv[0]}: error: "), text
        raise CliError(lines)


@dataclasses.dataclass(frozen=True)
class Case:
    """One bad input.

    Attributes:
        id: The door, a slash, and the input.
        call: Feeds it, given the :class:`Context`.
        error: The exception a user gets (``None``: accepted on purpose).
        message: A regular expression the message must match (``re.search``); for an
            accepted case, the reason it is accepted.
    """

    id: str
    call: Callable[[Context], Any]
    error: type[BaseException] | None
    message: str
    upstream: bool = False


CASES: list[Case] = []


def case(id: str, call: Callable[[Context], Any], error: type[BaseException] | None,
         message: str) -> None:
    CASES.append(Case(id, call, error, message))


def upstream(id: str, call: Callable[[Context], Any], error: type[BaseException],
             message: str) -> None:
    """A case Gymnasium answers before any code of the suite runs (documented in
    docs/vector.md); pinned so that a change there shows."""
    CASES.append(Case(id, call, error, message, upstream=True))


def accepted(id: str, call: Callable[[Context], Any], why: str) -> None:
    CASES.append(Case(id, call, None, why))


def _sweep(**changes: Any) -> Any:
    return parse_sweep({**SWEEP, **changes})


def _assignment(**changes: Any) -> Any:
    return parse_assignment({**ASSIGNMENT, **changes})


def _sweep_cli(ctx: Context, data: Any, suffix: str = ".json", *extra: str) -> str:
    path = ctx.file(f"sw{suffix}", data if isinstance(data, str) else json.dumps(data))
    return ctx.cli("sweep", path, "--dry-run", *extra)


def _problem(env_id: str = "DPBandit-MAB-v0", **options: Any) -> Any:
    return build_env(env_id, horizon=20, **options).get_wrapper_attr("problem")


def _run(*argv: str) -> Callable[[Context], Any]:
    return lambda ctx: ctx.cli("run", "DPBandit-MAB-v0", "exp3", "--horizon", "20",
                               "--seeds", "1", "--backend", "serial", "--quiet", *argv)


#: A horizon past what the float64 regret ledger counts exactly (2^53 + 1), and the
#: message every door gives for it (``dp_online_envs.problem.check_horizon``).
OVER_HORIZON = 2**53 + 1
OVER_HORIZON_MESSAGE = (rf"horizon={OVER_HORIZON} rejected: expected an integer in "
                        r"\[1, 2\*\*53\] \(the longest game whose float64 regret ledger "
                        r"counts every round exactly\)$")


# =================================================================== dp-online run
ARG = r"^dp-online run: error: argument "
case("run/unknown env", lambda c: c.cli("run", "DPBandit-Nope-v0", "exp3"), CliError,
     r"^dp-online run: error: unknown env id 'DPBandit-Nope-v0'")
case("run/unknown agent", lambda c: c.cli("run", "DPBandit-MAB-v0", "exp4"), CliError,
     r"^dp-online run: error: unknown agent 'exp4'.*did you mean 'exp3'")
case("run/epsilon 0", lambda c: c.cli("run", "DPBandit-MAB-v0", "private-exp2", "--epsilon",
                                      "0"), CliError,
     r"^dp-online run: error: epsilon=0(\.0)? rejected: expected a finite real number > 0")
case("run/epsilon nan", lambda c: c.cli("run", "DPBandit-MAB-v0", "private-exp2",
                                        "--epsilon", "nan"), CliError,
     r"argument --epsilon: epsilon=nan rejected: expected a finite real number$")
case("run/epsilon text", lambda c: c.cli("run", "DPBandit-MAB-v0", "private-exp2",
                                         "--epsilon", "one"), CliError,
     r"argument --epsilon: epsilon='one' rejected: expected a finite real number, got a str")
case("run/delta 1", _run("--delta", "1"), CliError,
     r"delta=1(\.0)? rejected: expected a real number in \[0, 1\)")
case("run/horizon 0", _run("--horizon", "0"), CliError,
     r"argument --horizon: horizon=0 rejected: expected an integer >= 1")
case("run/horizon 1.5", _run("--horizon", "1.5"), CliError,
     r"argument --horizon: horizon=1\.5 rejected: expected an integer >= 1, got a float")


def _run_long(ctx: Context, horizon: int) -> str:
    # past the bound, or the case would play for years rather than fail (the bound's value
    # is pinned by tests/vector/test_bad_actions.py)
    assert horizon > MAX_HORIZON
    return ctx.cli("run", "DPBandit-MAB-v0", "exp3", "--horizon", horizon, "--seeds", "1",
                   "--backend", "serial", "--quiet")


for _h in (10**16, OVER_HORIZON, 2**62, 2**63, 10**30):  # 2^62 and 10^16 once ran for years
    case(f"run/horizon {_h}", lambda c, h=_h: _run_long(c, h), CliError,
        rf"^dp-online run: error: horizon={_h} rejected: expected an integer in \[1, 2\*\*53\]")
case("run/seeds 0", _run("--seeds", "0"), CliError,
     r"argument --seeds: seeds=0 rejected: expected an integer >= 1")
case("run/private agent without epsilon",
     lambda c: c.cli("run", "DPBandit-MAB-v0", "private-exp2"), CliError,
     r"^dp-online run: error: agent 'private-exp2' is private: pass --epsilon E")
case("run/full-information agent on a bandit env",
     lambda c: c.cli("run", "DPBandit-MAB-v0", "hedge"), CliError,
     r"^dp-online run: error: .*'hedge'.*full.*bandit")
case("run/env option without =", _run("--env-option", "n_arms"), CliError,
     r"argument --env-option: 'n_arms': expected KEY=VALUE")
case("run/unknown env option", _run("--env-option", "arms=3"), CliError,
     r"^dp-online run: error: unknown option 'arms' for DPBandit-MAB-v0; valid: .*'n_arms'")
case("run/env option n_arms=0", _run("--env-option", "n_arms=0"), CliError,
     r"^dp-online run: error: .*n_arms=0 rejected: expected an integer >= 1")
case("run/env option horizon", _run("--env-option", "horizon=5"), CliError,
     r"option 'horizon' cannot be set .*set it with .*horizon")
case("run/unknown agent option", _run("--agent-option", "etta=1"), CliError,
     r"^dp-online run: error: .*unknown option\(s\) \['etta'\]; valid: ")
case("run/agent option of a wrong value", _run("--agent-option", "gamma=-1"), CliError,
     r"^dp-online run: error: .*gamma=-1 rejected: expected")
case("run/timeout 0", _run("--isolate", "--timeout", "0"), CliError,
     r"argument --timeout: timeout=0 rejected: expected a finite real number > 0")
case("run/memory-mb 0", _run("--isolate", "--memory-mb", "0"), CliError,
     r"argument --memory-mb: memory_mb=0 rejected: expected an integer in \[1, ")
case("run/memory-mb without --isolate", _run("--memory-mb", "100"), CliError,
     r"^dp-online run: error: --memory-mb limits an isolated agent: add --isolate$")
case("run/cpu-seconds 0", _run("--isolate", "--cpu-seconds", "0"), CliError,
     r"argument --cpu-seconds: cpu_seconds=0 rejected: expected an integer in \[1, ")
case("run/workers 0", _run("--workers", "0"), CliError,
     r"argument --workers: workers=0 rejected: expected an integer >= 1")
case("run/seed secret variable unset", _run("--seed-secret-env", "NO_SUCH_VARIABLE_27"),
     CliError, r"^dp-online run: error: --seed-secret-env NO_SUCH_VARIABLE_27: that "
     r"environment variable is not set or empty$")
case("run/scheduler without dask", _run("--scheduler", "tcp://127.0.0.1:1"), CliError,
     r"^dp-online run: error: a Dask scheduler was given with backend='serial'; use "
     r"backend='dask'$")
case("run/timeout without --isolate", _run("--timeout", "3"), CliError,
     r"^dp-online run: error: --timeout .*--isolate")
case("run/agent module:Class missing", lambda c: c.cli("run", "DPBandit-MAB-v0",
                                                       "no_such_module_27:Agent"), CliError,
     r"^dp-online run: error: .*'no_such_module_27")
case("run/agent module:Class not an agent", lambda c: c.cli("run", "DPBandit-MAB-v0",
                                                            "json:JSONDecoder"), CliError,
     r"^dp-online run: error: <class 'json\.decoder\.JSONDecoder'> is not a subclass of "
     r"agents\.Agent$")
case("run/results under a regular file",
     lambda c: c.cli("run", "DPBandit-MAB-v0", "exp3", "--horizon", "20", "--seeds", "1",
                     "--backend", "serial", "--quiet", "--results",
                     c.file("plain-run", "x") / "r"), CliError,
     r"^dp-online run: error: .*plain-run.* not a directory")
accepted("run/epsilon of a non-private agent", _run("--epsilon", "1"),
         "documented: a note on stderr says --epsilon is ignored and the games are recorded "
         "as non-private")

# ================================================================= dp-online sweep
case("sweep/missing file", lambda c: c.cli("sweep", c.tmp / "none.yaml"), CliError,
     r"^dp-online sweep: error: sweep file '.*none\.yaml' does not exist$")
case("sweep/unknown format", lambda c: c.cli("sweep", c.file("s.txt", "x")), CliError,
     r"unknown format '\.txt'; valid: \['\.yaml', '\.yml', '\.toml', '\.json'\]")
case("sweep/a directory", lambda c: c.cli("sweep", c.tmp), CliError,
     r"^dp-online sweep: error: sweep file '.*' (does not exist|is a directory)")
case("sweep/malformed YAML", lambda c: _sweep_cli(c, "name: [a\n", ".yaml"), CliError,
     r"^dp-online sweep: error: sweep file '.*sw\.yaml' is malformed: ")
case("sweep/malformed JSON", lambda c: _sweep_cli(c, "{", ".json"), CliError,
     r"sweep file '.*sw\.json' is malformed: Expecting property name")
case("sweep/empty file", lambda c: _sweep_cli(c, "", ".yaml"), CliError,
     r"a sweep must be a mapping of keys \[.*\], got NoneType")
case("sweep/a list", lambda c: _sweep_cli(c, [1, 2]), CliError,
     r"a sweep must be a mapping of keys \[.*\], got list")
case("sweep/unknown key", lambda c: _sweep_cli(c, {**SWEEP, "horizon": [3]}), CliError,
     r"unknown key\(s\) \['horizon'\]; valid: \[")
case("sweep/workers 0", lambda c: _sweep_cli(c, SWEEP, ".json", "--workers", "0"), CliError,
     r"argument --workers: workers=0 rejected")
case("sweep/results under a regular file",
     lambda c: c.cli("sweep", c.json("s1.json", SWEEP), "--results",
                     c.file("plain-sweep", "x") / "r"), CliError,
     r"results directory '.*plain-sweep/r' is not usable: '.*plain-sweep' is not a directory")
case("sweep/missing envs", lambda c: parse_sweep({k: v for k, v in SWEEP.items()
                                                 if k != "envs"}), ExperimentError,
     r"missing key 'envs' \(a sweep needs envs, agents and horizons\)")
case("sweep/horizons []", lambda c: _sweep(horizons=[]), ExperimentError,
     r"horizons: empty list")
case("sweep/horizons [0]", lambda c: _sweep(horizons=[0]), ExperimentError,
     r"horizons: horizon=0 rejected: expected an integer >= 1")
case("sweep/horizons '30'", lambda c: _sweep(horizons="30"), ExperimentError,
     r"horizon='30' rejected: expected an integer >= 1, got a str")
case("sweep/horizons true", lambda c: _sweep(horizons=True), ExperimentError,
     r"horizon=True rejected: expected an integer >= 1, got a bool")
case("sweep/horizons 1e3", lambda c: _sweep(horizons=1e3), ExperimentError,
     r"horizon=1000\.0 rejected: expected an integer >= 1, got a float")
case("sweep/horizons [2^53 + 1]", lambda c: _sweep(horizons=[30, OVER_HORIZON]),
     ExperimentError, r"horizons: " + OVER_HORIZON_MESSAGE)
case("sweep/horizon 2^53 + 1 in a file, --dry-run",
     lambda c: _sweep_cli(c, {**SWEEP, "horizons": [OVER_HORIZON]}), CliError,
     r"^dp-online sweep: error: .*sw\.json: horizons: " + OVER_HORIZON_MESSAGE)
case("sweep/seeds 0", lambda c: _sweep(seeds=0), ExperimentError,
     r"seeds=0 rejected: expected an integer >= 1")
case("sweep/seeds []", lambda c: _sweep(seeds=[]), ExperimentError,
     r"seeds=\[\] rejected: expected a number of seeds >= 1 or a non-empty list")
case("sweep/seeds [-1]", lambda c: _sweep(seeds=[-1]), ExperimentError,
     r"seed index=-1 rejected: expected an integer >= 0")
case("sweep/seeds 1.5", lambda c: _sweep(seeds=1.5), ExperimentError,
     r"seeds=1\.5 rejected: expected an integer >= 1, got a float")
case("sweep/seeds 'all'", lambda c: _sweep(seeds="all"), ExperimentError,
     r"seeds='all' rejected: expected an integer >= 1, got a str")
accepted("sweep/seeds [0, 0] repeats one game", lambda c: _sweep(seeds=[0, 0]),
         "a repeated seed index names the same game; it is played once")
case("sweep/epsilons [0]", lambda c: _sweep(agents=["private-ftrl"], epsilons=[0]),
     ExperimentError, r"epsilons: epsilon=0 rejected: expected a finite real number > 0")
case("sweep/epsilons ['one']", lambda c: _sweep(agents=["private-ftrl"], epsilons=["one"]),
     ExperimentError, r"epsilon='one' rejected: expected a finite real number > 0, got a str")
case("sweep/epsilons []", lambda c: _sweep(agents=["private-ftrl"], epsilons=[]),
     ExperimentError, r"epsilons: empty list")
case("sweep/private agent without epsilons", lambda c: _sweep(agents=["private-ftrl"]),
     ExperimentError, r"agent 'private-ftrl' is private and needs 'epsilons'")
accepted("sweep/epsilons for non-private agents only", lambda c: _sweep(epsilons=[1]),
         "documented: a non-private agent plays once with epsilon=None whatever the epsilons")
case("sweep/delta 1", lambda c: _sweep(agents=["private-ftrl"], epsilons=[1], delta=1),
     ExperimentError, r"delta: delta=1 rejected: expected a real number in \[0, 1\)")
case("sweep/delta [0.1, -1]", lambda c: _sweep(agents=["private-ftrl"], epsilons=[1],
                                             delta=[0.1, -1]),
     ExperimentError, r"delta=-1 rejected: expected a real number in \[0, 1\)")
case("sweep/envs []", lambda c: _sweep(envs=[]), ExperimentError, r"envs: empty list")
case("sweep/envs [123]", lambda c: _sweep(envs=[123]), ExperimentError,
     r"envs\[0\]: unknown env id 123; valid: \['DPFullInfo-Experts-v0'")
case("sweep/env entry without id", lambda c: _sweep(envs=[{"kwargs": {}}]), ExperimentError,
     r"envs\[0\]: missing key 'id' \(an env entry is an id or \{id, kwargs\}\)")
case("sweep/env entry unknown key", lambda c: _sweep(envs=[{"id": "DPFullInfo-Experts-v0",
                                                            "options": {}}]),
     ExperimentError, r"envs\[0\]: unknown key\(s\) \['options'\]; valid: \['id', 'kwargs'\]")
case("sweep/env option n_arms=0", lambda c: _sweep(envs=[{"id": "DPFullInfo-Experts-v0",
                                                          "kwargs": {"n_arms": 0}}]),
     ExperimentError, r"n_arms=0 rejected: expected an integer >= 1")
case("sweep/env kwargs a list", lambda c: _sweep(envs=[{"id": "DPFullInfo-Experts-v0",
                                                         "kwargs": [1]}]),
     ExperimentError, r"kwargs of DPFullInfo-Experts-v0: expected a mapping of option names "
     r"to values, got \[1\]")
case("sweep/env option feedback", lambda c: _sweep(envs=[{"id": "DPFullInfo-Experts-v0",
                                                           "kwargs": {"feedback": "bandit"}}]),
     ExperimentError, r"option 'feedback' cannot be set in a sweep")
case("sweep/agents [None]", lambda c: _sweep(agents=[None]), ExperimentError,
     r"agents\[0\]: expected an agent name, got None")
case("sweep/agent entry unknown key", lambda c: _sweep(agents=[{"name": "hedge",
                                                                "options": {}}]),
     ExperimentError, r"agents\[0\]: unknown key\(s\) \['options'\]")
case("sweep/agent grid not a list", lambda c: _sweep(agents=[{"name": "hedge",
                                                              "grid": {"eta": 0.1}}]),
     ExperimentError, r"grid\.eta must be a non-empty list, got 0\.1")
case("sweep/agent grid empty", lambda c: _sweep(agents=[{"name": "hedge", "grid": {"eta": []}}]),
     ExperimentError, r"grid\.eta must be a non-empty list, got \[\]")
case("sweep/agent option unknown", lambda c: _sweep(agents=[{"name": "hedge",
                                                             "kwargs": {"etta": 1}}]),
     ExperimentError, r"unknown option\(s\) \['etta'\]; valid: ")
case("sweep/agent option in kwargs and grid",
     lambda c: _sweep(agents=[{"name": "hedge", "kwargs": {"eta": 1}, "grid": {"eta": [1]}}]),
     ExperimentError, r"option 'eta' is in both kwargs and grid")
case("sweep/experiments []", lambda c: _sweep(experiments=[]), ExperimentError,
     r"experiments must be a non-empty list of mappings, got \[\]")
case("sweep/experiments [1]", lambda c: _sweep(experiments=[1]), ExperimentError,
     r"experiments\[0\]: expected a mapping of keys \[.*\], got 1")
case("sweep/experiment unknown key", lambda c: _sweep(experiments=[{"results": "x"}]),
     ExperimentError, r"experiments\[0\]: unknown key\(s\) \['results'\]")
case("sweep/tags a list", lambda c: _sweep(tags=["a"]), ExperimentError,
     r"tags: expected a mapping of option names to values, got \['a'\]")
case("sweep/tag value a list", lambda c: _sweep(tags={"a": [1]}), ExperimentError,
     r"tags\.a=\[1\]; tag values must be strings, numbers or booleans")
case("sweep/vectorize 'yes'", lambda c: _sweep(vectorize="yes"), ExperimentError,
     r"vectorize must be true or false, got 'yes'")
case("sweep/skip_incompatible 'yes'", lambda c: _sweep(skip_incompatible="yes"),
     ExperimentError, r"skip_incompatible='yes' rejected: expected true or false")
case("sweep/results 5", lambda c: _sweep(results=5), ExperimentError,
     r"results: expected a string, got 5")
case("sweep/name 5", lambda c: _sweep(name=5), ExperimentError,
     r"name: expected a string, got 5")
case("sweep/name 'a/b'", lambda c: _sweep(name="a/b"), ExperimentError,
     r"name='a/b' rejected: expected a name without '/'")
case("sweep/description 5", lambda c: _sweep(description=5), ExperimentError,
     r"description: expected a string, got 5")
accepted("sweep/horizons 30 as a number", lambda c: _sweep(horizons=30),
         "a list key takes one value as is (documented in the module docstring)")
accepted("sweep/epsilons '1e-1' as YAML text", lambda c: _sweep(
    agents=["private-ftrl"], epsilons=["1e-1"]),
    "YAML 1.1 reads 1e-1 as text; epsilon and delta read such text as a number")

# ============================================ dp-online plot / report / export / list
case("plot/missing results", lambda c: c.cli("plot", c.tmp / "none"), CliError,
     r"^dp-online plot: error: results directory '.*none' does not exist$")
case("plot/a file as results", lambda c: c.cli("plot", c.file("r.txt", "x")), CliError,
     r"^dp-online plot: error: results directory '.*r\.txt' is not a directory$")
case("plot/empty results", lambda c: c.cli("plot", c.dir("empty-dir")), CliError,
     r"^dp-online plot: error: results directory '.*empty-dir' holds no finished game")
case("plot/unknown format", lambda c: c.cli("plot", c.results, "--format", "gif"), CliError,
     r"argument --format: invalid choice: 'gif'")
case("report/missing results", lambda c: c.cli("report", c.tmp / "none"), CliError,
     r"^dp-online report: error: results directory '.*none' does not exist$")
case("report/output is a directory", lambda c: c.cli("report", c.results, "-o", c.tmp),
     CliError, r"^dp-online report: error: .*is a directory")
case("export/unknown extension", lambda c: c.cli("export", c.results, "-o", c.tmp / "x.txt"),
     CliError, r"cannot export to '.*x\.txt': unknown extension '\.txt'; valid: ")
case("export/curves unknown extension",
     lambda c: c.cli("export", c.results, "-o", c.tmp / "x.csv", "--curves",
                     c.tmp / "y.xlsx"), CliError, r"unknown extension '\.xlsx'")
case("export/missing results", lambda c: c.cli("export", c.tmp / "none", "-o",
                                               c.tmp / "x.csv"), CliError,
     r"results directory '.*none' does not exist")
case("export/without -o", lambda c: c.cli("export", c.results), CliError,
     r"the following arguments are required: -o/--out")
case("export/output is a directory", lambda c: c.cli("export", c.results, "-o", c.results),
     CliError, r"^dp-online export: error: .*results.*(is a directory|unknown extension)")
case("cli/unknown command", lambda c: c.cli("lsit"), CliError,
     r"invalid choice: 'lsit'")

# ============================================================ assignment files
case("assignment/missing file", lambda c: c.cli("grade", c.tmp / "none.yaml",
                                                c.file("sub.py", "")), CliError,
     r"^dp-online grade: error: assignment file '.*none\.yaml' does not exist$")
case("assignment/a list", lambda c: parse_assignment([1]), ExperimentError,
     r"an assignment must be a mapping of keys \[.*\], got list")
case("assignment/missing envs", lambda c: parse_assignment(
    {k: v for k, v in ASSIGNMENT.items() if k != "envs"}), ExperimentError,
    r"missing key 'envs'")
case("assignment/misspelt key", lambda c: _assignment(horizon=[40]), ExperimentError,
     r"unknown key 'horizon'; did you mean 'horizons'\?")
case("assignment/horizons [0]", lambda c: _assignment(horizons=[0]), ExperimentError,
     r"horizon=0 rejected: expected an integer >= 1")
case("assignment/horizons [2^53 + 1]", lambda c: _assignment(horizons=[OVER_HORIZON]),
     ExperimentError, OVER_HORIZON_MESSAGE)
case("assignment/seeds 0", lambda c: _assignment(seeds=0), ExperimentError,
     r"seeds=0 rejected: expected an integer >= 1")
case("assignment/seeds a list", lambda c: _assignment(seeds=[0, 1]), ExperimentError,
     r"seeds=\[0, 1\] rejected: expected an integer >= 1")
case("assignment/epsilon 0", lambda c: _assignment(privacy={"epsilon": 0}), ExperimentError,
     r"epsilon=0 rejected: expected a finite real number > 0")
case("assignment/delta 1", lambda c: _assignment(privacy={"epsilon": 1, "delta": 1}),
     ExperimentError, r"delta=1 rejected: expected a real number in \[0, 1\)")
case("assignment/privacy without epsilon", lambda c: _assignment(privacy={"delta": 0}),
     ExperimentError, r"privacy: missing key 'epsilon'")
case("assignment/privacy unknown key", lambda c: _assignment(privacy={"epsilon": 1, "eps": 1}),
     ExperimentError, r"unknown key 'eps'")
case("assignment/privacy a number", lambda c: _assignment(privacy=1), ExperimentError,
     r"privacy: expected a mapping of keys \['epsilon', 'delta'\], got 1")
case("assignment/references []", lambda c: _assignment(references=[]), ExperimentError,
     r"references: empty list")
case("assignment/unknown reference", lambda c: _assignment(references=["exp4"]),
     ExperimentError, r"unknown agent 'exp4'.*did you mean 'exp3'")
case("assignment/reference twice", lambda c: _assignment(references=["exp3", "exp3"]),
     ExperimentError, r"names a reference twice")
case("assignment/epsilon of a non-private reference",
     lambda c: _assignment(references=[{"name": "exp3", "epsilon": 1}]), ExperimentError,
     r"agent 'exp3' is not private; it takes no ")
accepted("assignment/secret {}", lambda c: _assignment(secret={}),
         "documented: without env or salt the secret is in DP_ONLINE_GRADE_SECRET (grading "
         "refuses to start while that variable is unset)")
case("assignment/secret salt short", lambda c: _assignment(secret={"salt": "abc"}),
     ExperimentError, r"salt rejected: expected a string of at least 8")
accepted("assignment/secret env with a space", lambda c: _assignment(secret={"env": "a b"}),
         "a process environment may hold any name without '=' or NUL; an unset one is "
         "refused when grading starts, naming it")
case("assignment/secret env with NUL", lambda c: _assignment(secret={"env": "A\0B"}),
     ExperimentError, r"env='A\\x00B' rejected: expected the name of an environment variable$")
case("assignment/secret env with =", lambda c: _assignment(secret={"env": "A=B"}),
     ExperimentError, r"env='A=B' rejected: expected the name of an environment variable$")
case("assignment/secret env and salt", lambda c: _assignment(secret={"env": "X",
                                                                     "salt": "abcdefghij"}),
     ExperimentError, r"secret: give either env .* or salt")
case("assignment/limits timeout 0", lambda c: _assignment(limits={"timeout": 0}),
     ExperimentError, r"timeout=0 rejected: expected a finite real number > 0")
case("assignment/limits memory_mb 1", lambda c: _assignment(limits={"memory_mb": 1}),
     ExperimentError, r"memory_mb=1 rejected: expected an integer in \[64, ")
case("assignment/limits unknown key", lambda c: _assignment(limits={"time": 1}),
     ExperimentError, r"unknown key 'time'")
case("assignment/audit env not played", lambda c: _assignment(audit={"env": "DPFullInfo-Experts-v0"}),
     ExperimentError, r"env 'DPFullInfo-Experts-v0' is not one of the ")
case("assignment/audit reference non-private", lambda c: _assignment(audit={"reference": "exp3"}),
     ExperimentError, r"reference: 'exp3' is not private")
case("assignment/audit games 0", lambda c: _assignment(audit={"games": 0}), ExperimentError,
     r"games=0 rejected: expected an integer >= 1")
case("assignment/audit runs (a former key)", lambda c: _assignment(audit={"runs": 10}),
     ExperimentError, r"audit: unknown key 'runs'; valid: \[.*'games'")
case("assignment/audit confidence 1.5", lambda c: _assignment(audit={"confidence": 1.5}),
     ExperimentError, r"confidence=1\.5 rejected: expected a real number in")
case("assignment/audit min_gap -1", lambda c: _assignment(audit={"min_gap": -1}),
     ExperimentError, r"min_gap=-1 rejected: expected an integer >= 1")
case("assignment/audit power_factors []", lambda c: _assignment(audit={"power_factors": []}),
     ExperimentError, r"power_factors.*(empty|expected)")
case("assignment/regret factor 0.5", lambda c: _assignment(grading={"regret": {"factor": 0.5}}),
     ExperimentError, r"factor=0\.5 rejected: expected")
case("assignment/regret zero_at below factor",
     lambda c: _assignment(grading={"regret": {"factor": 2, "zero_at": 1.5}}), ExperimentError,
     r"zero_at: zero_at=1\.5 rejected: expected a finite real number >= 2")
case("assignment/declared -1", lambda c: _assignment(grading={"declared": -1}),
     ExperimentError, r"declared: points=-1 rejected: expected a finite real number >= 0")
case("assignment/every part 0 points",
     lambda c: _assignment(grading={"regret": {"points": 0}, "declared": 0, "audit": 0}),
     ExperimentError, r"every part has 0 points")
case("assignment/regret reference not a reference",
     lambda c: _assignment(grading={"regret": {"reference": "hedge"}}), ExperimentError,
     r"'hedge' is not one of the references")
case("assignment/isolate_references 'yes'", lambda c: _assignment(isolate_references="yes"),
     ExperimentError, r"isolate_references='yes' rejected: expected true or false")
case("assignment/title 5", lambda c: _assignment(title=5), ExperimentError,
     r"title: expected a string, got 5")
case("assignment/name 'a/b'", lambda c: _assignment(name="a/b"), ExperimentError,
     r"name='a/b' rejected")
case("assignment/env twice", lambda c: _assignment(envs=["DPBandit-MAB-v0",
                                                         "DPBandit-MAB-v0"]),
     ExperimentError, r"envs: \['DPBandit-MAB-v0', 'DPBandit-MAB-v0'\] names an env twice")
accepted("assignment/horizons 40 as a number", lambda c: _assignment(horizons=40),
         "a list key takes one value as is (documented)")

# ===================================================================== grading
case("grade/missing submission", lambda c: find_submissions([c.tmp / "none.py"]),
     ExperimentError, r"submissions: '.*none\.py' does not exist")
case("grade/not a .py file", lambda c: find_submissions([c.file("sub.txt", "")]),
     ExperimentError, r"submissions: '.*sub\.txt' is not a \.py file")
case("grade/directory without .py", lambda c: find_submissions([c.dir("empty-sub")]),
     ExperimentError, r"directory '.*empty-sub' holds no \.py file")
case("grade/same file twice", lambda c: find_submissions([c.file("a1.py", "")] * 2),
     ExperimentError, r"given twice")
case("grade/two files of one name", lambda c: find_submissions(
    [c.file("d1/a.py", ""), c.file("d2/a.py", "")]), ExperimentError,
    r"several files named \['a'\]")
case("grade/workers 0", lambda c: c.cli("grade", c.json("a.json", ASSIGNMENT),
                                        c.file("sub.py", ""), "--workers", "0"), CliError,
     r"argument --workers: workers=0 rejected: expected an integer >= 1")
case("grade/output under a regular file",
     lambda c: c.cli("grade", c.json("a.json", ASSIGNMENT), c.file("sub.py", ""), "-o",
                     c.file("plain-grade", "x") / "g"), CliError,
     r"output directory '.*plain-grade/g' is not usable")

# ================================================================ gym.make options
for _id in ENV_IDS:
    case(f"make/{_id} horizon 0", lambda c, i=_id: gym.make(i, horizon=0), ValueError,
         r"^horizon=0 rejected: expected an integer >= 1$")
    case(f"make/{_id} horizon 2^53 + 1", lambda c, i=_id: gym.make(i, horizon=OVER_HORIZON),
         ValueError, "^" + (OVER_HORIZON_MESSAGE if "Portfolio" not in _id else
                            rf"horizon={OVER_HORIZON} rejected: the price series has "))
    case(f"make/{_id} unknown option", lambda c, i=_id: gym.make(i, colour=1), TypeError,
         rf"{_id} got unknown option\(s\) \['colour'\]; valid: ")
case("make/unknown id", lambda c: gym.make("DPBandit-Nope-v0"), gym.error.NameNotFound,
     r"Environment `DPBandit-Nope` doesn't exist")
accepted("make/n_arms 1", lambda c: gym.make("DPBandit-MAB-v0", n_arms=1),
         "one arm is a game without choice (regret 0), not an error")
case("make/n_arms 2.5", lambda c: gym.make("DPBandit-MAB-v0", n_arms=2.5), ValueError,
     r"n_arms=2\.5 rejected: expected an integer >= 1, got a float")
case("make/dim 0", lambda c: gym.make("DPFullInfo-Sphere-v1", dim=0), ValueError,
     r"dim=0 rejected: expected an integer >= 1")
case("make/unknown adversary", lambda c: gym.make("DPBandit-MAB-v0", adversary="evil"),
     ValueError, r"unknown adversary 'evil'.*(valid|choose|one of)")
case("make/adversary option unknown",
     lambda c: gym.make("DPBandit-MAB-v0", adversary_kwargs={"colour": 1}), TypeError,
     r"colour")
case("make/unknown loss", lambda c: gym.make("DPFullInfo-Convex-v1", loss="cubic"),
     ValueError, r"loss='cubic' is not offered here; valid: \['distance'")
case("make/loss option unknown",
     lambda c: gym.make("DPFullInfo-Convex-v1", loss_kwargs={"colour": 1}), TypeError,
     r"colour")
case("make/checkpoints [0]", lambda c: gym.make("DPBandit-MAB-v0", checkpoints=[0]),
     ValueError, r"^checkpoint=0 rejected: expected an integer in \[1, 1000\]$")
accepted("make/checkpoints out of order", lambda c: gym.make("DPBandit-MAB-v0",
                                                            checkpoints=[5, 3, 5]),
         "documented: the checkpoints are a set of rounds; order and repeats do not matter")
case("make/checkpoints text", lambda c: gym.make("DPBandit-MAB-v0", checkpoints="10"),
     ValueError, r"^checkpoints='10' rejected: expected a list of rounds in 1\.\.1000$")
case("make/invalid_action unknown", lambda c: gym.make("DPBandit-MAB-v0",
                                                       invalid_action="ignore"),
     ValueError, r"invalid_action='ignore'.*(valid|expected|one of)")
case("make/feedback unknown", lambda c: gym.make("DPBandit-MAB-v0", feedback="partial"),
     ValueError, r"feedback='partial'.*(expected|one of|valid)")
case("make/feedback full on a bandit id",
     lambda c: gym.make("DPBandit-MAB-v0", feedback="full"), ValueError,
     r"feedback='full'.*bandit")
case("make/render_mode unknown", lambda c: gym.make("DPBandit-MAB-v0", render_mode="video"),
     ValueError, r"render_mode='video'.*(expected|valid|one of|supported)")
case("make/record_losses 'yes'", lambda c: gym.make("DPBandit-MAB-v0", record_losses="yes"),
     TypeError, r"^record_losses must be True or False, got record_losses='yes'")
case("make/matroid unknown", lambda c: gym.make("DPBandit-Matroid-v1", matroid="vector"),
     ValueError, r"matroid='vector'.*(expected|valid|one of)")
case("make/matroid rank 0", lambda c: gym.make("DPBandit-Matroid-v1", rank=0), ValueError,
     r"rank=0 rejected")
case("make/matroid rank above n", lambda c: gym.make("DPBandit-Matroid-v1", n=4, rank=9),
     ValueError, r"^rank=9 rejected: expected an integer in \[1, n=4\]$")
case("make/flow grid 0", lambda c: gym.make("DPBandit-Flow-v1", grid=0), ValueError,
     r"^grid=0 rejected: expected a sequence \(rows, cols\)$")
case("make/flow graph unknown", lambda c: gym.make("DPBandit-Flow-v1", graph="mesh"),
     ValueError, r"^graph='mesh' rejected: expected a sequence \(n_nodes, edges, source, sink\)$")
case("make/linear domain unknown", lambda c: gym.make("DPBandit-Linear-v1", domain="torus"),
     ValueError, r"domain='torus'.*(expected|valid|one of)")
case("make/classes dataset unknown", lambda c: gym.make("DPBandit-Classes-v0",
                                                        dataset="mnist"),
     ValueError, r"dataset.*'mnist'.*(expected|valid|one of|available)")
case("make/portfolio ticker unknown", lambda c: gym.make("DPFullInfo-Portfolio-v1",
                                                         tickers=["ZZZZ"]),
     ValueError, r"'ZZZZ'.*(valid|expected|available)")
case("make/portfolio tickers []", lambda c: gym.make("DPFullInfo-Portfolio-v1", tickers=[]),
     ValueError, r"tickers=\[\].*expected")
case("make/portfolio horizon beyond the data",
     lambda c: gym.make("DPFullInfo-Portfolio-v1", horizon=10**6), ValueError,
     r"^horizon=1000000 rejected: the price series has \d+ days; expected a horizon <= \d+$")
case("make/submodular n 0", lambda c: gym.make("DPFullInfo-Submodular-v1", n=0), ValueError,
     r"n=0 rejected")
accepted("make/birkhoff n 1", lambda c: gym.make("DPBandit-Birkhoff-v1", n=1),
         "one 1x1 permutation: a game without choice (regret 0), as one arm")


def _classes_long(ctx: Context) -> int:
    env = gym.make("DPBandit-Classes-v0", horizon=3 * 10**6)
    env.reset(seed=0)
    return len(env.unwrapped.adversary.order)


accepted("make/classes horizon of many passes", _classes_long,
         "the labelled ids cycle through their rows, one permutation per pass (documented "
         "in dp_online_envs.envs.real_data); the reset clips each row once")


def _classification_long(ctx: Context) -> int:
    env = gym.make("DPFullInfo-Classification-v0", horizon=10**6)
    env.reset(seed=0)
    return len(env.unwrapped.adversary.order)


accepted("make/classification horizon of many passes", _classification_long,
         "as the classes id: cycles, one permutation per pass")


# ====================================================================== env use
def _stepped(action: Any, env_id: str = "DPBandit-MAB-v0") -> Any:
    env = gym.make(env_id, horizon=5)
    env.reset(seed=0)
    return env.step(action)


case("env/step before reset", lambda c: gym.make("DPBandit-MAB-v0", horizon=5).step(0),
     gym.error.ResetNeeded, r"reset")
case("env/arm out of range", lambda c: _stepped(99), ValueError,
     r"^arm index 99 out of range: expected an integer in \[0, 10\)$")
case("env/arm -1", lambda c: _stepped(-1), ValueError,
     r"^arm index -1 out of range: expected an integer in \[0, 10\)$")
case("env/arm 1.5", lambda c: _stepped(1.5), ValueError,
     r"^action 1\.5 is not an arm index: expected an integer in \[0, 10\)$")
case("env/point of the wrong shape", lambda c: _stepped(np.zeros(3), "DPFullInfo-Sphere-v1"),
     ValueError, r"^action has shape \(3,\), expected \(10,\) for ball$")
case("env/point with NaN", lambda c: _stepped(np.full(10, np.nan), "DPFullInfo-Sphere-v1"),
     ValueError, r"nan|NaN|finite")
case("env/reset seed -1", lambda c: gym.make("DPBandit-MAB-v0").reset(seed=-1),
     gym.error.Error, r"^Seed must be greater or equal to zero, actual value: -1$")
case("env/reset seed 1.5", lambda c: gym.make("DPBandit-MAB-v0").reset(seed=1.5),
     gym.error.Error, r"^Seed must be a python integer, actual type: <class 'float'>$")

# ================================================================== gym.make_vec
upstream("make_vec/num_envs 0 sync", lambda c: gym.make_vec(
    "DPBandit-MAB-v0", num_envs=0, vectorization_mode="sync"), IndexError,
    r"^list index out of range$")
case("make_vec/num_envs 0 default", lambda c: gym.make_vec("DPBandit-MAB-v0", num_envs=0),
     ValueError, r"^num_envs=0 rejected: expected an integer >= 1$")
case("make_vec/num_envs -1", lambda c: gym.make_vec("DPBandit-MAB-v0", num_envs=-1),
     ValueError, r"^num_envs=-1 rejected: expected an integer >= 1$")
case("make_vec/num_envs 1.5", lambda c: gym.make_vec("DPBandit-MAB-v0", num_envs=1.5),
     ValueError, r"^num_envs=1\.5 rejected: expected an integer >= 1, got a float$")
upstream("make_vec/same for a Gymnasium id", lambda c: gym.make_vec(
    "CartPole-v1", num_envs=0, vectorization_mode="sync"), IndexError,
    r"^list index out of range$")
case("make_vec/unknown mode", lambda c: gym.make_vec("DPBandit-MAB-v0", num_envs=2,
                                                     vectorization_mode="threads"),
     ValueError, r"Invalid vectorization mode: 'threads'")
case("make_vec/option unknown", lambda c: gym.make_vec("DPBandit-MAB-v0", num_envs=2,
                                                       colour=1), TypeError, r"colour")
for _mode in ("sync", "vector_entry_point"):
    case(f"make_vec/horizon 2^53 + 1 {_mode}", lambda c, m=_mode: gym.make_vec(
        "DPBandit-MAB-v0", num_envs=2, vectorization_mode=m, horizon=OVER_HORIZON),
        ValueError, "^" + OVER_HORIZON_MESSAGE)


def _vector_venv(**options: Any) -> Any:
    from dp_online_envs.envs.vector_env import make_vector_env

    return make_vector_env(options.pop("num_envs", 2), "DPBandit-MAB-v0", horizon=10,
                           **options)


case("vector/num_envs 0", lambda c: _vector_venv(num_envs=0), ValueError,
     r"num_envs=0 rejected: expected an integer >= 1")
case("vector/horizon 2^53 + 1", lambda c: __import__(
    "dp_online_envs.envs.vector_env", fromlist=["make_vector_env"]).make_vector_env(
    2, "DPBandit-MAB-v0", horizon=OVER_HORIZON), ValueError, "^" + OVER_HORIZON_MESSAGE)
case("vector/adaptive adversary", lambda c: _vector_venv(adversary="adaptive"), ValueError,
     r"(adaptive|unknown adversary).*")
case("vector/block 0", lambda c: _vector_venv(block=0), ValueError, r"block=0 rejected")
case("vector/autoreset mode unknown", lambda c: _vector_venv(autoreset_mode="later"),
     ValueError, r"autoreset_mode='later'.*")
case("vector/reset with too few seeds", lambda c: _vector_venv().reset(seed=[1]), ValueError,
     r"1 seed.*2|seed=\[1\].*2")

# ================================================================== agents.make
case("agent/unknown name", lambda c: agents.make("exp4", _problem()), ValueError,
     r"unknown agent 'exp4'; did you mean 'exp3'\? registered: ")
case("agent/problem None", lambda c: agents.make("exp3", None), TypeError,
     r"problem must be a dp_online_envs\.Problem, got NoneType")
case("agent/private without epsilon", lambda c: agents.make("private-exp2", _problem()),
     ValueError, r"private-exp2 is a private learner: pass epsilon > 0")
case("agent/epsilon 0", lambda c: agents.make("private-exp2", _problem(), epsilon=0),
     ValueError, r"epsilon=0 rejected: expected a finite real number > 0")
case("agent/epsilon inf", lambda c: agents.make("private-exp2", _problem(), epsilon=np.inf),
     ValueError, r"epsilon=inf rejected: expected a finite real number > 0")
case("agent/delta 1", lambda c: agents.make("private-exp2", _problem(), epsilon=1, delta=1),
     ValueError, r"delta=1 rejected: expected a real number in \[0, 1\)")
case("agent/epsilon of a non-private agent", lambda c: agents.make("exp3", _problem(),
                                                                   epsilon=1),
     ValueError, r"exp3 is not private; it takes no epsilon")
case("agent/unknown option", lambda c: agents.make("exp3", _problem(), etta=1), TypeError,
     r"exp3 got unknown option\(s\) \['etta'\]; valid: ")
case("agent/seed -1", lambda c: agents.make("exp3", _problem(), seed=-1), ValueError,
     r"seed=-1 rejected: expected an integer >= 0")
case("agent/seed 1.5", lambda c: agents.make("exp3", _problem(), seed=1.5), ValueError,
     r"seed=1\.5 rejected: expected an integer >= 0")
case("agent/seed 'a'", lambda c: agents.make("exp3", _problem(), seed="a"), ValueError,
     r"seed='a' rejected: expected an integer >= 0")
case("agent/secure 'yes'", lambda c: agents.make("exp3", _problem(), secure="yes"),
     TypeError, r"secure must be True or False, got secure='yes'")
case("agent/full-information on a bandit problem",
     lambda c: agents.make("hedge", _problem()), ValueError,
     r"hedge needs full-information feedback, the env gives 'bandit'")
case("agent/counter unknown", lambda c: agents.make("private-ftrl",
                                                    _problem("DPFullInfo-Experts-v0"),
                                                    epsilon=1, counter="forest"),
     ValueError, r"^unknown counter name='forest'; choose one of \['agarwal-singh'")
case("agent/option of another agent", lambda c: agents.make("private-ftrl",
                                                            _problem("DPFullInfo-Experts-v0"),
                                                            epsilon=1, noise="pink"),
     TypeError, r"^private-ftrl got unknown option\(s\) \['noise'\]; valid: \['counter'")
case("agent/exp3 gamma -1", lambda c: agents.make("exp3", _problem(), gamma=-1), ValueError,
     r"gamma=-1 rejected: expected")
accepted("agent/hedge eta 0", lambda c: agents.make("hedge", _problem("DPFullInfo-Experts-v0"),
                                                    eta=0),
         "a zero learning rate is a setting (uniform play, a baseline), as for ftrl, exp3, "
         "online-fw and scrible; eta < 0 is refused")
case("agent/hedge eta -1", lambda c: agents.make("hedge", _problem("DPFullInfo-Experts-v0"),
                                                 eta=-1), ValueError,
     r"^eta=-1 rejected: expected a finite real number >= 0$")
case("agent/hedge eta nan", lambda c: agents.make("hedge", _problem("DPFullInfo-Experts-v0"),
                                                  eta=float("nan")), ValueError,
     r"eta=nan rejected: expected")
case("agent/arms agent on a sphere", lambda c: agents.make("exp3",
                                                           _problem("DPBandit-Linear-v1")),
     ValueError, r"exp3 .*(arms|simplex|decision set)")


# =========================================================== agents.play / batch
def _play(agent_problem: Any = None, seed: Any = 0, swap: bool = False,
          **options: Any) -> Any:
    env = build_env("DPBandit-MAB-v0", horizon=20)
    agent = agents.make("exp3", agent_problem or env.get_wrapper_attr("problem"))
    return (agents.play(agent, env, seed) if swap
            else agents.play(env, agent, seed=seed, **options))


case("play/agent for another problem", lambda c: _play(_problem(n_arms=3)), ValueError,
     r"^agent 'exp3' was built for another problem than the env's \(decision set: "
     r"Arms\(k=3\)")
case("play/seed -1", lambda c: _play(seed=-1), ValueError,
     r"seed=-1 rejected: expected an integer >= 0")
case("play/seed 'a'", lambda c: _play(seed="a"), ValueError,
     r"seed='a' rejected: expected an integer >= 0")
case("play/agent and env swapped", lambda c: _play(swap=True), TypeError,
     r"env must be .*got EXP3|agent.*env.*swapped")
case("play/env None", lambda c: agents.play(None, agents.make("exp3", _problem())),
     TypeError, r"env must be .*got NoneType")
case("play/agent_seed -1", lambda c: _play(agent_seed=-1), ValueError,
     r"^agent_seed=-1 rejected: expected an integer >= 0$")
case("play/agent_seed 1.5", lambda c: _play(agent_seed=1.5), ValueError,
     r"^agent_seed=1\.5 rejected: expected an integer >= 0, got a float$")


def _play_batch(seeds: Any = (0, 1), **options: Any) -> Any:
    from agents.vector import make_vector
    from dp_online_envs.envs.vector_env import make_vector_env

    venv = make_vector_env(2, "DPBandit-MAB-v0", horizon=10)
    agent_seeds = options.pop("agent_seeds", None)
    learner = make_vector("exp3", venv.problem, **options)
    return agents.play_batch(venv, learner, seeds, agent_seeds=agent_seeds)


case("play_batch/scalar agent", lambda c: agents.play_batch(
    gym.make_vec("DPBandit-MAB-v0", num_envs=2, horizon=10),
    agents.make("exp3", _problem()), [0, 1]), TypeError,
    r"learner must be a vector learner .*got EXP3")
case("play_batch/too few seeds", lambda c: _play_batch(seeds=[0]), ValueError,
     r"got 1 seeds for 2 games")
case("play_batch/seeds a number", lambda c: _play_batch(seeds=3), TypeError,
     r"seeds=3 .*expected a list")
case("play_batch/too few agent seeds", lambda c: _play_batch(agent_seeds=[5]), ValueError,
     r"^got 1 agent seeds for 2 games$")
case("play_batch/agent seeds a number", lambda c: _play_batch(agent_seeds=5), TypeError,
     r"^agent_seeds=5 rejected: expected a list of 2 seeds")
case("play_batch/agent seed -1", lambda c: _play_batch(agent_seeds=[0, -1]), ValueError,
     r"^agent_seed=-1 rejected: expected an integer >= 0$")
case("play_batch/vector form missing", lambda c: __import__(
    "agents.vector", fromlist=["make_vector"]).make_vector("thompson", _problem()),
    ValueError, r"'thompson' has no vector form; those with one: ")

# ======================================================== results tables and store
case("results/missing directory", lambda c: load_results(c.tmp / "none"), ExperimentError,
     r"results directory '.*none' does not exist")
case("results/a file", lambda c: load_results(c.file("r2.txt", "x")), ExperimentError,
     r"results directory '.*r2\.txt' is not a directory")
case("results/records not mappings", lambda c: load_results([1, 2]), ExperimentError,
     r"records\[0\] is not a game record: ")
case("results/a number", lambda c: load_results(5), (ExperimentError, TypeError),
     r"source=5|got int|5 .*expected")
case("results/records missing keys", lambda c: load_curves([{"game_id": "x"}]),
     ExperimentError, r"records\[0\] is not a game record: no schema_version")
accepted("results/empty list", lambda c: load_results([]),
         "documented: records given as a list are used as given; none gives an empty table")
case("store/a file as root", lambda c: ResultsStore(c.file("r3.txt", "x")).prepare(),
     ExperimentError, r"results directory '.*r3\.txt' is not usable: .*not a directory")
case("run_sweep/unknown backend", lambda c: run_sweep(SWEEP, results=c.tmp / "rb",
                                                      backend="threads", quiet=True),
     ExperimentError, r"backend 'threads'|backend='threads'")
case("run_sweep/workers 0", lambda c: run_sweep(SWEEP, results=c.tmp / "rw", backend="local",
                                                workers=0, quiet=True),
     (ExperimentError, ValueError), r"workers=0 rejected: expected an integer >= 1")
case("run_sweep/not a mapping", lambda c: run_sweep([SWEEP], results=c.tmp / "rn",
                                                    quiet=True),
     ExperimentError, r"^sweep=\[\{'name': 's', .*\] rejected: expected a Sweep, a sweep "
     r"mapping or the path of a sweep file$")
case("export/one file for both tables", lambda c: export_results(
    c.results, c.tmp / "same.csv", curves=c.tmp / "same.csv"), ExperimentError,
    r"would both be written to")


# =================================================== what a learner holds, and more
#: The longest game, and what a longer one is told.
TOO_LONG = r"rejected: expected an integer in \[1, 2\*\*53\] \(the longest game"
case("learner/set a domain attribute", lambda c: setattr(
    _problem("DPFullInfo-Sphere-v1").domain, "radius", 1e-9), AttributeError,
    r"^cannot set Ball\.radius: the decision set a learner receives is a read-only view "
    r"of the env's; a game is configured when the env is made")
case("learner/delete a loss attribute", lambda c: delattr(
    _problem("DPFullInfo-Sphere-v1").loss, "theta_set"), AttributeError,
    r"^cannot set LinearLoss\.theta_set: the loss family a learner receives is a "
    r"read-only view")
case("learner/set a problem field", lambda c: setattr(_problem(), "horizon", 5),
     AttributeError, r"^cannot assign to field 'horizon'$")
case("make/horizon 2**63", lambda c: gym.make("DPBandit-MAB-v0", horizon=2**63), ValueError,
     r"^horizon=9223372036854775808 " + TOO_LONG)
case("make/horizon 10**30", lambda c: gym.make("DPBandit-MAB-v0", horizon=10**30),
     ValueError, r"^horizon=10{30} " + TOO_LONG)
case("vector/horizon 2**63", lambda c: __import__(
    "dp_online_envs.envs.vector_env", fromlist=["LinearVectorEnv"]).LinearVectorEnv(
        "DPBandit-MAB-v0", 2, horizon=2**63), ValueError, r"^horizon=9223372036854775808 "
     + TOO_LONG)
case("run/horizon 2**63", lambda c: c.cli("run", "DPBandit-MAB-v0", "exp3", "--horizon",
                                          str(2**63)), CliError,
     r"horizon=9223372036854775808 " + TOO_LONG)


def _step(env_id: str, action: Any, **options: Any) -> Any:
    env = gym.make(env_id, horizon=5, **options)
    env.reset(seed=0)
    return env.step(action)


case("env/complex point, invalid_action='raise'", lambda c: _step(
    "DPFullInfo-Sphere-v1", np.full(10, 0.1j), invalid_action="raise"), ValueError,
    r"^action is complex \(complex128\); expected real numbers \(a point of the ball")
case("env/complex point, projected", lambda c: _step("DPFullInfo-Sphere-v1", np.full(10, 0.1j)),
     ValueError, r"^action is complex \(complex128\); expected real numbers")
case("env/complex arm", lambda c: _step("DPBandit-MAB-v0", 1 + 1j), ValueError,
     r"^action is complex \(complex128\); expected real numbers \(a point of the arms")


def _adversary_sweep(options: dict[str, Any]) -> dict[str, Any]:
    return {**SWEEP, "envs": [{"id": "DPBandit-MAB-v0", "kwargs": {
        "adversary": "stochastic", "adversary_kwargs": options}}], "agents": ["exp3"]}


case("sweep/adversary mean of another length", lambda c: _sweep_cli(
    c, _adversary_sweep({"mean": [0.1, 0.2]})), CliError,
    r"^dp-online sweep: error: .*DPBandit-MAB-v0 with options .*: mean has shape \(2,\), "
    r"expected \(10,\)$")
case("sweep/adversary mean outside the box", lambda c: _sweep_cli(
    c, _adversary_sweep({"mean": [0.5] * 9 + [2.0]})), CliError,
    r"mean is not an admissible parameter of the loss family$")
case("sweep/adversary option unknown", lambda c: _sweep_cli(
    c, _adversary_sweep({"bogus": 1})), CliError, r"unexpected keyword argument 'bogus'$")


def _record(ctx: Context, **changes: Any) -> dict[str, Any]:
    [record, *_] = load_records(ctx.results)
    return {**record, **changes}


case("results/a record changed after it was written", lambda c: load_results(
    [_record(c, epsilon=2.0)]), ExperimentError,
    r"^records\[0\] is not a game record: game_id '\w+' is not the hash of the record's "
    r"settings \('\w+'\): the record was changed after it was written")
case("results/a seed changed after it was written", lambda c: load_results(
    [_record(c, env_seed=7)]), ExperimentError,
    r"env_seed 7 is not the seed of the record's settings")
case("results/regret NaN", lambda c: load_results([_record(c, regret=float("nan"))]),
     ExperimentError, r"regret=nan, expected a finite number")
case("results/true for an integer", lambda c: load_results([_record(c, horizon=True)]),
     ExperimentError, r"horizon=True, expected an integer")


def _special(ctx: Context, kind: str, name: str) -> pathlib.Path:
    """A FIFO, or a link to a file that must stay, named ``name`` in a fresh directory."""
    import os
    import tempfile

    path = pathlib.Path(tempfile.mkdtemp(dir=ctx.tmp)) / name
    if kind == "fifo":
        os.mkfifo(path)
    else:
        target = path.with_name("keep.txt")
        target.write_text("keep me")
        path.symlink_to(target)
    return path


case("report/-o a FIFO", lambda c: c.cli("report", c.results, "--no-reference", "-o",
                                         _special(c, "fifo", "r.html")), CliError,
     r"^dp-online report: error: refusing to write '.*r\.html': it is a FIFO")
case("report/-o a symbolic link", lambda c: c.cli(
    "report", c.results, "--no-reference", "-o", _special(c, "link", "r.html")), CliError,
    r"refusing to write '.*r\.html': it is a symbolic link")
case("export/-o a FIFO", lambda c: c.cli("export", c.results, "-o",
                                         _special(c, "fifo", "t.csv")), CliError,
     r"^dp-online export: error: refusing to write '.*t\.csv': it is a FIFO")
case("report/-o a name over the limit", lambda c: c.cli(
    "report", c.results, "--no-reference", "-o", c.tmp / ("r" * 300 + ".html")), CliError,
    r"its name is 305 bytes, longer than the 255 the file system takes")
accepted("report/-o a 250-character name", lambda c: c.cli(
    "report", c.results, "--no-reference", "-o", c.tmp / ("r" * 245 + ".html")),
    "a legal name: the temporary file gets a name of its own")


def _games_with(ctx: Context, kind: str) -> Any:
    """Read a copy of the results whose ``games/`` also holds a FIFO or a link to
    ``/dev/zero`` named like a record: skipped with a warning, never opened."""
    import os
    import shutil
    import tempfile

    root = pathlib.Path(tempfile.mkdtemp(dir=ctx.tmp)) / "results"
    shutil.copytree(ctx.results, root)
    odd = root / "games" / ("0" * 24 + ".json")
    if kind == "fifo":
        os.mkfifo(odd)
    else:
        odd.symlink_to("/dev/zero")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ctx.cli("export", root, "-o", root / "t.csv")


accepted("run/a results directory of a 250-character name", lambda c: c.cli(
    "run", "DPBandit-MAB-v0", "exp3", "--horizon", "20", "--seeds", "1", "--backend",
    "serial", "--quiet", "--results", c.tmp / ("d" * 250)),
    "a legal name: records and temporary files get short names of their own")
accepted("plot/a results directory of a 250-character name", lambda c: c.cli(
    "plot", __import__("shutil").copytree(c.results, c.tmp / ("p" * 250))),
    "a legal name: each figure is written under a short name of its own")


def _sweep_over_a_fifo(ctx: Context) -> Any:
    """A sweep into a results directory whose ``games/`` holds a FIFO named like a
    record: set aside with a warning (never opened), its game played."""
    import os

    root = ctx.tmp / "fifo-sweep"
    (root / "games").mkdir(parents=True)
    os.mkfifo(root / "games" / ("0" * 24 + ".json"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_sweep(SWEEP, results=root, backend="serial", quiet=True)


accepted("sweep/a FIFO in games/", _sweep_over_a_fifo,
         "set aside with a warning, never opened: a FIFO cannot hang a sweep")
accepted("results/a FIFO in games/", lambda c: _games_with(c, "fifo"),
         "skipped with a warning, never opened: a FIFO cannot hang a reader")
accepted("results/a link to /dev/zero in games/", lambda c: _games_with(c, "zero"),
         "skipped with a warning, never read: a device cannot fill the memory")


def _mixed_parquet(ctx: Context) -> Any:
    root = ctx.tmp / "mixed"
    run_sweep({**SWEEP, "name": "mixed", "envs": ["DPBandit-MAB-v0"],
               "agents": ["exp3", "private-exp2"], "epsilons": [1.0], "seeds": 1},
              results=root, backend="serial", quiet=True)
    return export_results(root, ctx.tmp / "mixed.parquet")


accepted("export/parquet of mixed option types", _mixed_parquet,
         "an option column of mixed types (exp3's and private-exp2's gamma) is written as "
         "text")


# ======================================================================= checks
def verdict(case: Case, kind: str, message: str) -> str:
    """``clean``, ``silent``, ``vague``, ``traceback`` or ``hang`` for one outcome."""
    if kind == "HANG":
        return "hang"
    if case.error is None:
        return "clean" if kind == "accepted" else "refused"
    if case.upstream:
        return "upstream"
    if kind == "accepted":
        return "silent"
    errors = case.error if isinstance(case.error, tuple) else (case.error,)
    if kind in {e.__name__ for e in errors} and re.search(case.message, message):
        return "clean"
    if kind in ("ValueError", "TypeError", "ExperimentError", "CliError", "Error",
                "ResetNeeded", "InvalidAction", "SystemExit"):
        return "vague"
    return "traceback"


@pytest.fixture(scope="module")
def ctx(tmp_path_factory) -> Context:
    return Context.build(tmp_path_factory.mktemp("survey"))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(ctx, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        if case.error is None:
            case.call(ctx)
            return
        with pytest.raises(case.error) as caught:
            case.call(ctx)
    assert re.search(case.message, str(caught.value)), str(caught.value)


def test_the_survey_is_wide():
    """At least 100 cases, over every door."""
    doors = {c.id.split("/")[0] for c in CASES}
    assert len(CASES) >= 100
    assert {"run", "sweep", "plot", "report", "export", "assignment", "grade", "make",
            "make_vec", "agent", "play", "play_batch", "results"} <= doors


if __name__ == "__main__":  # the survey: every case's outcome, not asserted
    import tempfile

    def _hang(*_: Any) -> None:
        raise TimeoutError

    signal.signal(signal.SIGALRM, _hang)
    context = Context.build(pathlib.Path(tempfile.mkdtemp()))
    counts: dict[str, int] = {}
    for c in CASES:
        if sys.argv[1:] and not any(s in c.id for s in sys.argv[1:]):
            continue
        signal.alarm(120)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                c.call(context)
            kind, text = "accepted", ""
        except TimeoutError:
            kind, text = "HANG", ""
        except BaseException as exc:  # noqa: BLE001 - the survey reports every outcome
            kind, text = type(exc).__name__, " ".join(str(exc).split())
        finally:
            signal.alarm(0)
        v = verdict(c, kind, text)
        counts[v] = counts.get(v, 0) + 1
        print(f"{v:9} {c.id:50} {kind}: {text[:300]}", flush=True)
    print(counts)
