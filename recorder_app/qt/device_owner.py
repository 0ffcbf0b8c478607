"""One owner of the phone at a time: a tab takes the phone's lock before it drives it.

``DeviceOwner`` holds a ``devices.device_lock.DeviceLock`` for one tab (the Record tab,
while a demonstration is open), or checks that phones are free before a run takes them
(the Evaluate tab; the runner takes the locks itself). When a phone is held elsewhere (a
paused online run, a demonstration, ``elderbench eval`` in a terminal), it opens a
``DeviceBusyDialog`` that says who holds it and offers to wait -- the refused command is
retried once the phone is free -- or to stop the holder, when it runs in this studio
(``release_requested``; the main window asks the other tab).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QWidget

from devices.device_lock import DeviceBusyError, DeviceHolder, DeviceLock, device_holder
from devices.errors import DeviceError
from recorder_app.qt.dialogs import DeviceBusyDialog

WAIT_FOR_DEVICE_S = 3600.0  # "Wait until it is free" gives up after this
POLL_MS = 250
BUSY_NOTE_MS = 10_000  # the status line's echo of the dialog; the dialog keeps it current


class DeviceOwner(QObject):
    """The device lock of one tab, and the dialog shown when another holder has it."""

    message_posted = Signal(str, int)  # text, timeout in ms
    problem_occurred = Signal(str, str)  # title, message
    release_requested = Signal(str)  # serial: the user asks its holder in this studio to stop

    def __init__(self, name: str, parent: QWidget, locate: Callable[[str], str]) -> None:
        super().__init__(parent)
        self.name = name  # "the Record tab"
        # serial -> the address its lock names (``DeviceConnection.lock_address``): the
        # studio's adb server, which may not be the one ANDROID_ADB_SERVER_PORT names
        self._locate = locate
        self._parent = parent
        self._lock: DeviceLock | None = None
        self.busy_dialog: DeviceBusyDialog | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._waiting: tuple[str, Callable[[], object], float] | None = None

    @property
    def command(self) -> str | None:
        """What the device is held for, or None."""
        return self._lock.command if self._lock is not None else None

    @property
    def held(self) -> str | None:
        """The address of the device held, or None."""
        return self._lock.address if self._lock is not None else None

    def take(self, serial: str, command: str, retry: Callable[[], object]) -> bool:
        """Hold ``serial`` for ``command``; False when it is held elsewhere (the dialog then
        says by whom, and ``retry()`` runs once the user waited for it to be free)."""
        address = self._locate(serial)
        if self._lock is not None:
            if self._lock.address == address and self._lock.command == command:
                return True
            # Another job of this tab (free drive -> a demo): the lock file names the new
            # one. A lock cannot be renamed while held, so it is let go for a moment.
            self.release()
        lock = DeviceLock(address, owner=self.name, command=command)
        try:
            lock.acquire()
        except DeviceBusyError as exc:
            self._show_busy(exc.holder, retry)
            return False
        except DeviceError as exc:
            self.problem_occurred.emit("Cannot take the phone", str(exc))
            return False
        self._lock = lock
        return True

    def when_free(self, serials: Sequence[str], retry: Callable[[], object]) -> bool:
        """True when no other tab or program holds any of ``serials``; otherwise the
        dialog says who does, and ``retry()`` runs once the user waited for it."""
        for serial in serials:
            holder = device_holder(self._locate(serial))
            if holder is not None:
                self._show_busy(holder, retry)
                return False
        return True

    def release(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    def shutdown(self) -> None:
        self._timer.stop()
        self._waiting = None
        self.release()

    def _show_busy(self, holder: DeviceHolder, retry: Callable[[], object]) -> None:
        self._timer.stop()
        self._waiting = None
        if self.busy_dialog is not None:
            self.busy_dialog.close()
        dialog = DeviceBusyDialog(holder, self._parent)
        dialog.wait_requested.connect(lambda: self._wait_for(holder.device, retry))
        dialog.stop_holder_requested.connect(lambda: self.release_requested.emit(holder.device))
        dialog.finished.connect(lambda _: self._on_dialog_finished(dialog))
        self.busy_dialog = dialog
        self.message_posted.emit(f"The phone is in use by {holder.describe()}.", BUSY_NOTE_MS)
        dialog.open()

    def _wait_for(self, serial: str, retry: Callable[[], object]) -> None:
        self._waiting = (serial, retry, time.monotonic() + WAIT_FOR_DEVICE_S)
        self._timer.start()

    def _on_dialog_finished(self, dialog: DeviceBusyDialog) -> None:
        if self.busy_dialog is dialog:
            self.busy_dialog = None
            self._timer.stop()
            self._waiting = None
        dialog.deleteLater()

    @Slot()
    def _on_timer_timeout(self) -> None:
        if self._waiting is None:
            self._timer.stop()
            return
        serial, retry, deadline = self._waiting
        holder = device_holder(serial)
        dialog = self.busy_dialog
        if holder is None:
            self._waiting = None
            self._timer.stop()
            if dialog is not None:
                dialog.accept()
            retry()
            return
        if time.monotonic() > deadline:
            if dialog is not None:
                dialog.reject()
            self.problem_occurred.emit(
                "The phone stayed in use",
                f"Gave up waiting after {WAIT_FOR_DEVICE_S / 60:.0f} minutes: the phone "
                f"{serial} is still in use by {holder.describe()}.",
            )
        elif dialog is not None:
            dialog.show_holder(holder)
