"""Settings (``com.android.settings``) and its search (``com.android.settings.intelligence``).

Pages are data: a :class:`Page` lists :class:`Item` rows (links to other pages, switches
and sliders bound to a system setting, plain information). Switches and sliders read and
write ``phone.settings`` directly, so ``settings get/put`` over ADB and the UI agree, and
``pm clear com.android.settings`` restores them. Font size has its own screen, reached
from Display, from Accessibility > Display size and text, and from search.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from virtual_phone.apps.base import App, Dialog, Screen, Ui
from virtual_phone.apps.kit import (
    ON_SURFACE_VARIANT,
    PRIMARY,
    PRIMARY_CONTAINER,
    SURFACE,
    SURFACE_CONTAINER,
    SURFACE_HIGH,
    WHITE,
    Column,
    alert,
    button,
    cancel_and,
    divider,
    edit_text,
    icon,
    icon_button,
    list_page,
    list_row,
    measure,
    scroll_list,
    seekbar,
    text,
    toolbar,
    toolbar_height,
    trailing_switch,
    up_button,
)
from virtual_phone.apps.updates import WhatsNewDialog, push_with_news
from virtual_phone.widgets import Color, Rect, TextBuffer, View, text_width

PACKAGE = "com.android.settings"
SEARCH_PACKAGE = "com.android.settings.intelligence"
MAIN_ACTIVITY = "com.android.settings.Settings"
SUB_ACTIVITY = "com.android.settings.SubSettings"
SEARCH_ACTIVITY = "com.android.settings.intelligence.search.SearchActivity"

FONT_SCALES = (0.85, 1.0, 1.15, 1.3, 1.5, 1.8, 2.0)
FONT_LABELS = ("Small", "Default", "Large", "Larger", "Largest", "Huge", "Maximum")

Summary = str | Callable[[Ui], str]


@dataclass(frozen=True, slots=True)
class Item:
    """One row of a settings page.

    kind: ``link`` opens ``target``; ``switch`` toggles ``setting`` between "1" and "0"
    (or ``on``/``off`` values); ``slider`` sets ``setting`` from 0 to ``maximum``;
    ``info`` only shows text; ``app`` opens the app-info page of ``target`` (a package).
    """

    kind: str
    title: str
    summary: Summary = ""
    target: str = ""
    setting: tuple[str, str] = ("", "")
    maximum: int = 0
    icon: str = ""
    icon_bg: Color | None = None
    keywords: str = ""
    on: str = "1"
    off: str = "0"


@dataclass(frozen=True, slots=True)
class Page:
    title: str
    items: tuple[Item, ...]


def _font_index(ui: Ui) -> int:
    scale = ui.font_scale
    return min(range(len(FONT_SCALES)), key=lambda i: abs(FONT_SCALES[i] - scale))


def _font_summary(ui: Ui) -> str:
    return FONT_LABELS[_font_index(ui)]


def _brightness_summary(ui: Ui) -> str:
    return f"{round(int(ui.setting('system', 'screen_brightness', '102')) * 100 / 255)}%"


def _wifi_summary(ui: Ui) -> str:
    if ui.setting("global", "airplane_mode_on") == "1":
        return "Airplane mode is on"
    return "Home-WiFi" if ui.setting("global", "wifi_on") == "1" else "Off"


def _on_off(namespace: str, key: str, on: str = "1") -> Callable[[Ui], str]:
    return lambda ui: "On" if ui.setting(namespace, key) == on else "Off"


_HOME_BG = {
    "network": (26, 115, 232),
    "connected": (0, 137, 123),
    "apps": (230, 81, 0),
    "notifications": (251, 140, 0),
    "battery": (67, 160, 71),
    "storage": (142, 36, 170),
    "sound": (0, 150, 136),
    "display": (251, 192, 45),
    "wallpaper": (216, 27, 96),
    "accessibility": (30, 136, 229),
    "security": (67, 160, 71),
    "privacy": (94, 53, 177),
    "location": (3, 155, 229),
    "safety": (229, 57, 53),
    "passwords": (0, 121, 107),
    "wellbeing": (46, 125, 50),
    "google": (66, 133, 244),
    "system": (96, 125, 139),
    "about": (84, 110, 122),
    "tips": (121, 85, 72),
}


def _home(page: str, title: str, summary: Summary, icon_name: str, keywords: str = "") -> Item:
    return Item(
        "link",
        title,
        summary,
        target=page,
        icon=icon_name,
        icon_bg=_HOME_BG[page],
        keywords=keywords,
    )


PAGES: dict[str, Page] = {
    "main": Page(
        "Settings",
        (
            _home(
                "network", "Network & internet", "Mobile, Wi-Fi, hotspot", "wifi", "internet wifi"
            ),
            _home("connected", "Connected devices", "Bluetooth, pairing", "bluetooth"),
            _home("apps", "Apps", "Assistant, recent apps, default apps", "apps"),
            _home("notifications", "Notifications", "Notification history, conversations", "bell"),
            _home("battery", "Battery", "85%", "battery"),
            _home("storage", "Storage", "36% used - 82 GB free", "storage"),
            _home(
                "sound",
                "Sound & vibration",
                "Volume, haptics, Do Not Disturb",
                "volume",
                "ringtone loud quiet",
            ),
            _home(
                "display",
                "Display",
                "Dark theme, font size, brightness",
                "brightness",
                "screen text",
            ),
            _home("wallpaper", "Wallpaper & style", "Colors, themed icons, app grid", "palette"),
            _home(
                "accessibility",
                "Accessibility",
                "Display, interaction, audio",
                "accessibility",
                "vision hearing",
            ),
            _home("security", "Security & privacy", "App security, device lock", "lock"),
            _home(
                "location", "Location", _on_off("secure", "location_mode", "3"), "location", "gps"
            ),
            _home(
                "safety", "Safety & emergency", "Emergency SOS, medical info, alerts", "emergency"
            ),
            _home(
                "passwords",
                "Passwords & accounts",
                "Saved passwords, autofill, synced accounts",
                "key",
            ),
            _home(
                "wellbeing",
                "Digital Wellbeing & parental controls",
                "Screen time, app timers, bedtime schedules",
                "wellbeing",
            ),
            _home("google", "Google", "Services & preferences", "google"),
            _home(
                "system",
                "System",
                "Languages, gestures, time, backup",
                "system",
                "language date time",
            ),
            _home("about", "About phone", "ElderPhone Virtual", "info", "android version model"),
            _home("tips", "Tips & support", "Help articles, phone & chat", "help"),
        ),
    ),
    "network": Page(
        "Network & internet",
        (
            Item(
                "link", "Internet", _wifi_summary, target="internet", icon="wifi", keywords="wifi"
            ),
            Item("info", "SIMs", "ElderTel", icon="signal"),
            Item(
                "switch",
                "Airplane mode",
                setting=("global", "airplane_mode_on"),
                icon="airplane",
                keywords="flight",
            ),
            Item("info", "Hotspot & tethering", "Off", icon="wifi"),
            Item("switch", "Data Saver", setting=("global", "data_saver"), icon="storage"),
            Item("info", "VPN", "None", icon="key"),
            Item("info", "Private DNS", "Automatic", icon="lock"),
        ),
    ),
    "internet": Page(
        "Internet",
        (
            Item("switch", "Wi-Fi", setting=("global", "wifi_on"), keywords="wifi wireless"),
            Item("info", "Home-WiFi", "Connected", icon="wifi"),
            Item("info", "Neighbor-5G", "Saved", icon="wifi"),
            Item("info", "CoffeeShop Guest", "Open", icon="wifi"),
            Item("switch", "Mobile data", setting=("global", "mobile_data"), icon="signal"),
        ),
    ),
    "connected": Page(
        "Connected devices",
        (
            Item("info", "Pair new device", "", icon="plus"),
            Item("switch", "Bluetooth", setting=("global", "bluetooth_on"), icon="bluetooth"),
            Item("info", "Saved devices", "Car audio, Hearing aid", icon="bluetooth"),
            Item("info", "Connection preferences", "Bluetooth, Android Auto, NFC"),
        ),
    ),
    "apps": Page(
        "Apps",
        (
            Item("info", "Recently opened apps", ""),
            Item("info", "Default apps", "Phone, SMS, browser"),
            Item("info", "Screen time", "0 minutes today"),
        ),
    ),
    "notifications": Page(
        "Notifications",
        (
            Item("info", "App notifications", "On for all apps"),
            Item("info", "Notification history", "Off"),
            Item(
                "switch", "Do Not Disturb", setting=("global", "zen_mode"), keywords="dnd silence"
            ),
            Item(
                "switch",
                "Hide silent notifications in status bar",
                setting=("secure", "hide_silent_icons"),
            ),
        ),
    ),
    "battery": Page(
        "Battery",
        (
            Item("info", "Battery level", "85% - about 1 day left"),
            Item("switch", "Battery Saver", setting=("global", "low_power"), keywords="power"),
            Item(
                "switch",
                "Show battery percentage",
                setting=("system", "status_bar_show_battery_percent"),
            ),
        ),
    ),
    "storage": Page(
        "Storage",
        (
            Item("info", "Used", "46 GB of 128 GB"),
            Item("info", "Apps", "12 GB"),
            Item("info", "Images", "18 GB"),
            Item("info", "System", "14 GB"),
        ),
    ),
    "sound": Page(
        "Sound & vibration",
        (
            Item(
                "slider",
                "Media volume",
                setting=("system", "volume_music"),
                maximum=15,
                icon="volume",
                keywords="music loud",
            ),
            Item(
                "slider", "Call volume", setting=("system", "volume_voice"), maximum=5, icon="phone"
            ),
            Item(
                "slider",
                "Ring & notification volume",
                setting=("system", "volume_ring"),
                maximum=7,
                icon="bell",
                keywords="ringtone ring volume",
            ),
            Item(
                "slider",
                "Alarm volume",
                setting=("system", "volume_alarm"),
                maximum=7,
                icon="alarm",
            ),
            Item("switch", "Vibrate for calls", setting=("system", "vibrate_when_ringing")),
            Item(
                "switch", "Do Not Disturb", setting=("global", "zen_mode"), keywords="dnd silence"
            ),
            Item("info", "Phone ringtone", "Pixel Sounds"),
        ),
    ),
    "display": Page(
        "Display",
        (
            Item(
                "link",
                "Brightness level",
                _brightness_summary,
                target="brightness",
                keywords="screen dim bright",
            ),
            Item("switch", "Adaptive brightness", setting=("system", "screen_brightness_mode")),
            Item(
                "switch",
                "Dark theme",
                setting=("secure", "ui_night_mode"),
                on="2",
                off="1",
                keywords="night",
            ),
            Item(
                "link",
                "Font size",
                _font_summary,
                target="font_size",
                keywords="text larger bigger small letters",
            ),
            Item("info", "Screen timeout", "After 30 seconds"),
            Item("switch", "Auto-rotate screen", setting=("system", "accelerometer_rotation")),
        ),
    ),
    "brightness": Page(
        "Brightness level",
        (
            Item(
                "slider",
                "Brightness level",
                setting=("system", "screen_brightness"),
                maximum=255,
                icon="brightness",
                keywords="screen dim bright",
            ),
            Item("switch", "Adaptive brightness", setting=("system", "screen_brightness_mode")),
        ),
    ),
    "wallpaper": Page(
        "Wallpaper & style",
        (
            Item("info", "Wallpaper", "Dusk"),
            Item("info", "Wallpaper colors", "Basic"),
            Item("info", "Themed icons", "Off"),
        ),
    ),
    "accessibility": Page(
        "Accessibility",
        (
            Item(
                "link",
                "Display size and text",
                _font_summary,
                target="font_size",
                icon="text_size",
                keywords="font larger bigger letters",
            ),
            Item("link", "Color and motion", "", target="color_motion", icon="palette"),
            Item(
                "link",
                "TalkBack",
                _on_off("secure", "accessibility_enabled"),
                target="talkback",
                icon="accessibility",
                keywords="screen reader blind",
            ),
            Item("info", "Select to Speak", "Off", icon="volume"),
            Item("info", "Magnification", "Off", icon="search"),
            Item("info", "Caption preferences", "Off", icon="message"),
        ),
    ),
    "color_motion": Page(
        "Color and motion",
        (
            Item(
                "switch",
                "Dark theme",
                setting=("secure", "ui_night_mode"),
                on="2",
                off="1",
                keywords="night",
            ),
            Item(
                "switch",
                "Remove animations",
                setting=("global", "transition_animation_scale"),
                on="0",
                off="1.0",
            ),
            Item(
                "switch",
                "Color inversion",
                setting=("secure", "accessibility_display_inversion_enabled"),
            ),
        ),
    ),
    "talkback": Page(
        "TalkBack",
        (
            Item(
                "switch",
                "Use TalkBack",
                setting=("secure", "accessibility_enabled"),
                keywords="screen reader",
            ),
            Item("info", "TalkBack settings", "Verbosity, speech rate"),
        ),
    ),
    "security": Page(
        "Security & privacy",
        (
            Item("info", "Screen lock", "PIN"),
            Item("info", "Find My Device", "On"),
            Item("info", "Security update", "February 5, 2024"),
        ),
    ),
    "location": Page(
        "Location",
        (
            Item(
                "switch",
                "Use location",
                setting=("secure", "location_mode"),
                on="3",
                off="0",
                keywords="gps",
            ),
            Item("info", "Recent access", "Weather - 2 hr. ago"),
        ),
    ),
    "safety": Page(
        "Safety & emergency",
        (
            Item("info", "Medical information", "Add"),
            Item("info", "Emergency contacts", "Daughter (Emma)"),
            Item("info", "Emergency SOS", "Off"),
        ),
    ),
    "passwords": Page(
        "Passwords & accounts",
        (
            Item("info", "Passwords", "12 saved passwords"),
            Item("info", "Accounts", "1 account"),
        ),
    ),
    "wellbeing": Page(
        "Digital Wellbeing & parental controls",
        (
            Item("info", "Dashboard", "1 hr 12 min today"),
            Item("info", "Bedtime mode", "Off"),
        ),
    ),
    "google": Page(
        "Google",
        (
            Item("info", "Manage your Google Account", ""),
            Item("info", "Backup", "On"),
        ),
    ),
    "system": Page(
        "System",
        (
            Item("info", "Languages", "English (United States)", keywords="language"),
            Item("info", "Keyboard", "On-screen keyboard"),
            Item("info", "Gestures", ""),
            Item("info", "Date & time", "GMT-05:00 Eastern Standard Time", keywords="clock"),
            Item("info", "Backup", "On"),
            Item("info", "Reset options", ""),
        ),
    ),
    "about": Page(
        "About phone",
        (
            Item("info", "Device name", "ElderPhone Virtual"),
            Item("info", "Phone number", "(202) 555-0199"),
            Item("info", "Model", "ElderPhone Virtual"),
            Item("info", "Android version", "14"),
            Item("info", "Build number", "UQ1A.240205.004"),
        ),
    ),
    "tips": Page(
        "Tips & support",
        (
            Item("info", "Help articles", ""),
            Item("info", "Contact us", "Phone & chat"),
        ),
    ),
}

SCREEN_IDS: dict[str, str] = {
    "main": "settings/main",
    "brightness": "settings/display/brightness",
    "internet": "settings/network/internet",
    "color_motion": "settings/accessibility/color_motion",
    "talkback": "settings/accessibility/talkback",
}

ACTIVITY_PAGES: dict[str, str] = {
    "com.android.settings.Settings$NetworkDashboardActivity": "network",
    "com.android.settings.Settings$WifiSettingsActivity": "internet",
    "com.android.settings.Settings$DisplaySettingsActivity": "display",
    "com.android.settings.Settings$SoundSettingsActivity": "sound",
    "com.android.settings.Settings$AccessibilitySettingsActivity": "accessibility",
    "com.android.settings.Settings$TextReadingSettingsActivity": "font_size",
    "com.android.settings.Settings$BluetoothSettingsActivity": "connected",
    "com.android.settings.Settings$BatterySaverSettingsActivity": "battery",
    "com.android.settings.Settings$LocationSettingsActivity": "location",
    "com.android.settings.Settings$MyDeviceInfoActivity": "about",
    "com.android.settings.Settings$ManageApplicationsActivity": "apps",
}


def _updated_pages() -> dict[str, Page]:
    """Version 2: "About phone" is renamed "About device" and, on the Brightness level
    page, the slider moves below "Adaptive brightness"."""
    pages = dict(PAGES)
    pages["main"] = Page(
        "Settings",
        tuple(
            replace(item, title="About device") if item.target == "about" else item
            for item in PAGES["main"].items
        ),
    )
    pages["about"] = Page("About device", PAGES["about"].items)
    slider, adaptive = PAGES["brightness"].items
    pages["brightness"] = Page(PAGES["brightness"].title, (adaptive, slider))
    return pages


PAGES_V2 = _updated_pages()


def pages(ui: Ui) -> dict[str, Page]:
    """The pages of the version of Settings the phone plays."""
    return PAGES_V2 if ui.version >= 2 else PAGES


def _news(ui: Ui, page: str) -> WhatsNewDialog | None:
    """Version 2 introduces Connected devices with a one-time dialog."""
    if ui.version < 2 or page != "connected":
        return None
    return WhatsNewDialog(
        "whats_new",
        "New: Fast Pair",
        "Nearby hearing aids and headphones now pair with one tap.",
    )


def screen_id(page: str) -> str:
    return SCREEN_IDS.get(
        page, "settings/display/font_size" if page == "font_size" else f"settings/{page}"
    )


def open_page(page: str, activity: str = SUB_ACTIVITY) -> Screen:
    return FontSizeScreen(activity) if page == "font_size" else PageScreen(page, activity)


def open_link(ui: Ui, page: str) -> None:
    """Open ``page`` from a row or a search result, with the update's news if any."""
    push_with_news(ui, open_page(page), _news(ui, page))


