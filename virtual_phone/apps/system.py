"""System windows drawn over every app: status bar, navigation bar, keyboard, toast, volume panel.

They belong to ``com.android.systemui`` (the keyboard to its IME package) and use the
resource-ids real SystemUI reports, so dumps look like a phone's.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial

from virtual_phone.apps.base import App, Screen, Ui
from virtual_phone.apps.icons import paint_icon
from virtual_phone.apps.kit import ON_SURFACE, PRIMARY, SURFACE_CONTAINER, WHITE, text
from virtual_phone.widgets import Color, Rect, View

SYSTEMUI = "com.android.systemui"
LATIN_IME = "com.android.inputmethod.latin/.LatinIME"
ADB_IME = "com.android.adbkeyboard/.AdbIME"
BATTERY_PERCENT = 85


class SystemUi(App):
    package = SYSTEMUI
    label = "System UI"
    on_launcher = False

    def root(self) -> Screen:
        raise NotImplementedError("System UI has no launchable screen")


def contrast(bg: Color) -> Color:
    """Dark icons on light backgrounds, white ones on dark backgrounds."""
    r, g, b = bg
    return ON_SURFACE if (0.299 * r + 0.587 * g + 0.114 * b) > 150 else WHITE


def status_bar_height(ui: Ui) -> int:
    return ui.dp(24)


def nav_bar_height(ui: Ui) -> int:
    return ui.dp(48)


def clock_text(now: datetime) -> str:
    return f"{now.hour % 12 or 12}:{now.minute:02d}"


def status_bar(ui: Ui, now: datetime, bg: Color, *, wifi: bool, airplane: bool) -> View:
    h = status_bar_height(ui)
    fg = contrast(bg)
    rect = Rect(0, 0, ui.width, h)
    root = View(rect, cls="android.widget.FrameLayout", rid=f"{SYSTEMUI}:id/status_bar")
    row = View(rect, cls="android.widget.LinearLayout", rid=f"{SYSTEMUI}:id/status_bar_contents")
    pad = ui.dp(16)
    clock_w = ui.dp(72)
    # the bar's height is fixed, so its text ignores the font size setting
    row.add(
        View(
            Rect(pad, 0, pad + clock_w, h),
            cls="android.widget.TextView",
            rid=f"{SYSTEMUI}:id/clock",
            text=clock_text(now),
            font_px=ui.dp(14),
            color=fg,
            max_lines=1,
            digest=False,
        )
    )
    icons = View(
        Rect(ui.width - pad - ui.dp(110), 0, ui.width - pad, h),
        cls="android.widget.LinearLayout",
        rid=f"{SYSTEMUI}:id/system_icons",
    )
    x = ui.width - pad
    battery = Rect(x - ui.dp(52), 0, x, h)
    icons.add(
        View(
            battery,
            cls="android.widget.LinearLayout",
            rid=f"{SYSTEMUI}:id/battery",
            desc=f"Battery {BATTERY_PERCENT} percent.",
            label=f"{BATTERY_PERCENT}%",
            font_px=ui.dp(12),
            color=fg,
            align="end",
            children=[
                View(
                    Rect(battery.left, ui.dp(4), battery.left + ui.dp(14), h - ui.dp(4)),
                    paint=paint_icon,
                    icon="battery",
                    icon_color=fg,
                    xml=False,
                )
            ],
        )
    )
    x = battery.left - ui.dp(6)
    signal = ("airplane", "Airplane mode.") if airplane else ("signal", "Phone four bars.")
    icons.add(
        View(
            Rect(x - ui.dp(16), ui.dp(4), x, h - ui.dp(4)),
            cls="android.widget.ImageView",
            rid=f"{SYSTEMUI}:id/{'airplane' if airplane else 'mobile_signal'}",
            desc=signal[1],
            paint=paint_icon,
            icon=signal[0],
            icon_color=fg,
        )
    )
    x -= ui.dp(22)
    if wifi:
        icons.add(
            View(
                Rect(x - ui.dp(18), ui.dp(4), x, h - ui.dp(4)),
                cls="android.widget.ImageView",
                rid=f"{SYSTEMUI}:id/wifi_signal",
                desc="Wifi signal full.",
                paint=paint_icon,
                icon="wifi",
                icon_color=fg,
            )
        )
    row.add(icons)
    root.add(row)
    return root


def nav_bar(
    ui: Ui,
    bg: Color,
    *,
    back: Callable[[], None],
    home: Callable[[], None],
    recents: Callable[[], None],
) -> View:
    h = nav_bar_height(ui)
    fg = contrast(bg)
    rect = Rect(0, ui.host.height - h, ui.width, ui.host.height)
    root = View(
        rect,
        cls="android.widget.FrameLayout",
        rid=f"{SYSTEMUI}:id/navigation_bar_frame",
        bg=bg,
        cache=("navigation_bar", bg, ui.scale),
    )
    buttons = View(rect, cls="android.widget.LinearLayout", rid=f"{SYSTEMUI}:id/ends_group")
    slot = ui.width // 3
    for i, (rid, desc, name, handler) in enumerate(
        (
            ("back", "Back", "nav_back", back),
            ("home", "Home", "nav_home", home),
            ("recent_apps", "Overview", "nav_recents", recents),
        )
    ):
        cx = slot * i + slot // 2
        r = Rect(cx - ui.dp(40), rect.top, cx + ui.dp(40), rect.bottom)
        button = View(
            r,
            cls="android.widget.ImageView",
            rid=f"{SYSTEMUI}:id/{rid}",
            desc=desc,
            clickable=True,
            long_clickable=rid == "home",
            focusable=True,
            on_click=handler,
        )
        button.add(
            View(
                Rect(
                    cx - ui.dp(11),
                    rect.top + h // 2 - ui.dp(11),
                    cx + ui.dp(11),
                    rect.top + h // 2 + ui.dp(11),
                ),
                paint=paint_icon,
                icon=name,
                icon_color=fg,
                xml=False,
            )
        )
        buttons.add(button)
    root.add(buttons)
    return root


_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def keyboard_height(ui: Ui, ime: str) -> int:
    return ui.dp(56) if ime == ADB_IME else ui.dp(280)


def keyboard(
    ui: Ui,
    ime: str,
    *,
    type_text: Callable[[str], None],
    delete: Callable[[], None],
    enter: Callable[[], None],
) -> tuple[str, View]:
    """The IME window for ``ime``: (package, root). Keys are drawn and tappable but, as on a
    real phone, they are not separate nodes in the dump."""
    package = ime.partition("/")[0]
    kh = keyboard_height(ui, ime)
    bottom = ui.host.height - nav_bar_height(ui)
    rect = Rect(0, bottom - kh, ui.width, bottom)
    if ime == ADB_IME:
        root = View(rect, cls="android.widget.FrameLayout", bg=(40, 40, 40))
        root.add(
            text(
                ui,
                rect,
                "ADB Keyboard {ON}",
                size=16,
                color=WHITE,
                align="center",
                rid=f"{package}:id/keyboard",
            )
        )
        return package, root
    root = View(
        rect,
        cls="android.widget.FrameLayout",
        rid=f"{package}:id/input_view",
        bg=(236, 239, 241),
        cache=("keyboard", ime, ui.scale),
    )
    board = View(rect, cls="android.view.View", rid=f"{package}:id/keyboard_view")
    strip = ui.dp(40)
    row_h = (kh - strip - ui.dp(8)) // 4
    gap = ui.dp(3)
    key_w = ui.width // 10

    def key(
        r: Rect, label: str, handler: Callable[[], None], *, dark: bool = False, icon: str = ""
    ) -> View:
        k = View(
            r.inset(gap),
            bg=(200, 204, 208) if dark else WHITE,
            radius=ui.dp(6),
            label="" if icon else label,
            font_px=ui.dp(22),
            color=ON_SURFACE,
            align="center",
            clickable=True,
            on_click=handler,
            xml=False,
        )
        if icon:
            k.add(
                View(
                    r.inset(r.height // 4),
                    paint=paint_icon,
                    icon=icon,
                    icon_color=ON_SURFACE,
                    xml=False,
                )
            )
        return k

    top = rect.top + strip
    for i, letters in enumerate(_ROWS):
        y = top + i * row_h
        x0 = (ui.width - key_w * len(letters)) // 2
        if i == 2:
            board.add(key(Rect(0, y, x0, y + row_h), "", lambda: None, dark=True, icon="shift"))
            board.add(
                key(
                    Rect(ui.width - x0, y, ui.width, y + row_h),
                    "",
                    delete,
                    dark=True,
                    icon="backspace",
                )
            )
        for j, ch in enumerate(letters):
            board.add(
                key(
                    Rect(x0 + j * key_w, y, x0 + (j + 1) * key_w, y + row_h),
                    ch,
                    partial(type_text, ch),
                )
            )
    y = top + 3 * row_h
    board.add(key(Rect(0, y, key_w * 2, y + row_h), "?123", lambda: None, dark=True))
    board.add(key(Rect(key_w * 2, y, key_w * 3, y + row_h), ",", lambda: type_text(",")))
    board.add(key(Rect(key_w * 3, y, key_w * 7, y + row_h), " ", lambda: type_text(" ")))
    board.add(key(Rect(key_w * 7, y, key_w * 8, y + row_h), ".", lambda: type_text(".")))
    board.add(key(Rect(key_w * 8, y, ui.width, y + row_h), "", enter, dark=True, icon="check"))
    root.add(board)
    return package, root


def toast(ui: Ui, message: str) -> View:
    width = min(ui.width - ui.dp(48), ui.sp(14) * len(message) // 2 + ui.dp(48))
    h = max(ui.dp(48), ui.sp(14) + ui.dp(28))
    bottom = ui.host.height - nav_bar_height(ui) - ui.dp(64)
    left = (ui.width - width) // 2
    rect = Rect(left, bottom - h, left + width, bottom)
    root = View(rect, cls="android.widget.LinearLayout", bg=(50, 50, 52), radius=h // 2)
    root.add(
        text(
            ui,
            rect,
            message,
            size=14,
            color=WHITE,
            align="center",
            rid="android:id/message",
            max_lines=2,
        )
    )
    return root


def volume_panel(ui: Ui, level: int, maximum: int) -> View:
    """The panel volume keys show for a few seconds: a vertical media volume level."""
    width, h = ui.dp(56), ui.dp(220)
    top = ui.dp(120)
    rect = Rect(ui.width - width - ui.dp(12), top, ui.width - ui.dp(12), top + h)
    root = View(
        rect,
        cls="android.widget.FrameLayout",
        rid=f"{SYSTEMUI}:id/volume_dialog",
        bg=SURFACE_CONTAINER,
        radius=width // 2,
    )
    track = Rect(
        rect.left + ui.dp(16), rect.top + ui.dp(16), rect.right - ui.dp(16), rect.bottom - ui.dp(56)
    )
    fill = track.top + round(track.height * (1 - level / maximum))
    slider = View(
        track,
        cls="android.widget.SeekBar",
        rid=f"{SYSTEMUI}:id/volume_row_slider",
        desc="Media volume",
        focusable=True,
        bg=(231, 224, 236),
        radius=ui.dp(12),
    )
    slider.add(
        View(
            Rect(track.left, fill, track.right, track.bottom),
            bg=PRIMARY,
            radius=ui.dp(12),
            xml=False,
        )
    )
    root.add(slider)
    root.add(
        View(
            Rect(rect.left, rect.bottom - ui.dp(48), rect.right, rect.bottom - ui.dp(8)),
            cls="android.widget.ImageView",
            rid=f"{SYSTEMUI}:id/volume_row_icon",
            paint=paint_icon,
            icon="volume",
            icon_color=PRIMARY,
        )
    )
    return root
