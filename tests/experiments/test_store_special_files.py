"""No user path corrupts a file the user did not mean to touch, and reading moves nothing.

Output (``dp-online report -o``, ``export``, every :func:`atomic_write`) goes only over a
regular file or a new name: a character device, a FIFO, a socket, a directory or a
symbolic link in the way is refused in one line and left as it was. Results
directories are read without hanging on a FIFO or reading a device without bound, and
commands that only read (``report``, ``export``, :func:`load_records`) leave every file
of ``games/`` where it is. The CLI cases run as root and, when the tests run as root,
as an unprivileged user too: that case in a real process, root's through the command's
``main`` in this process (in a real process when the tests run unprivileged).
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile

import pytest

from dp_online_envs.lab.cli import main
from dp_online_envs.lab.experiments import (
    DamagedResultWarning,
    ExperimentError,
    ResultsStore,
    load_records,
    run_sweep,
)
from dp_online_envs.lab.experiments.report import write_report
from dp_online_envs.lab.experiments.store import MAX_RECORD_BYTES, atomic_write, check_record
from dp_online_envs.lab.experiments.table import export_results

CLI = [sys.executable, "-m", "dp_online_envs.lab.cli"]
SWEEP = {"name": "tiny", "envs": ["DPBandit-MAB-v0"], "agents": ["exp3", "ucb1"],
         "horizons": [20], "seeds": 2}
NOBODY = 65534


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A results directory of 4 games, readable by every user."""
    root = tmp_path_factory.mktemp("special") / "results"
    assert run_sweep(json.loads(json.dumps(SWEEP)), results=root, backend="serial",
                     quiet=True).played == 4
    return root


@pytest.fixture
def place():
    """A directory every user can write to (the pytest directories are root's only)."""
    path = tempfile.mkdtemp(prefix="dp-special-", dir="/tmp")
    os.chmod(path, 0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _specials(place: str) -> dict[str, str]:
    """One of each kind of file that is no regular file, with a ``.csv`` and a ``.html``
    name each; the link points to a regular file that must stay as it is."""
    os.makedirs(place, exist_ok=True)
    target = os.path.join(place, "target.txt")
    with open(target, "w") as fh:
        fh.write("keep me")
    out = {}
    for ext in (".csv", ".html"):
        fifo, link = os.path.join(place, "fifo" + ext), os.path.join(place, "link" + ext)
        dev, sock = os.path.join(place, "null" + ext), os.path.join(place, "sock" + ext)
        os.mkfifo(fifo)
        os.symlink(target, link)
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
        s = socket.socket(socket.AF_UNIX)
        s.bind(sock)
        s.close()
        for path in (fifo, dev, sock):
            os.chmod(path, 0o666)
        out.update({"fifo" + ext: fifo, "link" + ext: link, "device" + ext: dev,
                    "socket" + ext: sock, "directory" + ext: os.path.join(place, "d" + ext)})
        os.mkdir(out["directory" + ext])
    return out


def _snapshot(paths: dict[str, str]) -> dict[str, tuple]:
    out = {}
    for name, path in paths.items():
        st = os.lstat(path)
        out[name] = (stat.S_IFMT(st.st_mode), st.st_ino, st.st_rdev)
    return out


KINDS = {"fifo": "a FIFO", "link": "a symbolic link", "device": "a character device",
         "socket": "a socket", "directory": "a directory"}


def test_atomic_write_refuses_every_special_file_and_leaves_it(place):
    paths = _specials(place)
    before = _snapshot(paths)
    for name, path in paths.items():
        with pytest.raises(ExperimentError, match=f"refusing to write .*: it is "
                                                  f"{KINDS[name.split('.')[0]]}"):
            atomic_write(path, "text")
    assert _snapshot(paths) == before
    assert open(os.path.join(place, "target.txt")).read() == "keep me"
    assert sorted(os.listdir(place)) == sorted([*map(os.path.basename, paths.values()),
                                                "target.txt"])  # no temporary file left
    atomic_write(os.path.join(place, "target.txt"), "new")  # a regular file: replaced
    assert open(os.path.join(place, "target.txt")).read() == "new"


def test_report_and_export_refuse_special_files(finished, place):
    paths = _specials(place)
    before = _snapshot(paths)
    for name, path in paths.items():
        kind = KINDS[name.split(".")[0]]
        if name.endswith(".html"):
            with pytest.raises(ExperimentError, match=f"it is {kind}"):
                write_report(finished, path, references=False)
        else:
            with pytest.raises(ExperimentError, match=f"it is {kind}"):
                export_results(finished, path)
            with pytest.raises(ExperimentError, match=f"it is {kind}"):
                export_results(finished, os.path.join(place, "games.csv"), curves=path)
    assert _snapshot(paths) == before
    assert not os.path.exists(os.path.join(place, "games.csv"))  # refused before writing


#: The CLI as an unprivileged user (``setpriv`` of util-linux, which every Debian has):
#: ``nobody`` with no groups, keeping only the right to *read* any file, since the
#: interpreter and its fonts may live in root's home; writing is what the tests check.
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
             "--inh-caps=-all,+dac_read_search", "--ambient-caps=+dac_read_search", *CLI]


