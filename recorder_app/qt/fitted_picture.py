"""A picture that fits its space: the whole image, as large as the label allows, its
proportions kept (a QLabel shows a pixmap at its own size and crops the rest)."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPixmap, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class FittedPicture(QLabel):
    def __init__(self, placeholder: str = "", parent: QWidget | None = None) -> None:
        super().__init__(placeholder, parent)
        self.placeholder = placeholder
        self.source = QPixmap()
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setMinimumSize(120, 160)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def show_picture(self, pixmap: QPixmap | None) -> None:
        """Show ``pixmap`` (the placeholder text when None or empty)."""
        self.source = pixmap if pixmap is not None else QPixmap()
        if self.source.isNull():
            self.setPixmap(QPixmap())
            self.setText(self.placeholder)
        else:
            self._fit()

    def sizeHint(self) -> QSize:
        return QSize(300, 520)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if not self.source.isNull():
            self._fit()

    def _fit(self) -> None:
        self.setPixmap(
            self.source.scaled(
                self.size(),
                Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
        )
