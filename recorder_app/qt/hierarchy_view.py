"""A screenshot and its uiautomator hierarchy, linked both ways (as Android Studio's
Layout Inspector does): select a row and its bounds light up on the screenshot; click the
screenshot and the element there is selected in the tree.

It is an inspector: the selected element's properties (every attribute, bounds, an XPath
that finds it) sit under the tree, and a search field filters the tree by text, id or
class (matching rows shown with their ancestors dimmed, the rest hidden; a count; Enter
goes to the next match; Ctrl+F focuses it).

The Demos tab and the graph editor's node inspector both use ``HierarchyInspector``.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QImage,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QShortcut,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from graph_builder.hierarchy import Hierarchy, UIElement
from recorder_app.qt.element_properties import ElementProperties
from recorder_app.qt.gestures import Rect, device_to_widget, fit_rect, widget_to_device

INDEX_ROLE = Qt.ItemDataRole.UserRole
SELECTED = QColor(255, 64, 129)
DIMMED = QColor("#9aa0a6")
CLICKABLE = QColor("#1d4ed8")


def matches(element: UIElement, query: str) -> bool:
    """Does ``element``'s text, description, resource-id or class contain ``query``?
    (case-insensitive)"""
    needle = query.casefold()
    return any(
        needle in value.casefold()
        for value in (element.text, element.content_desc, element.resource_id, element.class_name)
    )


class BoundsScreen(QWidget):
    """The screenshot with one element's bounds outlined; a click reports device pixels."""

    clicked = Signal(int, int)  # device pixels

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("boundsScreen")
        self.setMinimumSize(160, 240)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._image: QImage | None = None
        self._screen: tuple[int, int] | None = None
        self.highlight: UIElement | None = None

    def set_screen(self, png: bytes | None, screen: tuple[int, int]) -> None:
        image = QImage.fromData(png) if png else QImage()
        self._image = None if image.isNull() else image
        self._screen = screen
        self.highlight = None
        self.update()

    def set_highlight(self, element: UIElement | None) -> None:
        self.highlight = element
        self.update()

    def _rect(self) -> Rect:
        assert self._image is not None
        return fit_rect((self._image.width(), self._image.height()), (self.width(), self.height()))

    def widget_point(self, x: float, y: float) -> QPointF:
        """Where device pixel (x, y) is drawn (tests click there)."""
        assert self._image is not None and self._screen is not None
        return QPointF(*device_to_widget(x, y, self._rect(), self._screen))

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if self._image is None or self._screen is None:
            return super().mousePressEvent(event)
        pos = event.position()
        point = widget_to_device(pos.x(), pos.y(), self._rect(), self._screen)
        if point is not None:
            self.clicked.emit(*point)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor("#1e2127"))
        if self._image is None or self._screen is None:
            painter.setPen(QColor("#9aa0a6"))
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No screenshot")
            return
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        rect = self._rect()
        painter.drawImage(QRectF(rect.x, rect.y, rect.width, rect.height), self._image)
        if self.highlight is not None:
            b = self.highlight.bounds
            painter.setPen(QPen(SELECTED, 3))
            painter.setBrush(QColor(255, 64, 129, 50))
            painter.drawRect(
                QRectF(self.widget_point(b.left, b.top), self.widget_point(b.right, b.bottom))
            )