def _dp_online(args: list[str], as_user: bool, capsys, env=None) -> tuple[int, str]:
    """The command's exit status and stderr: as ``nobody`` in a real process, or (the
    root case, whose process boundary the unprivileged case covers) through ``main`` in
    this process; as the tests' own user in a real process when that is not root."""
    if as_user or os.geteuid() != 0:
        out = subprocess.run((AS_NOBODY if as_user else CLI) + args, capture_output=True,
                             text=True, timeout=300, check=False, env=env)
        return out.returncode, out.stderr
    capsys.readouterr()
    code = main(args)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("as_user", [False, True], ids=["root-or-self", "unprivileged"])
def test_the_cli_refuses_special_files_in_one_line(finished, place, as_user, capsys):
    if as_user and os.geteuid() != 0:
        as_user = False  # already an unprivileged user: the first case covers it
    paths = _specials(os.path.join(place, "out"))
    os.chmod(os.path.join(place, "out"), 0o777)
    results = shutil.copytree(finished, os.path.join(place, "results"))
    for parent, dirs, _ in os.walk(results):
        for d in (parent, *(os.path.join(parent, d) for d in dirs)):
            os.chmod(d, 0o755)
    before = _snapshot(paths)
    for cmd, name in ((["report", results, "--no-reference", "-o"], "device.html"),
                      (["report", results, "--no-reference", "-o"], "link.html"),
                      (["export", results, "-o"], "fifo.csv")):
        code, err = _dp_online(cmd + [paths[name]], as_user, capsys)
        assert code == 2, err
        assert err.strip().count("\n") == 0 and "Traceback" not in err
        assert f"refusing to write {paths[name]!r}: it is {KINDS[name.split('.')[0]]}" in err
    assert _snapshot(paths) == before
    assert open(os.path.join(place, "out", "target.txt")).read() == "keep me"


# ---------------------------------------------------------------- names near the limit
def test_a_name_at_the_limit_is_written_and_a_longer_one_refused_before_any_file(finished,
                                                                                 place):
    name = os.path.join(place, "r" * 250 + ".html")  # 255 bytes: legal
    assert write_report(finished, name, references=False).stat().st_size > 0
    too_long = os.path.join(place, "r" * 251 + ".html")
    with pytest.raises(ExperimentError, match="its name is 256 bytes, longer than the 255"):
        write_report(finished, too_long, references=False)
    assert os.listdir(place) == [os.path.basename(name)]


# ---------------------------------------------------------------- reading a directory
def _copy(finished, tmp_path):
    root = tmp_path / "results"
    shutil.copytree(finished, root)
    return root


def _hung(signum, frame):
    raise TimeoutError("reading the results directory hung")


