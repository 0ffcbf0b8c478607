"""Vector figures for papers and reports: a plot's data, and its drawing with matplotlib.

A ``Plot`` holds everything a figure shows as plain JSON (``data``), so what was drawn can
be read back and checked against ``report --json``. ``draw(plot)`` makes the matplotlib
figure; ``svg_text`` and ``svg_and_pdf`` write it out. Three kinds, drawn by ``DRAWERS``:

- ``bars``: horizontal grouped bars in panels (one bar per series and group), with 95%
  interval whiskers where a bar has ``low``/``high``; shares drawn as percentages.
- ``scatter``: one marker per point, vertical whiskers for the y interval; y is a share.
- ``shares``: one stacked bar per row, each category's share of the row's base.

Style: one column of a paper (3.4 in wide), text of 7 to 8 pt, the colour-blind-safe
palette below, fonts embedded in the PDF as TrueType (``pdf.fonttype`` 42) and glyphs
written as paths in the SVG (``svg.fonttype`` "path": the figure looks the same in a
browser, the studio and a vector editor whatever fonts they have; a text search of the
SVG is what is lost, and the caption carries the words). Files are reproducible: no
dates, fixed ids.

matplotlib is imported inside the functions that draw (the Agg canvas, no pyplot), so
starting the CLI or the studio does not load it.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evaluator.errors import EvaluatorError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# Okabe and Ito's colour-blind-safe colours, most distinct first (yellow last: it is the
# faintest on white).
BLUE = "#0072B2"
ORANGE = "#E69F00"
GREEN = "#009E73"
VERMILLION = "#D55E00"
PURPLE = "#CC79A7"
SKY = "#56B4E9"
YELLOW = "#F0E442"
BLACK = "#000000"
PALETTE = (BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY, YELLOW, BLACK)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
# Hatches tell the series apart in grey print too; lines only (dots and rings would
# write thousands of curves into the SVG).
HATCHES = ("", "////", "\\\\\\\\", "xxxx", "----", "||||", "++++", "//--")

COLUMN_WIDTH = 3.4  # inches: one column of a two-column paper
FONT_SIZE = 7.5  # points; tick labels and legends
TITLE_SIZE = 8.0
MIN_FONT_SIZE = 7.0

STYLE: dict[str, Any] = {
    "font.family": "DejaVu Sans",  # ships with matplotlib: the same glyphs everywhere
    "font.size": FONT_SIZE,
    "axes.titlesize": TITLE_SIZE,
    "axes.labelsize": FONT_SIZE,
    "xtick.labelsize": FONT_SIZE,
    "ytick.labelsize": FONT_SIZE,
    "legend.fontsize": FONT_SIZE,
    "axes.linewidth": 0.6,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "svg.fonttype": "path",
    "svg.hashsalt": "elderbench",
    "axes.spines.top": False,
    "axes.spines.right": False,
}


class PlotError(EvaluatorError):
    """A plot's data cannot be drawn (an unknown kind, nothing to show)."""


@dataclass(frozen=True, slots=True)
class Plot:
    """One figure: ``name`` is its file's stem, ``caption`` says every rate's base."""

    name: str
    title: str
    kind: str
    caption: str
    data: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "kind": self.kind,
            "caption": self.caption,
            "data": self.data,
        }


def _color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _pct(share: float) -> float:
    return 100.0 * share


# --------------------------------------------------------------------------- bars


def _bar_rows(data: Mapping[str, Any]) -> int:
    return sum(len(p["groups"]) for p in data["panels"])


def _group_label(group: Mapping[str, Any]) -> str:
    """The group's name and its size(s): "canonical (n=8)", or one size per series."""
    sizes = [b["n"] for b in group["bars"] if b is not None and b.get("n") is not None]
    name = str(group["label"]).replace("_", " ")
    if not sizes:
        return name
    shown = str(sizes[0]) if len(set(sizes)) == 1 else "/".join(str(s) for s in sizes)
    return f"{name}\nn={shown}"


