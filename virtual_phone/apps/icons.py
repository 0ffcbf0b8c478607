"""Vector-ish icons for the virtual phone, drawn with Pillow primitives in a unit square.

Each icon is a function of (draw, box, color) where ``box`` maps unit coordinates to
pixels; :func:`paint_icon` is the widgets painter that looks the icon up by the view's
``icon`` name. An unknown name draws the name's first letter, so nothing is invisible.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from PIL import Image, ImageDraw

from virtual_phone.widgets import Color, Rect, View, font


class Box:
    """Maps unit coordinates (0..1) to the pixels of a centred square inside a rect."""

    __slots__ = ("x0", "y0", "s")

    def __init__(self, r: Rect) -> None:
        self.s = min(r.width, r.height)
        self.x0 = r.left + (r.width - self.s) / 2
        self.y0 = r.top + (r.height - self.s) / 2

    def p(self, x: float, y: float) -> tuple[float, float]:
        return self.x0 + x * self.s, self.y0 + y * self.s

    def box(self, x1: float, y1: float, x2: float, y2: float) -> tuple[float, float, float, float]:
        return (*self.p(x1, y1), *self.p(x2, y2))

    def w(self, fraction: float) -> int:
        return max(2, round(self.s * fraction))


Icon = Callable[[ImageDraw.ImageDraw, Box, Color], None]


def _nav_back(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.polygon([b.p(0.72, 0.2), b.p(0.72, 0.8), b.p(0.22, 0.5)], outline=c, width=b.w(0.08))


def _nav_home(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.ellipse(b.box(0.2, 0.2, 0.8, 0.8), outline=c, width=b.w(0.08))


def _nav_recents(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.rounded_rectangle(b.box(0.22, 0.22, 0.78, 0.78), radius=b.w(0.06), outline=c, width=b.w(0.08))


def _arrow_back(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    w = b.w(0.09)
    d.line([b.p(0.2, 0.5), b.p(0.82, 0.5)], fill=c, width=w)
    d.line([b.p(0.48, 0.2), b.p(0.2, 0.5), b.p(0.48, 0.8)], fill=c, width=w, joint="curve")


def _chevron_right(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.line([b.p(0.38, 0.2), b.p(0.66, 0.5), b.p(0.38, 0.8)], fill=c, width=b.w(0.09), joint="curve")


def _search(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    w = b.w(0.09)
    d.ellipse(b.box(0.16, 0.16, 0.64, 0.64), outline=c, width=w)
    d.line([b.p(0.58, 0.58), b.p(0.86, 0.86)], fill=c, width=w)


def _plus(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    w = b.w(0.1)
    d.line([b.p(0.5, 0.18), b.p(0.5, 0.82)], fill=c, width=w)
    d.line([b.p(0.18, 0.5), b.p(0.82, 0.5)], fill=c, width=w)


def _minus(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.line([b.p(0.18, 0.5), b.p(0.82, 0.5)], fill=c, width=b.w(0.1))


def _close(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    w = b.w(0.09)
    d.line([b.p(0.22, 0.22), b.p(0.78, 0.78)], fill=c, width=w)
    d.line([b.p(0.78, 0.22), b.p(0.22, 0.78)], fill=c, width=w)


def _check(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.line(
        [b.p(0.18, 0.52), b.p(0.4, 0.74), b.p(0.84, 0.28)], fill=c, width=b.w(0.1), joint="curve"
    )


def _phone(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    # a handset: earpiece (top left) and mouthpiece (bottom right) joined by a curved grip
    d.arc(b.box(0.12, -0.3, 1.3, 0.88), start=90, end=180, fill=c, width=b.w(0.18))
    d.rounded_rectangle(b.box(0.08, 0.1, 0.36, 0.36), radius=b.w(0.07), fill=c)
    d.rounded_rectangle(b.box(0.64, 0.64, 0.9, 0.92), radius=b.w(0.07), fill=c)


def _call_end(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.chord(b.box(0.08, 0.32, 0.92, 0.9), start=180, end=360, fill=c)
    d.rounded_rectangle(b.box(0.08, 0.5, 0.3, 0.68), radius=b.w(0.05), fill=c)
    d.rounded_rectangle(b.box(0.7, 0.5, 0.92, 0.68), radius=b.w(0.05), fill=c)


def _message(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.rounded_rectangle(b.box(0.12, 0.16, 0.88, 0.7), radius=b.w(0.12), fill=c)
    d.polygon([b.p(0.24, 0.66), b.p(0.46, 0.66), b.p(0.24, 0.88)], fill=c)


def _send(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.polygon([b.p(0.14, 0.16), b.p(0.9, 0.5), b.p(0.14, 0.84), b.p(0.24, 0.5)], fill=c)


def _person(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.ellipse(b.box(0.33, 0.12, 0.67, 0.46), fill=c)
    d.chord(b.box(0.14, 0.52, 0.86, 1.2), start=180, end=360, fill=c)


def _gear(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    cx, cy = b.p(0.5, 0.5)
    for i in range(8):
        a = math.pi * i / 4
        d.line(
            [(cx, cy), (cx + math.cos(a) * b.s * 0.4, cy + math.sin(a) * b.s * 0.4)],
            fill=c,
            width=b.w(0.14),
        )
    d.ellipse(b.box(0.2, 0.2, 0.8, 0.8), fill=c)


def _gear_hollow(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    _gear(d, b, c)
    d.ellipse(b.box(0.38, 0.38, 0.62, 0.62), fill=(255, 255, 255))


def _clock(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    w = b.w(0.08)
    d.ellipse(b.box(0.14, 0.14, 0.86, 0.86), outline=c, width=w)
    d.line([b.p(0.5, 0.28), b.p(0.5, 0.5), b.p(0.66, 0.6)], fill=c, width=w, joint="curve")


def _alarm(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    _clock(d, b, c)
    d.line([b.p(0.12, 0.22), b.p(0.26, 0.1)], fill=c, width=b.w(0.08))
    d.line([b.p(0.88, 0.22), b.p(0.74, 0.1)], fill=c, width=b.w(0.08))


def _sun(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    cx, cy = b.p(0.5, 0.5)
    for i in range(8):
        a = math.pi * i / 4
        d.line(
            [
                (cx + math.cos(a) * b.s * 0.3, cy + math.sin(a) * b.s * 0.3),
                (cx + math.cos(a) * b.s * 0.45, cy + math.sin(a) * b.s * 0.45),
            ],
            fill=c,
            width=b.w(0.07),
        )
    d.ellipse(b.box(0.3, 0.3, 0.7, 0.7), fill=c)


def _cloud(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.ellipse(b.box(0.12, 0.42, 0.46, 0.76), fill=c)
    d.ellipse(b.box(0.3, 0.26, 0.7, 0.66), fill=c)
    d.ellipse(b.box(0.54, 0.4, 0.88, 0.74), fill=c)
    d.rectangle(b.box(0.29, 0.56, 0.71, 0.76), fill=c)


def _partly(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    sun = Box(Rect(*(round(v) for v in b.box(0.3, 0.0, 1.0, 0.7))))
    _sun(d, sun, (250, 190, 40))
    _cloud(d, Box(Rect(*(round(v) for v in b.box(0.0, 0.2, 0.85, 1.05)))), c)


def _rain(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    _cloud(d, Box(Rect(*(round(v) for v in b.box(0.0, -0.12, 1.0, 0.88)))), c)
    for x in (0.3, 0.5, 0.7):
        d.line([b.p(x, 0.72), b.p(x - 0.06, 0.9)], fill=(60, 120, 220), width=b.w(0.06))


def _pill(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    # a capsule on the diagonal: one half filled, the other outlined
    w = b.w(0.3)
    r = w / 2
    (x1, y1), (xm, ym), (x2, y2) = b.p(0.28, 0.72), b.p(0.5, 0.5), b.p(0.72, 0.28)
    d.line([(x1, y1), (xm, ym)], fill=c, width=w)
    d.ellipse((x1 - r, y1 - r, x1 + r, y1 + r), fill=c)
    line = b.w(0.06)
    d.line([(xm, ym), (x2, y2)], fill=c, width=w)
    d.ellipse((x2 - r, y2 - r, x2 + r, y2 + r), fill=c)
    inner = (w - 2 * line) / 2
    d.line([(xm + line, ym - line), (x2, y2)], fill=(255, 255, 255), width=max(1, w - 2 * line))
    d.ellipse((x2 - inner, y2 - inner, x2 + inner, y2 + inner), fill=(255, 255, 255))


def _cart(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    w = b.w(0.08)
    d.line(
        [
            b.p(0.08, 0.2),
            b.p(0.22, 0.2),
            b.p(0.32, 0.64),
            b.p(0.8, 0.64),
            b.p(0.88, 0.32),
            b.p(0.26, 0.32),
        ],
        fill=c,
        width=w,
        joint="curve",
    )
    for x in (0.36, 0.74):
        d.ellipse(b.box(x - 0.07, 0.74, x + 0.07, 0.88), fill=c)


def _delete(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.rectangle(b.box(0.26, 0.32, 0.74, 0.86), outline=c, width=b.w(0.08))
    d.line([b.p(0.18, 0.24), b.p(0.82, 0.24)], fill=c, width=b.w(0.08))
    d.line([b.p(0.4, 0.14), b.p(0.6, 0.14)], fill=c, width=b.w(0.08))


def _backspace(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.polygon(
        [b.p(0.08, 0.5), b.p(0.3, 0.24), b.p(0.9, 0.24), b.p(0.9, 0.76), b.p(0.3, 0.76)],
        outline=c,
        width=b.w(0.07),
    )
    d.line([b.p(0.45, 0.38), b.p(0.7, 0.62)], fill=c, width=b.w(0.07))
    d.line([b.p(0.7, 0.38), b.p(0.45, 0.62)], fill=c, width=b.w(0.07))


def _dialpad(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    for row in range(4):
        for col in range(3):
            if row == 3 and col != 1:
                continue
            x, y = 0.26 + col * 0.24, 0.14 + row * 0.24
            d.ellipse(b.box(x - 0.07, y - 0.07, x + 0.07, y + 0.07), fill=c)


def _wifi(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.pieslice(b.box(0.0, 0.12, 1.0, 1.12), start=225, end=315, fill=c)


def _signal(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.polygon([b.p(0.9, 0.1), b.p(0.9, 0.9), b.p(0.1, 0.9)], fill=c)


def _battery(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.rounded_rectangle(b.box(0.3, 0.14, 0.7, 0.92), radius=b.w(0.05), fill=c)
    d.rectangle(b.box(0.42, 0.06, 0.58, 0.14), fill=c)


def _airplane(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.line([b.p(0.5, 0.08), b.p(0.5, 0.86)], fill=c, width=b.w(0.1))
    d.polygon(
        [
            b.p(0.06, 0.56),
            b.p(0.5, 0.34),
            b.p(0.94, 0.56),
            b.p(0.94, 0.64),
            b.p(0.5, 0.52),
            b.p(0.06, 0.64),
        ],
        fill=c,
    )
    d.polygon([b.p(0.3, 0.92), b.p(0.5, 0.8), b.p(0.7, 0.92)], fill=c)


def _volume(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.polygon(
        [
            b.p(0.12, 0.38),
            b.p(0.3, 0.38),
            b.p(0.52, 0.18),
            b.p(0.52, 0.82),
            b.p(0.3, 0.62),
            b.p(0.12, 0.62),
        ],
        fill=c,
    )
    d.arc(b.box(0.4, 0.26, 0.76, 0.74), start=-50, end=50, fill=c, width=b.w(0.07))
    d.arc(b.box(0.38, 0.12, 0.92, 0.88), start=-50, end=50, fill=c, width=b.w(0.07))


def _mic_off(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.rounded_rectangle(b.box(0.38, 0.1, 0.62, 0.56), radius=b.w(0.12), fill=c)
    d.arc(b.box(0.24, 0.26, 0.76, 0.72), start=0, end=180, fill=c, width=b.w(0.06))
    d.line([b.p(0.5, 0.72), b.p(0.5, 0.88)], fill=c, width=b.w(0.06))
    d.line([b.p(0.16, 0.12), b.p(0.84, 0.88)], fill=c, width=b.w(0.07))


def _grid(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    for x in (0.2, 0.56):
        for y in (0.2, 0.56):
            d.rounded_rectangle(b.box(x, y, x + 0.24, y + 0.24), radius=b.w(0.04), fill=c)


def _bell(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.chord(b.box(0.22, 0.14, 0.78, 0.7), start=180, end=360, fill=c)
    d.polygon([b.p(0.22, 0.42), b.p(0.78, 0.42), b.p(0.88, 0.74), b.p(0.12, 0.74)], fill=c)
    d.ellipse(b.box(0.42, 0.76, 0.58, 0.9), fill=c)


def _lock(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.arc(b.box(0.3, 0.1, 0.7, 0.56), start=180, end=360, fill=c, width=b.w(0.08))
    d.line([b.p(0.3, 0.33), b.p(0.3, 0.46)], fill=c, width=b.w(0.08))
    d.line([b.p(0.7, 0.33), b.p(0.7, 0.46)], fill=c, width=b.w(0.08))
    d.rounded_rectangle(b.box(0.2, 0.44, 0.8, 0.9), radius=b.w(0.06), fill=c)


def _location(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.ellipse(b.box(0.22, 0.08, 0.78, 0.64), fill=c)
    d.polygon([b.p(0.25, 0.46), b.p(0.75, 0.46), b.p(0.5, 0.92)], fill=c)


def _letter(letter: str) -> Icon:
    def draw(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
        d.text(
            b.p(0.5, 0.52),
            letter,
            font=font(max(8, int(b.s * 0.72))),
            fill=c,
            anchor="mm",
            stroke_width=max(1, b.s // 30),
            stroke_fill=c,
        )

    return draw


def _star(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    pts = []
    for i in range(10):
        a = -math.pi / 2 + math.pi * i / 5
        r = 0.44 if i % 2 == 0 else 0.2
        pts.append(b.p(0.5 + math.cos(a) * r, 0.54 + math.sin(a) * r))
    d.polygon(pts, fill=c)


def _history(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    w = b.w(0.08)
    d.arc(b.box(0.14, 0.14, 0.86, 0.86), start=200, end=520, fill=c, width=w)
    d.line([b.p(0.5, 0.3), b.p(0.5, 0.5), b.p(0.64, 0.62)], fill=c, width=w, joint="curve")


def _storage(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    for y in (0.18, 0.44, 0.7):
        d.rounded_rectangle(b.box(0.16, y, 0.84, y + 0.16), radius=b.w(0.04), fill=c)


def _brightness(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    _sun(d, b, c)


def _palette(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.ellipse(b.box(0.12, 0.12, 0.88, 0.88), outline=c, width=b.w(0.08))
    for x, y in ((0.36, 0.36), (0.62, 0.34), (0.32, 0.6)):
        d.ellipse(b.box(x - 0.07, y - 0.07, x + 0.07, y + 0.07), fill=c)


def _shield(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.polygon(
        [
            b.p(0.5, 0.08),
            b.p(0.84, 0.22),
            b.p(0.8, 0.6),
            b.p(0.5, 0.92),
            b.p(0.2, 0.6),
            b.p(0.16, 0.22),
        ],
        fill=c,
    )


def _accessibility(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    w = b.w(0.08)
    d.ellipse(b.box(0.42, 0.08, 0.58, 0.24), fill=c)
    d.line([b.p(0.16, 0.34), b.p(0.84, 0.34)], fill=c, width=w)
    d.line([b.p(0.5, 0.34), b.p(0.5, 0.6)], fill=c, width=w)
    d.line([b.p(0.34, 0.9), b.p(0.5, 0.6), b.p(0.66, 0.9)], fill=c, width=w, joint="curve")


def _bluetooth(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.line(
        [
            b.p(0.28, 0.3),
            b.p(0.7, 0.68),
            b.p(0.5, 0.88),
            b.p(0.5, 0.12),
            b.p(0.7, 0.32),
            b.p(0.28, 0.7),
        ],
        fill=c,
        width=b.w(0.07),
        joint="curve",
    )


def _more_vert(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    for y in (0.24, 0.5, 0.76):
        d.ellipse(b.box(0.42, y - 0.08, 0.58, y + 0.08), fill=c)


def _edit(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.line([b.p(0.2, 0.8), b.p(0.78, 0.22)], fill=c, width=b.w(0.14))
    d.polygon([b.p(0.12, 0.88), b.p(0.16, 0.7), b.p(0.3, 0.84)], fill=c)


def _shift(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.polygon(
        [
            b.p(0.5, 0.14),
            b.p(0.86, 0.52),
            b.p(0.66, 0.52),
            b.p(0.66, 0.84),
            b.p(0.34, 0.84),
            b.p(0.34, 0.52),
            b.p(0.14, 0.52),
        ],
        outline=c,
        width=b.w(0.07),
    )


def _home_outline(d: ImageDraw.ImageDraw, b: Box, c: Color) -> None:
    d.polygon(
        [
            b.p(0.5, 0.12),
            b.p(0.88, 0.46),
            b.p(0.78, 0.46),
            b.p(0.78, 0.86),
            b.p(0.22, 0.86),
            b.p(0.22, 0.46),
            b.p(0.12, 0.46),
        ],
        fill=c,
    )


ICONS: dict[str, Icon] = {
    "nav_back": _nav_back,
    "nav_home": _nav_home,
    "nav_recents": _nav_recents,
    "arrow_back": _arrow_back,
    "chevron_right": _chevron_right,
    "search": _search,
    "plus": _plus,
    "minus": _minus,
    "close": _close,
    "check": _check,
    "phone": _phone,
    "call_end": _call_end,
    "message": _message,
    "send": _send,
    "person": _person,
    "gear": _gear,
    "settings": _gear_hollow,
    "clock": _clock,
    "alarm": _alarm,
    "sun": _sun,
    "cloud": _cloud,
    "partly": _partly,
    "rain": _rain,
    "pill": _pill,
    "cart": _cart,
    "delete": _delete,
    "backspace": _backspace,
    "dialpad": _dialpad,
    "wifi": _wifi,
    "signal": _signal,
    "battery": _battery,
    "airplane": _airplane,
    "volume": _volume,
    "mic_off": _mic_off,
    "apps": _grid,
    "bell": _bell,
    "lock": _lock,
    "location": _location,
    "star": _star,
    "history": _history,
    "storage": _storage,
    "brightness": _brightness,
    "palette": _palette,
    "shield": _shield,
    "accessibility": _accessibility,
    "bluetooth": _bluetooth,
    "more": _more_vert,
    "edit": _edit,
    "speaker": _volume,
    "home": _home_outline,
    "shift": _shift,
    "text_size": _letter("A"),
    "info": _letter("i"),
    "google": _letter("G"),
    "help": _letter("?"),
    "emergency": _letter("*"),
    "key": _letter("K"),
    "wellbeing": _letter("W"),
    "system": _letter("i"),
}


def paint_icon(draw: ImageDraw.ImageDraw, v: View, r: Rect, img: Image.Image) -> None:
    """Widgets painter: draw the icon named by ``v.icon`` centred in ``r``."""
    ICONS.get(v.icon, _letter(v.icon[:1].upper() or "?"))(draw, Box(r), v.icon_color)
