"""Small dialogs. None of them block: they open window-modal and report through signals."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

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
            "Resume continues one from the screen the phone shows now; Discard marks it "
            "as discarded (its files stay, and it can be restored in the Demos tab)."
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
