"""How the studio reaches phones: one adb server address and the mirror settings.

No Qt here. The device layer is imported inside the methods, so opening the studio's
modules stays cheap and a broken adb set-up is reported when it is first used.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from devices.address import DeviceAddress, local_server_port  # no adb behind them
from devices.hierarchy import DEFAULT_HIERARCHY  # a table of names: no adb behind it
from recorder_app.errors import PhoneControlError

if TYPE_CHECKING:
    import adbutils

    from devices.android import AndroidDevice, DeviceSummary
    from devices.mirror import FrameSource


RECONNECT_TIMEOUT_S = 30.0  # a restarted phone must be listed ready again within this
POLL_S = 0.25
# The studio setting (QSettings key) that keeps the chosen hierarchy tool between sessions.
HIERARCHY_SETTING = "device/hierarchy"


@dataclass(frozen=True, slots=True)
class DeviceConnection:
    """The adb server to talk to (``port=None``: ANDROID_ADB_SERVER_PORT, else 5037)."""

    host: str = "127.0.0.1"
    port: int | None = None
    mirror_prefer: str = "scrcpy"
    mirror_max_size: int = 1200
    mirror_max_fps: int = 30
    settle_timeout: float = 3.0
    label: str = ""  # e.g. "virtual phone", shown in the window title
    # Restarts the studio's built-in virtual phone (None: the phones are real ones).
    restart_server: Callable[[], None] | None = field(default=None, compare=False, repr=False)

    @property
    def built_in(self) -> bool:
        """The phone is the studio's own virtual one, which it can restart."""
        return self.restart_server is not None

    hierarchy: str = DEFAULT_HIERARCHY  # how phones dump their views (devices.hierarchy)

    def client(self) -> adbutils.AdbClient:
        from devices.android import adb_client

        return adb_client(self.host, self.port)

    def list_devices(self) -> list[DeviceSummary]:
        from devices.android import list_devices

        return list_devices(self.client())

    def lock_address(self, device: str) -> str:
        """The address a phone of this connection is locked under: ``SERIAL@HOST:PORT`` of
        this connection's adb server (a bare serial alone would name the server of
        ANDROID_ADB_SERVER_PORT); an address that names its server is kept."""
        address = DeviceAddress.parse(device)
        if address.host:
            return str(address)
        port = self.port if self.port is not None else local_server_port()
        return str(DeviceAddress(address.serial, self.host, port))

    def open_address(self, address: str, hierarchy: str | None = None) -> AndroidDevice:
        """The phone of ``address``'s serial on this connection's server (the studio
        drives the phones of its own adb server), dumping with ``hierarchy``."""
        return self.open_device(DeviceAddress.parse(address).serial, hierarchy)

    def open_device(self, serial: str, hierarchy: str | None = None) -> AndroidDevice:
        """The phone ``serial``, dumping with ``hierarchy`` (None: this connection's)."""
        from devices.android import AndroidDevice

        return AndroidDevice(serial, client=self.client(), hierarchy=hierarchy or self.hierarchy)

    def open_frame_source(self, serial: str) -> FrameSource:
        from devices.mirror import open_frame_source

        return open_frame_source(
            self.open_device(serial),
            max_size=self.mirror_max_size,
            max_fps=self.mirror_max_fps,
            prefer=self.mirror_prefer,
        )

    def bring_back(self, serial: str | None, *, timeout: float | None = None) -> str:
        """Restart the built-in phone, or reconnect ``serial``, and wait until adb lists it
        ready again (None: any phone); returns the serial that came back, or raises
        PhoneControlError in plain words when none did in time.

        A phone reached over the network (``host:port``) is disconnected and connected
        again; one on USB is waited for (unplugging it is the user's part)."""
        timeout = RECONNECT_TIMEOUT_S if timeout is None else timeout
        deadline = time.monotonic() + timeout
        what = (
            "restart the built-in virtual phone"
            if self.built_in
            else f"reconnect the phone {serial or ''}".rstrip()
        )
        try:
            if self.restart_server is not None:
                self.restart_server()
            elif serial is not None and ":" in serial:
                client = self.client()
                client.disconnect(serial)
                client.connect(serial, timeout=max(1.0, deadline - time.monotonic()))
        except Exception as exc:
            raise PhoneControlError(f"Could not {what}: {exc}") from exc
        last = "adb did not answer"
        while time.monotonic() < deadline:
            try:
                states = {d.serial: d.state for d in self.list_devices()}
            except Exception as exc:  # the server may still be coming up
                last = f"adb did not answer ({exc})"
            else:
                ready = [s for s, state in states.items() if state == "device"]
                if serial in ready or (serial is None and ready):
                    return serial or ready[0]
                last = (
                    f"adb lists it as {states[serial]!r}"
                    if serial in states
                    else "adb does not list it"
                )
            time.sleep(POLL_S)
        raise PhoneControlError(
            f"Tried to {what}, but "
            f"{f'the phone {serial} did not come' if serial else 'no phone came'} back within "
            f"{timeout:.0f} s: {last} ({self.describe()}). Check the cable or the phone's "
            "USB debugging prompt, then try again."
        )

    def describe(self) -> str:
        where = f"{self.host}:{self.port}" if self.port else self.host
        return f"{self.label} (adb at {where})" if self.label else f"adb at {where}"
