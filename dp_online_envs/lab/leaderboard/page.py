"""The leaderboard's outputs: one static HTML page, a page per row, the scores as a table.

``write_board(board, out)`` writes::

    OUT/index.html          a sortable table per feedback kind and epsilon (click a
                            column's head); each row links to its page
    OUT/rows/<row>.html     the row's per-game regret curves against trivial play and the
                            best reference, its per-id scores, its audit and the audit's power
    OUT/scores.csv          one line per row and id (``id = "benchmark"``: the benchmark
                            score), with the score version
    OUT/scores.parquet      the same table (when pyarrow is installed)
    OUT/board.json          everything above as data

Nothing written depends on time, host or order of play (no timestamps, no wall times,
no seeds): the same stored results give the same files, byte for byte. The curves are
inline SVG drawn here (no plotting library, so no embedded version or date).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import pathlib
from typing import Any

from dp_online_envs.lab.experiments.store import atomic_write
from dp_online_envs.lab.html_page import CSS, escape, number
from dp_online_envs.lab.leaderboard.board import Board, Row, audit_game_text
from dp_online_envs.lab.leaderboard.score import (
    AUDIT_GAMES,
    AUDIT_REFERENCES,
    SCORE_VERSION,
    TRIVIAL,
    default_benchmark,
)

#: Columns of ``scores.csv``.
CSV_COLUMNS = ("score_version", "learner", "source", "feedback", "epsilon", "delta",
               "declared_epsilon", "declared_delta", "id", "score", "lo", "hi", "status",
               "rank", "audit", "audit_game", "eps_lb", "audit_power", "reason")

_CSS = CSS + """
th.s{cursor:pointer}th.s:after{content:" \\2195";color:#9aa3b5}
.refuted{color:#fff;background:#a3261b;border-radius:3px;padding:0 4px;font-size:.85em}
.unranked td{color:#6b7385}td.wrap{white-space:normal;text-align:left;max-width:34em}
td.note{white-space:normal;text-align:left;min-width:24em;max-width:40em}
ul.diff{margin:.2em 0 .2em 1.2em;padding:0}
svg{background:#fff;border:1px solid #e3e6ec;margin:4px}
"""
_SORT = """<script>
document.querySelectorAll('table.sortable').forEach(function(t){
 t.querySelectorAll('th.s').forEach(function(th,i){th.addEventListener('click',function(){
  var b=t.tBodies[0],rs=Array.from(b.rows),d=th.dataset.d==='a'?-1:1;th.dataset.d=d>0?'a':'d';
  rs.sort(function(x,y){var p=x.cells[i].dataset.v,q=y.cells[i].dataset.v;
   var m=parseFloat(p),n=parseFloat(q);if(isNaN(m)&&isNaN(n))return d*p.localeCompare(q);
   if(isNaN(m))return 1;if(isNaN(n))return -1;return d*(m-n);});
  rs.forEach(function(r){b.appendChild(r);});});});});
</script>"""
_KIND = {"bandit": "bandit feedback", "full": "full information"}


def write_board(board: Board, out: str | os.PathLike[str]) -> pathlib.Path:
    """Write the page, the row pages and the tables into ``out`` (created); returns it.

    Each file is written all or nothing.
    """
    out = pathlib.Path(out)
    (out / "rows").mkdir(parents=True, exist_ok=True)
    atomic_write(out / "index.html", render_index(board))
    for row in board.rows:
        atomic_write(out / "rows" / f"{row.key}.html", render_row(board, row))
    lines = csv_rows(board)
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(lines)
    atomic_write(out / "scores.csv", buffer.getvalue())
    atomic_write(out / "board.json", json.dumps(board_json(board), indent=1, sort_keys=True))
    try:
        import pandas as pd
        import pyarrow  # noqa: F401
    except ImportError:
        return out
    frame = pd.DataFrame(lines, columns=list(CSV_COLUMNS))
    tmp = out / "scores.parquet.tmp"
    frame.to_parquet(tmp, index=False)
    os.replace(tmp, out / "scores.parquet")
    return out


# --------------------------------------------------------------------- data
def _audit_word(row: Row) -> str:
    """``refuted``, ``not refuted`` (with power), ``no audit power`` or ``not audited``."""
    if row.audit is not None:
        return "refuted" if row.refuted else str(row.audit.get("verdict", "no audit power"))
    return "not audited" if row.epsilon is not None else ""


def _power_short(row: Row) -> str:
    """The audit's power on the row's learner, short: its noise-free twin's bound and
    the randomized response its guesses would refute (``""``: not audited)."""
    if row.audit is None:
        return ""
    def real(x: Any) -> float:  # JSON keeps a bound that is not finite as a string
        return float(x) if isinstance(x, (int, float, str)) else math.inf

    twin = row.audit.get("twin")
    rr = real(row.audit.get("rr_epsilon"))
    parts = [] if twin is None else [
        f"twin {'refuted' if twin['refuted'] else 'not refuted'} "
        f"(eps_lb {real(twin['eps_lb']):.3g})"]
    parts.append(f"{row.audit.get('guesses', 0)} guesses: RR from eps' {rr:.3g}"
                 if math.isfinite(rr) else
                 f"{row.audit.get('guesses', 0)} guesses: no RR refuted")
    return "; ".join(parts)


def csv_rows(board: Board) -> list[dict[str, Any]]:
    """The lines of ``scores.csv``: per row, the benchmark score and each id's."""
    out = []
    for row in _ordered(board.rows):
        base = {"score_version": SCORE_VERSION, "learner": row.learner, "source": row.source,
                "feedback": row.feedback, "epsilon": row.epsilon, "delta": row.delta,
                "declared_epsilon": None if row.declared is None else row.declared[0],
                "declared_delta": None if row.declared is None else row.declared[1],
                "rank": row.rank, "audit": _audit_word(row),
                "audit_game": "" if row.audit_game is None else audit_game_text(row.audit_game),
                "eps_lb": None if row.audit is None else row.audit.get("eps_lb"),
                "audit_power": _power_short(row),
                "reason": row.reason or row.audit_note}
        s = row.score
        out.append({**base, "id": "benchmark",
                    "score": None if s is None else s.score, "lo": None if s is None else s.lo,
                    "hi": None if s is None else s.hi,
                    "status": f"{row.coverage[0]}/{row.coverage[1]} ids played"})
        for env_id, cell in sorted(row.ids.items()):
            out.append({**base, "id": env_id, "score": cell.get("score"), "lo": cell.get("lo"),
                        "hi": cell.get("hi"), "status": cell.get("status", "scored")})
    return out


def board_json(board: Board) -> dict[str, Any]:
    """The board as plain JSON (``board.json``)."""
    from dp_online_envs.lab.grading.grades import finite_json

    return finite_json({
        "score_version": SCORE_VERSION, "benchmark": board.benchmark.to_dict(),
        "notes": board.notes,
        "yardsticks": [{"id": i, "horizon": h, "best": s.best, "margin": s.margin,
                        "trivial_mean": float(s.trivial.mean()),
                        "reference_means": dict(s.reference_means)}
                       for (i, h), s in sorted(board.sticks.items())],
        "power": {f"{k} {e:g}": {"power": p, "text": t}
                  for (k, e), (p, t) in sorted(board.power.items())},
        "rows": [{"learner": r.learner, "source": r.source, "feedback": r.feedback,
                  "epsilon": r.epsilon, "delta": r.delta,
                  "declared": None if r.declared is None else list(r.declared),
                  "score": None if r.score is None else
                  {"score": r.score.score, "lo": r.score.lo, "hi": r.score.hi,
                   "per_seed": list(r.score.per_seed)},
                  "coverage": list(r.coverage), "ids": r.ids, "reason": r.reason,
                  "audit": r.audit, "audit_game": r.audit_game,
                  "audit_note": r.audit_note, "ranked": r.ranked,
                  "rank": r.rank} for r in _ordered(board.rows)]})


def _ordered(rows: list[Row]) -> list[Row]:
    """Tables in order (bandit first, non-private first), ranked rows by rank, then the
    others by name."""
    return sorted(rows, key=lambda r: (r.feedback, -1.0 if r.epsilon is None else r.epsilon,
                                       r.rank is None, r.rank or 0, r.learner))


# --------------------------------------------------------------------- pages
def _head(title: str) -> str:
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' "
            f"content='width=device-width, initial-scale=1'><title>{escape(title)}</title>"
            f"<style>{_CSS}</style></head><body><main>")


def _cell(value: Any, text: str, cls: str = "") -> str:
    c = f" class='{cls}'" if cls else ""
    return f"<td{c} data-v='{escape(value)}'>{text}</td>"


def _score_text(row: Row) -> str:
    if row.score is None:
        return "&ndash;"
    s = row.score
    text = (f"<b>{number(s.score, 3)}</b> <span class=ci>[{number(s.lo, 3)}, "
            f"{number(s.hi, 3)}]</span>")
    return text + (" <span class=refuted>refuted</span>" if row.refuted else "")


def _table(board: Board, rows: list[Row]) -> str:
    ids = sorted({i for r in rows for i in r.ids})
    head = ("<tr><th class=s>rank</th><th class='l s'>learner</th><th class='s'>score "
            "[95%]</th><th class=s>ids</th><th class='l s'>declared (&epsilon;, &delta;)</th>"
            "<th class='l s'>audit</th><th class='l s'>audit power</th>"
            + "".join(f"<th class=s title='{escape(i)}'>{escape(i.split('-', 1)[1])}</th>"
                      for i in ids)
            + "<th class='l s'>notes</th></tr>")
    body = []
    for r in rows:
        declared = ("&ndash;" if r.declared is None
                    else f"({r.declared[0]:g}, {r.declared[1]:g})")
        if r.audit is not None:
            where = "" if r.audit_game is None else (
                f" <span class=ci title='{escape(audit_game_text(r.audit_game))}'>on "
                f"{escape(r.audit_game['env_id'].split('-', 1)[1])}</span>")
            audit = (f"{escape(_audit_word(r))} "
                     f"(&epsilon;<sub>lb</sub> = {number(r.audit.get('eps_lb'), 3)}){where}")
        else:
            audit = "&ndash;" if r.epsilon is None else "not audited"
        power = escape(_power_short(r)) or "&ndash;"
        cells = [_cell(r.rank if r.rank is not None else "", str(r.rank or "&ndash;")),
                 _cell(r.learner, f"<a href='rows/{escape(r.key)}.html'>{escape(r.learner)}</a>"
                       + ("" if r.source == "registered" else
                          f" <span class=ci>({escape(r.source)})</span>"), "l"),
                 _cell("" if r.score is None else f"{r.score.score:.6f}", _score_text(r)),
                 _cell(r.coverage[0], f"{r.coverage[0]}/{r.coverage[1]}"),
                 _cell("" if r.declared is None else f"{r.declared[0]:.6g}", declared, "l"),
                 _cell(_audit_word(r), audit, "l"),
                 _cell(_power_short(r), power, "l")]
        for i in ids:
            c = r.ids.get(i, {})
            if "score" in c:
                cells.append(_cell(f"{c['score']:.6f}", number(c["score"], 3)))
            else:
                cells.append(_cell("", f"<span title='{escape(c.get('status', ''))}'>"
                                       "&ndash;</span>"))
        note = r.reason or r.audit_note
        cells.append(_cell(note, _note_text(note), "note l" + (" bad" if r.reason else "")))
        body.append(f"<tr{'' if r.ranked else ' class=unranked'}>{''.join(cells)}</tr>")
    return (f"<div class=scroll><table class=sortable><thead>{head}</thead><tbody>"
            f"{''.join(body)}</tbody></table></div>")


#: Characters of a note shown in its cell; a longer note is cut there, in full on hover.
NOTE_CHARS = 110


def _note_text(note: str) -> str:
    """A note for the table: at most :data:`NOTE_CHARS` characters (cut at a word, with
    an ellipsis, the full text as its title) so that a row stays one or two lines."""
    if len(note) <= NOTE_CHARS:
        return escape(note)
    cut = note[:NOTE_CHARS].rsplit(" ", 1)[0].rstrip(" ,;:(")
    return f"<span title='{escape(note)}'>{escape(cut)}&hellip;</span>"


def _differences(b: Any) -> list[tuple[str, str, str]]:
    """``(setting, this page's value, the full benchmark's)`` where they differ."""
    full = default_benchmark().to_dict()
    mine = b.to_dict()

    def text(name: str, v: Any) -> str:
        if name == "ids":
            return f"{len(v)} ids" + ("" if len(v) > 4 else f" ({', '.join(v)})")
        if v is None:  # the audit's horizon: the scored ones
            return "every scored horizon"
        return ", ".join(f"{x:g}" for x in v) if isinstance(v, list) else f"{v:g}"

    return [(k, text(k, mine[k]), text(k, full[k])) for k in full if mine[k] != full[k]]


def render_index(board: Board) -> str:
    """The leaderboard page."""
    b = board.benchmark
    parts = [_head("DP online learning leaderboard"),
             "<h1>DP online learning leaderboard</h1>",
             f"<p class=meta>score {escape(SCORE_VERSION)}; {len(b.ids)} ids at their "
             f"defaults; T in {escape(', '.join(map(str, b.horizons)))}; {b.seeds} hidden "
             f"seeds per id and T (paired: every learner meets the same losses); audit: "
             f"{b.audit_games} one-run games at each T = "
             f"{escape(', '.join(map(str, b.audit_horizons)))} of the first game a "
             "learner plays of "
             + "; ".join(f"{escape(_KIND.get(kind, kind))}: "
                         + ", ".join(escape(env) for env, _ in games)
                         for kind, games in sorted(AUDIT_GAMES.items())) + "</p>",
             "<p class=note>Score per game: (trivial play's regret &minus; the learner's) / "
             "(trivial play's mean regret &minus; the best non-private reference's): 0 is "
             f"trivial play ({escape(TRIVIAL)}), 1 the best reference. A learner's score is "
             "the mean over the ids of its feedback kind (an id it cannot play counts 0; "
             "<i>ids</i> is how many it plays), with the Student-t 95% interval over seeds. "
             "Private learners are ranked only when they declare a budget within the "
             "table's epsilon that the privacy audit does not refute (on the first of "
             "their feedback kind's audit games they play, named in the audit column); "
             "one that plays none of them is not ranked. <i>Not "
             "refuted</i> is evidence, not proof (see each table's audit power). Click a "
             "column's head "
             "to sort; a learner's name opens its curves and its audit.</p>"]
    if b != default_benchmark():
        items = "".join(f"<li>{escape(k)}: {escape(mine)} (full benchmark: {escape(full)})</li>"
                        for k, mine, full in _differences(b))
        parts.append("<div class='bad'><b>A subset of the benchmark:</b> these settings "
                     f"differ from {escape(SCORE_VERSION)}'s, so the scores are not "
                     f"comparable with a full run's:<ul class=diff>{items}</ul></div>")
    if board.notes:
        parts.append("<p class=note><b>Left out:</b> " + "; ".join(map(escape, board.notes))
                     + "</p>")
    tables = sorted({r.table for r in board.rows},
                    key=lambda t: (t[0], -1.0 if t[1] is None else t[1]))
    for kind, eps in tables:
        rows = [r for r in _ordered(board.rows) if r.table == (kind, eps)]
        title = f"{_KIND.get(kind, kind)}: " + ("non-private learners" if eps is None
                                                else f"&epsilon; = {eps:g}")
        parts.append(f"<h2>{title}</h2>")
        if eps is not None:
            used = sorted({r.audit_game["env_id"] for r in rows if r.audit_game is not None})
            for env in used:
                if (env, eps) in board.power:
                    parts.append(f"<p class=note><b>Audit power at &epsilon; = {eps:g}</b> "
                                 f"(on {escape(env)}, noise cuts of "
                                 f"{escape(AUDIT_REFERENCES[env])}): "
                                 f"{escape(board.power[(env, eps)][1])}</p>")
        parts.append(_table(board, rows))
    parts.append(_yardstick_table(board))
    parts.append(f"{_SORT}</main></body></html>\n")
    return "".join(parts)


def _yardstick_table(board: Board) -> str:
    rows = "".join(
        f"<tr><td class=l>{escape(i)}</td><td>{h}</td><td>{number(float(s.trivial.mean()))}</td>"
        f"<td class=l>{escape(s.best)}</td><td>{number(s.reference_means[s.best])}</td>"
        f"<td>{number(s.margin)}</td></tr>" for (i, h), s in sorted(board.sticks.items()))
    return ("<h2>Yardsticks</h2><table><tr><th class=l>id</th><th>T</th><th>trivial play's "
            "mean regret</th><th class=l>best reference</th><th>its mean regret</th>"
            f"<th>margin D</th></tr>{rows}</table>")


def _svg(series: list[tuple[str, str, dict[str, list[float]]]], title: str) -> str:
    """A log-x regret-curve chart of ``(label, color, curve)`` series, as inline SVG."""
    import math

    w, h, left, bottom, top, right = 420, 240, 52, 28, 22, 8
    pts = [(t, y) for _, _, c in series for t, y in zip(c["t"], c["mean"]) if t > 0]
    if not pts:
        return ""
    t0, t1 = math.log10(min(p[0] for p in pts)), math.log10(max(p[0] for p in pts))
    y0, y1 = min(0.0, min(p[1] for p in pts)), max(p[1] for p in pts)
    t1, y1 = (t1 if t1 > t0 else t0 + 1), (y1 if y1 > y0 else y0 + 1)

    def x(t: float) -> float:
        return left + (math.log10(t) - t0) / (t1 - t0) * (w - left - right)

    def y(v: float) -> float:
        return h - bottom - (v - y0) / (y1 - y0) * (h - bottom - top)

    out = [f"<svg width='{w}' height='{h}' viewBox='0 0 {w} {h}' role='img' "
           f"aria-label='{escape(title)}'><text x='{left}' y='14' font-size='11'>"
           f"{escape(title)}</text>",
           f"<line x1='{left}' y1='{h - bottom}' x2='{w - right}' y2='{h - bottom}' "
           "stroke='#999'/>",
           f"<line x1='{left}' y1='{top}' x2='{left}' y2='{h - bottom}' stroke='#999'/>",
           f"<text x='4' y='{top + 8}' font-size='9'>{y1:.4g}</text>",
           f"<text x='4' y='{h - bottom}' font-size='9'>{y0:.4g}</text>",
           f"<text x='{left}' y='{h - 8}' font-size='9'>t = {10 ** t0:.0f}</text>",
           f"<text x='{w - right - 60}' y='{h - 8}' font-size='9'>t = {10 ** t1:.0f}</text>"]
    for k, (label, color, c) in enumerate(series):
        line = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in zip(c["t"], c["mean"]) if t > 0)
        out.append(f"<polyline fill='none' stroke='{color}' stroke-width='1.6' "
                   f"points='{line}'/>")
        out.append(f"<text x='{left + 8}' y='{top + 12 + 11 * k}' font-size='10' "
                   f"fill='{color}'>{escape(label)}</text>")
    out.append("</svg>")
    return "".join(out)


def render_row(board: Board, row: Row) -> str:
    """One row's page: per-id scores and curves, its audit."""
    top = max(board.benchmark.horizons)
    who = row.learner + ("" if row.epsilon is None else f" at ε = {row.epsilon:g}")
    parts = [_head(f"{who}: leaderboard"), "<nav><a href='../index.html'>&larr; "
             "leaderboard</a></nav>", f"<h1>{escape(who)}</h1>",
             f"<p class=meta>score {escape(SCORE_VERSION)}; {escape(row.source)}; "
             f"{escape(_KIND.get(row.feedback, row.feedback))}</p>",
             f"<p>Benchmark score: {_score_text(row)} over {row.coverage[0]} of "
             f"{row.coverage[1]} ids" + (f" &mdash; <span class=bad>{escape(row.reason)}</span>"
                                         if row.reason else "") + "</p>"]
    cells = "".join(
        f"<tr><td class=l>{escape(i)}</td><td>{number(c.get('score'), 3)}</td>"
        f"<td>{number(c.get('lo'), 3)}</td><td>{number(c.get('hi'), 3)}</td>"
        f"<td class='l wrap'>{escape(c.get('status', 'scored'))}</td></tr>"
        for i, c in sorted(row.ids.items()))
    parts.append("<h2>Per id</h2><table><tr><th class=l>id</th><th>score</th><th>lo</th>"
                 f"<th>hi</th><th class=l>status</th></tr>{cells}</table>")
    figures = []
    for i in sorted(row.ids):
        mine = board.curves.get((row.key, i))
        if mine is None:
            continue
        stick = board.sticks.get((i, top))
        series = [(row.learner, "#c0392b", mine)]
        for name, color in ((TRIVIAL, "#7f8c8d"), (None if stick is None else stick.best,
                                                  "#2471a3")):
            if name is not None and (name, i) in board.curves:
                series.append((name, color, board.curves[(name, i)]))
        figures.append(_svg(series, f"{i}, T = {top}: mean regret R(t)"))
    if figures:
        parts.append("<h2>Regret curves</h2>" + "".join(figures)
                     + "<p class=note>Mean regret over the hidden seeds (log-scaled rounds); "
                     "grey: trivial play, blue: the best reference on the same games.</p>")
    parts.append("<h2>Privacy audit</h2>")
    if row.epsilon is None:
        parts.append("<p>Non-private: no claim to audit.</p>")
    else:
        declared = ("none" if row.declared is None else
                    f"({row.declared[0]:g}, {row.declared[1]:g}): {row.declared[2]}")
        parts.append(f"<p><b>Declared:</b> {escape(declared)}</p>")
        if row.audit is not None:
            parts.append("<table>" + "".join(
                f"<tr><th class=l>{escape(k)}</th><td class='l wrap'>{escape(v)}</td></tr>"
                for k, v in sorted(row.audit.items())) + "</table>")
        if row.audit_note:
            parts.append(f"<p>{escape(row.audit_note)}</p>")
        if row.audit_game is not None:
            env = row.audit_game["env_id"]
            parts.append(f"<p><b>Audit game:</b> {escape(audit_game_text(row.audit_game))}</p>")
            if (env, row.epsilon) in board.power:
                parts.append(f"<p><b>What this audit could detect</b> (noise cuts of "
                             f"{escape(AUDIT_REFERENCES[env])} on {escape(env)}): "
                             f"{escape(board.power[(env, row.epsilon)][1])}</p>")
    parts.append("</main></body></html>\n")
    return "".join(parts)


__all__ = ["CSV_COLUMNS", "board_json", "csv_rows", "render_index", "render_row", "write_board"]
