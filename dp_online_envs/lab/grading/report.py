"""Grading reports: a page and a JSON record per submission, one table per class.

``write_reports(grades, out_dir)`` writes::

    OUT/grades.csv             one row per submission: score, each part, the reasons
    OUT/grades.html            the same table, each name linking to its page
    OUT/<submission>/grade.json    the grade (:meth:`~.grades.Grade.to_dict`)
    OUT/<submission>/report.html   regret curves against the references, the score
                                   breakdown, the games that failed, the audit and its power
    OUT/<submission>/log.txt       what the submission's processes printed (capped)
    OUT/<submission>/run.json      the file's and the grading's digests, the audit's CPU
                                   time: a rerun keeps a grade whose digests are unchanged

Pages are self-contained (figures embedded as PNG, the CSS of
:mod:`dp_online_envs.lab.experiments.report`). The JSON holds no timestamp and no seed: the
same secret and the same submission give the same file.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import os
import pathlib
import re
from collections import Counter, defaultdict
from typing import Any

from dp_online_envs.lab.experiments import analysis, plots
from dp_online_envs.lab.experiments.store import atomic_write
from dp_online_envs.lab.grading.audit_step import TWIN_FACTOR
from dp_online_envs.lab.grading.grades import ClassGrades, Grade
from dp_online_envs.lab.html_page import CSS as _CSS
from dp_online_envs.lab.html_page import escape as _e
from dp_online_envs.lab.html_page import number as _num
from dp_online_envs.lab.html_page import png_base64 as _png

#: Extra CSS of the grading pages.
_GRADE_CSS = """
.score{font-size:1.5em;font-weight:600}.zero{color:#a3261b}.full{color:#1a7f37}
td.wrap{white-space:normal;text-align:left;max-width:46em}
.banner{background:#fff4d6;border:1px solid #e8c766;padding:8px 12px;margin:1em 0}
"""
#: Columns of ``grades.csv``.
CSV_COLUMNS = ("submission", "learner", "score", "total", "regret", "regret_points",
               "declared", "declared_points", "audit", "audit_points", "declared_budget",
               "eps_lb", "refuted", "failed_games", "reasons", "sha256")


def write_reports(grades: ClassGrades, out_dir: str | os.PathLike[str]) -> pathlib.Path:
    """Write every report of a grading run into ``out_dir`` (created); returns it.

    Every file is written all or nothing (:func:`~dp_online_envs.lab.experiments.store.
    atomic_write`): an interrupted run leaves each file whole, old or new."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for g in grades.grades:
        write_submission(g, grades, out)
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    writer.writerows(csv_row(g) for g in grades.grades)
    atomic_write(out / "grades.csv", buffer.getvalue())
    atomic_write(out / "grades.html", render_class(grades))
    return out


def write_submission(g: Grade, grades: ClassGrades, out: pathlib.Path,
                     run: dict[str, Any] | None = None) -> pathlib.Path:
    """Write one submission's ``grade.json`` and ``report.html`` (and ``run.json``, what
    a rerun needs to know it is unchanged, when ``run`` is given) into ``out/<name>/``,
    each all or nothing; returns that directory. ``grade.json`` is written last: a
    submission whose ``grade.json`` is there has its whole report."""
    if not REPORT_NAME.fullmatch(g.submission):  # a name, never a path
        raise ValueError(f"submission name {g.submission!r} rejected: expected a name "
                         f"matching {REPORT_NAME.pattern} (submission_names gives one)")
    page = out / g.submission
    page.mkdir(parents=True, exist_ok=True)
    atomic_write(page / "report.html", render_page(g, grades))
    if run is not None:
        atomic_write(page / "run.json", json.dumps(run, indent=1, sort_keys=True))
    atomic_write(page / "grade.json", json.dumps(g.to_dict(), indent=1, sort_keys=True))
    return page


#: What a submission's report directory may be named (what
#: :func:`~.submission.submission_names` gives: a plain name, no path).
REPORT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
#: First characters that make a spreadsheet read a cell as a formula.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: Any) -> Any:
    """``value``, with a ``'`` put before a text that a spreadsheet would read as a formula
    (starting with one of :data:`FORMULA_START`), as spreadsheet-safe CSV writers do;
    numbers, and texts that are one (``"-inf"``), are left as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        try:
            float(value)
        except ValueError:
            return "'" + value
    return value


def csv_row(g: Grade) -> dict[str, Any]:
    """The class table's row of one submission (every text cell
    :func:`spreadsheet_safe`)."""
    parts = {p.name: p for p in g.parts}
    audit = g.audit or {}
    return {k: spreadsheet_safe(v) for k, v in _csv_cells(g, parts, audit).items()}


def _csv_cells(g: Grade, parts: dict[str, Any], audit: dict[str, Any]) -> dict[str, Any]:
    return {
        "submission": g.submission,
        "learner": (g.learner or {}).get("class_name", ""),
        "score": round(g.score, 6), "total": round(g.total, 6),
        **{k: round(parts[k].earned, 6) for k in ("regret", "declared", "audit")},
        **{f"{k}_points": round(parts[k].points, 6) for k in ("regret", "declared", "audit")},
        "declared_budget": "" if g.declared is None else f"({g.declared[0]:g}, {g.declared[1]:g})",
        "eps_lb": audit.get("eps_lb", ""),
        "refuted": audit.get("refuted", ""),
        "failed_games": sum(len(s.failed) for s in g.settings),
        "reasons": " | ".join(f"{name}: {reason}" for name, reason in _lost(g)),
        "sha256": g.sha256,
    }


def _lost(g: Grade) -> list[tuple[str, str]]:
    """``(part, reason)`` of every part not at full points; one ``("all parts", reason)``
    when they all lost their points for the same reason."""
    lost = [(p.name, p.reason) for p in g.parts if p.earned < p.points]
    if len(lost) == len(g.parts) > 1 and len({r for _, r in lost}) == 1:
        return [("all parts", lost[0][1])]
    return lost


def _head(title: str) -> str:
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' "
            f"content='width=device-width, initial-scale=1'><title>{_e(title)}</title>"
            f"<style>{_CSS}{_GRADE_CSS}</style></head><body><main>")



def _points(earned: float, points: float) -> str:
    cls = "zero" if earned == 0 and points > 0 else "full" if earned >= points else ""
    return f"<span class='{cls}'>{earned:.3g}</span> / {points:.3g}"


def render_class(grades: ClassGrades) -> str:
    """The class table as an HTML page."""
    a = grades.assignment
    rows = []
    for g in sorted(grades.grades, key=lambda g: g.submission):
        parts = {p.name: p for p in g.parts}
        reasons = "<br>".join(f"<b>{_e(name)}</b>: {_e(reason)}" for name, reason in _lost(g))
        rows.append(
            f"<tr><td class=l><a href='{_e(g.submission)}/report.html'>{_e(g.submission)}</a>"
            f"</td><td class=l>{_e((g.learner or {}).get('class_name', '-'))}</td>"
            f"<td><b>{g.score:.3g}</b> / {g.total:.3g}</td>"
            + "".join(f"<td>{_points(parts[k].earned, parts[k].points)}</td>"
                      for k in ("regret", "declared", "audit"))
            + f"<td class=wrap>{reasons or 'full marks'}</td></tr>")
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    return (f"{_head('Grades: ' + a.name)}<h1>Grades: {_e(a.title or a.name)}</h1>"
            f"<p class=meta>{len(grades.grades)} submission(s) &middot; assignment "
            f"{_e(a.name)} &middot; generated {_e(now)}</p>"
            f"<p class=note>Graded in: {_e(grades.sandbox)}</p>"
            f"{_assignment_table(a)}"
            "<h2>Scores</h2><table><tr><th class=l>submission</th><th class=l>learner</th>"
            "<th>score</th><th>regret</th><th>declared budget</th><th>audit</th>"
            f"<th class=l>points lost</th></tr>{''.join(rows)}</table>"
            f"<h2>Audit power</h2><p>{_e(grades.power_text)}</p></main></body></html>")


def _assignment_table(a: Any) -> str:
    r = a.grading.regret
    items = [
        ("envs", ", ".join(e.label for e in a.envs)),
        ("horizons", ", ".join(str(h) for h in a.horizons)),
        ("hidden seeds", f"{a.seeds} per env and horizon, derived from the instructor's secret"),
        ("required budget", f"({a.epsilon:g}, {a.delta:g})-DP"),
        ("references", ", ".join(ref.label + ("" if ref.epsilon is None else
                                              f" (eps={ref.epsilon:g})")
                                 for ref in a.references)),
        ("regret rule", f"{r.points:g} points: full within x{r.factor:g} of {r.reference}'s mean "
                        f"regret on the same games, " +
                        ("none above" if r.zero_at == r.factor else
                         f"none from x{r.zero_at:g}, linear between")),
        ("declared budget", f"{a.grading.declared:g} points"),
        ("privacy audit", (f"{a.grading.audit:g} points if the one-run audit does not "
                           f"refute the declared budget ({a.audit.settings.games} more full "
                           f"games per env and horizon, played as the graded ones; "
                           f"{100 * a.audit.settings.confidence:g}% confidence) and has "
                           "power on the learner (the same audit refutes its noise-free "
                           f"twin, built at {TWIN_FACTOR:g} times the epsilon); none for "
                           "\"no audit power\"")),
        ("limits", _limits(a)),
    ]
    return "<table>" + "".join(f"<tr><th class=l>{_e(k)}</th><td class=wrap>{_e(v)}</td></tr>"
                               for k, v in items) + "</table>"


def _limits(a: Any) -> str:
    """The limits in force on each submission, in one line."""
    lim = a.limits
    processes = getattr(a, "processes", None)
    budget = getattr(a, "submission_seconds", None)
    clock = [f"{lim.timeout:g} s per call", f"{lim.startup_timeout:g} s to start",
             "no wall-clock budget per game" if lim.game_seconds is None
             else f"{lim.game_seconds:g} s of wall clock per game",
             "no wall-clock budget per submission" if budget is None
             else f"{budget:g} s of wall clock per submission (its probe, games and audit)"]
    if lim.memory_bytes is None:
        memory = "no memory limit"
    elif processes is None:
        memory = f"{lim.memory_bytes // 2**20} MB of memory"
    else:
        memory = (f"{lim.memory_bytes // 2**20} MB of memory for each sandbox as a whole "
                  f"(at most {processes} processes and threads, "
                  f"{lim.memory_bytes // processes // 2**20} MB of address space each)")
    cpu = ("no CPU limit" if lim.cpu_seconds is None
           else f"{lim.cpu_seconds} s of CPU per process")
    return "; ".join([", ".join(clock), memory, cpu])


def _figure(g: Grade, grades: ClassGrades) -> str:
    """Regret curves of the submission and the references, one panel per env x horizon."""
    if not g.records:
        return "<p>No game finished: no curve.</p>"
    groups: dict[tuple[str, int], dict[str, list[dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(list))
    for r in grades.references + g.records:
        who = g.submission if r["tags"].get("role") == "submission" else r["agent_label"]
        groups[(analysis.env_label(r), r["horizon"])][who].append(r)
    plt = plots._plt()
    fig, axes = plots._grid(len(groups), max_cols=2, w=5.2, h=3.8)
    for ax, ((env, horizon), by_agent) in zip(axes, sorted(groups.items())):
        names = [g.submission] + sorted(n for n in by_agent if n != g.submission)
        colors = dict(zip(names[1:], plots._colors(len(names) - 1)))
        for name in names:
            if name not in by_agent:
                continue
            c = analysis.curve(by_agent[name])
            mine = name == g.submission
            color = "#c0392b" if mine else colors[name]
            ax.plot(c["t"], c["mean"], color=color, lw=2.2 if mine else 1.4,
                    label=f"{name} (n={len(by_agent[name])})")
            ax.fill_between(c["t"], c["lo"], c["hi"], color=color, alpha=0.15, lw=0)
        ax.set_xscale("log")
        ax.set_title(f"{env}, T={horizon}", fontsize=9)
        ax.set_xlabel("round t")
        ax.set_ylabel("regret R(t)")
        ax.legend(loc="upper left", framealpha=0.85, edgecolor="0.85")
    fig.tight_layout()
    data = _png(fig)
    plt.close(fig)
    return (f"<figure><img alt='regret curves' src='data:image/png;base64,{data}'>"
            "<figcaption>Mean regret R(t) over the hidden seeds with its 95% band (red: the "
            "submission; the references played the same loss sequences).</figcaption></figure>")


def _settings_table(g: Grade) -> str:
    if not g.settings:
        return ""
    labels = sorted({k for s in g.settings for k in s.references})
    head = "".join(f"<th>{_e(lab)}</th>" for lab in labels)
    body = []
    for s in g.settings:
        status = ("<span class=zero>" + _e(f"{len(s.failed)} failed: {s.failed[0]}") + "</span>"
                  if s.failed else f"<span class=zero>{s.projected} infeasible</span>"
                  if s.projected else "ok")
        body.append(f"<tr><td class=l>{_e(s.env)}</td><td>{s.horizon}</td><td>{s.games}</td>"
                    f"<td>{_num(s.regret)}</td>"
                    + "".join(f"<td>{_num(s.references.get(lab))}</td>" for lab in labels)
                    + f"<td>{_points(s.earned, s.points)}</td><td class=wrap>{status}</td></tr>")
    return ("<table><tr><th class=l>env</th><th>T</th><th>games</th><th>mean regret</th>"
            f"{head}<th>points</th><th class=l>status</th></tr>{''.join(body)}</table>"
            "<p class=note>Mean final regret over the hidden seeds; the reference columns "
            "are the references' means on the same games.</p>")


def _audit_section(g: Grade) -> str:
    power = f"<p><b>What this audit could detect:</b> {_e(g.power_text)}</p>"
    if g.audit_cpu_seconds is not None:
        power += (f"<p><b>CPU time of this audit:</b> {g.audit_cpu_seconds:.1f} s (the "
                  "grader's and the learner's processes)</p>")
    if g.audit is None:
        reason = next(p.reason for p in g.parts if p.name == "audit")
        return f"<p>No audit finding: {_e(reason)}</p>{power}"
    rows = "".join(f"<tr><th class=l>{_e(k)}</th><td class=wrap>"
                   f"{_num(v) if isinstance(v, float) else _e(v)}</td></tr>"
                   for k, v in g.audit.items())
    verdict = g.audit.get("verdict", "refuted" if g.audit.get("refuted") else
                          "no audit power")
    if verdict != "refuted":  # never "not refuted" without the power on this learner
        verdict += f" (power on this learner: {g.audit.get('power', 'not measured')})"
    return (f"<p><b>Verdict:</b> {_e(verdict)}</p><table>{rows}</table>{power}"
            "<p class=note>The audit plays the learner in more games drawn exactly as the "
            "graded ones; after each game every round's loss is "
            "paired with another draw of the same law, and the auditor guesses from the arms "
            "alone which of each pair the learner met. <i>Not refuted</i> is evidence, not "
            "proof of privacy: it can only refute claims as far off as its power shows.</p>")


def render_page(g: Grade, grades: ClassGrades) -> str:
    """One submission's page."""
    a = grades.assignment
    parts = "".join(f"<tr><td class=l>{_e(p.name)}</td><td>{_points(p.earned, p.points)}</td>"
                    f"<td class=wrap>{_e(p.reason)}</td></tr>" for p in g.parts)
    learner = g.learner or {}
    declared = ("none" if g.declared is None
                else f"({g.declared[0]:g}, {g.declared[1]:g})-DP: {g.declared[2]}")
    failed = [f"{s.env} T={s.horizon}: {n} of {s.games} game(s): {reason}"
              for s in g.settings for reason, n in Counter(s.failed).items()]
    failed += [f"{s.env} T={s.horizon}: {s.projected} infeasible action(s) projected"
               for s in g.settings if s.projected]
    if g.audit is None and "failed under audit" in g.parts[2].reason:
        failed.append(g.parts[2].reason)
    cpu = ("" if g.cpu_seconds is None else
           f" CPU time of its grading: {g.cpu_seconds:.1f} s (probe, games and audit: the "
           "grader's and every process it ran, the sandboxed ones included).")
    limits = (f"<p class=note>Limits in force: {_e(_limits(a))}. "
              f"Graded in: {_e(g.sandbox)}. What its processes printed: <a href=log.txt>"
              f"log.txt</a> (the first {a.limits.log_bytes // 1024} KiB).{cpu}</p>" +
              ("<p>No game hit a limit or failed.</p>" if not failed else
               "<ul>" + "".join(f"<li>{_e(f)}</li>" for f in failed) + "</ul>"))
    return (f"{_head(g.submission + ': ' + a.name)}<h1>{_e(g.submission)}</h1>"
            f"<p class=meta>assignment {_e(a.title or a.name)} &middot; learner "
            f"{_e(learner.get('class_name', '-'))} ({_e(learner.get('feedback', '-'))} "
            f"feedback) &middot; file sha256 {_e(g.sha256[:16])}</p>"
            f"<p class=score>{g.score:.3g} / {g.total:.3g} points</p>"
            f"<h2>Score</h2><table><tr><th class=l>part</th><th>points</th>"
            f"<th class=l>why</th></tr>{parts}</table>"
            f"<h2>Regret</h2>{_settings_table(g)}{_figure(g, grades)}"
            f"<h2>Limits and failures</h2>{limits}"
            f"<h2>Privacy</h2><p>Declared budget: {_e(declared)} (required: "
            f"({a.epsilon:g}, {a.delta:g})-DP).</p>{_audit_section(g)}"
            "</main></body></html>")


__all__ = ["CSV_COLUMNS", "FORMULA_START", "REPORT_NAME", "csv_row", "render_class",
           "render_page", "spreadsheet_safe", "write_reports", "write_submission"]
