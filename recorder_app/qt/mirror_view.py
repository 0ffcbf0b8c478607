"""The live mirror: frames scaled with their aspect ratio kept, mouse gestures -> actions.

``MirrorView`` only draws and classifies gestures; it emits every gesture as an Action in
device pixels (``gesture_made``), and the recorder decides whether to accept it.
``MirrorFeed`` pulls frames from a ``devices.mirror.FrameSource`` on a GUI timer (the
source decodes on its own thread; ``latest()`` is cheap) and reports fps and latency.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, QPointF, QRectF, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QColor, QFont, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from graph_builder.hierarchy import Hierarchy, UIElement
from recorder_app.qt.gestures import (
    GestureKind,
    Rect,
    clamp_to_device,
    classify_gesture,
    device_to_widget,
    fit_rect,
    gesture_action,
    widget_to_device,
)
from recorder_app.qt.workers import run_in_background

if TYPE_CHECKING:
    from devices.mirror import FrameSource

log = logging.getLogger(__name__)

BACKGROUND = QColor("#1e2127")
HIGHLIGHT = QColor(255, 196, 0)
TRAIL = QColor(64, 160, 255)
REFUSED = QColor(200, 40, 40, 225)
ACCEPTED = QColor(60, 200, 90)
BADGE = QColor(230, 140, 0)  # a mode the user must not forget, e.g. free drive
BADGE_HEIGHT = 28  # the band sits above the screen, so it hides none of it
REFUSED_NOTICE_MS = 2500  # long enough to read, whatever the recorder does meanwhile
ACCEPTED_FLASH_MS = 350


def qimage_from_array(array: np.ndarray) -> QImage:
    """Wrap an HxWx3 uint8 RGB array without copying; the caller keeps ``array`` alive."""
    if array.ndim != 3 or array.shape[2] != 3 or array.dtype != np.uint8:
        raise ValueError(f"expected an HxWx3 uint8 RGB array, got {array.shape} {array.dtype}")
    if not array.flags["C_CONTIGUOUS"]:
        array = np.ascontiguousarray(array)
    h, w, _ = array.shape
    return QImage(array.data, w, h, array.strides[0], QImage.Format.Format_RGB888)


class MirrorView(QWidget):
    """Shows the phone screen and turns mouse gestures into actions in device pixels."""

    gesture_made = Signal(object)  # Action, device pixels
    pointer_moved = Signal(int, int)  # device pixels under the pointer (-1, -1 when off screen)

    def __init__(
        self, parent: QWidget | None = None, *, clock: Callable[[], float] = time.monotonic
    ):
        super().__init__(parent)
        self.setObjectName("mirrorView")
        self.setMouseTracking(True)
        self.setMinimumSize(200, 240)  # the phone still readable on an 800x500 window
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setCursor(Qt.CursorShape.CrossCursor)
        self._clock = clock
        self._array: np.ndarray | None = None  # keeps the QImage's buffer alive
        self._image: QImage | None = None
        self._device_size: tuple[int, int] | None = None
        self._hierarchy: Hierarchy | None = None
        self._hover: UIElement | None = None
        self._busy_message: str | None = None
        self._placeholder = "No phone selected"
        self._press: tuple[QPointF, float] | None = None
        self._drag: QPointF | None = None
        self._pointer: QPointF | None = None  # last pointer position over the widget
        self._notice: str | None = None  # why the last input was refused
        self._badge: str | None = None  # a band across the top, e.g. "not recorded"
        self._flash: tuple[float, float] | None = None  # device point of an accepted input
        self._notice_timer = QTimer(self)
        self._notice_timer.setSingleShot(True)
        self._notice_timer.timeout.connect(self._on_notice_expired)
        self._flash_timer = QTimer(self)
        self._flash_timer.setSingleShot(True)
        self._flash_timer.timeout.connect(self._on_flash_expired)

    # -- content

    def set_frame(self, array: np.ndarray, device_size: tuple[int, int]) -> None:
        """Show a live frame (RGB array); actions map through ``device_size``."""
        self._array = array
        self._image = qimage_from_array(array)
        self._device_size = device_size
        self.update()

    def show_still(self, png: bytes, device_size: tuple[int, int]) -> None:
        """Show a screenshot when no live frame is available."""
        image = QImage.fromData(png)
        if image.isNull():
            return
        self._array = None
        self._image = image
        self._device_size = device_size
        self.update()

    def clear(self, placeholder: str) -> None:
        self._array = None
        self._image = None
        self._device_size = None
        self._placeholder = placeholder
        self.set_hierarchy(None)

    def set_hierarchy(self, hierarchy: Hierarchy | None) -> None:
        """The pre-action hierarchy used for the hover highlight (None while busy)."""
        self._hierarchy = hierarchy
        self._hover = self._element_under(self._pointer) if self._pointer is not None else None
        self.update()

    def set_busy(self, message: str | None) -> None:
        """Draw a busy overlay with ``message``; None removes it (and starts the clock of a
        refusal notice, so it stays readable for a while on the ready screen)."""
        if message != self._busy_message:
            self._busy_message = message
            if message is None and self._notice is not None:
                # A refusal made while busy is read once the screen shows again.
                self._notice_timer.start(REFUSED_NOTICE_MS)
            self.update()

    def set_badge(self, text: str | None) -> None:
        """A band across the top of the screen that stays until removed (None)."""
        if text != self._badge:
            self._badge = text
            self.update()

    @property
    def badge(self) -> str | None:
        return self._badge

    def show_refused(self, message: str) -> None:
        """A red banner saying why an input was not recorded, kept up for a few seconds."""
        self._notice = message
        self._notice_timer.stop()
        if self._busy_message is None:
            self._notice_timer.start(REFUSED_NOTICE_MS)
        self.update()

    def flash_accepted(self, point: tuple[float, float] | None) -> None:
        """A short green ring where an accepted input landed (a frame around the screen
        for inputs without a point, such as Back)."""
        self._flash = point if point is not None else (-1.0, -1.0)
        self._flash_timer.start(ACCEPTED_FLASH_MS)
        self.update()

    def clear_notice(self) -> None:
        """An accepted input answers the refusal before it."""
        if self._notice is not None:
            self._notice_timer.stop()
            self._on_notice_expired()

    @property
    def notice(self) -> str | None:
        return self._notice

    @property
    def flashing(self) -> bool:
        return self._flash is not None

    @Slot()
    def _on_notice_expired(self) -> None:
        self._notice = None
        self.update()

    @Slot()
    def _on_flash_expired(self) -> None:
        self._flash = None
        self.update()

    @property
    def device_size(self) -> tuple[int, int] | None:
        return self._device_size

    @property
    def hovered_element(self) -> UIElement | None:
        return self._hover

    def image_rect(self) -> Rect:
        if self._image is None:
            return Rect(0.0, 0.0, 0.0, 0.0)
        top = BADGE_HEIGHT if self._badge else 0
        rect = fit_rect(
            (self._image.width(), self._image.height()), (self.width(), self.height() - top)
        )
        return Rect(rect.x, rect.y + top, rect.width, rect.height)

    def device_point(self, pos: QPointF) -> tuple[int, int] | None:
        if self._device_size is None:
            return None
        return widget_to_device(pos.x(), pos.y(), self.image_rect(), self._device_size)

    def widget_point(self, x: float, y: float) -> QPointF:
        """Where device pixel (x, y) is drawn (tests and overlays use it)."""
        assert self._device_size is not None
        wx, wy = device_to_widget(x, y, self.image_rect(), self._device_size)
        return QPointF(wx, wy)

    # -- mouse

    def mousePressEvent(self, event: QMouseEvent) -> None:
        inside = self.device_point(event.position()) is not None
        if event.button() != Qt.MouseButton.LeftButton or not inside:
            return super().mousePressEvent(event)
        self._press = (event.position(), self._clock())
        self._drag = event.position()
        self.update()

    def _element_under(self, pos: QPointF) -> UIElement | None:
        point = self.device_point(pos)
        if point is None or self._hierarchy is None or self._press is not None:
            return None
        return self._hierarchy.element_at(*point)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        self._pointer = pos
        if self._press is not None:
            self._drag = pos
        point = self.device_point(pos)
        hover = self._element_under(pos)
        if hover != self._hover or self._press is not None:
            self._hover = hover
            self.update()
        self.pointer_moved.emit(*(point or (-1, -1)))

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._press is None:
            return super().mouseReleaseEvent(event)
        (start_pos, started), self._press, self._drag = self._press, None, None
        self.update()
        if self._device_size is None:
            return
        end_pos = event.position()
        held_ms = (self._clock() - started) * 1000
        rect = self.image_rect()
        start = clamp_to_device(start_pos.x(), start_pos.y(), rect, self._device_size)
        end = clamp_to_device(end_pos.x(), end_pos.y(), rect, self._device_size)
        kind = classify_gesture(start, end, held_ms=held_ms, device_size=self._device_size)
        element = None
        if kind is not GestureKind.SWIPE and self._hierarchy is not None:
            found = self._hierarchy.element_at(*start)
            element = found.ref() if found else None
        action = gesture_action(
            kind, start, end, held_ms=held_ms, device_size=self._device_size, element=element
        )
        self.gesture_made.emit(action)

    def leaveEvent(self, event: object) -> None:
        self._pointer = None
        if self._hover is not None:
            self._hover = None
            self.update()
        self.pointer_moved.emit(-1, -1)

    # -- drawing

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), BACKGROUND)
        if self._image is None:
            painter.setPen(QColor("#9aa0a6"))
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self._placeholder)
            return
        rect = self.image_rect()
        target = QRectF(rect.x, rect.y, rect.width, rect.height)
        painter.drawImage(target, self._image)
        if self._hover is not None and self._device_size is not None:
            b = self._hover.bounds
            tl = self.widget_point(b.left, b.top)
            br = self.widget_point(b.right, b.bottom)
            painter.setPen(QPen(HIGHLIGHT, 2))
            painter.setBrush(QColor(255, 196, 0, 40))
            painter.drawRect(QRectF(tl, br))
        if self._press is not None and self._drag is not None:
            painter.setPen(QPen(TRAIL, 3))
            painter.setBrush(QColor(64, 160, 255, 90))
            start = self._press[0]
            painter.drawEllipse(start, 10, 10)
            painter.drawLine(start, self._drag)
        if self._busy_message:
            painter.fillRect(target, QColor(20, 22, 26, 150))
            font = QFont(painter.font())
            font.setPointSizeF(font.pointSizeF() * 1.2)
            font.setBold(True)
            painter.setFont(font)
            painter.setPen(QColor("white"))
            painter.drawText(
                target, Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self._busy_message
            )
        if self._flash is not None and self._device_size is not None:
            painter.setPen(QPen(ACCEPTED, 4))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            if self._flash[0] < 0:
                painter.drawRect(target.adjusted(2, 2, -2, -2))
            else:
                painter.drawEllipse(self.widget_point(*self._flash), 22, 22)
        if self._badge:
            self._draw_badge(painter, target, self._badge)
        if self._notice:
            font = QFont(painter.font())
            font.setBold(True)
            painter.setFont(font)
            band = QRectF(target.left(), target.bottom() - 64, target.width(), 64)
            painter.fillRect(band, REFUSED)
            painter.setPen(QColor("white"))
            painter.drawText(
                band.adjusted(8, 4, -8, -4),
                Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                self._notice,
            )

    def _draw_badge(self, painter: QPainter, target: QRectF, text: str) -> None:
        font = QFont(painter.font())
        font.setBold(True)
        painter.setFont(font)
        band = QRectF(0, target.top() - BADGE_HEIGHT, self.width(), BADGE_HEIGHT)
        painter.fillRect(band, BADGE)
        painter.setPen(QColor("black"))
        painter.drawText(
            band.adjusted(4, 0, -4, 0),
            Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
            text,
        )


class MirrorFeed(QObject):
    """Pulls frames from a FrameSource into a MirrorView and reports its health."""

    started = Signal(str, str)  # source name, fallback reason ('' when none)
    stats_updated = Signal(str, float, float)  # source name, fps, frame age at display in ms
    failed = Signal(str)
    stopped = Signal()

    def __init__(self, view: MirrorView, parent: QObject | None = None, *, interval_ms: int = 16):
        super().__init__(parent)
        self._view = view
        self._source: FrameSource | None = None
        self._last_index = -1
        self._generation = 0  # ignores sources that finish starting after a newer request
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_tick)
        self._stats_timer = QTimer(self)
        self._stats_timer.setInterval(1000)
        self._stats_timer.timeout.connect(self._on_stats_due)
        self._latency_ms = 0.0

    @property
    def source(self) -> FrameSource | None:
        return self._source

    def start(self, open_source: Callable[[], FrameSource]) -> None:
        """Open a started frame source in the background (scrcpy start-up takes a while)."""
        self.stop()
        self._generation += 1
        generation = self._generation
        run_in_background(
            open_source,
            on_done=lambda source: self._on_source_started(generation, source),
            on_error=lambda exc: self._on_source_failed(generation, exc),
        )

    def stop(self) -> None:
        self._generation += 1
        self._timer.stop()
        self._stats_timer.stop()
        source, self._source = self._source, None
        self._last_index = -1
        if source is not None:
            run_in_background(source.stop)
            self.stopped.emit()

    def stop_now(self) -> None:
        """Stop synchronously (on quit, when background jobs would outlive the app)."""
        self._generation += 1
        self._timer.stop()
        self._stats_timer.stop()
        source, self._source = self._source, None
        if source is not None:
            try:
                source.stop()
            except Exception:
                log.debug("stopping the frame source failed", exc_info=True)

    def _on_source_started(self, generation: int, source: FrameSource) -> None:
        if generation != self._generation:
            run_in_background(source.stop)
            return
        self._source = source
        self._timer.start()
        self._stats_timer.start()
        reason = source.fallback_reason or ""
        self.started.emit(source.name, reason)

    def _on_source_failed(self, generation: int, exc: Exception) -> None:
        if generation == self._generation:
            self.failed.emit(f"The live mirror could not start: {exc}")

    @Slot()
    def _on_tick(self) -> None:
        source = self._source
        if source is None:
            return
        frame = source.latest()
        if frame is None or frame.index == self._last_index:
            error = source.error
            if error:
                self._timer.stop()
                self._stats_timer.stop()
                self._source = None
                run_in_background(source.stop)
                self.failed.emit(f"The live mirror stopped: {error}")
            return
        self._last_index = frame.index
        self._latency_ms = max(0.0, (time.time() - frame.time) * 1000)
        self._view.set_frame(frame.array, frame.device_size)

    @Slot()
    def _on_stats_due(self) -> None:
        source = self._source
        if source is not None:
            self.stats_updated.emit(
                source.name,
                float(source.fps()),
                self._latency_ms,
            )