def test_special_files_in_games_are_skipped_without_hanging(finished, tmp_path):
    root = _copy(finished, tmp_path)
    games = root / "games"
    os.mkfifo(games / "fifo.json")  # opening it for reading would block
    os.symlink("/dev/zero", games / "zero.json")  # reading it would never end
    (games / "big.json").write_bytes(b" " * (MAX_RECORD_BYTES + 1))
    names = sorted(p.name for p in games.iterdir())
    signal.signal(signal.SIGALRM, _hung)
    signal.alarm(20)  # opening the FIFO or reading /dev/zero would never return
    try:
        with pytest.warns(DamagedResultWarning) as caught:
            records = load_records(root)
    finally:
        signal.alarm(0)
    assert len(records) == 4
    text = " ".join(str(w.message) for w in caught)
    assert "fifo.json: a FIFO, not a regular file" in text
    assert "zero.json: a character device (through a symbolic link), not a regular" in text
    assert f"big.json: {MAX_RECORD_BYTES + 1} bytes, larger than any record" in text
    assert sorted(p.name for p in games.iterdir()) == names  # reading moved nothing
    with pytest.warns(DamagedResultWarning):
        assert len(ResultsStore(root).load()) == 4  # a sweep sets them aside
    assert sorted(p.name for p in (root / "quarantine").iterdir()) == [
        "big.json", "fifo.json", "zero.json"]


def test_reading_never_moves_a_newer_schemas_records(finished, tmp_path):
    """An older install reading a directory shared with a newer one (the newer record's
    schema version is unknown to it) skips those records and leaves them."""
    root = _copy(finished, tmp_path)
    path = sorted((root / "games").glob("*.json"))[0]
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "schema_version": 99}))
    for read in (lambda: load_records(root),
                 lambda: write_report(root, tmp_path / "r.html", references=False),
                 lambda: export_results(root, tmp_path / "t.csv")):
        with pytest.warns(DamagedResultWarning, match="unknown schema_version 99.*left in "
                                                      "place"):
            read()
        assert json.loads(path.read_text())["schema_version"] == 99
        assert not (root / "quarantine").exists()


