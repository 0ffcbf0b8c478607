"""How the studio reaches phones: one adb server address and the mirror settings.

No Qt here. The device layer is imported inside the methods, so opening the studio's
modules stays cheap and a broken adb set-up is reported when it is first used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from devices.hierarchy import DEFAULT_HIERARCHY  # a table of names: no adb behind it

if TYPE_CHECKING:
    import adbutils

    from devices.android import AndroidDevice, DeviceSummary
    from devices.mirror import FrameSource


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
    hierarchy: str = DEFAULT_HIERARCHY  # how phones dump their views (devices.hierarchy)

    def client(self) -> adbutils.AdbClient:
        from devices.android import adb_client

        return adb_client(self.host, self.port)

    def list_devices(self) -> list[DeviceSummary]:
        from devices.android import list_devices

        return list_devices(self.client())

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

    def describe(self) -> str:
        where = f"{self.host}:{self.port}" if self.port else self.host
        return f"{self.label} (adb at {where})" if self.label else f"adb at {where}"
