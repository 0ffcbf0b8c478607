"""VirtualPhone: a simulated Android phone that renders its apps and applies input.

The ADB side (``virtual_phone.adbd`` and friends) calls this class for everything a
shell command or scrcpy control message does to the screen. All methods are thread-safe.

How it works:

- Each app (``virtual_phone.apps``) keeps persistent data and a stack of screens. The
  foreground screen, its dialog, a toast, the keyboard and the system bars are built into
  one widget tree per state (``virtual_phone.widgets``); the same tree yields the pixels,
  the uiautomator XML, touch targets and the ground-truth digest. Trees and images are
  cached until the state, the settings or the clock minute change.
- Every input that changes the screen starts a transition of a pseudo-random length in
  ``settle_ms`` (reproducible from ``seed``). Until it ends, ``render()`` returns frames
  fading from the old picture to the new one; it ends lazily, by wall time, with no thread.
  The XML already shows the new state, as ``uiautomator dump`` waits for idle.
- Touches are classified like Android: a press that moves less than the touch slop is a
  tap, or a long press once held for 400 ms; otherwise it is a drag that moves a slider or
  scrolls the list under the finger, and a finished swipe nobody scrolled is offered to
  gesture handlers (swipe up on home for the app drawer, down from the status bar or on
  home for the notification shade).
- Keys: HOME keeps the app's screens (relaunch resumes); BACK hides the keyboard, then
  closes the shade or a dialog, then pops a screen, and at an app's first screen goes
  home; APP_SWITCH opens Overview; volume keys change the media volume; POWER blanks
  the screen. ``force_stop`` forgets an app's screens, ``clear_data`` its data too,
  including the system settings that app owns (Settings: font size, volumes, ...).
- ``ground_truth()`` names the logical screen and hashes what the app shows, for tests and
  benchmarks only; nothing in the pixels or the XML reveals it. The status bar and
  anything that shows the time or date are left out of the hash.
- ``time_source`` (default ``time.monotonic``) drives transitions, toasts and touch
  timing, so tests can move time by hand.
- ``app_versions`` ({package: version}) plays an app update: version 2 of Settings and
  Pharmacy renames an entry, moves another and adds a one-time dialog; 1 is the default.

>>> phone = VirtualPhone(settle_ms=(0, 0))
>>> phone.start("com.android.settings")
>>> phone.ground_truth().split()[0]
'settings/main'
"""

from __future__ import annotations

import copy
import hashlib
import io
import math
import random
import threading
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from PIL import Image

from virtual_phone.apps.base import App, Dialog, Screen, Ui
from virtual_phone.apps.launcher import PACKAGE as LAUNCHER
from virtual_phone.apps.launcher import HomeScreen, RecentsScreen
from virtual_phone.apps.registry import make_apps
from virtual_phone.apps.shade import SHADE_BG, shade
from virtual_phone.apps.system import (
    ADB_IME,
    LATIN_IME,
    SYSTEMUI,
    SystemUi,
    keyboard,
    keyboard_height,
    nav_bar,
    nav_bar_height,
    status_bar,
    status_bar_height,
    toast,
    volume_panel,
)
from virtual_phone.errors import PhoneCommandError, PhoneInputError
from virtual_phone.filesystem import DEFAULT_CAPACITY
from virtual_phone.logs import LogBuffer
from virtual_phone.widgets import (
    Rect,
    TextBuffer,
    View,
    Window,
    hierarchy_xml,
    render_windows,
    state_digest,
    touch_order,
)

SHADE_WINDOW = "NotificationShade"  # what dumpsys names the shade's window
LONG_PRESS_MS = 400  # ViewConfiguration's long-press timeout since Android 12
TOUCH_SLOP_DP = 8
TOAST_SECONDS = 2.0  # Toast.LENGTH_SHORT
VOLUME_PANEL_SECONDS = 3.0
# Transitions advance at this frame rate, as on a phone: a picture that stays put longer
# than a settle check's gap would look settled mid-animation.
TRANSITION_FRAME_S = 1 / 30
MEDIA_VOLUME_MAX = 15

KEYCODES: dict[str, int] = {
    "HOME": 3,
    "BACK": 4,
    "CALL": 5,
    "ENDCALL": 6,
    "STAR": 17,
    "POUND": 18,
    "DPAD_UP": 19,
    "DPAD_DOWN": 20,
    "DPAD_LEFT": 21,
    "DPAD_RIGHT": 22,
    "DPAD_CENTER": 23,
    "VOLUME_UP": 24,
    "VOLUME_DOWN": 25,
    "POWER": 26,
    "CAMERA": 27,
    "CLEAR": 28,
    "COMMA": 55,
    "PERIOD": 56,
    "TAB": 61,
    "SPACE": 62,
    "ENTER": 66,
    "DEL": 67,
    "GRAVE": 68,
    "MINUS": 69,
    "EQUALS": 70,
    "LEFT_BRACKET": 71,
    "RIGHT_BRACKET": 72,
    "BACKSLASH": 73,
    "SEMICOLON": 74,
    "APOSTROPHE": 75,
    "SLASH": 76,
    "AT": 77,
    "PLUS": 81,
    "MENU": 82,
    "SEARCH": 84,
    "ESCAPE": 111,
    "FORWARD_DEL": 112,
    "MOVE_HOME": 122,
    "MOVE_END": 123,
    "VOLUME_MUTE": 164,
    "APP_SWITCH": 187,
    "SLEEP": 223,
    "WAKEUP": 224,
    **{str(d): 7 + d for d in range(10)},
    **{chr(ord("A") + i): 29 + i for i in range(26)},
}
_CHARS: dict[int, str] = {
    **{7 + d: str(d) for d in range(10)},
    **{29 + i: chr(ord("a") + i) for i in range(26)},
    17: "*",
    18: "#",
    55: ",",
    56: ".",
    61: "\t",
    62: " ",
    68: "`",
    69: "-",
    70: "=",
    71: "[",
    72: "]",
    73: "\\",
    74: ";",
    75: "'",
    76: "/",
    77: "@",
    81: "+",
}

