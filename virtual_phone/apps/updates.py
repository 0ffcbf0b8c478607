"""App updates the phone can play (``VirtualPhone(app_versions=...)``): the shared pieces.

Each app keeps its own version-2 changes next to its version-1 code; what they share is
the one-time "what's new" dialog an update shows the first time a screen opens. Whether
it was shown lives in the app's data, so ``pm clear`` brings it back, as on a phone.
"""

from __future__ import annotations

from virtual_phone.apps.base import Dialog, Screen, Ui
from virtual_phone.apps.kit import alert
from virtual_phone.widgets import View

_SEEN = "whats_new_seen"


class WhatsNewDialog(Dialog):
    """Announces an update; "Got it" (or BACK) closes it for good."""

    def __init__(self, dialog_id: str, title: str, message: str) -> None:
        self.dialog_id = dialog_id
        self.title = title
        self.message = message

    def build(self, ui: Ui) -> View:
        return alert(
            ui,
            title=self.title,
            message=self.message,
            buttons=(("Got it", ui.close_dialog, "android:id/button1"),),
        )


def push_with_news(ui: Ui, screen: Screen, news: WhatsNewDialog | None) -> None:
    """Open ``screen``; over it, ``news`` the first time this app shows that dialog."""
    ui.push(screen)
    if news is None:
        return
    seen: list[str] = ui.data.setdefault(_SEEN, [])
    if news.dialog_id not in seen:
        seen.append(news.dialog_id)
        ui.show_dialog(news)