def _draw_bars(fig: Figure, data: Mapping[str, Any]) -> None:
    series = data["series"]
    panels = data["panels"]
    ratios = [max(1, len(p["groups"])) for p in panels]
    axes = fig.subplots(len(panels), 1, squeeze=False, height_ratios=ratios)[:, 0]
    k = len(series)
    height = 0.8 / k
    for p, (ax, panel) in enumerate(zip(axes, panels, strict=True)):
        groups = panel["groups"]
        for s, name in enumerate(series):
            ys, widths, lows, highs, where, ids = [], [], [], [], [], []
            for g, group in enumerate(groups):
                bar = group["bars"][s]
                if bar is None or bar["value"] is None:
                    continue
                y = g - 0.4 + height * (s + 0.5)
                ys.append(y)
                ids.append(f"bar-{p}-{s}-{g}")
                widths.append(_pct(bar["value"]))
                if bar.get("low") is not None:
                    where.append(y)
                    # max: a Wilson bound can sit a rounding error past the rate at 0 or 1
                    lows.append(max(0.0, _pct(bar["value"] - bar["low"])))
                    highs.append(max(0.0, _pct(bar["high"] - bar["value"])))
            drawn = ax.barh(
                ys,
                widths,
                height=height * 0.92,
                color=_color(s),
                hatch=HATCHES[s % len(HATCHES)] if k > 1 else "",
                edgecolor="white" if k > 1 else _color(s),
                linewidth=0.3,
                label=name,
            )
            for rect, gid in zip(drawn, ids, strict=True):
                rect.set_gid(gid)  # the SVG names each bar: bar-<panel>-<series>-<group>
            if where:
                centre = [widths[ys.index(y)] for y in where]
                ax.errorbar(
                    centre,
                    where,
                    xerr=[lows, highs],
                    fmt="none",
                    ecolor=BLACK,
                    elinewidth=0.6,
                    capsize=1.5,
                    capthick=0.6,
                )
        ax.set_yticks(range(len(groups)), [_group_label(g) for g in groups])
        ax.set_ylim(len(groups) - 0.5, -0.5)
        ax.set_xlim(0, 100)
        ax.set_xticks([0, 25, 50, 75, 100])
        ax.set_title(panel["title"], loc="left", fontsize=TITLE_SIZE)
        ax.tick_params(axis="y", length=0)
        ax.grid(axis="x", linewidth=0.3, color="#cccccc")
        ax.set_axisbelow(True)
    axes[-1].set_xlabel(data["axis"])
    _legend(fig, axes[0], columns=2)  # names each series, one alone too (a run, a set)


def _legend_columns(labels: Sequence[str], wanted: int) -> int:
    """Two columns fit one column of a paper only while the names are short."""
    return wanted if max((len(x) for x in labels), default=0) <= 24 else 1


