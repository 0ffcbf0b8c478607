"""One phone to work on, for the views that drive a phone themselves (Audit's explore,
Drift): a list of the connected devices that follows adb, with a refresh button."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QPushButton, QWidget

from devices.android import DeviceSummary
from recorder_app.qt.workers import run_in_background


class DevicePicker(QWidget):
    problem_occurred = Signal(str)
    device_changed = Signal(str)  # serial, "" when none

    def __init__(
        self, list_devices: Callable[[], list[DeviceSummary]], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._list_devices = list_devices
        self._listed: tuple[tuple[str, str], ...] | None = None
        self.combo = QComboBox()
        self.combo.setObjectName("devicePickerCombo")
        self.combo.setPlaceholderText("no phone connected")
        self.combo.currentIndexChanged.connect(lambda _: self.device_changed.emit(self.serial))
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("List the phones adb sees now")
        self.refresh_button.clicked.connect(self.refresh)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.combo, 1)
        layout.addWidget(self.refresh_button)

    @property
    def serial(self) -> str:
        return str(self.combo.currentData() or "")

    @Slot()
    def refresh(self) -> None:
        self.refresh_button.setEnabled(False)
        run_in_background(
            self._list_devices, on_done=self._on_devices_listed, on_error=self._on_listing_failed
        )

    def show_devices(self, devices: list[DeviceSummary]) -> None:
        """List the ready devices, keeping the choice; the studio calls it on every poll."""
        listed = tuple((d.serial, d.model) for d in devices if d.ready)
        if listed == self._listed:
            return
        self._listed = listed
        keep = self.serial
        self.combo.blockSignals(True)
        self.combo.clear()
        for serial, model in listed:
            self.combo.addItem(f"{serial} — {model}" if model else serial, serial)
        index = self.combo.findData(keep)
        self.combo.setCurrentIndex(index if index >= 0 else (0 if listed else -1))
        self.combo.blockSignals(False)
        self.device_changed.emit(self.serial)

    def _on_devices_listed(self, devices: list[DeviceSummary]) -> None:
        self.refresh_button.setEnabled(True)
        self.show_devices(devices)

    def _on_listing_failed(self, exc: Exception) -> None:
        self.refresh_button.setEnabled(True)
        self.problem_occurred.emit(f"cannot list the phones: {exc}")
