"""The inspectors beside the canvas: one for the selected node, one for the selected edge.

They hold the id of what they show and read the rest from the document. Edits they offer
(split the checked screens, change a rule) go out as graph_builder edit commands through
``edit_requested``, so the page applies and reports every edit in one place.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, Signal, Slot
from PySide6.QtGui import QColor, QFocusEvent, QIcon, QKeyEvent, QKeySequence, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from graph_builder.edits import EditEdgeRule, SplitMembers
from graph_builder.errors import GraphBuilderError
from graph_builder.model import (
    ActionType,
    Bounds,
    MatchRule,
    MemberRef,
    Node,
    SwipeDirection,
)
from graph_builder.settings import comparison_settings
from graph_builder.similarity import Verdict, compare
from recorder_app.qt.graph_editor.document import GraphDocument
from recorder_app.qt.graph_editor.overlay import RuleOverlay
from recorder_app.qt.graph_editor.pictures import PictureCache
from recorder_app.qt.hierarchy_view import HierarchyInspector

MEMBER_ROLE = Qt.ItemDataRole.UserRole  # (demo_id, step)
MEMBER_ICON = QSize(96, 200)
VERDICT_LIMIT = 40  # members compared with the representative when a node is shown
HIERARCHY_ROWS = 8  # rows of a node's element tree always shown
PROPERTY_ROWS = 6  # rows of the selected element's properties always shown


def _member(value: tuple[str, int]) -> MemberRef:
    """Items keep a member as (demo_id, step), which Qt stores as plain data."""
    demo_id, step = value
    return MemberRef(str(demo_id), int(step))


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


# --------------------------------------------------------------------------- node


class RuleSpinBox(QDoubleSpinBox):
    """A number of an edge rule. Undo and redo keys go to the graph's undo stack: the
    spin box's own text undo would swallow Ctrl+Z while it has the focus."""

    def event(self, event: QEvent) -> bool:
        undo_keys = (QKeySequence.StandardKey.Undo, QKeySequence.StandardKey.Redo)
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and any(event.matches(keys) for keys in undo_keys)
        ):
            event.ignore()  # not overridden: the window's Undo/Redo shortcut fires
            return True
        return super().event(event)


