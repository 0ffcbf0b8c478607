"""The graph drawn: screenshot thumbnails left to right by depth from START, edges between.

Node items hold a node id, edge items an edge id; the scene is redrawn from the model on
every change (task graphs have tens of nodes, not thousands). A glyph on each edge says
what the action is: a dot for a tap, a ringed dot for a long press, an arrow for a swipe,
"T" and the text for typing, and icons for back, home and wait.

Drag from a node's handle (the circle on its right side), or Shift+drag a node, onto
another node to ask for a new edge: the scene emits ``edge_drawn(source, target)``. Drag a
node to move it: its edges follow, and on release the scene emits ``nodes_dragged`` (the
page makes the move an undoable step). Where nodes go is the caller's (``positions``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
    QPen,
    QPixmap,
    QPolygonF,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsLineItem,
    QGraphicsScene,
    QGraphicsSceneMouseEvent,
    QStyleOptionGraphicsItem,
    QWidget,
)

from graph_builder.model import ActionType, Edge, NodeKind, SwipeDirection, TaskGraph
from recorder_app.qt.graph_editor.layout import Point, Size, Spacing, layered_positions

THUMB_WIDTH = 160.0  # wide enough to read a phone screen's text at 100 %
MAX_THUMB_HEIGHT = 360.0
COLUMN_GAP = 230.0
ROW_GAP = 70.0
HEADER = 20.0
LABEL_PX = 13  # node titles and edge captions; Fit never shrinks them below READABLE_PX

KIND_COLORS = {
    NodeKind.START: QColor("#2563eb"),
    NodeKind.STATE: QColor("#6b7280"),
    NodeKind.DONE: QColor("#15803d"),
}
SELECTED = QColor("#f59e0b")
PROBLEM = QColor("#dc2626")
EDGE_COLOR = QColor("#475569")
GLYPH_FILL = QColor("#ffffff")


def node_size(screen: tuple[int, int]) -> tuple[float, float]:
    """Thumbnail size for a screen: fixed width, the screen's aspect, capped height."""
    height = THUMB_WIDTH * screen[1] / max(screen[0], 1)
    return THUMB_WIDTH, min(height, MAX_THUMB_HEIGHT)


def node_sizes(graph: TaskGraph) -> dict[str, Size]:
    return {n.id: node_size(n.screen) for n in graph.nodes}


def spacing_for(sizes: Mapping[str, Size]) -> Spacing:
    """The grid of the layered layout; new nodes keep off others by a header and a port."""
    row = max((h for _, h in sizes.values()), default=0) + HEADER + ROW_GAP
    return Spacing(column=THUMB_WIDTH + COLUMN_GAP, row=row, margin=HEADER + 2 * PortItem.RADIUS)


def edge_caption(edge: Edge, target: str = "") -> str:
    """A few words for an edge: the tapped element, the direction, the typed text.

    ``target`` names what a pointed action touched, when the caller could look it up.
    """
    rule = edge.rule
    kind = rule.action_type
    if kind.is_pointed:
        if target:
            return target
        if rule.points:
            x, y = rule.points[0]
            return f"({x:.0f}, {y:.0f})"
        return "element" if rule.bounds else ""
    if kind is ActionType.SWIPE:
        return rule.direction.value if rule.direction else "swipe"
    if kind is ActionType.TYPE:
        return f"“{rule.texts[0]}”" if rule.texts else "type"
    return kind.value


# --------------------------------------------------------------------------- glyphs


def _glyph_tap(p: QPainter, c: QPointF, r: float, direction: SwipeDirection | None) -> None:
    p.setBrush(EDGE_COLOR)
    p.drawEllipse(c, r * 0.45, r * 0.45)


def _glyph_long_press(p: QPainter, c: QPointF, r: float, direction: SwipeDirection | None) -> None:
    _glyph_tap(p, c, r, direction)
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawEllipse(c, r * 0.8, r * 0.8)


_DIRECTIONS = {
    SwipeDirection.UP: (0.0, -1.0),
    SwipeDirection.DOWN: (0.0, 1.0),
    SwipeDirection.LEFT: (-1.0, 0.0),
    SwipeDirection.RIGHT: (1.0, 0.0),
}


