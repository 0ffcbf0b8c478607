"""A screenshot with the step's action drawn over it.

Tap: a ring at the point; long press: a double ring; swipe: an arrow from start to end;
type: the text in a banner; back/home/wait/done: a badge. The target element of a tap is
outlined. ``draw_action`` is shared with anything else that needs the same picture.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPainterPath, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from graph_builder.model import Action, ActionType
from recorder_app.qt.gestures import Rect, device_to_widget, fit_rect

ACTION_COLOR = QColor(230, 57, 70)
ELEMENT_COLOR = QColor(255, 196, 0)
BANNER = QColor(20, 22, 26, 200)


def draw_action(painter: QPainter, action: Action, rect: Rect, screen: tuple[int, int]) -> None:
    """Draw ``action`` (in ``screen`` pixels) over an image drawn at ``rect``."""
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    if action.screen is not None and action.screen != screen:
        action = action.rescaled(screen)

    def at(x: float, y: float) -> QPointF:
        return QPointF(*device_to_widget(x, y, rect, screen))

    radius = max(8.0, rect.width / 30)
    if action.element is not None:
        b = action.element.bounds
        painter.setPen(QPen(ELEMENT_COLOR, 2, Qt.PenStyle.DashLine))
        painter.setBrush(QColor(255, 196, 0, 45))
        painter.drawRect(QRectF(at(b.left, b.top), at(b.right, b.bottom)))
    painter.setPen(QPen(ACTION_COLOR, 3))
    painter.setBrush(QColor(230, 57, 70, 70))
    kind = action.type
    if kind.is_pointed and action.point is not None:
        centre = at(*action.point)
        painter.drawEllipse(centre, radius, radius)
        if kind is ActionType.LONG_PRESS:
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawEllipse(centre, radius * 1.7, radius * 1.7)
    elif kind is ActionType.SWIPE and action.point is not None and action.end_point is not None:
        _draw_arrow(painter, at(*action.point), at(*action.end_point), radius)
    else:
        _draw_banner(painter, rect, action_caption(action))
    painter.restore()


def action_caption(action: Action) -> str:
    """The words drawn over a step's screenshot (and its tooltip, which is never cut)."""
    if action.type is ActionType.TYPE:
        return f"type “{action.text}”"
    if action.type is ActionType.WAIT:
        return f"wait {action.duration_ms or 0} ms"
    if action.type.is_pointed or action.type is ActionType.SWIPE:
        return action.describe()
    return action.type.value.replace("_", " ")


def _draw_arrow(painter: QPainter, start: QPointF, end: QPointF, size: float) -> None:
    painter.drawEllipse(start, size * 0.6, size * 0.6)
    painter.drawLine(start, end)
    angle = math.atan2(end.y() - start.y(), end.x() - start.x())
    head = QPainterPath(end)
    for side in (-1, 1):
        a = angle + math.pi + side * math.radians(28)
        head.lineTo(end + QPointF(math.cos(a) * size * 1.4, math.sin(a) * size * 1.4))
        head.moveTo(end)
    painter.drawPath(head)


def _draw_banner(painter: QPainter, rect: Rect, text: str) -> None:
    font = QFont(painter.font())
    font.setBold(True)
    font.setPointSizeF(max(9.0, rect.width / 28))
    painter.setFont(font)
    metrics = painter.fontMetrics()
    width = min(rect.width - 16, metrics.horizontalAdvance(text) + 24)
    box = QRectF(
        rect.x + (rect.width - width) / 2, rect.y + rect.height * 0.42, width, metrics.height() + 16
    )
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(BANNER)
    painter.drawRoundedRect(box, 8, 8)
    painter.setPen(QColor("white"))
    # Cut in the middle: the end of a typed text matters as much as its start.
    elided = metrics.elidedText(text, Qt.TextElideMode.ElideMiddle, int(width - 16))
    painter.drawText(box, Qt.AlignmentFlag.AlignCenter, elided)


JUMP_TEXT = "Jumped here: no recorded action led to this screen"


def _draw_jump_band(painter: QPainter, rect: Rect) -> None:
    font = QFont(painter.font())
    font.setBold(True)
    font.setPointSizeF(max(8.0, rect.width / 34))
    painter.setFont(font)
    metrics = painter.fontMetrics()
    band = QRectF(rect.x, rect.y, rect.width, metrics.height() + 12)
    painter.fillRect(band, QColor(196, 120, 0, 230))
    painter.setPen(QColor("white"))
    text = metrics.elidedText(JUMP_TEXT, Qt.TextElideMode.ElideRight, int(rect.width - 12))
    painter.drawText(band, Qt.AlignmentFlag.AlignCenter, text)


class StepViewer(QWidget):
    """One step: its pre-action screenshot with the action on top."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("stepViewer")
        self.setMinimumSize(200, 300)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._image: QImage | None = None
        # Screenshots are decoded when first painted: a viewer behind another tab (the
        # record page's step preview while recording) never spends the GUI thread on it.
        self._png: bytes | None = None
        self._action: Action | None = None
        self._screen: tuple[int, int] | None = None
        self._message = "Select a demonstration"
        self._jumped = False

    def show_step(
        self,
        png: bytes | None,
        screen: tuple[int, int],
        action: Action | None,
        *,
        jumped: bool = False,
    ) -> None:
        """``jumped``: no recorded action led to this screen (a resumed demo continued
        from another screen); a band across the top says so."""
        self._png = png or None
        self._image = None
        self._screen = screen
        self._action = action
        self._jumped = jumped
        self._message = "The screenshot of this step is missing or unreadable"
        self.setToolTip(action_caption(action) if action is not None else "")
        self.update()

    def clear(self, message: str) -> None:
        self._png = None
        self._image = None
        self._action = None
        self._jumped = False
        self.setToolTip("")
        self._message = message
        self.update()

    @property
    def has_image(self) -> bool:
        return self._decoded() is not None

    def _decoded(self) -> QImage | None:
        if self._png is not None:
            image = QImage.fromData(self._png)
            self._png = None
            self._image = None if image.isNull() else image
        return self._image

    @property
    def jumped(self) -> bool:
        """The step shown was reached by a jump, not by the previous step's action."""
        return self._jumped

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        painter.fillRect(self.rect(), QColor("#1e2127"))
        image = self._decoded()
        if image is None or self._screen is None:
            painter.setPen(QColor("#9aa0a6"))
            painter.drawText(
                self.rect(), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self._message
            )
            return
        rect = fit_rect((image.width(), image.height()), (self.width(), self.height()))
        painter.drawImage(QRectF(rect.x, rect.y, rect.width, rect.height), image)
        if self._action is not None:
            draw_action(painter, self._action, rect, self._screen)
        if self._jumped:
            _draw_jump_band(painter, rect)
