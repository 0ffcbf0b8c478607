"""The phone's address book, shared by Phone, Contacts and Messages, and the call screen.

Twenty-five contacts, more than one screen holds, so reaching most of them needs a scroll.
Numbers are in the fictional range 555-0100 to 555-0199.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from virtual_phone.apps.base import Screen, Ui
from virtual_phone.apps.kit import (
    PRIMARY,
    WHITE,
    Column,
    icon_button,
    letter_avatar,
    list_row,
    text,
    text_line,
)
from virtual_phone.widgets import Color, Rect, View

DIALER = "com.android.dialer"
CONTACTS = "com.android.contacts"
IN_CALL_ACTIVITY = "com.android.incallui.InCallActivity"


@dataclass(frozen=True, slots=True)
class Contact:
    name: str
    number: str  # as displayed: (202) 555-0107

    @property
    def slug(self) -> str:
        return slug(self.name)

    @property
    def digits(self) -> str:
        return re.sub(r"\D", "", self.number)


def slug(name: str) -> str:
    """A stable id for screen ids: "Daughter (Emma)" -> "daughter_emma"."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


_NAMES = (
    "Alice Brown",
    "Andrew Kim",
    "Betty Carter",
    "Carlos Diaz",
    "Carol White",
    "Daughter (Emma)",
    "David Miller",
    "Dr. Lee",
    "Dr. Patel (Cardiology)",
    "Frank Moore",
    "Grace Hall",
    "Helen Young",
    "Henry Scott",
    "Jack Wilson",
    "Linda Green",
    "Margaret King",
    "Nancy Adams",
    "Neighbor (Rita)",
    "Paul Baker",
    "Pharmacy (Main St.)",
    "Robert Hill",
    "Son (Tom)",
    "Susan Clark",
    "Taxi Service",
    "Walter Evans",
)
CONTACT_LIST: tuple[Contact, ...] = tuple(
    Contact(name, f"(202) 555-01{i:02d}") for i, name in enumerate(_NAMES)
)
DEFAULT_FAVORITES = ("Daughter (Emma)", "Son (Tom)", "Dr. Lee")

AVATAR_COLORS: tuple[Color, ...] = (
    (234, 221, 255),
    (255, 216, 228),
    (207, 232, 255),
    (210, 240, 214),
    (255, 224, 178),
)


def avatar_color(name: str) -> Color:
    return AVATAR_COLORS[sum(map(ord, name)) % len(AVATAR_COLORS)]


def large_avatar(ui: Ui, col: Column, name: str) -> View:
    """The 120 dp letter avatar centred in the next row of ``col`` (contact card, call)."""
    r = col.place(ui.dp(120))
    cx = r.center[0]
    return letter_avatar(
        ui, Rect(cx - ui.dp(60), r.top, cx + ui.dp(60), r.bottom), name, avatar_color(name)
    )


def by_name(name: str) -> Contact | None:
    return next((c for c in CONTACT_LIST if c.name == name), None)


def by_number(number: str) -> Contact | None:
    digits = re.sub(r"\D", "", number)
    return next((c for c in CONTACT_LIST if digits and c.digits == digits), None)


def format_number(digits: str) -> str:
    d = re.sub(r"\D", "", digits)
    if len(d) == 10:
        return f"({d[:3]}) {d[3:6]}-{d[6:]}"
    return d


def time_text(ui: Ui) -> str:
    now = ui.now()
    return f"{now.hour % 12 or 12}:{now.minute:02d} {'AM' if now.hour < 12 else 'PM'}"


def place_call(ui: Ui, number: str) -> None:
    """Start a call from any app: log it in the Phone app and show the in-call screen."""
    contact = by_number(number)
    calls = ui.host.app_data(DIALER).setdefault("calls", [])
    calls.insert(
        0,
        {
            "name": contact.name if contact else "",
            "number": format_number(number),
            "kind": "outgoing",
            "when": time_text(ui),
        },
    )
    ui.push(InCallScreen(contact.name if contact else "", format_number(number)))