def _glyph_swipe(p: QPainter, c: QPointF, r: float, direction: SwipeDirection | None) -> None:
    dx, dy = _DIRECTIONS[direction or SwipeDirection.UP]
    tip = c + QPointF(dx, dy) * r * 0.8
    tail = c - QPointF(dx, dy) * r * 0.8
    p.drawLine(tail, tip)
    side = QPointF(-dy, dx) * r * 0.45
    back = tip - QPointF(dx, dy) * r * 0.5
    p.setBrush(EDGE_COLOR)
    p.drawPolygon(QPolygonF([tip, back + side, back - side]))


def _glyph_type(p: QPainter, c: QPointF, r: float, direction: SwipeDirection | None) -> None:
    font = QFont(p.font())
    font.setBold(True)
    font.setPixelSize(int(r * 1.4))
    p.setFont(font)
    p.drawText(QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r), Qt.AlignmentFlag.AlignCenter, "T")


def _glyph_back(p: QPainter, c: QPointF, r: float, direction: SwipeDirection | None) -> None:
    p.setBrush(EDGE_COLOR)
    p.drawPolygon(
        QPolygonF(
            [
                c + QPointF(-r * 0.7, 0),
                c + QPointF(r * 0.5, -r * 0.6),
                c + QPointF(r * 0.5, r * 0.6),
            ]
        )
    )


def _glyph_home(p: QPainter, c: QPointF, r: float, direction: SwipeDirection | None) -> None:
    p.setBrush(EDGE_COLOR)
    p.drawPolygon(
        QPolygonF(
            [
                c + QPointF(0, -r * 0.75),
                c + QPointF(r * 0.75, -r * 0.05),
                c + QPointF(r * 0.5, -r * 0.05),
                c + QPointF(r * 0.5, r * 0.65),
                c + QPointF(-r * 0.5, r * 0.65),
                c + QPointF(-r * 0.5, -r * 0.05),
                c + QPointF(-r * 0.75, -r * 0.05),
            ]
        )
    )


def _glyph_wait(p: QPainter, c: QPointF, r: float, direction: SwipeDirection | None) -> None:
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawEllipse(c, r * 0.7, r * 0.7)
    p.drawLine(c, c + QPointF(0, -r * 0.5))
    p.drawLine(c, c + QPointF(r * 0.35, 0))


def _glyph_done(p: QPainter, c: QPointF, r: float, direction: SwipeDirection | None) -> None:
    p.drawLine(c + QPointF(-r * 0.5, 0), c + QPointF(-r * 0.1, r * 0.4))
    p.drawLine(c + QPointF(-r * 0.1, r * 0.4), c + QPointF(r * 0.6, -r * 0.5))


GLYPHS: dict[ActionType, Callable[[QPainter, QPointF, float, SwipeDirection | None], None]] = {
    ActionType.TAP: _glyph_tap,
    ActionType.LONG_PRESS: _glyph_long_press,
    ActionType.SWIPE: _glyph_swipe,
    ActionType.TYPE: _glyph_type,
    ActionType.BACK: _glyph_back,
    ActionType.HOME: _glyph_home,
    ActionType.WAIT: _glyph_wait,
    ActionType.DONE: _glyph_done,
}


# --------------------------------------------------------------------------- items


def _caption_font() -> QFont:
    font = QFont()
    font.setPixelSize(LABEL_PX)
    return font


@dataclass(frozen=True, slots=True)
class NodeLook:
    """What a node item shows (plain values, so the item keeps no model object)."""

    kind: NodeKind
    title: str
    size: tuple[float, float]
    problem: str = ""


