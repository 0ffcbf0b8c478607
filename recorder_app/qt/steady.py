"""Layouts that hold still: controls keep their place whatever the text next to them says.

A label that wraps to one more line, or a button whose text changes (Pause -> Continue),
would otherwise move the buttons around it between two clicks, and the second click
would land somewhere else.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QFrame, QLabel, QScrollArea, QSizePolicy

_TOP = Qt.AlignmentFlag.AlignTop


def fix_lines(label: QLabel, lines: int, *, padding: int = 0) -> None:
    """Give ``label`` the height of ``lines`` lines of its font, whatever it shows
    (``padding``: what its style sheet adds above and below, in pixels)."""
    margins = label.contentsMargins()
    height = label.fontMetrics().lineSpacing() * lines + margins.top() + margins.bottom()
    label.setFixedHeight(height + 2 + padding)
    label.setAlignment(label.alignment() | _TOP)
    policy = label.sizePolicy()
    label.setSizePolicy(QSizePolicy.Policy.Ignored, policy.verticalPolicy())


def scrolled_lines(label: QLabel, lines: int) -> QScrollArea:
    """``label`` in a frameless scroll area ``lines`` lines tall: more text scrolls."""
    label.setAlignment(label.alignment() | _TOP)
    area = QScrollArea()
    area.setWidget(label)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setFixedHeight(label.fontMetrics().lineSpacing() * lines + 6)
    return area


def fit_widest(button: QAbstractButton, texts: Iterable[str]) -> None:
    """A button as wide as its widest text, so switching between them moves nothing."""
    current = button.text()
    widest = 0
    for text in texts:
        button.setText(text)
        widest = max(widest, button.sizeHint().width())
    button.setText(current)
    button.setMinimumWidth(widest)
