"""Android devices over adbutils: the same code drives real phones and the virtual phone.

The virtual phone stands in for a real one here; with a phone on USB, ``adb_client()``
finds the local adb server.

>>> from graph_builder.model import NORMALIZED_SCREEN, Action
>>> from virtual_phone import running_server
>>> with running_server() as server:
...     client = adb_client(port=server.port)
...     device = AndroidDevice(list_devices(client)[0].serial, client=client)
...     screen = device.observe()
...     device.perform(Action.tap(500, 500, screen=NORMALIZED_SCREEN))
...     settled = device.wait_until_settled()
>>> screen.size, screen.activity, settled
((1080, 2400), 'com.android.launcher3/.uioverrides.QuickstepLauncher', True)

Every call has a timeout and raises a ``devices.errors.DeviceError`` subclass; nothing
here ever starts an adb server (adbutils would otherwise run ``adb start-server`` by
itself whenever a connection is refused).
"""

from __future__ import annotations

import logging
import re
import shlex
import struct
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self

import adbutils
from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout

from devices.address import LOCAL_HOST, LOCAL_PORT, local_server_port
from devices.clock import SYSTEM_CLOCK, DeviceClock
from devices.device import PackageVersion
from devices.errors import (
    AdbUnavailableError,
    DeviceCommandError,
    DeviceDisconnectedError,
    DeviceError,
    DeviceTimeoutError,
    HierarchyBackendError,
    HierarchyDumpError,
    InputError,
)
from devices.file_pull import pull_file
from devices.hierarchy import AUTO, DEFAULT_HIERARCHY, U2, UIAUTOMATOR, check_hierarchy
from devices.settle import screens_match, wait_until_stable
from devices.text_input import type_text
from graph_builder.model import PACKAGE_NAME, Action, ActionType, DeviceInfo, ResetRecipe, Size
from graph_builder.screen import Screen

if TYPE_CHECKING:
    from devices.health import Health
    from devices.u2 import Beside, U2Server

log = logging.getLogger(__name__)

DEFAULT_HOST = LOCAL_HOST
DEFAULT_PORT = LOCAL_PORT
DEFAULT_TIMEOUT = 10.0
# adbutils passes "ten minutes" when its caller gave no timeout; we read that as "unset".
_ADBUTILS_DEFAULT_TIMEOUT = 600

DUMP_PATH = "/data/local/tmp/elderbench_window_dump.xml"
# Real phones fail `uiautomator dump` on animated screens ("could not get idle state");
# a second try, and one without unimportant views, usually gets through.
DUMP_ATTEMPTS: tuple[tuple[str, ...], ...] = ((), ("--compressed",), ())
DUMP_RETRY_DELAY = 0.3
# The uiautomator2 server's dump: the whole window tree, 50 levels deep (the client's default).
U2_DUMP_PARAMS = [False, 50]
OBSERVE_ATTEMPTS = 3
# A settled screenshot younger than this may open the next observation (saves a capture).
RECENT_SCREENSHOT_MAX_AGE = 1.0
KEYCODE_HOME = 3
KEYCODE_BACK = 4
DEFAULT_LONG_PRESS_MS = 800
DEFAULT_SWIPE_MS = 300
DEFAULT_WAIT_MS = 1000
# A wait action sleeps at most this long, and a press or swipe lasts at most this long, so
# that no action can hold a device call open past its timeout (callers may lower both).
MAX_WAIT_MS = 10_000
MAX_GESTURE_MS = 5_000

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_END = b"IEND\xaeB`\x82"
_FOCUS_QUERY = "dumpsys window windows | grep -E 'mCurrentFocus|mFocusedApp'"
_COMPONENT = re.compile(r"([A-Za-z0-9_.]+)/([A-Za-z0-9_.$]+)")
_XML_START = re.compile(r"<\?xml|<hierarchy")
_XML_END = "</hierarchy>"
_START_HELP = (
    "Start it with `adb start-server` (real phones) or `elderbench phone` (the virtual "
    "phone), or set ANDROID_ADB_SERVER_PORT to the port it listens on."
)