class NodeItem(QGraphicsItem):
    def __init__(self, node_id: str, look: NodeLook, picture: QPixmap | None) -> None:
        super().__init__()
        self.node_id = node_id
        self.look = look
        self._picture = picture
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsMovable)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges)
        self.setAcceptHoverEvents(True)
        self.setZValue(1)
        tip = f"{look.title}\n{look.problem}" if look.problem else look.title
        self.setToolTip(
            tip + "\nDrag to move it (Alt+arrows too) · drag the handle on the right onto "
            "another screen to add an edge"
        )
        self.port = PortItem(self)
        w, h = look.size
        self.port.setPos(w + 4, h / 2)

    def itemChange(self, change: QGraphicsItem.GraphicsItemChange, value: object) -> object:  # noqa: N802 - Qt's name
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged:
            scene = self.scene()
            if isinstance(scene, GraphScene):
                scene.node_dragging(self.node_id)
        return super().itemChange(change, value)

    @property
    def has_picture(self) -> bool:
        return self._picture is not None and not self._picture.isNull()

    @property
    def frame(self) -> QRectF:
        w, h = self.look.size
        return QRectF(0, 0, w, h)

    def boundingRect(self) -> QRectF:
        return self.frame.adjusted(-8, -HEADER - 4, 8, 8)

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        path.addRect(self.frame.adjusted(-4, -HEADER, 4, 4))
        return path

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        frame = self.frame
        kind = self.look.kind
        color = KIND_COLORS[kind]
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        if self._picture is not None and not self._picture.isNull():
            painter.drawPixmap(frame, self._picture, QRectF(self._picture.rect()))
        else:
            painter.fillRect(frame, QColor("#e5e7eb"))
            painter.setPen(QColor("#6b7280"))
            painter.drawText(frame, Qt.AlignmentFlag.AlignCenter, "no picture")
        if kind is NodeKind.DONE:  # a light veil keeps DONE screens recognisable at a glance
            painter.fillRect(frame, QColor(21, 128, 61, 28))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        width = 2.0 if kind is NodeKind.STATE else 4.0
        if self.isSelected():
            painter.setPen(QPen(SELECTED, 4))
            painter.drawRect(frame.adjusted(-5, -5, 5, 5))
        painter.setPen(QPen(color, width))
        painter.drawRect(frame)
        font = QFont(painter.font())
        font.setPixelSize(LABEL_PX)
        if kind is not NodeKind.STATE:  # a ribbon across the bottom says START or DONE
            ribbon = QRectF(frame.left(), frame.bottom() - 20, frame.width(), 20)
            painter.fillRect(ribbon, color)
            font.setBold(True)
            painter.setFont(font)
            painter.setPen(QColor("white"))
            mark = "✓ DONE" if kind is NodeKind.DONE else "▶ START"
            painter.drawText(ribbon, Qt.AlignmentFlag.AlignCenter, mark)
        font.setBold(False)
        painter.setFont(font)
        painter.setPen(QColor("#111827"))
        header = QRectF(frame.left(), frame.top() - HEADER - 2, frame.width(), HEADER)
        title = painter.fontMetrics().elidedText(
            self.look.title, Qt.TextElideMode.ElideRight, int(header.width())
        )
        painter.drawText(header, Qt.AlignmentFlag.AlignVCenter, title)
        if self.look.problem:
            c = QPointF(frame.right() - 10, frame.top() + 10)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(PROBLEM)
            painter.drawEllipse(c, 9, 9)
            painter.setPen(QColor("white"))
            font.setBold(True)
            painter.setFont(font)
            painter.drawText(
                QRectF(c.x() - 9, c.y() - 9, 18, 18), Qt.AlignmentFlag.AlignCenter, "!"
            )


class PortItem(QGraphicsItem):
    """The handle to drag a new edge from."""

    RADIUS = 7.0

    def __init__(self, parent: NodeItem) -> None:
        super().__init__(parent)
        self.setAcceptHoverEvents(True)
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setToolTip("Drag onto another screen to add an edge")
        self.setZValue(2)

    @property
    def node_id(self) -> str:
        parent = self.parentItem()
        assert isinstance(parent, NodeItem)
        return parent.node_id

    def boundingRect(self) -> QRectF:
        r = self.RADIUS + 1
        return QRectF(-r, -r, 2 * r, 2 * r)

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(QColor("#1f2937"), 1.5))
        painter.setBrush(QColor("#fde68a"))
        painter.drawEllipse(QPointF(0, 0), self.RADIUS, self.RADIUS)


