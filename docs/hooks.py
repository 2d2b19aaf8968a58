"""mkdocs hooks: run the tutorials (``docs/tutorials/*.py``) and put their output and
figures on their pages.

A tutorial is a Python script in cells (``# %%``; a ``# %% [markdown]`` cell holds
Markdown in comment lines). At build time each is executed from the repository's root,
cell by cell in one namespace; a code cell's page shows the code, what it printed, and
every matplotlib figure it left open (then closed). An exception fails the build.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

from mkdocs.structure.files import File, Files

TUTORIALS = "tutorials"
_CELL = re.compile(r"^# %%(.*)$", flags=re.M)


def cells(source: str) -> list[tuple[str, str]]:
    """``(kind, text)`` of each cell: ``"markdown"`` (comment marks removed) or ``"code"``."""
    parts = _CELL.split(source)
    out = []
    for header, body in zip(parts[1::2], parts[2::2]):
        body = body.strip("\n")
        if "[markdown]" in header:
            out.append(("markdown", "\n".join(re.sub(r"^# ?", "", line)
                                              for line in body.splitlines())))
        elif body.strip():
            out.append(("code", body))
    return out


def execute(path: Path, root: Path) -> tuple[str, dict[str, bytes]]:
    """Run one tutorial; its page's Markdown and its figures (file name -> PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    namespace: dict = {"__name__": "__main__", "__file__": str(path)}
    page, figures = [], {}
    cwd = os.getcwd()
    os.chdir(root)
    try:
        for kind, text in cells(path.read_text()):
            if kind == "markdown":
                page.append(text + "\n")
                continue
            page.append(f"```python\n{text}\n```\n")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(text, str(path), "exec"), namespace)  # noqa: S102
            if out.getvalue():
                page.append(f"```text\n{out.getvalue().rstrip()}\n```\n")
            for number in plt.get_fignums():
                name = f"{path.stem}-{len(figures) + 1}.png"
                buffer = io.BytesIO()
                plt.figure(number).savefig(buffer, format="png", dpi=110)
                figures[name] = buffer.getvalue()
                page.append(f"![figure {len(figures)}]({name})\n")
            plt.close("all")
    finally:
        os.chdir(cwd)
    return "\n".join(page), figures


def on_files(files: Files, config) -> Files:
    """Add each tutorial's executed page and figures to the site."""
    docs = Path(config["docs_dir"])
    root = Path(config["config_file_path"]).parent
    for path in sorted((docs / TUTORIALS).glob("*.py")):
        page, figures = execute(path, root)
        files.append(File.generated(config, f"{TUTORIALS}/{path.stem}.md", content=page))
        for name, png in figures.items():
            files.append(File.generated(config, f"{TUTORIALS}/{name}", content=png))
    return files


#: A Sphinx role as the API reference renders it: ``:class:`~a.b.C``` becomes
#: ``:class:<code>~a.b.C</code>`` (the docstrings are written for Sphinx-style roles),
#: ``:meth:`title <a.b.C.m>``` keeps its target escaped inside the code span.
_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):"
                   r"<code>([^<]+?)</code>")


def plain_roles(html: str) -> str:
    """The rendered page with each Sphinx role shown as its code span: an explicit title
    is kept without its target, ``~`` keeps the last component of the name (as Sphinx
    shows them), and a leading ``.`` (relative to the module) is dropped."""
    def code(m: re.Match) -> str:
        text = re.sub(r"\s+", " ", m.group(1)).strip()
        if "&lt;" in text:  # "title <target>"
            return f"<code>{text.split('&lt;', 1)[0].strip()}</code>"
        if text.startswith("~"):
            text = text[1:].lstrip(".")
            head, paren = (text[:-2], "()") if text.endswith("()") else (text, "")
            return f"<code>{head.rsplit('.', 1)[-1]}{paren}</code>"
        return f"<code>{text.lstrip('.')}</code>"

    return _ROLE.sub(code, html)


def on_page_content(html: str, page, config, files) -> str:
    """The API reference shows docstrings' Sphinx roles as plain code spans."""
    return plain_roles(html)
