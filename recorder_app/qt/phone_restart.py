"""Restart phone / Reconnect phone: the phone comes back without restarting the studio.

``PhoneRestart`` runs ``DeviceConnection.bring_back`` (restart the built-in virtual phone,
or reconnect a real one, then wait until adb lists it ready) on a pool thread, while the
device bar shows a busy bar and ignores what adb lists meanwhile; then it connects the
bar to the phone again, which restarts the mirror. Who may restart the phone (the device
lock) and what happens to an open demonstration is the Record tab's business.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from recorder_app.connection import DeviceConnection
from recorder_app.qt.device_bar import DeviceBar
from recorder_app.qt.workers import run_in_background


class PhoneRestart(QObject):
    back = Signal(str)  # the serial that came back, connected again
    failed = Signal(str, str)  # title, what went wrong in plain words

    def __init__(
        self, connection: DeviceConnection, bar: DeviceBar, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._connection = connection
        self._bar = bar
        self.running = False
        built_in = connection.built_in
        self.text = "Restart phone" if built_in else "Reconnect phone"
        self.tip = (
            "Restart the built-in virtual phone: default settings and data, snapshots kept"
            if built_in
            else "Reconnect the phone and restart the mirror, without restarting the studio"
        )

    def start(self, serial: str | None) -> bool:
        """Bring ``serial`` back (None: the built-in phone, whichever serial it has)."""
        if self.running:
            return False
        self.running = True
        verb = (
            "Restarting the virtual phone"
            if self._connection.built_in
            else f"Reconnecting {serial}"
        )
        self._bar.disconnect_device()
        self._bar.set_busy(f"{verb}…")
        connection = self._connection
        run_in_background(
            lambda: connection.bring_back(serial), on_done=self._on_back, on_error=self._on_failed
        )
        return True

    def _on_back(self, serial: str) -> None:
        self.running = False
        self._bar.set_busy(None)
        self._bar.refresh()
        self._bar.connect_device(serial)
        self.back.emit(serial)

    def _on_failed(self, exc: Exception) -> None:
        self.running = False
        self._bar.set_busy(None)
        self._bar.refresh()
        title = "Cannot restart the phone" if self._connection.built_in else "Cannot reconnect"
        self.failed.emit(title, str(exc))