class InCallScreen(Screen):
    """The dialer's call screen; End call returns to where the call was placed."""

    package = DIALER
    activity = IN_CALL_ACTIVITY
    screen_id = "dialer/in_call"

    def __init__(self, name: str, number: str) -> None:
        super().__init__()
        self.name = name
        self.number = number
        self.muted = False
        self.speaker = False

    def background(self) -> Color:
        return (32, 33, 36)

    def build(self, ui: Ui) -> View:
        c = ui.content
        root = View(
            c,
            cls="android.widget.FrameLayout",
            rid=f"{DIALER}:id/incall_ui_container",
            bg=self.background(),
        )
        col = Column(c.left, c.top + ui.dp(48), c.width)
        root.add(
            text_line(
                ui,
                col,
                "Calling...",
                size=16,
                color=(200, 200, 200),
                align="center",
                rid=f"{DIALER}:id/contactgrid_status_text",
            )
        )
        col.skip(ui.dp(16))
        title = self.name or self.number
        root.add(
            text_line(
                ui,
                col,
                title,
                size=32,
                color=WHITE,
                align="center",
                rid=f"{DIALER}:id/contactgrid_contact_name",
                max_lines=1,
            )
        )
        if self.name:
            root.add(
                text_line(
                    ui,
                    col,
                    f"Mobile {self.number}",
                    size=16,
                    color=(200, 200, 200),
                    align="center",
                    rid=f"{DIALER}:id/contactgrid_bottom_text",
                )
            )
        col.skip(ui.dp(40))
        root.add(large_avatar(ui, col, title))
        # button grid: mute, keypad, speaker
        size = ui.dp(72)
        gy = c.bottom - ui.dp(300)
        grid = View(
            Rect(c.left, gy, c.right, gy + size + ui.dp(40)),
            cls="android.widget.LinearLayout",
            rid=f"{DIALER}:id/incall_button_grid",
        )
        specs = (
            ("mic_off", "Mute", self.muted, self._toggle_mute),
            ("dialpad", "Keypad", False, lambda: None),
            ("speaker", "Speaker", self.speaker, self._toggle_speaker),
        )
        slot = c.width // 3
        for i, (icon_name, label, on, handler) in enumerate(specs):
            x = c.left + i * slot + (slot - size) // 2
            b = icon_button(
                ui,
                Rect(x, gy, x + size, gy + size),
                icon_name,
                label,
                handler,
                color=(32, 33, 36) if on else WHITE,
                bg=(232, 234, 237) if on else (60, 64, 67),
                cls="android.widget.ToggleButton"
                if label != "Keypad"
                else "android.widget.ImageButton",
            )
            b.checkable = label != "Keypad"
            b.checked = on
            grid.add(b)
            grid.add(
                text(
                    ui,
                    Rect(
                        x - ui.dp(16),
                        gy + size + ui.dp(4),
                        x + size + ui.dp(16),
                        gy + size + ui.dp(36),
                    ),
                    label,
                    size=14,
                    color=WHITE,
                    align="center",
                )
            )
        root.add(grid)
        end = ui.dp(72)
        ey = c.bottom - ui.dp(120)
        cx = c.center[0]
        root.add(
            icon_button(
                ui,
                Rect(cx - end // 2, ey, cx + end // 2, ey + end),
                "call_end",
                "End call",
                ui.pop,
                rid=f"{DIALER}:id/incall_end_call",
                color=WHITE,
                bg=(217, 48, 37),
                glyph=0.55,
            )
        )
        return root

    def _toggle_mute(self) -> None:
        self.muted = not self.muted

    def _toggle_speaker(self) -> None:
        self.speaker = not self.speaker


def contact_rows(
    ui: Ui,
    col: Column,
    contacts: list[Contact],
    on_pick: Callable[[Contact], None],
    *,
    rid_prefix: str,
    headers: bool = True,
) -> list[View]:
    """Alphabetical contact rows with letter headers, as Phone and Contacts show them."""
    rows: list[View] = []
    letter = ""
    for contact in contacts:
        first = contact.name[0].upper()
        if headers and first != letter:
            letter = first
            hr = col.place(ui.sp(14) + ui.dp(20))
            rows.append(
                text(
                    ui,
                    Rect(hr.left + ui.dp(24), hr.top, hr.right, hr.bottom),
                    letter,
                    size=14,
                    color=PRIMARY,
                    bold=True,
                    rid=f"{rid_prefix}:id/header",
                )
            )
        rows.append(
            list_row(
                ui,
                col,
                contact.name,
                avatar=contact.name,
                avatar_bg=avatar_color(contact.name),
                on_click=partial(on_pick, contact),
                min_height=64,
                title_rid=f"{rid_prefix}:id/cliv_name_textview",
                cls="android.view.ViewGroup",
            )
        )
    return rows