class NodeInspector(QWidget):
    edit_requested = Signal(object)  # a graph_builder edit command
    member_selected = Signal(str)  # "demo#step"

    def __init__(
        self, document: GraphDocument, pictures: PictureCache, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("nodeInspector")
        self._document = document
        self._pictures = pictures
        self.node_id: str | None = None
        self._verdicts: dict[MemberRef, Verdict | str] = {}

        self.title = QLabel()
        self.title.setObjectName("inspectorTitle")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.members = QListWidget()
        self.members.setObjectName("memberList")
        self.members.setViewMode(QListView.ViewMode.IconMode)
        self.members.setFlow(QListView.Flow.LeftToRight)
        self.members.setWrapping(False)
        self.members.setIconSize(MEMBER_ICON)
        self.members.setMovement(QListView.Movement.Static)
        self.members.setResizeMode(QListView.ResizeMode.Adjust)
        self.members.setSpacing(4)
        self.members.setMinimumHeight(MEMBER_ICON.height() + 56)
        self.members.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.members.setToolTip(
            "The screens in this node, representative first. Tick screens and press "
            "'Split ticked screens' to move them into a new node."
        )
        self.split_button = QPushButton("Split ticked screens into a new node")
        self.split_button.setObjectName("splitButton")
        self.split_button.setToolTip(
            "Move the ticked screens (some, not all) into a new node; the decision is kept "
            "when the graph is rebuilt"
        )
        self.verdict_label = QLabel()
        self.verdict_label.setObjectName("verdictLabel")
        self.verdict_label.setWordWrap(True)
        self.similarity = QTreeWidget()
        self.similarity.setObjectName("similarityTable")
        self.similarity.setRootIsDecorated(False)
        self.similarity.setHeaderLabels(
            ["Screen", "Verdict", "Score", "Visual", "Structure", "Content", "Activity"]
        )
        self.hierarchy_view = HierarchyInspector(orientation=Qt.Orientation.Vertical)
        # In this narrow column the tree and the properties were squeezed to two rows
        # and a header: each keeps a readable height, and the inspector scrolls instead.
        for tree, rows in (
            (self.hierarchy_view.tree, HIERARCHY_ROWS),
            (self.hierarchy_view.properties.table, PROPERTY_ROWS),
        ):
            row = tree.fontMetrics().lineSpacing() + 4
            tree.setMinimumHeight(tree.header().sizeHint().height() + rows * row)
        self.hierarchy = self.hierarchy_view.tree
        self.hierarchy_label = self.hierarchy_view.label

        similarity_page = QWidget()
        sim_layout = QVBoxLayout(similarity_page)
        sim_layout.setContentsMargins(2, 2, 2, 2)
        sim_layout.addWidget(self.verdict_label)
        sim_layout.addWidget(self.similarity, 1)
        hierarchy_page = QWidget()
        hier_layout = QVBoxLayout(hierarchy_page)
        hier_layout.setContentsMargins(2, 2, 2, 2)
        hier_layout.addWidget(self.hierarchy_view, 1)
        self.tabs = QTabWidget()
        self.tabs.addTab(similarity_page, "Similarity")
        self.tabs.addTab(hierarchy_page, "Hierarchy")

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.members, 1)
        top_layout.addWidget(self.split_button)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(top)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(1, 1)
        # No pane may be dragged down to a nameless sliver; the inspector scrolls instead.
        for one in (splitter, *self.hierarchy_view.findChildren(QSplitter)):
            one.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(splitter, 1)

        self.members.currentItemChanged.connect(self._on_current_member_changed)
        self.members.itemChanged.connect(self._on_member_ticked)
        self.split_button.clicked.connect(self._on_split_clicked)

    # -- showing

    def show_node(self, node_id: str) -> None:
        graph = self._document.require_graph()
        node = graph.node(node_id)
        same_node = node_id == self.node_id
        current = self.current_member() if same_node else None
        ticked = set(self.ticked_members()) if same_node else set()
        self.node_id = node_id
        activity = node.activity or "unknown activity"
        self.title.setText(
            f"<b>{node.id}</b> · {node.kind.value} · {len(node.members)} screen"
            f"{'s' if len(node.members) != 1 else ''}<br>"
            f"<span style='color:#4b5563'>{activity}</span>"
        )
        self._verdicts = self._compare_members(node)
        self._fill_members(node, ticked)
        self._fill_similarity(node)
        row = next(
            (
                i
                for i in range(self.members.count())
                if _member(self.members.item(i).data(MEMBER_ROLE)) == current
            ),
            0,
        )
        if self.members.count():
            self.members.setCurrentRow(row)
        else:
            self._show_hierarchy(None)
        self._update_split_button()

    def _fill_members(self, node: Node, ticked: set[MemberRef]) -> None:
        sources = self._document.sources
        self.members.blockSignals(True)
        self.members.clear()
        for k, member in enumerate(node.members):
            path = sources.member_screenshot(member) if sources else None
            if path is None and k == 0 and sources is not None:
                path = sources.node_screenshot(node)
            picture = self._pictures.thumbnail(path, MEMBER_ICON.width())
            label = f"{member}{' ★' if k == 0 else ''}"
            verdict = self._verdicts.get(member)
            if isinstance(verdict, Verdict):
                label += f"\n{'same' if verdict.same else 'DIFFERENT'} {verdict.score:.2f}"
            item = QListWidgetItem(QIcon(picture or QPixmap()), label)
            item.setData(MEMBER_ROLE, (member.demo_id, member.step))
            item.setFlags(
                Qt.ItemFlag.ItemIsEnabled
                | Qt.ItemFlag.ItemIsSelectable
                | Qt.ItemFlag.ItemIsUserCheckable
            )
            item.setCheckState(
                Qt.CheckState.Checked if member in ticked else Qt.CheckState.Unchecked
            )
            tip = "representative screen" if k == 0 else self._verdict_text(member)
            item.setToolTip(f"{member}: {tip}")
            if isinstance(verdict, Verdict) and not verdict.same:
                item.setForeground(QColor("#b91c1c"))
            self.members.addItem(item)
        self.members.blockSignals(False)

    def _compare_members(self, node: Node) -> dict[MemberRef, Verdict | str]:
        """Each member against the representative, with the graph's own settings."""
        sources = self._document.sources
        graph = self._document.require_graph()
        if sources is None or len(node.members) < 2:
            return {}
        representative = sources.node_state(node)
        if representative is None:
            return {m: "the representative screen is not available" for m in node.members[1:]}
        settings = comparison_settings(graph)
        out: dict[MemberRef, Verdict | str] = {}
        for member in node.members[1:VERDICT_LIMIT]:
            state = sources.member_state(member)
            if state is None:
                out[member] = "its demonstration is not in the workspace"
                continue
            try:
                out[member] = compare(representative, state, settings=settings)
            except GraphBuilderError as exc:
                out[member] = f"cannot compare: {exc}"
        return out

    def _verdict_text(self, member: MemberRef) -> str:
        verdict = self._verdicts.get(member)
        if verdict is None:
            return "not compared"
        return verdict.describe() if isinstance(verdict, Verdict) else verdict

    def _fill_similarity(self, node: Node) -> None:
        self.similarity.clear()
        if len(node.members) < 2:
            self.verdict_label.setText("A node with one screen has nothing to compare.")
            return
        rep = node.members[0]
        shown = len(self._verdicts)
        more = len(node.members) - 1 - shown
        self.verdict_label.setText(
            f"Each screen compared with the representative {rep} (graph_builder.similarity)."
            + (f" {more} more not compared." if more > 0 else "")
        )
        for member, verdict in self._verdicts.items():
            if isinstance(verdict, Verdict):
                values = [
                    str(member),
                    "same" if verdict.same else "DIFFERENT",
                    f"{verdict.score:.2f}",
                    _ratio(verdict.visual),
                    _ratio(verdict.structure),
                    _ratio(verdict.content),
                    verdict.activity,
                ]
                row = QTreeWidgetItem(values)
                row.setToolTip(0, verdict.reason)
                row.setToolTip(1, verdict.reason)
                if not verdict.same:
                    for column in range(len(values)):
                        row.setForeground(column, QColor("#b91c1c"))
            else:
                row = QTreeWidgetItem([str(member), verdict])
            self.similarity.addTopLevelItem(row)
        for column in range(self.similarity.columnCount()):
            self.similarity.resizeColumnToContents(column)

    def _show_hierarchy(self, member: MemberRef | None) -> None:
        self.hierarchy_view.clear()
        sources = self._document.sources
        graph = self._document.graph
        if sources is None or graph is None or self.node_id is None:
            self.hierarchy_label.setText("")
            return
        node = graph.node(self.node_id)
        state = sources.member_state(member) if member is not None else None
        if state is None and (member is None or member == node.members[0]):
            state = sources.node_state(node)
        if state is None:
            self.hierarchy_label.setText("This screen's files are not available.")
            return
        try:
            hierarchy = state.hierarchy()
        except GraphBuilderError as exc:
            self.hierarchy_label.setText(f"The hierarchy cannot be read: {exc}")
            return
        activity = state.activity or "unknown activity"
        if hierarchy is None:
            self.hierarchy_label.setText(f"{state.label}: no hierarchy was recorded · {activity}")
            return
        self.hierarchy_label.setText(
            f"{state.label}: {len(hierarchy)} elements · activity {activity}"
        )
        try:
            png: bytes | None = state.png()
        except GraphBuilderError:
            png = None
        self.hierarchy_view.show_screen(png, state.size, hierarchy)

    # -- member choice

    def current_member(self) -> MemberRef | None:
        item = self.members.currentItem()
        return _member(item.data(MEMBER_ROLE)) if item is not None else None

    def ticked_members(self) -> list[MemberRef]:
        return [
            _member(self.members.item(i).data(MEMBER_ROLE))
            for i in range(self.members.count())
            if self.members.item(i).checkState() == Qt.CheckState.Checked
        ]

    def set_ticked(self, members: list[MemberRef]) -> None:
        wanted = set(members)
        for i in range(self.members.count()):
            item = self.members.item(i)
            state = (
                Qt.CheckState.Checked
                if _member(item.data(MEMBER_ROLE)) in wanted
                else Qt.CheckState.Unchecked
            )
            item.setCheckState(state)

    def _update_split_button(self) -> None:
        ticked = len(self.ticked_members())
        self.split_button.setEnabled(0 < ticked < self.members.count())

    @Slot(QListWidgetItem, QListWidgetItem)
    def _on_current_member_changed(
        self, current: QListWidgetItem | None, previous: QListWidgetItem | None
    ) -> None:
        member = _member(current.data(MEMBER_ROLE)) if current is not None else None
        self._show_hierarchy(member)
        if member is not None:
            self.member_selected.emit(str(member))

    @Slot(QListWidgetItem)
    def _on_member_ticked(self, item: QListWidgetItem) -> None:
        self._update_split_button()

    @Slot()
    def _on_split_clicked(self) -> None:
        if self.node_id is None:
            return
        ticked = tuple(self.ticked_members())
        if ticked:
            self.edit_requested.emit(SplitMembers(self.node_id, ticked))