_SYSTEM_PACKAGES = (
    "android",
    "com.android.shell",
    "com.android.phone",
    "com.android.providers.settings",
    "com.android.providers.contacts",
    "com.android.providers.telephony",
    "com.android.settings.intelligence",
    "com.android.inputmethod.latin",
    SYSTEMUI,
)


SYSTEM_SERVER = "system_server"
_ALWAYS_RUNNING = ("com.android.phone", SYSTEMUI, LAUNCHER)


def app_uid(package: str) -> int:
    """The Linux user id Android gives an app (u0_aNN is uid 10000 + NN)."""
    return 10000 + zlib.crc32(package.encode()) % 9000


def process_id(name: str) -> int:
    """A stable process id for a package or system process; init is 1."""
    return 1 if name == "init" else 2000 + zlib.crc32(b"pid:" + name.encode()) % 28000


@dataclass(frozen=True, slots=True)
class InstalledPackage:
    """An app installed with `pm install`: known to the package manager, not launchable."""

    package: str
    version_name: str
    version_code: int
    installed: datetime


def default_props(phone: VirtualPhone, seed: int) -> dict[str, str]:
    build_id = "UQ1A.240205.004"
    release = phone.android_version
    incremental = str(seed + 1000)
    product = "elderphone/elderphone_virtual/virtual"
    fingerprint = f"{product}:{release}/{build_id}/{incremental}:user/release-keys"
    return {
        "ro.product.model": phone.model,
        "ro.product.brand": "elderphone",
        "ro.product.manufacturer": "ElderPhone",
        "ro.product.name": "elderphone_virtual",
        "ro.product.device": "virtual",
        "ro.product.board": "virtual",
        "ro.product.cpu.abi": "arm64-v8a",
        "ro.product.cpu.abilist": "arm64-v8a,armeabi-v7a,armeabi",
        "ro.product.locale": "en-US",
        "ro.product.first_api_level": str(phone.sdk),
        "ro.build.version.release": release,
        "ro.build.version.release_or_codename": release,
        "ro.build.version.sdk": str(phone.sdk),
        "ro.build.version.security_patch": "2024-02-05",
        "ro.build.version.incremental": incremental,
        "ro.build.id": build_id,
        "ro.build.display.id": f"{build_id} release-keys",
        "ro.build.type": "user",
        "ro.build.tags": "release-keys",
        "ro.build.characteristics": "default",
        "ro.build.fingerprint": fingerprint,
        "ro.serialno": phone.serial,
        "ro.boot.serialno": phone.serial,
        "ro.hardware": "virtual",
        "ro.sf.lcd_density": str(phone.density),
        "ro.secure": "1",
        "ro.debuggable": "0",
        "ro.adb.secure": "1",
        "ro.crypto.state": "encrypted",
        "ro.opengles.version": "196610",
        "persist.sys.locale": "en-US",
        "persist.sys.timezone": "America/New_York",
        "gsm.operator.alpha": "ElderTel",
        "gsm.sim.state": "LOADED",
        "sys.boot_completed": "1",
        "dev.bootcomplete": "1",
        "init.svc.adbd": "running",
        "service.bootanim.exit": "1",
    }


def default_settings(
    phone: VirtualPhone, seed: int, adb_keyboard: bool
) -> dict[str, dict[str, str]]:
    imes = [LATIN_IME, *([ADB_IME] if adb_keyboard else [])]
    android_id = hashlib.sha1(f"{phone.serial}:{seed}".encode()).hexdigest()[:16]
    return {
        "system": {
            "font_scale": "1.0",
            "screen_brightness": "102",
            "screen_brightness_mode": "0",
            "screen_off_timeout": "30000",
            "volume_music": "8",
            "volume_ring": "5",
            "volume_alarm": "6",
            "volume_voice": "4",
            "vibrate_when_ringing": "0",
            "haptic_feedback_enabled": "1",
            "time_12_24": "12",
            "accelerometer_rotation": "0",
        },
        "secure": {
            "android_id": android_id,
            "default_input_method": LATIN_IME,
            "enabled_input_methods": ":".join(imes),
            "ui_night_mode": "1",
            "location_mode": "3",
            "accessibility_enabled": "0",
            "enabled_accessibility_services": "",
            "font_weight_adjustment": "0",
        },
        "global": {
            "airplane_mode_on": "0",
            "wifi_on": "1",
            "bluetooth_on": "0",
            "mobile_data": "1",
            "low_power": "0",
            "zen_mode": "0",
            "adb_enabled": "1",
            "development_settings_enabled": "1",
            "stay_on_while_plugged_in": "0",
            "window_animation_scale": "1.0",
            "transition_animation_scale": "1.0",
            "animator_duration_scale": "1.0",
            "auto_time": "1",
            "device_name": phone.model,
            "boot_count": "1",
        },
    }


# What a whole-phone snapshot holds: everything a user or a command can change. Screens,
def checked_versions(apps: Mapping[str, App], wanted: Mapping[str, int]) -> dict[str, int]:
    """The app updates to play, each one the app knows (ValueError otherwise)."""
    for package, version in wanted.items():
        app = apps.get(package)
        if app is None:
            raise ValueError(f"no app {package!r} on the phone; known: {', '.join(sorted(apps))}")
        if version not in app.versions:
            known = ", ".join(str(v) for v in app.versions)
            raise ValueError(f"{package} has no version {version}; it has {known}")
    return dict(wanted)


