"""Regenerate ``docs/results.md`` from stored results: one command.

``docs/results.md`` is written from ``benchmarks/results_template.md`` (the hand-written
prose, section by section) and one generated block per section (the numbers). Each
section of the template is delimited by ``<!-- section: NAME -->`` and
``<!-- /section: NAME -->`` and holds one ``{{output}}`` placeholder; :data:`SECTIONS`
says what fills it. A block is always rendered from stored results, never from a
script's stdout:

* a **study** (``Section(study=...)``): ``dp-online sweep`` plays its
  ``benchmarks/studies/NAME/sweep.yaml`` (games already stored are kept), then its
  ``analysis.py`` renders the block from the stored games;
* a **stored** section (``Section(script, stored=True)``): the script measures and
  writes its numbers as data (``--save results/benchmarks/NAME.json``: the settings,
  the release, the date, the machine and its load average, the numbers; see
  :mod:`benchmarks.stored`), then the script module's ``render(doc)`` draws the block
  from that file.

The generated block is stamped with the command and with the date and the release of
its numbers (a stored section: also the load average while they were measured),
between ``<!-- output: NAME -->`` and ``<!-- /output: NAME -->``; a section that is not
rerun keeps the block it has in the current file, so ``--only`` regenerates part of it.
The measurement runs only when asked (every section, or ``--only NAME``); ``--render``
runs nothing and redraws the stored sections from their files (a section whose file is
missing keeps its block, and the message names the command that measures it).

Usage::

    python benchmarks/make_results.py                    # every section (long: one to two hours)
    python benchmarks/make_results.py --only full-info-rates,counter-noise
    python benchmarks/make_results.py --quick            # smoke run, written elsewhere
    python benchmarks/make_results.py --list             # the sections, commands, stored files
    python benchmarks/make_results.py --render           # prose or a render edited: measure nothing
    python benchmarks/make_results.py --render --study-results DIR  # also redraw the studies
                                                         # from DIR/NAME (played there)

``--study-results DIR`` keeps every study's games in ``DIR/NAME`` (``dp-online sweep
... --results DIR/NAME``) instead of its sweep's ``results``; with ``--render`` the
study sections are then redrawn from there too (nothing is played). A study is drawn
only from a complete replay: a results directory missing some of its sweep's games (a
replay still running, or stopped) keeps the section's block, and the message says how
many games are stored. A study folder ``benchmarks/studies/NAME`` with a ``sweep.yaml``
and an ``analysis.py`` whose ``render(results)`` draws its block is a section even when
:data:`SECTIONS` does not name it (:func:`sections`): it is written where the template
places a ``<!-- section: NAME -->`` (its prose), and ``--only NAME`` plays and draws it.

``--quick`` runs each script with its fast arguments, stores their results apart
(``results/benchmarks/quick/``) and writes to ``--out`` (default: a file in the
temporary directory, printed), never over ``docs/results.md`` nor the stored results
of full runs. The file is rewritten after every section that completes (the other
sections' blocks re-read from it then), so an interrupted run keeps what it finished
and concurrent runs of disjoint ``--only`` sets compose; a script that fails keeps its
section's previous block and makes the exit status 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python benchmarks/make_results.py`: the checkout's
    sys.path.insert(0, str(ROOT))  # benchmarks package (not installed) holds the renders

from benchmarks import stored  # noqa: E402
from benchmarks.stored import release, versions  # noqa: E402

TEMPLATE = ROOT / "benchmarks" / "results_template.md"
RESULTS = ROOT / "docs" / "results.md"
COMMAND = "python benchmarks/make_results.py"


def _relative(path: Path) -> str:
    """``path`` relative to the checkout when inside it (as a reader types it)."""
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


@dataclasses.dataclass(frozen=True)
class Section:
    """One section of docs/results.md and the script that produces its numbers.

    Attributes:
        name: The marker name (``<!-- section: name -->``).
        script: The script under ``benchmarks/``.
        args: Its arguments for the full run.
        quick_args: Its arguments for ``--quick``; ``None``: skipped by ``--quick``
            (the block of the current file is kept).
        fence: Whether the block (the script's stdout, or its render of the stored
            numbers) is plain text, wrapped in a code fence.
        study: A study under ``benchmarks/studies/`` (its ``sweep.yaml`` played by
            ``dp-online sweep``, resumable, then its ``analysis.py`` rendering the block
            from the stored results); ``script`` and ``args`` are then unused.
        render: The function that renders this block: of the study's analysis (a study
            may give several blocks), or of the script's module (``stored``).
        stored: The script writes its numbers as data (``--save FILE``) and its
            module's ``render(doc)`` draws the block from the stored file
            (:mod:`benchmarks.stored`), never from its stdout.
        discovered: A study folder :data:`SECTIONS` does not name (:func:`sections`):
            rendered where the template places a section of its name.
    """

    name: str
    script: str = ""
    args: tuple[str, ...] = ()
    quick_args: tuple[str, ...] | None = ()
    fence: bool = False
    study: str | None = None
    render: str = "render"
    stored: bool = False
    discovered: bool = False

    def __post_init__(self) -> None:
        if (self.study is None) == (not self.stored):
            raise ValueError(f"section {self.name!r} must be either a study or a stored "
                             f"section (its block is never a script's stdout)")

    def results(self, quick: bool = False) -> Path:
        """The file a ``stored`` section's numbers are kept in (a quick run's apart), under
        :data:`benchmarks.stored.RESULTS_DIR`."""
        folder = stored.RESULTS_DIR
        return (folder / "quick" if quick else folder) / f"{self.name}.json"

    def command(self, quick: bool = False) -> list[str]:
        """The argv (without the interpreter) of the full or the quick run (for a study:
        its analysis, which renders what its sweep stored; for a ``stored`` section the
        script saving its numbers to :meth:`results`)."""
        if self.study is not None:
            return [f"benchmarks/studies/{self.study}/analysis.py"]
        args = [f"benchmarks/{self.script}", *((self.quick_args if quick else self.args) or ())]
        if self.stored:
            args += ["--save", _relative(self.results(quick))]
        return args

    def shown(self, quick: bool = False) -> str:
        """The command(s) a reader runs to reproduce the block."""
        analysis = shlex.join(["python", *self.command(quick)])
        if self.study is None:
            return analysis
        return (f"dp-online sweep benchmarks/studies/{self.study}/sweep.yaml && "
                f"{analysis}")


#: Every section of docs/results.md, in order.
SECTIONS: tuple[Section, ...] = (
    Section("separation", quick_args=None, study="separation"),
    Section("full-info-rates", quick_args=None, study="full-info-rates"),
    Section("privacy-limit", quick_args=None, study="privacy-limit"),
    Section("counter-noise", "counter_noise.py", (), ("--max-exp", "12"), stored=True),
    Section("full-info-pftal", quick_args=None, study="full-info-pftal"),
    # installs SMPyBandits in a throw-away virtualenv: not part of --quick
    Section("exp2-speed", "exp2_speed.py", (), None, stored=True),
    Section("bandit-submodular", quick_args=None, study="bandit-submodular"),
    Section("bandit-convex-ball", quick_args=None, study="bandit-convex", render="render_ball"),
    Section("polytope-rates", quick_args=None, study="separation", render="render_rates"),
    Section("bandit-convex-former", quick_args=None, study="bandit-convex",
            render="render_former"),
    Section("domain-scaling", "domain_scaling.py", ("--budget", "1.5"),
            ("--only", "simplex", "--repeats", "1", "--steps", "50"), stored=True),
    Section("vectorized-games", "vectorized_games.py", ("--repeats", "5", "--full-info"),
            ("--seeds", "50", "--horizon", "200", "--repeats", "1"), stored=True),
    Section("newer-learners", quick_args=None, study="newer-learners"),
    Section("private-stochastic", quick_args=None, study="private-stochastic"),
    Section("private-experts", quick_args=None, study="private-experts"),
    Section("real-data", quick_args=None, study="real-data"),
    Section("contextual", quick_args=None, study="contextual"),
    Section("gaussian-speed", "gaussian_ftrl_speed.py", (),
            ("--rounds", "300", "--repeats", "2"), fence=True, stored=True),
    # about 6 minutes of CPU at the audit's default settings, none of them shortcuts
    Section("audit-power", "audit_power.py", (), None, fence=True, stored=True),
    # about 5 minutes of CPU: five submissions graded at the course's defaults
    Section("grader-audit", "grader_audit.py", (), None, stored=True),
)

STUDIES = ROOT / "benchmarks" / "studies"


def sections(listed: Sequence[Section] = SECTIONS, studies: Path | None = None
             ) -> tuple[Section, ...]:
    """``listed``, then one section per study folder under ``studies`` (default
    :data:`STUDIES`) that ``listed`` does not name (a ``sweep.yaml`` and an
    ``analysis.py``, whose ``render(results)`` draws its block), in name order."""
    studies = STUDIES if studies is None else studies
    named = {s.study for s in listed if s.study is not None} | {s.name for s in listed}
    found = sorted(p.name for p in studies.iterdir() if p.is_dir()
                   and (p / "sweep.yaml").is_file() and (p / "analysis.py").is_file()
                   and p.name not in named) if studies.is_dir() else []
    return (*listed, *(Section(name, quick_args=None, study=name, discovered=True)
                       for name in found))


_SECTION_RE = re.compile(r"<!-- section: ([\w-]+) -->\n(.*?)<!-- /section: \1 -->\n?", re.DOTALL)
_OUTPUT_RE = re.compile(r"<!-- output: ([\w-]+) -->\n(.*?)<!-- /output: \1 -->", re.DOTALL)
PLACEHOLDER = "{{output}}"
HEADER = "{{header}}"


def parse_sections(text: str) -> dict[str, str]:
    """``{name: body}`` of every ``<!-- section: name -->`` block, in file order.

    Raises:
        ValueError: On a section name used twice.
    """
    out: dict[str, str] = {}
    for m in _SECTION_RE.finditer(text):
        if m.group(1) in out:
            raise ValueError(f"section {m.group(1)!r} appears twice")
        out[m.group(1)] = m.group(2)
    return out


def parse_outputs(text: str) -> dict[str, str]:
    """``{name: block}`` of every generated ``<!-- output: name -->`` block (markers
    included), as found in a generated docs/results.md."""
    return {m.group(1): m.group(0) for m in _OUTPUT_RE.finditer(text)}


def output_block(section: Section, body: str, stamp: str, quick: bool = False) -> str:
    """The generated block of one section: markers, the command line and its stamp, the
    rendered numbers (``body``)."""
    body = body.strip("\n")
    if section.fence:
        body = f"```text\n{body}\n```"
    cmd = section.shown(quick)
    return (f"<!-- output: {section.name} -->\n_Numbers generated by `{cmd}` "
            f"({stamp})._\n\n{body}\n<!-- /output: {section.name} -->")


def render(template: str, blocks: dict[str, str], header: str,
           sections: Sequence[Section] = SECTIONS) -> str:
    """docs/results.md: the template with each section's ``{{output}}`` replaced by its
    block (``blocks[name]``; a note to run the section when missing) and ``{{header}}``
    by ``header``. A discovered study (:attr:`Section.discovered`) is written where the
    template places its section, and left out where it does not (its prose belongs in the
    template).

    Raises:
        ValueError: When the template's sections are not ``sections`` in order (a
            discovered study may be missing), or a section does not hold exactly one
            ``{{output}}``.
    """
    found = parse_sections(template)
    names = [s.name for s in sections if s.name in found or not s.discovered]
    if list(found) != names:
        raise ValueError(f"template sections {list(found)} != generator sections {names}")

    def fill(m: re.Match) -> str:
        name, body = m.group(1), m.group(2)
        if body.count(PLACEHOLDER) != 1:
            raise ValueError(f"section {name!r} must hold exactly one {PLACEHOLDER}")
        block = blocks.get(name) or (
            f"<!-- output: {name} -->\n_Not generated yet: run `{COMMAND} --only {name}`._\n"
            f"<!-- /output: {name} -->")
        return m.group(0).replace(PLACEHOLDER, block)

    return _SECTION_RE.sub(fill, template).replace(HEADER, header)


#: The section scripts running now (killed when this process is told to stop).
_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()


def study_results(section: Section, root: Path | None = None) -> Path:
    """Where a study's games are stored: ``root / NAME`` (``--study-results``), else its
    sweep's ``results`` (below the checkout)."""
    from dp_online_envs.lab.experiments.sweep import load_sweep

    if root is not None:
        return Path(root) / str(section.study)
    return ROOT / load_sweep(_study_folder(section) / "sweep.yaml").results


