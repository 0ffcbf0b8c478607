"""The graph being edited: the model, where it lives, its undo stack and what is saved.

Widgets never keep model objects: they keep ids and ask the document. Every change goes
through ``apply(edit)`` (a graph_builder edit, wrapped for the undo stack), and the
document says so with ``graph_changed``.

>>> import shutil, tempfile
>>> from importlib.resources import files
>>> from PySide6.QtWidgets import QApplication
>>> from graph_builder.edits import SetNodeKind
>>> from graph_builder.model import NodeKind
>>> from graph_builder.io import load_graph
>>> app = QApplication.instance() or QApplication([])
>>> sample = files("task_graphs") / "sample"
>>> tmp = tempfile.TemporaryDirectory()
>>> task_dir = Path(shutil.copytree(sample / "font_bigger", Path(tmp.name) / "font_bigger"))
>>> document = GraphDocument()
>>> _ = document.open(task_dir, sample / "demos")
>>> document.apply(SetNodeKind("n4", NodeKind.DONE))
>>> document.save()  # the problems left, if any
[]
>>> load_graph(task_dir).node("n4").kind
<NodeKind.DONE: 'done'>
>>> tmp.cleanup()
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from graph_builder import io
from graph_builder.build import suite_lock, write_node_files
from graph_builder.edits import Command, ReplaceGraph
from graph_builder.errors import GraphBuilderError
from graph_builder.model import TaskGraph
from graph_builder.validate import Problem, validate_graph
from recorder_app.errors import StudioError, explain_os_error
from recorder_app.qt.graph_editor.commands import EditCommand, MoveNodesCommand
from recorder_app.qt.graph_editor.layout import NodePlaces, Point
from recorder_app.qt.graph_editor.sources import ScreenSources

log = logging.getLogger(__name__)


class GraphDocument(QObject):
    opened = Signal()  # another graph (or none) is now being edited
    graph_changed = Signal()  # the graph was edited, undone, redone or reloaded
    nodes_moved = Signal()  # only where nodes are drawn changed
    saved = Signal(str)  # path of graph.json

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.undo_stack = QUndoStack(self)
        self._graph: TaskGraph | None = None
        self._saved: TaskGraph | None = None
        self._problems: tuple[TaskGraph, list[Problem]] | None = None
        self.task_dir: Path | None = None
        self.sources: ScreenSources | None = None
        self.places = NodePlaces()  # where each node is drawn, kept while the graph is open
        self.layout_problem = ""  # why layout.json could not be read (then it is not written)

    # -- state

    @property
    def graph(self) -> TaskGraph | None:
        return self._graph

    def require_graph(self) -> TaskGraph:
        if self._graph is None:
            raise StudioError("no graph is open; choose a task in the list first")
        return self._graph

    @property
    def modified(self) -> bool:
        """Edits (of the graph or of where its nodes are drawn) that are not saved."""
        return self._graph is not None and not self.undo_stack.isClean()

    def problems(self) -> list[Problem]:
        """Validation problems of the current graph (computed once per version)."""
        if self._graph is None:
            return []
        if self._problems is None or self._problems[0] is not self._graph:
            self._problems = (self._graph, validate_graph(self._graph))
        return self._problems[1]

    # -- opening

    def open(self, task_dir: Path, demos_root: Path | None = None) -> TaskGraph:
        """Load ``<task_dir>/graph.json``; raises GraphBuilderError when it is unreadable."""
        task_dir = Path(task_dir)
        graph = io.load_graph(task_dir)
        self.undo_stack.clear()
        self.places.clear()
        self.layout_problem = ""
        try:
            layout = io.load_layout(task_dir)
        except GraphBuilderError as exc:  # only positions: lay the graph out afresh
            # ...and leave the file alone: it may come from a newer studio.
            self.layout_problem = str(exc)
            log.warning("%s; the graph is laid out afresh and the file is kept", exc)
            layout = None
        if layout is not None:
            self.places.load(layout)
        self.task_dir = task_dir
        self.sources = ScreenSources(task_dir, demos_root, graph.task_id)
        self._graph = self._saved = graph
        self.opened.emit()
        self.graph_changed.emit()
        return graph

    def close(self) -> None:
        self.undo_stack.clear()
        self.places.clear()
        self.layout_problem = ""
        self._graph = self._saved = None
        self.task_dir = None
        self.sources = None
        self.opened.emit()
        self.graph_changed.emit()

    # -- editing

    def apply(self, edit: Command) -> None:
        """Apply a graph_builder edit as one undoable step (GraphEditError if it does not fit)."""
        self.undo_stack.push(EditCommand(self, edit))

    def apply_all(self, title: str, edits: Sequence[Command]) -> None:
        """Several edits as one undo step; nothing changes unless all of them apply."""
        scratch = self.require_graph()
        for edit in edits:
            scratch, _ = edit.apply(scratch)  # raises GraphEditError before the stack is touched
        self.undo_stack.beginMacro(title)
        try:
            for edit in edits:
                self.apply(edit)
        finally:
            self.undo_stack.endMacro()

    def move(self, moves: dict[str, Point]) -> None:
        """Draw nodes elsewhere, as one undoable step (saved in layout.json with the graph)."""
        before = {i: p for i in moves if (p := self.places.position(i)) is not None}
        after = {i: p for i, p in moves.items() if i in before and p != before[i]}
        if after:
            self.undo_stack.push(MoveNodesCommand(self, {i: before[i] for i in after}, after))

    def move_nodes(self, positions: dict[str, Point]) -> None:
        """Install node positions; only the move command calls this."""
        self.places.move(positions)
        self.nodes_moved.emit()

    def revert(self) -> None:
        """Forget unsaved edits: reload the graph as it is on disk."""
        if self.task_dir is not None:
            demos_root = self.sources.demos_root if self.sources else None
            self.open(self.task_dir, demos_root)

    def adopt_rebuild(self, graph: TaskGraph) -> None:
        """The graph a rebuild just wrote, as one undoable step over the open one.

        The rebuilt graph is what is saved now; undo brings the previous graph back as an
        unsaved edit (saving it writes it, with its pictures, again).
        """
        if self.task_dir is not None and self.sources is not None:
            # New demonstrations may have been recorded since the graph was opened.
            self.sources = ScreenSources(self.task_dir, self.sources.demos_root, graph.task_id)
        self.apply(ReplaceGraph(graph))
        self._saved = graph
        self.undo_stack.setClean()

    def replace_graph(self, graph: TaskGraph) -> None:
        """Install a new version; only the undo commands and saving call this."""
        self._graph = graph
        self.graph_changed.emit()

    # -- saving

    def stale_images(self) -> list[str]:
        """Nodes whose picture file is missing or shows a screen that left the node."""
        graph = self.require_graph()
        assert self.task_dir is not None
        before = {n.id: n for n in self._saved.nodes} if self._saved else {}
        out = []
        for node in graph.nodes:
            old = before.get(node.id)
            moved = old is None or old.members[:1] != node.members[:1]
            if moved or not (self.task_dir / node.screenshot).is_file():
                out.append(node.id)
        return out

    def save(self) -> list[str]:
        """Write node pictures that changed, then graph.json, each atomically.

        Returns notes on pictures that could not be written (their demonstrations are not
        in the workspace); the graph itself is saved regardless. Raises StudioError when
        graph.json cannot be written.
        """
        graph = self.require_graph()
        assert self.task_dir is not None and self.sources is not None
        notes: list[str] = []
        drawable: list[str] = []
        missing: list[str] = []
        for node_id in self.stale_images():
            node = graph.node(node_id)
            has_demo = node.members and self.sources.member_observation(node.members[0])
            (drawable if has_demo else missing).append(node_id)
        if self.layout_problem:
            notes.append(
                f"node positions not saved, {io.LAYOUT_FILE} is kept as it is "
                f"({self.layout_problem}); move or delete it to save positions"
            )
        if missing:
            notes.append(
                f"no picture for {', '.join(missing)}: the demonstrations they come from are "
                "not in this workspace's demos folder"
            )
        try:
            # The suite's lock: a build of the same suite (here or in a terminal) would
            # otherwise swap the task folder away under this write.
            with suite_lock(self.task_dir.parent, purpose="the studio's graph editor"):
                if drawable:
                    assert self.sources.demos_root is not None
                    graph = write_node_files(
                        self.task_dir, graph, self.sources.demos_root, drawable
                    )
                path = io.save_graph(graph, self.task_dir)
                layout = self.places.layout_of(graph)
                if layout.places and not self.layout_problem:  # drawn (not a headless save)
                    io.save_layout(layout, self.task_dir)
        except OSError as exc:
            raise StudioError(explain_os_error(exc)) from exc
        except GraphBuilderError as exc:
            raise StudioError(f"Cannot save the graph: {exc}") from exc
        self._saved = graph
        if graph != self._graph:  # refreshed activity and hash of re-pictured nodes
            self._graph = graph
            self.graph_changed.emit()
        self.undo_stack.setClean()
        self.saved.emit(str(path))
        return notes