class HierarchyInspector(QWidget):
    """``show_screen(png, screen, hierarchy)``; ``element_selected`` carries the element index."""

    element_selected = Signal(int)

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        orientation: Qt.Orientation = Qt.Orientation.Horizontal,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("hierarchyInspector")
        self._hierarchy: Hierarchy | None = None
        self._items: dict[int, QTreeWidgetItem] = {}
        self.screen_view = BoundsScreen()
        self.screen_view.setToolTip("Click an element to select it in the tree")
        self.tree = QTreeWidget()
        self.tree.setObjectName("hierarchyTree")
        self.tree.setHeaderLabels(["Element", "Id", "Text", "Bounds"])
        self.tree.setToolTip("Select a row to outline its bounds on the screenshot")
        self.tree.currentItemChanged.connect(self._on_current_item_changed)
        self.screen_view.clicked.connect(self.select_at)
        self.label = QLabel("")
        self.label.setWordWrap(True)
        self.search = QLineEdit()
        self.search.setObjectName("hierarchySearch")
        self.search.setClearButtonEnabled(True)
        self.search.setPlaceholderText("Find text, id or class (Ctrl+F); Enter: next match")
        self.search.textChanged.connect(self._apply_filter)
        self.search.returnPressed.connect(self.next_match)
        self.match_label = QLabel("")
        self.match_label.setObjectName("matchCount")
        self._matches: list[int] = []
        find = QShortcut(QKeySequence.StandardKey.Find, self)
        find.setContext(Qt.ShortcutContext.WindowShortcut)
        find.activated.connect(self.focus_search)
        self.properties = ElementProperties()
        details = QSplitter(Qt.Orientation.Vertical)
        details.addWidget(self.tree)
        details.addWidget(self.properties)
        details.setStretchFactor(0, 3)
        details.setStretchFactor(1, 2)
        self.splitter = QSplitter(orientation)
        self.splitter.addWidget(self.screen_view)
        self.splitter.addWidget(details)
        # Side by side, a phone screenshot needs far less width than its height: the
        # tree and the properties take the larger share (an even split left the tree
        # a sliver of indentation at 1024 px while the screenshot was mostly margin).
        beside = orientation == Qt.Orientation.Horizontal
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 4 if beside else 1)
        search_row = QHBoxLayout()
        search_row.addWidget(self.search, 1)
        search_row.addWidget(self.match_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addLayout(search_row)
        layout.addWidget(self.splitter, 1)

    def show_screen(
        self, png: bytes | None, screen: tuple[int, int], hierarchy: Hierarchy | None
    ) -> None:
        self.screen_view.set_screen(png, screen)
        self.set_hierarchy(hierarchy)

    def set_hierarchy(self, hierarchy: Hierarchy | None) -> None:
        self._hierarchy = hierarchy
        self._items = {}
        self.tree.clear()
        self.screen_view.set_highlight(None)
        self.properties.show_element(None, None)
        if hierarchy is None:
            self._apply_filter("")
            return
        for element in hierarchy:
            b = element.bounds
            item = QTreeWidgetItem(
                [
                    element.class_name.rpartition(".")[2] or "?",
                    element.resource_id.rpartition("/")[2],
                    element.text or element.content_desc,
                    f"[{b.left:.0f},{b.top:.0f}][{b.right:.0f},{b.bottom:.0f}]",
                ]
            )
            item.setData(0, INDEX_ROLE, element.index)
            item.setToolTip(0, element.class_name)
            if element.clickable:
                item.setForeground(0, CLICKABLE)
            parent = self._items.get(element.parent) if element.parent is not None else None
            if parent is None:
                self.tree.addTopLevelItem(item)
            else:
                parent.addChild(item)
            self._items[element.index] = item
        self.tree.expandToDepth(3)
        self.tree.resizeColumnToContents(0)
        self._apply_filter(self.search.text())

    def clear(self, message: str = "") -> None:
        self.screen_view.set_screen(None, (1, 1))
        self.set_hierarchy(None)
        self.label.setText(message)

    @property
    def hierarchy(self) -> Hierarchy | None:
        return self._hierarchy

    @property
    def selected(self) -> UIElement | None:
        return self.screen_view.highlight

    @Slot(int, int)
    def select_at(self, x: int, y: int) -> UIElement | None:
        """Select the element a tap at device pixel (x, y) would land on."""
        if self._hierarchy is None:
            return None
        element = self._hierarchy.element_at(x, y)
        if element is not None:
            item = self._items[element.index]
            self.tree.setCurrentItem(item)
            self.tree.scrollToItem(item)
        return element

    def row(self, index: int) -> QTreeWidgetItem | None:
        """The tree row of element ``index``."""
        return self._items.get(index)

    def select_index(self, index: int) -> None:
        item = self._items.get(index)
        if item is not None:
            self.tree.setCurrentItem(item)
            self.tree.scrollToItem(item)

    # -- search

    @property
    def match_indices(self) -> list[int]:
        """The elements the search matches, in document order."""
        return list(self._matches)

    @Slot()
    def focus_search(self) -> None:
        if self.isVisible():
            self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
            self.search.selectAll()

    @Slot()
    def next_match(self) -> None:
        """Select the first match after the selected element (wrapping round)."""
        if not self._matches:
            return
        current = self.selected.index if self.selected is not None else -1
        following = [i for i in self._matches if i > current]
        self.select_index(following[0] if following else self._matches[0])

    @Slot(str)
    def _apply_filter(self, query: str) -> None:
        hierarchy = self._hierarchy
        query = query.strip()
        if hierarchy is None or not query:
            self._matches = []
            self.match_label.setText("")
            for index, item in self._items.items():
                item.setHidden(False)
                self._paint(item, hierarchy.elements[index] if hierarchy else None, dim=False)
            return
        self._matches = [e.index for e in hierarchy if matches(e, query)]
        shown = set(self._matches)
        for i in self._matches:
            shown.update(a.index for a in hierarchy.ancestors(hierarchy.elements[i]))
        for index, item in self._items.items():
            item.setHidden(index not in shown)
            self._paint(item, hierarchy.elements[index], dim=index not in self._matches)
        for i in self._matches:
            self.tree.expandItem(self._items[i].parent() or self._items[i])
            for ancestor in hierarchy.ancestors(hierarchy.elements[i]):
                self.tree.expandItem(self._items[ancestor.index])
        self.tree.resizeColumnToContents(0)  # the matches may sit deeper than shown before
        n = len(self._matches)
        self.match_label.setText(f"{n} match{'' if n == 1 else 'es'}")

    def _paint(self, item: QTreeWidgetItem, element: UIElement | None, *, dim: bool) -> None:
        """Dim an ancestor kept only to show where a match sits; clickable rows are blue."""
        plain = self.tree.palette().text().color()
        for column in range(self.tree.columnCount()):
            item.setForeground(column, DIMMED if dim else plain)
        if not dim and element is not None and element.clickable:
            item.setForeground(0, CLICKABLE)

    @Slot(object, object)
    def _on_current_item_changed(self, current: QTreeWidgetItem | None, _: object) -> None:
        if current is None or self._hierarchy is None:
            self.screen_view.set_highlight(None)
            self.properties.show_element(None, None)
            return
        index = int(current.data(0, INDEX_ROLE))
        element = self._hierarchy.elements[index]
        self.screen_view.set_highlight(element)
        self.properties.show_element(self._hierarchy, element)
        if index in self._matches:
            n = self._matches.index(index) + 1
            self.match_label.setText(f"{n} of {len(self._matches)} matches")
        self.element_selected.emit(index)
