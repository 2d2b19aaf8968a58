"""``dp-online``: list, run, sweep, plot and report from the command line.

::

    dp-online list
    dp-online run DPFullInfo-Experts-v0 private-ftrl --epsilon 0.5 1 2 --horizon 2000 --seeds 5
    dp-online sweep examples/sweeps/price_of_privacy.yaml [--results DIR] [--backend local|dask]
                    [--scheduler tcp://HOST:PORT] [--workers N] [--quiet]
    dp-online plot RESULTS [-o DIR]
    dp-online report RESULTS -o report.html
    dp-online export RESULTS -o results.parquet [--curves FILE]
    dp-online grade ASSIGNMENT SUBMISSIONS... [-o OUTDIR] [--workers N] [--quiet]
    dp-online --version

Bad input (unknown env id or agent, an agent the env cannot serve, ``epsilon <= 0``, a
malformed sweep file) is reported in one line naming the bad value and the valid
choices, with exit status 2 and no traceback.

Ctrl-C (SIGINT) stops ``run`` and ``sweep`` within a couple of seconds with exit status
130 and no traceback, a second Ctrl-C included: the games in flight are abandoned, their
worker processes are stopped, and every finished game stays in the results directory,
so the same command resumes.

Each command imports what it uses when it runs (the experiments' modules, grading, the
audit), so ``dp-online --help`` starts about as fast as ``import gymnasium``
(benchmarks/cli_startup.py); ``dp-online --version`` is answered before any of them, by
the package's first lines (:func:`dp_online_envs.startup.answer_version_early`).

This module is the composition root of the experiments: it hands the agent registry
(:func:`~dp_online_envs.lab.experiments.resolver.default_resolver`) to every command that
resolves agent names; the rest of :mod:`dp_online_envs.lab.experiments` takes it as an
argument.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import re
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import dp_online_envs  # registers the env ids
from dp_online_envs.envs.registry import ENV_CONFIGS, ENV_IDS, FORMER_IDS, env_config
from dp_online_envs.lab.experiments.backends import BACKENDS, default_workers
from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.game import IDEALIZED_NOTE
from dp_online_envs.lab.experiments.resolver import default_resolver, resolve_agent
from dp_online_envs.lab.experiments.store import (
    DamagedResultWarning,
    ResultsStore,
    load_records,
    storage_error,
)
from dp_online_envs.lab.isolation import MAX_LIMIT, IsolationLimits
from dp_online_envs.startup import EXIT_INTERRUPTED, restore_default_interrupt
from dp_online_envs.validation import check_int, check_real

EXIT_USAGE = 2
EXIT_FAILED = 1
#: The location prefix of a sweep error about the settings of ``dp-online run``.
_CLI_LOCATION = re.compile(r"^command line: ((envs|agents)\[0\]|horizons|seeds|delta|epsilons): "
                           r"|^command line: ")


def _parse_option(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"{text!r}: expected KEY=VALUE")
    key, _, raw = text.partition("=")
    try:  # PyYAML is an optional extra; without it the value stays text
        import yaml

        value = yaml.safe_load(raw)
    except Exception:  # noqa: BLE001 - not YAML: keep the text
        value = raw
    return key.strip(), value


def _read_number(text: str) -> int | float | str:
    """An option's text as an int, else a float, else the text itself (which the check
    then refuses, naming its type)."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _option(check: Callable[..., Any], name: str, *bounds: Any, **options: Any
            ) -> Callable[[str], Any]:
    """An argparse ``type=`` running ``check(name, number, *bounds, **options)``, a check
    of :mod:`dp_online_envs.validation`, on the option's text read as a number.

    A refused value becomes argparse's usage error with the module's message (argparse
    shows the message of an ArgumentTypeError only), e.g. ``argument --horizon:
    horizon=1.5 rejected: expected an integer >= 1, got a float``.
    """
    def convert(text: str) -> Any:
        try:
            return check(name, _read_number(text), *bounds, **options)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = name  # argparse names the type in some of its messages
    return convert


