"""Figures (matplotlib, Agg backend), saved as PNG and SVG.

* ``regret_curves_<env>``: per env, one panel per configured agent: the mean regret
  curve over seeds with its 95% band on log-log axes, one curve per privacy level (at
  the env's largest horizon), the env's non-private agents in grey for comparison, and
  the paper's rate ``T^a`` as a dashed reference line (:mod:`.rates`).
* ``price_of_privacy``: final regret against epsilon per private agent (95% CI),
  non-private agents as horizontal bands; one panel per env and horizon.
* ``counters``: when an agent ran with several ``counter`` options, final regret
  against epsilon per counter.
"""

from __future__ import annotations

import dataclasses
import io
import math
import os
import pathlib
import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from dp_online_envs.lab.experiments import analysis
from dp_online_envs.lab.experiments.rates import rate
from dp_online_envs.lab.experiments.store import atomic_write, check_output, writing

FORMATS = ("png", "svg")


@dataclasses.dataclass
class Figure:
    """A drawn figure with what the report says about it."""

    name: str
    title: str
    caption: str
    figure: Any  # matplotlib.figure.Figure


# matplotlib is an optional extra (``experiments``): imported by the functions that draw.
def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3,
                         "axes.spines.top": False, "axes.spines.right": False,
                         "font.size": 9, "legend.fontsize": 7.5, "svg.fonttype": "none"})
    return plt


def slug(text: str) -> str:
    """A file-name-safe version of a label."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")


def _colors(n: int) -> list[Any]:
    import matplotlib

    cmap = matplotlib.colormaps["viridis"]
    return [cmap(x) for x in (np.linspace(0.1, 0.85, n) if n > 1 else [0.35])]


def _grid(n: int, max_cols: int = 3, w: float = 6.0, h: float = 3.4):
    plt = _plt()
    cols = min(n, max_cols)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(w * cols, h * rows + 0.5), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _legend(ax) -> None:
    """The axes' legend outside it, on its right (the layout makes room for it): a
    legend never covers a curve, a band or a point."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
              framealpha=0.85, edgecolor="0.85")


def _eps_axis(ax, eps: Iterable[float]) -> None:
    """Log x axis with a plain tick at each epsilon played."""
    from matplotlib import ticker

    ticks = sorted(set(eps))
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(ticker.FixedLocator(ticks))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    if len(ticks) == 1:
        ax.set_xlim(ticks[0] / 2, ticks[0] * 2)


def _plain_log_y(ax) -> None:
    """Log y axis labelled 1, 2, 5, 10, 20, ... instead of powers of ten."""
    from matplotlib import ticker

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())


def _positive(y: np.ndarray, floor: float) -> np.ndarray:
    return np.where(np.isfinite(y) & (y > floor), y, floor)