# ---------------------------------------------------------------- record values
@pytest.mark.parametrize("key", ["regret", "regret_lo", "learner_loss", "comparator_hi"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_record_with_a_non_finite_outcome_is_refused(finished, key, value):
    record = load_records(finished)[0]
    assert check_record(record) is None
    assert check_record({**record, key: value}) == f"{key}={value!r}, expected a finite number"


@pytest.mark.parametrize("key", ["horizon", "seed_index", "rounds"])
@pytest.mark.parametrize("value", [True, False])
def test_a_record_with_a_boolean_for_an_integer_is_refused(finished, key, value):
    record = load_records(finished)[0]
    assert check_record({**record, key: value}) == f"{key}={value!r}, expected an integer"


def test_records_served_by_every_reader_are_finite(finished, tmp_path):
    root = _copy(finished, tmp_path)
    path = sorted((root / "games").glob("*.json"))[0]
    path.write_text(json.dumps({**json.loads(path.read_text()), "regret": math.nan}))
    with pytest.warns(DamagedResultWarning, match="regret=nan, expected a finite number"):
        assert len(load_records(root)) == 3


@pytest.mark.parametrize("key", ["env_seed", "agent_seed", "clipped_feedback",
                                 "projected_actions", "switches"])
def test_every_integer_field_refuses_booleans_and_floats(finished, key):
    record = load_records(finished)[0]
    assert isinstance(record[key], int)
    for value in (True, 1.0, "1"):
        assert check_record({**record, key: value}) == f"{key}={value!r}, expected an integer"
    older = {k: v for k, v in record.items() if k != "switches"}
    assert check_record(older) is None  # switches is absent from older records


@pytest.mark.parametrize("key,value,expected", [
    ("regret_curve_lo", math.nan, "finite numbers"),
    ("regret_curve_hi", math.inf, "finite numbers"),
    ("regret_curve_lo", True, "finite numbers"),
    ("checkpoints", 2.0, "integers"),
    ("checkpoints", True, "integers"),
])
def test_curves_hold_finite_numbers_and_integer_checkpoints(finished, key, value, expected):
    record = load_records(finished)[0]
    curve = list(record[key])
    curve[-1] = value
    assert check_record({**record, key: curve}) == f"{key} holds {value!r}, expected {expected}"


@pytest.mark.parametrize("value", [math.nan, math.inf, "0.5", True])
def test_pseudo_regret_is_a_finite_number_or_null(finished, value):
    record = load_records(finished)[0]
    assert check_record({**record, "pseudo_regret": None}) is None
    assert check_record({**record, "pseudo_regret": value}) == (
        f"pseudo_regret={value!r}, expected a finite number or null")


# ----------------------------------------------------------------------------- plots
@pytest.mark.parametrize("as_user", [False, True], ids=["root-or-self", "unprivileged"])
def test_plot_refuses_a_fifo_or_a_link_in_plots_in_one_line(finished, place, as_user, capsys):
    """``dp-online plot`` writes each figure all or nothing over a regular file only: a
    FIFO (which would block the writer) or a link to a file elsewhere in the way of a
    figure is refused in one line and left as it was; a regular file is replaced."""
    from dp_online_envs.lab.experiments.plots import plot_results

    if as_user and os.geteuid() != 0:
        pytest.skip("already an unprivileged user: the first case covers it")
    tmp_path = pathlib.Path(place)
    results = shutil.copytree(finished, tmp_path / "results")
    plots = results / "plots"
    figures = sorted(p for p in plot_results(load_records(results), plots)
                     if p.suffix == ".png")
    assert figures
    for parent, dirs, files in os.walk(results):
        for name in (parent, *(os.path.join(parent, d) for d in dirs)):
            os.chmod(name, 0o777)
        for name in files:
            os.chmod(os.path.join(parent, name), 0o666)
    env = {**os.environ, "MPLCONFIGDIR": place}  # nobody has no home for matplotlib
    outside = tmp_path / "elsewhere.png"
    outside.write_text("keep me")
    for special in ("fifo", "link"):
        victim = figures[0]
        victim.unlink(missing_ok=True)
        if special == "fifo":
            os.mkfifo(victim)
        else:
            victim.symlink_to(outside)
        before = _snapshot({special: str(victim)})
        code, err = _dp_online(["plot", str(results)], as_user, capsys, env=env)
        assert code == 2, err
        assert err.strip().count("\n") == 0 and "Traceback" not in err
        assert f"refusing to write {str(victim)!r}: it is {KINDS[special]}" in err
        assert _snapshot({special: str(victim)}) == before
        victim.unlink()
    assert outside.read_text() == "keep me"
    victim.write_text("an old figure")  # a regular file is written over
    plot_results(load_records(results), plots)
    assert figures[0].read_bytes().startswith(b"\x89PNG")
    assert not [p for p in plots.iterdir() if p.name.endswith(".tmp")]


def test_a_file_grown_after_its_fstat_is_read_to_its_end_or_refused(tmp_path, monkeypatch):
    """The reader reads as many bytes as ``fstat`` reports, plus one to see more (not a
    buffer of the limit's size for every record); a file that grew in between is read
    on to its end, and past the limit it is refused as before."""
    from dp_online_envs.lab.experiments import store

    path = tmp_path / "r.json"
    path.write_bytes(b"x" * 1000)
    real = os.fstat

    def stale(fd):  # the size of the file before it grew
        st = real(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid,
                               st.st_gid, 10, st.st_atime, st.st_mtime, st.st_ctime))

    monkeypatch.setattr(store.os, "fstat", stale)
    raw, st = store.read_regular_stat(path, 5000)
    assert raw == b"x" * 1000 and st.st_size == 10
    def stale_stat(p, **kwargs):
        fd = os.open(p, os.O_RDONLY)
        try:
            return stale(fd)
        finally:
            os.close(fd)

    monkeypatch.setattr(store.os, "stat", stale_stat)
    with pytest.raises(ValueError, match="more than 500 bytes, larger than any record"):
        store.read_regular_stat(path, 500)  # grown past the limit after both looks