def package_version() -> str:
    """The version of dp-online-envs: ``dp_online_envs.__version__``, read from the
    installed distribution's metadata (``0+unknown`` in a checkout never installed) by
    :func:`dp_online_envs.startup.installed_version`, as ``dp-online --version`` prints it."""
    return dp_online_envs.__version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (sub-commands list, run, sweep, plot, report, export, grade)."""
    p = argparse.ArgumentParser(
        prog="dp-online",
        description="Differentially private online learning: how much regret does privacy cost?")
    p.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("list", help="env ids and agents")
    s.add_argument("--json", action="store_true", help="machine-readable output")

    s = sub.add_parser("run", help="play games of one env and agent and print the regret")
    s.add_argument("env", metavar="ENV", help="a registered env id (see 'dp-online list')")
    s.add_argument("agent", metavar="AGENT", help="a registered agent, or module:Class")
    s.add_argument("--epsilon", type=_option(check_real, "epsilon"), nargs="+", metavar="E",
                   help="privacy parameter(s) of a private agent (> 0)")
    s.add_argument("--delta", type=_option(check_real, "delta"), default=0.0,
                   help="privacy delta (default 0)")
    s.add_argument("--horizon", type=_option(check_int, "horizon", 1), nargs="+",
                   default=[1000], metavar="T", help="rounds per game (default 1000)")
    s.add_argument("--seeds", type=_option(check_int, "seeds", 1), default=5,
                   help="games per setting (default 5)")
    s.add_argument("--env-option", type=_parse_option, action="append", default=[],
                   metavar="KEY=VALUE", help="an env option, e.g. n_arms=20 (repeatable)")
    s.add_argument("--agent-option", type=_parse_option, action="append", default=[],
                   metavar="KEY=VALUE", help="an agent option, e.g. counter=tree (repeatable)")
    s.add_argument("--results", metavar="DIR", help="also write the records to DIR")
    _backend_args(s)
    _isolation_args(s)
    s.add_argument("--json", action="store_true", help="print the records as JSON lines")
    s.add_argument("--no-reference", action="store_true",
                   help="do not also play the 'center' reference agent (trivial play) on the "
                        "same games")

    s = sub.add_parser("sweep", help="run a sweep file (resumes where it stopped)")
    s.add_argument("file", metavar="FILE", help="sweep file (.yaml, .yml, .toml or .json)")
    s.add_argument("--results", metavar="DIR",
                   help="results directory (default: the file's 'results', else results/NAME)")
    _backend_args(s)
    _isolation_args(s)
    s.add_argument("--dry-run", action="store_true", help="validate and count, play nothing")

    s = sub.add_parser("plot", help="draw the figures of a results directory (PNG and SVG)")
    s.add_argument("results", metavar="RESULTS", help="results directory")
    s.add_argument("-o", "--out", metavar="DIR", help="output directory (default RESULTS/plots)")
    s.add_argument("--format", nargs="+", default=["png", "svg"], choices=["png", "svg", "pdf"])

    s = sub.add_parser("report", help="write a self-contained HTML report")
    s.add_argument("results", metavar="RESULTS", help="results directory")
    s.add_argument("-o", "--out", metavar="FILE", help="output file (default RESULTS/report.html)")
    s.add_argument("--title", help="report title")
    s.add_argument("--no-reference", action="store_true",
                   help="do not play the 'center' reference agent (trivial play) on the seeds "
                        "where the results lack one (by default its games are played and kept "
                        "in RESULTS)")
    s.add_argument("--all-horizons", action="store_true",
                   help="the headline table at every horizon (default: each env's largest)")

    s = sub.add_parser("export", help="write the results as a table (.parquet or .csv)")
    s.add_argument("results", metavar="RESULTS", help="results directory")
    s.add_argument("-o", "--out", metavar="FILE", required=True,
                   help="one row per game: FILE.parquet or FILE.csv")
    s.add_argument("--curves", metavar="FILE",
                   help="one row per game x checkpoint (default: FILE's stem + '_curves')")

    s = sub.add_parser("grade", help="grade course submissions (isolated, hidden seeds, "
                                     "privacy audit) and write their reports",
                       description="Grade course submissions: each plays the assignment's "
                                   "games on hidden seeds in its own sandboxed processes and "
                                   "is audited; reports go to OUTDIR, one per submission as "
                                   "soon as it is graded. A rerun keeps the grades of "
                                   "submissions whose file and assignment are unchanged.",
                       epilog="The hidden seeds are keyed by the instructor's secret, read "
                              "from the environment variable the assignment's "
                              "'secret: {env: NAME}' names (default "
                              "DP_ONLINE_GRADE_SECRET); never share it with students.")
    s.add_argument("assignment", metavar="ASSIGNMENT", help="assignment file (.yaml, .toml, .json)")
    s.add_argument("submissions", metavar="SUBMISSIONS", nargs="+",
                   help=".py files with one agents.Agent subclass each, or directories of them")
    s.add_argument("-o", "--out", metavar="OUTDIR",
                   help="reports directory (default: grades/ASSIGNMENT-NAME)")
    s.add_argument("--workers", type=_option(check_int, "workers", 1), metavar="N",
                   help="submissions graded in parallel, each with its audit, in N "
                        "processes (one submission: its games spread over them; default 1)")
    s.add_argument("--quiet", action="store_true", help="no progress lines")
    s.add_argument("--regrade", action="store_true",
                   help="grade every submission again, even those unchanged since their "
                        "stored grade")
    s.add_argument("--unsafe-no-sandbox", action="store_true",
                   help="grade in plain processes when the bubblewrap sandbox cannot start "
                        "(submissions can then read the grader's files and processes)")
    _leaderboard_parser(sub)
    return p


# ------------------------------------------------------------------ leaderboard
#: The environment variable holding the leaderboard's secret (keys the hidden seeds).
LEADERBOARD_SECRET_ENV = "DP_ONLINE_LEADERBOARD_SECRET"


def _leaderboard_parser(sub: Any) -> None:
    """The ``leaderboard`` sub-command's arguments."""
    s = sub.add_parser(
        "leaderboard", help="score learners on the benchmark (audited privacy) and write "
                            "its page",
        description="Play learners (registered names, or .py files with one agents.Agent "
                    "subclass, sandboxed and isolated as in grading) on the benchmark's games "
                    "on hidden seeds, audit their privacy claims, and write one static HTML "
                    "page with CSV/Parquet scores. Reruns reuse the stored games.",
        epilog=f"The hidden seeds are keyed by the secret in ${LEADERBOARD_SECRET_ENV} (or "
               "--secret-env VAR); the same secret gives the same page byte for byte.")
    s.add_argument("learners", metavar="LEARNER", nargs="*",
                   help="registered names or .py files (default: every registered learner)")
    s.add_argument("--results", metavar="DIR", required=True,
                   help="results directory (games and audits; a rerun resumes)")
    s.add_argument("-o", "--out", metavar="OUTDIR", required=True, help="page directory")
    s.add_argument("--secret-env", metavar="VAR", default=LEADERBOARD_SECRET_ENV,
                   help=f"environment variable holding the secret (default "
                        f"{LEADERBOARD_SECRET_ENV})")
    s.add_argument("--ids", nargs="+", metavar="ID", help="score these ids only (a subset: "
                   "the page says so)")
    s.add_argument("--horizons", nargs="+", type=_option(check_int, "horizon", 1), metavar="T",
                   help="horizons (a subset of the benchmark's: the page says so)")
    s.add_argument("--seeds", type=_option(check_int, "seeds", 2), metavar="N",
                   help="hidden seeds per id and horizon")
    s.add_argument("--epsilons", nargs="+", type=_option(check_real, "epsilon"), metavar="E")
    s.add_argument("--audit-horizon", type=_option(check_int, "audit_horizon", 1), metavar="T")
    s.add_argument("--audit-games", type=_option(check_int, "audit_games", 1), metavar="N")
    s.add_argument("--timeout", type=_option(check_real, "timeout", 0.0, low_inclusive=False),
                   default=10.0, metavar="S", help="seconds a submission may take per call")
    s.add_argument("--unsafe-no-sandbox", action="store_true",
                   help="play .py learners in plain processes when the sandbox cannot start")
    _backend_args(s)