def _study_folder(section: Section) -> Path:
    return STUDIES / str(section.study)


def render_study(section: Section, root: Path | None = None) -> str:
    """A study's block: its analysis's ``render`` function of the stored games.

    Raises:
        RuntimeError: When the results hold only part of the sweep's games (a replay not
            finished: every seed set must be there before a verdict is written), naming
            how many and the command that plays the rest.
    """
    import importlib.util

    from dp_online_envs.lab.experiments.store import ResultsStore
    from dp_online_envs.lab.experiments.sweep import load_sweep

    folder = _study_folder(section)
    results = study_results(section, root)
    wanted = {g.game_id for g in load_sweep(folder / "sweep.yaml").games}
    stored_ids = ResultsStore(results).finished() if results.is_dir() else set()
    missing = len(wanted - stored_ids)
    if missing:
        raise RuntimeError(
            f"{results} holds {len(wanted) - missing} of the {len(wanted)} games of "
            f"{section.study}'s sweep: play the rest with `dp-online sweep "
            f"{_relative(folder / 'sweep.yaml')} --results {results}`")
    spec = importlib.util.spec_from_file_location(f"study_{section.study}",
                                                  folder / "analysis.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, section.render)(results)


def run_study(section: Section, root: Path | None = None) -> str:
    """Plays a study's sweep (``dp-online sweep``: games already stored are kept) into
    :func:`study_results` and returns its :func:`render_study`."""
    sweep = _study_folder(section) / "sweep.yaml"
    _run([sys.executable, "-m", "dp_online_envs.lab.cli", "sweep", str(sweep), "--quiet",
          "--results", str(study_results(section, root))], f"the sweep of {section.name}")
    return render_study(section, root)


def run_script(section: Section, quick: bool, root: Path | None = None) -> str:
    """Runs one section's script with this interpreter (a study: :func:`run_study`);
    returns its stdout (a ``stored`` section's script writes its numbers to
    :meth:`Section.results`, which :func:`render_stored` reads; its stdout is unused).

    The child is registered in ``_LIVE`` while it runs, so that :func:`stop_children`
    (SIGTERM / SIGHUP) kills it, and killed if this call leaves early.

    Raises:
        RuntimeError: When the script exits with a non-zero status (its stderr tail).
    """
    if section.study is not None:
        return run_study(section, root)
    return _run([sys.executable, *section.command(quick)], section.script)


def render_stored(section: Section, quick: bool = False) -> tuple[str, str]:
    """The block body of a ``stored`` section, drawn by its script module's render
    function from the stored file alone, and its stamp (:func:`benchmarks.stored.stamp`).

    Raises:
        benchmarks.stored.MissingResults: When the file is missing or is not this
            section's (the message names the command that measures it).
    """
    doc = stored.load(section.results(quick), section.name)
    module = importlib.import_module(f"benchmarks.{Path(section.script).stem}")
    return getattr(module, section.render)(doc), stored.stamp(doc)


def _run(argv: list[str], what: str) -> str:
    """Runs ``argv`` in the checkout; its stdout. Raises RuntimeError (with its stderr
    tail) on a non-zero exit."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.Popen(argv, cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with _LIVE_LOCK:
        _LIVE.add(proc)
    try:
        stdout, stderr = proc.communicate()
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(proc)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode != 0:
        raise RuntimeError(f"{what} exited with {proc.returncode}:\n{stderr[-3000:]}")
    return stdout


def stop_children(signum: int, frame: object = None) -> None:
    """Signal handler: kill every running section script, then exit ``128 + signum``
    (a killed generator used to leave its scripts running, writing nothing)."""
    with _LIVE_LOCK:
        procs = list(_LIVE)
    for proc in procs:
        proc.kill()
    raise SystemExit(128 + signum)


def install_signal_handlers() -> None:
    """SIGTERM and SIGHUP stop the section scripts with this process (Ctrl-C already
    reaches them: a terminal signals the whole foreground process group)."""
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), stop_children)


def header(stamp: str) -> str:
    """The paragraph under the title: the command, the date and the versions."""
    return (f"Regenerate this file with `{COMMAND}` (every section; `--only NAME[,NAME]` "
            f"for some, `--quick` for a smoke run written elsewhere, `--list` for the "
            f"sections). Edit the prose in `benchmarks/results_template.md`, not here. "
            f"Last written {stamp} with {versions()}; each section states the command and "
            f"the date of its own numbers.")


def _kind(section: Section) -> str:
    """What fills a section's block, for ``--list``."""
    if section.study is not None:
        return f"study {section.study}"
    path = section.results()
    try:
        when = stored.load(path, section.name)["date"]
    except stored.MissingResults:
        when = "missing"
    return f"stored {_relative(path)} ({when})"


def main(argv: list[str] | None = None,
         runner: Callable[[Section, bool], str] = run_script) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated section names (default: all)")
    ap.add_argument("--quick", action="store_true", help="fast arguments; not docs/results.md")
    ap.add_argument("--out", default=None, help="file to write (default docs/results.md)")
    ap.add_argument("--jobs", type=int, default=1, help="sections run in parallel")
    ap.add_argument("--list", action="store_true", help="print the sections and exit")
    ap.add_argument("--render", action="store_true",
                    help="measure nothing: rewrite the file from the template, redrawing the "
                         "stored sections from their files and keeping the other blocks")
    ap.add_argument("--study-results", default=None, metavar="DIR",
                    help="the studies' games are stored in DIR/NAME (default: each sweep's "
                         "'results'); with --render the studies are redrawn from there")
    args = ap.parse_args(argv)
    root = Path(args.study_results) if args.study_results else None
    every = sections()
    if runner is run_script:
        def runner(section: Section, quick: bool) -> str:
            return run_script(section, quick, root)
    if threading.current_thread() is threading.main_thread():
        install_signal_handlers()
    if args.list:
        for s in every:
            print(f"{s.name:22s} {_kind(s)}\n{'':22s} {s.shown()}")
        return 0
    names = [s.name for s in every]
    only = [n for n in args.only.split(",") if n] or names
    unknown = [n for n in only if n not in names]
    if unknown:
        ap.error(f"unknown section(s) {unknown}; expected some of {names}")
    chosen = [s for s in every if s.name in only and not (args.quick and s.quick_args is None)
              and (s.stored or not args.render or root is not None)]
    out = Path(args.out) if args.out else (
        Path(tempfile.gettempdir()) / "results.quick.md" if args.quick else RESULTS)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    stamped = release()
    lock = threading.Lock()
    failed: list[str] = []
    done: list[str] = []

    def write(name: str | None = None, block: str = "") -> None:
        """Writes ``out`` with one more section (none: the template with the current
        blocks): the other blocks are re-read from the file now (then from
        docs/results.md), so concurrent runs of disjoint sections compose, and a failure
        later loses nothing done."""
        with lock:
            blocks = parse_outputs(RESULTS.read_text()) if RESULTS.exists() else {}
            if out.exists():
                blocks.update(parse_outputs(out.read_text()))
            if name is not None:
                blocks[name] = block
            text = render(TEMPLATE.read_text(), blocks, header(now), every)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text)

    def one(section: Section) -> None:
        if section.discovered and section.name not in parse_sections(TEMPLATE.read_text()):
            print(f"FAILED {section.name}: the template has no section for it: add "
                  f"<!-- section: {section.name} --> (its prose and {PLACEHOLDER}) to "
                  f"{_relative(TEMPLATE)}", file=sys.stderr, flush=True)
            failed.append(section.name)
            return
        if not args.render:
            print(f"running {section.name}: {section.shown(args.quick)}", file=sys.stderr,
                  flush=True)
        try:
            if args.render and section.study is not None:
                output = render_study(section, root)  # --study-results: drawn, not played
            else:
                output = None if args.render else runner(section, args.quick)
            if section.stored:  # the stored file alone, whatever the script printed
                body, stamp = render_stored(section, args.quick)
            else:
                body, stamp = output, f"{now}, {stamped}"
        except Exception as exc:  # noqa: BLE001 - reported; the old block is kept
            if args.render and not args.only:  # a fresh checkout stores nothing yet
                print(f"kept the block of {section.name}: {exc}", file=sys.stderr, flush=True)
                return
            print(f"FAILED {section.name}: {exc}", file=sys.stderr, flush=True)
            failed.append(section.name)
            return
        stamp += ", quick run" if args.quick else ""
        write(section.name, output_block(section, body, stamp, args.quick))
        done.append(section.name)
        print(f"wrote {section.name} to {out}", file=sys.stderr, flush=True)

    if args.quick and out.exists() and not args.out:
        out.unlink()  # a quick run starts from docs/results.md, not from the last quick run
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        list(pool.map(one, chosen))
    if args.render or not chosen:
        write()  # the prose of the template, every section's current block
    print(f"{out}: {len(done)} section(s) regenerated"
          + (f", FAILED: {failed} (their previous blocks kept)" if failed else ""),
          file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
