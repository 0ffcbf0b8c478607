"""Small self-contained SVG charts for reports (no plotting library)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

_FONT = 'font-family="Helvetica, Arial, sans-serif" font-size="12"'
_SMALL_FONT = 'font-family="Helvetica, Arial, sans-serif" font-size="10"'
_BAR = "#4a78b5"
_BAR_ALT = "#e0913a"


def bar_chart(
    title: str,
    bars: Sequence[tuple[str, float | None, str]],
    *,
    max_value: float = 1.0,
    width: int = 640,
    alt: Sequence[float | None] | None = None,
    alt_notes: Sequence[str] | None = None,
) -> str:
    """Horizontal bars: (label, value or None, text shown after the bar).

    ``alt`` draws a second, thinner bar per row (e.g. the compared run), with
    ``alt_notes`` (its values as text) after it.
    """
    label_w, row_h, top = 190, 26 if alt is None else 34, 34
    plot_w = width - label_w - 90
    height = top + row_h * max(1, len(bars)) + 12
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="8" y="20" {_FONT} font-weight="bold">{escape(title)}</text>',
    ]
    scale = plot_w / max_value if max_value > 0 else 0.0
    for i, (label, value, note) in enumerate(bars):
        y = top + i * row_h
        short = label if len(label) <= 28 else label[:27] + "…"
        out.append(
            f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end" {_FONT}>'
            f"<title>{escape(label)}</title>{escape(short)}</text>"
        )
        w = max(0.0, min(value or 0.0, max_value)) * scale
        h = 18 if alt is None else 14
        out.append(f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{h}" fill="{_BAR}"/>')
        if alt is not None:
            other = alt[i] or 0.0
            w2 = max(0.0, min(other, max_value)) * scale
            out.append(
                f'<rect x="{label_w}" y="{y + 19}" width="{w2:.1f}" height="10" fill="{_BAR_ALT}"/>'
            )
            if alt_notes is not None:
                out.append(
                    f'<text x="{label_w + w2 + 6:.1f}" y="{y + 29}" {_SMALL_FONT} '
                    f'fill="{_BAR_ALT}">{escape(alt_notes[i])}</text>'
                )
        out.append(f'<text x="{label_w + w + 6:.1f}" y="{y + 15}" {_FONT}>{escape(note)}</text>')
    out.append(
        f'<line x1="{label_w}" y1="{top - 2}" x2="{label_w}" y2="{height - 10}" stroke="#333"/>'
    )
    out.append("</svg>")
    return "\n".join(out)


def scatter_chart(
    title: str,
    points: Sequence[tuple[str, float, float]],
    *,
    x_label: str,
    y_label: str,
    width: int = 640,
    height: int = 360,
    y_max: float = 1.0,
) -> str:
    """Labelled points (label, x, y); x starts at 0, y spans [0, ``y_max``]."""
    left, right, top, bottom = 60, 20, 34, 46
    plot_w, plot_h = width - left - right, height - top - bottom
    x_max = max((x for _, x, _ in points), default=1.0) * 1.1 or 1.0
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="8" y="20" {_FONT} font-weight="bold">{escape(title)}</text>',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
        'stroke="#333"/>',
        f'<text x="{left + plot_w / 2}" y="{height - 10}" text-anchor="middle" {_FONT}>'
        f"{escape(x_label)}</text>",
        f'<text x="14" y="{top + plot_h / 2}" text-anchor="middle" {_FONT} '
        f'transform="rotate(-90 14 {top + plot_h / 2})">{escape(y_label)}</text>',
    ]
    for k in range(5):
        fy = k / 4
        y = top + plot_h - fy * plot_h
        out.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" {_FONT}>'
            f"{fy * y_max:.2g}</text>"
        )
        x = left + fy * plot_w
        out.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle" {_FONT}>'
            f"{fy * x_max:.2g}</text>"
        )
    placed: list[tuple[float, float, float, float]] = []  # label boxes drawn so far
    for label, xv, yv in points:
        x = left + (xv / x_max) * plot_w
        y = top + plot_h - min(max(yv / y_max, 0.0), 1.0) * plot_h
        out.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{_BAR}">'
            f"<title>{escape(label)}: {xv:.3g}, {yv:.3g}</title></circle>"
        )
        text = label[:24]
        lx, ly = _label_spot(x, y, len(text) * 7.0, placed, (left, top, left + plot_w, height))
        out.append(f'<text x="{lx:.1f}" y="{ly:.1f}" {_FONT}>{escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _label_spot(
    x: float,
    y: float,
    text_w: float,
    placed: list[tuple[float, float, float, float]],
    area: tuple[float, float, float, float],
) -> tuple[float, float]:
    """Where a point's label goes: the first spot around it that overlaps no label drawn
    before (points of equal latency and SR would otherwise print over each other)."""
    h = 14.0
    spots: list[tuple[float, float]] = [(7, -6), (7, 14), (-7 - text_w, -6), (-7 - text_w, 14)]
    spots += [(7, -6 - h * k) for k in range(1, 6)] + [(7, 14 + h * k) for k in range(1, 6)]
    best = spots[0]
    for dx, dy in spots:
        box = (x + dx, y + dy - h + 3, x + dx + text_w, y + dy + 3)
        inside = box[0] >= area[0] - 40 and box[2] <= area[2] + 20 and box[1] >= area[1] - 20
        clear = all(
            box[2] <= b[0] or box[0] >= b[2] or box[3] <= b[1] or box[1] >= b[3] for b in placed
        )
        if inside and clear:
            best = (dx, dy)
            break
    dx, dy = best
    placed.append((x + dx, y + dy - h + 3, x + dx + text_w, y + dy + 3))
    return x + dx, y + dy