def cmd_leaderboard(args: argparse.Namespace) -> int:
    """``dp-online leaderboard``: play, score, audit, write the page."""
    import dataclasses as _dc

    from dp_online_envs.lab.grading.grader import sandbox_mode
    from dp_online_envs.lab.leaderboard import (
        build_board,
        default_benchmark,
        load_learners,
        write_board,
    )

    secret = os.environ.get(args.secret_env, "")
    if not secret:
        raise ExperimentError(f"secret: environment variable {args.secret_env} is not set or "
                              "empty (it keys the hidden seeds)")
    changes = {k: tuple(v) if isinstance(v, list) else v
               for k, v in (("ids", args.ids), ("horizons", args.horizons),
                            ("seeds", args.seeds), ("epsilons", args.epsilons),
                            ("audit_horizon", args.audit_horizon),
                            ("audit_games", args.audit_games)) if v is not None}
    unknown = [i for i in changes.get("ids", ()) if i not in ENV_IDS]
    if unknown:
        raise ExperimentError(f"--ids: {unknown} are not benchmark ids; expected some of "
                              f"{list(ENV_IDS)}")
    try:
        benchmark = _dc.replace(default_benchmark(), **changes)
    except ValueError as exc:
        raise ExperimentError(str(exc)) from None
    names = args.learners or [n for n in default_resolver().names() if n != "center"]
    sandboxed = sandbox_mode(args.unsafe_no_sandbox) if any(
        n.endswith(".py") for n in names) else True
    limits = IsolationLimits(timeout=args.timeout)
    learners = load_learners(names, limits=limits, sandboxed=sandboxed)
    with interrupt_once():
        board = build_board(learners, benchmark, results=pathlib.Path(args.results),
                            secret=secret, backend=args.backend, workers=args.workers,
                            quiet=args.quiet, progress=None if args.quiet else _progress_line)
    out = write_board(board, args.out)
    print(f"leaderboard: {out / 'index.html'} ({len(board.rows)} rows); scores: "
          f"{out / 'scores.csv'}")
    return 0


