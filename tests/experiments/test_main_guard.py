"""A script that starts games outside ``if __name__ == "__main__":``: one warning line,
forked workers that do not run the script again, and a worker that imports the script
plays nothing."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import textwrap
import types

from dp_online_envs.lab.experiments import backends, parse_sweep, run, run_games, run_sweep, runner

GAMES = {"name": "guard", "envs": ["DPFullInfo-Experts-v0"], "agents": ["hedge"],
         "horizons": [50], "seeds": 4}


def _line_seen(tmp_path, monkeypatch, source):
    """What :func:`backends.unguarded_main_line` says when called where ``source``
    calls ``probe()``, with ``source`` as the main script."""
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(source))
    monkeypatch.setitem(sys.modules, "__main__", types.SimpleNamespace(__file__=str(path)))
    seen = []
    code = compile(path.read_text(), str(path), "exec")
    exec(code, {"__name__": "__main__",  # noqa: S102 - the script under test
                "probe": lambda: seen.append(backends.unguarded_main_line())})
    return seen, str(path)


def test_the_top_level_outside_the_guard_is_found(tmp_path, monkeypatch):
    seen, path = _line_seen(tmp_path, monkeypatch, """\
        import os

        def main():
            probe()

        probe()
        main()
        if __name__ == "__main__":
            probe()
            main()
        if "__main__" == __name__:
            probe()
        """)
    assert seen == [f"{path}:6", f"{path}:7", None, None, None]


def test_a_worker_importing_the_main_script_plays_nothing_and_says_so_once(monkeypatch, capsys):
    monkeypatch.setattr(multiprocessing.current_process(), "_inheriting", True, raising=False)
    monkeypatch.setattr(runner, "_warned_worker_import", False)
    games = parse_sweep(GAMES).games
    report = run_games(games, backend="serial")
    assert (report.records, report.played, report.failures) == ([], 0, [])
    assert run("DPFullInfo-Experts-v0", "hedge", horizon=50) == []
    assert run_sweep(GAMES, backend="serial").records == []
    assert capsys.readouterr().err.splitlines() == [runner.WORKER_IMPORT_WARNING]


def test_an_unguarded_script_is_played_once_by_forked_workers(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(textwrap.dedent(f"""\
        import json
        from dp_online_envs.lab.experiments import run_sweep
        report = run_sweep({GAMES!r}, results={str(tmp_path / 'res')!r}, backend="local",
                           workers=2, quiet=True)
        print(json.dumps([report.played, len(report.records), len(report.failures)]))
        """))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [4, 4, 0]  # once, not once per worker
    assert out.stderr.splitlines() == [backends.UNGUARDED_WARNING.format(where=f"{script}:3")]