def _summary(ui: Ui, summary: Summary) -> str:
    return summary(ui) if callable(summary) else summary


def _switch_row(ui: Ui, col: Column, item: Item) -> View:
    namespace, key = item.setting
    checked = ui.setting(namespace, key, item.off) == item.on

    def toggle() -> None:
        ui.put_setting(namespace, key, item.off if checked else item.on)

    return list_row(
        ui,
        col,
        item.title,
        summary=_summary(ui, item.summary),
        icon_name=item.icon,
        on_click=toggle,
        checkable=True,
        checked=checked,
        trailing=trailing_switch(ui, checked),
    )


def _link_row(ui: Ui, col: Column, item: Item) -> View:
    return list_row(
        ui,
        col,
        item.title,
        summary=_summary(ui, item.summary),
        icon_name=item.icon,
        icon_bg=item.icon_bg,
        icon_color=WHITE if item.icon_bg else ON_SURFACE_VARIANT,
        on_click=partial(open_link, ui, item.target),
    )


def _app_row(ui: Ui, col: Column, item: Item) -> View:
    return list_row(
        ui,
        col,
        item.title,
        summary=_summary(ui, item.summary),
        icon_name=item.icon,
        icon_bg=item.icon_bg,
        icon_color=WHITE,
        on_click=lambda: ui.push(AppInfoScreen(item.target)),
    )