def _isolation_args(s: argparse.ArgumentParser) -> None:
    s.add_argument("--isolate", action="store_true",
                   help="play each agent in its own spawned process (untrusted agents)")
    s.add_argument("--timeout", type=_option(check_real, "timeout", 0.0, low_inclusive=False),
                   metavar="S",
                   help="with --isolate: seconds an agent may take per call (default 10)")
    s.add_argument("--memory-mb", type=_option(check_int, "memory_mb", 1, MAX_LIMIT >> 20),
                   metavar="MB",
                   help="with --isolate: address-space limit of the agent's process")
    s.add_argument("--cpu-seconds", type=_option(check_int, "cpu_seconds", 1, MAX_LIMIT),
                   metavar="S",
                   help="with --isolate: CPU seconds the agent may spend, building it and "
                        "playing (the process's imports before the limit are not counted)")
    s.add_argument("--seed-secret-env", metavar="VAR",
                   help="mix the secret in environment variable VAR into every game's seeds")


def _isolation(args: argparse.Namespace) -> dict[str, Any]:
    """``run_games`` keyword arguments from the isolation options."""
    secret = None
    if args.seed_secret_env:
        secret = os.environ.get(args.seed_secret_env)
        if not secret:
            raise ExperimentError(f"--seed-secret-env {args.seed_secret_env}: that environment "
                                  "variable is not set or empty")
    isolate: Any = False
    if args.isolate:
        mb = args.memory_mb
        isolate = IsolationLimits(memory_bytes=None if mb is None else mb * 2**20,
                                  cpu_seconds=args.cpu_seconds,
                                  **({} if args.timeout is None else {"timeout": args.timeout}))
    else:
        given = [flag for flag, value in (("--timeout", args.timeout),
                                          ("--memory-mb", args.memory_mb),
                                          ("--cpu-seconds", args.cpu_seconds)) if value is not None]
        if given:
            raise ExperimentError(f"{' and '.join(given)} limit{'s' if len(given) == 1 else ''} "
                                  "an isolated agent: add --isolate")
    return {"isolate": isolate, "seed_secret": secret}


def _backend_args(s: argparse.ArgumentParser) -> None:
    s.add_argument("--backend", choices=BACKENDS, default="local",
                   help="local processes (default), dask, or serial")
    s.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="Dask scheduler (with --backend dask; default: a local cluster)")
    s.add_argument("--workers", type=_option(check_int, "workers", 1), metavar="N",
                   help="worker processes (default: the CPUs available)")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.add_argument("--vectorize", action="store_true",
                   help="play the seeds of a setting together where a vector path "
                        "exists (same records; docs/vector.md)")