# --------------------------------------------------------------------------- adb client


class _DirectConnection(adbutils.AdbConnection):
    """An adb connection that fails when nothing listens, instead of starting a server."""

    def _safe_connect(self) -> Any:
        return self._create_socket()

    def close(self) -> None:
        # adbutils sleeps 10 ms after a half-close on every connection; each reply has been
        # read in full by now, so closing the socket first skips that (its shutdown fails).
        if not self.closed:
            self.conn.close()
        super().close()


class _SafeClient(adbutils.AdbClient):
    """An AdbClient whose connections never start an adb server and always time out."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        super().__init__(host=host, port=port, socket_timeout=timeout)
        self.timeout = timeout
        self._version: int | None = None

    def server_version(self) -> int:
        # adbutils asks before every device call (to choose host:tport); it cannot change
        # while the server runs, and a new server is a new client.
        if self._version is None:
            self._version = super().server_version()
        return self._version

    def make_connection(self, timeout: float | None = None) -> adbutils.AdbConnection:
        if timeout is None or timeout == _ADBUTILS_DEFAULT_TIMEOUT:
            timeout = self.timeout
        conn = _DirectConnection(self.host, self.port)
        conn.conn.settimeout(timeout)
        return conn


def adb_client(
    host: str = DEFAULT_HOST, port: int | None = None, *, timeout: float = DEFAULT_TIMEOUT
) -> adbutils.AdbClient:
    """A client for the adb server at ``host:port`` that is known to be answering.

    ``port`` defaults to ANDROID_ADB_SERVER_PORT, else 5037. Raises AdbUnavailableError
    when no server answers; it never starts one.
    """
    client = _SafeClient(host, port or local_server_port(), timeout)
    try:
        client.server_version()
    except (AdbError, OSError) as exc:
        raise AdbUnavailableError(
            f"No adb server answers at {client.host}:{client.port}. {_START_HELP}"
        ) from exc
    return client


def _safe(client: adbutils.AdbClient | None, timeout: float) -> _SafeClient:
    if client is None:
        client = adb_client(timeout=timeout)
    if isinstance(client, _SafeClient) and client.timeout == timeout:
        return client
    return _SafeClient(client.host, client.port, timeout)


@contextmanager
def _adb_errors(
    what: str, serial: str, client: _SafeClient, timeout: float | None = None
) -> Iterator[None]:
    """Turn adbutils' and the socket layer's exceptions into DeviceError subclasses.

    ``timeout`` is the limit the call was given (the client's when None), so that a
    timeout message names the limit that actually ran out."""
    try:
        yield
    except DeviceError:
        raise
    except AdbConnectionError as exc:
        raise AdbUnavailableError(
            f"Lost the adb server at {client.host}:{client.port} while {what} on {serial}. "
            + _START_HELP
        ) from exc
    except (AdbTimeout, TimeoutError) as exc:
        limit = round(timeout or client.timeout, 2)
        raise DeviceTimeoutError(
            f"{serial} did not answer within {limit:g} s while {what}. "
            "Check the cable or network, and that the phone is unlocked and not frozen."
        ) from exc
    except AdbError as exc:
        raise DeviceDisconnectedError(
            f"adb refused {what} on {serial}: {exc}. Check that the device is still connected "
            "(`adb devices`) and authorized."
        ) from exc
    except (EOFError, OSError) as exc:
        raise DeviceDisconnectedError(
            f"The connection to {serial} broke while {what} ({exc or type(exc).__name__}). "
            "Reconnect the device and try again."
        ) from exc


# --------------------------------------------------------------------------- listing


@dataclass(frozen=True, slots=True)
class DeviceSummary:
    """One line of the device list. Details are empty when the device is not usable yet."""

    serial: str
    state: str
    model: str = ""
    android_version: str = ""
    size: Size | None = None

    @property
    def ready(self) -> bool:
        return self.state == "device"


_INFO_QUERY = "getprop ro.product.model; getprop ro.build.version.release; wm size; wm density"


def _parse_info(serial: str, output: str) -> DeviceInfo:
    lines = output.splitlines()
    model = lines[0].strip() if lines else ""
    version = lines[1].strip() if len(lines) > 1 else ""

    def wm(what: str, pattern: str) -> list[int]:
        found = re.search(rf"Override {what}: {pattern}", output) or re.search(
            rf"Physical {what}: {pattern}", output
        )
        return [int(g) for g in found.groups()] if found else []

    size = wm("size", r"(\d+)x(\d+)") or [0, 0]
    density = wm("density", r"(\d+)") or [0]
    return DeviceInfo(serial, model, version, size[0], size[1], density[0])


def parse_package_version(package: str, output: str) -> PackageVersion | None:
    """versionName and versionCode of ``package`` in `dumpsys package` output (None: the
    output has no section for it)."""
    start = output.find(f"Package [{package}]")
    if start < 0:
        return None
    section = output[start:]
    following = section.find("Package [", 1)
    section = section if following < 0 else section[:following]
    code = re.search(r"versionCode=(\d+)", section)
    name = re.search(r"versionName=(\S*)", section)
    if code is None:
        return None
    return PackageVersion(name.group(1) if name else "", int(code.group(1)))


def list_devices(client: adbutils.AdbClient | None = None) -> list[DeviceSummary]:
    """Every device the adb server knows, with model, Android version and screen size."""
    safe = _safe(client, DEFAULT_TIMEOUT)
    with _adb_errors("listing devices", "the adb server", safe):
        entries = safe.list()
    summaries = []
    for entry in entries:
        summary = DeviceSummary(entry.serial, entry.state)
        if summary.ready:
            try:
                with _adb_errors("reading its properties", entry.serial, safe):
                    output = safe.device(entry.serial).shell(_INFO_QUERY, timeout=safe.timeout)
            except DeviceError:
                output = ""  # listed but not answering: show it without details
            info = _parse_info(entry.serial, output)
            size = (info.width, info.height) if info.width and info.height else None
            summary = replace(
                summary, model=info.model, android_version=info.android_version, size=size
            )
        summaries.append(summary)
    return summaries


# --------------------------------------------------------------------------- capture


def png_size(png: bytes) -> Size:
    """Width and height from a PNG's header, without decoding it."""
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def is_complete_png(data: bytes) -> bool:
    return data.startswith(_PNG_SIGNATURE) and len(data) > 33 and _PNG_END in data[-32:]


def parse_focus(text: str) -> str | None:
    """The focused activity (``pkg/.Activity``) from `dumpsys window` lines, if any.

    The focused window wins; when it is not an activity (a popup, the status bar, an ANR
    dialog) the focused app's activity is used.
    """
    for key in ("mCurrentFocus=", "mFocusedApp="):
        for line in text.splitlines():
            _, found, rest = line.partition(key)
            if found and (match := _COMPONENT.search(rest)):
                return match.group(0)
    return None


def _split_dump(output: str) -> tuple[str | None, str | None, str]:
    """(activity, xml or None, problem) from the combined focus-and-dump output."""
    start = _XML_START.search(output)
    head = output[: start.start()] if start else output
    activity = parse_focus(head)
    if start is None:
        said = " ".join(
            line.strip()
            for line in head.splitlines()
            if line.strip() and "mCurrentFocus" not in line and "mFocusedApp" not in line
        )
        return activity, None, said or "no XML in its output"
    end = output.rfind(_XML_END)
    if end < start.start():
        return activity, None, "the XML was cut short"
    return activity, output[start.start() : end + len(_XML_END)], ""


# --------------------------------------------------------------------------- the device


class AndroidDevice:
    """One Android device (real or virtual) behind an adb server.

    ``timeout`` bounds every adb call; a hierarchy dump or an app launch may take up to
    three times that, because real phones are slow at both (for a dump that is the whole
    call: retries, the uiautomator2 server's start and a fallback included). ``clock`` is
    where it reads the time and waits (``devices.clock``). ``hierarchy`` chooses the dump
    tool (``devices.hierarchy``: uiautomator, u2 or auto).
    """

    # How long a real phone needs to bind a freshly selected keyboard to the focused field.
    ime_switch_delay: ClassVar[float] = 0.3

    def __init__(
        self,
        serial: str,
        *,
        client: adbutils.AdbClient | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        clock: DeviceClock = SYSTEM_CLOCK,
        hierarchy: str = DEFAULT_HIERARCHY,
    ) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self.serial = serial
        self.timeout = timeout
        self.clock = clock
        self.hierarchy = check_hierarchy(hierarchy)
        # Why ``auto`` dumps with uiautomator in this session (empty: it has not fallen back).
        self.hierarchy_note = ""
        self._u2: U2Server | None = None
        self._client = _safe(client, timeout)
        self._adb = self._client.device(serial)
        self._screen: Size | None = None
        self._recent: tuple[bytes, float, float] | None = None  # png, wall time, monotonic
        with self._errors("checking its state"):
            state = self._adb.get_state()
        if state != "device":
            raise DeviceDisconnectedError(
                f"{serial} is '{state}', not ready. Unlock the phone and accept the USB "
                "debugging prompt, then try again."
            )

    def __repr__(self) -> str:
        return f"AndroidDevice({self.serial!r} via {self._client.host}:{self._client.port})"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Forget cached state and stop the uiautomator2 server this device started."""
        self._recent = None
        self._screen = None
        if self._u2 is not None:
            self._u2.close()
            self._u2 = None

    @property
    def adb(self) -> adbutils.AdbDevice:
        """The underlying adbutils device (its connections never start an adb server)."""
        return self._adb

    @property
    def address(self) -> tuple[str, int]:
        """Host and port of the adb server this device is reached through."""
        return self._client.host, self._client.port

    def _errors(self, what: str, timeout: float | None = None) -> Any:
        return _adb_errors(what, self.serial, self._client, timeout)

    # -- shell

    def _exec(self, command: str, *, timeout: float | None = None) -> tuple[int, bytes, bytes]:
        """Run ``command``; returns (exit status, stdout, stderr). Output is never truncated
        silently: a connection that closes early raises DeviceDisconnectedError."""
        shown = command if len(command) <= 60 else command[:57] + "..."
        limit = timeout or self.timeout
        with self._errors(f"running `{shown}`", limit):
            result = self._adb.shell2(command, timeout=limit, encoding=None, v2=True)
        # shell v2 separates the streams; the v1 fallback (old devices) only fills `output`.
        stdout = result.stdout if (result.stdout or result.stderr) else result.output
        return result.returncode, stdout, result.stderr

    def shell(self, command: str, *, timeout: float | None = None, check: bool = True) -> str:
        """Run a shell command on the device and return its standard output.

        With ``check``, a non-zero exit status raises DeviceCommandError with stderr.
        """
        status, out, err = self._exec(command, timeout=timeout)
        if check and status != 0:
            said = (err or out).decode("utf-8", "replace").strip() or "no message"
            raise DeviceCommandError(
                f"`{command}` failed on {self.serial} (exit status {status}): {said}"
            )
        return out.decode("utf-8", "replace")

    def pull(self, remote: str, out: Path, *, timeout: float | None = None) -> int:
        """Copy the phone's file ``remote`` to ``out`` (atomically), all of it within
        ``timeout`` seconds (the device's timeout when None); its size in bytes."""
        return pull_file(self.address, self.serial, remote, out, seconds=timeout or self.timeout)

    # -- observing

    def screenshot(self) -> bytes:
        """The screen as PNG bytes, exactly as the device encoded them."""
        status, out, err = self._exec("screencap -p")
        return self._checked_png(out, status, err)

    def _checked_png(self, out: bytes, status: int, err: bytes) -> bytes:
        if not is_complete_png(out):
            said = err.decode("utf-8", "replace").strip()
            raise DeviceCommandError(
                f"`screencap -p` on {self.serial} returned no complete PNG ({len(out)} bytes, "
                f"exit status {status}{': ' + said if said else ''}). Wake and unlock the phone; "
                "screens of some apps (banking, DRM video) cannot be captured."
            )
        self._screen = png_size(out)
        return out

    def screen_size(self) -> Size:
        """The current screen size in pixels, in the current orientation (cached)."""
        if self._screen is None:
            self.screenshot()
        assert self._screen is not None
        return self._screen

    @property
    def hierarchy_in_use(self) -> str:
        """The tool the next dump uses: ``u2`` or ``uiautomator`` (``auto`` resolved)."""
        if self.hierarchy == AUTO:
            return UIAUTOMATOR if self.hierarchy_note else U2
        return self.hierarchy

    def dump_hierarchy(self) -> tuple[str, str | None]:
        """(uiautomator XML, focused activity) from the chosen tool, retrying failed dumps.

        The whole call ends within three times the timeout. Raises HierarchyDumpError
        (HierarchyBackendError when the uiautomator2 server cannot start or answer).
        """
        deadline = time.monotonic() + self.timeout * 3
        focus: list[bytes] = []

        def ask_focus() -> None:  # while the server dumps
            focus.append(self._exec(_FOCUS_QUERY, timeout=self._left(deadline))[1])

        xml = self._u2_dump(deadline, beside=ask_focus)
        if xml is None:
            return self._dump_uiautomator(deadline)
        if not focus:
            ask_focus()
        return xml, parse_focus(focus[0].decode("utf-8", "replace"))

    def _dump_then_screenshot(self) -> tuple[str, str | None, bytes, float]:
        """(XML, activity, a screenshot taken right after the dump, its wall time). With
        the uiautomator2 server the activity is asked in the screenshot's own shell call,
        which saves a round trip per observation."""
        deadline = time.monotonic() + self.timeout * 3
        xml = self._u2_dump(deadline)
        if xml is None:
            xml, activity = self._dump_uiautomator(deadline)
            after_time = self.clock.wall()
            return xml, activity, self.screenshot(), after_time
        after_time = self.clock.wall()
        status, out, err = self._exec(f"{_FOCUS_QUERY}; screencap -p")
        start = out.find(_PNG_SIGNATURE)
        head, png = (out[:start], out[start:]) if start >= 0 else (out, b"")
        activity = parse_focus(head.decode("utf-8", "replace"))
        return xml, activity, self._checked_png(png, status, err), after_time

    def _dump_uiautomator(self, deadline: float) -> tuple[str, str | None]:
        problems: list[str] = []
        for attempt, flags in enumerate(DUMP_ATTEMPTS):
            if attempt:
                if deadline - time.monotonic() <= DUMP_RETRY_DELAY:
                    break
                self.clock.sleep(DUMP_RETRY_DELAY)
            dump = shlex.join(["uiautomator", "dump", *flags, DUMP_PATH])
            command = f"{_FOCUS_QUERY}; rm -f {DUMP_PATH}; {dump} && cat {DUMP_PATH}"
            _, out, err = self._exec(command, timeout=self._left(deadline))
            activity, xml, problem = _split_dump(out.decode("utf-8", "replace"))
            if xml is not None:
                return xml, activity
            said = err.decode("utf-8", "replace").strip()
            problems.append(f"{problem}{' / ' + said if said else ''}")
        raise HierarchyDumpError(
            f"`uiautomator dump` failed {len(problems)} times on {self.serial} "
            f"(last answer: {problems[-1]}). The screen may be animating (video, progress "
            "bar): let it come to rest, or turn off animations in Developer options, and retry; "
            "or read the screen through the uiautomator2 server instead (--hierarchy u2 or "
            "auto), which does not wait for an idle screen."
        )

    def _left(self, deadline: float) -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise DeviceTimeoutError(
                f"{self.serial} did not finish a hierarchy dump within {self.timeout * 3:g} s. "
                "Check the cable or network, and that the phone is unlocked and not frozen."
            )
        return left

    def _u2_dump(self, deadline: float, beside: Beside | None = None) -> str | None:
        """The XML from the uiautomator2 server; None when uiautomator dump is to be used
        (chosen, or ``auto`` falling back, now or earlier in the session)."""
        if self.hierarchy_in_use != U2:
            return None
        if self.hierarchy == U2:
            return self._u2_xml(deadline, beside)
        try:  # auto: u2 gets a third of the call, so that the fallback has time to run
            return self._u2_xml(min(deadline, time.monotonic() + self.timeout), beside)
        except (HierarchyBackendError, DeviceTimeoutError) as exc:
            self.hierarchy_note = (
                f"the uiautomator2 server failed ({exc}); using `uiautomator dump` instead"
            )
            log.warning("%s: %s", self.serial, self.hierarchy_note)
            if self._u2 is not None:
                self._u2.close()
                self._u2 = None
            return None

    def _u2_xml(self, deadline: float, beside: Beside | None = None) -> str:
        from devices.u2 import U2Server

        if self._u2 is None:
            self._u2 = U2Server(self._adb)
        problem = ""
        for attempt in range(len(DUMP_ATTEMPTS)):
            if attempt:
                self.clock.sleep(DUMP_RETRY_DELAY)
            with self._errors("dumping the hierarchy with the uiautomator2 server"):
                text = self._u2.call(
                    "dumpWindowHierarchy", U2_DUMP_PARAMS, deadline=deadline, beside=beside
                )
                beside = None
            _, xml, problem = _split_dump(str(text or ""))
            if xml is not None and "<node" in xml:
                return xml
            problem = problem if xml is None else "an empty hierarchy"
            if deadline - time.monotonic() <= DUMP_RETRY_DELAY:
                break
        raise HierarchyBackendError(
            f"the uiautomator2 server on {self.serial} gave no hierarchy ({problem})."
        )

    def _remember(self, png: bytes, wall_time: float) -> None:
        self._recent = (png, wall_time, self.clock.monotonic())

    def _opening_screenshot(self) -> tuple[bytes, float]:
        """A fresh screenshot, reusing the one that ended the last settle when it is recent."""
        if self._recent is not None:
            png, wall_time, taken = self._recent
            self._recent = None
            if self.clock.monotonic() - taken <= RECENT_SCREENSHOT_MAX_AGE:
                return png, wall_time
        wall_time = self.clock.wall()
        return self.screenshot(), wall_time

    def observe(self) -> Screen:
        """Screenshot, hierarchy and activity, taken back to back.

        A second screenshot after the dump checks that the screen did not change in
        between; if it did, the capture is retried (up to OBSERVE_ATTEMPTS) and the last
        one is returned with ``stable=False``.
        """
        screen: Screen | None = None
        for _ in range(OBSERVE_ATTEMPTS):
            before, taken_at = self._opening_screenshot()
            xml, activity, after, after_time = self._dump_then_screenshot()
            screen = Screen(
                png_size(before), png=before, hierarchy_xml=xml, activity=activity, time=taken_at
            )
            if screens_match(before, after):
                return screen
            self._remember(after, after_time)
        assert screen is not None
        screen.stable = False
        return screen

    def wait_until_settled(self, timeout: float = 3.0) -> bool:
        """True once two consecutive screenshots match; False when ``timeout`` runs out."""
        clock = self.clock
        result = wait_until_stable(
            self.screenshot, timeout, clock=clock.monotonic, sleep=clock.sleep, wall=clock.wall
        )
        if result.settled:
            self._remember(result.screenshot, result.taken_at)
        return result.settled

    # -- acting

    def perform(self, action: Action) -> None:
        """Carry out one action. Coordinates may be in any space (``action.screen``)."""
        if action.type is not ActionType.DONE:
            self._recent = None
        self._PERFORMERS[action.type](self, action)

    def _point(self, x: float | None, y: float | None) -> tuple[int, int]:
        assert x is not None and y is not None
        width, height = self.screen_size()
        px, py = round(x), round(y)
        # The far edge of a [0,1000] space maps one pixel past the screen: pull it in.
        if -1 <= px <= width and -1 <= py <= height:
            return min(max(px, 0), width - 1), min(max(py, 0), height - 1)
        raise InputError(
            f"point ({px}, {py}) is outside the {width}x{height} screen of {self.serial}"
        )

    def _device_action(self, action: Action) -> Action:
        return action.to_device(self.screen_size())

    def _tap(self, action: Action) -> None:
        a = self._device_action(action)
        x, y = self._point(a.x, a.y)
        self.shell(f"input tap {x} {y}")

    def _long_press(self, action: Action) -> None:
        a = self._device_action(action)
        x, y = self._point(a.x, a.y)
        duration = a.duration_ms if a.duration_ms is not None else DEFAULT_LONG_PRESS_MS
        self.shell(f"input swipe {x} {y} {x} {y} {self._gesture_ms(duration)}")

    def _swipe(self, action: Action) -> None:
        a = self._device_action(action)
        x1, y1 = self._point(a.x, a.y)
        x2, y2 = self._point(a.x2, a.y2)
        duration = a.duration_ms if a.duration_ms is not None else DEFAULT_SWIPE_MS
        self.shell(f"input swipe {x1} {y1} {x2} {y2} {self._gesture_ms(duration)}")

    def _gesture_ms(self, duration: int) -> int:
        # The gesture runs inside one shell call: keep it well inside that call's timeout.
        return min(duration, MAX_GESTURE_MS, int(self.timeout * 500))

    def _type(self, action: Action) -> None:
        assert action.text
        type_text(
            self.shell, action.text, switch_delay=self.ime_switch_delay, sleep=self.clock.sleep
        )

    def _key(self, code: int | str) -> None:
        self.shell(f"input keyevent {code}")

    def _double_tap(self, action: Action) -> None:
        a = self._device_action(action)
        x, y = self._point(a.x, a.y)
        # one shell command, so the two taps fall within Android's double-tap timeout
        self.shell(f"input tap {x} {y} && input tap {x} {y}")

    def _named_key(self, action: Action) -> None:
        name = (action.text or "").strip()
        if not re.fullmatch(r"\d+|(?i:keycode_)?[A-Za-z0-9_]+", name):
            raise InputError(f"{name!r} is not a key name or keycode")
        self._key(name if name.isdigit() else "KEYCODE_" + name.upper().removeprefix("KEYCODE_"))

    def _launch(self, action: Action) -> None:
        """Start an app by package through its launcher intent, as a person opening it would."""
        package = (action.text or "").strip()
        if not PACKAGE_NAME.fullmatch(package):
            raise InputError(f"{package!r} is not an Android package name")
        command = f"monkey -p {package} -c android.intent.category.LAUNCHER 1"
        answer = self._answer(command, timeout=self.timeout * 3)
        if "Events injected: 1" not in answer:
            raise DeviceCommandError(f"could not launch {package} on {self.serial}: {answer}")

    def _wait(self, action: Action) -> None:
        duration = action.duration_ms if action.duration_ms is not None else DEFAULT_WAIT_MS
        self.clock.sleep(min(duration, MAX_WAIT_MS) / 1000)

    _PERFORMERS: ClassVar[dict[ActionType, Callable[[AndroidDevice, Action], None]]] = {
        ActionType.TAP: _tap,
        ActionType.DOUBLE_TAP: _double_tap,
        ActionType.LONG_PRESS: _long_press,
        ActionType.SWIPE: _swipe,
        ActionType.TYPE: _type,
        ActionType.KEY: _named_key,
        ActionType.LAUNCH: _launch,
        ActionType.BACK: lambda self, _: self._key(KEYCODE_BACK),
        ActionType.HOME: lambda self, _: self._key(KEYCODE_HOME),
        ActionType.WAIT: _wait,
        # decisions about the task: nothing happens on the phone
        ActionType.ANSWER: lambda self, _: None,
        ActionType.ASK_USER: lambda self, _: None,
        ActionType.GIVE_UP: lambda self, _: None,
        ActionType.DONE: lambda self, _: None,
    }

    # -- apps and facts

    def reset_app(self, recipe: ResetRecipe) -> None:
        """Put the phone in the recipe's start state: load its whole-phone snapshot,
        restore its system settings, go home, clear the data of its other packages, then
        force-stop, optionally clear and launch its app (see ``ResetRecipe``)."""
        package = recipe.package
        for name in recipe.bad_packages():
            raise DeviceError(f"{name!r} is not an Android package name")
        self._recent = None
        if recipe.snapshot:
            self._load_snapshot(recipe.snapshot)
        for setting in recipe.settings:
            self.shell(
                f"settings put {setting.namespace} {setting.key} {shlex.quote(setting.value)}"
            )
        if recipe.go_home:
            self._key(KEYCODE_HOME)
        for other in recipe.clear_packages:
            self._clear_data(other)
        if package:
            if recipe.force_stop:
                self.shell(f"am force-stop {package}")
            if recipe.clear_data:
                self._clear_data(package)
        if recipe.activity and (package or "/" in recipe.activity):
            activity = recipe.activity
            component = activity if "/" in activity else f"{package}/{activity}"
            command = f"am start -W -n {shlex.quote(component)}"
            answer = self._answer(command, timeout=self.timeout * 3)
            failed = "Error" in answer
        elif package:
            command = f"monkey -p {package} -c android.intent.category.LAUNCHER 1"
            answer = self._answer(command, timeout=self.timeout * 3)
            failed = "Events injected: 1" not in answer
        else:
            return  # nothing to launch: the phone stays where the recipe left it (home)
        if failed:
            raise DeviceCommandError(
                f"could not launch {package or recipe.activity} on {self.serial} with "
                f"`{command}`: {answer}"
            )

    def _load_snapshot(self, name: str) -> None:
        status, out, err = self._exec(f"virtualphone snapshot load {shlex.quote(name)}")
        if status != 0:
            said = (err or out).decode("utf-8", "replace").strip() or f"exit status {status}"
            raise DeviceCommandError(
                f"could not load the whole-phone snapshot {name!r} on {self.serial}: {said}. "
                "Snapshots exist on the virtual phone (`virtualphone snapshot save NAME`); a "
                "real phone has none, so leave the recipe's snapshot empty there."
            )

    def _clear_data(self, package: str) -> None:
        answer = self._answer(f"pm clear {package}")
        if "Success" not in answer:
            raise DeviceCommandError(
                f"`pm clear {package}` failed on {self.serial}: {answer or 'no answer'}. "
                "Is the app installed?"
            )

    def installed_packages(self) -> list[str]:
        """The packages installed on the phone (``pm list packages``)."""
        return [
            line.removeprefix("package:").strip()
            for line in self.shell("pm list packages").splitlines()
            if line.startswith("package:")
        ]

    def package_versions(self, packages: list[str]) -> dict[str, PackageVersion | None]:
        """Each package's versionName/versionCode from `dumpsys package PKG` (None: the
        phone does not have it)."""
        return {p: parse_package_version(p, self.shell(f"dumpsys package {p}")) for p in packages}

    def _answer(self, command: str, *, timeout: float | None = None) -> str:
        """Everything a command printed, for commands that report failure only in words."""
        _, out, err = self._exec(command, timeout=timeout)
        return (out + err).decode("utf-8", "replace").strip()

    def health(self, timeout: float = 10.0) -> Health:
        """The farm's checks: adb answers, screen on and unlocked, launcher up on Home."""
        from devices.health import check_health

        return check_health(self, timeout=timeout)

    def info(self) -> DeviceInfo:
        """Model, Android version, natural screen size and density."""
        return _parse_info(self.serial, self.shell(_INFO_QUERY))