def _info_row(ui: Ui, col: Column, item: Item) -> View:
    return list_row(
        ui,
        col,
        item.title,
        summary=_summary(ui, item.summary),
        icon_name=item.icon,
        on_click=lambda: None,
    )


def item_row(ui: Ui, col: Column, item: Item) -> View:
    """The row for one item, wired to navigation or to its setting."""
    return _ROW_BUILDERS.get(item.kind, _info_row)(ui, col, item)


def slider_row(ui: Ui, col: Column, item: Item) -> View:
    namespace, key = item.setting
    try:
        value = int(float(ui.setting(namespace, key, "0")))
    except ValueError:
        value = 0
    pad = ui.dp(16)
    lead = ui.dp(24) + pad if item.icon else 0
    title_h = measure(ui, item.title, 18, col.width - 2 * pad - lead)
    h = title_h + ui.dp(16) + ui.dp(48) + ui.dp(8)
    r = col.place(h)
    row = View(r, cls="android.widget.LinearLayout")
    if item.icon:
        row.add(
            icon(
                ui,
                Rect(r.left + pad, r.top + ui.dp(12), r.left + pad + ui.dp(24), r.top + ui.dp(36)),
                item.icon,
            )
        )
    tl = r.left + pad + lead
    row.add(
        text(
            ui,
            Rect(tl, r.top + ui.dp(12), r.right - pad, r.top + ui.dp(12) + title_h),
            item.title,
            size=18,
            rid="android:id/title",
        )
    )
    top = r.top + ui.dp(12) + title_h + ui.dp(4)

    def set_value(v: int) -> None:
        ui.put_setting(namespace, key, str(v))

    row.add(
        seekbar(
            ui,
            Rect(tl - ui.dp(8), top, r.right - pad, top + ui.dp(48)),
            value,
            item.maximum,
            set_value,
            rid="com.android.settings:id/seekbar",
            desc=item.title,
        )
    )
    return row