# ------------------------------------------------------------------ commands
def cmd_list(args: argparse.Namespace) -> int:
    resolver = default_resolver()
    # The benchmark ids (ENV_IDS); games that do not separate (registry.UNLISTED_IDS)
    # are built by id but not listed, and former versions (registry.FORMER_IDS) are
    # named on one line.
    envs = [{"id": c.id, "decision_set": c.decision_set, "losses": c.losses,
             "feedback": c.feedback, "paper": c.paper}
            for c in ENV_CONFIGS.values() if c.id in ENV_IDS]
    ags = []
    for name in resolver.names():
        cls = resolver.resolve(name)
        ags.append({"name": name, "feedback": cls.feedback,
                    "privacy": "private" if cls.private else "non-private",
                    "paper": cls.paper, "description": cls.description})
    if args.json:
        print(json.dumps({"envs": envs, "former_envs": list(FORMER_IDS), "agents": ags},
                         indent=2))
        return 0
    print(f"Environments ({len(envs)}):")
    w = max(len(e["id"]) for e in envs)
    wd = max(len(e["decision_set"]) for e in envs)
    wl = max(len(e["losses"]) for e in envs)
    print(f"  {'id':<{w}}  {'decision set':<{wd}}  {'losses':<{wl}}  feedback")
    for e in envs:
        print(f"  {e['id']:<{w}}  {e['decision_set']:<{wd}}  {e['losses']:<{wl}}  {e['feedback']}")
    print(f"Former versions (the game they played before, not benchmarks): "
          f"{', '.join(FORMER_IDS)}")
    print(f"\nAgents ({len(ags)}):")
    w = max(len(a["name"]) for a in ags)
    print(f"  {'name':<{w}}  feedback  privacy      paper")
    for a in ags:
        print(f"  {a['name']:<{w}}  {a['feedback']:<8}  {a['privacy']:<11}  {a['paper']}")
    print("\nA bandit agent can play a full-information env (its feedback is downgraded); "
          "a full-information agent cannot play a bandit env.")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from dp_online_envs.lab.experiments import analysis
    from dp_online_envs.lab.experiments.runner import run_games
    from dp_online_envs.lab.experiments.sweep import parse_sweep

    resolver = default_resolver()
    try:
        env_config(args.env)
    except ValueError as exc:
        raise ExperimentError(str(exc)) from None
    cls = resolve_agent(args.agent, resolver)
    if cls.private and not args.epsilon:
        raise ExperimentError(f"agent {args.agent!r} is private: pass --epsilon E (a number > 0)")
    # trivial play on the same games, for comparison (what not learning costs)
    reference = [] if args.agent in analysis.REFERENCE_AGENTS or args.no_reference else [
        {"name": analysis.REFERENCE_AGENTS[0]}]
    data: dict[str, Any] = {
        "name": "run",
        "envs": [{"id": args.env, "kwargs": dict(args.env_option)}],
        "agents": [{"name": args.agent, "kwargs": dict(args.agent_option)}, *reference],
        "horizons": args.horizon, "seeds": args.seeds, "delta": args.delta,
    }
    if cls.private:
        data["epsilons"] = args.epsilon
    try:
        sweep = parse_sweep(data, source="command line", resolver=resolver)
    except ExperimentError as exc:  # one env and one agent: the sweep's locations are noise
        raise ExperimentError(_CLI_LOCATION.sub("", str(exc))) from None
    if not cls.private:  # warned once the options are valid
        given = [flag for flag, value in (("--epsilon", args.epsilon),
                                          ("--delta", args.delta)) if value]
        if given:
            print(f"dp-online run: warning: {args.agent!r} is not private: "
                  f"{' and '.join(given)} ignored (its games are non-private)", file=sys.stderr)
    isolation = _isolation(args)
    with interrupt_once():
        report = run_games(sweep.games, results=args.results, backend=args.backend,
                           workers=args.workers, scheduler=args.scheduler, quiet=args.quiet,
                           desc=f"{args.agent} on {args.env}", vectorize=args.vectorize,
                           **isolation)
    if args.json:
        for r in report.records:
            print(json.dumps(r))
    else:
        rows = analysis.summary(report.records)
        print(f"{args.agent} on {args.env} ({report.played} games played, {report.reused} "
              f"reused, {report.seconds:.1f} s)")
        print(f"  {'T':>7}  {'privacy':<32} {'seeds':>5}  final regret: mean [95% CI]")
        trivial = {r["horizon"]: r for r in rows if r["reference"] and r["agent"] != args.agent}
        rows = [r for r in rows if r["agent"] == args.agent]
        for r in rows:
            interval = "" if r["exact"] else (f"  (certified interval [{r['regret_lo_mean']:.4g}, "
                                             f"{r['regret_hi_mean']:.4g}])")
            # A class that declares no guarantee only had epsilon requested of it.
            shown = r["privacy"] + (" requested" if str(r["guarantee"]).endswith("(requested)")
                                    else "")
            print(f"  {r['horizon']:>7}  {shown:<32} {r['n']:>5}  {r['regret_mean']:.4g} "
                  f"[{r['regret_ci_lo']:.4g}, {r['regret_ci_hi']:.4g}]{interval}")
        for h, r in sorted(trivial.items()):
            print(f"  {h:>7}  {r['agent'] + ' (no learning)':<32} {r['n']:>5}  "
                  f"{r['regret_mean']:.4g} [{r['regret_ci_lo']:.4g}, {r['regret_ci_hi']:.4g}]")
        if report.records and report.records[0].get("privacy_mechanism"):
            print(f"  guarantee: {report.records[0]['privacy_mechanism']}")
            if any(r["idealized"] for r in rows):
                print(f"  {IDEALIZED_NOTE}")
        elif report.records and str(report.records[0].get("privacy")).endswith("(requested)"):
            print("  guarantee: none declared (the class is marked private but has no "
                  "`privacy`; epsilon was only requested of it)")
    return _failures(report)


