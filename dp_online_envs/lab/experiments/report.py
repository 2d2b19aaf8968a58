"""A self-contained HTML report of a results directory.

One file, no external resources (figures are embedded as base64 PNG), that opens in
any browser: first, when the results directory holds an unfinished sweep, which of its
settings have no record yet; then the price of privacy at a glance (a table per env of
final regret with its 95% interval by agent and epsilon, with the ratios to the same
algorithm without noise and to the best non-private agent, and the learners that are
not told apart from trivial play marked *not learning*), the figures of
:mod:`.plots`, the full table of final regrets with means and 95% confidence
intervals, the agents and their declared guarantees, the settings, and the package
versions.

Trivial play is the regret of a reference agent (``center`` or ``uniform``, which do
not learn) on the same games. :func:`write_report` plays ``center`` on the seeds where
the results have no reference agent (:func:`reference_games`), so every table has it.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import math
import os
import pathlib
import platform
import sys
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from dp_online_envs.lab.experiments import analysis, plots
from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.game import (
    IDEALIZED,
    IDEALIZED_NOTE,
    IDENTITY_FIELDS,
    GameSpec,
    agent_label,
    canonical_json,
)
from dp_online_envs.lab.experiments.rates import rate
from dp_online_envs.lab.experiments.resolver import AgentResolver
from dp_online_envs.lab.experiments.runner import run_games
from dp_online_envs.lab.experiments.store import (
    ResultsStore,
    atomic_write,
    check_output,
    load_records,
    writing,
)
from dp_online_envs.lab.experiments.sweep import make_games, parse_sweep
from dp_online_envs.lab.html_page import CSS as _CSS
from dp_online_envs.lab.html_page import escape as _e
from dp_online_envs.lab.html_page import number as _num
from dp_online_envs.lab.html_page import png_base64 as _png

#: Distributions whose versions the report lists (those installed).
PACKAGES = ("dp-online-envs", "gymnasium", "numpy", "scipy", "matplotlib", "dp-accounting",
            "stable-baselines3", "torch", "dask", "distributed", "tqdm", "PyYAML")

#: The reference agent the report plays where the results have none (see
#: :func:`reference_games`).
REPORT_REFERENCE = analysis.REFERENCE_AGENTS[0]
#: How many missing settings the report lists by name (the rest are counted).
MISSING_SHOWN = 40
#: The largest sweep whose games the report checks one by one for a record.
MISSING_CHECKED = 1_000_000
#: The mark of a learner not told apart from trivial play, and its explanation.
NOT_LEARNING = "not learning"
NOT_LEARNING_RULE = ("on the seeds both played, the 95% interval of its regret minus trivial "
                     "play's reaches 0 (not better than not learning at all)")
NOT_LEARNING_NOTE = f"{NOT_LEARNING}: {NOT_LEARNING_RULE}"


def _ci(row: dict[str, Any]) -> str:
    """Mean regret with its 95% interval, and the *not learning* mark where it applies."""
    if row["n"] < 2:
        txt = f"{_num(row['regret_mean'])} <span class='ci nw'>(n=1)</span>"
    else:
        txt = (f"{_num(row['regret_mean'])} <span class='ci nw'>[{_num(row['regret_ci_lo'])}, "
               f"{_num(row['regret_ci_hi'])}]</span>")
    if row.get("not_learning"):
        txt += f" <span class=mark title='{_e(NOT_LEARNING_NOTE)}'>{NOT_LEARNING}</span>"
    return txt


def versions() -> dict[str, str]:
    """Python, platform and the installed versions of :data:`PACKAGES`."""
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def _headline(rows: list[dict[str, Any]], all_horizons: bool = False) -> str:
    """Per env at its largest horizon (or at each, largest first, with ``all_horizons``):
    agents x epsilon, mean regret and ratio to baseline."""
    parts = []
    envs = sorted({r["env"] for r in rows})
    shown = [(env, h) for env in envs
             for h in sorted({r["horizon"] for r in rows if r["env"] == env}, reverse=True)
             [:None if all_horizons else 1]]
    for env, horizon in shown:
        here = [r for r in rows if r["env"] == env and r["horizon"] == horizon]
        eps = sorted({(r["epsilon"], r["delta"] or 0.0) for r in here if r["epsilon"] is not None})
        labels = sorted({r["agent_label"] for r in here},
                        key=lambda lab: (not any(r["private"] for r in here
                                                 if r["agent_label"] == lab), lab))
        deltas = {d for _, d in eps}
        one_delta = len(deltas) == 1
        head = "".join(f"<th>{_e(analysis.privacy_label(e, None if one_delta else d))}</th>"
                       for e, d in eps) or "<th>non-private</th>"
        body = []
        for lab in labels:
            mine = {(r["epsilon"], r["delta"] or 0.0): r for r in here if r["agent_label"] == lab}
            nonpriv = mine.pop((None, 0.0), None)
            if nonpriv is not None:  # one regret whatever epsilon: one cell across them
                what = "no learning" if nonpriv["reference"] else "non-private"
                body.append(f"<tr class=np><td class=l>{_breakable(lab)} <span class=ci>({what})"
                            f"</span></td><td class=l colspan={max(len(eps), 1)}>"
                            f"{_ci(nonpriv)}</td></tr>")
            if mine:
                cells = "".join("<td>&ndash;</td>" if mine.get(key) is None
                                else f"<td>{_cell(mine[key])}</td>" for key in eps)
                body.append(f"<tr><td class=l>{_breakable(lab)}</td>{cells}</tr>")
        base = next((r["baseline"] for r in here if r["baseline"]), None)
        note = ("Two ratios (&times;) per private agent: to the same algorithm without "
                "noise (its non-private counterpart, named), and to the best non-private "
                f"agent here, <b>{_e(base)}</b>." if base
                else "No non-private agent ran here: no ratio.")
        ref = min((r for r in here if r["reference"]), key=lambda r: r["regret_mean"],
                  default=None)
        if ref is None:
            note += " <b>No reference agent ran here: trivial play is unknown.</b>"
        else:
            note += (f" Trivial play ({_e(ref['agent_label'])}, no learning): "
                     f"{_ci(ref)}.")
        if any(r.get("not_learning") for r in here):
            note += f" <span class=mark>{NOT_LEARNING}</span>: {_e(NOT_LEARNING_RULE)}."
        if one_delta and eps and eps[0][1]:
            note += f" The private agents here have delta = {eps[0][1]:g}."
        if any(r.get("idealized") for r in here):
            note += f" <b>{_e(IDEALIZED_NOTE)}</b>."
        parts.append(
            f"<h3>{_e(env)}, T={horizon}</h3><div class=scroll><table class=headline><tr>"
            f"<th class=l>agent</th>{head}</tr>{''.join(body)}</table></div><p class=note>"
            f"Mean final regret over seeds [95% interval]; a non-private agent's (and trivial "
            f"play's) is one number across the epsilons. {note}</p>")
    return "".join(parts)


def _breakable(label: str) -> str:
    """An agent label, escaped, that may wrap before its options and after their ``,``
    and ``=``."""
    return _e(label).replace("(", "<wbr>(").replace(",", ",<wbr>").replace("=", "=<wbr>")


def _cell(r: dict[str, Any]) -> str:
    """A private row's cell: its mean regret with its 95% interval (and the *not
    learning* mark), and below it the idealized label where its guarantee holds for the
    real-valued mechanism only and its two prices of privacy: the ratio to the same
    algorithm without noise (its counterpart) and to the best non-private agent. Each
    piece is a line of its own, so a column is as wide as its widest piece."""
    lines = [f"<span class=nw>{_num(r['regret_mean'])}</span> " + (
        "<span class='ci nw'>(n=1)</span>" if r["n"] < 2 else
        f"<span class='ci nw'>[{_num(r['regret_ci_lo'])}, {_num(r['regret_ci_hi'])}]</span>")]
    if r.get("not_learning"):  # a line of its own: the column stays narrow
        lines.append(f"<span class=mark title='{_e(NOT_LEARNING_NOTE)}'>{NOT_LEARNING}</span>")
    if r.get("idealized"):
        lines.append(f"<span class='ci bad' title='{_e(IDEALIZED_NOTE)}'>{_e(IDEALIZED)}"
                     "</span>")
    # the counterpart's ratio, and the best's unless the counterpart is the best
    same = r.get("vs_counterpart") is not None and r.get("counterpart") == r.get("baseline")
    for key, who, what in (("vs_counterpart", r.get("counterpart") + " = best" if same
                            else r.get("counterpart"), "same algorithm without noise"),
                           ("vs_baseline", "best", "best non-private agent")):
        ratio = r.get(key)
        if ratio is not None and not (same and key == "vs_baseline"):
            cls = ratio_class(r.get(f"{key}_lo"), r.get(f"{key}_hi"))
            lines.append(f"<span class='ci {cls}' title='{_e(what)}'><span class=nw>"
                         f"{_times(r, key)}</span> <span class=nw>vs {_e(who)}</span></span>")
    return "<br>".join(lines)


#: What the colours of the ratios say (the page's legend).
RATIO_COLOURS = ("a ratio is green where its 95% interval lies below 1 (lower regret than "
                 "the agent it is compared with), red where it lies above 1 (higher regret), "
                 "and uncoloured where it contains 1 or is unbounded (not told apart)")


def ratio_class(lo: float | None, hi: float | None) -> str:
    """The colour class of a ratio by its interval ``[lo, hi]`` (:data:`RATIO_COLOURS`):
    ``good`` where it lies below 1, ``bad`` where above, ``""`` where it contains 1 or
    an end is missing."""
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return ""
    return "good" if hi < 1.0 else "bad" if lo > 1.0 else ""


def _times(r: dict[str, Any], key: str) -> str:
    """``×1.23 [1.1, 1.4]``: the ratio ``r[key]`` with its paired 95% interval
    (``[unbounded]`` when the other row's regret is not significantly positive)."""
    lo, hi = r.get(f"{key}_lo"), r.get(f"{key}_hi")
    span = "[unbounded]" if lo is None or hi is None else f"[{lo:.3g}, {hi:.3g}]"
    return f"<span class=nw>&times;{r[key]:.3g}</span> <span class=nw>{span}</span>"


def _identity(fields: dict[str, Any]) -> str:
    """The settings that make a game (:data:`~.game.IDENTITY_FIELDS`) as text; a seed
    secret, which changes the game's id but not its settings, is left out."""
    return canonical_json({k: fields.get(k) for k in IDENTITY_FIELDS})


def missing_games(records: Iterable[dict[str, Any]], manifest: dict[str, Any], *,
                  resolver: AgentResolver | None = None) -> list[GameSpec]:
    """The games of the sweep kept in a results directory (its ``sweep.json``,
    :meth:`~.store.ResultsStore.manifest`) that have no record among ``records``.

    Args:
        records: The records of the results directory.
        manifest: The sweep as :func:`~.runner.run_sweep` kept it.
        resolver: Resolves the sweep's agents (``None``: the ``agents`` registry).

    Raises:
        ExperimentError: The kept sweep is no longer valid (an agent or env id this
            version does not know, ...), or has more than :data:`MISSING_CHECKED` games.
    """
    data = {k: v for k, v in manifest.items() if k != "games"}
    sweep = parse_sweep(data, source="the sweep of this results directory", resolver=resolver)
    if len(sweep) > MISSING_CHECKED:
        raise ExperimentError(f"the sweep has {len(sweep)} games, more than the "
                              f"{MISSING_CHECKED} the report lists")
    have = {_identity(r) for r in records}
    return [g for g in sweep.games if _identity(g.identity()) not in have]


def _seed_list(seeds: list[int]) -> str:
    """``0-2, 5``: sorted seed indices with runs collapsed."""
    out: list[str] = []
    for s in sorted(seeds):
        if out and out[-1][1] == s - 1:
            out[-1] = (out[-1][0], s)
        else:
            out.append((s, s))
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in out)