BADGE_SPOTS = (0.5, 0.42, 0.58, 0.34, 0.66, 0.26, 0.74, 0.18, 0.82)


class EdgeItem(QGraphicsItem):
    GLYPH_RADIUS = 9.0

    def __init__(
        self, edge: Edge, path: QPainterPath, caption: str = "", problem: str = ""
    ) -> None:
        super().__init__()
        self.edge_id = edge.id
        self.source_id, self.target_id = edge.source, edge.target
        self.pair_index = 0.0  # among the edges between the same two nodes, centred on 0
        self.action_type = edge.rule.action_type
        self.direction = edge.rule.direction
        self._path = path
        self._caption = caption or edge_caption(edge)
        self.problem = problem
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setZValue(0)
        rule = edge.rule
        lines = [f"{edge.id}: {edge.source} → {edge.target}", rule.action_type.value]
        if self._caption and self._caption != rule.action_type.value:
            lines[-1] += f" {self._caption}"
        lines.append(f"{len(edge.support)} demonstrated")
        if problem:
            lines.append(problem)
        self.setToolTip("\n".join(lines))
        self._glyph_center = path.pointAtPercent(0.5)
        self._badge = self._badge_rect()

    @property
    def badge(self) -> QRectF:
        return self._badge

    def set_path(self, path: QPainterPath) -> None:
        """Follow a node being dragged (the badge goes to the middle; placed on release)."""
        self.prepareGeometryChange()
        self._path = path
        self._glyph_center = path.pointAtPercent(0.5)
        self._badge = self._badge_rect()

    def place_badge(self, obstacles: list[QRectF]) -> None:
        """Slide the badge along the edge to where it hides the least, nearest the middle."""

        def hidden(t: float) -> float:
            self._glyph_center = self._path.pointAtPercent(t)
            self._badge = self._badge_rect()
            overlaps = (self._badge.intersected(o) for o in obstacles)
            return sum(r.width() * r.height() for r in overlaps if not r.isEmpty())

        best = min(BADGE_SPOTS, key=hidden)  # min keeps the first (most central) of ties
        hidden(best)

    def _badge_rect(self) -> QRectF:
        r = self.GLYPH_RADIUS
        caption_w = 0.0
        if self._caption:
            caption_w = min(
                QFontMetricsF(_caption_font()).horizontalAdvance(self._caption) + 8, 130.0
            )
        c = self._glyph_center  # the badge is centred on the line, the glyph at its left
        width = 2 * r + 6 + caption_w
        return QRectF(c.x() - width / 2, c.y() - r - 2, width, 2 * r + 4)

    def boundingRect(self) -> QRectF:
        return (
            self._path.boundingRect()
            .adjusted(-10, -10, 10, 10)
            .united(self._badge.adjusted(-4, -4, 4, 4))
        )

    def shape(self) -> QPainterPath:
        stroker = QPainterPathStroker()
        stroker.setWidth(12)
        shape = stroker.createStroke(self._path)
        shape.addRect(self._badge)
        return shape

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        color = SELECTED if self.isSelected() else PROBLEM if self.problem else EDGE_COLOR
        pen = QPen(color, 3.5 if self.isSelected() else 2.0)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self._path)
        # arrowhead
        end = self._path.pointAtPercent(1.0)
        before = self._path.pointAtPercent(0.96)
        angle = math.atan2(end.y() - before.y(), end.x() - before.x())
        head = [end]
        for side in (-1, 1):
            a = angle + math.pi + side * math.radians(24)
            head.append(end + QPointF(math.cos(a) * 12, math.sin(a) * 12))
        painter.setBrush(color)
        painter.drawPolygon(QPolygonF(head))
        # badge with glyph and caption
        painter.setPen(QPen(color, 1.5))
        painter.setBrush(GLYPH_FILL)
        painter.drawRoundedRect(self._badge, 8, 8)
        c = QPointF(self._badge.left() + self.GLYPH_RADIUS + 3, self._badge.center().y())
        painter.setPen(QPen(EDGE_COLOR, 2))
        GLYPHS.get(self.action_type, _glyph_wait)(painter, c, self.GLYPH_RADIUS, self.direction)
        if self._caption:
            painter.setFont(_caption_font())
            painter.setPen(QColor("#111827"))
            text_rect = QRectF(
                c.x() + self.GLYPH_RADIUS + 3,
                self._badge.top(),
                self._badge.right() - c.x() - self.GLYPH_RADIUS - 5,
                self._badge.height(),
            )
            caption = painter.fontMetrics().elidedText(
                self._caption, Qt.TextElideMode.ElideMiddle, int(text_rect.width())
            )
            painter.drawText(text_rect, Qt.AlignmentFlag.AlignVCenter, caption)


