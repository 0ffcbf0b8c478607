"""The small document model of the reports: headings and paragraphs, tables and charts.

A document is a list of blocks; ``render_markdown`` and ``render_html`` write it out. The
run report (``evaluator.report``) and the language analysis (``evaluator.language.analysis``)
build their documents with it.

>>> doc = [("h1", "Title"), Table(("a", "b"), [["1", "x|y"]]), ("p", f"done {percent(0.5)}")]
>>> print(render_markdown(doc))
# Title
<BLANKLINE>
| a | b |
|---|---|
| 1 | x\\|y |
<BLANKLINE>
done 50.0%
<BLANKLINE>
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass


def percent(value: float | None) -> str:
    """A share as a percentage with one decimal ("n/a" for None)."""
    return "n/a" if value is None else f"{100 * value:.1f}%"


@dataclass(frozen=True, slots=True)
class Table:
    headers: Sequence[str]
    rows: Sequence[Sequence[str]]


@dataclass(frozen=True, slots=True)
class Chart:
    name: str
    title: str
    svg: str


Block = tuple[str, str] | Table | Chart  # ("h2"/"p", text)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(blocks: Sequence[Block]) -> str:
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, Table):
            lines.append("| " + " | ".join(_md_cell(h) for h in block.headers) + " |")
            lines.append("|" + "---|" * len(block.headers))
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
        elif isinstance(block, Chart):
            lines.append(f"![{block.title}](report_{block.name}.svg)")
        else:
            kind, text = block
            prefix = {"h1": "# ", "h2": "## ", "h3": "### "}.get(kind, "")
            lines.append(prefix + text)
        lines.append("")
    return "\n".join(lines)


def render_html(blocks: Sequence[Block], title: str) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:Helvetica,Arial,sans-serif;margin:2em;max-width:1100px}"
        "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #bbb;"
        "padding:3px 8px;text-align:left}th{background:#eef}figure{margin:1em 0}</style>",
        "</head><body>",
    ]
    for block in blocks:
        if isinstance(block, Table):
            parts.append(
                "<table><tr>"
                + "".join(f"<th>{html.escape(h)}</th>" for h in block.headers)
                + "</tr>"
            )
            parts += [
                "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                for row in block.rows
            ]
            parts.append("</table>")
        elif isinstance(block, Chart):
            # inline: the SVG element alone, without the file's XML declaration and doctype
            start = block.svg.find("<svg")
            parts.append(f"<figure>{block.svg[max(start, 0) :]}</figure>")
        else:
            kind, text = block
            tag = kind if kind in ("h1", "h2", "h3") else "p"
            parts.append(f"<{tag}>{html.escape(text)}</{tag}>")
    parts.append("</body></html>")
    return "\n".join(parts)