_ROW_BUILDERS: dict[str, Callable[[Ui, Column, Item], View]] = {
    "switch": _switch_row,
    "slider": slider_row,
    "link": _link_row,
    "app": _app_row,
}


class PageScreen(Screen):
    """A settings page built from :data:`PAGES`."""

    def __init__(self, page: str, activity: str = SUB_ACTIVITY) -> None:
        super().__init__()
        self.page = page
        self.activity = activity
        self.screen_id = screen_id(page)

    def build(self, ui: Ui) -> View:
        spec = pages(ui)[self.page]
        c = ui.content
        bar = toolbar(ui, spec.title, up=ui.pop, rid=f"{PACKAGE}:id/action_bar", size=24)
        col = Column(c.left, bar.rect.bottom, c.width)
        rows = [item_row(ui, col, item) for item in spec.items]
        if self.page == "apps":
            col.skip(ui.dp(8))
            rows.append(
                text(ui, col.place(ui.dp(40)), "All apps", size=14, color=PRIMARY, bold=True)
            )
            for app in ui.host.launcher_apps():
                rows.append(
                    item_row(
                        ui,
                        col,
                        Item(
                            "app",
                            app.label,
                            app.package,
                            target=app.package,
                            icon=app.icon,
                            icon_bg=app.icon_bg,
                        ),
                    )
                )
        return list_page(
            ui,
            self,
            bar,
            rows,
            rid=f"{PACKAGE}:id/main_content",
            list_rid=f"{PACKAGE}:id/recycler_view",
        )


