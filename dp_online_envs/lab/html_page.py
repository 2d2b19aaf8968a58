"""The pieces the lab's HTML pages share: one stylesheet, escaping, numbers, figures.

The results report (:mod:`dp_online_envs.lab.experiments.report`) and the grading pages
(:mod:`dp_online_envs.lab.grading.report`) are single self-contained HTML files built
from these.
"""

from __future__ import annotations

import base64
import html
import io
import math
from typing import Any

__all__ = ["CSS", "escape", "number", "png_base64"]

#: The stylesheet of every page (inlined in a ``<style>`` element).
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;
background:#f6f7f9;line-height:1.45}
main{max-width:1240px;margin:0 auto;padding:24px 28px 60px;background:#fff;
box-shadow:0 0 12px rgba(0,0,0,.06)}
h1{font-size:1.6em;margin:.2em 0 .1em}h2{font-size:1.25em;margin-top:1.8em;
border-bottom:2px solid #e3e6ec;padding-bottom:.2em}h3{font-size:1.05em;margin:1.2em 0 .3em}
.meta{color:#5b6475;font-size:.92em}.note{color:#5b6475;font-size:.88em;max-width:60em}
table{border-collapse:collapse;font-size:.82em;margin:.5em 0 1em}
th,td{border:1px solid #dde1e8;padding:3px 7px;text-align:right;white-space:nowrap}
th{background:#eef1f6}td.l,th.l{text-align:left}
tr:nth-child(even) td{background:#fafbfc}.ci{color:#6b7385;font-size:.9em}
.bad{color:#a3261b}.good{color:#1a7f37}figure{margin:1em 0 2em}
figure img{max-width:100%;border:1px solid #e3e6ec}figcaption{color:#5b6475;font-size:.88em}
pre{background:#f3f5f8;padding:10px;overflow-x:auto;font-size:.82em}
nav a{margin-right:14px;font-size:.92em}
td.env{background:#e8eef8 !important;font-weight:600}
.scroll{overflow-x:auto;max-width:100%}
.nw{white-space:nowrap}table.headline td.l{white-space:normal;overflow-wrap:normal;max-width:12em}
table.headline td,table.headline th{padding:3px 5px}
table.headline td,table#summary td,table#summary th{white-space:normal}
table#summary td.l{overflow-wrap:normal}
tr.np td{background:#f7f8fa}td.l,th.l,.note,li{overflow-wrap:anywhere}
.warn{background:#fff4e5;border:1px solid #f0b35a;border-radius:4px;padding:8px 12px;
margin:.6em 0 1em;font-size:.92em}.warn ul{margin:.3em 0 0;padding-left:1.4em}
.mark{color:#fff;background:#a3261b;border-radius:3px;padding:0 4px;font-size:.85em;
white-space:nowrap}
"""


def escape(x: Any) -> str:
    """``str(x)`` escaped for HTML text and attribute values (quotes included)."""
    return html.escape(str(x), quote=True)


def number(x: float | None, digits: int = 4) -> str:
    """``x`` to ``digits`` significant digits; a dash for ``None``, ``inf`` and ``nan``."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "&ndash;"
    return f"{x:.{digits}g}"


def png_base64(fig: Any) -> str:
    """A matplotlib figure as a PNG (110 dpi, tight box), base64-encoded for a data URI."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")
