"""Contacts (``com.android.contacts``): the people list with search, and the contact card.

The card is also what Phone opens for a contact, as on Android, so its screen id is the
same whichever app it was reached from.
"""

from __future__ import annotations

from virtual_phone.apps.base import App, Screen, Ui
from virtual_phone.apps.kit import (
    ON_PRIMARY_CONTAINER,
    PRIMARY,
    PRIMARY_CONTAINER,
    SURFACE_HIGH,
    Column,
    edit_text,
    fab,
    icon_button,
    list_row,
    scroll_list,
    text,
    text_line,
)
from virtual_phone.apps.messages import PACKAGE as MESSAGING
from virtual_phone.apps.messages import ThreadScreen
from virtual_phone.apps.people import (
    CONTACT_LIST,
    CONTACTS,
    DEFAULT_FAVORITES,
    Contact,
    by_name,
    contact_rows,
    large_avatar,
    place_call,
)
from virtual_phone.widgets import Rect, TextBuffer, View

PEOPLE_ACTIVITY = "com.android.contacts.activities.PeopleActivity"


class ContactDetailScreen(Screen):
    """The Contacts app's contact card (QuickContactActivity), also opened from Phone."""

    package = CONTACTS
    activity = "com.android.contacts.quickcontact.QuickContactActivity"

    def __init__(self, name: str) -> None:
        super().__init__()
        self.contact = by_name(name) or Contact(name, "")
        self.screen_id = f"contacts/detail/{self.contact.slug}"

    def build(self, ui: Ui) -> View:
        c = ui.content
        person = self.contact
        data = ui.host.app_data(CONTACTS)
        starred = person.name in data.setdefault("starred", list(DEFAULT_FAVORITES))
        root = View(c, cls="android.widget.FrameLayout", rid=f"{CONTACTS}:id/multiscroller")

        def toggle_star() -> None:
            if starred:
                data["starred"].remove(person.name)
            else:
                data["starred"].append(person.name)

        bar_h = ui.dp(64)
        root.add(
            icon_button(
                ui,
                Rect(c.left + ui.dp(4), c.top + ui.dp(8), c.left + ui.dp(52), c.top + ui.dp(56)),
                "arrow_back",
                "Navigate up",
                ui.pop,
            )
        )
        root.add(
            icon_button(
                ui,
                Rect(c.right - ui.dp(56), c.top + ui.dp(8), c.right - ui.dp(8), c.top + ui.dp(56)),
                "star",
                "Remove from favorites" if starred else "Add to favorites",
                toggle_star,
                rid=f"{CONTACTS}:id/menu_star",
                color=(250, 180, 0) if starred else (190, 186, 194),
            )
        )
        col = Column(c.left, c.top + bar_h, c.width)
        col.skip(ui.dp(16))
        root.add(large_avatar(ui, col, person.name))
        col.skip(ui.dp(16))
        root.add(
            text_line(
                ui,
                col,
                person.name,
                size=30,
                align="center",
                rid=f"{CONTACTS}:id/large_title",
                max_lines=1,
            )
        )
        col.skip(ui.dp(24))
        br = col.place(ui.dp(96))
        actions = (
            ("phone", "Call", lambda: place_call(ui, person.number)),
            ("message", "Text", lambda: ui.open_in(MESSAGING, ThreadScreen(person.name))),
        )
        slot = c.width // len(actions)
        for i, (icon_name, label, handler) in enumerate(actions):
            x = c.left + i * slot + (slot - ui.dp(56)) // 2
            button_rect = Rect(x, br.top, x + ui.dp(56), br.top + ui.dp(56))
            b = icon_button(
                ui,
                button_rect,
                icon_name,
                label,
                handler,
                color=ON_PRIMARY_CONTAINER,
                bg=PRIMARY_CONTAINER,
                rid=f"{CONTACTS}:id/{label.lower()}_button",
            )
            root.add(b)
            root.add(
                text(
                    ui,
                    Rect(x - ui.dp(24), button_rect.bottom + ui.dp(4), x + ui.dp(80), br.bottom),
                    label,
                    size=14,
                    align="center",
                    color=PRIMARY,
                )
            )
        col.skip(ui.dp(16))
        root.add(
            list_row(
                ui,
                col,
                person.number,
                summary="Mobile",
                icon_name="phone",
                on_click=lambda: place_call(ui, person.number),
                title_rid=f"{CONTACTS}:id/header",
                summary_rid=f"{CONTACTS}:id/sub_header",
                icon_rid=f"{CONTACTS}:id/icon",
                trailing=None,
            )
        )
        return root


class PeopleScreen(Screen):
    screen_id = "contacts/list"
    activity = PEOPLE_ACTIVITY

    def __init__(self) -> None:
        super().__init__()
        self.query = TextBuffer(hint="Search contacts")

    def build(self, ui: Ui) -> View:
        c = ui.content
        root = View(c, cls="android.widget.FrameLayout", rid=f"{CONTACTS}:id/contacts_frame")
        sh = max(ui.dp(56), ui.sp(18) + ui.dp(24))
        bar = Rect(c.left + ui.dp(16), c.top + ui.dp(8), c.right - ui.dp(16), c.top + ui.dp(8) + sh)
        box = View(
            bar,
            cls="android.widget.LinearLayout",
            rid=f"{CONTACTS}:id/search_view",
            bg=SURFACE_HIGH,
            radius=sh // 2,
        )
        box.add(
            edit_text(
                ui,
                bar.inset(ui.dp(12), ui.dp(4)),
                self.query,
                rid=f"{CONTACTS}:id/search_view_text",
            )
        )
        root.add(box)
        top = bar.bottom + ui.dp(8)
        col = Column(c.left, top, c.width)
        query = self.query.value.strip().lower()
        people = [p for p in CONTACT_LIST if query in p.name.lower()]
        rows = contact_rows(
            ui,
            col,
            people,
            lambda p: ui.push(ContactDetailScreen(p.name)),
            rid_prefix=CONTACTS,
            headers=not query,
        )
        if not people:
            rows.append(
                text(
                    ui,
                    col.place(ui.dp(96)),
                    "No contacts",
                    size=16,
                    align="center",
                    rid=f"{CONTACTS}:id/empty_message",
                )
            )
        root.add(
            scroll_list(
                ui,
                self,
                "people",
                Rect(c.left, top, c.right, c.bottom),
                rows,
                rid=f"{CONTACTS}:id/contacts_list",
                bottom_pad=ui.dp(88),
            )
        )
        root.add(
            fab(
                ui,
                "plus",
                "Create contact",
                lambda: ui.toast("Creating contacts is not available"),
                rid=f"{CONTACTS}:id/floating_action_button",
            )
        )
        return root


class ContactsApp(App):
    package = CONTACTS
    label = "Contacts"
    activity = PEOPLE_ACTIVITY
    icon = "person"
    icon_bg = (26, 115, 232)

    def default_data(self) -> dict[str, object]:
        return {"starred": list(DEFAULT_FAVORITES)}

    def root(self) -> Screen:
        return PeopleScreen()
