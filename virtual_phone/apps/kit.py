"""Material-style building blocks for the simulated apps.

Each function returns a :class:`View` with absolute bounds and the class and resource-id a
real Android widget of that kind reports in a uiautomator dump. Sizes are given in dp and
text sizes in sp, so layouts follow the phone's density and the user's font size setting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from virtual_phone.apps.base import SURFACE as SURFACE  # Screen's default background
from virtual_phone.apps.base import Screen, Ui
from virtual_phone.apps.icons import paint_icon
from virtual_phone.widgets import (
    Color,
    Rect,
    TextBuffer,
    View,
    paint_cursor,
    paint_radio,
    paint_seekbar,
    paint_switch,
    text_height,
)

SURFACE_CONTAINER: Color = (243, 237, 247)
SURFACE_HIGH: Color = (236, 230, 240)
ON_SURFACE: Color = (29, 27, 32)
ON_SURFACE_VARIANT: Color = (73, 69, 79)
OUTLINE: Color = (121, 116, 126)
DIVIDER: Color = (230, 224, 233)
PRIMARY: Color = (103, 80, 164)
PRIMARY_CONTAINER: Color = (234, 221, 255)
ON_PRIMARY_CONTAINER: Color = (33, 0, 93)
ON_PRIMARY: Color = (255, 255, 255)
WHITE: Color = (255, 255, 255)
ERROR: Color = (179, 38, 30)

Handler = Callable[[], None]


class Column:
    """Stacks rows downwards from ``top``; ``place(h)`` returns the next row's rect."""

    def __init__(self, left: int, top: int, width: int) -> None:
        self.left = left
        self.y = top
        self.width = width

    def place(self, height: int) -> Rect:
        r = Rect(self.left, self.y, self.left + self.width, self.y + height)
        self.y += height
        return r

    def skip(self, height: int) -> None:
        self.y += height


def grid_cell(left: int, top: int, width: int, height: int, cols: int, index: int) -> Rect:
    """Cell ``index`` of a grid of ``cols`` columns of width x height cells, filled by rows."""
    row, col = divmod(index, cols)
    return Rect(
        left + col * width, top + row * height, left + (col + 1) * width, top + (row + 1) * height
    )


def text(
    ui: Ui,
    rect: Rect,
    value: str,
    *,
    size: float = 16,
    color: Color = ON_SURFACE,
    bold: bool = False,
    align: str = "start",
    valign: str = "center",
    rid: str = "",
    max_lines: int = 0,
    digest: bool = True,
    desc: str = "",
    cls: str = "android.widget.TextView",
) -> View:
    return View(
        rect,
        cls=cls,
        rid=rid,
        text=value,
        desc=desc,
        font_px=ui.sp(size),
        color=color,
        bold=bold,
        align=align,
        valign=valign,
        max_lines=max_lines,
        digest=digest,
    )


