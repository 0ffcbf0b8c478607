"""Where a device lives: ``SERIAL`` on the local adb server, or ``SERIAL@HOST:PORT`` on
the adb server at HOST:PORT (another machine of a device farm, or a second local server).

>>> DeviceAddress.parse("emulator-5554@10.0.0.7:5037")
DeviceAddress(serial='emulator-5554', host='10.0.0.7', port=5037)
>>> str(DeviceAddress.parse("R58M12345"))
'R58M12345'
>>> DeviceAddress.parse("192.168.1.20:5555@farm-2:5037").serial  # a tcp-connected phone
'192.168.1.20:5555'
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from devices.errors import AdbUnavailableError, DeviceError
from devices.hierarchy import DEFAULT_HIERARCHY

if TYPE_CHECKING:
    from devices.android import AndroidDevice

# The local adb server: this machine, on ANDROID_ADB_SERVER_PORT or else adb's own port.
LOCAL_HOST = "127.0.0.1"
LOCAL_PORT = 5037
# Names of this machine that reach the same server as LOCAL_HOST.
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1"})

_SERVER = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>\d{1,5})")


@dataclass(frozen=True, slots=True)
class DeviceAddress:
    serial: str
    host: str | None = None  # None: the local adb server (ANDROID_ADB_SERVER_PORT)
    port: int | None = None

    @classmethod
    def parse(cls, text: str) -> DeviceAddress:
        text = text.strip()
        serial, at, server = text.rpartition("@")
        if not at:
            serial, server = text, ""
        if not serial or any(c.isspace() for c in serial):
            raise DeviceError(f"{text!r} is not a device address; write SERIAL or SERIAL@HOST:PORT")
        if not at:
            return cls(serial)
        m = _SERVER.fullmatch(server)
        if m is None or not 0 < int(m["port"]) < 65536:
            raise DeviceError(
                f"{text!r}: after '@' comes the adb server as HOST:PORT (for example farm-2:5037)"
            )
        return cls(serial, m["host"].strip("[]"), int(m["port"]))

    @property
    def server(self) -> str:
        if not self.host:
            return "local"
        host = f"[{self.host}]" if ":" in self.host else self.host  # IPv6
        return f"{host}:{self.port}"

    def __str__(self) -> str:
        return f"{self.serial}@{self.server}" if self.host else self.serial

    def on_server(self) -> DeviceAddress:
        """The same device with its adb server spelled out: the local server's host and
        port for a bare serial, and ``localhost`` as ``127.0.0.1``; so one phone reached
        through one server has one ``on_server()`` however it was written."""
        host = self.host or LOCAL_HOST
        host = LOCAL_HOST if host.lower() in _LOOPBACK_NAMES else host
        return DeviceAddress(self.serial, host, self.port or local_server_port())


def local_server_port() -> int:
    """The local adb server's port: ANDROID_ADB_SERVER_PORT, else 5037."""
    raw = os.environ.get("ANDROID_ADB_SERVER_PORT", "")
    try:
        return int(raw) if raw else LOCAL_PORT
    except ValueError as exc:
        raise AdbUnavailableError(
            f"ANDROID_ADB_SERVER_PORT is {raw!r}, not a port number; set it to the adb "
            "server's port (5037 by default) or unset it."
        ) from exc


def parse_server(text: str) -> tuple[str, int]:
    """``HOST:PORT`` of an adb server, for ``elderbench devices --server``."""
    m = _SERVER.fullmatch(text.strip())
    if m is None or not 0 < int(m["port"]) < 65536:
        raise DeviceError(f"{text!r} is not an adb server; write HOST:PORT (e.g. 127.0.0.1:5037)")
    return m["host"].strip("[]"), int(m["port"])


def open_device(
    address: DeviceAddress | str,
    *,
    timeout: float | None = None,
    hierarchy: str = DEFAULT_HIERARCHY,
) -> AndroidDevice:
    """An AndroidDevice for ``address`` through the adb server that holds it, dumping its
    view hierarchy with ``hierarchy`` (``devices.hierarchy``)."""
    from devices.android import DEFAULT_HOST, DEFAULT_TIMEOUT, AndroidDevice, adb_client

    if isinstance(address, str):
        address = DeviceAddress.parse(address)
    wait = timeout or DEFAULT_TIMEOUT
    client = adb_client(address.host or DEFAULT_HOST, address.port, timeout=wait)
    return AndroidDevice(address.serial, client=client, timeout=wait, hierarchy=hierarchy)
