"""Driving the studio window like a user, for the tests that record on the virtual phone."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QMessageBox

from recorder_app.connection import DeviceConnection
from recorder_app.qt.main_window import StudioMainWindow

SERIAL = "virtual-1"
READY_TIMEOUT_MS = 15_000


class Recording:
    """Drives the Record tab like a user, noting the phone's true screen at each ready."""

    def __init__(self, qtbot, window: StudioMainWindow, phone) -> None:
        self.qtbot = qtbot
        self.window = window
        self.page = window.record_page
        self.mirror = window.record_page.mirror
        self.phone = phone
        self.truth: list[str] = []  # ground-truth screen before each step
        self.pixels: list[np.ndarray] = []  # what the phone showed before each step

    def acknowledge_problems(self) -> int:
        """Press OK on every problem box, as the user would; how many there were."""
        boxes = [b for b in self.window.findChildren(QMessageBox) if b.isVisible()]
        for box in boxes:
            box.accept()
        return len(boxes)

    def wait_ready(self) -> None:
        self.qtbot.waitUntil(lambda: self.page.recorder.ready, timeout=READY_TIMEOUT_MS)
        self.truth.append(self.phone.ground_truth())
        self.pixels.append(np.asarray(self.phone.render()))

    def element(self, label: str):
        screen = self.page.recorder.screen
        assert screen is not None and screen.hierarchy is not None
        return next(e for e in screen.hierarchy.visible() if e.label() == label)

    def point(self, x: float, y: float) -> QPoint:
        return self.mirror.widget_point(x, y).toPoint()

    def tap(self, label: str) -> None:
        target = self.point(*self.element(label).bounds.center)
        # Qt drops a move to where the pointer already is: come from one pixel away.
        self.qtbot.mouseMove(self.mirror, target + QPoint(1, 1))
        self.qtbot.mouseMove(self.mirror, target)
        assert self.mirror.hovered_element is not None
        assert self.mirror.hovered_element.label() == label  # highlighted before the click
        self.qtbot.mouseClick(self.mirror, Qt.MouseButton.LeftButton, pos=target)

    def click(self, label: str) -> None:
        """A click with no checks on the way (the phone may vanish meanwhile)."""
        target = self.point(*self.element(label).bounds.center)
        self.qtbot.mouseClick(self.mirror, Qt.MouseButton.LeftButton, pos=target)

    def long_press(self, label: str) -> None:
        target = self.point(*self.element(label).bounds.center)
        self.qtbot.mousePress(self.mirror, Qt.MouseButton.LeftButton, pos=target)
        self.qtbot.wait(600)
        self.qtbot.mouseRelease(self.mirror, Qt.MouseButton.LeftButton, pos=target)

    def swipe(self, start: tuple[int, int], end: tuple[int, int]) -> None:
        a, b = self.point(*start), self.point(*end)
        self.qtbot.mousePress(self.mirror, Qt.MouseButton.LeftButton, pos=a)
        self.qtbot.mouseMove(self.mirror, (a + b) / 2)
        self.qtbot.mouseRelease(self.mirror, Qt.MouseButton.LeftButton, pos=b)

    def key(self, key: Qt.Key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
        self.window.activateWindow()  # shortcuts need the active window (dialogs took it)
        self.qtbot.waitUntil(self.window.isActiveWindow)
        self.qtbot.keyClick(self.window, key, modifier)

    def key_retry(self) -> None:
        self.key(Qt.Key.Key_F5)

    def type_text(self, text: str) -> None:
        self.key(Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)  # focus the text box
        self.qtbot.keyClicks(self.page.text_edit, text)
        self.qtbot.keyClick(self.page.text_edit, Qt.Key.Key_Return)


MIRROR_OPTIONS = {"mirror_max_fps": 10, "settle_timeout": 2.0}


def open_studio(
    qtbot,
    settings,
    workspace,
    port: int,
    prefer: str = "screencap",
    *,
    connection: DeviceConnection | None = None,
) -> StudioMainWindow:
    """The main window on the virtual phone, connected and mirroring."""
    if connection is None:
        connection = DeviceConnection(port=port, mirror_prefer=prefer, **MIRROR_OPTIONS)
    window = StudioMainWindow(settings, connection, poll_ms=300)
    qtbot.addWidget(window)
    window.resize(1000, 760)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    window.open_workspace(workspace.root)
    window.record_page.start()
    qtbot.waitUntil(
        lambda: window.record_page.device_bar.connected_serial == SERIAL, timeout=10_000
    )
    qtbot.waitUntil(lambda: window.record_page.mirror.device_size == (1080, 2400), timeout=10_000)
    return window


def start_demo(recording: Recording, task_id: str = "wifi-search") -> None:
    panel = recording.page.task_panel
    panel.id_edit.setText(task_id)
    panel.instruction_edit.setPlainText("where do I find the wifi thing")
    panel.app_edit.setText("com.android.settings")
    panel.annotator_edit.setText("a01")
    recording.page.reset_check.setChecked(False)  # start on the home screen
    recording.key(Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    recording.wait_ready()