def _shown_setting(fields: dict[str, Any]) -> tuple[str, int, str, str]:
    """``(env, horizon, agent, privacy)`` as the report shows a setting (of a record or
    of a :class:`~.game.GameSpec`'s fields)."""
    return (agent_label(fields["env_id"], fields.get("env_kwargs") or {}),
            int(fields["horizon"]), agent_label(fields["agent"], fields.get("agent_kwargs") or {}),
            analysis.privacy_label(fields.get("epsilon"), fields.get("delta")))


def _missing_block(missing: list[GameSpec], records: list[dict[str, Any]],
                   manifest: dict[str, Any]) -> str:
    """The warning the report opens with when its sweep is unfinished: one line per
    setting (env, horizon, agent, privacy) with the seed indices that have no record."""
    seeds: dict[tuple[str, int, str, str], list[int]] = defaultdict(list)
    for g in missing:
        seeds[_shown_setting(vars(g))].append(g.seed_index)
    played = {_shown_setting(r) for r in records}
    lines = []
    for key in sorted(seeds):
        env, horizon, agent, privacy = key
        none = "" if key in played else " (no seed played)"
        lines.append(f"<li>{_e(env)} &middot; T={horizon} &middot; {_e(agent)} &middot; "
                     f"{_e(privacy)}: seed{'s' if len(seeds[key]) > 1 else ''} "
                     f"{_seed_list(seeds[key])}{none}</li>")
    more = (f"<li>&hellip; and {len(lines) - MISSING_SHOWN} more settings</li>"
            if len(lines) > MISSING_SHOWN else "")
    name = manifest.get("name")
    games = manifest.get("games", "?")
    empty = len(set(seeds) - played)
    return (f"<div class=warn id=missing><b>Incomplete sweep{' ' + _e(name) if name else ''}"
            f":</b> {len(missing)} of its {games} games have no record, in {len(seeds)} "
            f"settings ({empty} with no seed played at all). The tables below leave them "
            f"out; run the sweep again to finish it. Missing (env &middot; horizon &middot; "
            f"agent &middot; privacy: seed indices):<ul>{''.join(lines[:MISSING_SHOWN])}"
            f"{more}</ul></div>")