# --------------------------------------------------------------------------- scene


def _edge_path(
    source: QRectF, target: QRectF, same_pair_index: float, self_loop: bool
) -> QPainterPath:
    """Route an edge between two node frames so it rarely crosses other nodes.

    Forward edges (to a later column) leave on the right and enter on the left. Edges
    back to an earlier column leave on the left: upwards they enter from below, downwards
    from above, and within a row they arc over the top. Self loops sit above the node.
    """
    offset = same_pair_index * 28.0
    path = QPainterPath()
    if self_loop:
        start = QPointF(source.right() - 22, source.top() - HEADER)
        end = QPointF(source.left() + 22, source.top() - HEADER)
        lift = 60.0 + abs(offset)
        path.moveTo(start)
        path.cubicTo(start + QPointF(30, -lift), end + QPointF(-30, -lift), end)
        return path
    if target.left() > source.right():
        start = QPointF(source.right() + 12, source.center().y() + offset * 0.4)
        end = QPointF(target.left() - 2, target.center().y() + offset * 0.4)
        dx = (end.x() - start.x()) / 2
        path.moveTo(start)
        path.cubicTo(start + QPointF(dx, offset), end + QPointF(-dx, offset), end)
        return path
    rows_apart = abs(source.center().y() - target.center().y()) > source.height() / 2
    if not rows_apart:  # same row: over the top
        start = QPointF(source.center().x() + offset * 0.3, source.top() - HEADER - 2)
        end = QPointF(target.center().x() + offset * 0.3, target.top() - HEADER - 4)
        top = min(start.y(), end.y()) - 50 - abs(offset) - 0.1 * abs(start.x() - end.x())
        path.moveTo(start)
        path.cubicTo(QPointF(start.x(), top), QPointF(end.x(), top), end)
        return path
    # leave below the middle, where edges coming in from the left do not arrive
    start = QPointF(source.left() - 2, source.top() + source.height() * 0.72 + offset * 0.4)
    if abs(source.center().x() - target.center().x()) < 1:  # same column: bulge left
        end = QPointF(target.left() - 2, target.center().y() + offset * 0.4)
        bulge = 70.0 + abs(offset)
        path.moveTo(start)
        path.cubicTo(start - QPointF(bulge, 0), end - QPointF(bulge, 0), end)
        return path
    if target.center().y() < source.center().y():
        end = QPointF(target.center().x() + offset * 0.3, target.bottom() + 4)
        control = QPointF(end.x(), start.y())
    else:
        end = QPointF(target.center().x() + offset * 0.3, target.top() - HEADER - 4)
        control = QPointF(end.x(), start.y())
    path.moveTo(start)
    path.quadTo(control, end)
    return path


