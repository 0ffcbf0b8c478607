"""The Graphs tab: open, build, edit, check and save task graphs.

Left, the tasks (workspace suites and opened folders) with the build button; in the
middle, the graph; right, the inspector of the selection above the live problem list.
Every edit is a graph_builder edit on the document's undo stack; building runs in a
worker thread and reports what happened to the manual decisions.

Shortcuts (active while the tab is shown): Delete, M merge, D toggle DONE, S set START,
F fit, +/- zoom, Ctrl+S save, Ctrl+Z undo, Ctrl+Shift+Z redo, Ctrl+B build; in the graph,
arrows select the nearest screen that way (Shift adds it) and Alt+arrows move the
selected screens. Nodes keep their places (``layout.NodePlaces``, saved in layout.json).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, QThreadPool, Signal, Slot
from PySide6.QtGui import QAction, QHideEvent, QKeySequence, QPixmap, QShowEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from graph_builder import io
from graph_builder.build import PreparedBuild, TaskBuildReport, prepare_task, write_task
from graph_builder.edits import (
    AddEdge,
    Command,
    DeleteEdge,
    DeleteNode,
    MergeNodes,
    SetNodeKind,
)
from graph_builder.errors import GraphBuilderError
from graph_builder.model import Edge, NodeKind, Pin
from graph_builder.packing import restore
from graph_builder.settings import graph_settings
from graph_builder.validate import Severity, has_errors
from recorder_app.errors import StudioError
from recorder_app.qt.dialogs import show_problem
from recorder_app.qt.graph_editor.action_bar import ActionBar
from recorder_app.qt.graph_editor.dialogs import BuildReportDialog, NewEdgeDialog
from recorder_app.qt.graph_editor.document import GraphDocument
from recorder_app.qt.graph_editor.inspector import InspectorStack
from recorder_app.qt.graph_editor.layout import nearest_in_direction
from recorder_app.qt.graph_editor.merges_panel import PossibleMergesPanel
from recorder_app.qt.graph_editor.pictures import PictureCache
from recorder_app.qt.graph_editor.problems import ProblemList
from recorder_app.qt.graph_editor.scene import THUMB_WIDTH, GraphScene, node_sizes, spacing_for
from recorder_app.qt.graph_editor.task_list import TaskEntry, TaskList
from recorder_app.qt.graph_editor.view import GraphEditorView
from recorder_app.qt.workers import BackgroundJob, run_in_background
from recorder_app.recording.workspace import Workspace

log = logging.getLogger(__name__)

PICTURE_WIDTH = int(THUMB_WIDTH * 2)  # sharp when zoomed in to 200 %
RIGHT_PANEL_MIN_HEIGHT = 120  # the inspector at its smallest (it scrolls below that)


def _fill(target: QMenu, actions: Sequence[QAction | None]) -> None:
    """Add actions in order; None is a separator."""
    for action in actions:
        if action is None:
            target.addSeparator()
        else:
            target.addAction(action)


class GraphEditorPage(QWidget):
    node_selected = Signal(str)
    edge_selected = Signal(str)
    graph_opened = Signal(str)  # task folder
    graph_saved = Signal(str)  # graph.json
    build_finished = Signal(list)  # TaskBuildReport per task built
    message_posted = Signal(str)
    show_requested = Signal()  # a menu command was chosen on another tab

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphEditorPage")
        self.workspace: Workspace | None = None
        self.document = GraphDocument(self)
        self.pictures = PictureCache()
        self.build_pool = QThreadPool(self)
        self.build_pool.setMaxThreadCount(1)
        self._build_job: BackgroundJob | None = None
        self._entry: TaskEntry | None = None
        self.report_dialog: BuildReportDialog | None = None
        self._pins_before: dict[str, tuple[Pin, ...]] = {}
        self.edge_dialog: NewEdgeDialog | None = None
        self._laid_out = False  # the open graph has been drawn once: keep its extent
        self._cursor: str | None = None  # the screen the arrow keys move from

        self.tasks = TaskList()
        self.build_button = QPushButton("Build graph from demonstrations")
        self.build_button.setObjectName("buildGraphButton")
        self.open_folder_button = QPushButton("Open suite folder…")
        self.progress = QProgressBar()
        self.progress.setObjectName("buildProgress")
        self.progress.setTextVisible(True)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("")
        self.progress.hide()  # shown from the first build on
        self.build_label = QLabel("")
        self.build_label.setWordWrap(True)

        self.scene = GraphScene(self)
        self.view = GraphEditorView(self.scene)
        self.header = QLabel("Choose a task on the left.")
        self.header.setObjectName("graphHeader")
        self.header.setWordWrap(True)
        self.inspector = InspectorStack(self.document, self.pictures)
        self.problems = ProblemList()
        self.problems_title = QLabel("Problems")
        self.problems_title.setObjectName("problemsTitle")
        self.merges = PossibleMergesPanel(self.document, self.pictures, lambda: self.building)

        self._make_actions()
        self.toolbar = ActionBar(
            [
                self.save_action,
                None,
                self.undo_action,
                self.redo_action,
                None,
                self.merge_action,
                self.delete_action,
                self.done_action,
                self.start_action,
                None,
                self.fit_action,
                self.zoom_in_action,
                self.zoom_out_action,
            ]
        )
        self.toolbar.setObjectName("graphToolbar")
        self._layout()
        self._connect()
        self._on_graph_changed()

    # -- construction

    def _make_actions(self) -> None:
        def make(text: str, keys: Sequence[str], slot: Callable[[], object], tip: str) -> QAction:
            action = QAction(text, self)
            action.setShortcuts([QKeySequence(k) for k in keys])
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            shown = QKeySequence(keys[0]).toString(QKeySequence.SequenceFormat.NativeText)
            action.setToolTip(f"{tip} ({shown})")
            action.setStatusTip(tip)
            action.triggered.connect(lambda _=False: slot())
            self.addAction(action)
            return action

        self.save_action = make(
            "Save", ["Ctrl+S"], self.save, "Write graph.json (and new node pictures) atomically"
        )
        self.undo_action = make("Undo", ["Ctrl+Z"], self.undo, "Undo the last edit")
        self.redo_action = make(
            "Redo", ["Ctrl+Shift+Z", "Ctrl+Y"], self.redo, "Redo the edit undone last"
        )
        for action in (self.undo_action, self.redo_action):
            action.setIconText(action.text())  # the toolbar stays short; menus name the edit
        self.delete_action = make(
            "Delete",
            ["Delete", "Backspace"],
            self.delete_selected,
            "Delete the selected screens and edges",
        )
        self.merge_action = make(
            "Merge",
            ["M"],
            self.merge_selected,
            "Merge the selected screens into one node (the decision survives rebuilds)",
        )
        self.done_action = make(
            "Toggle DONE", ["D"], self.toggle_done, "Mark or unmark the selected screens as DONE"
        )
        self.start_action = make(
            "Set START", ["S"], self.set_start, "Make the selected screen the START node"
        )
        self.fit_action = make(
            "Fit",
            ["F"],
            self.view.fit_all,
            "Show the whole graph, or from START as much as fits with readable labels",
        )
        self.zoom_in_action = make(
            "Zoom in", ["+", "=", "Ctrl++"], self.view.zoom_in, "Zoom in (or Ctrl+wheel)"
        )
        self.zoom_out_action = make(
            "Zoom out", ["-", "Ctrl+-"], self.view.zoom_out, "Zoom out (or Ctrl+wheel)"
        )
        self.build_action = make(
            "Build graph from demonstrations",
            ["Ctrl+B"],
            self.build_current,
            "Merge the task's demonstrations into its graph; manual decisions are kept",
        )
        self.open_folder_action = make(
            "Open suite folder…",
            ["Ctrl+Shift+O"],
            self._on_open_folder_triggered,
            "List the tasks of another suite folder, such as task_graphs/sample",
        )
        # The menus hold stand-ins without shortcuts: they work from any tab (and bring
        # the Graphs tab to the front), while the keys work only where the graph is seen.
        self._proxies: dict[QAction, QAction] = {}
        self.edit_menu = QMenu("&Edit", self)
        _fill(
            self.edit_menu,
            [
                self._proxy(self.undo_action),
                self._proxy(self.redo_action),
                None,
                self._proxy(self.delete_action),
                self._proxy(self.merge_action),
                self._proxy(self.done_action),
                self._proxy(self.start_action),
            ],
        )
        self.graph_menu = QMenu("&Graph", self)
        _fill(
            self.graph_menu,
            [
                self._proxy(self.open_folder_action),
                self._proxy(self.build_action),
                self._proxy(self.save_action),
                None,
                self._proxy(self.fit_action),
                self._proxy(self.zoom_in_action),
                self._proxy(self.zoom_out_action),
            ],
        )
        self.menus = [self.edit_menu, self.graph_menu]

    def _proxy(self, action: QAction) -> QAction:
        """A menu entry for ``action`` that names its keys but does not own them."""
        proxy = QAction(self)
        proxy.setStatusTip(action.statusTip())

        def sync() -> None:
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            proxy.setText(f"{action.text()}\t{keys}" if keys else action.text())

        def trigger() -> None:
            if not self.isVisible():
                self.show_requested.emit()
            self._update_actions()
            action.trigger()

        action.changed.connect(sync)
        proxy.triggered.connect(lambda _=False: trigger())
        sync()
        self._proxies[action] = proxy
        return proxy

    def menu_action(self, action: QAction) -> QAction:
        """The Edit/Graph menu entry standing in for one of the page's actions."""
        return self._proxies[action]

    def _layout(self) -> None:
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.tasks, 1)
        left_layout.addWidget(self.build_button)
        left_layout.addWidget(self.progress)
        left_layout.addWidget(self.build_label)
        left_layout.addWidget(self.open_folder_button)
        center = QWidget()
        center_layout = QVBoxLayout(center)
        center_layout.setContentsMargins(0, 0, 0, 0)
        center_layout.addWidget(self.toolbar)
        center_layout.addWidget(self.header)
        center_layout.addWidget(self.view, 1)
        problems_box = QWidget()
        problems_layout = QVBoxLayout(problems_box)
        problems_layout.setContentsMargins(0, 0, 0, 0)
        problems_layout.addWidget(self.problems_title)
        problems_layout.addWidget(self.problems, 1)
        # The inspector scrolls rather than making the window taller than the screen.
        inspector_area = QScrollArea()
        inspector_area.setObjectName("inspectorArea")
        inspector_area.setWidgetResizable(True)
        inspector_area.setFrameShape(QScrollArea.Shape.NoFrame)
        inspector_area.setWidget(self.inspector)
        inspector_area.setMinimumHeight(RIGHT_PANEL_MIN_HEIGHT)
        # as wide as the inspector needs: it scrolls up and down only, nothing is cut
        inspector_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        inspector_area.setMinimumWidth(
            self.inspector.minimumSizeHint().width()
            + inspector_area.verticalScrollBar().sizeHint().width()
        )
        self.side_tabs = QTabWidget()
        self.side_tabs.setObjectName("graphSideTabs")
        self.side_tabs.addTab(problems_box, "Problems")
        self.side_tabs.addTab(self.merges, "Possible merges")
        right = QSplitter(Qt.Orientation.Vertical)
        right.setObjectName("graphSideSplitter")
        right.setChildrenCollapsible(False)
        right.addWidget(inspector_area)
        right.addWidget(self.side_tabs)
        right.setStretchFactor(0, 1)
        right.setStretchFactor(1, 1)
        right.setSizes([650, 350])  # shares, until the user drags the handle
        self.side_splitter = right
        splitter = QSplitter()
        splitter.setObjectName("graphSplitter")
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(left)
        splitter.addWidget(center)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([210, 700, 360])
        self.splitter = splitter
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(splitter)

    def _connect(self) -> None:
        doc = self.document
        doc.opened.connect(self._on_document_opened)
        doc.graph_changed.connect(self._on_graph_changed)
        doc.nodes_moved.connect(self._on_nodes_moved)
        doc.undo_stack.cleanChanged.connect(self._on_clean_changed)
        doc.undo_stack.canUndoChanged.connect(self._on_can_undo_changed)
        doc.undo_stack.canRedoChanged.connect(self._on_can_undo_changed)
        doc.undo_stack.undoTextChanged.connect(self._on_undo_text_changed)
        doc.undo_stack.redoTextChanged.connect(self._on_redo_text_changed)
        self.scene.selectionChanged.connect(self._on_selection_changed)
        self.scene.edge_drawn.connect(self._on_edge_drawn)
        self.view.selection_stepped.connect(self.step_selection)
        self.view.nudged.connect(self.nudge_selected)
        # queued: the scene redraws after the drag's release has been handled
        self.scene.nodes_dragged.connect(self._on_nodes_dragged, Qt.ConnectionType.QueuedConnection)
        self.problems.node_clicked.connect(self._on_problem_node_clicked)
        self.problems.edge_clicked.connect(self._on_problem_edge_clicked)
        self.inspector.node.edit_requested.connect(self._on_edit_requested)
        self.inspector.edge.edit_requested.connect(self._on_edit_requested)
        self.tasks.task_chosen.connect(self._on_task_chosen)
        self.build_button.clicked.connect(self.build_current)
        self.open_folder_button.clicked.connect(self._on_open_folder_triggered)
        self.merges.message_posted.connect(self._say)
        self.merges.problem.connect(lambda title, text: show_problem(self, title, text))

    # -- page protocol (main window)

    def set_workspace(self, workspace: Workspace) -> None:
        if self.document.modified:
            self._ask_to_save(cancellable=False)
        self.workspace = workspace
        self.document.close()
        self._entry = None
        self.tasks.set_workspace(workspace)
        self._update_actions()

    def can_close(self) -> bool:
        """Asked before the studio closes: False keeps it open (the user cancelled)."""
        return self._ask_to_save(cancellable=True)

    def shutdown(self) -> None:
        # A build swaps the task folder in atomically; let it finish rather than cut it.
        self.build_pool.waitForDone(60_000)
        self.merges.pool.waitForDone(10_000)  # comparisons only read; a short wait

    # -- opening

    def open_suite_folder(self, folder: str | Path) -> None:
        """List a suite folder's tasks (or one task folder) and open its first graph."""
        folder = Path(folder)
        try:
            restore(folder)  # a packed suite (the installed sample) gets its copies back
        except OSError as exc:
            log.warning(
                "%s is packed and read-only, its copied images are missing: %s", folder, exc
            )
        self.tasks.add_folder(folder)
        first = folder if (folder / io.GRAPH_FILE).is_file() else None
        if first is None:
            first = next(
                (
                    e.task_dir
                    for e in self.tasks.entries()
                    if e.task_dir.parent.resolve() == folder.resolve() and e.has_graph
                ),
                None,
            )
        if first is not None:
            self.tasks.select_task_dir(first)

    def open_task(self, task_dir: str | Path) -> bool:
        """Show the task (its graph if it has one). False when the user kept the current one."""
        task_dir = Path(task_dir)
        if (
            self.document.task_dir is not None
            and self.document.task_dir.resolve() == task_dir.resolve()
        ):
            return True
        if not self._ask_to_save(cancellable=True):
            return False
        if not self.tasks.select_task_dir(task_dir, notify=False):
            self.tasks.add_folder(task_dir)
            self.tasks.select_task_dir(task_dir, notify=False)
        self._entry = self.tasks.current_entry()
        if not (task_dir / io.GRAPH_FILE).is_file():
            self.document.close()
            self.inspector.show_nothing()
            return True
        try:
            entry = self._entry
            self.document.open(task_dir, entry.demos_root if entry else self.tasks.demos_root)
        except GraphBuilderError as exc:
            self.document.close()
            show_problem(self, "Cannot open the graph", str(exc))
            return False
        self.scene.clearSelection()
        self.view.fit_all()
        self.graph_opened.emit(str(task_dir))
        return True

    # -- edits

    def apply(self, edit: Command) -> bool:
        """Apply one graph_builder edit as an undoable step; problems are shown, not raised."""
        if self._build_job is not None:
            self._say("Wait for the build to finish before editing.")
            return False
        try:
            self.document.apply(edit)
        except (GraphBuilderError, StudioError) as exc:
            show_problem(self, "This edit does not apply", str(exc))
            return False
        self._say(edit.describe().capitalize())
        return True

    def apply_all(self, title: str, edits: Sequence[Command]) -> bool:
        """Several edits as one undo step, all or none."""
        if len(edits) == 1:
            return self.apply(edits[0])
        if self._build_job is not None:
            self._say("Wait for the build to finish before editing.")
            return False
        try:
            self.document.apply_all(title, edits)
        except (GraphBuilderError, StudioError) as exc:
            show_problem(self, "This edit does not apply", str(exc))
            return False
        self._say(title.capitalize())
        return True

    def merge_selected(self) -> bool:
        graph = self.document.graph
        selected = set(self.scene.selected_node_ids())
        if graph is None or len(selected) < 2:
            self._say("Select two or more screens to merge (Ctrl+click).")
            return False
        ordered = [n.id for n in graph.nodes if n.id in selected]
        ok = self.apply(MergeNodes(ordered[0], tuple(ordered[1:])))
        if ok:
            self.scene.select([ordered[0]])
        return ok

    def delete_selected(self) -> bool:
        nodes = self.scene.selected_node_ids()
        edges = self.scene.selected_edge_ids()
        graph = self.document.graph
        if graph is None or not (nodes or edges):
            return False
        gone = set(nodes)
        loose = [e for e in edges if {graph.edge(e).source, graph.edge(e).target}.isdisjoint(gone)]
        edits: list[Command] = [DeleteEdge(e) for e in loose] + [DeleteNode(n) for n in nodes]
        what = ", ".join([*nodes, *loose])
        return self.apply_all(f"delete {what}", edits)

    def toggle_done(self) -> bool:
        graph = self.document.graph
        nodes = self.scene.selected_node_ids()
        if graph is None or not nodes:
            return False
        edits: list[Command] = [
            SetNodeKind(n, NodeKind.STATE if graph.node(n).kind is NodeKind.DONE else NodeKind.DONE)
            for n in nodes
        ]
        return self.apply_all("toggle DONE", edits)

    def set_start(self) -> bool:
        nodes = self.scene.selected_node_ids()
        if len(nodes) != 1:
            self._say("Select one screen to make it START.")
            return False
        return self.apply(SetNodeKind(nodes[0], NodeKind.START))

    def step_selection(self, dx: int, dy: int, extend: bool = False) -> str | None:
        """Select the screen nearest the current one in direction (dx, dy) (the arrow keys).

        With nothing selected, START is selected. ``extend`` adds to the selection.
        Returns the screen selected, or None when there is none that way.
        """
        graph = self.document.graph
        if graph is None or not self.scene.node_ids():
            return None
        selected = self.scene.selected_node_ids()
        if not selected:
            target: str | None = graph.start.id if graph.start else self.scene.node_ids()[0]
        else:
            current = self._cursor if self._cursor in selected else selected[-1]
            centers = {}
            for node_id in self.scene.node_ids():
                c = self.scene.node_item(node_id).sceneBoundingRect().center()
                centers[node_id] = (c.x(), c.y())
            target = nearest_in_direction(centers, current, (dx, dy))
        if target is None:
            return None
        self._cursor = target
        self.scene.select([*selected, target] if extend else [target])
        self.view.ensureVisible(self.scene.node_item(target), 40, 40)
        return target

    def nudge_selected(self, dx: float, dy: float) -> bool:
        """Move the selected screens by (dx, dy) scene pixels, as one undoable step
        (repeated nudges of the same screens merge into that step)."""
        nodes = self.scene.selected_node_ids()
        if self.document.graph is None or not nodes or self._build_job is not None:
            return False
        moves = {}
        for node_id in nodes:
            position = self.document.places.position(node_id)
            if position is not None:
                moves[node_id] = (position[0] + dx, position[1] + dy)
        self.document.move(moves)
        self.view.ensureVisible(self.scene.node_item(nodes[-1]), 40, 40)
        return bool(moves)

    def undo(self) -> None:
        self.document.undo_stack.undo()

    def redo(self) -> None:
        self.document.undo_stack.redo()

    def add_edge(self, source: str, target: str) -> NewEdgeDialog | None:
        """Ask for the action of a new edge from ``source`` to ``target`` (non-blocking)."""
        graph = self.document.graph
        sources = self.document.sources
        if graph is None or sources is None:
            return None
        node = graph.node(source)
        state = sources.node_state(node)
        hierarchy = None
        if state is not None:
            try:
                hierarchy = state.hierarchy()
            except GraphBuilderError:
                hierarchy = None
        dialog = NewEdgeDialog(
            source,
            target,
            [e.id for e in graph.edges],
            self.pictures.full(sources.node_screenshot(node)),
            state.size if state is not None else node.screen,
            hierarchy,
            graph_settings(graph).settings,
            self,
        )
        dialog.edge_chosen.connect(self._on_edge_chosen)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(lambda _: setattr(self, "edge_dialog", None))
        self.edge_dialog = dialog
        dialog.open()
        return dialog

    # -- saving

    def save(self) -> bool:
        """Save the graph; an invalid graph is saved only when the user confirms."""
        if self.document.graph is None:
            return False
        if self._build_job is not None:
            self._say("Wait for the build to finish before saving.")
            return False
        problems = self.document.problems()
        if has_errors(problems):
            errors = [str(p) for p in problems if p.severity is Severity.ERROR]
            answer = QMessageBox.question(
                self,
                "Save a graph with errors?",
                f"The graph has {len(errors)} error{'s' if len(errors) != 1 else ''}; "
                "evaluation cannot use it as it is:\n\n"
                + "\n".join(errors[:8])
                + ("\n…" if len(errors) > 8 else "")
                + "\n\nSave anyway?",
                QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Cancel,
                QMessageBox.StandardButton.Cancel,
            )
            if answer != QMessageBox.StandardButton.Save:
                self._say("Not saved.")
                return False
        try:
            notes = self.document.save()
        except StudioError as exc:
            show_problem(self, "Cannot save the graph", str(exc))
            return False
        assert self.document.task_dir is not None
        path = self.document.task_dir / io.GRAPH_FILE
        self._say(f"Saved {path}" + (f" ({'; '.join(notes)})" if notes else ""))
        self.tasks.refresh()
        self.graph_saved.emit(str(path))
        return True

    def _ask_to_save(self, *, cancellable: bool) -> bool:
        """Offer to save unsaved edits. False when the user cancelled (or saving failed)."""
        if not self.document.modified:
            return True
        buttons = QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
        if cancellable:
            buttons |= QMessageBox.StandardButton.Cancel
        graph = self.document.require_graph()
        answer = QMessageBox.question(
            self,
            "Unsaved graph edits",
            f"The graph of {graph.task_id} has edits that are not saved. Save them?",
            buttons,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.save() or not cancellable
        if answer == QMessageBox.StandardButton.Discard:
            try:
                self.document.revert()
            except GraphBuilderError:
                self.document.close()  # the file went bad meanwhile; nothing left to keep
            return True
        return False

    # -- building

    def build_current(self) -> bool:
        """Build the chosen task's graph from its demonstrations.

        The same rebuild as ``elderbench build``: the settings stored in the graph are
        reused and the hand edits carried over. Merging runs in a worker thread; before
        anything is written the user is asked when demonstrations cannot be read or the
        graph has hand edits. The rebuilt graph arrives as one undoable step.
        """
        entry = self._entry or self.tasks.current_entry()
        demos_root = entry.demos_root if entry is not None else None
        if self._build_job is not None:
            return False
        if entry is None or demos_root is None or not io.demo_dirs(demos_root, entry.task_id):
            show_problem(
                self,
                "Nothing to build",
                "Choose a task that has demonstrations in this workspace "
                f"({demos_root or 'no workspace'}/<task>/).",
            )
            return False
        if self.document.modified and not self._ask_to_save(cancellable=True):
            return False
        self._pins_before = {entry.task_id: self._previous_graph_pins(entry)}
        self.progress.show()
        self.build_label.setText(f"Building {entry.task_id} from its demonstrations…")
        self._prepare(entry, demos_root, skip_unreadable=False)
        return True

    def _prepare(self, entry: TaskEntry, demos_root: Path, *, skip_unreadable: bool) -> None:
        def prepare() -> PreparedBuild:
            return prepare_task(
                demos_root, entry.task_id, entry.suite_dir, skip_unreadable=skip_unreadable
            )

        self._busy(f"building {entry.task_id}…")
        self._build_job = run_in_background(
            prepare,
            on_done=lambda prepared: self._on_prepared(entry, prepared),
            on_error=self._on_build_error,
            pool=self.build_pool,
        )
        self._update_actions()

    def _busy(self, text: str) -> None:
        self.progress.setRange(0, 0)
        self.progress.setFormat(text)

    @property
    def building(self) -> bool:
        return self._build_job is not None

    def _previous_graph_pins(self, entry: TaskEntry) -> tuple[Pin, ...]:
        if not entry.has_graph:
            return ()
        try:
            return io.load_graph(entry.task_dir).pins
        except GraphBuilderError:
            return ()

    def _on_prepared(self, entry: TaskEntry, prepared: PreparedBuild) -> None:
        self._build_job = None
        report = prepared.report
        if report.unreadable and not prepared.writable and self._build_without(report):
            assert entry.demos_root is not None
            self._prepare(entry, entry.demos_root, skip_unreadable=True)
            return
        if prepared.writable and report.hand_edits and not self._rebuild_over(report):
            self._on_build_done(
                [replace(report, written=False, note="cancelled; the graph is left as it is")]
            )
            return
        if not prepared.writable:
            self._on_build_done([report])
            return
        self._busy(f"writing {entry.task_id}…")
        self._build_job = run_in_background(
            lambda: [write_task(prepared)],
            on_done=self._on_build_done,
            on_error=self._on_build_error,
            pool=self.build_pool,
        )
        self._update_actions()

    def _build_without(self, report: TaskBuildReport) -> bool:
        """Ask whether to build without the demonstrations that cannot be read."""
        names = "\n".join(f"• {path}" for path in report.unreadable)
        answer = QMessageBox.question(
            self,
            "Demonstrations cannot be read",
            f"These demonstrations of {report.task_id} cannot be read:\n{names}\n\n"
            "Build the graph without them? Otherwise the graph is left as it is.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Yes

    def _rebuild_over(self, report: TaskBuildReport) -> bool:
        """Ask before a rebuild replaces a graph with hand edits, saying what it keeps."""
        edits = report.hand_edits
        lines = [f"kept: {k}" for k in edits.kept] + [f"NOT kept: {d}" for d in edits.dropped]
        shown = "\n".join(f"• {line}" for line in lines[:12])
        more = f"\n… and {len(lines) - 12} more" if len(lines) > 12 else ""
        answer = QMessageBox.question(
            self,
            "Rebuild over hand edits",
            f"The graph of {report.task_id} has hand edits:\n{shown}{more}\n\n"
            "Rebuild it from the demonstrations? Undo brings the current graph back.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Yes

    def _on_build_done(self, reports: list[TaskBuildReport]) -> None:
        self._build_job = None
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.progress.setFormat("done")
        written = [r for r in reports if r.written]
        self.build_label.setText("; ".join(r.summary() for r in reports) or "Nothing was built.")
        self.tasks.refresh()
        for report in written:
            self._show_rebuilt(report)
        self._update_actions()
        dialog = BuildReportDialog(reports, self._pins_before, self)
        dialog.finished.connect(lambda _: setattr(self, "report_dialog", None))
        self.report_dialog = dialog
        dialog.open()
        self.build_finished.emit(reports)

    def _show_rebuilt(self, report: TaskBuildReport) -> None:
        """Show a written graph: over the open one as an undoable step, else opened."""
        if self._entry is None or report.task_id != self._entry.task_id:
            return
        task_dir = self.document.task_dir
        if task_dir is not None and task_dir.resolve() == report.output.resolve():
            try:
                self.document.adopt_rebuild(io.load_graph(report.output))
                return
            except GraphBuilderError as exc:
                log.warning("cannot show the rebuilt graph of %s: %s", report.task_id, exc)
        self.document.close()
        self.open_task(report.output)

    def _on_build_error(self, exc: Exception) -> None:
        self._build_job = None
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("failed")
        self.build_label.setText(f"The build failed: {exc}")
        self._update_actions()
        show_problem(self, "The build failed", str(exc))

    # -- refreshing

    @Slot()
    def _on_nodes_moved(self) -> None:
        graph = self.document.graph
        if graph is None:
            return
        places = self.document.places
        positions = {n.id: p for n in graph.nodes if (p := places.position(n.id)) is not None}
        self.scene.move_nodes(positions)
        self._update_header()

    @Slot()
    def _on_document_opened(self) -> None:
        self._laid_out = False

    @Slot()
    def _on_graph_changed(self) -> None:
        doc = self.document
        graph = doc.graph
        pictures: dict[str, QPixmap | None] = {}
        node_problems: dict[str, str] = {}
        edge_problems: dict[str, str] = {}
        captions: dict[str, str] = {}
        problems = doc.problems()
        if graph is not None and doc.sources is not None:
            for node in graph.nodes:
                path = doc.sources.node_screenshot(node)
                pictures[node.id] = self.pictures.thumbnail(path, PICTURE_WIDTH)
            for edge in graph.edges:
                if edge.support:
                    captions[edge.id] = doc.sources.target_label(edge.support[0])
            for p in problems:
                if p.node_id:
                    node_problems.setdefault(p.node_id, p.message)
                if p.edge_id:
                    edge_problems.setdefault(p.edge_id, p.message)
        positions = None
        if graph is not None:
            sizes = node_sizes(graph)
            positions = doc.places.place(graph, sizes, spacing_for(sizes))
        self.scene.show_graph(
            graph,
            pictures,
            node_problems,
            edge_problems,
            captions,
            positions,
            keep_extent=self._laid_out,
        )
        if graph is not None and self._laid_out and doc.places.fresh:
            # a node placed anew (a split, a rebuild): on screen, where the user looks
            self.view.ensureVisible(self.scene.node_item(doc.places.fresh[0]), 40, 40)
        self._laid_out = graph is not None
        self.problems.show_problems(problems, has_graph=graph is not None)
        errors = sum(p.severity is Severity.ERROR for p in problems)
        self.problems_title.setText(
            f"Problems: {errors} error{'s' if errors != 1 else ''}, "
            f"{len(problems) - errors} warning{'s' if len(problems) - errors != 1 else ''}"
            if graph is not None
            else "Problems"
        )
        self.side_tabs.setTabText(0, f"Problems ({len(problems)})" if graph else "Problems")
        self._update_header()
        self._update_actions()

    def _update_header(self) -> None:
        graph = self.document.graph
        entry = self._entry
        if graph is None:
            if entry is not None and entry.demo_count:
                text = (
                    f"<b>{entry.task_id}</b> has no graph yet: press <i>Build graph from "
                    f"demonstrations</i> (Ctrl+B) to merge its {entry.demo_count} "
                    "demonstrations."
                )
            elif entry is not None:
                text = f"<b>{entry.task_id}</b> has no graph and no demonstrations yet."
            else:
                text = "Choose a task on the left, or open a suite folder."
            self.header.setText(text)
            return
        modified = (
            " · <span style='color:#b45309'>unsaved edits</span>" if self.document.modified else ""
        )
        self.header.setText(
            f"<b>{graph.task_id}</b> · {len(graph.nodes)} nodes · {len(graph.edges)} edges · "
            f"{len(graph.done_nodes)} DONE · {len(graph.pins)} manual decisions · "
            f"<span style='color:#6b7280'>{self.document.task_dir}</span>{modified}"
        )

    def _update_actions(self) -> None:
        self._enable_actions(shown=self.isVisible(), targets={a: a for a in self._proxies})
        self._enable_actions(shown=True, targets=self._proxies)

    def _enable_actions(self, *, shown: bool, targets: dict[QAction, QAction]) -> None:
        """Enable ``targets[action]`` as ``action`` would be with the page ``shown`` or not."""
        enabled: dict[QAction, bool] = {}
        graph = self.document.graph
        editable = shown and graph is not None and self._build_job is None
        nodes = self.scene.selected_node_ids()
        edges = self.scene.selected_edge_ids()
        stack = self.document.undo_stack
        enabled[self.save_action] = editable
        enabled[self.undo_action] = editable and stack.canUndo()
        enabled[self.redo_action] = editable and stack.canRedo()
        enabled[self.delete_action] = editable and bool(nodes or edges)
        enabled[self.merge_action] = editable and len(nodes) >= 2
        enabled[self.done_action] = editable and bool(nodes)
        enabled[self.start_action] = editable and len(nodes) == 1
        for action in (self.fit_action, self.zoom_in_action, self.zoom_out_action):
            enabled[action] = shown and graph is not None
        entry = self._entry
        can_build = (
            self._build_job is None
            and entry is not None
            and entry.demo_count > 0
            and entry.demos_root is not None
        )
        enabled[self.build_action] = shown and can_build
        enabled[self.open_folder_action] = shown
        for action, value in enabled.items():
            targets[action].setEnabled(value)
        self.build_button.setEnabled(can_build)
        self.build_button.setText(
            "Rebuild graph from demonstrations"
            if entry is not None and entry.has_graph
            else "Build graph from demonstrations"
        )

    def _say(self, text: str) -> None:
        log.info("%s", text)
        self.message_posted.emit(text)
        if self._build_job is None:
            self.build_label.setText(text)

    # -- events

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self.building:
            self.tasks.refresh()  # tasks and demos recorded since the tab was last shown
        self._update_actions()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._update_actions()

    # -- slots

    @Slot()
    def _on_selection_changed(self) -> None:
        nodes = self.scene.selected_node_ids()
        edges = self.scene.selected_edge_ids()
        if self.document.graph is None:
            self.inspector.show_nothing()
        elif len(nodes) == 1 and not edges:
            self.inspector.show_node(nodes[0])
            self.node_selected.emit(nodes[0])
        elif len(edges) == 1 and not nodes:
            self.inspector.show_edge(edges[0])
            self.edge_selected.emit(edges[0])
        elif nodes or edges:
            hint = f"{len(nodes)} screens and {len(edges)} edges selected."
            if len(nodes) >= 2:
                hint += " Press M to merge the screens into one node."
            self.inspector.show_nothing(hint)
        else:
            self.inspector.show_nothing(
                "Select a screen to see its members, hierarchy and similarity, or an edge "
                "to see and edit its matching rule.\n\nCtrl+click selects several screens "
                "to merge. Drag from a screen's yellow handle to another screen to add an edge."
                "\n\nIn the graph, arrows select the nearest screen that way (Shift adds it) "
                "and Alt+arrows move the selected screens."
            )
        self._update_actions()

    @Slot(bool)
    def _on_can_undo_changed(self, can: bool) -> None:
        self._update_actions()

    @Slot(bool)
    def _on_clean_changed(self, clean: bool) -> None:
        self._update_header()

    @Slot(str)
    def _on_undo_text_changed(self, text: str) -> None:
        self.undo_action.setText(f"Undo {text}" if text else "Undo")

    @Slot(str)
    def _on_redo_text_changed(self, text: str) -> None:
        self.redo_action.setText(f"Redo {text}" if text else "Redo")

    @Slot(dict)
    def _on_nodes_dragged(self, moves: dict[str, tuple[float, float]]) -> None:
        if self._build_job is None and self.document.graph is not None:
            self.document.move(moves)
        else:  # not now: put them back
            self._on_graph_changed()

    @Slot(str, str)
    def _on_edge_drawn(self, source: str, target: str) -> None:
        if self._build_job is None:
            self.add_edge(source, target)

    @Slot(object)
    def _on_edge_chosen(self, edge: Edge) -> None:
        if self.apply(AddEdge(edge)):
            self.scene.select(edge_ids=[edge.id])

    @Slot(object)
    def _on_edit_requested(self, edit: Command) -> None:
        self.apply(edit)

    @Slot(str)
    def _on_problem_node_clicked(self, node_id: str) -> None:
        if node_id in self.scene.node_ids():
            self.scene.select([node_id])
            self.view.centerOn(self.scene.node_item(node_id))

    @Slot(str)
    def _on_problem_edge_clicked(self, edge_id: str) -> None:
        if edge_id in self.scene.edge_ids():
            self.scene.select(edge_ids=[edge_id])
            self.view.centerOn(self.scene.edge_item(edge_id))

    @Slot(str)
    def _on_task_chosen(self, task_dir: str) -> None:
        if not task_dir:
            return
        previous = self.document.task_dir
        if not self.open_task(task_dir) and previous is not None:
            self.tasks.select_task_dir(previous, notify=False)  # the user kept the open graph
        self._update_header()
        self._update_actions()

    @Slot()
    def _on_open_folder_triggered(self) -> None:
        start = str(self.workspace.suites_dir) if self.workspace else str(Path.home())
        folder = QFileDialog.getExistingDirectory(self, "Open a suite folder", start)
        if folder:
            self.open_suite_folder(folder)