def text_line(
    ui: Ui,
    col: Column,
    value: str,
    *,
    size: float,
    color: Color = ON_SURFACE,
    bold: bool = False,
    align: str = "start",
    rid: str = "",
    max_lines: int = 0,
) -> View:
    """Text in the next row of ``col``, one and a half times the text size tall."""
    return text(
        ui,
        col.place(ui.sp(size) * 3 // 2),
        value,
        size=size,
        color=color,
        bold=bold,
        align=align,
        rid=rid,
        max_lines=max_lines,
    )


def measure(ui: Ui, value: str, size: float, width: int, max_lines: int = 0) -> int:
    return text_height(value, ui.sp(size), width, max_lines) if value else 0


def icon(
    ui: Ui,
    rect: Rect,
    name: str,
    *,
    color: Color = ON_SURFACE_VARIANT,
    bg: Color | None = None,
    desc: str = "",
    rid: str = "",
) -> View:
    pad = rect.height // 5 if bg is not None else 0
    view = View(
        rect,
        cls="android.widget.ImageView",
        rid=rid,
        desc=desc,
        bg=bg,
        radius=min(rect.width, rect.height) // 2,
    )
    view.add(View(rect.inset(pad), paint=paint_icon, icon=name, icon_color=color, xml=False))
    return view


def icon_button(
    ui: Ui,
    rect: Rect,
    name: str,
    desc: str,
    on_click: Handler | None,
    *,
    rid: str = "",
    color: Color = ON_SURFACE_VARIANT,
    bg: Color | None = None,
    enabled: bool = True,
    cls: str = "android.widget.ImageButton",
    glyph: float = 0.5,
) -> View:
    side = min(rect.width, rect.height)
    inner = Rect(*_centred(rect, int(side * glyph)))
    view = View(
        rect,
        cls=cls,
        rid=rid,
        desc=desc,
        clickable=True,
        focusable=True,
        enabled=enabled,
        on_click=on_click,
        bg=bg,
        radius=side // 2,
    )
    view.add(
        View(
            inner,
            paint=paint_icon,
            icon=name,
            icon_color=color if enabled else (190, 186, 194),
            xml=False,
        )
    )
    return view


def _centred(rect: Rect, side: int) -> tuple[int, int, int, int]:
    cx, cy = rect.center
    return cx - side // 2, cy - side // 2, cx + side // 2, cy + side // 2


def button(
    ui: Ui,
    rect: Rect,
    label: str,
    on_click: Handler | None,
    *,
    rid: str = "",
    style: str = "filled",
    color: Color = PRIMARY,
    enabled: bool = True,
    size: float = 16,
    desc: str = "",
) -> View:
    """A Material button; style is filled, tonal, outlined or text."""
    fg, bg, border = {
        "filled": (ON_PRIMARY, color, None),
        "tonal": (ON_SURFACE, PRIMARY_CONTAINER, None),
        "outlined": (color, None, OUTLINE),
        "text": (color, None, None),
    }[style]
    if not enabled:
        fg, bg = (150, 146, 154), ((226, 222, 228) if bg is not None else None)
    return View(
        rect,
        cls="android.widget.Button",
        rid=rid,
        text=label,
        desc=desc,
        clickable=True,
        focusable=True,
        enabled=enabled,
        on_click=on_click,
        bg=bg,
        border=border,
        border_px=ui.dp(1),
        radius=rect.height // 2,
        font_px=ui.sp(size),
        color=fg,
        bold=True,
        align="center",
        max_lines=1,
    )


def edit_text(
    ui: Ui,
    rect: Rect,
    buffer: TextBuffer,
    *,
    rid: str = "",
    size: float = 18,
    multiline: bool = False,
    bg: Color | None = None,
    pad: int | None = None,
    desc: str = "",
) -> View:
    focused = ui.is_focused(buffer)
    showing_hint = not buffer.value

    def on_click() -> None:
        ui.focus(buffer)

    return View(
        rect,
        cls="android.widget.EditText",
        rid=rid,
        desc=desc,
        text=buffer.hint if showing_hint else buffer.value,
        label="" if showing_hint and focused else None,
        clickable=True,
        focusable=True,
        long_clickable=True,
        focused=focused,
        on_click=on_click,
        field=buffer,
        bg=bg,
        radius=ui.dp(4),
        font_px=ui.sp(size),
        color=OUTLINE if showing_hint else ON_SURFACE,
        pad=ui.dp(12) if pad is None else pad,
        max_lines=0 if multiline else 1,
        paint=paint_cursor,
        icon_color=PRIMARY,
        valign="center",
    )


def switch(
    ui: Ui,
    rect: Rect,
    checked: bool,
    on_toggle: Handler | None,
    *,
    rid: str = "android:id/switch_widget",
    clickable: bool = True,
    color: Color = PRIMARY,
    desc: str = "",
) -> View:
    return View(
        rect,
        cls="android.widget.Switch",
        rid=rid,
        desc=desc,
        checkable=True,
        checked=checked,
        clickable=clickable,
        focusable=clickable,
        on_click=on_toggle if clickable else None,
        paint=paint_switch,
        icon_color=color,
    )


def radio(
    ui: Ui,
    rect: Rect,
    label: str,
    checked: bool,
    on_click: Handler,
    *,
    rid: str = "",
    size: float = 16,
) -> View:
    side = rect.height
    view = View(
        rect,
        cls="android.widget.RadioButton",
        rid=rid,
        text=label,
        checkable=True,
        checked=checked,
        clickable=True,
        focusable=True,
        on_click=on_click,
    )
    view.add(
        View(
            Rect(rect.left, rect.top, rect.left + side, rect.bottom),
            paint=paint_radio,
            checked=checked,
            icon_color=PRIMARY,
            xml=False,
        )
    )
    view.add(
        View(
            Rect(rect.left + side + ui.dp(8), rect.top, rect.right, rect.bottom),
            label=label,
            font_px=ui.sp(size),
            color=ON_SURFACE,
            xml=False,
        )
    )
    return view


def seekbar(
    ui: Ui,
    rect: Rect,
    value: int,
    maximum: int,
    on_change: Callable[[int], None],
    *,
    rid: str = "",
    desc: str = "",
    color: Color = PRIMARY,
    steps: bool = False,
) -> View:
    """A SeekBar from 0 to ``maximum``; taps and drags set the value."""

    def on_seek(fraction: float) -> None:
        on_change(max(0, min(maximum, round(fraction * maximum))))

    return View(
        rect,
        cls="android.widget.SeekBar",
        rid=rid,
        desc=desc,
        focusable=True,
        paint=paint_seekbar,
        progress=value / maximum if maximum else 0.0,
        icon_color=color,
        on_seek=on_seek,
        pad=ui.dp(4),
        max_lines=maximum + 1 if steps else 0,
    )


def toolbar(
    ui: Ui,
    title: str,
    *,
    up: Handler | None = None,
    actions: Sequence[View] = (),
    rid: str = "",
    bg: Color | None = None,
    color: Color = ON_SURFACE,
    size: float = 22,
    height: float = 64,
) -> View:
    """An app bar at the top of the content area; ``up`` adds the Navigate up button."""
    c = ui.content
    h = max(ui.dp(height), ui.sp(size) + ui.dp(20))
    rect = Rect(c.left, c.top, c.right, c.top + h)
    bar = View(rect, cls="android.view.ViewGroup", rid=rid or f"{ui.package}:id/toolbar", bg=bg)
    left = c.left + ui.dp(16)
    if up is not None:
        bar.add(up_button(ui, h, up, color=color))
        left = c.left + ui.dp(64)
    right = c.right - ui.dp(4) - len(actions) * ui.dp(48)
    bar.add(
        text(
            ui, Rect(left, rect.top, right, rect.bottom), title, size=size, color=color, max_lines=1
        )
    )
    bar.add(*actions)
    return bar


def up_button(
    ui: Ui, bar_height: int, on_click: Handler, *, color: Color = ON_SURFACE_VARIANT
) -> View:
    """The Navigate up arrow at the start of a bar ``bar_height`` tall at the content top."""
    c = ui.content
    rect = Rect(
        c.left + ui.dp(4),
        c.top + (bar_height - ui.dp(48)) // 2,
        c.left + ui.dp(52),
        c.top + (bar_height + ui.dp(48)) // 2,
    )
    return icon_button(ui, rect, "arrow_back", "Navigate up", on_click, color=color)


def toolbar_action(
    ui: Ui, position: int, name: str, desc: str, on_click: Handler, *, rid: str
) -> View:
    """An icon button in a default-height toolbar, ``position`` 0 being the rightmost."""
    c = ui.content
    bar_h = toolbar_height(ui)
    step = 52 * position
    rect = Rect(
        c.right - ui.dp(52 + step),
        c.top + (bar_h - ui.dp(48)) // 2,
        c.right - ui.dp(4 + step),
        c.top + (bar_h + ui.dp(48)) // 2,
    )
    return icon_button(ui, rect, name, desc, on_click, rid=rid)


def toolbar_height(ui: Ui, size: float = 22, height: float = 64) -> int:
    return max(ui.dp(height), ui.sp(size) + ui.dp(20))


@dataclass(frozen=True, slots=True)
class Trailing:
    """A widget at the end of a list row: its width and a factory given its rect."""

    width: int
    make: Callable[[Rect], View]


def trailing_icon_button(
    ui: Ui,
    name: str,
    desc: str,
    on_click: Handler,
    *,
    rid: str = "",
    color: Color = ON_SURFACE_VARIANT,
) -> Trailing:
    """A 48 dp icon button at the end of a row (call back, remove)."""

    def make(r: Rect) -> View:
        cy = r.center[1]
        return icon_button(
            ui,
            Rect(r.left, cy - ui.dp(24), r.right, cy + ui.dp(24)),
            name,
            desc,
            on_click,
            rid=rid,
            color=color,
        )

    return Trailing(ui.dp(48), make)


def trailing_text(ui: Ui, value: str, width: int, *, rid: str = "", size: float = 16) -> Trailing:
    return Trailing(width, lambda r: text(ui, r, value, size=size, align="end", rid=rid))


def trailing_switch(ui: Ui, checked: bool) -> Trailing:
    """The switch drawn at the end of a settings row; the row itself takes the tap."""

    def make(r: Rect) -> View:
        cy = r.center[1]
        return switch(
            ui,
            Rect(r.left, cy - ui.dp(16), r.right, cy + ui.dp(16)),
            checked,
            None,
            clickable=False,
        )

    return Trailing(ui.dp(52), make)


def list_row(
    ui: Ui,
    col: Column,
    title: str,
    *,
    summary: str = "",
    icon_name: str = "",
    icon_bg: Color | None = None,
    icon_color: Color = ON_SURFACE_VARIANT,
    on_click: Handler | None = None,
    on_long_click: Handler | None = None,
    trailing: Trailing | None = None,
    title_rid: str = "android:id/title",
    summary_rid: str = "android:id/summary",
    rid: str = "",
    desc: str = "",
    title_size: float = 18,
    min_height: float = 72,
    checkable: bool = False,
    checked: bool = False,
    avatar: str = "",
    avatar_bg: Color = PRIMARY_CONTAINER,
    title_digest: bool = True,
    summary_digest: bool = True,
    icon_rid: str = "android:id/icon",
    cls: str = "android.widget.LinearLayout",
    enabled: bool = True,
) -> View:
    """A preference-style row: optional icon or letter avatar, title, summary, trailing widget."""
    pad = ui.dp(16)
    left = col.left + pad
    lead = 0
    if icon_name or avatar:
        lead = ui.dp(40) if (icon_bg is not None or avatar) else ui.dp(24)
    text_left = left + (lead + pad if lead else 0)
    text_right = col.left + col.width - pad - (trailing.width + pad if trailing else 0)
    width = max(1, text_right - text_left)
    title_h = measure(ui, title, title_size, width)
    summary_h = measure(ui, summary, 14, width)
    gap = ui.dp(14)
    h = max(ui.dp(min_height), title_h + summary_h + 2 * gap)
    rect = col.place(h)
    row = View(
        rect,
        cls=cls,
        rid=rid,
        desc=desc,
        clickable=on_click is not None,
        long_clickable=on_long_click is not None,
        focusable=on_click is not None,
        on_click=on_click,
        on_long_click=on_long_click,
        checkable=checkable,
        checked=checked,
        enabled=enabled,
    )
    cy = rect.top + h // 2
    if avatar:
        row.add(
            letter_avatar(
                ui, Rect(left, cy - lead // 2, left + lead, cy + lead // 2), avatar, avatar_bg
            )
        )
    elif icon_name:
        row.add(
            icon(
                ui,
                Rect(left, cy - lead // 2, left + lead, cy + lead // 2),
                icon_name,
                color=icon_color,
                bg=icon_bg,
                rid=icon_rid,
            )
        )
    top = cy - (title_h + summary_h) // 2
    texts = View(
        Rect(text_left, rect.top, text_right, rect.bottom), cls="android.widget.RelativeLayout"
    )
    texts.add(
        text(
            ui,
            Rect(text_left, top, text_right, top + title_h),
            title,
            size=title_size,
            rid=title_rid,
            digest=title_digest,
            color=ON_SURFACE if enabled else OUTLINE,
        )
    )
    if summary:
        texts.add(
            text(
                ui,
                Rect(text_left, top + title_h, text_right, top + title_h + summary_h),
                summary,
                size=14,
                color=ON_SURFACE_VARIANT,
                rid=summary_rid,
                digest=summary_digest,
            )
        )
    row.add(texts)
    if trailing is not None:
        tr = Rect(text_right + pad, rect.top, col.left + col.width - pad, rect.bottom)
        frame = View(tr, cls="android.widget.LinearLayout", rid="android:id/widget_frame")
        frame.add(trailing.make(tr))
        row.add(frame)
    return row


def letter_avatar(ui: Ui, rect: Rect, name: str, bg: Color) -> View:
    initial = next((ch for ch in name if ch.isalnum()), "?").upper()
    return View(
        rect,
        cls="android.widget.ImageView",
        bg=bg,
        radius=rect.width // 2,
        label=initial,
        font_px=max(8, rect.height // 2),
        color=ON_PRIMARY_CONTAINER,
        align="center",
        bold=True,
    )


def divider(ui: Ui, col: Column, inset: int = 0) -> View:
    r = col.place(ui.dp(1))
    return View(Rect(r.left + inset, r.top, r.right - inset, r.bottom), bg=DIVIDER, xml=False)


def section_header(ui: Ui, col: Column, title: str, *, color: Color = PRIMARY) -> View:
    h = measure(ui, title, 14, col.width - ui.dp(32)) + ui.dp(24)
    r = col.place(h)
    return text(
        ui,
        Rect(r.left + ui.dp(16), r.top + ui.dp(12), r.right - ui.dp(16), r.bottom),
        title,
        size=14,
        color=color,
        bold=True,
        rid="android:id/title",
        valign="top",
    )


def scroll_list(
    ui: Ui,
    screen: Screen,
    key: str,
    rect: Rect,
    rows: Sequence[View],
    *,
    rid: str = "",
    cls: str = "androidx.recyclerview.widget.RecyclerView",
    bottom_pad: int = 0,
) -> View:
    """A vertically scrolling container of ``rows`` laid out from ``rect.top``.

    The offset lives in ``screen.scroll[key]``, so it survives rebuilds and navigation.
    """
    content_bottom = max((r.rect.bottom for r in rows), default=rect.top) + bottom_pad
    max_scroll = max(0, content_bottom - rect.bottom)
    offset = max(0, min(max_scroll, screen.scroll.get(key, 0)))
    screen.scroll[key] = offset
    for row in rows:
        row.shift(-offset)

    def on_scroll(dy: int) -> bool:
        before = screen.scroll.get(key, 0)
        screen.scroll[key] = max(0, min(max_scroll, before + dy))
        return screen.scroll[key] != before

    return View(
        rect,
        cls=cls,
        rid=rid,
        children=list(rows),
        scrollable=max_scroll > 0,
        focusable=max_scroll > 0,
        clip=True,
        on_scroll=on_scroll if max_scroll else None,
    )


def list_page(
    ui: Ui,
    screen: Screen,
    bar: View,
    rows: Sequence[View],
    *,
    rid: str,
    list_rid: str,
    key: str = "list",
    bottom_pad: int = 0,
    bg: Color | None = None,
) -> View:
    """A LinearLayout page: ``bar`` on top and ``rows`` scrolling in the rest of the content."""
    c = ui.content
    rest = Rect(c.left, bar.rect.bottom, c.right, c.bottom)
    return View(
        c,
        cls="android.widget.LinearLayout",
        rid=rid,
        bg=bg,
        children=[
            bar,
            scroll_list(ui, screen, key, rest, rows, rid=list_rid, bottom_pad=bottom_pad),
        ],
    )


def content_frame(ui: Ui, *children: View, bg: Color | None = None) -> View:
    return View(
        ui.content,
        cls="android.widget.FrameLayout",
        rid="android:id/content",
        children=list(children),
        bg=bg,
    )


def fab(
    ui: Ui,
    icon_name: str,
    desc: str,
    on_click: Handler,
    *,
    rid: str = "",
    label: str = "",
    color: Color = PRIMARY_CONTAINER,
    fg: Color = ON_PRIMARY_CONTAINER,
    bottom: int | None = None,
) -> View:
    """A floating action button at the bottom right; with ``label`` it is extended."""
    c = ui.content
    size = ui.dp(56)
    right = c.right - ui.dp(16)
    bottom = c.bottom - ui.dp(16) if bottom is None else bottom
    if label:
        width = ui.dp(56) + ui.dp(12) + int(ui.sp(16) * 0.6 * len(label))
        rect = Rect(right - width, bottom - size, right, bottom)
        view = View(
            rect,
            cls="android.widget.Button",
            rid=rid,
            text=label,
            desc=desc,
            clickable=True,
            focusable=True,
            on_click=on_click,
            bg=color,
            radius=ui.dp(16),
            font_px=ui.sp(16),
            color=fg,
            bold=True,
            pad=ui.dp(16),
            align="end",
            max_lines=1,
        )
        view.add(
            View(
                Rect(
                    rect.left + ui.dp(16),
                    rect.top + ui.dp(16),
                    rect.left + ui.dp(40),
                    rect.bottom - ui.dp(16),
                ),
                paint=paint_icon,
                icon=icon_name,
                icon_color=fg,
                xml=False,
            )
        )
        return view
    rect = Rect(right - size, bottom - size, right, bottom)
    view = View(
        rect,
        cls="android.widget.ImageButton",
        rid=rid,
        desc=desc,
        clickable=True,
        focusable=True,
        on_click=on_click,
        bg=color,
        radius=ui.dp(16),
    )
    view.add(
        View(rect.inset(ui.dp(16)), paint=paint_icon, icon=icon_name, icon_color=fg, xml=False)
    )
    return view


def tabs(
    ui: Ui,
    rect: Rect,
    items: Sequence[tuple[str, str]],
    selected: int,
    on_select: Callable[[int], None],
    *,
    rid: str = "",
    item_rid: str = "",
    bg: Color = SURFACE_CONTAINER,
) -> View:
    """A bottom navigation bar of (icon, label) items; the selected one reports selected."""
    bar = View(rect, cls="android.widget.FrameLayout", rid=rid, bg=bg)
    row = View(rect, cls="android.view.ViewGroup")
    width = rect.width // max(1, len(items))
    for i, (icon_name, label) in enumerate(items):
        r = Rect(rect.left + i * width, rect.top, rect.left + (i + 1) * width, rect.bottom)
        chosen = i == selected
        item = View(
            r,
            cls="android.widget.FrameLayout",
            rid=item_rid,
            desc=label,
            clickable=True,
            focusable=True,
            selected=chosen,
            on_click=partial(on_select, i),
        )
        pill_w, pill_h = ui.dp(64), ui.dp(32)
        cx = r.left + r.width // 2
        top = r.top + ui.dp(12)
        item.add(
            View(
                Rect(cx - pill_w // 2, top, cx + pill_w // 2, top + pill_h),
                bg=PRIMARY_CONTAINER if chosen else None,
                radius=pill_h // 2,
                paint=paint_icon,
                icon=icon_name,
                icon_color=ON_PRIMARY_CONTAINER if chosen else ON_SURFACE_VARIANT,
                cls="android.widget.ImageView",
            )
        )
        item.add(
            text(
                ui,
                Rect(r.left, top + pill_h + ui.dp(4), r.right, r.bottom - ui.dp(8)),
                label,
                size=12,
                align="center",
                bold=chosen,
                max_lines=1,
                color=ON_SURFACE if chosen else ON_SURFACE_VARIANT,
            )
        )
        row.add(item)
    bar.add(row)
    return bar


def tabs_height(ui: Ui) -> int:
    return ui.dp(68) + ui.sp(12) + ui.dp(8)


class TabbedScreen(Screen):
    """A screen with a bottom navigation bar; each tab reports its own screen id."""

    tab_items: tuple[tuple[str, str], ...] = ()  # (icon, label) per tab
    tab_ids: tuple[str, ...] = ()

    def __init__(self) -> None:
        super().__init__()
        self.select(0)

    def select(self, index: int) -> None:
        self.tab = index
        self.screen_id = self.tab_ids[index]

    def tab_bar(self, ui: Ui, *, rid: str, item_rid: str) -> View:
        """The tabs along the bottom of the content area."""
        c = ui.content
        return tabs(
            ui,
            Rect(c.left, c.bottom - tabs_height(ui), c.right, c.bottom),
            self.tab_items,
            self.tab,
            self.select,
            rid=rid,
            item_rid=item_rid,
        )


def cancel_and(ui: Ui, label: str, on_confirm: Handler) -> tuple[tuple[str, Handler, str], ...]:
    """An alert's Cancel button (it closes the dialog), then the one that confirms."""
    return (
        ("Cancel", ui.close_dialog, "android:id/button2"),
        (label, on_confirm, "android:id/button1"),
    )


def alert(
    ui: Ui,
    *,
    title: str,
    message: str = "",
    buttons: Sequence[tuple[str, Handler, str]] = (),
    body: Callable[[Column], list[View]] | None = None,
) -> View:
    """An AlertDialog panel centred in the content area.

    ``buttons`` are (label, handler, resource-id) from left to right, e.g.
    ``("Cancel", cancel, "android:id/button2")`` then ``("OK", ok, "android:id/button1")``.
    ``body`` lays out custom content into the given column and returns its views.
    """
    c = ui.content
    margin = ui.dp(28)
    width = c.width - 2 * margin
    inner = width - 2 * ui.dp(24)
    left = c.left + margin
    # lay out once at the top to learn the height, then move it to the centre
    col = Column(left + ui.dp(24), 0, inner)
    views: list[View] = []
    col.skip(ui.dp(24))
    th = measure(ui, title, 24, inner)
    views.append(text(ui, col.place(th), title, size=24, rid="android:id/alertTitle"))
    col.skip(ui.dp(16))
    if message:
        mh = measure(ui, message, 16, inner)
        views.append(
            text(
                ui,
                col.place(mh),
                message,
                size=16,
                color=ON_SURFACE_VARIANT,
                rid="android:id/message",
            )
        )
        col.skip(ui.dp(16))
    if body is not None:
        views.extend(body(col))
    col.skip(ui.dp(8))
    bh = max(ui.dp(48), ui.sp(16) + ui.dp(24))
    brow = col.place(bh)
    panel_bar = View(
        Rect(left, brow.top, left + width, brow.bottom),
        cls="android.widget.LinearLayout",
        rid="android:id/buttonPanel",
    )
    x = brow.right
    for label, handler, rid in reversed(buttons):
        bw = max(ui.dp(72), int(ui.sp(16) * 0.62 * len(label)) + ui.dp(32))
        panel_bar.children.insert(
            0,
            button(
                ui, Rect(x - bw, brow.top, x, brow.bottom), label, handler, rid=rid, style="text"
            ),
        )
        x -= bw + ui.dp(8)
    col.skip(ui.dp(20))
    height = col.y
    top = c.top + max(ui.dp(16), (c.height - height) // 2)
    panel = View(
        Rect(left, 0, left + width, height),
        cls="android.widget.FrameLayout",
        bg=SURFACE_CONTAINER,
        radius=ui.dp(28),
    )
    parent = View(
        Rect(left, 0, left + width, height),
        cls="android.widget.LinearLayout",
        rid="android:id/parentPanel",
        children=[*views, panel_bar],
    )
    panel.add(parent)
    panel.shift(top)
    return panel