class GraphScene(QGraphicsScene):
    edge_drawn = Signal(str, str)  # source node id, target node id
    nodes_dragged = Signal(dict)  # node id -> new top-left, when a mouse drag ends

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setBackgroundBrush(QBrush(QColor("#f8fafc")))
        self._nodes: dict[str, NodeItem] = {}
        self._edges: dict[str, EdgeItem] = {}
        self._drag_source: str | None = None
        self._drag_line: QGraphicsLineItem | None = None
        self._drawn_at: dict[str, Point] = {}  # where show_graph put each node
        self._building = False

    # -- content

    def show_graph(
        self,
        graph: TaskGraph | None,
        pictures: Mapping[str, QPixmap | None],
        node_problems: Mapping[str, str] | None = None,
        edge_problems: Mapping[str, str] | None = None,
        captions: Mapping[str, str] | None = None,
        positions: Mapping[str, Point] | None = None,
        *,
        keep_extent: bool = False,
    ) -> None:
        """Rebuild every item; the selection is kept by id.

        ``pictures`` per node id, problems (one line) per node or edge id,
        ``captions`` naming what each edge's action touched, and ``positions`` the
        top-left of each node (the layered layout when not given). With
        ``keep_extent`` the scene rect only grows, so an edit never scrolls the view.
        """
        selected_nodes, selected_edges = self.selected_node_ids(), self.selected_edge_ids()
        self.blockSignals(True)
        self._building = True
        self.clear()
        self._nodes.clear()
        self._edges.clear()
        self._drawn_at.clear()
        self._drag_line = None
        self._drag_source = None
        if graph is not None:
            if positions is None:
                positions = layered_positions(graph, spacing_for(node_sizes(graph)))
            self._build(
                graph,
                pictures,
                node_problems or {},
                edge_problems or {},
                captions or {},
                positions,
            )
        for node_id in selected_nodes:
            if node_id in self._nodes:
                self._nodes[node_id].setSelected(True)
        for edge_id in selected_edges:
            if edge_id in self._edges:
                self._edges[edge_id].setSelected(True)
        self._building = False
        self.blockSignals(False)
        self._fit_rect(keep_extent=keep_extent and graph is not None)
        self.selectionChanged.emit()

    def _fit_rect(self, *, keep_extent: bool) -> None:
        margin = 80
        rect = self.itemsBoundingRect().adjusted(-margin, -margin, margin, margin)
        if keep_extent:  # only grows: the view does not jump
            rect = rect.united(self.sceneRect())
        self.setSceneRect(rect)

    def _node_obstacles(self) -> list[QRectF]:
        """Where an edge's badge should not sit: on a node, its title or its handle."""
        return [
            self._frame(n).adjusted(-2, -HEADER - 2, PortItem.RADIUS + 6, 2) for n in self._nodes
        ]

    def move_nodes(self, positions: Mapping[str, Point]) -> None:
        """Put nodes at these places and reroute only their edges (a nudge or a drop);
        everything else stays as drawn."""
        moved = {i for i, p in positions.items() if i in self._nodes and p != self._drawn_at[i]}
        self._building = True  # no per-item rerouting while they are set
        for node_id in moved:
            self._nodes[node_id].setPos(*positions[node_id])
            self._drawn_at[node_id] = positions[node_id]
        self._building = False
        touched = [e for e in self._edges.values() if {e.source_id, e.target_id} & moved]
        obstacles = self._node_obstacles() + [
            e.badge.adjusted(-3, -3, 3, 3) for e in self._edges.values() if e not in touched
        ]
        for item in touched:
            src, tgt = self._frame(item.source_id), self._frame(item.target_id)
            item.set_path(_edge_path(src, tgt, item.pair_index, item.source_id == item.target_id))
            item.place_badge(obstacles)
            obstacles.append(item.badge.adjusted(-3, -3, 3, 3))
        self._fit_rect(keep_extent=True)

    def _build(
        self,
        graph: TaskGraph,
        pictures: Mapping[str, QPixmap | None],
        node_problems: Mapping[str, str],
        edge_problems: Mapping[str, str],
        captions: Mapping[str, str],
        positions: Mapping[str, Point],
    ) -> None:
        sizes = node_sizes(graph)
        for node in graph.nodes:
            count = len(node.members)
            title = f"{node.id} · {count} screen{'s' if count != 1 else ''}"
            look = NodeLook(node.kind, title, sizes[node.id], node_problems.get(node.id, ""))
            item = NodeItem(node.id, look, pictures.get(node.id))
            item.setPos(*positions[node.id])
            self.addItem(item)
            self._nodes[node.id] = item
            self._drawn_at[node.id] = (item.pos().x(), item.pos().y())
        pairs: dict[tuple[str, str], list[Edge]] = {}
        for edge in graph.edges:
            if edge.source in self._nodes and edge.target in self._nodes:
                pairs.setdefault((edge.source, edge.target), []).append(edge)
        obstacles = self._node_obstacles()
        for (source, target), edges in pairs.items():
            src, tgt = self._frame(source), self._frame(target)
            for k, edge in enumerate(edges):
                index = k - (len(edges) - 1) / 2
                path = _edge_path(src, tgt, index, source == target)
                caption = edge_caption(edge, captions.get(edge.id, ""))
                edge_item = EdgeItem(edge, path, caption, edge_problems.get(edge.id, ""))
                edge_item.pair_index = index
                edge_item.place_badge(obstacles)
                obstacles.append(edge_item.badge.adjusted(-3, -3, 3, 3))
                self.addItem(edge_item)
                self._edges[edge.id] = edge_item

    # -- moving nodes with the mouse

    def node_dragging(self, node_id: str) -> None:
        """A node item moved under the mouse: its edges follow at once."""
        if self._building:
            return
        for item in self._edges.values():
            if node_id in (item.source_id, item.target_id):
                src, tgt = self._frame(item.source_id), self._frame(item.target_id)
                loop = item.source_id == item.target_id
                item.set_path(_edge_path(src, tgt, item.pair_index, loop))

    def dragged_positions(self) -> dict[str, Point]:
        """Nodes the mouse moved away from where they were drawn, at whole pixels."""
        out: dict[str, Point] = {}
        for node_id, item in self._nodes.items():
            x, y = float(round(item.pos().x())), float(round(item.pos().y()))
            if (x, y) != self._drawn_at.get(node_id, (x, y)):
                out[node_id] = (x, y)
        return out

    def _frame(self, node_id: str) -> QRectF:
        item = self._nodes[node_id]
        return item.frame.translated(item.pos())

    # -- lookups and selection

    def node_item(self, node_id: str) -> NodeItem:
        return self._nodes[node_id]

    def edge_item(self, edge_id: str) -> EdgeItem:
        return self._edges[edge_id]

    def node_ids(self) -> list[str]:
        return list(self._nodes)

    def edge_ids(self) -> list[str]:
        return list(self._edges)

    def selected_node_ids(self) -> list[str]:
        return [i for i, item in self._nodes.items() if item.isSelected()]

    def selected_edge_ids(self) -> list[str]:
        return [i for i, item in self._edges.items() if item.isSelected()]

    def select(self, node_ids: Iterable[str] = (), edge_ids: Iterable[str] = ()) -> None:
        """Select exactly these items (unknown ids are ignored)."""
        self.blockSignals(True)
        self.clearSelection()
        for node_id in node_ids:
            if node_id in self._nodes:
                self._nodes[node_id].setSelected(True)
        for edge_id in edge_ids:
            if edge_id in self._edges:
                self._edges[edge_id].setSelected(True)
        self.blockSignals(False)
        self.selectionChanged.emit()

    # -- drawing a new edge

    def _node_at(self, pos: QPointF) -> str | None:
        for item in self.items(pos):
            if isinstance(item, NodeItem):
                return item.node_id
            if isinstance(item, PortItem):
                return item.node_id
        return None

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            pos = event.scenePos()
            item = self.itemAt(pos, self.views()[0].transform()) if self.views() else None
            shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            if isinstance(item, PortItem) or (shift and isinstance(item, NodeItem)):
                source = item.node_id
                self._drag_source = source
                line = QGraphicsLineItem(QLineF(pos, pos))
                line.setPen(QPen(SELECTED, 2, Qt.PenStyle.DashLine))
                line.setZValue(5)
                self.addItem(line)
                self._drag_line = line
                event.accept()
                return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if self._drag_line is not None:
            line = self._drag_line.line()
            line.setP2(event.scenePos())
            self._drag_line.setLine(line)
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if self._drag_line is not None:
            source = self._drag_source
            self.removeItem(self._drag_line)
            self._drag_line = None
            self._drag_source = None
            target = self._node_at(event.scenePos())
            event.accept()
            if source is not None and target is not None:
                self.edge_drawn.emit(source, target)
            return
        super().mouseReleaseEvent(event)
        moved = self.dragged_positions()
        if moved:
            self.nodes_dragged.emit(moved)

    @property
    def drawing_edge(self) -> bool:
        return self._drag_line is not None
