"""Launcher3: the home screen with an icon for every app, the app drawer and Overview (recents).

Icons are TextViews whose text and content-desc are the app's name, like Launcher3's
BubbleTextView. Swiping up on the home screen opens the drawer.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache, partial

from PIL import Image, ImageOps

from virtual_phone.apps.ambient import badge_description, predicted_labels
from virtual_phone.apps.base import App, Dialog, Screen, Ui
from virtual_phone.apps.icons import paint_icon
from virtual_phone.apps.kit import (
    ON_SURFACE,
    SURFACE,
    SURFACE_CONTAINER,
    WHITE,
    Column,
    button,
    grid_cell,
    letter_avatar,
    scroll_list,
    text,
)
from virtual_phone.apps.settings import PACKAGE as SETTINGS
from virtual_phone.apps.settings import AppInfoScreen
from virtual_phone.widgets import Color, Rect, View, paint_image

PACKAGE = "com.android.launcher3"
ACTIVITY = "com.android.launcher3.uioverrides.QuickstepLauncher"
WALLPAPER_TOP: Color = (46, 64, 110)
WALLPAPER_BOTTOM: Color = (120, 94, 150)
BADGE: Color = (220, 50, 47)
HOTSEAT = ("com.android.dialer", "com.android.messaging", "com.android.contacts")


@lru_cache(maxsize=4)
def wallpaper(size: tuple[int, int]) -> Image.Image:
    ramp = Image.linear_gradient("L").resize(size)
    return ImageOps.colorize(ramp, WALLPAPER_TOP, WALLPAPER_BOTTOM)


def app_icon(
    ui: Ui, rect: Rect, app: App, *, label_color: Color, rid: str, visit: int | None = None
) -> View:
    """A BubbleTextView: the round icon with the app name under it; on a visit with
    ambient variation, a notification badge (in the description and as a dot)."""
    size = ui.dp(56)
    cx = rect.left + rect.width // 2
    top = rect.top + ui.dp(8)
    desc = badge_description(app.label, visit) if visit is not None else app.label
    view = View(
        rect,
        cls="android.widget.TextView",
        rid=rid,
        text=app.label,
        desc=desc,
        clickable=True,
        long_clickable=True,
        focusable=True,
        on_click=lambda: ui.host.launch(app.package),
        on_long_click=lambda: ui.show_dialog(ShortcutsPopup(app, rect)),
    )
    circle = View(
        Rect(cx - size // 2, top, cx + size // 2, top + size),
        bg=app.icon_bg,
        radius=size // 2,
        xml=False,
    )
    circle.add(
        View(
            circle.rect.inset(size // 4),
            paint=paint_icon,
            icon=app.icon,
            icon_color=app.icon_fg,
            xml=False,
        )
    )
    view.add(circle)
    if desc != app.label:
        dot = ui.dp(14)
        view.add(
            View(
                Rect(cx + size // 2 - dot, top, cx + size // 2, top + dot),
                bg=BADGE,
                radius=dot // 2,
                xml=False,
            )
        )
    view.add(
        View(
            Rect(rect.left, top + size + ui.dp(4), rect.right, rect.bottom),
            label=app.label,
            font_px=ui.sp(13),
            color=label_color,
            align="center",
            valign="top",
            max_lines=2,
            xml=False,
        )
    )
    return view


class ShortcutsPopup(Dialog):
    """The menu a long press on an icon opens; "App info" leads to Settings."""

    dialog_id = "shortcuts"
    dim = False

    def __init__(self, app: App, anchor: Rect) -> None:
        self.app = app
        self.anchor = anchor

    def build(self, ui: Ui) -> View:
        width = ui.dp(200)
        row = max(ui.dp(56), ui.sp(16) + ui.dp(32))
        left = max(ui.dp(8), min(ui.width - width - ui.dp(8), self.anchor.center[0] - width // 2))
        top = self.anchor.top - row - ui.dp(8)
        if top < ui.content.top:
            top = self.anchor.bottom + ui.dp(8)
        panel = View(
            Rect(left, top, left + width, top + row),
            cls="android.widget.LinearLayout",
            rid=f"{PACKAGE}:id/popup_container",
            bg=SURFACE_CONTAINER,
            radius=ui.dp(20),
        )

        def app_info() -> None:
            ui.close_dialog()
            ui.open_in(SETTINGS, AppInfoScreen(self.app.package))

        item = View(
            panel.rect,
            cls="android.view.View",
            rid=f"{PACKAGE}:id/bubble_text",
            text="App info",
            desc="App info",
            clickable=True,
            focusable=True,
            on_click=app_info,
            font_px=ui.sp(16),
            color=ON_SURFACE,
            pad=ui.dp(56),
        )
        item.add(
            View(
                Rect(
                    left + ui.dp(16),
                    top + (row - ui.dp(24)) // 2,
                    left + ui.dp(40),
                    top + (row + ui.dp(24)) // 2,
                ),
                paint=paint_icon,
                icon="info",
                icon_color=ON_SURFACE,
                xml=False,
            )
        )
        panel.add(item)
        return panel


def icon_cell_height(ui: Ui) -> int:
    return ui.dp(76) + 2 * (ui.sp(13) * 5 // 4)


class HomeScreen(Screen):
    screen_id = "launcher/home"
    activity = ACTIVITY

    def background(self) -> Color:
        return WALLPAPER_BOTTOM

    def backdrop(self, ui: Ui) -> View | None:
        return View(
            Rect(0, 0, ui.width, ui.host.height),
            paint=paint_image,
            image=wallpaper((ui.width, ui.host.height)),
            xml=False,
        )

    def build(self, ui: Ui) -> View:
        c = ui.content
        root = View(c, cls="android.widget.FrameLayout", rid=f"{PACKAGE}:id/launcher")
        drag = View(
            c,
            cls="android.widget.FrameLayout",
            rid=f"{PACKAGE}:id/drag_layer",
            on_swipe=lambda dx, dy: self._swiped(ui, dx, dy),
        )
        root.add(drag)
        now = ui.now()
        visit = ui.host.ambient_visit()
        date_text = _date_text(now)
        if visit is not None:
            date_text += " · " + now.strftime("%H:%M")  # a clock in the date widget
        date = View(
            Rect(
                c.left + ui.dp(24),
                c.top + ui.dp(24),
                c.right - ui.dp(24),
                c.top + ui.dp(24) + ui.sp(22) * 3 // 2,
            ),
            cls="android.widget.TextView",
            rid=f"{PACKAGE}:id/date_widget",
            text=date_text,
            font_px=ui.sp(22),
            color=WHITE,
            digest=False,
        )
        drag.add(date)
        apps = [a for a in ui.host.launcher_apps() if a.package not in HOTSEAT]
        cols = 4
        cell_w = c.width // cols
        cell_h = icon_cell_height(ui)
        grid_top = date.rect.bottom + ui.dp(32)
        if visit is not None:
            row = _predictions(ui, apps, visit, Rect(c.left, grid_top, c.right, grid_top + cell_h))
            drag.add(row)
            grid_top = row.rect.bottom + ui.dp(16)
        workspace = View(
            Rect(c.left, grid_top, c.right, c.bottom - cell_h - ui.dp(24)),
            cls="android.widget.ScrollView",
            rid=f"{PACKAGE}:id/workspace",
        )
        page = View(workspace.rect, cls="android.view.ViewGroup")
        for i, app in enumerate(apps):
            r = grid_cell(c.left, grid_top, cell_w, cell_h, cols, i)
            page.add(app_icon(ui, r, app, label_color=WHITE, rid="", visit=visit))
        workspace.add(page)
        drag.add(workspace)
        hot_top = c.bottom - cell_h - ui.dp(8)
        hotseat = View(
            Rect(c.left, hot_top, c.right, hot_top + cell_h),
            cls="android.widget.FrameLayout",
            rid=f"{PACKAGE}:id/hotseat",
        )
        dock = [a for a in ui.host.launcher_apps() if a.package in HOTSEAT]
        slot = c.width // cols
        x0 = c.left + (c.width - slot * len(dock)) // 2
        for i, app in enumerate(dock):
            r = Rect(x0 + i * slot, hot_top, x0 + (i + 1) * slot, hot_top + cell_h)
            hotseat.add(app_icon(ui, r, app, label_color=WHITE, rid="", visit=visit))
        drag.add(hotseat)
        return root

    def _swiped(self, ui: Ui, dx: int, dy: int) -> None:
        if abs(dy) > ui.dp(48) and abs(dy) > abs(dx):
            if dy < 0:
                ui.push(AllAppsScreen())
            else:
                ui.host.open_shade()


def _predictions(ui: Ui, apps: list[App], visit: int, rect: Rect) -> View:
    """The predicted-apps row: other apps on every visit."""
    row = View(rect, cls="android.widget.LinearLayout", rid=f"{PACKAGE}:id/prediction_row")
    by_label = {a.label: a for a in apps}
    chosen = predicted_labels(sorted(by_label), visit)
    slot = rect.width // max(1, len(chosen))
    for i, label in enumerate(chosen):
        r = Rect(rect.left + i * slot, rect.top, rect.left + (i + 1) * slot, rect.bottom)
        row.add(app_icon(ui, r, by_label[label], label_color=WHITE, rid=f"{PACKAGE}:id/predicted"))
    return row


def _date_text(now: datetime) -> str:
    return now.strftime("%A, %B ") + str(now.day)


class AllAppsScreen(Screen):
    screen_id = "launcher/all_apps"
    activity = ACTIVITY

    def background(self) -> Color:
        return SURFACE

    def build(self, ui: Ui) -> View:
        c = ui.content
        root = View(c, cls="android.widget.FrameLayout", rid=f"{PACKAGE}:id/apps_view", bg=SURFACE)
        apps = sorted(ui.host.launcher_apps(), key=lambda a: a.label.lower())
        cols = 4
        cell_w = c.width // cols
        cell_h = icon_cell_height(ui)
        top = c.top + ui.dp(24)
        cells = []
        for i, app in enumerate(apps):
            r = grid_cell(c.left, top, cell_w, cell_h, cols, i)
            cells.append(app_icon(ui, r, app, label_color=ON_SURFACE, rid=""))
        root.add(
            scroll_list(
                ui,
                self,
                "apps",
                Rect(c.left, top, c.right, c.bottom),
                cells,
                rid=f"{PACKAGE}:id/apps_list_view",
            )
        )
        return root


class RecentsScreen(Screen):
    """Overview: one card per recent task with its last picture; tap to resume."""

    screen_id = "launcher/recents"
    activity = ACTIVITY

    def background(self) -> Color:
        return (60, 60, 66)

    def build(self, ui: Ui) -> View:
        c = ui.content
        root = View(
            c, cls="android.widget.FrameLayout", rid=f"{PACKAGE}:id/overview_panel", bg=(60, 60, 66)
        )
        tasks = ui.host.recent_tasks()
        if not tasks:
            root.add(
                text(
                    ui,
                    c,
                    "No recent items",
                    size=18,
                    color=(230, 230, 230),
                    align="center",
                    rid=f"{PACKAGE}:id/empty_message",
                )
            )
            return root
        card_w = c.width * 6 // 10
        card_h = round(card_w * ui.host.height / ui.width)
        col = Column(c.left, c.top + ui.dp(24), c.width)
        cards: list[View] = []
        for app, thumb in tasks:
            header = col.place(ui.dp(48))
            body = col.place(card_h // 2)
            col.skip(ui.dp(24))
            left = c.left + (c.width - card_w) // 2
            card = View(
                Rect(left, header.top, left + card_w, body.bottom),
                cls="android.widget.FrameLayout",
                rid=f"{PACKAGE}:id/task",
                desc=app.label,
                clickable=True,
                long_clickable=True,
                focusable=True,
                on_click=partial(ui.host.launch, app.package),
            )
            card.add(
                letter_avatar(
                    ui,
                    Rect(left, header.top + ui.dp(8), left + ui.dp(32), header.top + ui.dp(40)),
                    app.label,
                    app.icon_bg,
                )
            )
            card.add(
                text(
                    ui,
                    Rect(left + ui.dp(44), header.top, left + card_w, header.bottom),
                    app.label,
                    size=16,
                    color=WHITE,
                    max_lines=1,
                    rid=f"{PACKAGE}:id/title",
                )
            )
            picture = View(
                Rect(left, body.top, left + card_w, body.bottom),
                cls="android.view.View",
                rid=f"{PACKAGE}:id/snapshot",
                bg=(250, 250, 250),
                radius=ui.dp(16),
            )
            if thumb is not None:
                crop = thumb.crop((0, 0, thumb.width, thumb.height // 2))
                picture.add(View(picture.rect, paint=paint_image, image=crop, xml=False))
            card.add(picture)
            cards.append(card)
        bottom_bar = ui.dp(72)
        root.add(
            scroll_list(
                ui,
                self,
                "tasks",
                Rect(c.left, c.top, c.right, c.bottom - bottom_bar),
                cards,
                rid=f"{PACKAGE}:id/overview_list",
            )
        )
        bw = ui.dp(120)
        root.add(
            button(
                ui,
                Rect(
                    c.left + (c.width - bw) // 2,
                    c.bottom - ui.dp(60),
                    c.left + (c.width + bw) // 2,
                    c.bottom - ui.dp(16),
                ),
                "Clear all",
                ui.host.clear_recents,
                rid=f"{PACKAGE}:id/clear_all",
                style="tonal",
            )
        )
        return root


class Launcher(App):
    package = PACKAGE
    label = "Quickstep"
    activity = ACTIVITY
    on_launcher = False

    def root(self) -> Screen:
        return HomeScreen()
