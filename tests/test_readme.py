"""The README tells the truth: its ids, its example and its test command."""

import pathlib
import re
import subprocess

import dp_online_envs

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_every_registered_id_is_in_the_table():
    table_ids = set(re.findall(r"^\| `(DP[\w-]+-v\d+)` \|", README, flags=re.M))
    assert table_ids == set(dp_online_envs.ENV_IDS)


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


def test_every_registered_agent_is_in_the_table():
    import agents

    table = set(re.findall(r"^\| `([a-z0-9-]+)` \| (?:full|bandit) \|", README, flags=re.M))
    assert table == {info.name for info in agents.list_agents()}