def reference_games(records: Iterable[dict[str, Any]], *,
                    resolver: AgentResolver | None = None) -> list[GameSpec]:
    """The games of the reference agent :data:`REPORT_REFERENCE` that the records lack:
    for every env (with its options) and horizon where no reference agent
    (:data:`~.analysis.REFERENCE_AGENTS`) played every seed index that was played, the
    seed indices it has not played. Its games face the same losses as the others of
    their seed index (an env's seed depends on its settings and the seed index only).

    Records of games seeded with a secret are left out (their losses cannot be
    replayed without it), as are envs this version cannot build.

    Args:
        records: The records.
        resolver: Resolves the reference agent (``None``: the ``agents`` registry).
    """
    groups: dict[tuple[str, str, int], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if r.get("seed_secret_sha256") is None:
            groups[(r["env_id"], canonical_json(r.get("env_kwargs") or {}),
                    int(r["horizon"]))].append(r)
    out: list[GameSpec] = []
    for (env_id, kwargs, horizon), rs in sorted(groups.items()):
        seeds = {r["seed_index"] for r in rs}
        played: dict[str, set[int]] = defaultdict(set)
        for r in rs:
            if r["agent"] in analysis.REFERENCE_AGENTS and not r.get("agent_kwargs"):
                played[r["agent"]].add(r["seed_index"])
        if any(seeds <= mine for mine in played.values()):
            continue
        lacking = sorted(seeds - played[REPORT_REFERENCE])
        try:
            out += make_games(env_id, REPORT_REFERENCE, epsilon=None, delta=None,
                              horizon=horizon, seeds=lacking, env_kwargs=json.loads(kwargs),
                              sweep=rs[0].get("sweep"), resolver=resolver)
        except ExperimentError:
            continue  # an env this version cannot build: its results stand alone
    return out


def _summary_table(rows: list[dict[str, Any]]) -> str:
    certified = not all(r["exact"] for r in rows)
    pseudo = any(r["pseudo_regret_mean"] is not None for r in rows)
    cols = ["<th>T</th>", "<th class=l>agent</th>", "<th class=l>privacy</th>", "<th>seeds</th>",
            "<th>final regret: mean [95% CI]</th>"]
    cols += ["<th>certified interval</th>"] if certified else []
    cols += ["<th>pseudo-regret</th>"] if pseudo else []
    cols += ["<th>vs same algorithm without noise</th>", "<th>vs best non-private</th>"]
    trivial = any(r["trivial"] is not None for r in rows)
    cols += ["<th>vs no learning</th>"] if trivial else []
    cols += ["<th>clipped / proj.</th>", "<th>s / game</th>"]
    body = []
    env = None
    for r in rows:
        if r["env"] != env:
            env = r["env"]
            body.append(f"<tr><td class='l env' colspan={len(cols)}>{_e(env)}</td></tr>")
        cells = [f"<td>{r['horizon']}</td>", f"<td class=l>{_breakable(r['agent_label'])}</td>",
                 f"<td class=l>{_e(r['privacy'])}</td>", f"<td>{r['n']}</td>",
                 f"<td>{_ci(r)}</td>"]
        if certified:
            cells.append("<td>exact</td>" if r["exact"] else
                         f"<td>[{_num(r['regret_lo_mean'])}, {_num(r['regret_hi_mean'])}]</td>")
        if pseudo:
            cells.append(f"<td>{_num(r['pseudo_regret_mean'])}</td>")
        twin = (f"{_times(r, 'vs_counterpart')} <span class=ci>{_e(r['counterpart'])}</span>"
                if r.get("vs_counterpart") is not None else "&ndash;")
        ratio = _times(r, "vs_baseline") if r["vs_baseline"] is not None else "&ndash;"
        cells += [f"<td>{twin}</td>", f"<td>{ratio}</td>"]
        if trivial:  # the reference agents' row is the trivial play itself
            cells.append("<td>no learning</td>" if r["reference"] else
                         f"<td>{_times(r, 'vs_trivial')}</td>" if r["vs_trivial"] is not None
                         else "<td>&ndash;</td>")
        cells += [f"<td>{r['clipped_feedback']} / {r['projected_actions']}</td>",
                  f"<td>{_num(r['wall_time_mean'], 3)}</td>"]
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (f"<div class=scroll><table id=summary><tr>{''.join(cols)}</tr>{''.join(body)}"
            "</table></div>")


def _agents_table(records: list[dict[str, Any]]) -> str:
    seen: dict[str, dict[str, Any]] = {}
    envs: dict[str, set[str]] = defaultdict(set)
    for r in records:
        seen.setdefault(r["agent"], r)
        envs[r["agent"]].add(r["env_id"])
    rows = []
    for name, r in sorted(seen.items()):
        example = next((x["privacy_mechanism"] for x in records
                        if x["agent"] == name and x.get("privacy_mechanism")), "non-private")
        rates = sorted({f"{rate(name, e):.3g}" for e in envs[name]})
        rows.append(
            f"<tr><td class=l>{_e(name)}</td><td class=l>{_e(r.get('agent_feedback', ''))}</td>"
            f"<td class=l>{'yes' if r.get('private') else 'no'}</td>"
            f"<td>T^{_e('/'.join(rates))}</td><td class=l style='white-space:normal'>"
            f"{_e(r.get('paper', ''))}</td><td class=l style='white-space:normal'>"
            f"{_e(example)}</td></tr>")
    return ("<div class=scroll><table><tr><th class=l>agent</th><th class=l>feedback</th>"
            "<th class=l>private</th><th>paper rate</th><th class=l>paper</th><th class=l>"
            f"declared guarantee (example)</th></tr>{''.join(rows)}</table></div>")


def _by_value(texts: list[str]) -> list[str]:
    return sorted(texts, key=lambda x: math.inf if x == "null" else float(x))


def _settings(records: list[dict[str, Any]], manifest: dict[str, Any] | None) -> str:
    def distinct(key: str) -> list[Any]:
        return sorted({json.dumps(r.get(key), sort_keys=True) for r in records})

    envs = sorted({(r["env_id"], json.dumps(r.get("env_kwargs") or {}, sort_keys=True),
                    r["env_feedback"]) for r in records})
    items = [
        ("envs", "; ".join(f"{e} {k if k != '{}' else ''} ({fb} feedback)" for e, k, fb in envs)),
        ("agents", ", ".join(sorted({r["agent_label"] for r in records}))),
        ("epsilons", ", ".join(x for x in _by_value(distinct("epsilon")) if x != "null")
         or "\u2013"),
        ("deltas", ", ".join(x for x in _by_value(distinct("delta")) if x != "null") or "\u2013"),
        ("horizons", ", ".join(_by_value(distinct("horizon")))),
        ("seed indices", ", ".join(sorted({str(r["seed_index"]) for r in records}, key=int))),
        ("sweeps", ", ".join(sorted({str(r.get("sweep")) for r in records}))),
        ("tags", ", ".join(distinct("tags"))),
        ("games", str(len(records))),
    ]
    rows = "".join(f"<tr><th class=l>{_e(k)}</th><td class=l style='white-space:normal'>"
                   f"{_e(v)}</td></tr>"
                   for k, v in items)
    seeding = ("Each game is seeded from its settings: the agent from "
               "<code>np.random.SeedSequence</code> of a SHA-256 of (env id, version and "
               "resolved options, agent and options, epsilon, delta, horizon, seed index); "
               "the env from the hash of "
               "its own settings and the seed index, so every agent and epsilon with the same "
               "seed index faces the same loss sequence (paired comparisons). Results do not "
               "depend on the backend that ran them.")
    out = f"<div class=scroll><table>{rows}</table></div><p class=note>{seeding}</p>"
    if manifest:
        try:  # PyYAML is an optional extra
            import yaml

            text = yaml.safe_dump(manifest, sort_keys=False, default_flow_style=None, width=88)
        except ImportError:
            text = json.dumps(manifest, indent=2)
        out += f"<h3>Sweep (as given)</h3><pre>{_e(text)}</pre>"
    return out


def render_report(records: Iterable[dict[str, Any]], *, title: str | None = None,
                  manifest: dict[str, Any] | None = None, source: str = "",
                  resolver: AgentResolver | None = None, added: int = 0,
                  all_horizons: bool = False) -> str:
    """The report as an HTML string (figures embedded).

    Args:
        records: The records.
        title: The title (default: from the sweep names).
        manifest: The sweep the results directory was made by (its ``sweep.json``);
            its games that have no record are listed first (:func:`missing_games`).
        source: Where the records come from (shown).
        resolver: Resolves the manifest's agents (``None``: the ``agents`` registry).
        added: How many of the records :func:`write_report` played for the report (the
            reference agent's, :func:`reference_games`); said under the title.
        all_horizons: The headline table at every horizon of each env (default: at its
            largest).
    """
    records = list(records)
    rows = analysis.summary(records)
    opening = ""
    if manifest:
        try:
            missing = missing_games(records, manifest, resolver=resolver)
        except ExperimentError as exc:
            opening = (f"<div class=warn id=missing><b>Completeness not checked:</b> "
                       f"{_e(exc)}</div>")
        else:
            opening = _missing_block(missing, records, manifest) if missing else ""
    if added:
        opening += (f"<p class=note>{added} games of the reference agent "
                    f"<code>{_e(REPORT_REFERENCE)}</code> (trivial play, no learning) were "
                    "played for this report on the seed indices the results lacked it: "
                    "the same losses as the other games of those seeds.</p>")
    names = sorted({str(r.get("sweep")) for r in records if r.get("sweep")})
    title = title or ("dp-online report: " + (", ".join(names) if names else "results"))
    plt = plots._plt()
    figs = []
    for f in plots.make_figures(records):
        figs.append(f"<figure id='{_e(f.name)}'><h3>{_e(f.title)}</h3>"
                    f"<img alt='{_e(f.title)}' src='data:image/png;base64,{_png(f.figure)}'>"
                    f"<figcaption>{_e(f.caption)}</figcaption></figure>")
        plt.close(f.figure)
    vers = "".join(f"<tr><th class=l>{_e(k)}</th><td class=l>{_e(v)}</td></tr>"
                   for k, v in versions().items())
    rec_versions = sorted({str(r.get("version")) for r in records})
    total = sum(r["wall_time"] for r in records if isinstance(r.get("wall_time"), (int, float)))
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    clipped = sum(r.get("clipped_feedback", 0) for r in records)
    projected = sum(r.get("projected_actions", 0) for r in records)
    description = (manifest or {}).get("description", "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title><style>{_CSS}</style></head>
<body><main>
<h1>{_e(title)}</h1>
{opening}
<p class=meta>{len(records)} games in {len(rows)} settings &middot; {_num(total, 3)} s of
compute &middot; generated {_e(now)}{(' from ' + _e(source)) if source else ''}</p>
{f'<p>{_e(description)}</p>' if description else ''}
<nav><a href="#headline">Price of privacy</a><a href="#figures">Figures</a>
<a href="#table">Final regrets</a><a href="#agents">Agents</a><a href="#settings">Settings</a>
<a href="#versions">Versions</a></nav>
<h2 id=headline>How much regret does privacy cost?</h2>
<p class=note>Final regret R(T) = (learner's loss) &minus; (loss of the best fixed action in
hindsight), mean over seeds, at
{"every horizon" if all_horizons else "each env's largest horizon"}. The price of privacy
is shown two ways: &times; &hellip; vs <i>name</i> is the ratio to the same algorithm without noise
(the non-private learner the private one becomes as epsilon grows), &times; &hellip; vs best
the ratio to the best non-private agent in the same env and horizon. Each ratio is of
mean regrets, with its 95% interval (Fieller's, on the seeds both played: games of one
seed index are paired); a ratio whose interval contains 1 does not tell the two apart.
Colours: {RATIO_COLOURS}.
Trivial play is the regret of a reference agent that does not learn, on the same games;
a learner marked <span class=mark>{NOT_LEARNING}</span> is not told apart from it:
{_e(NOT_LEARNING_RULE)}.</p>
{_headline(rows, all_horizons)}
<h2 id=figures>Figures</h2>
{''.join(figs) or '<p>No figure: the results hold no curve.</p>'}
<h2 id=table>Final regrets</h2>
<p class=note>Mean and Student-t 95% confidence interval over seeds. When the sweep
includes the reference agents <code>center</code> or <code>uniform</code> (no learning),
<i>vs no learning</i> is a row's mean regret over theirs (the lower of the two): a
learner worth its name is well below 1. Where the
comparator is certified rather than exact, the regret of a game is the midpoint of its
interval and a <i>certified interval</i> column gives the mean ends. Pseudo-regret (for
i.i.d. adversaries) is against the mean loss. Clipped feedback and projected actions
are totals over the seeds ({clipped} and {projected} in all).</p>
{_summary_table(rows)}
<h2 id=agents>Agents</h2>
{_agents_table(records)}
<h2 id=settings>Settings</h2>
{_settings(records, manifest)}
<h2 id=versions>Versions</h2>
<div class=scroll><table>{vers}<tr><th class=l>dp-online-envs in the records</th>
<td class=l>{_e(', '.join(rec_versions))}</td></tr></table></div>
</main></body></html>
"""


def _keep(store: ResultsStore, records: list[dict[str, Any]]) -> None:
    """Write ``records`` into ``store`` if it can take them (the report does not need
    them there: a read-only results directory still gets its report)."""
    try:
        for record in records:
            store.write(record)
    except (OSError, ExperimentError):
        pass


def write_report(results: str | os.PathLike[str] | Iterable[dict[str, Any]],
                 out: str | os.PathLike[str], *, title: str | None = None,
                 references: bool = True, backend: str = "local", workers: int | None = None,
                 resolver: AgentResolver | None = None,
                 all_horizons: bool = False, quiet: bool = False) -> pathlib.Path:
    """Write the HTML report of a results directory (or of records) to ``out``.

    Args:
        results: A results directory, or records.
        out: The HTML file.
        title: The report's title.
        references: Play the reference agent :data:`REPORT_REFERENCE` where the results
            lack trivial play (:func:`reference_games`) before writing; its records are
            added to the results directory when it can take them, so the next report
            reuses them.
        backend, workers: Where those games are played (:func:`~.runner.run_games`).
        resolver: Resolves agent names (``None``: the ``agents`` registry).
        all_horizons: The headline table at every horizon (:func:`render_report`).
        quiet: Show no progress while the reference games are played (by default it
            is shown as a sweep's, :func:`~.runner.progress_bar`: a bar after 2 s on a
            terminal, a line every 10 s elsewhere).

    Raises:
        ExperimentError: A results directory that does not exist or is empty; an
            ``out`` that is a symbolic link, FIFO, device or directory (only a regular
            file or a new name is written), or whose name is too long.
    """
    out = pathlib.Path(out)
    check_output(out)  # before any game is read or played
    records = load_records(results)
    manifest = source = None
    if isinstance(results, (str, os.PathLike)):
        manifest = ResultsStore(results).manifest()
        source = str(results)
    added = 0
    specs = reference_games(records, resolver=resolver) if references else []
    if specs:
        played = run_games(specs, backend=backend, workers=workers, quiet=quiet,
                           desc=f"reference games ({REPORT_REFERENCE}, trivial play)",
                           resolver=resolver).records
        if source:
            _keep(ResultsStore(source), played)
        records += played
        added = len(played)
    text = render_report(records, title=title, manifest=manifest, source=source or "",
                         resolver=resolver, added=added, all_horizons=all_horizons)
    with writing(out):
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out, text)
    return out