class MainScreen(Screen):
    """The Settings home page: the search bar and the list of sections."""

    screen_id = "settings/main"
    activity = MAIN_ACTIVITY

    def build(self, ui: Ui) -> View:
        c = ui.content
        root = View(c, cls="android.widget.FrameLayout", rid=f"{PACKAGE}:id/homepage_container")
        col = Column(c.left, c.top, c.width)
        rows: list[View] = []
        title_h = ui.sp(36) * 3 // 2
        col.skip(ui.dp(40))
        rows.append(
            text(
                ui,
                col.place(title_h),
                "Settings",
                size=36,
                align="center",
                rid=f"{PACKAGE}:id/homepage_title",
            )
        )
        col.skip(ui.dp(24))
        sr = col.place(ui.dp(56) + ui.sp(4))
        search = View(
            Rect(sr.left + ui.dp(16), sr.top, sr.right - ui.dp(16), sr.bottom),
            cls="android.widget.FrameLayout",
            rid=f"{PACKAGE}:id/search_action_bar",
            clickable=True,
            focusable=True,
            bg=SURFACE_HIGH,
            radius=sr.height // 2,
            on_click=lambda: ui.push(SearchScreen()),
        )
        search.add(
            icon(
                ui,
                Rect(
                    search.rect.left + ui.dp(16),
                    sr.top + (sr.height - ui.dp(24)) // 2,
                    search.rect.left + ui.dp(40),
                    sr.top + (sr.height + ui.dp(24)) // 2,
                ),
                "search",
            )
        )
        search.add(
            text(
                ui,
                Rect(search.rect.left + ui.dp(56), sr.top, search.rect.right, sr.bottom),
                "Search Settings",
                size=16,
                color=ON_SURFACE_VARIANT,
                rid=f"{PACKAGE}:id/search_action_bar_title",
            )
        )
        rows.append(search)
        col.skip(ui.dp(16))
        for item in pages(ui)["main"].items:
            rows.append(item_row(ui, col, item))
        root.add(scroll_list(ui, self, "list", c, rows, rid=f"{PACKAGE}:id/recycler_view"))
        return root


