"""The canvas: zoom (Ctrl+wheel, +/-), pan (drag the background), fit (F), and a minimap.

The minimap sits in the view's bottom-right corner, shows the whole graph with the
visible part outlined, and moves the view where it is clicked or dragged.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRect, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPen, QResizeEvent, QWheelEvent
from PySide6.QtWidgets import QFrame, QGraphicsScene, QGraphicsView, QWidget

MIN_ZOOM = 0.08
MAX_ZOOM = 4.0
ZOOM_STEP = 1.25


class GraphEditorView(QGraphicsView):
    zoom_changed = Signal(float)

    def __init__(self, scene: QGraphicsScene, parent: QWidget | None = None) -> None:
        super().__init__(scene, parent)
        self.setObjectName("graphEditorView")
        self.setRenderHints(
            QPainter.RenderHint.Antialiasing | QPainter.RenderHint.SmoothPixmapTransform
        )
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setToolTip(
            "Click a screen or an edge to inspect it · Ctrl+click to select several · "
            "drag the background to pan · Ctrl+wheel or +/- to zoom · F to fit"
        )
        self.minimap = MinimapView(self)
        self.horizontalScrollBar().valueChanged.connect(self.minimap.viewport().update)
        self.verticalScrollBar().valueChanged.connect(self.minimap.viewport().update)
        scene.sceneRectChanged.connect(self._on_scene_rect_changed)

    @property
    def zoom(self) -> float:
        return self.transform().m11()

    def set_zoom(self, factor: float) -> None:
        factor = max(MIN_ZOOM, min(MAX_ZOOM, factor))
        scale = factor / self.zoom
        if abs(scale - 1) > 1e-6:
            self.scale(scale, scale)
            self.zoom_changed.emit(self.zoom)
            self.minimap.viewport().update()

    def zoom_in(self) -> None:
        self.set_zoom(self.zoom * ZOOM_STEP)

    def zoom_out(self) -> None:
        self.set_zoom(self.zoom / ZOOM_STEP)

    def fit_all(self) -> None:
        """Show the whole graph (never magnified beyond 100 %)."""
        scene = self.scene()
        rect = scene.itemsBoundingRect() if scene is not None else QRectF()
        if rect.isEmpty():
            return
        self.fitInView(rect.adjusted(-30, -30, 30, 30), Qt.AspectRatioMode.KeepAspectRatio)
        if self.zoom > 1.0:
            self.set_zoom(1.0)
            self.centerOn(rect.center())
        self.zoom_changed.emit(self.zoom)
        self.minimap.viewport().update()

    def visible_scene_rect(self) -> QRectF:
        return self.mapToScene(self.viewport().rect()).boundingRect()

    # -- events

    def wheelEvent(self, event: QWheelEvent) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            steps = event.angleDelta().y() / 120
            if steps:
                self.set_zoom(self.zoom * ZOOM_STEP**steps)
            event.accept()
            return
        super().wheelEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self.setFocus(Qt.FocusReason.MouseFocusReason)
        super().mousePressEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.minimap.place()

    def _on_scene_rect_changed(self, rect: QRectF) -> None:
        self.minimap.refit()


class MinimapView(QGraphicsView):
    """An overview of the whole scene; the outlined box is what the main view shows."""

    SIZE = (200, 140)

    def __init__(self, main: GraphEditorView) -> None:
        super().__init__(main.scene(), main)
        self.setObjectName("graphMinimap")
        self._main = main
        self.setInteractive(False)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setRenderHints(QPainter.RenderHint.SmoothPixmapTransform)
        self.setFrameShape(QFrame.Shape.Box)
        self.setStyleSheet("QGraphicsView#graphMinimap { border: 1px solid #94a3b8; }")
        self.setToolTip("Overview: click or drag to move the view")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.resize(*self.SIZE)
        self.place()

    def place(self) -> None:
        parent = self._main.viewport()
        w, h = self.SIZE
        x = parent.width() - w - 12
        y = parent.height() - h - 12
        self.setGeometry(max(0, x), max(0, y), w, h)
        self.setVisible(parent.width() > 2 * w and parent.height() > 2 * h)
        self.refit()

    def refit(self) -> None:
        scene = self.scene()
        if scene is None:
            return
        rect = scene.sceneRect()
        if not rect.isEmpty():
            self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        self.viewport().update()

    def drawForeground(self, painter: QPainter, rect: QRectF | QRect) -> None:
        visible = self._main.visible_scene_rect()
        painter.setPen(QPen(QColor("#f59e0b"), 0))  # cosmetic: one pixel at any scale
        painter.setBrush(QColor(245, 158, 11, 40))
        painter.drawRect(visible)

    def _move_main(self, event: QMouseEvent) -> None:
        target: QPointF = self.mapToScene(event.position().toPoint())
        self._main.centerOn(target)
        self.viewport().update()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._move_main(event)
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._move_main(event)
        event.accept()

    def wheelEvent(self, event: QWheelEvent) -> None:
        event.accept()