# -------------------------------------------------------------- regret curves
def regret_curves(records: list[dict[str, Any]]) -> list[Figure]:
    """One figure per env: regret curves with 95% bands and the paper's rate."""
    groups = analysis.group(records)
    by_env: dict[str, dict[analysis.Setting, list]] = defaultdict(dict)
    for s, rs in groups.items():
        by_env[s.env][s] = rs
    figures = []
    for env, settings in by_env.items():
        horizon = max(s.horizon for s in settings)
        at_t = {s: rs for s, rs in settings.items() if s.horizon == horizon}
        labels = sorted({s.label for s in at_t},
                        key=lambda lab: (not any(s.epsilon is not None for s in at_t
                                                 if s.label == lab), lab))
        baselines = {s: analysis.curve(rs) for s, rs in at_t.items() if s.epsilon is None}
        fig, axes = _grid(len(labels))
        for ax, label in zip(axes, labels):
            mine = sorted((s for s in at_t if s.label == label), key=lambda s: s.eps_key)
            private = [s for s in mine if s.epsilon is not None]
            colors = dict(zip(private, _colors(len(private))))
            finals, floor = [], math.inf
            curves = {s: analysis.curve(at_t[s]) for s in mine}
            for c in list(curves.values()) + list(baselines.values()):
                pos = c["mean"][c["mean"] > 0]
                if pos.size:
                    floor = min(floor, float(pos.min()))
            floor = floor / 3 if math.isfinite(floor) else 1e-3
            if private:
                for i, (s, c) in enumerate(baselines.items()):
                    ax.plot(c["t"], _positive(c["mean"], floor), color=("0.35", "0.55")[i % 2],
                            lw=1.3, ls=("-.", ":", (0, (5, 1, 1, 1, 1, 1)))[i % 3],
                            label=f"{s.label} (non-private)")
            deltas = {s.delta or 0.0 for s in private}
            one_delta = deltas.pop() if len(deltas) == 1 else None
            for s in mine:
                c = curves[s]
                color = colors.get(s, "black")
                n = len(at_t[s])
                shown = (analysis.privacy_label(s.epsilon, None, s.idealized)
                         if one_delta is not None else s.privacy)
                ax.plot(c["t"], _positive(c["mean"], floor), color=color, lw=1.6,
                        label=f"{shown} (n={n})")
                ax.fill_between(c["t"], _positive(c["lo"], floor), _positive(c["hi"], floor),
                                color=color, alpha=0.18, lw=0)
                if c["mean"].size and c["mean"][-1] > 0:
                    finals.append(float(c["mean"][-1]))
            a = rate(mine[0].agent, mine[0].env.split("(")[0])
            if finals:
                t = np.geomspace(1, horizon, 50)
                anchor = math.exp(np.mean(np.log(finals)))
                ax.plot(t, anchor * (t / horizon) ** a, color="0.25", ls="--", lw=1,
                        label=f"paper rate $T^{{{a:.3g}}}$")
            ax.set_xscale("log")
            ax.set_yscale("log", nonpositive="mask")
            ax.set_ylim(bottom=floor)
            ax.set_title(label + (f", delta={one_delta:g}" if one_delta else ""), fontsize=9)
            ax.set_xlabel("round t")
            ax.set_ylabel("regret R(t)")
            _legend(ax)
        fig.suptitle(f"{env}: regret curves, T={horizon} (mean and 95% band over seeds)",
                     fontsize=10)
        fig.tight_layout()
        figures.append(Figure(
            name=f"regret_curves_{slug(env)}", title=f"Regret curves on {env}",
            caption=(f"Mean regret R(t) over seeds with its 95% confidence band, log-log, "
                     f"T={horizon}. Dashed: the paper's rate T^a through the curves' "
                     "final values (only its slope is meaningful). Grey dash-dot and "
                     "dotted: the env's non-private agents. Non-positive values are drawn at the "
                     "bottom of the axis."),
            figure=fig))
    return figures


# ----------------------------------------------------------- price of privacy
def price_of_privacy(records: list[dict[str, Any]]) -> Figure | None:
    """Final regret against epsilon per private agent, with non-private bands."""
    rows = analysis.summary(records)
    if not any(r["epsilon"] is not None for r in rows):
        return None
    panels = sorted({(r["env"], r["horizon"]) for r in rows})
    panels = [p for p in panels if any(r["epsilon"] is not None for r in rows
                                       if (r["env"], r["horizon"]) == p)]
    fig, axes = _grid(len(panels), max_cols=min(3, max(1, len({h for _, h in panels}))))
    for ax, (env, horizon) in zip(axes, panels):
        here = [r for r in rows if r["env"] == env and r["horizon"] == horizon]
        private_labels = sorted({(r["agent_label"], r["delta"] or 0.0) for r in here
                                 if r["epsilon"] is not None})
        deltas = {d for _, d in private_labels}
        one_delta = deltas.pop() if len(deltas) == 1 else None
        colors = _colors(len(private_labels))
        all_y = [r["regret_mean"] for r in here]
        for (label, delta), color in zip(private_labels, colors):
            pts = sorted((r for r in here if r["agent_label"] == label
                          and (r["delta"] or 0.0) == delta and r["epsilon"] is not None),
                         key=lambda r: r["epsilon"])
            x = [r["epsilon"] for r in pts]
            y = np.array([r["regret_mean"] for r in pts])
            lo = np.array([r["regret_ci_lo"] for r in pts])
            hi = np.array([r["regret_ci_hi"] for r in pts])
            name = label + (f", delta={delta:g}" if delta and one_delta is None else "") + (
                f", {analysis.IDEALIZED}" if any(r["idealized"] for r in pts) else "")
            ax.errorbar(x, y, yerr=[y - lo, hi - y], marker="o", ms=4, capsize=3,
                        color=color, lw=1.5, label=name)
        for i, r in enumerate(x for x in here if x["epsilon"] is None):
            ax.axhline(r["regret_mean"], color="0.3", ls=("--", ":", "-.")[i % 3], lw=1.2,
                       label=f"{r['agent_label']} "
                             + ("(no learning)" if r["reference"] else "(non-private)"))
            ax.axhspan(r["regret_ci_lo"], r["regret_ci_hi"], color="0.5", alpha=0.12, lw=0)
        _eps_axis(ax, [r["epsilon"] for r in here if r["epsilon"] is not None])
        if all(y > 0 for y in all_y):
            _plain_log_y(ax)
        ax.set_xlabel("epsilon (privacy budget; smaller = more private)")
        ax.set_ylabel(f"final regret R({horizon})")
        ax.set_title(f"{env}, T={horizon}" + (f", delta={one_delta:g}" if one_delta else ""),
                     fontsize=9)
        _legend(ax)
    fig.suptitle("Price of privacy: final regret against epsilon (mean and 95% CI over seeds)",
                 fontsize=10)
    fig.tight_layout()
    return Figure(name="price_of_privacy", title="Price of privacy",
                  caption=("Final regret R(T) against epsilon for each private agent (mean and "
                           "95% CI over seeds); horizontal lines and bands: non-private agents "
                           "in the same env and horizon."),
                  figure=fig)


