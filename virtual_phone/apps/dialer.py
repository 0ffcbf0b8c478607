"""Phone (``com.android.dialer``): favorites, call history, contacts, and the keypad.

A contact can be called from a favorite tile, from the call history's call button, from
the contact card (Contacts tab), or by typing the number on the keypad.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from virtual_phone.apps.base import App, Screen, Ui
from virtual_phone.apps.contacts import ContactDetailScreen
from virtual_phone.apps.kit import (
    ON_SURFACE,
    ON_SURFACE_VARIANT,
    PRIMARY,
    SURFACE_CONTAINER,
    WHITE,
    Column,
    TabbedScreen,
    fab,
    grid_cell,
    icon_button,
    letter_avatar,
    list_row,
    scroll_list,
    tabs_height,
    text,
    toolbar,
    toolbar_height,
    trailing_icon_button,
)
from virtual_phone.apps.people import (
    CONTACT_LIST,
    CONTACTS,
    DEFAULT_FAVORITES,
    DIALER,
    avatar_color,
    by_name,
    by_number,
    contact_rows,
    format_number,
    place_call,
)
from virtual_phone.widgets import Rect, TextBuffer, View

MAIN_ACTIVITY = "com.android.dialer.main.impl.MainActivity"
TABS = (("star", "Favorites"), ("history", "Recents"), ("person", "Contacts"))
TAB_IDS = ("dialer/favorites", "dialer/recents", "dialer/contacts")
DEFAULT_CALLS: list[dict[str, str]] = [
    {"name": "Daughter (Emma)", "number": "", "kind": "incoming", "when": "Yesterday"},
    {"name": "Dr. Lee", "number": "", "kind": "missed", "when": "Yesterday"},
    {"name": "", "number": "(555) 867-5309", "kind": "outgoing", "when": "Mon"},
    {"name": "Son (Tom)", "number": "", "kind": "incoming", "when": "Sun"},
]
_KEYS = (
    ("1", ""),
    ("2", "ABC"),
    ("3", "DEF"),
    ("4", "GHI"),
    ("5", "JKL"),
    ("6", "MNO"),
    ("7", "PQRS"),
    ("8", "TUV"),
    ("9", "WXYZ"),
    ("*", ""),
    ("0", "+"),
    ("#", ""),
)
_KEY_IDS = (
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "star",
    "zero",
    "pound",
)


def _number_of(entry: dict[str, str]) -> str:
    if entry["number"]:
        return entry["number"]
    contact = by_name(entry["name"])
    return contact.number if contact else ""


class DialerScreen(TabbedScreen):
    """The main activity with its three tabs."""

    activity = MAIN_ACTIVITY
    tab_items = TABS
    tab_ids = TAB_IDS

    def build(self, ui: Ui) -> View:
        c = ui.content
        root = View(c, cls="android.widget.FrameLayout", rid=f"{DIALER}:id/main_layout")
        th = tabs_height(ui)
        bar_h = toolbar_height(ui)
        bar = toolbar(ui, "Phone", rid=f"{DIALER}:id/toolbar")
        root.add(bar)
        body = Rect(c.left, c.top + bar_h, c.right, c.bottom - th)
        builder = (self._favorites, self._recents, self._contacts)[self.tab]
        root.add(builder(ui, body))
        root.add(
            fab(
                ui,
                "dialpad",
                "key pad",
                lambda: ui.push(DialpadScreen()),
                rid=f"{DIALER}:id/fab",
                bottom=body.bottom - ui.dp(16),
            )
        )
        root.add(
            self.tab_bar(
                ui,
                rid=f"{DIALER}:id/bottom_nav_bar",
                item_rid=f"{DIALER}:id/bottom_navigation_item",
            )
        )
        return root

    def _favorites(self, ui: Ui, body: Rect) -> View:
        starred = ui.host.app_data(CONTACTS).get("starred", list(DEFAULT_FAVORITES))
        people = [p for p in CONTACT_LIST if p.name in starred]
        cols = 2
        cell_w = body.width // cols
        cell_h = ui.dp(150) + ui.sp(16) * 3
        tiles: list[View] = []
        for i, person in enumerate(people):
            r = grid_cell(body.left, body.top + ui.dp(16), cell_w, cell_h, cols, i)
            tile = View(
                r.inset(ui.dp(8)),
                cls="android.widget.FrameLayout",
                rid=f"{DIALER}:id/contact_tile",
                desc=f"Call {person.name}",
                clickable=True,
                long_clickable=True,
                focusable=True,
                on_click=partial(place_call, ui, person.number),
                on_long_click=partial(ui.push, ContactDetailScreen(person.name)),
                bg=SURFACE_CONTAINER,
                radius=ui.dp(16),
            )
            cx = tile.rect.center[0]
            top = tile.rect.top + ui.dp(16)
            tile.add(
                letter_avatar(
                    ui,
                    Rect(cx - ui.dp(48), top, cx + ui.dp(48), top + ui.dp(96)),
                    person.name,
                    avatar_color(person.name),
                )
            )
            tile.add(
                text(
                    ui,
                    Rect(
                        tile.rect.left + ui.dp(8),
                        top + ui.dp(104),
                        tile.rect.right - ui.dp(8),
                        tile.rect.bottom - ui.dp(8),
                    ),
                    person.name,
                    size=16,
                    align="center",
                    valign="top",
                    max_lines=2,
                    rid=f"{DIALER}:id/contact_tile_name",
                )
            )
            tiles.append(tile)
        if not tiles:
            tiles.append(
                text(
                    ui,
                    Rect(body.left, body.top, body.right, body.top + ui.dp(120)),
                    "No favorites yet",
                    size=16,
                    align="center",
                    color=ON_SURFACE_VARIANT,
                )
            )
        return scroll_list(
            ui,
            self,
            "favorites",
            body,
            tiles,
            rid=f"{DIALER}:id/contact_tile_list",
            bottom_pad=ui.dp(96),
        )

    def _recents(self, ui: Ui, body: Rect) -> View:
        calls: list[dict[str, Any]] = ui.data.setdefault("calls", [dict(c) for c in DEFAULT_CALLS])
        col = Column(body.left, body.top, body.width)
        rows: list[View] = []
        for entry in calls:
            who = entry["name"] or entry["number"]
            number = _number_of(entry)
            kind = {"incoming": "Incoming", "outgoing": "Outgoing", "missed": "Missed"}[
                entry["kind"]
            ]
            rows.append(
                list_row(
                    ui,
                    col,
                    who,
                    summary=f"{kind} · {entry['when']}",
                    avatar=who,
                    avatar_bg=avatar_color(who),
                    min_height=72,
                    on_click=partial(ui.push, ContactDetailScreen(entry["name"]))
                    if entry["name"]
                    else None,
                    title_rid=f"{DIALER}:id/primary_text",
                    summary_rid=f"{DIALER}:id/call_details",
                    cls="android.view.ViewGroup",
                    trailing=trailing_icon_button(
                        ui,
                        "phone",
                        f"Call {who}",
                        partial(place_call, ui, number),
                        rid=f"{DIALER}:id/call_button",
                        color=PRIMARY,
                    ),
                )
            )
        return scroll_list(
            ui,
            self,
            "recents",
            body,
            rows,
            rid=f"{DIALER}:id/new_call_log_recycler_view",
            bottom_pad=ui.dp(96),
        )

    def _contacts(self, ui: Ui, body: Rect) -> View:
        col = Column(body.left, body.top, body.width)
        rows = contact_rows(
            ui,
            col,
            list(CONTACT_LIST),
            lambda p: ui.push(ContactDetailScreen(p.name)),
            rid_prefix=DIALER,
        )
        return scroll_list(
            ui,
            self,
            "contacts",
            body,
            rows,
            rid=f"{DIALER}:id/contacts_recycler_view",
            bottom_pad=ui.dp(96),
        )


class DialpadScreen(Screen):
    """The keypad: digits, a backspace, and the call button."""

    activity = MAIN_ACTIVITY
    screen_id = "dialer/dialpad"

    def __init__(self) -> None:
        super().__init__()
        self.digits = TextBuffer(digits_only=False, max_length=20, soft_keyboard=False)

    def autofocus(self) -> TextBuffer | None:
        return self.digits

    def build(self, ui: Ui) -> View:
        c = ui.content
        root = View(c, cls="android.widget.LinearLayout", rid=f"{DIALER}:id/dialpad_view")
        root.add(
            icon_button(
                ui,
                Rect(c.left + ui.dp(4), c.top + ui.dp(8), c.left + ui.dp(52), c.top + ui.dp(56)),
                "arrow_back",
                "Navigate up",
                ui.pop,
            )
        )
        value = self.digits.value
        contact = by_number(value)
        shown = format_number(value) if value.isdigit() else value
        dr = Rect(
            c.left + ui.dp(24),
            c.top + ui.dp(72),
            c.right - ui.dp(80),
            c.top + ui.dp(72) + ui.sp(34) * 3 // 2,
        )
        digits = View(
            dr,
            cls="android.widget.EditText",
            rid=f"{DIALER}:id/digits",
            text=shown,
            focusable=True,
            focused=ui.is_focused(self.digits),
            field=self.digits,
            font_px=ui.sp(34),
            color=ON_SURFACE,
            align="center",
            max_lines=1,
        )
        root.add(digits)
        root.add(
            icon_button(
                ui,
                Rect(c.right - ui.dp(72), dr.top, c.right - ui.dp(16), dr.bottom),
                "backspace",
                "backspace",
                self.digits.delete,
                rid=f"{DIALER}:id/deleteButton",
                enabled=bool(value),
            )
        )
        if contact is not None:
            root.add(
                text(
                    ui,
                    Rect(c.left, dr.bottom, c.right, dr.bottom + ui.sp(16) * 2),
                    contact.name,
                    size=16,
                    align="center",
                    color=PRIMARY,
                    rid=f"{DIALER}:id/dialpad_contact_name",
                )
            )
        call_size = ui.dp(72)
        key_h = max(ui.dp(80), ui.sp(30) + ui.sp(12) + ui.dp(24))
        grid_top = c.bottom - ui.dp(40) - call_size - 4 * key_h
        grid = View(
            Rect(c.left, grid_top, c.right, grid_top + 4 * key_h),
            cls="android.widget.LinearLayout",
            rid=f"{DIALER}:id/dialpad",
        )
        key_w = (c.width - ui.dp(48)) // 3
        for i, ((digit, letters), rid) in enumerate(zip(_KEYS, _KEY_IDS, strict=True)):
            r = grid_cell(c.left + ui.dp(24), grid_top, key_w, key_h, 3, i)
            key = View(
                r.inset(ui.dp(6)),
                cls="android.widget.FrameLayout",
                rid=f"{DIALER}:id/{rid}",
                desc=f"{digit},{letters}" if letters else digit,
                clickable=True,
                focusable=True,
                on_click=partial(self.digits.insert, digit),
                bg=SURFACE_CONTAINER,
                radius=ui.dp(20),
            )
            num_h = ui.sp(30) * 5 // 4
            top = key.rect.top + (key.rect.height - num_h - ui.sp(12)) // 2
            key.add(
                text(
                    ui,
                    Rect(r.left, top, r.right, top + num_h),
                    digit,
                    size=30,
                    align="center",
                    rid=f"{DIALER}:id/dialpad_key_number",
                )
            )
            if letters:
                key.add(
                    text(
                        ui,
                        Rect(r.left, top + num_h, r.right, top + num_h + ui.sp(12) * 5 // 4),
                        letters,
                        size=12,
                        align="center",
                        color=ON_SURFACE_VARIANT,
                        rid=f"{DIALER}:id/dialpad_key_letters",
                    )
                )
            grid.add(key)
        root.add(grid)
        cx = c.center[0]
        cy = c.bottom - ui.dp(24) - call_size
        root.add(
            icon_button(
                ui,
                Rect(cx - call_size // 2, cy, cx + call_size // 2, cy + call_size),
                "phone",
                "dial",
                lambda: self._dial(ui),
                rid=f"{DIALER}:id/dialpad_floating_action_button",
                color=WHITE,
                bg=(30, 142, 62),
                glyph=0.45,
            )
        )
        return root

    def _dial(self, ui: Ui) -> None:
        if self.digits.value:
            place_call(ui, self.digits.value)


class DialerApp(App):
    package = DIALER
    label = "Phone"
    activity = MAIN_ACTIVITY
    icon = "phone"
    icon_bg = (30, 142, 62)

    def default_data(self) -> dict[str, Any]:
        return {"calls": [dict(c) for c in DEFAULT_CALLS]}

    def root(self) -> Screen:
        return DialerScreen()
