"""A pre-action screenshot with an edge's matching rule drawn on it.

The rule lives in ``[0,1000]`` space, so a tolerance radius is a circle there and an
ellipse on a tall screen. The demonstrated action being looked at is drawn on top the way
the Demos tab draws steps. With ``picking`` on, a click reports the point in
``[0,1000]`` space (used to place a new tap edge).
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from graph_builder.model import NORMALIZED_SCREEN, Action, ActionType, MatchRule, SwipeDirection
from recorder_app.qt.gestures import Rect, fit_rect
from recorder_app.qt.step_viewer import draw_action

POINT_COLOR = QColor(37, 99, 235)
TOLERANCE_FILL = QColor(37, 99, 235, 40)
BOUNDS_COLOR = QColor(245, 158, 11)

_SWIPE_VECTORS = {
    SwipeDirection.UP: (0, 1),  # finger moves up: from low on the screen to high
    SwipeDirection.DOWN: (0, -1),
    SwipeDirection.LEFT: (1, 0),
    SwipeDirection.RIGHT: (-1, 0),
}


def _stand_in(rule: MatchRule) -> Action | None:
    """An action in ``[0,1000]`` space that pictures a rule without points."""
    kind = rule.action_type
    if kind is ActionType.SWIPE:
        if rule.direction is None:
            return None
        dx, dy = _SWIPE_VECTORS[rule.direction]
        return Action.swipe(
            500 + dx * 250, 500 + dy * 250, 500 - dx * 250, 500 - dy * 250, screen=NORMALIZED_SCREEN
        )
    if kind is ActionType.TYPE:
        return Action.type_text(" | ".join(rule.texts)) if rule.texts else None
    if kind.is_pointed:
        return None
    return Action(kind)


class RuleOverlay(QWidget):
    point_picked = Signal(float, float)  # in [0,1000] space

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ruleOverlay")
        self.setMinimumSize(180, 260)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._image: QImage | None = None
        self._screen: tuple[int, int] = (1, 1)
        self._rule: MatchRule | None = None
        self._action: Action | None = None
        self._message = "No screenshot"
        self.picking = False

    def show_screen(
        self,
        image: QImage | None,
        screen: tuple[int, int],
        rule: MatchRule | None,
        action: Action | None = None,
        message: str = "The screenshot is not available",
    ) -> None:
        self._image = image
        self._screen = screen
        self._rule = rule
        self._action = action
        self._message = message
        self.update()

    def set_rule(self, rule: MatchRule | None) -> None:
        self._rule = rule
        self.update()

    @property
    def has_image(self) -> bool:
        return self._image is not None

    def _image_rect(self) -> Rect | None:
        if self._image is None:
            return None
        return fit_rect((self._image.width(), self._image.height()), (self.width(), self.height()))

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), QColor("#1e2127"))
        rect = self._image_rect()
        if rect is None or self._image is None:
            painter.setPen(QColor("#9aa0a6"))
            painter.drawText(
                self.rect(), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self._message
            )
            return
        painter.drawImage(QRectF(rect.x, rect.y, rect.width, rect.height), self._image)
        if self._rule is not None:
            self._draw_rule(painter, self._rule, rect)
        if self._action is not None:
            draw_action(painter, self._action, rect, self._screen)

    def _draw_rule(self, painter: QPainter, rule: MatchRule, rect: Rect) -> None:
        sx = rect.width / NORMALIZED_SCREEN[0]
        sy = rect.height / NORMALIZED_SCREEN[1]

        def at(x: float, y: float) -> QPointF:
            return QPointF(rect.x + x * sx, rect.y + y * sy)

        if rule.bounds is not None:
            b = rule.bounds
            painter.setPen(QPen(BOUNDS_COLOR, 2, Qt.PenStyle.DashLine))
            painter.setBrush(QColor(245, 158, 11, 35))
            painter.drawRect(QRectF(at(b.left, b.top), at(b.right, b.bottom)))
        kind = rule.action_type
        if kind.is_pointed:
            for x, y in rule.points:
                centre = at(x, y)
                painter.setPen(QPen(POINT_COLOR, 1.5))
                painter.setBrush(TOLERANCE_FILL)
                painter.drawEllipse(centre, rule.radius * sx, rule.radius * sy)
                painter.setBrush(POINT_COLOR)
                painter.drawEllipse(centre, 4, 4)
        elif self._action is None:  # shown as the action it stands for
            stand_in = _stand_in(rule)
            if stand_in is not None:
                draw_action(painter, stand_in, rect, self._screen)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        rect = self._image_rect()
        if not self.picking or rect is None or event.button() != Qt.MouseButton.LeftButton:
            super().mousePressEvent(event)
            return
        pos = event.position()
        x = (pos.x() - rect.x) / rect.width * NORMALIZED_SCREEN[0]
        y = (pos.y() - rect.y) / rect.height * NORMALIZED_SCREEN[1]
        if 0 <= x <= NORMALIZED_SCREEN[0] and 0 <= y <= NORMALIZED_SCREEN[1]:
            self.point_picked.emit(x, y)
        event.accept()