# their text fields and dialogs are copied together, so focus still points into them.
_STATE_FIELDS = (
    "_data",
    "_stacks",
    "_front",
    "_recents",
    "_thumbs",
    "_focus",
    "_focus_owner",
    "_keyboard",
    "_toast",
    "_toast_serial",
    "_volume_until",
    "_screen_on",
    "_shade",
    "_dismissed",
    "_installed",
)


@dataclass(frozen=True, slots=True)
class PhoneState:
    """A copy of a phone's whole state (``VirtualPhone.snapshot``); restore it any number
    of times with ``VirtualPhone.restore``."""

    serial: str
    fields: dict[str, Any]
    settings: dict[str, dict[str, str]]
    props: dict[str, str]
    rng: object


@dataclass(slots=True)
class _Transition:
    start: float
    duration: float
    before: Image.Image


def _transition_frames(t: _Transition) -> int:
    return max(1, math.ceil(t.duration / TRANSITION_FRAME_S))


@dataclass(slots=True)
class _Touch:
    pointer: int
    x0: int
    y0: int
    t0: float
    x: int
    y: int
    dragging: bool = False
    long_fired: bool = False
    seek: View | None = None
    scrollers: list[View] = field(default_factory=list)
    swipers: list[View] = field(default_factory=list)
    scrolled: bool = False


@dataclass(slots=True)
class _Frame:
    """Everything derived from one state: windows, and what was computed from them."""

    key: tuple[Any, ...]
    windows: list[Window]
    dim_below: str | None
    screen_id: str
    app_windows: list[Window]
    image: Image.Image | None = None
    xml: str | None = None


class _Services:
    """The phone as its apps see it (``apps.base.Host``), kept out of the public API.

    Apps call these from event handlers, which run while the phone holds its lock.
    """

    def __init__(self, phone: VirtualPhone) -> None:
        self._phone = phone
        self.width, self.height, self.density = phone.width, phone.height, phone.density
        self.settings = phone.settings

    def __deepcopy__(self, memo: dict[int, Any]) -> _Services:
        return self  # a callback kept in a snapshot still reaches the live phone

    def now(self) -> datetime:
        return self._phone.now()

    def ambient_visit(self) -> int | None:
        return self._phone._ambient_visit()

    def app(self, package: str) -> App:
        return self._phone._app(package)

    def app_data(self, package: str) -> dict[str, Any]:
        return self._phone._app_data(package)

    def launcher_apps(self) -> list[App]:
        return self._phone._launcher_apps()

    def launch(self, package: str) -> None:
        self._phone._launch(package, None)

    def recent_tasks(self) -> list[tuple[App, Image.Image | None]]:
        return self._phone._recent_tasks()

    def clear_recents(self) -> None:
        self._phone._clear_recents()

    def push_screen(self, package: str, screen: Screen) -> None:
        self._phone._push_screen(package, screen)

    def pop_screen(self, package: str) -> None:
        self._phone._pop_screen(package)

    def go_home(self) -> None:
        self._phone._go_home()

    def open_shade(self) -> None:
        self._phone._open_shade()

    def show_toast(self, text: str, package: str) -> None:
        self._phone._show_toast(text, package)

    def focus_field(self, buffer: TextBuffer | None) -> None:
        self._phone._focus_field(buffer)

    def focused(self) -> TextBuffer | None:
        return self._phone._focused()

    def hide_keyboard(self) -> None:
        self._phone._hide_keyboard()

    def show_dialog(self, dialog: Dialog | None) -> None:
        self._phone._show_dialog(dialog)

    def stop_app(self, package: str) -> None:
        self._phone._stop_app(package)

    def clear_app(self, package: str) -> None:
        self._phone._clear_app(package)

    def app_version(self, package: str) -> int:
        return self._phone.app_versions.get(package, 1)