# --------------------------------------------------------------------------- edge


def _points_text(points: tuple[tuple[float, float], ...], limit: int = 6) -> str:
    """Demonstrated points in [0,1000] space, repeats counted: "(413, 307) ×5"."""
    counts = Counter((round(x), round(y)) for x, y in points)
    parts = [f"({x}, {y})" + (f" ×{n}" if n > 1 else "") for (x, y), n in counts.items()]
    more = f" and {len(parts) - limit} more" if len(parts) > limit else ""
    return (", ".join(parts[:limit]) + more) or "none"


class TextsEdit(QPlainTextEdit):
    """Accepted texts, one per line; ``editing_finished`` when focus leaves after a change."""

    editing_finished = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTabChangesFocus(True)
        self._shown = ""

    def set_texts(self, texts: tuple[str, ...]) -> None:
        self._shown = "\n".join(texts)
        self.setPlainText(self._shown)

    def texts(self) -> tuple[str, ...]:
        lines = (line.strip() for line in self.toPlainText().splitlines())
        return tuple(dict.fromkeys(line for line in lines if line))

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        if self.toPlainText() != self._shown:
            self._shown = self.toPlainText()
            self.editing_finished.emit()


class EdgeInspector(QWidget):
    edit_requested = Signal(object)  # a graph_builder edit command

    def __init__(
        self, document: GraphDocument, pictures: PictureCache, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("edgeInspector")
        self._document = document
        self._pictures = pictures
        self.edge_id: str | None = None

        self.title = QLabel()
        self.title.setObjectName("inspectorTitle")
        self.title.setWordWrap(True)
        self.screen_choice = QComboBox()
        self.screen_choice.setToolTip("Which pre-action screen to draw the rule on")
        self.overlay = RuleOverlay()
        self.radius = RuleSpinBox()
        self.radius.setObjectName("radiusSpin")
        self.radius.setRange(0, 1000)
        self.radius.setDecimals(0)
        self.radius.setSingleStep(5)
        self.radius.setKeyboardTracking(False)
        self.radius.setToolTip(
            "A tap within this distance of a demonstrated point matches (in [0,1000] units)"
        )
        self.use_bounds = QCheckBox("Taps inside the element match")
        self.use_bounds.setToolTip("A tap anywhere inside the element's bounds matches too")
        self.use_bounds.setObjectName("useBoundsCheck")
        self.direction = QComboBox()
        self.direction.setObjectName("directionCombo")
        for direction in SwipeDirection:
            self.direction.addItem(direction.value, direction.value)
        self.texts = TextsEdit()
        self.texts.setObjectName("textsEdit")
        self.texts.setMaximumHeight(80)
        self.texts.setToolTip("Accepted texts, one per line; applied when you leave the box")
        self.threshold = RuleSpinBox()
        self.threshold.setObjectName("thresholdSpin")
        self.threshold.setRange(0, 100)
        self.threshold.setDecimals(0)
        self.threshold.setKeyboardTracking(False)
        self.threshold.setToolTip("Least rapidfuzz ratio (0-100) a typed text needs")
        self.points_label = QLabel()
        self.points_label.setWordWrap(True)

        self.form = QFormLayout()
        # narrow panels put each label above its field rather than cut either
        self.form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.form.addRow("Points", self.points_label)
        self.form.addRow("Tolerance radius", self.radius)
        self.form.addRow("", self.use_bounds)
        self.form.addRow("Swipe direction", self.direction)
        self.form.addRow("Accepted texts", self.texts)
        self.form.addRow("Text threshold", self.threshold)
        choice_row = QHBoxLayout()
        choice_row.addWidget(QLabel("Screen"))
        choice_row.addWidget(self.screen_choice, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addLayout(choice_row)
        layout.addWidget(self.overlay, 1)
        layout.addLayout(self.form)

        self.screen_choice.currentIndexChanged.connect(self._on_screen_chosen)
        self.radius.valueChanged.connect(self._on_rule_field_edited)
        self.threshold.valueChanged.connect(self._on_rule_field_edited)
        self.use_bounds.toggled.connect(self._on_rule_field_edited)
        self.direction.currentIndexChanged.connect(self._on_rule_field_edited)
        self.texts.editing_finished.connect(self._on_rule_field_edited)

    def show_edge(self, edge_id: str) -> None:
        graph = self._document.require_graph()
        edge = graph.edge(edge_id)
        previous = self.screen_choice.currentIndex() if edge_id == self.edge_id else 0
        self.edge_id = edge_id
        rule = edge.rule
        self.title.setText(
            f"<b>{edge.id}</b> · {rule.action_type.value.replace('_', ' ')} · "
            f"{edge.source} → {edge.target} · {len(edge.support)} demonstrated"
        )
        widgets = [
            self.radius,
            self.threshold,
            self.use_bounds,
            self.direction,
            self.texts,
            self.screen_choice,
        ]
        for widget in widgets:
            widget.blockSignals(True)
        pointed = rule.action_type.is_pointed
        self.points_label.setText(_points_text(rule.points))
        self.radius.setValue(rule.radius)
        self.use_bounds.setChecked(rule.bounds is not None)
        self.use_bounds.setEnabled(self._bounds_for(edge_id) is not None)
        if rule.direction is not None:
            self.direction.setCurrentIndex(self.direction.findData(rule.direction.value))
        self.texts.set_texts(rule.texts)
        self.threshold.setValue(rule.text_threshold)
        self._set_row_visible(self.points_label, pointed)
        self._set_row_visible(self.radius, pointed)
        self._set_row_visible(self.use_bounds, pointed)
        self._set_row_visible(self.direction, rule.action_type is ActionType.SWIPE)
        self._set_row_visible(self.texts, rule.action_type is ActionType.TYPE)
        self._set_row_visible(self.threshold, rule.action_type is ActionType.TYPE)
        self.screen_choice.clear()
        self.screen_choice.addItem(f"{edge.source} (representative)", None)
        for support in edge.support:
            self.screen_choice.addItem(
                f"{support.member}: {support.action.describe()}",
                (support.member.demo_id, support.member.step),
            )
        self.screen_choice.setCurrentIndex(min(previous, self.screen_choice.count() - 1))
        for widget in widgets:
            widget.blockSignals(False)
        self._show_screen()

    def _set_row_visible(self, field: QWidget, visible: bool) -> None:
        self.form.setRowVisible(field, visible)

    def _bounds_for(self, edge_id: str) -> Bounds | None:
        """The element bounds the rule can use: its own, or a demonstrated target's."""
        edge = self._document.require_graph().edge(edge_id)
        if edge.rule.bounds is not None:
            return edge.rule.bounds
        for support in edge.support:
            element = support.action.normalized().element
            if element is not None:
                return element.bounds
        return None

    def _show_screen(self) -> None:
        graph = self._document.graph
        sources = self._document.sources
        if graph is None or sources is None or self.edge_id is None:
            return
        edge = graph.edge(self.edge_id)
        chosen = self.screen_choice.currentData()
        action = None
        path: Path | None = None
        screen = graph.node(edge.source).screen
        if chosen is not None:
            member = _member(chosen)
            found = sources.member_observation(member)
            if found is not None:
                path = found[0] / found[1].screenshot
                screen = found[1].screen
            action = next((s.action for s in edge.support if s.member == member), None)
        else:
            path = sources.node_screenshot(graph.node(edge.source))
        image = self._pictures.full(path)
        self.overlay.show_screen(image, screen, edge.rule, action)

    def current_rule(self) -> MatchRule | None:
        """The rule as the fields say, or None when no edge is shown."""
        graph = self._document.graph
        if graph is None or self.edge_id is None:
            return None
        rule = graph.edge(self.edge_id).rule
        kind = rule.action_type
        changes: dict[str, Any] = {}
        if kind.is_pointed:
            changes["radius"] = self.radius.value()
            changes["bounds"] = (
                self._bounds_for(self.edge_id) if self.use_bounds.isChecked() else None
            )
        if kind is ActionType.SWIPE:
            changes["direction"] = SwipeDirection(self.direction.currentData())
        if kind is ActionType.TYPE:
            changes["texts"] = self.texts.texts()
            changes["text_threshold"] = self.threshold.value()
        return replace(rule, **changes)

    @Slot()
    def _on_rule_field_edited(self) -> None:
        graph = self._document.graph
        rule = self.current_rule()
        if graph is None or rule is None or self.edge_id is None:
            return
        if rule != graph.edge(self.edge_id).rule:
            self.edit_requested.emit(EditEdgeRule(self.edge_id, rule))

    @Slot(int)
    def _on_screen_chosen(self, index: int) -> None:
        self._show_screen()


# --------------------------------------------------------------------------- both


class InspectorStack(QStackedWidget):
    """Nothing, a node or an edge; the page says which."""

    def __init__(
        self, document: GraphDocument, pictures: PictureCache, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.empty = QLabel(
            "Select a screen to see its members, hierarchy and similarity, or an edge to "
            "see and edit its matching rule.\n\nCtrl+click selects several screens to merge."
        )
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.empty.setObjectName("inspectorHint")
        self.node = NodeInspector(document, pictures)
        self.edge = EdgeInspector(document, pictures)
        for widget in (self.empty, self.node, self.edge):
            self.addWidget(widget)
        self.currentChanged.connect(lambda _index: self.updateGeometry())

    def _pages(self) -> list[QWidget]:
        return [self.empty, self.node, self.edge]

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """As wide as the widest page, as tall as the page shown (a hint needs no room of
        a node's panes; the page's scroll area scrolls only when the shown page needs it)."""
        width = max(p.minimumSizeHint().width() for p in self._pages())
        current = self.currentWidget()
        height = current.minimumSizeHint().height() if current is not None else 0
        return QSize(width, height)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        current = self.currentWidget()
        hint = current.sizeHint() if current is not None else QSize()
        return hint.expandedTo(self.minimumSizeHint())

    def show_nothing(self, text: str | None = None) -> None:
        if text is not None:
            self.empty.setText(text)
        self.node.node_id = None
        self.edge.edge_id = None
        self.setCurrentWidget(self.empty)

    def show_node(self, node_id: str) -> None:
        self.edge.edge_id = None
        self.node.show_node(node_id)
        self.setCurrentWidget(self.node)

    def show_edge(self, edge_id: str) -> None:
        self.node.node_id = None
        self.edge.show_edge(edge_id)
        self.setCurrentWidget(self.edge)
