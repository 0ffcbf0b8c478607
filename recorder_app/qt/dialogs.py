"""Small dialogs. None of them block: they open window-modal and report through signals."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, SignalInstance, Slot
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from devices.device_lock import DeviceHolder
from recorder_app.recording.workspace import DemoSummary


def show_problem(parent: QWidget, title: str, message: str, details: str = "") -> QMessageBox:
    """A warning box that does not block the event loop (recording threads keep reporting)."""
    box = QMessageBox(
        QMessageBox.Icon.Warning, title, message, QMessageBox.StandardButton.Ok, parent
    )
    box.setObjectName("problemBox")
    if details:
        box.setDetailedText(details)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


class IncompleteDemosDialog(QDialog):
    """Offers to resume or discard demonstrations left incomplete by a crash or disconnect."""

    resume_requested = Signal(str)  # demo folder
    discard_requested = Signal(str)  # demo folder

    def __init__(self, demos: list[DemoSummary], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("incompleteDemosDialog")
        self.setWindowTitle("Incomplete demonstrations")
        self.list = QListWidget()
        for demo in demos:
            item = QListWidgetItem(
                f"{demo.task_id} / {demo.demo_id} — {demo.step_count} "
                f"step{'s' if demo.step_count != 1 else ''} saved"
            )
            item.setData(Qt.ItemDataRole.UserRole, str(demo.folder))
            self.list.addItem(item)
        self.list.setCurrentRow(0)
        text = QLabel(
            "These demonstrations were not finished (the studio closed or the phone "
            "disconnected while recording). Every step recorded is saved.\n\n"
            "Resume first checks that the phone shows the screen the demonstration "
            "stopped on, and asks when it does not. Discard marks it as discarded (its "
            "files stay, and it can be restored in the Demos tab)."
        )
        text.setWordWrap(True)
        self.resume_button = QPushButton("Resume")
        self.discard_button = QPushButton("Discard")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.resume_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.discard_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.resume_button.clicked.connect(self._on_resume_clicked)
        self.discard_button.clicked.connect(self._on_discard_clicked)
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        layout.addWidget(self.list)
        layout.addWidget(buttons)
        self.resize(520, 320)

    def _current_folder(self) -> str | None:
        item = self.list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item else None

    @Slot()
    def _on_resume_clicked(self) -> None:
        folder = self._current_folder()
        if folder:
            self.resume_requested.emit(folder)
            self.accept()

    @Slot()
    def _on_discard_clicked(self) -> None:
        folder = self._current_folder()
        if not folder:
            return
        self.discard_requested.emit(folder)
        self.list.takeItem(self.list.currentRow())
        if self.list.count() == 0:
            self.accept()


def _thumbnail(png: bytes | None, height: int = 360) -> QLabel:
    label = QLabel()
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    pixmap = QPixmap()
    if png and pixmap.loadFromData(png):
        label.setPixmap(pixmap.scaledToHeight(height, Qt.TransformationMode.SmoothTransformation))
    else:
        label.setText("(no screenshot)")
    return label


class ResumeCheckDialog(QDialog):
    """A resumed demonstration whose phone shows another screen than where it stopped.

    Shows both screens side by side and lets the user continue from the phone's screen,
    discard the demonstration, or stop (the demo stays incomplete; bring the phone back to
    the screen on the left and resume again).
    """

    continue_requested = Signal()
    discard_requested = Signal()
    stop_requested = Signal()

    def __init__(
        self,
        message: str,
        expected_png: bytes | None,
        live_png: bytes | None,
        parent: QWidget | None = None,
        *,
        expected_title: str = "Where the demonstration stopped",
        note: str = (
            "Continuing records the next step on the screen the phone shows now; the "
            "demonstration marks it as a jump, so no transition is built between the two "
            "screens."
        ),
        continue_text: str = "Continue from this screen",
    ) -> None:
        super().__init__(parent)
        self.setObjectName("resumeCheckDialog")
        self.setWindowTitle("The phone shows another screen")
        text = QLabel(f"{message}\n\n{note}")
        text.setObjectName("resumeCheckText")
        text.setWordWrap(True)
        grid = QGridLayout()
        grid.addWidget(QLabel(f"<b>{expected_title}</b>"), 0, 0)
        grid.addWidget(QLabel("<b>What the phone shows now</b>"), 0, 1)
        grid.addWidget(_thumbnail(expected_png), 1, 0)
        grid.addWidget(_thumbnail(live_png), 1, 1)
        self.continue_button = QPushButton(continue_text)
        self.discard_button = QPushButton("Discard the demonstration")
        self.stop_button = QPushButton("Stop (resume later)")
        self.stop_button.setToolTip(
            "Keep the demonstration incomplete; bring the phone back to the screen on the "
            "left, then resume it again"
        )
        buttons = QDialogButtonBox()
        for button in (self.continue_button, self.discard_button, self.stop_button):
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
        self.continue_button.clicked.connect(lambda: self._finish(self.continue_requested))
        self.discard_button.clicked.connect(lambda: self._finish(self.discard_requested))
        self.stop_button.clicked.connect(lambda: self._finish(self.stop_requested))
        self.rejected.connect(self.stop_requested)  # Esc or the close box: the safe choice
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        layout.addLayout(grid)
        layout.addWidget(buttons)

    def _finish(self, signal: SignalInstance) -> None:
        self.rejected.disconnect(self.stop_requested)
        signal.emit()
        self.accept()


class DeviceBusyDialog(QDialog):
    """The phone is held by another tab or program: says who, and offers to wait for it
    (what was refused then starts by itself) or to stop the holder when it runs in this
    studio."""

    wait_requested = Signal()
    stop_holder_requested = Signal()

    def __init__(self, holder: DeviceHolder, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("deviceBusyDialog")
        self.setWindowTitle("The phone is in use")
        self.text = QLabel()
        self.text.setObjectName("deviceBusyText")
        self.text.setWordWrap(True)
        self.status = QLabel()
        self.status.setObjectName("deviceBusyStatus")
        self.wait_button = QPushButton("Wait until it is free")
        self.wait_button.setToolTip("It starts by itself once the phone is free")
        self.stop_button = QPushButton("Stop it")
        self.cancel_button = QPushButton("Cancel")
        buttons = QDialogButtonBox()
        for button in (self.wait_button, self.stop_button):
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.cancel_button, QDialogButtonBox.ButtonRole.RejectRole)
        self.wait_button.clicked.connect(self._on_wait_clicked)
        self.stop_button.clicked.connect(self._on_stop_clicked)
        self.cancel_button.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(self.status)
        layout.addWidget(buttons)
        self.show_holder(holder)

    def show_holder(self, holder: DeviceHolder) -> None:
        self.holder = holder
        self.text.setText(
            f"The phone {holder.device} is in use by {holder.describe()}.\n\nStarting now "
            "would fight it for the phone (and spoil what it records), so nothing has "
            "started."
        )
        self.stop_button.setEnabled(holder.in_this_process)
        self.stop_button.setToolTip(
            f"Stop {holder.owner} here (it ends after its current step)"
            if holder.in_this_process
            else f"It runs in another program (pid {holder.pid}); stop it there"
        )

    @Slot()
    def _on_wait_clicked(self) -> None:
        self.wait_button.setEnabled(False)
        self.status.setText(
            "Waiting for the phone… The other tabs can be used meanwhile (to continue a "
            "paused run, say)."
        )
        if self.windowModality() != Qt.WindowModality.NonModal and self.isVisible():
            # A modal wait would block the very tab that can free the phone (a paused run
            # waits for Continue there); a modality change takes effect on the next show.
            self.hide()
            self.setWindowModality(Qt.WindowModality.NonModal)
            self.show()
        self.wait_requested.emit()

    @Slot()
    def _on_stop_clicked(self) -> None:
        self.stop_button.setEnabled(False)
        self.stop_holder_requested.emit()
        self._on_wait_clicked()
        self.status.setText(f"Stopping {self.holder.owner}; this starts once it has.")


class StoppedRunsDialog(QDialog):
    """Offers the workspace's stopped runs for resuming, and a folder of one's own."""

    resume_requested = Signal(str)  # run folder
    browse_requested = Signal()

    def __init__(self, runs: list[tuple[str, str]], parent: QWidget | None = None) -> None:
        """``runs``: (folder, label) of each stopped run, newest first."""
        super().__init__(parent)
        self.setObjectName("stoppedRunsDialog")
        self.setWindowTitle("Resume a run")
        text = QLabel(
            "These runs stopped before every task had a result. Resume continues one with "
            "the configuration it was started with; finished tasks are skipped."
            if runs
            else "No run in this workspace has tasks left to run."
        )
        text.setWordWrap(True)
        self.list = QListWidget()
        for folder, label in runs:
            item = QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, folder)
            item.setToolTip(folder)
            self.list.addItem(item)
        self.list.setCurrentRow(0)
        self.list.itemDoubleClicked.connect(lambda _: self._on_resume_clicked())
        self.resume_button = QPushButton("Resume")
        self.resume_button.setEnabled(bool(runs))
        self.browse_button = QPushButton("Other folder…")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        buttons.addButton(self.resume_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.browse_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.resume_button.clicked.connect(self._on_resume_clicked)
        self.browse_button.clicked.connect(self._on_browse_clicked)
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        layout.addWidget(self.list)
        layout.addWidget(buttons)
        self.resize(560, 320)

    @Slot()
    def _on_resume_clicked(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.resume_requested.emit(str(item.data(Qt.ItemDataRole.UserRole)))
            self.accept()

    @Slot()
    def _on_browse_clicked(self) -> None:
        self.accept()
        self.browse_requested.emit()
