"""Where a written file (a report, a GIF) is: its path, a Copy button and an Open button
that says what happened when the machine has no program for the file (a headless server,
a bare WM)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget


class ReportPathRow(QWidget):
    """Hidden until ``set_path``; ``message_posted`` carries what Open or Copy did."""

    message_posted = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reportPathRow")
        self.path: Path | None = None
        self.label = QLabel("")
        self.label.setObjectName("reportPath")
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setWordWrap(True)
        self.copy_button = QPushButton("Copy path")
        self.copy_button.clicked.connect(self._on_copy_clicked)
        self.open_button = QPushButton("Open report")
        self.open_button.clicked.connect(self.open_report)
        self.note = QLabel("")
        self.note.setObjectName("reportPathNote")
        self.note.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.label, 1)
        row.addWidget(self.copy_button)
        row.addWidget(self.open_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.note)
        self.message_posted.connect(self.note.setText)
        self.set_path(None)

    def set_path(
        self, path: Path | None, *, what: str = "Report", open_label: str = "Open report"
    ) -> None:
        self.path = path
        self.open_button.setText(open_label)
        self.label.setText(f"{what}: {path}" if path is not None else "")
        self.label.setToolTip(str(path) if path is not None else "")
        self.note.setText("")
        self.copy_button.setEnabled(path is not None)
        self.open_button.setEnabled(path is not None)

    @Slot()
    def open_report(self) -> bool:
        """Open the report in the desktop's browser; False (and a message) when none is."""
        if self.path is None:
            return False
        if QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.path))):
            self.message_posted.emit(f"Opened {self.path}")
            return True
        self._copy()
        self.message_posted.emit(
            f"No program here opens {self.path.suffix or 'such'} files, so nothing opened. "
            f"The path is copied: {self.path}"
        )
        return False

    def _copy(self) -> None:
        if self.path is not None:
            QGuiApplication.clipboard().setText(str(self.path))

    @Slot()
    def _on_copy_clicked(self) -> None:
        self._copy()
        self.message_posted.emit(f"Copied {self.path}")
