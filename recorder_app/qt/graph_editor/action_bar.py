"""A row of action buttons that never cuts an action off: what does not fit goes to "More".

A plain toolbar outside a main window hides the buttons that do not fit behind an
extension arrow that cannot open; this bar lists them in the "More" button's menu
instead, in order, so every action stays one click away at any width.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QResizeEvent
from PySide6.QtWidgets import QFrame, QMenu, QSizePolicy, QToolButton, QWidget

SPACING = 2
SEPARATOR_WIDTH = 9


class ActionBar(QWidget):
    """Buttons for ``actions`` (None is a separator), left to right, then "More ▾"."""

    def __init__(self, actions: Sequence[QAction | None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._items: list[tuple[QAction | None, QWidget]] = []
        for action in actions:
            widget: QWidget
            if action is None:
                line = QFrame(self)
                line.setFrameShape(QFrame.Shape.VLine)
                line.setFrameShadow(QFrame.Shadow.Sunken)
                widget = line
            else:
                button = QToolButton(self)
                button.setDefaultAction(action)
                button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
                button.setAutoRaise(True)
                widget = button
            self._items.append((action, widget))
        self.more_menu = QMenu(self)
        self.more_button = QToolButton(self)
        self.more_button.setObjectName("moreActionsButton")
        self.more_button.setText("More ▾")
        self.more_button.setToolTip("The actions that do not fit in this width")
        self.more_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.more_button.setMenu(self.more_menu)
        self.more_button.setAutoRaise(True)
        self.more_button.hide()

    def actions_shown(self) -> list[QAction]:
        """The actions whose buttons are on the bar now."""
        return [a for a, w in self._items if a is not None and not w.isHidden()]

    def overflow(self) -> list[QAction]:
        """The actions in the "More" menu now."""
        return [a for a in self.more_menu.actions() if not a.isSeparator()]

    def button(self, action: QAction) -> QToolButton:
        for candidate, widget in self._items:
            if candidate is action:
                assert isinstance(widget, QToolButton)
                return widget
        raise KeyError(action.text())

    def _width(self, widget: QWidget) -> int:
        return SEPARATOR_WIDTH if isinstance(widget, QFrame) else widget.sizeHint().width()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        width = sum(self._width(w) + SPACING for _, w in self._items)
        return QSize(width, self._row_height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(self.more_button.sizeHint().width(), self._row_height())

    def _row_height(self) -> int:
        heights = [w.sizeHint().height() for _, w in self._items if isinstance(w, QToolButton)]
        return max([self.more_button.sizeHint().height(), *heights])

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._arrange()

    def _arrange(self) -> None:
        height = self.height()
        everything = self.sizeHint().width()
        room = (
            self.width()
            if everything <= self.width()
            else (self.width() - self.more_button.sizeHint().width() - SPACING)
        )
        self.more_menu.clear()
        x = 0
        cut = False
        for action, widget in self._items:
            width = self._width(widget)
            cut = cut or x + width > room
            if cut:
                widget.hide()
                if action is None:
                    if self.more_menu.actions():
                        self.more_menu.addSeparator()
                else:
                    self.more_menu.addAction(action)
                continue
            widget.setGeometry(x, 0, width, height)
            widget.show()
            x += width + SPACING
        while self.more_menu.actions() and self.more_menu.actions()[-1].isSeparator():
            self.more_menu.removeAction(self.more_menu.actions()[-1])
        if cut:
            more = self.more_button.sizeHint().width()
            self.more_button.setGeometry(min(x, self.width() - more), 0, more, height)
            self.more_button.show()
        else:
            self.more_button.hide()