def cmd_sweep(args: argparse.Namespace) -> int:
    from dp_online_envs.lab.experiments.runner import run_sweep
    from dp_online_envs.lab.experiments.sweep import load_sweep

    sweep = load_sweep(args.file, resolver=default_resolver())
    root = pathlib.Path(args.results or sweep.results or pathlib.Path("results") / sweep.name)
    store = ResultsStore(root)
    problem = store.problem()
    if problem:
        raise ExperimentError(f"results directory {str(root)!r} is not usable: {problem} "
                              "(expected a writable directory)")
    isolation = _isolation(args)
    done = [r for r in store.scan() if sweep.includes(r)]  # never lists the sweep's games
    where = (f"dask ({args.scheduler or 'local cluster'})" if args.backend == "dask"
             else "this process" if args.backend == "serial"
             else f"{args.workers or default_workers()} local processes")
    say = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr))
    say(f"sweep {sweep.name!r}: {len(sweep)} games, {len(done)} already in {root}, "
        f"{len(sweep) - len(done)} to play on {where}")
    for s in sweep.skipped:
        say(f"  skipped {s}")
    if args.dry_run:
        print(f"{len(sweep)} games ({len(done)} done) -> {root}")
        return 0
    try:
        with interrupt_once():
            report = run_sweep(sweep, results=root, backend=args.backend,
                               workers=args.workers, scheduler=args.scheduler, quiet=args.quiet,
                               vectorize=True if args.vectorize else None, **isolation)
    except KeyboardInterrupt:
        kept = len(ResultsStore(root).finished() & {g.game_id for g in sweep.games})
        print(f"{_after_ctrl_c()}interrupted: {kept} of {len(sweep)} games finished, results "
              f"kept in {root}; re-run to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(f"{report.played} games played, {report.reused} reused, {len(report.failures)} failed "
          f"in {report.seconds:.1f} s -> {root}")
    if report.ok:
        say(f"next: dp-online report {root} -o {root / 'report.html'}")
    return _failures(report)


@contextlib.contextmanager
def interrupt_once() -> Iterator[None]:
    """Let the first Ctrl-C (SIGINT) stop the block; ignore every later one.

    The first SIGINT raises ``KeyboardInterrupt`` as usual; the backends stop their
    workers with SIGINT ignored, and once the interrupt leaves the block SIGINT is
    ignored for the rest of the process, which is exiting: a second Ctrl-C while the
    message is printed or the interpreter shuts down would otherwise print a traceback.
    Until the interrupt reaches this point another Ctrl-C still works, so an interrupt
    swallowed by third-party code (a ``__del__``, a broad ``except``) can be repeated.
    """
    try:
        yield
    except KeyboardInterrupt:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise


def _after_ctrl_c() -> str:
    """A newline after the ``^C`` a terminal echoes; nothing when stderr is no terminal."""
    try:
        return "\n" if sys.stderr.isatty() else ""
    except (AttributeError, ValueError):
        return ""


