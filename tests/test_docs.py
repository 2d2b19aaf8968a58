"""The documentation site: built in strict mode (a warning fails it), its generated
pages fresh, its tutorials executed with their figures, and every registered id and
learner on a page."""

from __future__ import annotations

import html
import importlib.util
import logging
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load(name: str):
    """A module of ``docs/`` (not a package) by file name."""
    spec = importlib.util.spec_from_file_location(f"docs_{name}", ROOT / "docs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(config_file: Path, site_dir: Path) -> None:
    """``mkdocs build --strict`` in this process (raises ``Abort`` on a warning)."""
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config

    config = load_config(str(config_file), site_dir=str(site_dir), strict=True)
    config.plugins.on_startup(command="build", dirty=False)
    try:
        mkdocs_build(config)
    finally:
        config.plugins.on_shutdown()
        logging.getLogger("mkdocs").handlers.clear()  # the build's warning counter


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build(ROOT / "mkdocs.yml", out)
    return out


def test_the_site_builds_strictly_with_every_page(site):
    import agents
    import dp_online_envs

    generate = load("generate")
    for env_id in dp_online_envs.ENV_IDS:
        assert (site / "environments" / generate.slug(env_id) / "index.html").is_file()
    for info in agents.list_agents():
        assert (site / "learners" / generate.slug(info.name) / "index.html").is_file()
    api = (site / "api" / "index.html").read_text()
    for anchor in ("agents.make", "agents.play", "agents.Agent.predict",
                   "dp_online_envs.Problem.loss_range", "dp_online_envs.wrappers.CopyableGame",
                   "dp_online_envs.lab.experiments.run"):
        assert f'id="{anchor}"' in api, anchor


def test_the_tutorials_ran_and_drew_their_figures(site):
    pages = {p: (site / "tutorials" / p / "index.html").read_text()
             for p in ("first_private_learner", "price_of_privacy", "course")}
    assert re.search(r"regret\s+[\d.]+ after 2000 rounds", pages["first_private_learner"])
    assert len(re.findall(r"private-exp2, epsilon =\s*[\d.]+: regret [\d.]+ ± [\d.]+",
                          pages["price_of_privacy"])) == 4
    assert "mean regret over 3 games" in pages["course"]
    for stem in ("first_private_learner-1.png", "price_of_privacy-1.png"):
        assert (site / "tutorials" / stem).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def page_text(html_file: Path) -> str:
    """A built page's text: its tags removed, its entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", html_file.read_text()))


def test_the_contextual_tutorial_reports_what_it_computed(site):
    """The tutorial that plugs a learner of one's own into the contextual ids, as the
    build executed it: its paired interval is the Student-t interval of its per-seed
    gaps, and its audits say what they found."""
    import numpy as np

    page = page_text(site / "tutorials" / "contextual_learner" / "index.html")
    seeds = re.findall(r"seed (\d+): greedy-ridge\s+([\d.]+)\s+linucb\s+([\d.]+)", page)
    assert [int(s) for s, _, _ in seeds] == list(range(8))
    gaps = [float(a) - float(b) for _, a, b in seeds]
    m, lo, hi = map(float, re.search(
        r"greedy-ridge minus linucb: ([-+][\d.]+) \[([-+][\d.]+), ([-+][\d.]+)\]",
        page).groups())
    assert m == pytest.approx(np.mean(gaps), abs=0.05) and lo < m < hi
    half = 2.3646 * np.std(gaps, ddof=1) / np.sqrt(8)  # Student-t, 7 degrees of freedom
    assert hi - lo == pytest.approx(2 * half, abs=0.15)
    assert re.search(r"greedy-ridge: one-run audit .* not refuted", page)
    assert re.search(r"jdp-linucb without its noise: one-run audit .* REFUTED", page)


def test_a_broken_link_fails_the_strict_build(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nSee [a page](missing.md).\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\nstrict: true\n")
    from mkdocs.exceptions import Abort

    with pytest.raises(Abort, match="warning"):
        build(tmp_path / "mkdocs.yml", tmp_path / "site")


def test_no_generated_page_is_stale():
    generate = load("generate")
    assert generate.stale() == []


def test_the_staleness_check_sees_an_edit_and_an_extra_page(tmp_path):
    generate = load("generate")
    pages = generate.pages()
    for path, text in pages.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    assert generate.stale(tmp_path) == []
    edited = "learners/exp3.md"
    (tmp_path / edited).write_text(pages[edited].replace("bandit", "full", 1))
    (tmp_path / "environments" / "gone-v0.md").write_text("old\n")
    assert generate.stale(tmp_path) == [edited, "environments/gone-v0.md (not generated)"]


def test_the_index_pages_list_every_id_and_learner():
    import agents
    import dp_online_envs

    generate = load("generate")
    envs = (ROOT / "docs" / "environments" / "index.md").read_text()
    assert set(re.findall(r"^\| \[`(DP[\w-]+-v\d+)`\]", envs, flags=re.M)) == set(
        dp_online_envs.ENV_IDS)
    learners = (ROOT / "docs" / "learners" / "index.md").read_text()
    assert set(re.findall(r"^\| \[`([a-z0-9-]+)`\]", learners, flags=re.M)) == {
        i.name for i in agents.list_agents()}
    assert generate.plain("see :class:`~agents.base.Agent` and :func:`agents.make`") == \
        "see `Agent` and `agents.make`"


def test_a_learner_page_holds_its_options_defaults_and_derivation():
    import inspect

    import agents

    page = (ROOT / "docs" / "learners" / "private-ftrl.md").read_text()
    cls = agents.agent_class("private-ftrl")
    for name, p in inspect.signature(cls.setup).parameters.items():
        if name != "self":
            assert f"| `{name}` | `{p.default!r}` |" in page
    assert "[private-ftrl](../algorithms/private-ftrl.md)" in page
    assert "[`hedge`](hedge.md)" in page  # its non-private counterpart


def test_the_api_reference_shows_sphinx_roles_as_code(site):
    hooks = load("hooks")
    assert hooks.plain_roles(":class:<code>~a.b.Grade</code>, :func:<code>.sub.f()</code>, "
                             ":mod:<code>a.b</code>, :meth:<code>C.m\n&lt;a.C.m&gt;</code>, "
                             ":func:<code>~.x.g()</code>") == (
        "<code>Grade</code>, <code>sub.f()</code>, <code>a.b</code>, <code>C.m</code>, "
        "<code>g()</code>")
    api = (site / "api" / "index.html").read_text()
    assert "<code>OnlineLearningEnv</code>" in api
    assert not re.search(r":(class|func|meth|mod|attr|data|exc):<code>", api)


def test_the_published_leaderboard_is_the_full_benchmark_of_the_current_score():
    """``docs/leaderboard`` is the page of every registered learner on the whole
    benchmark of the current score version: a stale or subset page fails here."""
    import json

    from agents import list_agents
    from dp_online_envs.lab.leaderboard.score import SCORE_VERSION, default_benchmark

    page = ROOT / "docs" / "leaderboard"
    board = json.loads((page / "board.json").read_text(encoding="utf-8"))
    if board["score_version"] != SCORE_VERSION:
        # A page of a former score (its rebuild replays every game: CPU-hours) is kept
        # only while the leaderboard guide, which links it, says so in these words.
        guide = (ROOT / "docs" / "guides" / "leaderboard.md").read_text(encoding="utf-8")
        former = int(board["score_version"].rsplit("-v", 1)[1])
        assert former < int(SCORE_VERSION.rsplit("-v", 1)[1]), board["score_version"]
        assert (f"benchmark of **`{board['score_version']}`**: it predates "
                f"`{SCORE_VERSION}`, the current score,\nand is not its page") in guide
        return
    assert board["benchmark"] == default_benchmark().to_dict()
    assert SCORE_VERSION in (page / "index.html").read_text(encoding="utf-8")
    rows = {(r["learner"], r["epsilon"]) for r in board["rows"]}
    learners = {name for name, _ in rows}
    assert learners == {a.name for a in list_agents()} - {"center"}
    for name in learners:
        levels = {eps for n, eps in rows if n == name}
        assert levels in ({None}, set(board["benchmark"]["epsilons"])), (name, levels)
    for r in board["rows"]:
        if r["ranked"] and r["epsilon"] is not None:
            assert r["audit"] is not None, r["learner"]
