"""Free drive in the studio: inputs on the mirror go to the phone, none is recorded.

``FreeDriver`` runs a ``recorder_app.recording.free_drive.FreeDrive`` on a pool of one
thread, so inputs reach the phone in the order they were made and the GUI never waits
for adb. Unlike the recorder it may hold a few inputs in line (nothing is paired with a
screen, so a queued tap cannot be saved against the wrong one), but not more than
``MAX_IN_LINE``: a phone that stopped answering is not fed a backlog.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QThreadPool, Signal

from devices.device import Device
from graph_builder.model import Action
from recorder_app.qt.workers import run_in_background
from recorder_app.recording.free_drive import FreeDrive

MAX_IN_LINE = 4
STOP_WAIT_MS = 10_000  # on quit: how long the last inputs may take to reach the phone


class FreeDriver(QObject):
    """The GUI-side handle of free drive; signals come in the GUI thread."""

    performed = Signal(str)  # what reached the phone, described
    failed = Signal(str)  # why an input did not reach it, in plain words
    idle = Signal()  # every input sent so far has reached the phone (or failed)

    def __init__(self, open_device: Callable[[str], Device], parent: QObject | None = None):
        super().__init__(parent)
        self._open_device = open_device
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)  # one line: inputs arrive in the order made
        self._drive: FreeDrive | None = None
        self._in_line = 0

    @property
    def active(self) -> bool:
        return self._drive is not None

    @property
    def serial(self) -> str | None:
        return self._drive.serial if self._drive is not None else None

    @property
    def busy(self) -> bool:
        """Inputs are still on their way to the phone."""
        return self._in_line > 0

    def start(self, serial: str) -> None:
        if self._drive is not None and self._drive.serial == serial:
            return
        self.stop()
        self._drive = FreeDrive(serial, self._open_device)

    def stop(self) -> None:
        """No more input; the device closes once the inputs in line reached the phone."""
        drive, self._drive = self._drive, None
        if drive is not None:
            run_in_background(drive.close, pool=self._pool)

    def submit(self, action: Action) -> bool:
        """Send ``action`` to the phone; False (and ``failed``) when it is refused."""
        drive = self._drive
        if drive is None:
            self.failed.emit(f"{action.describe()} was not sent: free drive is off.")
            return False
        if self._in_line >= MAX_IN_LINE:
            self.failed.emit(
                f"{action.describe()} was not sent: the phone has not yet taken the "
                f"{self._in_line} inputs before it."
            )
            return False
        self._in_line += 1
        run_in_background(
            lambda: drive.perform(action),
            on_done=lambda _: self._on_done(action),
            on_error=self._on_error,
            pool=self._pool,
        )
        return True

    def shutdown(self) -> None:
        self.stop()
        self._pool.waitForDone(STOP_WAIT_MS)

    def _on_done(self, action: Action) -> None:
        self._in_line -= 1
        self.performed.emit(action.describe())
        if self._in_line == 0:
            self.idle.emit()

    def _on_error(self, exc: Exception) -> None:
        self._in_line -= 1
        self.failed.emit(str(exc))
        if self._in_line == 0:
            self.idle.emit()
