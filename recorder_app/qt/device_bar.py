"""The device bar: attached phones (real and virtual), connect/disconnect, plain-word status.

Devices are listed every ``POLL_MS`` on a pool thread (``devices.android.list_devices``);
the bar notices phones that come and go, and reports a lost connection.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QWidget,
)

from recorder_app.qt.workers import run_in_background

log = logging.getLogger(__name__)

POLL_MS = 2000
NO_DEVICE_HELP = (
    "No phone attached. Connect one by USB with USB debugging enabled, "
    "or start the studio with --virtual-phone."
)


def describe_device(summary: Any) -> str:
    """``Pixel 7 · 1080×2400 · Android 14`` from a devices.android.DeviceSummary."""
    parts = [summary.model or summary.serial]
    size = getattr(summary, "size", None)
    if size:
        parts.append(f"{size[0]}×{size[1]}")
    if summary.android_version:
        parts.append(f"Android {summary.android_version}")
    if summary.state != "device":
        parts.append(f"({summary.state})")
    return " · ".join(parts)


class DeviceBar(QWidget):
    """Lists devices; signals carry serials."""

    device_connected = Signal(str)
    device_disconnected = Signal(str)  # by the user, or because the phone went away
    device_lost = Signal(str)  # the connected phone disappeared from adb
    status_changed = Signal(str)
    devices_listed = Signal(object)  # every poll: the device summaries adb reported

    def __init__(
        self,
        list_devices: Callable[[], Sequence[Any]],
        parent: QWidget | None = None,
        *,
        poll_ms: int = POLL_MS,
        auto_connect: bool = True,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("deviceBar")
        self._list_devices = list_devices
        self._auto_connect = auto_connect
        self._listing = False
        self._busy = False  # the phone is being restarted: listings are not acted on
        self._connected: str | None = None
        self._summaries: dict[str, Any] = {}

        self.combo = QComboBox()
        self.combo.setMinimumWidth(340)
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.combo.setToolTip("Phones that adb sees")
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("List the attached phones again")
        self.connect_button = QPushButton("Connect")
        self.connect_button.setObjectName("connectButton")
        self.restart_button = QPushButton("Restart phone")
        self.restart_button.setObjectName("restartPhoneButton")
        self.progress = QProgressBar()
        self.progress.setObjectName("restartProgress")
        self.progress.setRange(0, 0)  # busy: how long a phone takes to come back is unknown
        self.progress.setMaximumWidth(120)
        self.progress.hide()
        self.status_label = QLabel("Looking for phones…")
        self.status_label.setObjectName("deviceStatus")
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Long messages must not widen the window; the full text is in the tooltip.
        self.status_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Phone"))
        layout.addWidget(self.combo)
        layout.addWidget(self.connect_button)
        layout.addWidget(self.refresh_button)
        layout.addWidget(self.restart_button)
        layout.addWidget(self.progress)
        layout.addWidget(self.status_label, 1)

        self.refresh_button.clicked.connect(self.refresh)
        self.connect_button.clicked.connect(self._on_connect_clicked)
        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self.refresh)
        self._update_buttons()

    def start(self) -> None:
        self.refresh()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    @property
    def busy(self) -> bool:
        return self._busy

    def set_busy(self, text: str | None) -> None:
        """While ``text`` is shown (the phone restarts), no listing connects or reports a
        loss and the buttons wait; None ends it and lists the phones again."""
        self._busy = text is not None
        self.progress.setVisible(self._busy)
        if text is not None:
            self._timer.stop()
            self._set_status(text)
        else:
            self._timer.start()
        self._update_buttons()

    @property
    def connected_serial(self) -> str | None:
        return self._connected

    @property
    def serials(self) -> list[str]:
        return list(self._summaries)

    def summary(self, serial: str) -> Any | None:
        return self._summaries.get(serial)

    @Slot()
    def refresh(self) -> None:
        if self._listing:
            return
        self._listing = True
        run_in_background(
            lambda: list(self._list_devices()),
            on_done=self._on_devices_listed,
            on_error=self._on_listing_failed,
        )

    def connect_device(self, serial: str) -> None:
        if self._connected == serial:
            return
        if self._connected is not None:
            self.disconnect_device()
        self._connected = serial
        self._select(serial)
        self._update_buttons()
        self._set_status(
            f"Connected to {describe_device(self._summaries[serial])}"
            if serial in self._summaries
            else f"Connected to {serial}"
        )
        self.device_connected.emit(serial)

    def disconnect_device(self) -> None:
        serial, self._connected = self._connected, None
        self._update_buttons()
        if serial is not None:
            self._set_status(f"Disconnected from {serial}")
            self.device_disconnected.emit(serial)

    # -- slots

    @Slot(object)
    def _on_devices_listed(self, summaries: list[Any]) -> None:
        self._listing = False
        if self._busy:
            return  # the phone is restarting: what adb says now is about to change
        self.devices_listed.emit(list(summaries))
        ready = {s.serial: s for s in summaries}
        if list(ready) != list(self._summaries) or any(
            describe_device(ready[k]) != describe_device(self._summaries[k]) for k in ready
        ):
            self._summaries = ready
            self._fill_combo()
        if self._connected is not None and (
            self._connected not in ready or ready[self._connected].state != "device"
        ):
            lost = self._connected
            self.disconnect_device()
            self._set_status(f"The phone {lost} disconnected. Plug it in again to continue.")
            self.device_lost.emit(lost)
            return
        usable = [s for s in summaries if s.state == "device"]
        if not summaries:
            self._set_status(NO_DEVICE_HELP)
        elif not usable:
            states = ", ".join(f"{s.serial} is {s.state}" for s in summaries)
            self._set_status(f"{states}. Unlock the phone and accept the USB debugging prompt.")
        elif self._connected is None:
            if self._auto_connect and len(usable) == 1:
                self.connect_device(usable[0].serial)
            else:
                self._set_status(f"{len(usable)} phones attached: choose one and press Connect.")

    @Slot(object)
    def _on_listing_failed(self, exc: Exception) -> None:
        self._listing = False
        if self._busy:
            return
        self.devices_listed.emit([])
        if self._summaries:
            self._summaries = {}
            self._fill_combo()
        message = str(exc) or type(exc).__name__
        if self._connected is not None:
            lost = self._connected
            self.disconnect_device()
            self.device_lost.emit(lost)
        self._set_status(f"Cannot list phones: {message}")

    @Slot()
    def _on_connect_clicked(self) -> None:
        if self._connected is not None:
            self.disconnect_device()
            return
        serial = self.combo.currentData()
        if serial:
            self.connect_device(serial)

    # -- internals

    def _fill_combo(self) -> None:
        current = self.combo.currentData()
        self.combo.blockSignals(True)
        self.combo.clear()
        for serial, summary in self._summaries.items():
            self.combo.addItem(describe_device(summary), serial)
            self.combo.setItemData(self.combo.count() - 1, serial, Qt.ItemDataRole.ToolTipRole)
        if not self._summaries:
            self.combo.addItem("No phone", None)
        self.combo.blockSignals(False)
        self._select(self._connected or current)
        self._update_buttons()

    def _select(self, serial: str | None) -> None:
        index = self.combo.findData(serial) if serial else -1
        if index >= 0:
            self.combo.setCurrentIndex(index)

    def _update_buttons(self) -> None:
        self.connect_button.setText("Disconnect" if self._connected else "Connect")
        known = bool(self._connected or self._summaries)
        self.connect_button.setEnabled(known and not self._busy)
        self.combo.setEnabled(self._connected is None and not self._busy)
        self.refresh_button.setEnabled(not self._busy)
        self.restart_button.setEnabled(not self._busy)

    def _set_status(self, text: str) -> None:
        if text != self.status_label.text():
            self.status_label.setText(text)
            self.status_label.setToolTip(text)
            self.status_changed.emit(text)