def _failures(report: Any) -> int:
    if not report.failures:
        return 0
    for spec, error in report.failures[:3]:
        print(f"\nfailed: {spec.label} on {spec.env_id} (epsilon={spec.epsilon}, "
              f"T={spec.horizon}, seed {spec.seed_index}):\n{error}", file=sys.stderr)
    if len(report.failures) > 3:
        print(f"... and {len(report.failures) - 3} more", file=sys.stderr)
    return EXIT_FAILED


def cmd_plot(args: argparse.Namespace) -> int:
    from dp_online_envs.lab.experiments.plots import plot_results

    records = load_records(args.results)
    out = pathlib.Path(args.out or pathlib.Path(args.results) / "plots")
    for path in plot_results(records, out, formats=args.format):
        print(path)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from dp_online_envs.lab.experiments.report import write_report

    out = pathlib.Path(args.out or pathlib.Path(args.results) / "report.html")
    path = write_report(args.results, out, title=args.title, references=not args.no_reference,
                        resolver=default_resolver(), all_horizons=args.all_horizons)
    print(f"report written to {path} (open it in a browser: file://{path.resolve()})")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from dp_online_envs.lab.experiments.table import export_results

    games, curves = export_results(args.results, args.out, curves=args.curves)
    print(f"games table written to {games}\ncurves table written to {curves}")
    return 0


def _progress_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def cmd_grade(args: argparse.Namespace) -> int:
    from dp_online_envs.lab.grading import find_submissions, grade, load_assignment
    from dp_online_envs.lab.grading.grader import sandbox_mode

    resolver = default_resolver()
    assignment = load_assignment(args.assignment, resolver=resolver)
    files = find_submissions(args.submissions)
    secret = assignment.secret.value()  # fails before anything is played
    sandbox_mode(args.unsafe_no_sandbox)  # so does a sandbox that cannot start
    out = pathlib.Path(args.out or pathlib.Path("grades") / assignment.name)
    problem = ResultsStore(out).problem()  # before grading, which takes minutes
    if problem:
        raise ExperimentError(f"output directory {str(out)!r} is not usable: {problem} "
                              "(expected a writable directory)")
    workers = args.workers or 1
    with interrupt_once():
        result = grade(assignment, files, out_dir=out, secret=secret,
                       backend="serial" if workers == 1 else "local", workers=workers,
                       quiet=args.quiet, resolver=resolver,
                       unsafe_no_sandbox=args.unsafe_no_sandbox, resume=not args.regrade,
                       progress=None if args.quiet else _progress_line)
    width = max(len(g.submission) for g in result.grades)
    for g in result.grades:
        lost = [f"{p.name}: {p.reason}" for p in g.parts if p.earned < p.points]
        print(f"{g.submission:<{width}}  {g.score:6.3g} / {g.total:g}"
              + (f"   ({lost[0]}{' ...' if len(lost) > 1 else ''})" if lost else ""))
    print(f"graded in: {result.sandbox}")
    print(f"class table: {out / 'grades.csv'} and {out / 'grades.html'}; one page per "
          f"submission in {out}/<name>/report.html")
    return 0


COMMANDS = {"list": cmd_list, "run": cmd_run, "sweep": cmd_sweep, "plot": cmd_plot,
            "report": cmd_report, "export": cmd_export, "grade": cmd_grade,
            "leaderboard": cmd_leaderboard}


def _show_warning(message: Any, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """Damaged results files in one line each; other warnings as Python shows them."""
    if issubclass(category, DamagedResultWarning):
        print(f"dp-online: warning: {message}", file=sys.stderr)
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


_python_show_warning = warnings.showwarning


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dp-online`` console script; returns the exit status.

    Ctrl-C anywhere (also while the arguments are read) ends the command with one line
    and :data:`EXIT_INTERRUPTED`; later Ctrl-Cs are ignored while the process exits.
    """
    restore_default_interrupt()  # the imports are done: Ctrl-C is KeyboardInterrupt again
    try:
        with interrupt_once():
            parser = build_parser()
            args = parser.parse_args(argv)
            warnings.showwarning = _show_warning
            try:
                return COMMANDS[args.command](args)
            except ExperimentError as exc:
                print(f"dp-online {args.command}: error: {exc}", file=sys.stderr)
                return EXIT_USAGE
            except OSError as exc:  # a write no command turned into an error of its own
                error = storage_error(exc, exc.filename or "the output")
                if error is None:
                    raise
                print(f"dp-online {args.command}: error: {error}", file=sys.stderr)
                return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{_after_ctrl_c()}interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
