"""``evaluator.tables.Tables`` written out: Markdown, LaTeX (booktabs), CSV and JSON.

Markdown and LaTeX show rounded figures with their bases ("33.3% [16.3, 56.3] 6 of 18");
CSV and JSON carry every number exactly as ``report --json`` does. ``FORMATS`` maps a
format's name to its writer.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from evaluator.document import Block, Table, render_markdown
from evaluator.manifest import essentials_lines

if TYPE_CHECKING:  # building the CLI parser reads FORMATS and must stay light
    from evaluator.tables import Tables


@dataclass(frozen=True, slots=True)
class Cell:
    """A figure (``head``, marked when ``best``) and its base (``tail``)."""

    head: str
    tail: str = ""
    best: bool = False


@dataclass(frozen=True, slots=True)
class Grid:
    """One table ready to write: number, title, header, rows of cells, notes under it."""

    number: int
    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    notes: tuple[str, ...]
    left_columns: int  # text columns on the left; the others are right-aligned figures


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _rate_cell(rate: Mapping[str, Any] | None, best: bool = False, ci: bool = True) -> Cell:
    if rate is None:
        return Cell("n/a", "(no task)")
    base = f"{rate['successes']} of {rate['evaluated']}"
    if rate["errors"]:
        base += f"; {rate['errors']} error{'s' if rate['errors'] != 1 else ''}"
    if ci and rate["value"] is not None:
        interval = f"[{100 * rate['low']:.1f}, {100 * rate['high']:.1f}] "
        return Cell(_pct(rate["value"]), f"{interval}({base})", best)
    return Cell(_pct(rate["value"]), f"({base})", best)


def _number(value: float | None, pattern: str) -> str:
    return "n/a" if value is None else format(value, pattern)


def _seconds(value: float | None) -> str:
    """Three decimals; agents without a model take less than a millisecond a step."""
    if value is None:
        return "n/a"
    return f"{value:.3f}" if value >= 0.0005 else "<0.001"


def main_grid(tables: Tables) -> Grid:
    rows = []
    for row in tables.main:
        best = set(row["best"])
        cr, da, ail, cost = row["cr"], row["da"], row["ail"], row["cost"]
        rows.append(
            (
                Cell(row["run"]),
                _rate_cell(row["sr"], "sr" in best),
                _rate_cell(row["sr_offline"], "sr_offline" in best),
                _rate_cell(row["sr_online"], "sr_online" in best),
                Cell(_pct(cr["value"]), f"({cr['tasks']} tasks)", "cr" in best),
                Cell(_pct(da["value"]), f"({da['correct']} of {da['decisions']})", "da" in best),
                Cell(_seconds(ail["value"]), f"({ail['steps']} steps)", "ail" in best),
                Cell(str(row["tokens_in"]["value"]), "", "tokens_in" in best),
                Cell(str(row["tokens_out"]["value"]), "", "tokens_out" in best),
                Cell(_number(cost["value"], ".4f"), "", "cost" in best),
            )
        )
    notes = [
        "SR: successes of evaluated tasks (harness errors excluded and counted), 95% Wilson "
        "interval in brackets; offline and online SR count the tasks of that protocol. "
        "CR: mean over the tasks with a graph; DA: correct of decisions, pooled; AIL: "
        "seconds of inference and parsing per step; tokens: the agent's; cost: agent, "
        f"judges and simulated user, in {tables.currency}. The best value of each column "
        "is marked (ties all; none when every run has the same value).",
    ]
    for row in tables.main:
        eaf = row["sr_errors_as_failures"]
        if row["sr"]["errors"]:
            notes.append(
                f"{row['run']}: SR with errors as failures {_pct(eaf['value'])} "
                f"({eaf['successes']} of {eaf['tasks']})."
            )
        if row["cost"]["unpriced_models"]:
            notes.append(f"{row['run']}: no price for {', '.join(row['cost']['unpriced_models'])}.")
    notes += [f"Note: {n}." for n in tables.notes]
    for key, what in (("mode", "offline mode"), ("matching", "matching profile")):
        used = [(r.label, r.summary.get(key)) for r in tables.runs]
        if len({v for _, v in used}) > 1:
            notes.append(
                f"The runs differ in {what}: " + ", ".join(f"{r} {v}" for r, v in used) + "."
            )
    headers = (
        "Run",
        "SR all",
        "SR offline",
        "SR online",
        "CR",
        "DA",
        "AIL (s)",
        "Tokens in",
        "Tokens out",
        f"Cost ({tables.currency})",
    )
    title = f"Success and cost of {len(tables.runs)} run(s)"
    return Grid(1, title, headers, tuple(rows), tuple(notes), 1)


def pairs_grid(tables: Tables) -> Grid:
    rows = []
    notes = [
        f"Each pair on the tasks both runs evaluated (errors in either run left out). "
        f"Delta SR = SR(A) - SR(B) in points, with its 95% paired-bootstrap interval; exact "
        f"two-sided McNemar p on the discordant pairs, Holm-adjusted across the "
        f"{len(tables.pairs)} pair(s)."
    ]
    for p in tables.pairs:
        delta = p["sr_difference"]
        interval = (
            f"[{100 * p['ci_low']:.1f}, {100 * p['ci_high']:.1f}]"
            if p["ci_low"] is not None
            else ""
        )
        rows.append(
            (
                Cell(p["a"]),
                Cell(p["b"]),
                Cell(str(p["pairs"])),
                Cell(_pct(p["sr_a"]), f"({p['successes_a']} of {p['pairs']})"),
                Cell(_pct(p["sr_b"]), f"({p['successes_b']} of {p['pairs']})"),
                Cell(_number(None if delta is None else 100 * delta, "+.1f"), interval),
                Cell(f"{p['only_a']} / {p['only_b']}"),
                Cell(format(p["mcnemar_p"], ".4g")),
                Cell(format(p["holm_p"], ".4g")),
            )
        )
        left = {k: v for k, v in p["left_out"].items() if v}
        if left:
            said = "; ".join(f"{k.replace('_', ' ')}: {', '.join(v)}" for k, v in left.items())
            notes.append(f"{p['a']} vs {p['b']}: left out {said}.")
    headers = (
        "A",
        "B",
        "Shared tasks",
        "SR A",
        "SR B",
        "Delta SR (points)",
        "Only A / only B",
        "McNemar p",
        "Holm p",
    )
    return Grid(2, "Paired comparisons", headers, tuple(rows), tuple(notes), 2)


def labels_grid(tables: Tables) -> Grid:
    rows = []
    for row in tables.labels:
        cells = [_rate_cell(row["runs"][r.label], ci=False) for r in tables.runs]
        rows.append((Cell(row["dimension"]), Cell(row["label"]), *cells))
    notes = (
        "SR of the evaluated tasks carrying each label (successes of evaluated tasks); a "
        "task with two labels of one dimension counts in both.",
    )
    headers = ("Dimension", "Label", *(r.label for r in tables.runs))
    return Grid(3, "SR per label", headers, tuple(rows), notes, 2)


def manifest_notes(tables: Tables) -> tuple[str, ...]:
    """What pins each run (``evaluator.manifest``), a line a run, under every table so
    that a table copied alone still says where its numbers came from."""
    notes = []
    for run in tables.runs:
        if run.manifest is None:
            notes.append(f"Manifest of {run.label}: none ({run.manifest_problem}).")
        else:
            lines = essentials_lines(run.manifest, short=True)
            notes.append(f"Manifest of {run.label}: " + "; ".join(lines) + ".")
    return tuple(notes)


def grids(tables: Tables) -> tuple[Grid, ...]:
    pinned = manifest_notes(tables)
    return tuple(
        replace(grid, notes=(*grid.notes, *pinned))
        for grid in (main_grid(tables), pairs_grid(tables), labels_grid(tables))
    )


# --------------------------------------------------------------------------- Markdown


def _md(cell: Cell) -> str:
    head = f"**{cell.head}**" if cell.best else cell.head
    return f"{head} {cell.tail}".strip()


def render_md(tables: Tables) -> str:
    blocks: list[Block] = []
    for grid in grids(tables):
        blocks.append(
            ("p", f"**Table {grid.number}: {grid.title}**")
        )  # fits under any heading level
        blocks.append(Table(grid.headers, [[_md(c) for c in row] for row in grid.rows]))
        blocks += [("p", note) for note in grid.notes]
    return render_markdown(blocks)


# --------------------------------------------------------------------------- LaTeX

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",  # the default font encoding would print an inverted "!"
    ">": r"\textgreater{}",
}


def latex_escape(text: str) -> str:
    """Text as LaTeX typesets it literally.

    >>> print(latex_escape("50% of a_b & {c}"))
    50\\% of a\\_b \\& \\{c\\}
    """
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def _stacked(lines: list[str], align: str) -> str:
    """Lines of TeX in one cell, one under the other (a nested tabular: no package); each
    line braced so that a leading "[" is not read as the length argument of the break."""
    if len(lines) == 1:
        return lines[0]
    body = r" \\ ".join(f"{{{line}}}" for line in lines)
    return rf"\begin{{tabular}}[t]{{@{{}}{align}@{{}}}}{body}\end{{tabular}}"


def _tex(cell: Cell, align: str) -> str:
    """The figure over its base (interval, then count), and a name over its parenthesis
    ("heuristic" over "(normalized)"), so that wide tables stay narrow."""
    head = latex_escape(cell.head)
    head = rf"\textbf{{{head}}}" if cell.best else head
    if not cell.tail:
        name, paren, rest = cell.head.partition(" (")
        lines = [latex_escape(name), latex_escape(paren[1:] + rest)]
        return _stacked(lines if paren and not cell.best else [head], align)
    tail = [latex_escape(part) for part in cell.tail.replace("] (", "]\n(").split("\n") if part]
    return _stacked([head, *tail], align)


def _tex_header(text: str, align: str) -> str:
    words = text.split(" ", 1)
    return _stacked([latex_escape(w) for w in words], align)


def render_latex(tables: Tables) -> str:
    out = [r"% Tables of elderbench table; needs \usepackage{booktabs} in the preamble."]
    for grid in grids(tables):
        spec = "l" * grid.left_columns + "r" * (len(grid.headers) - grid.left_columns)
        out += [
            r"\begin{table*}[t]",
            r"\centering",
            r"\scriptsize",
            r"\setlength{\tabcolsep}{4pt}",
            rf"\caption{{{latex_escape(grid.title)}}}",
            rf"\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            " & ".join(_tex_header(h, a) for h, a in zip(grid.headers, spec, strict=True)) + r" \\",
            r"\midrule",
            *(
                " & ".join(_tex(c, a) for c, a in zip(row, spec, strict=True)) + r" \\"
                for row in grid.rows
            ),
            r"\bottomrule",
            r"\end{tabular}",
            *(rf"\par\smallskip {latex_escape(note)}" for note in grid.notes),
            r"\end{table*}",
            "",
        ]
    return "\n".join(out)


# --------------------------------------------------------------------------- CSV and JSON

CSV_HEADER = ("table", "run", "versus", "dimension", "label", "quantity", "value")


def _numbers(prefix: str, value: Any) -> list[tuple[str, Any]]:
    """(quantity, number) of a cell: ``sr`` for its value, ``sr_low``, ``sr_successes``..."""
    if isinstance(value, Mapping):
        out = []
        for key, inner in value.items():
            out += _numbers(prefix if key == "value" else f"{prefix}_{key}", inner)
        return out
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return [(prefix, value)]
    if isinstance(value, list | tuple) and prefix.startswith("left_out"):
        return [(prefix, len(value))]  # the tasks left out of a pair: how many
    return []  # text (labels, model names) and the marks of the best


def csv_rows(tables: Tables) -> list[tuple[Any, ...]]:
    """Long format: one number a row, named by table, run(s), label and quantity."""
    rows: list[tuple[Any, ...]] = []
    for row in tables.main:
        for key, value in row.items():
            if key not in ("run", "best"):
                rows += [("main", row["run"], "", "", "", q, v) for q, v in _numbers(key, value)]
    for pair in tables.pairs:
        for key, value in pair.items():
            if key not in ("a", "b"):
                rows += [
                    ("pairs", pair["a"], pair["b"], "", "", q, v) for q, v in _numbers(key, value)
                ]
    for row in tables.labels:
        for run, rate in row["runs"].items():
            rows += [
                ("labels", run, "", row["dimension"], row["label"], q, v)
                for q, v in _numbers("sr", rate)
            ]
    for r in tables.runs:
        rows += [("manifest", r.label, "", "", "", q, v) for q, v in manifest_rows(r.manifest)]
    return rows


def manifest_rows(manifest: Mapping[str, Any] | None) -> list[tuple[str, Any]]:
    """The manifest's essentials as (quantity, text) rows of the CSV's own columns, so a
    spreadsheet opens one rectangle; a nested name joins its keys with ":"."""
    if manifest is None:
        return [("manifest", "none")]
    out: list[tuple[str, Any]] = []
    for key, value in manifest.items():
        if key == "devices":
            for device in value:
                serial = device["serial"]
                out += [(f"device:{serial}:{k}", v) for k, v in device.items() if k != "packages"]
                out += [(f"device:{serial}:package:{p}", v) for p, v in device["packages"].items()]
        elif isinstance(value, Mapping):
            out += [(f"{key.rstrip('s')}:{k}", v) for k, v in value.items()]
        else:
            out.append((key, value))
    return out


def render_csv(tables: Tables) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    # str(float) is the shortest text that reads back as the same float
    writer.writerows(tuple("" if v is None else v for v in row) for row in csv_rows(tables))
    return buffer.getvalue()


def render_json(tables: Tables) -> str:
    return json.dumps(tables.to_json(), indent=2, ensure_ascii=False) + "\n"


FORMATS: dict[str, Callable[[Tables], str]] = {
    "md": render_md,
    "latex": render_latex,
    "csv": render_csv,
    "json": render_json,
}


def render(tables: Tables, fmt: str) -> str:
    writer = FORMATS.get(fmt)
    if writer is None:
        raise ValueError(f"unknown table format {fmt!r}; use one of {', '.join(FORMATS)}")
    return writer(tables)