class FontSizeScreen(Screen):
    """Display size and text: a stepped font size slider with a live preview."""

    screen_id = "settings/display/font_size"

    def __init__(self, activity: str = SUB_ACTIVITY) -> None:
        super().__init__()
        self.activity = activity

    def build(self, ui: Ui) -> View:
        c = ui.content
        bar = toolbar(ui, "Font size", up=ui.pop, rid=f"{PACKAGE}:id/action_bar", size=24)
        col = Column(c.left, bar.rect.bottom, c.width)
        rows: list[View] = []
        pad = ui.dp(16)
        index = _font_index(ui)

        def set_index(i: int) -> None:
            ui.put_setting("system", "font_scale", f"{FONT_SCALES[max(0, min(6, i))]:g}")

        # preview card: a chat bubble whose text follows the chosen size
        sample = "Hello! Your appointment with Dr. Lee is on Tuesday at 10 AM."
        inner = c.width - 4 * pad
        ph = measure(ui, "Preview", 14, inner) + measure(ui, sample, 16, inner - 2 * pad)
        card_r = col.place(ph + ui.dp(72))
        card = View(
            Rect(
                card_r.left + pad,
                card_r.top + ui.dp(8),
                card_r.right - pad,
                card_r.bottom - ui.dp(8),
            ),
            cls="android.widget.FrameLayout",
            rid=f"{PACKAGE}:id/preview_pager",
            bg=SURFACE_CONTAINER,
            radius=ui.dp(24),
        )
        ptop = card.rect.top + ui.dp(12)
        pth = measure(ui, "Preview", 14, inner)
        card.add(
            text(
                ui,
                Rect(card.rect.left + pad, ptop, card.rect.right - pad, ptop + pth),
                "Preview",
                size=14,
                color=ON_SURFACE_VARIANT,
            )
        )
        bubble_top = ptop + pth + ui.dp(12)
        sh = measure(ui, sample, 16, inner - 2 * pad)
        bubble = View(
            Rect(
                card.rect.left + pad, bubble_top, card.rect.right - pad, bubble_top + sh + ui.dp(16)
            ),
            bg=PRIMARY_CONTAINER,
            radius=ui.dp(16),
        )
        bubble.add(
            text(
                ui,
                bubble.rect.inset(pad, ui.dp(8)),
                sample,
                size=16,
                rid=f"{PACKAGE}:id/preview_text",
            )
        )
        card.add(bubble)
        rows.append(card)
        col.skip(ui.dp(8))
        th = measure(ui, "Font size", 18, c.width - 2 * pad)
        tr = col.place(th)
        rows.append(
            text(
                ui,
                Rect(tr.left + pad, tr.top, tr.right - pad, tr.bottom),
                "Font size",
                size=18,
                rid="android:id/title",
            )
        )
        sh = measure(ui, FONT_LABELS[index], 14, c.width - 2 * pad)
        sr = col.place(sh)
        rows.append(
            text(
                ui,
                Rect(sr.left + pad, sr.top, sr.right - pad, sr.bottom),
                FONT_LABELS[index],
                size=14,
                color=ON_SURFACE_VARIANT,
                rid="android:id/summary",
            )
        )
        lr = col.place(ui.dp(64))
        line = View(lr, cls="android.widget.LinearLayout", rid=f"{PACKAGE}:id/font_size_layout")
        b = ui.dp(48)
        cy = lr.top + lr.height // 2
        line.add(
            icon_button(
                ui,
                Rect(lr.left + pad, cy - b // 2, lr.left + pad + b, cy + b // 2),
                "minus",
                "Make smaller",
                lambda: set_index(index - 1),
                rid=f"{PACKAGE}:id/shrink",
                enabled=index > 0,
            )
        )
        line.add(
            seekbar(
                ui,
                Rect(lr.left + pad + b, cy - b // 2, lr.right - pad - b, cy + b // 2),
                index,
                len(FONT_SCALES) - 1,
                set_index,
                rid=f"{PACKAGE}:id/seekbar",
                desc="Font size",
                steps=True,
            )
        )
        line.add(
            icon_button(
                ui,
                Rect(lr.right - pad - b, cy - b // 2, lr.right - pad, cy + b // 2),
                "plus",
                "Make larger",
                lambda: set_index(index + 1),
                rid=f"{PACKAGE}:id/larger",
                enabled=index < len(FONT_SCALES) - 1,
            )
        )
        rows.append(line)
        col.skip(ui.dp(8))
        rows.append(divider(ui, col))
        rows.append(
            item_row(
                ui,
                col,
                Item(
                    "switch",
                    "Bold text",
                    setting=("secure", "font_weight_adjustment"),
                    on="300",
                    off="0",
                ),
            )
        )
        col.skip(ui.dp(16))
        rr = col.place(max(ui.dp(48), ui.sp(16) + ui.dp(24)))
        bw = text_width("Reset settings", ui.sp(16)) + ui.dp(48)

        def reset() -> None:
            ui.show_dialog(ResetDialog())

        rows.append(
            button(
                ui,
                Rect(rr.left + pad, rr.top, rr.left + pad + bw, rr.bottom),
                "Reset settings",
                reset,
                rid=f"{PACKAGE}:id/reset_button",
                style="outlined",
            )
        )
        return list_page(
            ui,
            self,
            bar,
            rows,
            rid=f"{PACKAGE}:id/main_content",
            list_rid=f"{PACKAGE}:id/recycler_view",
            bottom_pad=ui.dp(24),
        )


class ResetDialog(Dialog):
    dialog_id = "reset_dialog"

    def build(self, ui: Ui) -> View:
        def confirm() -> None:
            ui.put_setting("system", "font_scale", "1.0")
            ui.put_setting("secure", "font_weight_adjustment", "0")
            ui.close_dialog()

        return alert(
            ui,
            title="Reset display size and text?",
            message="Your display size and text preferences will reset to the phone's "
            "original settings",
            buttons=cancel_and(ui, "Reset settings", confirm),
        )


@dataclass(frozen=True, slots=True)
class SearchEntry:
    title: str
    breadcrumb: str
    target: str
    words: str


def search_index(catalogue: dict[str, Page] = PAGES) -> list[SearchEntry]:
    """Every page title and row, with where a result leads: a link opens its page, any
    other row opens the page that shows it."""
    entries: list[SearchEntry] = []
    seen: set[tuple[str, str]] = set()
    for page_id, page in catalogue.items():
        crumb = "Settings" if page_id == "main" else page.title
        for item in page.items:
            target = item.target if item.kind == "link" else page_id
            if (item.title, target) in seen or target == "main":
                continue
            seen.add((item.title, target))
            entries.append(
                SearchEntry(item.title, crumb, target, f"{item.title} {item.keywords}".lower())
            )
    return entries


class SearchScreen(Screen):
    screen_id = "settings/search"
    activity = SEARCH_ACTIVITY
    package = SEARCH_PACKAGE

    def __init__(self) -> None:
        super().__init__()
        self.query = TextBuffer(hint="Search settings")

    def autofocus(self) -> TextBuffer | None:
        return self.query

    def build(self, ui: Ui) -> View:
        c = ui.content
        self.query.on_submit = ui.hide_keyboard
        h = toolbar_height(ui)
        root = View(c, cls="android.widget.LinearLayout", rid=f"{SEARCH_PACKAGE}:id/search_panel")
        bar = View(
            Rect(c.left, c.top, c.right, c.top + h),
            cls="android.view.ViewGroup",
            rid=f"{SEARCH_PACKAGE}:id/search_toolbar",
            bg=SURFACE,
        )
        bar.add(up_button(ui, h, ui.pop))
        bar.add(
            edit_text(
                ui,
                Rect(
                    c.left + ui.dp(60), c.top + ui.dp(8), c.right - ui.dp(16), c.top + h - ui.dp(8)
                ),
                self.query,
                rid=f"{SEARCH_PACKAGE}:id/search_src_text",
            )
        )
        root.add(bar)
        col = Column(c.left, c.top + h, c.width)
        query = self.query.value.strip().lower()
        rows: list[View] = []
        if query:
            results = [e for e in search_index(pages(ui)) if query in e.words]
            for entry in results:
                rows.append(
                    list_row(
                        ui,
                        col,
                        entry.title,
                        summary=entry.breadcrumb,
                        summary_rid=f"{SEARCH_PACKAGE}:id/breadcrumb",
                        on_click=partial(open_link, ui, entry.target),
                    )
                )
            if not results:
                rows.append(
                    text(
                        ui,
                        col.place(ui.dp(96)),
                        "No results",
                        size=16,
                        color=ON_SURFACE_VARIANT,
                        align="center",
                        rid=f"{SEARCH_PACKAGE}:id/no_results_layout",
                    )
                )
        root.add(
            scroll_list(
                ui,
                self,
                "results",
                Rect(c.left, c.top + h, c.right, c.bottom),
                rows,
                rid=f"{SEARCH_PACKAGE}:id/list_results",
            )
        )
        return root


class AppInfoScreen(Screen):
    """App info: open, force stop, clear storage (with a confirmation dialog)."""

    activity = SUB_ACTIVITY

    def __init__(self, package: str) -> None:
        super().__init__()
        self.target = package
        self.screen_id = f"settings/apps/{package}"

    def build(self, ui: Ui) -> View:
        app = ui.host.app(self.target)
        c = ui.content
        bar = toolbar(ui, "App info", up=ui.pop, rid=f"{PACKAGE}:id/action_bar", size=24)
        col = Column(c.left, bar.rect.bottom, c.width)
        rows: list[View] = []
        col.skip(ui.dp(16))
        ir = col.place(ui.dp(72))
        rows.append(
            icon(
                ui,
                Rect(ir.center[0] - ui.dp(36), ir.top, ir.center[0] + ui.dp(36), ir.bottom),
                app.icon,
                color=app.icon_fg,
                bg=app.icon_bg,
                rid=f"{PACKAGE}:id/entity_header_icon",
            )
        )
        th = measure(ui, app.label, 24, c.width)
        rows.append(
            text(
                ui,
                col.place(th + ui.dp(16)),
                app.label,
                size=24,
                align="center",
                rid=f"{PACKAGE}:id/entity_header_title",
            )
        )
        br = col.place(ui.dp(64))
        half = c.width // 2
        rows.append(
            button(
                ui,
                Rect(
                    br.left + ui.dp(24),
                    br.top + ui.dp(8),
                    br.left + half - ui.dp(8),
                    br.bottom - ui.dp(8),
                ),
                "Open",
                lambda: ui.host.launch(self.target),
                rid=f"{PACKAGE}:id/button1",
                style="tonal",
            )
        )

        def stop() -> None:
            ui.show_dialog(
                ConfirmDialog(
                    "force_stop_dialog",
                    "Force stop?",
                    "If you force stop an app, it may misbehave.",
                    "OK",
                    lambda: ui.host.stop_app(self.target),
                )
            )

        rows.append(
            button(
                ui,
                Rect(
                    br.left + half + ui.dp(8),
                    br.top + ui.dp(8),
                    br.right - ui.dp(24),
                    br.bottom - ui.dp(8),
                ),
                "Force stop",
                stop,
                rid=f"{PACKAGE}:id/button2",
                style="tonal",
            )
        )
        rows.append(divider(ui, col))
        for label, summary in (
            ("Notifications", "On"),
            ("Permissions", "No permissions requested"),
            ("Screen time", "0 minutes today"),
        ):
            rows.append(list_row(ui, col, label, summary=summary, on_click=lambda: None))

        def clear() -> None:
            ui.show_dialog(
                ConfirmDialog(
                    "clear_storage_dialog",
                    "Delete app data?",
                    "This app's data, including files and settings, will be permanently deleted "
                    "from this device.",
                    "Delete",
                    lambda: ui.host.clear_app(self.target),
                )
            )

        rows.append(
            list_row(
                ui,
                col,
                "Clear storage",
                summary="Delete all app data",
                on_click=clear,
                rid=f"{PACKAGE}:id/clear_storage",
            )
        )
        return list_page(
            ui,
            self,
            bar,
            rows,
            rid=f"{PACKAGE}:id/main_content",
            list_rid=f"{PACKAGE}:id/recycler_view",
        )


class ConfirmDialog(Dialog):
    def __init__(
        self, dialog_id: str, title: str, message: str, confirm: str, action: Callable[[], None]
    ) -> None:
        self.dialog_id = dialog_id
        self.title = title
        self.message = message
        self.confirm = confirm
        self.action = action

    def build(self, ui: Ui) -> View:
        def ok() -> None:
            ui.close_dialog()
            self.action()

        return alert(
            ui,
            title=self.title,
            message=self.message,
            buttons=cancel_and(ui, self.confirm, ok),
        )


class SettingsApp(App):
    package = PACKAGE
    versions = (1, 2)
    label = "Settings"
    activity = MAIN_ACTIVITY
    icon = "settings"
    icon_bg = (95, 99, 104)
    settings_keys = tuple(
        sorted(
            {item.setting for page in PAGES.values() for item in page.items if item.setting[0]}
            | {("system", "font_scale"), ("secure", "font_weight_adjustment")}
        )
    )

    def root(self) -> Screen:
        return MainScreen()

    def activity_stack(self, activity: str) -> list[Screen] | None:
        if activity == MAIN_ACTIVITY:
            return [MainScreen()]
        page = ACTIVITY_PAGES.get(activity)
        return None if page is None else [open_page(page, activity)]
