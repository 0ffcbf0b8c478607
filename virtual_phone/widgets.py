"""The virtual phone's widget tree: one tree of Views yields both the pixels and the XML.

A screen is a list of :class:`Window` objects (app, dialog, toast, keyboard, status bar,
navigation bar), each holding a tree of :class:`View` nodes with absolute device-pixel
bounds. :func:`render_windows` paints the trees with Pillow; :func:`hierarchy_xml` writes
the same trees as a uiautomator dump; :func:`touch_order` finds the views under a touch. As
every output comes from the same nodes, the pixels and the hierarchy always agree.

Like a real dump, the XML holds only nodes visible to the user: a node clipped away by a
scrolling parent is left out, and a partly visible one gets its visible bounds.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

Color = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Rect:
    """A box in device pixels; right and bottom are exclusive, as in uiautomator bounds."""

    left: int
    top: int
    right: int
    bottom: int

    @property
    def width(self) -> int:
        return self.right - self.left

    @property
    def height(self) -> int:
        return self.bottom - self.top

    @property
    def center(self) -> tuple[int, int]:
        return (self.left + self.right) // 2, (self.top + self.bottom) // 2

    @property
    def empty(self) -> bool:
        return self.right <= self.left or self.bottom <= self.top

    def contains(self, x: float, y: float) -> bool:
        return self.left <= x < self.right and self.top <= y < self.bottom

    def intersect(self, other: Rect) -> Rect:
        return Rect(
            max(self.left, other.left),
            max(self.top, other.top),
            min(self.right, other.right),
            min(self.bottom, other.bottom),
        )

    def moved(self, dx: int, dy: int) -> Rect:
        return Rect(self.left + dx, self.top + dy, self.right + dx, self.bottom + dy)

    def inset(self, dx: int, dy: int | None = None) -> Rect:
        dy = dx if dy is None else dy
        return Rect(self.left + dx, self.top + dy, self.right - dx, self.bottom - dy)

    def bounds_text(self) -> str:
        return f"[{self.left},{self.top}][{self.right},{self.bottom}]"


class TextBuffer:
    """The editable text of one EditText; it lives on its screen, so it survives rebuilds.

    ``select_all_on_focus`` makes the first typed text replace the value, as number
    fields of a time picker do; ``soft_keyboard=False`` keeps the keyboard hidden when the
    field takes focus (the dialer's digits).
    """

    __slots__ = (
        "value",
        "hint",
        "on_change",
        "on_submit",
        "max_length",
        "digits_only",
        "select_all_on_focus",
        "soft_keyboard",
        "_selected",
    )

    def __init__(
        self,
        value: str = "",
        *,
        hint: str = "",
        on_change: Callable[[str], None] | None = None,
        on_submit: Callable[[], None] | None = None,
        max_length: int = 1000,
        digits_only: bool = False,
        select_all_on_focus: bool = False,
        soft_keyboard: bool = True,
    ) -> None:
        self.value = value
        self.hint = hint
        self.on_change = on_change
        self.on_submit = on_submit
        self.max_length = max_length
        self.digits_only = digits_only
        self.select_all_on_focus = select_all_on_focus
        self.soft_keyboard = soft_keyboard
        self._selected = False

    def focused(self) -> None:
        self._selected = self.select_all_on_focus and bool(self.value)

    def insert(self, text: str) -> None:
        if self.digits_only:
            text = "".join(c for c in text if c.isdigit())
        if not text:
            return
        base = "" if self._selected else self.value
        self._selected = False
        self._set((base + text)[: self.max_length])

    def delete(self) -> None:
        if self._selected:
            self._selected = False
            self._set("")
        elif self.value:
            self._set(self.value[:-1])

    def set(self, value: str) -> None:
        self._selected = False
        self._set(value)

    def _set(self, value: str) -> None:
        if value != self.value:
            self.value = value
            if self.on_change is not None:
                self.on_change(value)


Painter = Callable[[ImageDraw.ImageDraw, "View", Rect, Image.Image], None]
"""Draws a widget into ``Rect`` (already moved into image pixels) on the given image."""


@dataclass(eq=False, slots=True)
class View:
    """One node: its uiautomator attributes, how it paints, and what it does when touched.

    Text is drawn when ``font_px`` is set; ``label`` overrides what is drawn (an empty
    EditText shows its hint in grey but reports the hint as its text, like Android).
    ``paint`` draws what is not a box or text (a switch, a slider, an icon).
    ``cache`` is a key under which the painted subtree is kept and reused; it must name
    everything the subtree's pixels depend on, the background under it included.
    ``clip`` makes the node clip its children (scrolling lists). A drag scrolls the nearest
    ``on_scroll`` ancestor as the finger moves; ``on_swipe`` gets a finished swipe's
    (dx, dy) when no scroller took it. ``xml=False`` leaves the
    subtree out of the dump (a keyboard's keys); ``digest=False`` keeps a node's text out
    of the ground-truth digest (clocks and dates).
    """

    rect: Rect
    cls: str = "android.view.View"
    rid: str = ""
    text: str = ""
    desc: str = ""
    children: list[View] = field(default_factory=list)
    clickable: bool = False
    long_clickable: bool = False
    checkable: bool = False
    checked: bool = False
    enabled: bool = True
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    password: bool = False
    selected: bool = False
    # painting
    bg: Color | None = None
    radius: int = 0
    border: Color | None = None
    border_px: int = 0
    label: str | None = None
    font_px: int = 0
    color: Color = (28, 27, 31)
    bold: bool = False
    align: str = "start"
    valign: str = "center"
    pad: int = 0
    max_lines: int = 0
    paint: Painter | None = None
    icon: str = ""
    icon_color: Color = (28, 27, 31)
    progress: float = 0.0
    image: Image.Image | None = None
    clip: bool = False
    cache: Hashable | None = None
    xml: bool = True
    digest: bool = True
    # behaviour
    on_click: Callable[[], None] | None = None
    on_long_click: Callable[[], None] | None = None
    on_seek: Callable[[float], None] | None = None
    on_scroll: Callable[[int], bool] | None = None
    on_swipe: Callable[[int, int], None] | None = None
    field: TextBuffer | None = None

    def add(self, *views: View) -> View:
        self.children.extend(views)
        return self

    def walk(self) -> Iterator[View]:
        yield self
        for child in self.children:
            yield from child.walk()

    def shift(self, dy: int) -> None:
        """Move the subtree vertically (used to scroll list content)."""
        for v in self.walk():
            v.rect = v.rect.moved(0, dy)

    @property
    def touchable(self) -> bool:
        return self.clickable or self.long_clickable or self.on_seek is not None


@dataclass(eq=False, slots=True)
class Window:
    """A top-level window: its package, root view, and whether it takes touches."""

    name: str
    package: str
    root: View
    touchable: bool = True


# ---------------------------------------------------------------------------- text


@lru_cache(maxsize=128)
def font(px: int) -> ImageFont.FreeTypeFont:
    """Pillow's bundled scalable font at ``px`` pixels (no font file needed)."""
    loaded = ImageFont.load_default(size=max(6, px))
    if not isinstance(loaded, ImageFont.FreeTypeFont):
        raise RuntimeError("the virtual phone needs Pillow >= 10.1 built with FreeType")
    return loaded


def line_height(px: int) -> int:
    ascent, descent = font(px).getmetrics()
    return ascent + descent + px // 8


@lru_cache(maxsize=4096)
def wrap_lines(text: str, px: int, width: int, max_lines: int = 0) -> tuple[str, ...]:
    """Break ``text`` into lines no wider than ``width``; ellipsize past ``max_lines``."""
    f = font(px)
    lines: list[str] = []

    def overflowed() -> bool:
        return bool(max_lines) and len(lines) > max_lines

    for paragraph in text.split("\n"):
        current = ""
        for word in paragraph.split(" "):
            if overflowed():
                break  # enough to know it is ellipsized; long typed text stays fast
            candidate = f"{current} {word}" if current else word
            if f.getlength(candidate) <= width or not current:
                current = candidate
                while len(current) > 1 and not overflowed() and f.getlength(current) > width:
                    # a single word wider than the line: break it where it overflows
                    cut = _longest_fitting_prefix(f, current, width)
                    lines.append(current[:cut])
                    current = current[cut:]
            else:
                lines.append(current)
                current = word
        lines.append(current)
    if max_lines and len(lines) > max_lines:
        kept = lines[:max_lines]
        last = kept[-1]
        while last and f.getlength(last + "…") > width:
            last = last[:-1]
        kept[-1] = last.rstrip() + "…"
        return tuple(kept)
    return tuple(lines)


def _longest_fitting_prefix(f: ImageFont.FreeTypeFont, word: str, width: int) -> int:
    """The longest prefix length in [1, len - 1] no wider than ``width`` (1 if none fits).

    A binary search: a prefix never gets narrower as it grows, and measuring every
    prefix made typing a long word quadratic in its length.
    """
    low, high = 1, len(word) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if f.getlength(word[:middle]) <= width:
            low = middle
        else:
            high = middle - 1
    return low


def text_height(text: str, px: int, width: int, max_lines: int = 0) -> int:
    return len(wrap_lines(text, px, max(1, width), max_lines)) * line_height(px)


def text_width(text: str, px: int) -> int:
    return int(font(px).getlength(text)) + 1


# ---------------------------------------------------------------------------- painting


@lru_cache(maxsize=4096)
def _text_mask(line: str, px: int, stroke: int) -> tuple[Image.Image, int, int, float]:
    """One line rendered once as an alpha mask: (mask, left, top, advance) about the
    baseline origin. Screens repeat the same strings, so painting is mostly pastes."""
    f = font(px)
    left, top, right, bottom = (round(v) for v in f.getbbox(line, anchor="ls", stroke_width=stroke))
    mask = Image.new("L", (max(1, right - left), max(1, bottom - top)), 0)
    ImageDraw.Draw(mask).text(
        (-left, -top), line, font=f, fill=255, anchor="ls", stroke_width=stroke, stroke_fill=255
    )
    return mask, left, top, f.getlength(line)


@lru_cache(maxsize=4096)
def _text_ink(line: str, px: int, stroke: int, color: Color) -> Image.Image:
    """A solid block of ``color`` the size of the line's mask (pasting an image through a
    mask is much faster than pasting a colour)."""
    return Image.new("RGB", _text_mask(line, px, stroke)[0].size, color)


def _draw_text(img: Image.Image, v: View, r: Rect) -> None:
    label = v.text if v.label is None else v.label
    if not label or not v.font_px:
        return
    width = max(1, r.width - 2 * v.pad)
    lines = wrap_lines(label, v.font_px, width, v.max_lines)
    lh = line_height(v.font_px)
    ascent, descent = font(v.font_px).getmetrics()
    block = lh * len(lines)
    top = r.top if v.valign == "top" else r.top + (r.height - block) // 2
    stroke = 1 if v.bold else 0
    for i, line in enumerate(lines):
        if not line:
            continue
        mask, left, mtop, advance = _text_mask(line, v.font_px, stroke)
        baseline = top + i * lh + (lh - ascent - descent) // 2 + ascent
        if v.align == "center":
            x = r.left + (r.width - advance) / 2
        elif v.align == "end":
            x = r.right - v.pad - advance
        else:
            x = r.left + v.pad
        x0, y0 = round(x) + left, baseline + mtop
        ink = _text_ink(line, v.font_px, stroke, v.color)
        img.paste(ink, (x0, y0, x0 + mask.width, y0 + mask.height), mask)


def _paint_box(draw: ImageDraw.ImageDraw, v: View, r: Rect) -> None:
    if v.bg is None and v.border is None:
        return
    box = (r.left, r.top, r.right - 1, r.bottom - 1)
    width = v.border_px if v.border is not None else 0
    if v.radius:
        draw.rounded_rectangle(box, radius=v.radius, fill=v.bg, outline=v.border, width=width)
    else:
        draw.rectangle(box, fill=v.bg, outline=v.border, width=width)


_SUBTREE_CACHE: OrderedDict[tuple[Hashable, int, int], Image.Image] = OrderedDict()
_SUBTREE_CACHE_SIZE = 48
_SUBTREE_LOCK = threading.Lock()


def paint_tree(img: Image.Image, v: View, dx: int = 0, dy: int = 0) -> None:
    """Paint ``v`` and its subtree onto ``img``; (dx, dy) maps device to image pixels."""
    r = v.rect.moved(dx, dy)
    if v.cache is not None and not r.empty and r == r.intersect(Rect(0, 0, img.width, img.height)):
        _paint_cached(img, v, r, dx, dy)
        return
    draw = ImageDraw.Draw(img)
    _paint_box(draw, v, r)
    if v.paint is not None:
        v.paint(draw, v, r, img)
    _draw_text(img, v, r)
    if not v.children:
        return
    if v.clip:
        box = r.intersect(Rect(0, 0, img.width, img.height))
        for child in v.children:
            cr = child.rect.moved(dx, dy)
            part = cr.intersect(box)
            if part.empty:
                continue
            if part == cr:
                paint_tree(img, child, dx, dy)
            else:  # partly scrolled out: paint it on a small canvas cut to the visible part
                sub = img.crop((part.left, part.top, part.right, part.bottom))
                paint_tree(sub, child, dx - part.left, dy - part.top)
                img.paste(sub, (part.left, part.top))
    else:
        for child in v.children:
            paint_tree(img, child, dx, dy)


def _paint_cached(img: Image.Image, v: View, r: Rect, dx: int, dy: int) -> None:
    """Paste a subtree painted earlier under the same ``cache`` key (keyboards, bars)."""
    key = (v.cache, r.width, r.height)
    with _SUBTREE_LOCK:
        picture = _SUBTREE_CACHE.get(key)
        if picture is not None:
            _SUBTREE_CACHE.move_to_end(key)
    if picture is None:
        picture = img.crop((r.left, r.top, r.right, r.bottom))
        cache, v.cache = v.cache, None
        try:
            paint_tree(picture, v, dx - r.left, dy - r.top)
        finally:
            v.cache = cache
        with _SUBTREE_LOCK:
            _SUBTREE_CACHE[key] = picture
            while len(_SUBTREE_CACHE) > _SUBTREE_CACHE_SIZE:
                _SUBTREE_CACHE.popitem(last=False)
    img.paste(picture, (r.left, r.top))


def paint_switch(draw: ImageDraw.ImageDraw, v: View, r: Rect, img: Image.Image) -> None:
    h = min(r.height, r.width // 2)
    top = r.top + (r.height - h) // 2
    track = Rect(r.right - int(h * 1.65), top, r.right, top + h)
    on = v.checked
    accent = v.icon_color
    fill = accent if on else (228, 225, 230)
    outline = accent if on else (121, 116, 126)
    draw.rounded_rectangle(
        (track.left, track.top, track.right - 1, track.bottom - 1),
        radius=h // 2,
        fill=fill,
        outline=outline,
        width=max(2, h // 16),
    )
    knob = int(h * (0.36 if on else 0.26))
    cy = track.top + h // 2
    cx = track.right - h // 2 if on else track.left + h // 2
    draw.ellipse(
        (cx - knob, cy - knob, cx + knob, cy + knob),
        fill=(255, 255, 255) if on else (121, 116, 126),
    )


def paint_seekbar(draw: ImageDraw.ImageDraw, v: View, r: Rect, img: Image.Image) -> None:
    thumb = max(8, r.height // 4)
    left, right = r.left + thumb + v.pad, r.right - thumb - v.pad
    cy = r.top + r.height // 2
    x = left + round((right - left) * max(0.0, min(1.0, v.progress)))
    track = max(4, r.height // 10)
    draw.rounded_rectangle(
        (left, cy - track, right, cy + track), radius=track, fill=(231, 224, 236)
    )
    draw.rounded_rectangle(
        (left, cy - track, max(left + 1, x), cy + track), radius=track, fill=v.icon_color
    )
    if v.max_lines > 1:  # discrete steps: tick marks
        for i in range(v.max_lines):
            tx = left + round((right - left) * i / (v.max_lines - 1))
            draw.ellipse((tx - 4, cy - 4, tx + 4, cy + 4), fill=(120, 110, 140))
    draw.ellipse((x - thumb, cy - thumb, x + thumb, cy + thumb), fill=v.icon_color)


def paint_radio(draw: ImageDraw.ImageDraw, v: View, r: Rect, img: Image.Image) -> None:
    size = min(r.height, r.width) // 2
    cx, cy = r.left + size, r.top + r.height // 2
    rad = size * 2 // 3
    color = v.icon_color if v.checked else (73, 69, 79)
    draw.ellipse((cx - rad, cy - rad, cx + rad, cy + rad), outline=color, width=max(3, rad // 5))
    if v.checked:
        inner = rad // 2
        draw.ellipse((cx - inner, cy - inner, cx + inner, cy + inner), fill=color)


def paint_cursor(draw: ImageDraw.ImageDraw, v: View, r: Rect, img: Image.Image) -> None:
    """A focused EditText: an underline plus a caret after the text."""
    draw.rectangle(
        (r.left + v.pad, r.bottom - 6, r.right - v.pad, r.bottom - 1),
        fill=v.icon_color if v.focused else (121, 116, 126),
    )
    if not v.focused:
        return
    text = v.text if v.label is None else v.label
    width = max(1, r.width - 2 * v.pad)
    lines = wrap_lines(text, v.font_px, width, v.max_lines) if text else ("",)
    lh = line_height(v.font_px)
    block = lh * len(lines)
    top = r.top if v.valign == "top" else r.top + (r.height - block) // 2
    x = r.left + v.pad + (text_width(lines[-1], v.font_px) if lines[-1] else 0) + 2
    y0 = top + (len(lines) - 1) * lh
    draw.rectangle(
        (x, y0 + lh // 10, x + max(2, v.font_px // 16), y0 + lh - lh // 10), fill=v.icon_color
    )


def paint_image(draw: ImageDraw.ImageDraw, v: View, r: Rect, img: Image.Image) -> None:
    if v.image is None:
        return
    pic = v.image
    if pic.size != (r.width, r.height):
        pic = pic.resize((max(1, r.width), max(1, r.height)), Image.Resampling.BILINEAR)
    img.paste(pic, (r.left, r.top))


def render_windows(
    windows: list[Window], size: tuple[int, int], dim_below: str | None = None
) -> Image.Image:
    """Paint the windows bottom to top. A window named ``dim_below`` dims what is under it."""
    first = windows[0].root if windows else None
    if first is not None and first.bg is not None and not first.radius and first.border is None:
        # start from the bottom window's colour instead of filling the screen twice
        img = Image.new("RGB", size, first.bg)
        first.bg, background = None, first.bg
        try:
            paint_tree(img, first)
        finally:
            first.bg = background
        rest = windows[1:]
    else:
        img = Image.new("RGB", size, (0, 0, 0))
        rest = windows
    for w in rest:
        if w.name == dim_below:
            img = Image.blend(img, Image.new("RGB", size, (0, 0, 0)), 0.45)
        paint_tree(img, w.root)
    return img


# ---------------------------------------------------------------------------- XML

_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})
# Characters XML 1.0 forbids (NUL, most C0 controls, lone surrogates, U+FFFE/FFFF). Like
# uiautomator's dumper, the dump shows each as "." so a typed control character cannot
# make the hierarchy unparsable.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _attr(value: str) -> str:
    return _NOT_XML.sub(".", value).translate(_ESCAPES)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def visible_children(v: View, clip: Rect) -> Iterator[tuple[View, Rect]]:
    """Children that are in the dump and on screen, with their visible bounds."""
    inner = v.rect.intersect(clip) if v.clip else clip
    for child in v.children:
        if child.xml:
            box = child.rect.intersect(inner)
            if not box.empty:
                yield child, box


def _write_node(out: list[str], v: View, box: Rect, index: int, package: str, clip: Rect) -> None:
    out.append(
        f'<node index="{index}" text="{_attr(v.text)}" resource-id="{_attr(v.rid)}" '
        f'class="{v.cls}" package="{package}" content-desc="{_attr(v.desc)}" '
        f'checkable="{_bool(v.checkable)}" checked="{_bool(v.checked)}" '
        f'clickable="{_bool(v.clickable)}" enabled="{_bool(v.enabled)}" '
        f'focusable="{_bool(v.focusable)}" focused="{_bool(v.focused)}" '
        f'scrollable="{_bool(v.scrollable)}" long-clickable="{_bool(v.long_clickable)}" '
        f'password="{_bool(v.password)}" selected="{_bool(v.selected)}" '
        f'visible-to-user="true" bounds="{box.bounds_text()}"'
    )
    kids = list(visible_children(v, clip))
    if not kids:
        out.append(" />")
        return
    out.append(">")
    inner = v.rect.intersect(clip) if v.clip else clip
    for i, (child, child_box) in enumerate(kids):
        _write_node(out, child, child_box, i, package, inner)
    out.append("</node>")


def hierarchy_xml(windows: list[Window], size: tuple[int, int], rotation: int = 0) -> str:
    """The windows as a uiautomator dump; every window root has index 0, as real dumps do."""
    screen = Rect(0, 0, size[0], size[1])
    out = [
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>",
        f'<hierarchy rotation="{rotation}">',
    ]
    for w in windows:
        box = w.root.rect.intersect(screen)
        if w.root.xml and not box.empty:
            _write_node(out, w.root, box, 0, w.package, screen)
    out.append("</hierarchy>")
    return "".join(out)


# ---------------------------------------------------------------------------- touch & digest


def touch_order(v: View, x: int, y: int, clip: Rect | None = None) -> list[View]:
    """The views under (x, y) in the order Android offers them a touch.

    A parent offers it to its children top-most first, each child to its own children
    first, and takes it itself last; the first view that handles it wins.
    """
    box = v.rect if clip is None else v.rect.intersect(clip)
    if not box.contains(x, y):
        return []
    inner = box if v.clip else clip
    order: list[View] = []
    for child in reversed(v.children):
        order.extend(touch_order(child, x, y, inner))
    order.append(v)
    return order


def state_digest(windows: list[Window], size: tuple[int, int]) -> str:
    """A short hash of what the given windows show, leaving out ``digest=False`` nodes."""
    screen = Rect(0, 0, size[0], size[1])
    h = hashlib.sha1()

    def visit(v: View, clip: Rect) -> None:
        if v.digest:
            h.update(f"{v.text}\x1f{v.desc}\x1f{v.checked:d}{v.selected:d}{v.enabled:d}".encode())
            if v.on_seek is not None:
                h.update(f"{v.progress:.4f}".encode())
        h.update(b"\x1e")
        inner = v.rect.intersect(clip) if v.clip else clip
        for child, _box in visible_children(v, clip):
            visit(child, inner)

    for w in windows:
        visit(w.root, screen)
    return h.hexdigest()[:10]
