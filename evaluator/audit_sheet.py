"""The audit's HTML sheet: one card per group with the node's screenshot, the agents'
actions drawn over it (points, swipes, the element hit) and the demonstrated edges'
regions for comparison, plus the command that marks it. Images are inlined, so the page
can be sent on its own; ``audit.json`` beside it holds the same groups."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

from evaluator.audit_groups import Audit, AuditGroup
from graph_builder.io import atomic_write_text

_MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}
_STYLE = """
body { font-family: sans-serif; margin: 1.5em; }
.card { border: 1px solid #bbb; border-radius: 6px; padding: 1em; margin: 1em 0;
        display: flex; gap: 1.5em; }
.shot { position: relative; width: 270px; flex: none; }
.shot img, .shot svg { width: 270px; display: block; }
.shot svg { position: absolute; top: 0; left: 0; height: 100%; }
code { background: #f2f2f2; padding: 0 .3em; }
.valid { color: #1a7f37; } .wrong { color: #b42318; } .unsure { color: #9a6700; }
"""


def overlay_svg(group: AuditGroup) -> str:
    """SVG in the node's device pixels over its screenshot: the agents' actions in red, the
    element each hit, and a point group's tolerance (an ellipse on the glass, since the
    tolerance is measured in ``[0,1000]`` units of width and height). The studio's Audit
    view draws the same picture over the same screenshot."""
    w, h = group.screen
    sx, sy = w / 1000, h / 1000
    dot = max(w, h) / 100
    head = f"head-{group.id}"
    parts: list[str] = []
    for s in group.steps:
        if s.element_bounds is not None:
            left, top, right, bottom = s.element_bounds
            parts.append(
                f'<rect x="{left * sx:.0f}" y="{top * sy:.0f}" width="{(right - left) * sx:.0f}" '
                f'height="{(bottom - top) * sy:.0f}" fill="none" stroke="#d92d20" '
                'stroke-width="6" stroke-dasharray="18 9"/>'
            )
        point = s.target.point
        if point is None:  # back, home, a key, typed text: said on the glass
            label = html.escape(s.action_text or s.target.describe())
            parts.append(
                f'<text x="{w / 2:.0f}" y="{h * 0.94:.0f}" text-anchor="middle" '
                f'font-size="{w / 16:.0f}" fill="#d92d20" stroke="white" stroke-width="3" '
                f'paint-order="stroke">{label}</text>'
            )
            continue
        x, y = point[0] * sx, point[1] * sy
        if s.end is not None:
            parts.append(
                f'<line x1="{x:.0f}" y1="{y:.0f}" x2="{s.end[0] * sx:.0f}" '
                f'y2="{s.end[1] * sy:.0f}" stroke="#d92d20" stroke-width="{dot / 2:.0f}" '
                f'marker-end="url(#{head})"/>'
            )
        parts.append(
            f'<circle cx="{x:.0f}" cy="{y:.0f}" r="{dot:.0f}" fill="#d92d20" fill-opacity="0.7"/>'
        )
    radius = group.target.radius
    if group.target.point is not None and radius:
        cx, cy = group.target.point
        parts.append(
            f'<ellipse cx="{cx * sx:.0f}" cy="{cy * sy:.0f}" rx="{radius * sx:.0f}" '
            f'ry="{radius * sy:.0f}" fill="none" stroke="#d92d20" stroke-width="4"/>'
        )
    return (
        f'<svg viewBox="0 0 {w} {h}" xmlns="http://www.w3.org/2000/svg"><defs>'
        f'<marker id="{head}" markerWidth="6" markerHeight="6" refX="3" refY="3" '
        'orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#d92d20"/></marker></defs>'
        f"{''.join(parts)}</svg>"
    )


def _image(path: Path) -> str:
    try:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
    except OSError as exc:
        return f"<p>screenshot {html.escape(str(path))} cannot be read: {exc.strerror}</p>"
    mime = _MIME.get(path.suffix.lower(), "image/png")
    return f'<img alt="node screenshot" src="data:{mime};base64,{data}">'


def _card(group: AuditGroup, runs: str) -> str:
    e = html.escape
    mark = group.mark
    status = (
        f'<b class="{mark.verdict.value}">{mark.verdict.value}</b> by {e(mark.annotator)}'
        + (f": {e(mark.note)}" if mark.note else "")
        if mark
        else "<b>not marked</b>"
    )
    steps = "".join(
        f"<li>{e(s.agent)} in {e(s.run)}, step {s.index + 1}: {e(s.action_text)} "
        f"<i>({e(s.rule)})</i></li>"
        for s in group.steps
    )
    command = f"elderbench audit {runs} --mark {group.id} valid --annotator NAME"
    return (
        f'<div class="card" id="{e(group.id)}"><div class="shot">{_image(group.screenshot)}'
        f"{overlay_svg(group)}</div><div><h2>{e(group.id)}: {e(group.target.describe())}</h2>"
        f"<p>Task <b>{e(group.task_id)}</b>, node <b>{e(group.node_id)}</b>; "
        f"{len(group.steps)} step(s) by {e(', '.join(group.agents))}. {status}</p>"
        f"<ul>{steps}</ul><p>Mark it: <code>{e(command)}</code> (or wrong, unsure)</p>"
        "</div></div>"
    )


def render_sheet(audit: Audit) -> str:
    runs = " ".join(sorted({r for g in audit.groups for r in g.runs}))
    cards = "".join(_card(g, runs) for g in audit.groups)
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in audit.notes)
    steps = sum(len(g.steps) for g in audit.groups)
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Audit: what the graph did "
        f"not credit</title><style>{_STYLE}</style></head><body>"
        f"<h1>What the graph did not credit</h1><p>{steps} unmatched step(s) in "
        f"{len(audit.groups)} group(s), suite {html.escape(str(audit.suite))}. Red: the "
        "agents' actions (dashed: the element hit; a ring: the group's tolerance).</p>"
        f"{cards}" + (f"<h2>Left out</h2><ul>{notes}</ul>" if notes else "") + "</body></html>"
    )


def write_sheet(audit: Audit, out: Path) -> tuple[Path, Path]:
    """Write ``out/audit.html`` and ``out/audit.json`` atomically."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    page, data = out / "audit.html", out / "audit.json"
    atomic_write_text(page, render_sheet(audit))
    atomic_write_text(data, json.dumps(audit.to_json(), indent=2, ensure_ascii=False) + "\n")
    return page, data