class VirtualPhone:
    """A simulated Android phone; see the module docstring."""

    def __init__(
        self,
        serial: str = "virtual-1",
        *,
        size: tuple[int, int] = (1080, 2400),
        density: int = 440,
        model: str = "ElderPhone Virtual",
        android_version: str = "14",
        sdk: int = 34,
        frozen_clock: datetime | None = None,
        adb_keyboard: bool = True,
        settle_ms: tuple[int, int] = (100, 300),
        seed: int = 0,
        time_source: Callable[[], float] = time.monotonic,
        storage_bytes: int = DEFAULT_CAPACITY,
        app_versions: Mapping[str, int] | None = None,
        ambient_variation: bool = False,
    ) -> None:
        if settle_ms[0] < 0 or settle_ms[1] < settle_ms[0]:
            raise ValueError(
                f"settle_ms must be (low, high) with 0 <= low <= high, not {settle_ms}"
            )
        self._lock = threading.RLock()
        self.serial = serial
        self.width, self.height = size
        self.density = density
        self.model = model
        self.android_version = android_version
        self.sdk = sdk
        self.frozen_clock = frozen_clock
        # Badges, the clock, refreshed lists and predictions change between visits
        # (virtual_phone.apps.ambient); off by default.
        self.ambient_variation = ambient_variation
        self._visits = 0
        self._visited: object = None  # the screen counted last
        self.settle_ms = settle_ms
        self.storage_bytes = storage_bytes  # file data its storage holds (push, redirects)
        self._time = time_source
        self._rng = random.Random(seed)
        self._adb_keyboard = adb_keyboard
        self.props = default_props(self, seed)
        self.settings = default_settings(self, seed, adb_keyboard)
        self._default_settings = copy.deepcopy(self.settings)
        self._services = _Services(self)
        self._systemui = SystemUi()
        self._apps: dict[str, App] = {a.package: a for a in make_apps()}
        self.app_versions = checked_versions(self._apps, app_versions or {})
        self._data: dict[str, dict[str, Any]] = {}
        self._stacks: dict[str, list[Screen]] = {LAUNCHER: [HomeScreen()]}
        self._front = LAUNCHER
        self._recents: list[str] = []
        self._thumbs: dict[str, Image.Image] = {}
        self._focus: TextBuffer | None = None
        self._focus_owner: Screen | None = None
        self._keyboard = False
        self._toast: tuple[int, str, str, float] | None = None  # serial, text, package, expiry
        self._toast_serial = 0
        self._volume_until = 0.0
        self._screen_on = True
        self._shade = False
        self._dismissed: set[str] = set()  # notifications cleared from the shade
        self._version = 0
        self._transition: _Transition | None = None
        self._touch: _Touch | None = None
        self._frame: _Frame | None = None
        self._shown: tuple[tuple[Any, ...], Image.Image] | None = None
        self._png: tuple[tuple[Any, ...], bytes] | None = None
        self._visual_key: tuple[Any, ...] | None = None
        self._frame_counter = 0
        self._installed: dict[str, InstalledPackage] = {}
        self.log = LogBuffer(self.now)
        self.log.write(
            "I", "Zygote", "System server process has started", pid=process_id("zygote64")
        )
        self.log.write("I", "ActivityManager", "System now ready", pid=process_id(SYSTEM_SERVER))

    # ------------------------------------------------------------------ public: output

    def render(self) -> Image.Image:
        """The current screen as an RGB image (a copy; mid-transition frames included)."""
        with self._lock:
            self._refresh()
            return self._displayed()[1].copy()

    def screencap_png(self) -> bytes:
        with self._lock:
            self._refresh()
            key, image = self._displayed()
            if self._png is None or self._png[0] != key:
                buf = io.BytesIO()
                image.save(buf, format="PNG", compress_level=1)
                self._png = (key, buf.getvalue())
            return self._png[1]

    def hierarchy_xml(self) -> str:
        with self._lock:
            self._refresh()
            frame = self._compose()
            if frame.xml is None:
                frame.xml = hierarchy_xml(frame.windows, (self.width, self.height))
            return frame.xml

    def focus(self) -> tuple[str, str]:
        """(package, activity class) of the focused window; the shade is SystemUI's window."""
        with self._lock:
            if self._shade:
                return SYSTEMUI, SHADE_WINDOW
            app, screen = self._top()
            return screen.package or app.package, screen.activity

    def frame_version(self) -> int:
        """A counter that grows whenever the pixels may have changed."""
        with self._lock:
            self._refresh()
            return self._frame_counter

    def ground_truth(self) -> str:
        """``"<screen_id> <digest>"``, for tests and benchmarks only."""
        with self._lock:
            self._refresh()
            frame = self._compose()
            digest = state_digest(frame.app_windows, (self.width, self.height))
            return f"{frame.screen_id} {digest}"

    def now(self) -> datetime:
        """The phone's wall clock: ``frozen_clock`` when set, else the local time; with
        ambient variation a frozen clock moves on a minute per visit."""
        if self.frozen_clock is None:
            return datetime.now()
        if self.ambient_variation:
            return self.frozen_clock + timedelta(minutes=self._visits)
        return self.frozen_clock

    @property
    def screen_on(self) -> bool:
        return self._screen_on

    # ------------------------------------------------------------------ public: input

    def tap(self, x: int, y: int) -> None:
        self._act(lambda: self._press(x, y, long=False))

    def long_press(self, x: int, y: int, duration_ms: int = 600) -> None:
        """A press held in place; it is a long press whatever ``duration_ms`` says."""
        self._act(lambda: self._press(x, y, long=True))

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        """``input swipe``: a drag, or a tap/long press when it stays within the touch slop."""

        def run() -> None:
            if self._within_slop(x1, y1, x2, y2):
                self._press(x1, y1, long=duration_ms >= LONG_PRESS_MS)
                return
            touch = self._begin_drag(x1, y1)
            steps = max(1, min(20, duration_ms // 16))
            for i in range(1, steps + 1):
                self._drag_to(touch, x1 + (x2 - x1) * i // steps, y1 + (y2 - y1) * i // steps)
            self._end_drag(touch)

        self._act(run)

    def touch(self, action: str, x: int, y: int, pointer_id: int = 0) -> None:
        """One raw touch event ("down", "move", "up"), as scrcpy's control channel sends."""
        if action not in ("down", "move", "up"):
            raise PhoneInputError(f"unknown touch action {action!r}: use down, move or up")
        with self._lock:
            self._refresh()
            t = self._touch
            if action == "down":
                if t is None and self._screen_on:
                    self._touch = _Touch(pointer_id, x, y, self._time(), x, y)
                return
            if t is None or t.pointer != pointer_id:
                return
            if action == "move":
                if not t.dragging and not t.long_fired and not self._within_slop(t.x0, t.y0, x, y):
                    t.dragging = True
                    self._aim_drag(t)
                if t.dragging:
                    self._drag_to(t, x, y)
                t.x, t.y = x, y
                return
            self._touch = None
            if t.dragging:
                self._act(lambda: self._end_drag(t))
            elif not t.long_fired:
                held = (self._time() - t.t0) * 1000 >= LONG_PRESS_MS
                self._act(lambda: self._press(t.x0, t.y0, long=held))

    def key(self, keycode: int | str) -> None:
        code = self._keycode(keycode)
        self._act(lambda: self._key(code), wakes=code in (26, 224))

    def input_text(self, text: str) -> None:
        """``input text``: ASCII into the focused field; other characters are not typed."""
        self.commit_text("".join(c for c in text if " " <= c <= "~" or c in "\t\n"))

    def commit_text(self, text: str) -> None:
        """Any Unicode text into the focused field (ADB Keyboard, scrcpy text)."""

        def run() -> None:
            buffer = self._focused()
            if buffer is not None and text:
                buffer.insert(text)
                self._changed()

        self._act(run)

    # ------------------------------------------------------------------ public: apps

    def packages(self) -> list[str]:
        extra = ("com.android.adbkeyboard",) if self._adb_keyboard else ()
        return sorted({*self._apps, *_SYSTEM_PACKAGES, *extra, *self._installed})

    def installed(self, package: str) -> InstalledPackage | None:
        """What `pm install` put on the phone under this name, if anything."""
        with self._lock:
            return self._installed.get(package)

    def install(self, package: InstalledPackage) -> None:
        with self._lock:
            self._installed[package.package] = package
        self.log.write(
            "I",
            "PackageManager",
            f"installPackageLI: {package.package}",
            pid=process_id(SYSTEM_SERVER),
        )

    def uninstall(self, package: str) -> bool:
        """Remove a `pm install`ed package; False for one that came with the phone."""
        with self._lock:
            if self._installed.pop(package, None) is None:
                return False
            self._data.pop(package, None)
        return True

    def running(self) -> list[str]:
        """Packages with a process: the system's, the input method's and every started app."""
        with self._lock:
            started = [p for p, stack in self._stacks.items() if stack]
            ime = self.ime.partition("/")[0]
            return sorted({*_ALWAYS_RUNNING, ime, *started})

    def start(self, package: str, activity: str | None = None) -> None:
        """``am start`` / ``monkey -p``: resume the app, or open its first screen."""
        with self._lock:
            app = self._apps.get(package)
            if app is None or not (app.activity or package == LAUNCHER):
                raise PhoneCommandError(
                    f"Error: Activity not started, unable to resolve Intent for {package}: "
                    "it is not installed or has no launchable activity"
                )
            screens = None
            if activity:
                full = package + activity if activity.startswith(".") else activity
                if full != app.activity:
                    screens = app.activity_stack(full)
                    if screens is None:
                        raise PhoneCommandError(
                            f"Error: Activity class {{{package}/{full}}} does not exist."
                        )
            self._act(lambda: self._launch(package, screens))

    def force_stop(self, package: str) -> None:
        with self._lock:
            self._act(lambda: self._stop_app(package))

    def clear_data(self, package: str) -> None:
        """``pm clear``: stop the app, forget its task, restore its data and settings."""
        with self._lock:
            self._act(lambda: self._clear_app(package))

    def ime_list(self) -> list[str]:
        return [LATIN_IME, *([ADB_IME] if self._adb_keyboard else [])]

    @property
    def ime(self) -> str:
        return self.settings["secure"].get("default_input_method", LATIN_IME)

    @ime.setter
    def ime(self, value: str) -> None:
        if value not in self.ime_list():
            raise PhoneCommandError(f"Unknown input method {value} cannot be selected for user #0")
        with self._lock:
            self.settings["secure"]["default_input_method"] = value

    # ------------------------------------------------------------------ public: snapshots

    def snapshot(self) -> PhoneState:
        """The whole state, as an emulator snapshot keeps it: apps' data and screens, text
        fields, focus, settings, properties, the shade, Overview, the screen's power."""
        with self._lock:
            self._refresh()
            fields = copy.deepcopy({name: getattr(self, name) for name in _STATE_FIELDS})
            return PhoneState(
                self.serial,
                fields,
                copy.deepcopy(self.settings),
                dict(self.props),
                self._rng.getstate(),
            )

    def restore(self, state: PhoneState) -> None:
        """Put the phone back into ``state``; an unfinished touch or transition is dropped."""
        if state.serial != self.serial:
            raise PhoneCommandError(
                f"snapshot of {state.serial} cannot be restored on {self.serial}"
            )
        with self._lock:
            for name, value in copy.deepcopy(state.fields).items():
                setattr(self, name, value)
            for namespace, table in state.settings.items():  # in place: apps hold the dicts
                self.settings.setdefault(namespace, {}).clear()
                self.settings[namespace].update(table)
            self.props.clear()
            self.props.update(state.props)
            self._rng.setstate(state.rng)  # type: ignore[arg-type]
            self._transition = None
            self._touch = None
            self._frame = None
            self._shown = None
            self._png = None
            self._changed()
            self._refresh()

    # ------------------------------------------------------------------ services for the apps

    def _app(self, package: str) -> App:
        return self._apps[package]

    def _app_data(self, package: str) -> dict[str, Any]:
        if package not in self._data:
            self._data[package] = copy.deepcopy(self._apps[package].default_data())
        return self._data[package]

    def _launcher_apps(self) -> list[App]:
        return [a for a in self._apps.values() if a.on_launcher]

    def _recent_tasks(self) -> list[tuple[App, Image.Image | None]]:
        return [(self._apps[p], self._thumbs.get(p)) for p in self._recents]

    def _clear_recents(self) -> None:
        for package in self._recents:
            self._stacks.pop(package, None)
        self._recents.clear()
        self._thumbs.clear()
        self._go_home()

    def _push_screen(self, package: str, screen: Screen) -> None:
        self._shade = False
        if package != self._front:
            self._leave_front()
            self._front = package
        stack = self._stacks.setdefault(package, [self._apps[package].root()])
        stack.append(screen)
        self._opened(screen)

    def _pop_screen(self, package: str) -> None:
        stack = self._stacks.get(package, [])
        if package == LAUNCHER and stack and isinstance(stack[-1], RecentsScreen) and self._recents:
            self._launch(self._recents[0], None)
        elif len(stack) > 1:
            stack.pop()
            self._clear_focus()
            self._changed()
        elif package != LAUNCHER:
            self._go_home()

    def _open_shade(self) -> None:
        self._shade = True
        self._keyboard = False
        self._changed()

    def _close_shade(self) -> None:
        self._shade = False
        self._changed()

    def _status_bar_swiped(self, dx: int, dy: int) -> None:
        if dy > 48 * self.density / 160:
            self._open_shade()

    def _go_home(self) -> None:
        self._shade = False
        self._leave_front()
        self._front = LAUNCHER
        self._stacks[LAUNCHER] = [HomeScreen()]
        self._clear_focus()
        self._changed()

    def _show_toast(self, text: str, package: str) -> None:
        self._toast_serial += 1
        self._toast = (self._toast_serial, text, package, self._time() + TOAST_SECONDS)

    def _focus_field(self, buffer: TextBuffer | None) -> None:
        self._focus = buffer
        self._focus_owner = self._top()[1] if buffer is not None else None
        self._keyboard = buffer is not None and buffer.soft_keyboard
        if buffer is not None:
            buffer.focused()
        self._changed()

    # ------------------------------------------------------------------ internals: state

    def _top(self) -> tuple[App, Screen]:
        stack = self._stacks.get(self._front)
        if not stack:
            self._front = LAUNCHER
            stack = self._stacks.setdefault(LAUNCHER, [HomeScreen()])
        return self._apps[self._front], stack[-1]

    def _changed(self) -> None:
        self._version += 1
        top = self._stacks.get(self._front)
        if top and top[-1] is not self._visited:
            self._visited = top[-1]
            self._visits += 1

    def _ambient_visit(self) -> int | None:
        """How many times a screen came to the front, when ambient variation is on."""
        return self._visits if self.ambient_variation else None

    def _focused(self) -> TextBuffer | None:
        if self._focus is None or self._focus_owner is not self._top()[1]:
            return None
        return self._focus

    def _clear_focus(self) -> None:
        self._focus = None
        self._focus_owner = None
        self._keyboard = False

    def _opened(self, screen: Screen) -> None:
        self._clear_focus()
        buffer = screen.autofocus()
        if buffer is not None:
            self._focus_field(buffer)
        self._changed()

    def _leave_front(self) -> None:
        """The foreground app goes to the back: remember it in Overview with a thumbnail."""
        package = self._front
        if package == LAUNCHER:
            return
        frame = self._compose()
        image = self._settled_image(frame)
        self._thumbs[package] = image.reduce(3)
        if package in self._recents:
            self._recents.remove(package)
        self._recents.insert(0, package)
        self._clear_focus()

    def _launch(self, package: str, screens: list[Screen] | None) -> None:
        self._shade = False
        if package == LAUNCHER:
            self._go_home()
            return
        if package != self._front:
            self._leave_front()
        app = self._apps[package]
        stack = self._stacks.get(package)
        fresh = not stack
        if not stack:
            stack = self._stacks[package] = screens or [app.root()]
            new: Screen | None = stack[-1]
        elif screens:
            stack.extend(screens)
            new = stack[-1]
        else:
            new = None
        self._front = package
        if package in self._recents:
            self._recents.remove(package)
        self._clear_focus()
        if new is not None:
            self._opened(new)
        self._log_start(package, stack[-1].activity, started=fresh)
        self._changed()

    def _log_start(self, package: str, activity: str, *, started: bool) -> None:
        component = f"{package}/{activity}"
        server = process_id(SYSTEM_SERVER)
        self.log.write(
            "I", "ActivityTaskManager", f"START u0 {{cmp={component}}} from uid 2000", pid=server
        )
        if started:
            user = f"u0a{app_uid(package) - 10000}"
            self.log.write(
                "I",
                "ActivityManager",
                f"Start proc {process_id(package)}:{package}/{user} "
                f"for top-activity {{{component}}}",
                pid=server,
            )

    def _stop_app(self, package: str) -> None:
        if package == LAUNCHER:
            return
        if self._stacks.get(package):
            self.log.write(
                "I",
                "ActivityManager",
                f"Force stopping {package} appid={app_uid(package)} user=0: from pid 4242",
                pid=process_id(SYSTEM_SERVER),
            )
        self._stacks.pop(package, None)
        if self._front == package:
            self._front = LAUNCHER
            self._stacks[LAUNCHER] = [HomeScreen()]
            self._clear_focus()
        self._changed()

    def _clear_app(self, package: str) -> None:
        self._stop_app(package)
        self._data.pop(package, None)
        if package in self._recents:
            self._recents.remove(package)
        self._thumbs.pop(package, None)
        app = self._apps.get(package)
        for namespace, key in app.settings_keys if app else ():
            default = self._default_settings[namespace].get(key)
            if default is None:
                self.settings[namespace].pop(key, None)
            else:
                self.settings[namespace][key] = default
        self._changed()

    def _hide_keyboard(self) -> None:
        self._keyboard = False
        self._changed()

    def _show_dialog(self, dialog: Dialog | None) -> None:
        self._top()[1].dialog = dialog
        self._clear_focus()  # the dialog's window takes (or gives back) input focus
        self._changed()

    # ------------------------------------------------------------------ internals: time

    def _refresh(self) -> None:
        """Apply what time has done: expire toasts and transitions, fire held long presses."""
        now = self._time()
        if self._toast is not None and now >= self._toast[3]:
            self._toast = None
        t = self._touch
        if (
            t is not None
            and not t.dragging
            and not t.long_fired
            and (now - t.t0) * 1000 >= LONG_PRESS_MS
        ):
            t.long_fired = True
            self._act(lambda: self._press(t.x0, t.y0, long=True))
        if (
            self._transition is not None
            and now >= self._transition.start + self._transition.duration
        ):
            self._transition = None
        key = self._visual()
        if key != self._visual_key:
            self._visual_key = key
            self._frame_counter += 1

    def _act(self, change: Callable[[], None], *, wakes: bool = False) -> None:
        """Run an input; if it changed the screen, start a settle transition."""
        with self._lock:
            self._refresh()
            low, high = self.settle_ms
            delay_ms = self._rng.randint(low, high) if high else 0
            if not self._screen_on and not wakes:
                return
            before_version = self._version
            before = self._displayed()[1] if delay_ms and self._screen_on else None
            change()
            if self._version != before_version and before is not None and self._screen_on:
                self._transition = _Transition(self._time(), delay_ms / 1000, before)
            self._refresh()

    def _tree_key(self) -> tuple[Any, ...]:
        now = self.now()
        toast_id = self._toast[0] if self._toast else 0
        volume = self._time() < self._volume_until
        return (
            self._version,
            (now.year, now.month, now.day, now.hour, now.minute),
            toast_id,
            volume,
            tuple(tuple(sorted(ns.items())) for ns in self.settings.values()),
        )

    def _visual(self) -> tuple[Any, ...]:
        step = None
        if self._transition is not None:
            elapsed = self._time() - self._transition.start
            step = min(_transition_frames(self._transition) - 1, int(elapsed / TRANSITION_FRAME_S))
        return (self._tree_key(), step, self._screen_on)

    # ------------------------------------------------------------------ internals: drawing

    def _ui(self, app: App, package: str, keyboard_px: int = 0) -> Ui:
        probe = Ui(self._services, app, Rect(0, 0, self.width, self.height), package)
        top = status_bar_height(probe)
        bottom = self.height - nav_bar_height(probe) - keyboard_px
        return Ui(self._services, app, Rect(0, top, self.width, bottom), package)

    def _compose(self) -> _Frame:
        key = self._tree_key()
        if self._frame is not None and self._frame.key == key:
            return self._frame
        app, screen = self._top()
        sys_ui = self._ui(self._systemui, SYSTEMUI)
        focused = None if self._shade else self._focused()
        show_keyboard = focused is not None and self._keyboard
        kb_px = keyboard_height(sys_ui, self.ime) if show_keyboard else 0
        if self._shade:
            background = SHADE_BG
            content = shade(sys_ui, close=self._close_shade, dismissed=self._dismissed)
            windows = [Window("notification_shade", SYSTEMUI, content)]
            screen_id, dim_below = "systemui/shade", None
        else:
            background = screen.background()
            windows, screen_id, dim_below = self._app_windows(app, screen, kb_px)
        app_windows = list(windows)
        if self._toast is not None:
            windows.append(
                Window("toast", self._toast[2], toast(sys_ui, self._toast[1]), touchable=False)
            )
        if show_keyboard and focused is not None:
            ime_package, ime_root = keyboard(
                sys_ui, self.ime, type_text=focused.insert, delete=focused.delete, enter=self._enter
            )
            windows.append(Window("ime", ime_package, ime_root))
        if self._time() < self._volume_until:
            level = int(self.settings["system"].get("volume_music", "8"))
            windows.append(
                Window("volume", SYSTEMUI, volume_panel(sys_ui, level, MEDIA_VOLUME_MAX))
            )
        glob = self.settings["global"]
        airplane = glob.get("airplane_mode_on") == "1"
        bar = status_bar(
            sys_ui,
            self.now(),
            background,
            wifi=glob.get("wifi_on") == "1" and not airplane,
            airplane=airplane,
        )
        bar.on_swipe = self._status_bar_swiped
        windows.append(Window("status_bar", SYSTEMUI, bar))
        windows.append(
            Window(
                "navigation_bar",
                SYSTEMUI,
                nav_bar(
                    sys_ui,
                    background,
                    back=lambda: self._key(4),
                    home=lambda: self._key(3),
                    recents=lambda: self._key(187),
                ),
            )
        )
        self._frame = _Frame(key, windows, dim_below, screen_id, app_windows)
        return self._frame

    def _app_windows(
        self, app: App, screen: Screen, keyboard_px: int
    ) -> tuple[list[Window], str, str | None]:
        """The foreground screen's window and its dialog: (windows, screen id, dimmed window)."""
        package = screen.package or app.package
        ui = self._ui(app, package, keyboard_px)
        content = screen.build(ui)
        window = Rect(0, 0, self.width, ui.content.bottom + keyboard_px)
        root = View(window, cls="android.widget.FrameLayout", bg=screen.background())
        backdrop = screen.backdrop(ui)
        if backdrop is not None:
            root.add(backdrop)
        decor = View(window, cls="android.widget.LinearLayout")
        decor.add(
            View(
                ui.content,
                cls="android.widget.FrameLayout",
                rid="android:id/content",
                children=[content],
            )
        )
        root.add(decor)
        windows = [Window("app", package, root)]
        if screen.dialog is None:
            return windows, screen.screen_id, None
        windows.append(Window("dialog", package, screen.dialog.build(ui)))
        dim = "dialog" if screen.dialog.dim else None
        return windows, f"{screen.screen_id}/{screen.dialog.dialog_id}", dim

    def _settled_image(self, frame: _Frame) -> Image.Image:
        if frame.image is None:
            frame.image = render_windows(frame.windows, (self.width, self.height), frame.dim_below)
        return frame.image

    def _displayed(self) -> tuple[tuple[Any, ...], Image.Image]:
        """(visual key, image) of what the screen shows now."""
        key = self._visual()
        if self._shown is not None and self._shown[0] == key:
            return self._shown
        if not self._screen_on:
            image = Image.new("RGB", (self.width, self.height), (0, 0, 0))
        else:
            image = self._settled_image(self._compose())
            t = self._transition
            if t is not None and key[1] is not None:
                progress = (key[1] + 1) / (_transition_frames(t) + 1)
                image = Image.blend(t.before, image, progress)
        self._shown = (key, image)
        return self._shown

    # ------------------------------------------------------------------ internals: input

    def _within_slop(self, x1: int, y1: int, x2: int, y2: int) -> bool:
        slop = TOUCH_SLOP_DP * self.density / 160
        return (x2 - x1) ** 2 + (y2 - y1) ** 2 <= slop * slop

    def _targets(self, x: int, y: int) -> list[View] | None:
        """The views under a touch in the top-most window that takes it; None if a modal
        dialog's outside was touched."""
        frame = self._compose()
        for w in reversed(frame.windows):
            if not w.touchable:
                continue
            path = touch_order(w.root, x, y)
            if w.name == "dialog" and not path:
                return None
            if path:
                return path
        return []

    def _press(self, x: int, y: int, *, long: bool) -> None:
        path = self._targets(x, y)
        if path is None:
            _app, screen = self._top()
            if screen.dialog is not None and screen.dialog.cancelable:
                self._show_dialog(None)
            return
        for v in path:  # the first view that handles touches consumes this one
            if v.on_seek is not None:
                if v.enabled:
                    v.on_seek(self._seek_fraction(v, x))
                    self._changed()
                return
            if v.clickable or v.long_clickable:
                if not v.enabled:
                    return
                if long and v.long_clickable and v.on_long_click is not None:
                    v.on_long_click()
                elif v.clickable and v.on_click is not None:
                    v.on_click()  # a long press on a view without one is a click
                else:
                    return
                self._changed()
                return

    @staticmethod
    def _seek_fraction(v: View, x: int) -> float:
        thumb = max(8, v.rect.height // 4)
        left, right = v.rect.left + thumb + v.pad, v.rect.right - thumb - v.pad
        return max(0.0, min(1.0, (x - left) / max(1, right - left)))

    def _begin_drag(self, x: int, y: int) -> _Touch:
        touch = _Touch(0, x, y, self._time(), x, y, dragging=True)
        self._aim_drag(touch)
        return touch

    def _aim_drag(self, touch: _Touch) -> None:
        path = self._targets(touch.x0, touch.y0) or []
        touch.seek = next((v for v in path if v.on_seek is not None and v.enabled), None)
        touch.scrollers = [v for v in path if v.on_scroll is not None]
        touch.swipers = [v for v in path if v.on_swipe is not None]

    def _drag_to(self, touch: _Touch, x: int, y: int) -> None:
        if touch.seek is not None:
            touch.seek.on_seek(self._seek_fraction(touch.seek, x))  # type: ignore[misc]
            self._changed()
        else:
            for v in touch.scrollers:
                if v.on_scroll is not None and v.on_scroll(touch.y - y):
                    touch.scrolled = True
                    self._changed()
                    break
        touch.x, touch.y = x, y

    def _end_drag(self, touch: _Touch) -> None:
        if touch.seek is None and not touch.scrolled:
            for v in touch.swipers:
                if v.on_swipe is not None:
                    v.on_swipe(touch.x - touch.x0, touch.y - touch.y0)
                    self._changed()
                    break

    @staticmethod
    def _keycode(keycode: int | str) -> int:
        if isinstance(keycode, int):
            return keycode
        name = keycode.strip().upper()
        if name.isdigit():
            return int(name)
        name = name.removeprefix("KEYCODE_")
        if name not in KEYCODES:
            raise PhoneInputError(f"unknown key code {keycode!r}: use a number or a KEYCODE_ name")
        return KEYCODES[name]

    def _key(self, code: int) -> None:
        handler = self._KEY_HANDLERS.get(code)
        if handler is not None:
            handler(self)
        elif code in _CHARS:
            buffer = self._focused()
            if buffer is not None:
                buffer.insert(_CHARS[code])
                self._changed()

    def _back(self) -> None:
        app, screen = self._top()
        if self._shade:
            self._shade = False
        elif self._keyboard and self._focused() is not None:
            self._keyboard = False
        elif screen.dialog is not None:
            if screen.dialog.cancelable:
                self._show_dialog(None)
        else:
            self._pop_screen(self._front)
        self._changed()

    def _home(self) -> None:
        self._go_home()

    def _app_switch(self) -> None:
        self._shade = False
        _app, screen = self._top()
        if isinstance(screen, RecentsScreen):
            if self._recents:
                self._launch(self._recents[0], None)
            return
        self._leave_front()
        self._front = LAUNCHER
        self._stacks[LAUNCHER] = [HomeScreen(), RecentsScreen()]
        self._clear_focus()
        self._changed()

    def _enter(self) -> None:
        buffer = self._focused()
        if buffer is not None and buffer.on_submit is not None:
            buffer.on_submit()
            self._changed()

    def _delete(self) -> None:
        buffer = self._focused()
        if buffer is not None:
            buffer.delete()
            self._changed()

    def _volume(self, step: int) -> None:
        level = int(self.settings["system"].get("volume_music", "8"))
        self.settings["system"]["volume_music"] = str(max(0, min(MEDIA_VOLUME_MAX, level + step)))
        self._volume_until = self._time() + VOLUME_PANEL_SECONDS
        self._changed()

    def _power(self, on: bool | None) -> None:
        self._screen_on = (not self._screen_on) if on is None else on
        self._touch = None
        self._clear_focus()
        self._changed()

    _KEY_HANDLERS: dict[int, Callable[[VirtualPhone], None]] = {
        3: _home,
        4: _back,
        66: _enter,
        67: _delete,
        187: _app_switch,
        24: lambda self: self._volume(+1),
        25: lambda self: self._volume(-1),
        26: lambda self: self._power(None),
        223: lambda self: self._power(False),
        224: lambda self: self._power(True),
    }