# -------------------------------------------------------------------- counters
def counters(records: list[dict[str, Any]]) -> Figure | None:
    """Final regret against epsilon per continual counter, when several were run."""
    found = analysis.counters_in(records)
    if not found:
        return None
    rows = analysis.summary(records)
    fig, axes = _grid(len(found))
    for ax, ((env, agent), names) in zip(axes, found.items()):
        here = [r for r in rows if r["env"] == env and r["agent"] == agent
                and r["epsilon"] is not None]
        horizon = max(r["horizon"] for r in here)
        by_label: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in here:
            if r["horizon"] == horizon:
                by_label[r["agent_label"]].append(r)
        for (label, pts), color in zip(sorted(by_label.items()), _colors(len(by_label))):
            pts.sort(key=lambda r: r["epsilon"])
            y = np.array([r["regret_mean"] for r in pts])
            ax.errorbar([r["epsilon"] for r in pts], y,
                        yerr=[y - np.array([r["regret_ci_lo"] for r in pts]),
                              np.array([r["regret_ci_hi"] for r in pts]) - y],
                        marker="s", ms=4, capsize=3, color=color, lw=1.5, label=label)
        _eps_axis(ax, [r["epsilon"] for r in here])
        ax.set_xlabel("epsilon")
        ax.set_ylabel(f"final regret R({horizon})")
        ax.set_title(f"{agent} on {env}: counters {', '.join(names)}", fontsize=9)
        _legend(ax)
    fig.suptitle("Continual counters compared (mean and 95% CI over seeds)", fontsize=10)
    fig.tight_layout()
    return Figure(name="counters", title="Continual counters",
                  caption=("Final regret against epsilon for each counter option of the "
                           "agents run with several (largest horizon)."),
                  figure=fig)


# ----------------------------------------------------------------------- all
def make_figures(records: Iterable[dict[str, Any]]) -> list[Figure]:
    """Every figure the records support (price of privacy first)."""
    records = list(records)
    out: list[Figure] = []
    pop = price_of_privacy(records)
    if pop is not None:
        out.append(pop)
    out.extend(regret_curves(records))
    cnt = counters(records)
    if cnt is not None:
        out.append(cnt)
    return out


def save_figure(fig: Figure, out_dir: str | os.PathLike[str],
                formats: Iterable[str] = FORMATS) -> list[pathlib.Path]:
    """Write a figure as ``<out_dir>/<name>.<fmt>`` for each format.

    Each figure is rendered in memory, then written all or nothing by
    :func:`~.store.atomic_write`: only over a regular file or a new name, so a FIFO, a
    device or a symbolic link in ``plots/`` is refused in one line and left as it was.

    Raises:
        ExperimentError: A file in the way is not a regular file, a name is too long,
            or the directory cannot be written (the message says what to do).
    """
    out = pathlib.Path(out_dir)
    with writing(out):
        out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        path = out / f"{fig.name}.{fmt}"
        check_output(path)  # before rendering: a name too long, a special file in the way
        buffer = io.BytesIO()
        with writing(path):
            fig.figure.savefig(buffer, format=fmt, dpi=130 if fmt == "png" else None,
                               bbox_inches="tight",
                               metadata={"Date": None} if fmt == "svg" else None)
            atomic_write(path, buffer.getvalue())
        paths.append(path)
    return paths


def plot_results(records: Iterable[dict[str, Any]], out_dir: str | os.PathLike[str],
                 formats: Iterable[str] = FORMATS) -> list[pathlib.Path]:
    """Draw every figure and save it as PNG and SVG; returns the files written."""
    plt = _plt()
    paths: list[pathlib.Path] = []
    for fig in make_figures(records):
        paths.extend(save_figure(fig, out_dir, formats))
        plt.close(fig.figure)
    return paths
