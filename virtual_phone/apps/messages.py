"""Messages (``com.android.messaging``): conversations, a thread with a compose field, and
"Start chat" with a contact picker. Sent messages are app data, kept until ``pm clear``.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from virtual_phone.apps.ambient import refreshed_conversation
from virtual_phone.apps.base import App, Screen, Ui
from virtual_phone.apps.kit import (
    ON_SURFACE_VARIANT,
    PRIMARY,
    SURFACE_CONTAINER,
    SURFACE_HIGH,
    WHITE,
    Column,
    edit_text,
    fab,
    icon_button,
    list_row,
    measure,
    scroll_list,
    text,
    toolbar,
    toolbar_action,
    trailing_text,
)
from virtual_phone.apps.people import (
    CONTACT_LIST,
    avatar_color,
    by_name,
    by_number,
    contact_rows,
    format_number,
    place_call,
    slug,
    time_text,
)
from virtual_phone.widgets import Rect, TextBuffer, View, text_width, wrap_lines

PACKAGE = "com.android.messaging"
LIST_ACTIVITY = "com.android.messaging.ui.conversationlist.ConversationListActivity"
THREAD_ACTIVITY = "com.android.messaging.ui.conversation.ConversationActivity"
BUBBLE_OUT = (211, 227, 253)

DEFAULT_CONVERSATIONS: list[dict[str, Any]] = [
    {
        "name": "Daughter (Emma)",
        "messages": [
            {
                "me": False,
                "text": "Hi Mom! Are you coming for lunch on Sunday?",
                "when": "Yesterday",
            },
            {"me": True, "text": "Yes dear, I will be there at noon.", "when": "Yesterday"},
            {"me": False, "text": "Great! Don't forget your pills.", "when": "9:12 AM"},
        ],
    },
    {
        "name": "Dr. Lee",
        "messages": [
            {
                "me": False,
                "text": "Reminder: your appointment is on Tuesday at 10 AM.",
                "when": "Mon",
            },
        ],
    },
    {
        "name": "Pharmacy (Main St.)",
        "messages": [
            {"me": False, "text": "Your prescription is ready for pickup.", "when": "Mon"},
        ],
    },
    {
        "name": "Son (Tom)",
        "messages": [
            {"me": False, "text": "Call me when you get this.", "when": "Sun"},
            {"me": True, "text": "OK, after dinner.", "when": "Sun"},
        ],
    },
    {
        "name": "Neighbor (Rita)",
        "messages": [
            {"me": False, "text": "Thanks for the cookies!", "when": "Sat"},
        ],
    },
]


def conversations(ui: Ui) -> list[dict[str, Any]]:
    return ui.host.app_data(PACKAGE).setdefault("conversations", [])


def find_conversation(ui: Ui, name: str) -> dict[str, Any] | None:
    return next((c for c in conversations(ui) if c["name"] == name), None)


class ConversationListScreen(Screen):
    screen_id = "messages/list"
    activity = LIST_ACTIVITY

    def build(self, ui: Ui) -> View:
        c = ui.content
        root = View(
            c, cls="android.widget.FrameLayout", rid=f"{PACKAGE}:id/conversation_list_fragment"
        )
        bar = toolbar(ui, "Messages", rid=f"{PACKAGE}:id/toolbar", size=24)
        root.add(bar)
        col = Column(c.left, bar.rect.bottom, c.width)
        rows: list[View] = []
        visit = ui.host.ambient_visit()
        refreshed = refreshed_conversation(visit) if visit is not None else None
        if refreshed is not None:  # a list that refreshed since the last visit
            name, snippet = refreshed
            rows.append(
                list_row(
                    ui,
                    col,
                    name,
                    summary=snippet,
                    avatar=name,
                    avatar_bg=avatar_color(name),
                    title_rid=f"{PACKAGE}:id/conversation_name",
                    summary_rid=f"{PACKAGE}:id/conversation_snippet",
                    cls="android.view.ViewGroup",
                    min_height=80,
                    rid=f"{PACKAGE}:id/swipeableContainer",
                    trailing=trailing_text(
                        ui,
                        "Now",
                        max(ui.dp(48), text_width("Now", ui.sp(12))),
                        size=12,
                        rid=f"{PACKAGE}:id/conversation_timestamp",
                    ),
                )
            )
        for conv in conversations(ui):
            last: dict[str, Any] = (
                conv["messages"][-1] if conv["messages"] else {"text": "", "when": "", "me": False}
            )
            snippet = ("You: " if last["me"] else "") + last["text"]
            row = list_row(
                ui,
                col,
                conv["name"],
                summary=snippet,
                avatar=conv["name"],
                avatar_bg=avatar_color(conv["name"]),
                on_click=partial(ui.push, ThreadScreen(conv["name"])),
                title_rid=f"{PACKAGE}:id/conversation_name",
                summary_rid=f"{PACKAGE}:id/conversation_snippet",
                cls="android.view.ViewGroup",
                min_height=80,
                trailing=trailing_text(
                    ui,
                    last["when"],
                    max(ui.dp(48), text_width(last["when"], ui.sp(12))),
                    size=12,
                    rid=f"{PACKAGE}:id/conversation_timestamp",
                ),
            )
            row.rid = f"{PACKAGE}:id/swipeableContainer"
            rows.append(row)
        root.add(
            scroll_list(
                ui,
                self,
                "list",
                Rect(c.left, bar.rect.bottom, c.right, c.bottom),
                rows,
                rid=f"{PACKAGE}:id/recycler_view",
                bottom_pad=ui.dp(96),
            )
        )
        root.add(
            fab(
                ui,
                "message",
                "Start chat",
                lambda: ui.push(NewConversationScreen()),
                rid=f"{PACKAGE}:id/start_new_conversation_button",
                label="Start chat",
            )
        )
        return root


class ThreadScreen(Screen):
    """One conversation: bubbles, and the compose bar with its Send button."""

    activity = THREAD_ACTIVITY

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.screen_id = f"messages/thread/{slug(name)}"
        self.compose = TextBuffer(hint="Text message", max_length=2000)
        self.scroll["messages"] = 1 << 30  # open at the newest message

    def build(self, ui: Ui) -> View:
        c = ui.content
        contact = by_name(self.name) or by_number(self.name)
        number = contact.number if contact else self.name
        self.compose.on_submit = None
        root = View(c, cls="android.widget.LinearLayout", rid=f"{PACKAGE}:id/conversation_fragment")
        bar = toolbar(
            ui,
            self.name,
            up=ui.pop,
            rid=f"{PACKAGE}:id/toolbar",
            actions=[
                toolbar_action(
                    ui,
                    0,
                    "phone",
                    "Call",
                    lambda: place_call(ui, number),
                    rid=f"{PACKAGE}:id/action_call",
                )
            ],
        )
        root.add(bar)
        # compose bar at the bottom (above the keyboard when it shows)
        field_h = max(ui.dp(56), ui.sp(18) + ui.dp(28))
        compose_w = c.width - ui.dp(16) - ui.dp(72)
        lines = measure(ui, self.compose.value or " ", 18, compose_w - ui.dp(24), max_lines=4)
        field_h = max(field_h, lines + ui.dp(24))
        ct = c.bottom - field_h - ui.dp(12)
        compose = View(
            Rect(c.left, ct - ui.dp(4), c.right, c.bottom),
            cls="android.widget.LinearLayout",
            rid=f"{PACKAGE}:id/message_compose_view_container",
        )
        compose.add(
            edit_text(
                ui,
                Rect(c.left + ui.dp(12), ct, c.left + ui.dp(12) + compose_w, ct + field_h),
                self.compose,
                rid=f"{PACKAGE}:id/compose_message_text",
                multiline=True,
                bg=SURFACE_HIGH,
            )
        )
        has_text = bool(self.compose.value.strip())
        compose.add(
            icon_button(
                ui,
                Rect(
                    c.right - ui.dp(64),
                    ct + (field_h - ui.dp(56)) // 2,
                    c.right - ui.dp(8),
                    ct + (field_h + ui.dp(56)) // 2,
                ),
                "send",
                "Send SMS",
                lambda: self._send(ui),
                rid=f"{PACKAGE}:id/send_message_button",
                enabled=has_text,
                color=WHITE if has_text else (170, 166, 174),
                bg=PRIMARY if has_text else SURFACE_CONTAINER,
                glyph=0.45,
            )
        )
        # message bubbles
        area = Rect(c.left, bar.rect.bottom, c.right, compose.rect.top)
        col = Column(c.left, area.top + ui.dp(8), c.width)
        conv = find_conversation(ui, self.name)
        rows: list[View] = []
        max_w = c.width * 3 // 4
        for msg in conv["messages"] if conv else []:
            inner = max_w - ui.dp(32)
            th = measure(ui, msg["text"], 17, inner)
            meta_h = ui.sp(12) * 3 // 2
            r = col.place(th + ui.dp(20) + meta_h + ui.dp(8))
            width = min(max_w, max(ui.dp(80), _longest_line(ui, msg["text"], inner) + ui.dp(32)))
            left = c.right - ui.dp(12) - width if msg["me"] else c.left + ui.dp(12)
            bubble = View(
                Rect(left, r.top, left + width, r.top + th + ui.dp(20)),
                cls="android.widget.LinearLayout",
                rid=f"{PACKAGE}:id/message_content",
                bg=BUBBLE_OUT if msg["me"] else SURFACE_CONTAINER,
                radius=ui.dp(18),
                long_clickable=True,
            )
            bubble.add(
                text(
                    ui,
                    bubble.rect.inset(ui.dp(16), ui.dp(10)),
                    msg["text"],
                    size=17,
                    rid=f"{PACKAGE}:id/message_text",
                )
            )
            rows.append(bubble)
            rows.append(
                text(
                    ui,
                    Rect(
                        left,
                        bubble.rect.bottom + ui.dp(2),
                        left + width,
                        bubble.rect.bottom + ui.dp(2) + meta_h,
                    ),
                    msg["when"],
                    size=12,
                    color=ON_SURFACE_VARIANT,
                    align="end" if msg["me"] else "start",
                    rid=f"{PACKAGE}:id/message_status",
                )
            )
        if not rows:
            who = contact.name if contact else format_number(self.name)
            rows.append(
                text(
                    ui,
                    col.place(ui.dp(120)),
                    f"Start a conversation with {who}",
                    size=16,
                    color=ON_SURFACE_VARIANT,
                    align="center",
                )
            )
        root.add(
            scroll_list(
                ui,
                self,
                "messages",
                area,
                rows,
                rid=f"{PACKAGE}:id/message_list",
                bottom_pad=ui.dp(8),
            )
        )
        root.add(compose)
        return root

    def _send(self, ui: Ui) -> None:
        body = self.compose.value.strip()
        if not body:
            return
        convs = conversations(ui)
        conv = find_conversation(ui, self.name)
        if conv is None:
            conv = {"name": self.name, "messages": []}
        else:
            convs.remove(conv)
        convs.insert(0, conv)
        conv["messages"].append({"me": True, "text": body, "when": time_text(ui)})
        self.compose.set("")
        self.scroll["messages"] = 1 << 30


def _longest_line(ui: Ui, value: str, width: int) -> int:
    px = ui.sp(17)
    return max(text_width(line, px) for line in wrap_lines(value, px, width))


class NewConversationScreen(Screen):
    """Start chat: a "To" field that filters the contacts; a pick opens the thread."""

    activity = "com.android.messaging.ui.conversation.ConversationActivity"
    screen_id = "messages/new"

    def __init__(self) -> None:
        super().__init__()
        self.to = TextBuffer(hint="Type name, phone number or email")

    def autofocus(self) -> TextBuffer | None:
        return self.to

    def build(self, ui: Ui) -> View:
        c = ui.content
        self.to.on_submit = lambda: self._open(ui, self.to.value.strip())
        root = View(
            c, cls="android.widget.LinearLayout", rid=f"{PACKAGE}:id/contact_picker_fragment"
        )
        bar = toolbar(ui, "New conversation", up=ui.pop, rid=f"{PACKAGE}:id/toolbar")
        root.add(bar)
        fh = max(ui.dp(56), ui.sp(18) + ui.dp(24))
        fr = Rect(c.left, bar.rect.bottom, c.right, bar.rect.bottom + fh)
        row = View(fr, cls="android.widget.LinearLayout")
        row.add(
            text(
                ui,
                Rect(fr.left + ui.dp(16), fr.top, fr.left + ui.dp(64), fr.bottom),
                "To",
                size=16,
                color=ON_SURFACE_VARIANT,
            )
        )
        row.add(
            edit_text(
                ui,
                Rect(fr.left + ui.dp(64), fr.top, fr.right - ui.dp(16), fr.bottom),
                self.to,
                rid=f"{PACKAGE}:id/recipient_text_view",
            )
        )
        root.add(row)
        query = self.to.value.strip().lower()
        people = [
            p for p in CONTACT_LIST if query in p.name.lower() or (query and query in p.digits)
        ]
        col = Column(c.left, fr.bottom + ui.dp(8), c.width)
        rows = contact_rows(
            ui, col, people, lambda p: self._open(ui, p.name), rid_prefix=PACKAGE, headers=not query
        )
        digits = "".join(ch for ch in query if ch.isdigit())
        if not people and len(digits) >= 3:
            rows.append(
                list_row(
                    ui,
                    col,
                    f"Send to {format_number(digits)}",
                    avatar="#",
                    on_click=lambda: self._open(ui, format_number(digits)),
                )
            )
        root.add(
            scroll_list(
                ui,
                self,
                "contacts",
                Rect(c.left, fr.bottom + ui.dp(8), c.right, c.bottom),
                rows,
                rid=f"{PACKAGE}:id/contact_list",
            )
        )
        return root

    def _open(self, ui: Ui, name: str) -> None:
        if not name:
            return
        ui.pop()
        ui.push(ThreadScreen(name))


class MessagesApp(App):
    package = PACKAGE
    label = "Messages"
    activity = LIST_ACTIVITY
    icon = "message"
    icon_bg = (26, 115, 232)

    def default_data(self) -> dict[str, Any]:
        return {"conversations": DEFAULT_CONVERSATIONS}

    def root(self) -> Screen:
        return ConversationListScreen()
