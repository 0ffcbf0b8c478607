"""The notification shade that a swipe down from the status bar opens (``com.android.systemui``).

Quick Settings tiles toggle the same system settings as the Settings app, and the
brightness slider sets ``screen_brightness``, so tasks such as "turn on airplane mode"
have a second path. Notifications come from unread conversations in Messages; tapping
one opens the thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from virtual_phone.apps.base import Ui
from virtual_phone.apps.icons import paint_icon
from virtual_phone.apps.kit import WHITE, Column, button, measure, seekbar, text
from virtual_phone.apps.messages import PACKAGE as MESSAGING
from virtual_phone.apps.messages import ThreadScreen
from virtual_phone.widgets import Color, Rect, View

SYSTEMUI = "com.android.systemui"
SHADE_BG: Color = (32, 33, 36)
TILE_ON: Color = (211, 227, 253)
TILE_OFF: Color = (60, 64, 67)


@dataclass(frozen=True, slots=True)
class Tile:
    label: str
    icon: str
    namespace: str
    key: str
    on: str = "1"
    off: str = "0"


TILES: tuple[Tile, ...] = (
    Tile("Internet", "wifi", "global", "wifi_on"),
    Tile("Bluetooth", "bluetooth", "global", "bluetooth_on"),
    Tile("Airplane mode", "airplane", "global", "airplane_mode_on"),
    Tile("Do Not Disturb", "bell", "global", "zen_mode"),
    Tile("Battery Saver", "battery", "global", "low_power"),
    Tile("Dark theme", "palette", "secure", "ui_night_mode", "2", "1"),
    Tile("Auto-rotate", "system", "system", "accelerometer_rotation"),
    Tile("Location", "location", "secure", "location_mode", "3", "0"),
)


def notifications(ui: Ui, dismissed: set[str]) -> list[tuple[str, str]]:
    """(sender, text) of conversations whose last message was received."""
    data = ui.host.app_data(MESSAGING)
    out = []
    for conv in data.get("conversations", []):
        messages = conv["messages"]
        if messages and not messages[-1]["me"]:
            key = f"{conv['name']}\n{messages[-1]['text']}"
            if key not in dismissed:
                out.append((conv["name"], messages[-1]["text"]))
    return out


def shade(ui: Ui, *, close: Callable[[], None], dismissed: set[str]) -> View:
    """The expanded shade: brightness, tiles, notifications; a tap on empty space closes it."""
    height = ui.host.height
    root = View(
        Rect(0, 0, ui.width, height),
        cls="android.widget.FrameLayout",
        rid=f"{SYSTEMUI}:id/notification_panel",
        bg=SHADE_BG,
        on_swipe=lambda dx, dy: close() if dy < -ui.dp(48) else None,
    )
    root.add(
        View(root.rect, clickable=True, on_click=close, xml=False)  # empty space closes
    )
    pad = ui.dp(16)
    col = Column(pad, ui.content.top + ui.dp(16), ui.width - 2 * pad)
    qs = View(
        Rect(0, col.y, ui.width, col.y),
        cls="android.widget.FrameLayout",
        rid=f"{SYSTEMUI}:id/quick_settings_panel",
    )
    brightness = int(ui.setting("system", "screen_brightness", "102"))
    slider = seekbar(
        ui,
        col.place(ui.dp(56)),
        brightness,
        255,
        lambda v: ui.put_setting("system", "screen_brightness", str(v)),
        rid=f"{SYSTEMUI}:id/slider",
        desc="Display brightness",
        color=TILE_ON,
    )
    qs.add(slider)
    col.skip(ui.dp(16))
    tile_h = max(ui.dp(72), ui.sp(14) * 3 + ui.dp(24))
    half = (col.width - ui.dp(8)) // 2
    for i, tile in enumerate(TILES):
        row, column = divmod(i, 2)
        if column == 0 and row:
            col.skip(ui.dp(8))
        if column == 0:
            line = col.place(tile_h)
        left = line.left + column * (half + ui.dp(8))
        qs.add(_tile(ui, Rect(left, line.top, left + half, line.bottom), tile))
    qs.rect = Rect(0, qs.rect.top, ui.width, col.y)
    root.add(qs)
    col.skip(ui.dp(24))
    items = notifications(ui, dismissed)
    stack = View(
        Rect(0, col.y, ui.width, height - ui.dp(48)),
        cls="android.widget.FrameLayout",
        rid=f"{SYSTEMUI}:id/notification_stack_scroller",
        clip=True,  # cards that do not fit are cut off at the navigation bar
    )
    hr = col.place(ui.dp(48))
    if items:
        width = ui.dp(120)
        stack.add(
            button(
                ui,
                Rect(hr.right - width, hr.top, hr.right, hr.bottom),
                "Clear all",
                partial(_clear_all, ui, dismissed),
                rid=f"{SYSTEMUI}:id/dismiss_text",
                style="tonal",
                size=14,
            )
        )
    else:
        stack.add(
            text(
                ui,
                hr,
                "No notifications",
                size=16,
                color=(200, 200, 200),
                align="center",
                rid=f"{SYSTEMUI}:id/no_notifications",
            )
        )
    col.skip(ui.dp(8))
    for sender, body in items:
        body_h = measure(ui, body, 14, col.width - 2 * pad, max_lines=2)
        card = col.place(ui.sp(12) * 3 // 2 + ui.sp(16) * 3 // 2 + body_h + ui.dp(24))
        col.skip(ui.dp(8))
        view = View(
            card,
            cls="android.widget.FrameLayout",
            rid=f"{SYSTEMUI}:id/expandableNotificationRow",
            clickable=True,
            focusable=True,
            on_click=partial(_open_thread, ui, close, sender),
            bg=(48, 49, 52),
            radius=ui.dp(20),
        )
        y = card.top + ui.dp(12)
        view.add(
            text(
                ui,
                Rect(card.left + pad, y, card.right - pad, y + ui.sp(12) * 3 // 2),
                "Messages",
                size=12,
                color=(200, 200, 200),
                rid="android:id/app_name_text",
            )
        )
        y += ui.sp(12) * 3 // 2
        view.add(
            text(
                ui,
                Rect(card.left + pad, y, card.right - pad, y + ui.sp(16) * 3 // 2),
                sender,
                size=16,
                color=WHITE,
                rid="android:id/title",
                max_lines=1,
            )
        )
        y += ui.sp(16) * 3 // 2
        view.add(
            text(
                ui,
                Rect(card.left + pad, y, card.right - pad, y + body_h),
                body,
                size=14,
                color=(220, 220, 220),
                rid="android:id/text",
                max_lines=2,
            )
        )
        stack.add(view)
    root.add(stack)
    return root


def _tile(ui: Ui, rect: Rect, tile: Tile) -> View:
    on = ui.setting(tile.namespace, tile.key, tile.off) == tile.on
    fg = (33, 33, 33) if on else (230, 230, 230)

    def toggle() -> None:
        ui.put_setting(tile.namespace, tile.key, tile.off if on else tile.on)

    view = View(
        rect,
        cls="android.widget.Switch",
        desc=tile.label,
        checkable=True,
        checked=on,
        clickable=True,
        focusable=True,
        on_click=toggle,
        bg=TILE_ON if on else TILE_OFF,
        radius=ui.dp(24),
    )
    cy = rect.center[1]
    view.add(
        View(
            Rect(rect.left + ui.dp(16), cy - ui.dp(12), rect.left + ui.dp(40), cy + ui.dp(12)),
            paint=paint_icon,
            icon=tile.icon,
            icon_color=fg,
            xml=False,
        )
    )
    label_h = ui.sp(14) * 5 // 4
    left = rect.left + ui.dp(52)
    view.add(
        text(
            ui,
            Rect(left, cy - label_h, rect.right - ui.dp(8), cy),
            tile.label,
            size=14,
            color=fg,
            bold=True,
            max_lines=1,
            rid="android:id/title",
        )
    )
    view.add(
        text(
            ui,
            Rect(left, cy, rect.right - ui.dp(8), cy + label_h),
            "On" if on else "Off",
            size=12,
            color=fg,
            max_lines=1,
            rid="android:id/summary",
        )
    )
    return view


def _open_thread(ui: Ui, close: Callable[[], None], sender: str) -> None:
    close()
    ui.open_in(MESSAGING, ThreadScreen(sender))


def _clear_all(ui: Ui, dismissed: set[str]) -> None:
    dismissed.update(f"{s}\n{t}" for s, t in notifications(ui, dismissed))
