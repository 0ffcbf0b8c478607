"""The canvas: zoom (Ctrl+wheel, +/-), pan (drag the background), fit (F), keys, a minimap.

The minimap (an overview of the whole graph with the visible part outlined; click or drag
in it to move the view) sits in a strip below the canvas, never over it, so it covers no
node at any zoom; the strip also names the keys, and folds to one line (or on its own when
the canvas is short). Fit never shrinks labels below ``READABLE_PX`` on screen: a graph
too big for that is shown from its start, and the rest is a scroll away.

Keys: arrows select the nearest screen in that direction (Shift adds it to the
selection); Alt+arrows move the selected screens (Alt+Shift: a larger step). The view
only reports them (``selection_stepped``, ``nudged``); the page acts.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, QRect, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPen,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsScene,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolButton,
    QWidget,
)

from recorder_app.qt.graph_editor.scene import LABEL_PX

MIN_ZOOM = 0.08
MAX_ZOOM = 4.0
ZOOM_STEP = 1.25
READABLE_PX = 9.0  # the smallest label size on screen that Fit allows
FIT_MIN_ZOOM = READABLE_PX / LABEL_PX
FIT_MARGIN = 30.0
NUDGE = 10.0  # scene pixels per Alt+arrow
NUDGE_FAR = 50.0  # with Shift as well

ARROWS = {
    Qt.Key.Key_Left: (-1, 0),
    Qt.Key.Key_Right: (1, 0),
    Qt.Key.Key_Up: (0, -1),
    Qt.Key.Key_Down: (0, 1),
}
KEYS_SHORT = "Arrows select · Alt+arrows move · F fit"
KEYS_HINT = (
    "Arrows: select the nearest screen · Shift+arrows: add it · Alt+arrows: move "
    "(Alt+Shift: farther) · F: fit · +/-: zoom"
)


def _plain(event: QKeyEvent) -> Qt.KeyboardModifier:
    return event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier


class GraphEditorView(QGraphicsView):
    zoom_changed = Signal(float)
    selection_stepped = Signal(int, int, bool)  # direction (dx, dy); add to the selection
    nudged = Signal(float, float)  # move the selected screens by this much (scene pixels)

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
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setToolTip(
            "Click a screen or an edge to inspect it · Ctrl+click to select several · "
            "drag the background to pan · Ctrl+wheel or +/- to zoom · F to fit\n" + KEYS_HINT
        )
        self.strip = MinimapStrip(self)
        self.minimap = self.strip.minimap
        self.horizontalScrollBar().valueChanged.connect(self.minimap.viewport().update)
        self.verticalScrollBar().valueChanged.connect(self.minimap.viewport().update)
        scene.sceneRectChanged.connect(self._on_scene_rect_changed)
        self.strip.toggled.connect(self._on_strip_toggled)
        self._place_strip()

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
        """Show the whole graph, never magnified beyond 100 % nor shrunk below readable.

        When even the readable zoom cannot show it all, the view starts at the graph's
        top-left corner (START is leftmost) and scrolls to the rest.
        """
        scene = self.scene()
        rect = scene.itemsBoundingRect() if scene is not None else QRectF()
        if rect.isEmpty():
            return
        padded = rect.adjusted(-FIT_MARGIN, -FIT_MARGIN, FIT_MARGIN, FIT_MARGIN)
        viewport = self.viewport().rect()
        fitting = min(viewport.width() / padded.width(), viewport.height() / padded.height())
        self.set_zoom(max(FIT_MIN_ZOOM, min(1.0, fitting)))
        seen_w = viewport.width() / self.zoom
        seen_h = viewport.height() / self.zoom
        x = padded.center().x() if padded.width() <= seen_w else padded.left() + seen_w / 2
        y = padded.center().y() if padded.height() <= seen_h else padded.top() + seen_h / 2
        self.centerOn(QPointF(x, y))
        self.zoom_changed.emit(self.zoom)
        self.minimap.viewport().update()

    def visible_scene_rect(self) -> QRectF:
        return self.mapToScene(self.viewport().rect()).boundingRect()

    # -- events

    def event(self, event: QEvent) -> bool:
        # The arrows are this view's own keys while it has the focus, before any shortcut.
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.key() in ARROWS
            and self._arrow_use(event) is not None
        ):
            event.accept()
            return True
        return super().event(event)

    def _arrow_use(self, event: QKeyEvent) -> str | None:
        mods = _plain(event)
        alt, shift = Qt.KeyboardModifier.AltModifier, Qt.KeyboardModifier.ShiftModifier
        if mods in (alt, alt | shift):
            return "nudge"
        if mods in (Qt.KeyboardModifier.NoModifier, shift):
            return "select"
        return None

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        use = self._arrow_use(event) if event.key() in ARROWS else None
        if use is None:
            super().keyPressEvent(event)
            return
        dx, dy = ARROWS[Qt.Key(event.key())]
        shift = bool(_plain(event) & Qt.KeyboardModifier.ShiftModifier)
        if use == "nudge":
            step = NUDGE_FAR if shift else NUDGE
            self.nudged.emit(dx * step, dy * step)
        else:
            self.selection_stepped.emit(dx, dy, shift)
        event.accept()

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
        self._place_strip()

    def _place_strip(self) -> None:
        """Keep the strip below the canvas: the viewport gives up exactly its height."""
        inner = self.contentsRect()
        roomy = (
            inner.height() > 3 * MinimapStrip.OPEN_HEIGHT
            and inner.width() > MinimapView.SIZE[0] + MinimapStrip.HINT_WIDTH
        )
        self.strip.set_open(self.strip.wanted_open and roomy)
        height = self.strip.height_now()
        self.setViewportMargins(0, 0, 0, height)
        canvas = self.viewport().geometry()
        self.strip.setGeometry(QRect(canvas.left(), canvas.bottom() + 1, canvas.width(), height))
        self.strip.minimap.refit()

    def _on_strip_toggled(self, _open: bool) -> None:
        self._place_strip()

    def _on_scene_rect_changed(self, rect: QRectF) -> None:
        self.minimap.refit()


class MinimapStrip(QFrame):
    """Below the canvas: the keys on the left, the minimap and its fold button on the right."""

    OPEN_HEIGHT = 110
    FOLDED_HEIGHT = 24
    HINT_WIDTH = 150  # the keys beside the minimap need this much, else the strip folds
    toggled = Signal(bool)

    def __init__(self, main: GraphEditorView) -> None:
        super().__init__(main)
        self.setObjectName("graphMinimapStrip")
        self.wanted_open = True
        self.hint = QLabel(KEYS_HINT)
        self.hint.setObjectName("graphKeysHint")
        self.hint.setWordWrap(True)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom)
        self.hint.setStyleSheet("color: #475569;")
        self.hint.setToolTip(KEYS_HINT)
        self.hint.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.minimap = MinimapView(main, self)
        self.fold_button = QToolButton()
        self.fold_button.setObjectName("minimapToggle")
        self.fold_button.setCheckable(True)
        self.fold_button.setChecked(True)
        self.fold_button.setText("Overview")
        self.fold_button.setToolTip("Show or hide the overview of the whole graph")
        self.fold_button.toggled.connect(self._on_fold_toggled)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.addWidget(self.hint, 1)
        layout.addWidget(self.minimap)
        layout.addWidget(self.fold_button, 0, Qt.AlignmentFlag.AlignBottom)
        self._open = True

    @property
    def is_open(self) -> bool:
        return self._open

    def height_now(self) -> int:
        return self.OPEN_HEIGHT if self._open else self.FOLDED_HEIGHT

    def set_open(self, value: bool) -> None:
        self._open = value
        self.minimap.setVisible(value)
        self.hint.setWordWrap(value)
        self.hint.setText(KEYS_HINT if value else KEYS_SHORT)

    def _on_fold_toggled(self, checked: bool) -> None:
        self.wanted_open = checked
        self.toggled.emit(checked)


class MinimapView(QGraphicsView):
    """An overview of the whole scene; the outlined box is what the main view shows."""

    SIZE = (170, MinimapStrip.OPEN_HEIGHT - 8)

    def __init__(self, main: GraphEditorView, parent: QWidget) -> None:
        super().__init__(main.scene(), parent)
        self.setObjectName("graphMinimap")
        self._main = main
        self.setInteractive(False)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setRenderHints(QPainter.RenderHint.SmoothPixmapTransform)
        self.setFrameShape(QFrame.Shape.Box)
        self.setStyleSheet("QGraphicsView#graphMinimap { border: 1px solid #94a3b8; }")
        self.setToolTip("Overview: click or drag to move the view")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFixedSize(*self.SIZE)

    def refit(self) -> None:
        scene = self.scene()
        if scene is None:
            return
        rect = scene.sceneRect()
        if not rect.isEmpty():
            self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        self.viewport().update()

    def drawForeground(self, painter: QPainter, rect: QRect | QRectF) -> None:
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
