"""The README tells the truth: its links, its example and its test command."""

import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_every_local_link_of_the_readme_exists():
    # the tables of ids and learners are on the site (tests/test_docs.py checks them)
    links = re.findall(r"\]\(([^)#]+)\)", README)
    local = [link for link in links if "://" not in link]
    assert len(local) > 10
    assert [link for link in local if not (ROOT / link).exists()] == []


def test_readme_example_runs_and_reports_regret():
    code = re.search(r"```python\n(.*?)```", README, flags=re.S).group(1)
    namespace: dict = {}
    exec(compile(code.replace("print(", "_ = ("), "README", "exec"), namespace)
    summary = namespace["info"]["regret"]
    assert summary.rounds == 1000 and summary.regret_lo <= summary.regret_hi


def test_ci_runs_exactly_the_readme_test_command():
    block = README.split("<!-- test-command -->", 1)[1]
    command = re.search(r"```bash\n(.*?)\n```", block, flags=re.S).group(1).strip()
    extracted = subprocess.run(
        ["bash", ".ci/run"], cwd=ROOT, env={"PRINT_ONLY": "1", "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert extracted == command
    assert "pytest" in command and "torch==2.13.0" in command
