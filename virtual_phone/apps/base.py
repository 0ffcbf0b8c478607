"""What a simulated app is made of: an :class:`App`, its :class:`Screen` stack and :class:`Dialog`s.

An app owns persistent data (a JSON-like dict, reset by ``pm clear``) and a stack of
screens (reset by ``am force-stop``). A screen keeps its own transient state (scroll
offsets, typed text) as attributes and builds its content as a widget tree on demand,
through a :class:`Ui` handle that gives it the layout metrics and the phone's services.
Event handlers are closures made during the build; they mutate the screen or the app data,
and the phone re-renders afterwards.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from PIL import Image

from virtual_phone.widgets import Color, Rect, TextBuffer, View

SURFACE: Color = (254, 247, 255)


class Host(Protocol):
    """The phone services an app may use (implemented by VirtualPhone)."""

    width: int
    height: int
    density: int
    settings: dict[str, dict[str, str]]

    def now(self) -> datetime: ...
    def ambient_visit(self) -> int | None: ...
    def app_data(self, package: str) -> dict[str, Any]: ...
    def app(self, package: str) -> App: ...
    def launcher_apps(self) -> list[App]: ...
    def launch(self, package: str) -> None: ...
    def recent_tasks(self) -> list[tuple[App, Image.Image | None]]: ...
    def clear_recents(self) -> None: ...
    def push_screen(self, package: str, screen: Screen) -> None: ...
    def pop_screen(self, package: str) -> None: ...
    def go_home(self) -> None: ...
    def open_shade(self) -> None: ...
    def show_toast(self, text: str, package: str) -> None: ...
    def focus_field(self, buffer: TextBuffer | None) -> None: ...
    def focused(self) -> TextBuffer | None: ...
    def hide_keyboard(self) -> None: ...
    def show_dialog(self, dialog: Dialog | None) -> None: ...
    def stop_app(self, package: str) -> None: ...
    def clear_app(self, package: str) -> None: ...
    def app_version(self, package: str) -> int: ...


class Dialog:
    """A modal window over a dimmed screen; BACK or a tap outside cancels it if cancelable.

    Its screen id is the screen's id plus ``/`` and ``dialog_id``.
    """

    dialog_id: str = "dialog"
    cancelable: bool = True
    dim: bool = True  # popup menus leave the screen under them undimmed

    def build(self, ui: Ui) -> View:
        """The dialog panel, with its bounds (usually centred in ``ui.content``)."""
        raise NotImplementedError


class Screen:
    """One activity-level screen of an app."""

    screen_id: str = ""
    activity: str = ""
    package: str | None = None  # another package's activity in this task (e.g. in-call UI)

    def __init__(self) -> None:
        self.dialog: Dialog | None = None
        self.scroll: dict[str, int] = {}

    def build(self, ui: Ui) -> View:
        raise NotImplementedError

    def background(self) -> Color:
        return SURFACE

    def backdrop(self, ui: Ui) -> View | None:
        """Drawn under the whole window, status bar included (the launcher's wallpaper)."""
        return None

    def autofocus(self) -> TextBuffer | None:
        """A text field to focus (and show the keyboard for) when the screen opens."""
        return None


class App:
    """A launchable app: identity, launcher icon, default data and first screen."""

    package: str = ""
    label: str = ""
    activity: str = ""  # the launcher activity, fully qualified
    icon: str = ""
    icon_bg: Color = (103, 80, 164)
    icon_fg: Color = (255, 255, 255)
    on_launcher: bool = True
    settings_keys: tuple[tuple[str, str], ...] = ()  # system settings that pm clear restores
    versions: tuple[int, ...] = (1,)  # the app updates it can play (docs/virtual_phone.md)

    def __deepcopy__(self, memo: dict[int, Any]) -> App:
        return self  # apps keep no state (it lives in the phone's app data): share them

    def default_data(self) -> dict[str, Any]:
        return {}

    def root(self) -> Screen:
        raise NotImplementedError

    def activity_stack(self, activity: str) -> list[Screen] | None:
        """Screens that ``am start -n pkg/activity`` opens, or None if there is no such activity.

        ``activity`` is fully qualified. Apps with more entry points extend this.
        """
        return [self.root()] if activity == self.activity else None


class Ui:
    """What a screen sees while it builds and handles events: metrics plus phone services."""

    def __init__(self, host: Host, app: App, content: Rect, package: str) -> None:
        self.host = host
        self.app = app
        self.content = content
        self.package = package
        self.scale = host.density / 160
        try:
            self.font_scale = float(host.settings["system"].get("font_scale", "1.0"))
        except ValueError:
            self.font_scale = 1.0

    @property
    def width(self) -> int:
        return self.host.width

    @property
    def data(self) -> dict[str, Any]:
        return self.host.app_data(self.app.package)

    @property
    def version(self) -> int:
        """The version of the app this phone plays (1 unless ``--app-version`` said else)."""
        return self.host.app_version(self.app.package)

    def dp(self, value: float) -> int:
        return round(value * self.scale)

    def sp(self, value: float) -> int:
        return round(value * self.scale * self.font_scale)

    def now(self) -> datetime:
        return self.host.now()

    def setting(self, namespace: str, key: str, default: str = "") -> str:
        return self.host.settings[namespace].get(key, default)

    def put_setting(self, namespace: str, key: str, value: str) -> None:
        self.host.settings[namespace][key] = value

    def push(self, screen: Screen) -> None:
        self.host.push_screen(self.app.package, screen)

    def pop(self) -> None:
        self.host.pop_screen(self.app.package)

    def open_in(self, package: str, screen: Screen) -> None:
        """Bring another app to the front with ``screen`` on top of its stack."""
        self.host.push_screen(package, screen)

    def home(self) -> None:
        self.host.go_home()

    def toast(self, text: str) -> None:
        self.host.show_toast(text, self.package)

    def focus(self, buffer: TextBuffer | None) -> None:
        self.host.focus_field(buffer)

    def hide_keyboard(self) -> None:
        self.host.hide_keyboard()

    def show_dialog(self, dialog: Dialog) -> None:
        """Open ``dialog`` over the foreground screen."""
        self.host.show_dialog(dialog)

    def close_dialog(self) -> None:
        self.host.show_dialog(None)

    def is_focused(self, buffer: TextBuffer) -> bool:
        return self.host.focused() is buffer