def _legend_height(labels: Sequence[str], wanted: int) -> float:
    columns = _legend_columns(labels, wanted)
    return 0.15 * -(-len(labels) // columns)


def _legend(fig: Figure, ax: Axes, *, columns: int) -> None:
    """The series' legend above the plot, outside the axes (the layout makes room)."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        loc="outside upper left",
        ncols=min(_legend_columns(labels, columns), len(labels)),
        frameon=False,
        handlelength=1.2,
        columnspacing=1.0,
    )


def _bars_height(data: Mapping[str, Any]) -> float:
    k = len(data["series"])
    legend = _legend_height(data["series"], 2)
    per_group = 0.16 + 0.08 * k
    return 0.55 + legend + 0.32 * len(data["panels"]) + per_group * _bar_rows(data)


# --------------------------------------------------------------------------- scatter


def _draw_scatter(fig: Figure, data: Mapping[str, Any]) -> None:
    from matplotlib.ticker import MaxNLocator

    ax = fig.subplots()
    ax.xaxis.set_major_locator(MaxNLocator(nbins=4))  # long tick labels must not touch
    for i, point in enumerate(data["points"]):
        y = _pct(point["y"])
        err = None
        if point.get("low") is not None:
            err = [[max(0.0, y - _pct(point["low"]))], [max(0.0, _pct(point["high"]) - y)]]
        ax.errorbar(
            [point["x"]],
            [y],
            yerr=err,
            fmt=MARKERS[i % len(MARKERS)],
            color=_color(i),
            markersize=4.5,
            markeredgecolor=BLACK,
            markeredgewidth=0.4,
            elinewidth=0.6,
            capsize=1.5,
            label=point["label"],
        )
    ax.set_xlabel(data["x_label"])
    ax.set_ylabel(data["y_label"])
    ax.set_ylim(-3, 103)
    xs = [p["x"] for p in data["points"]]
    top = max(xs, default=0.0)
    ax.set_xlim(-0.05 * (top or 1.0), 1.1 * (top or 1.0))
    ax.set_yticks([0, 25, 50, 75, 100])
    ax.grid(linewidth=0.3, color="#cccccc")
    ax.set_axisbelow(True)
    _legend(fig, ax, columns=2)


def _scatter_height(data: Mapping[str, Any]) -> float:
    return 2.0 + _legend_height([p["label"] for p in data["points"]], 2)


# --------------------------------------------------------------------------- shares


def _draw_shares(fig: Figure, data: Mapping[str, Any]) -> None:
    ax = fig.subplots()
    rows, categories = data["rows"], data["categories"]
    for c, category in enumerate(categories):
        lefts = [_pct(sum(r["shares"][:c])) if r["base"] else 0.0 for r in rows]
        widths = [_pct(r["shares"][c]) if r["base"] else 0.0 for r in rows]
        ax.barh(
            range(len(rows)),
            widths,
            left=lefts,
            height=0.6,
            color=_color(c),
            hatch=HATCHES[c % len(HATCHES)],
            edgecolor="white",
            linewidth=0.3,
            label=category,
        )
    for y, row in enumerate(rows):
        if not row["base"]:
            ax.text(2, y, f"no failure analysed (of {row['failures']})", va="center")
    ax.set_yticks(range(len(rows)), [f"{r['label']}\n{r['base']} of {r['failures']}" for r in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(0, 100)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xlabel(data["axis"])
    ax.tick_params(axis="y", length=0)
    _legend(fig, ax, columns=1)


def _shares_height(data: Mapping[str, Any]) -> float:
    return 0.8 + 0.35 * len(data["rows"]) + _legend_height(data["categories"], 1)


# --------------------------------------------------------------------------- output

DRAWERS: dict[str, tuple[Callable[[Figure, Mapping[str, Any]], None], Callable[..., float]]] = {
    "bars": (_draw_bars, _bars_height),
    "scatter": (_draw_scatter, _scatter_height),
    "shares": (_draw_shares, _shares_height),
}


def draw(plot: Plot) -> Figure:
    """The plot as a matplotlib figure on the Agg canvas (no window, no pyplot)."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    found = DRAWERS.get(plot.kind)
    if found is None:
        raise PlotError(f"{plot.name}: unknown plot kind {plot.kind!r}; use one of {list(DRAWERS)}")
    drawer, height = found
    rc: Any = STYLE  # matplotlib types its keys as literals
    with matplotlib.rc_context(rc):
        fig = Figure(figsize=(COLUMN_WIDTH, height(plot.data)), layout="constrained")
        FigureCanvasAgg(fig)
        drawer(fig, plot.data)
    for artist in fig.findobj(lambda a: a.get_gid() is not None):
        artist.set_gid(f"{plot.name}-{artist.get_gid()}")  # unique in a page of figures
    return fig


def _save(fig: Figure, name: str, fmt: str) -> bytes:
    import matplotlib

    # the font subsetter logs every glyph at INFO, which the CLI shows
    logging.getLogger("fontTools").setLevel(logging.WARNING)
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"CreationDate": None}
    rc: Any = {**STYLE, "svg.hashsalt": f"elderbench-{name}"}  # ids differ per figure
    with matplotlib.rc_context(rc):
        fig.savefig(buffer, format=fmt, metadata=metadata)
    return buffer.getvalue()


# A blank glyph (the space) is written as a path without "d"; some renderers (the
# studio's) reject it and then every use of it. "M 0 0" draws the same nothing.
_BLANK_GLYPH = re.compile(r'<path id="([^"]+)" transform="([^"]+)"/>')


def _svg(fig: Figure, name: str) -> str:
    text = _save(fig, name, "svg").decode("utf-8")
    return _BLANK_GLYPH.sub(r'<path id="\1" d="M 0 0" transform="\2"/>', text)


def svg_text(plot: Plot) -> str:
    return _svg(draw(plot), plot.name)


def svg_and_pdf(plot: Plot) -> tuple[str, bytes]:
    """Both files of the plot from one drawing."""
    fig = draw(plot)
    return _svg(fig, plot.name), _save(fig, plot.name, "pdf")


def bars(
    name: str,
    title: str,
    caption: str,
    *,
    axis: str,
    series: Sequence[str],
    panels: Sequence[Mapping[str, Any]],
) -> Plot:
    """A ``bars`` plot; each panel is ``{"title", "groups": [{"label", "bars": [one per
    series: None or {"value", "low"?, "high"?, "n"?, ...}]}]}``."""
    return Plot(
        name, title, "bars", caption, {"axis": axis, "series": list(series), "panels": list(panels)}
    )
