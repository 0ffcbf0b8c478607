"""The undo stack's commands: a graph_builder edit and the inverse it returned, and a move.

Redo applies the edit, undo applies its inverse; applying an inverse returns the edit
again, so the pair swaps on every step and nothing here knows what an edit does. Moving
nodes on the canvas changes only where they are drawn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from PySide6.QtGui import QUndoCommand

from graph_builder.edits import Command
from graph_builder.model import TaskGraph
from recorder_app.qt.graph_editor.layout import Point

if TYPE_CHECKING:
    from recorder_app.qt.graph_editor.document import GraphDocument


class EditCommand(QUndoCommand):
    """Wraps ``edit``; built by ``GraphDocument.apply`` after the edit applied once.

    The first ``redo`` (called by ``QUndoStack.push``) installs the graph computed then,
    so an edit that fails never reaches the stack.
    """

    def __init__(self, document: GraphDocument, edit: Command) -> None:
        super().__init__(edit.describe())
        self._document = document
        self.original_edit = edit
        self._forward: Command = edit
        graph = document.require_graph()
        pending, self._backward = edit.apply(graph)  # raises GraphEditError
        self._pending: TaskGraph | None = pending

    def redo(self) -> None:
        if self._pending is not None:
            graph, self._pending = self._pending, None
        else:
            graph, self._backward = self._forward.apply(self._document.require_graph())
        self._document.replace_graph(graph)

    def undo(self) -> None:
        graph, self._forward = self._backward.apply(self._document.require_graph())
        self._document.replace_graph(graph)


class MoveNodesCommand(QUndoCommand):
    """Nodes moved on the canvas. Only where they are drawn changes, not the graph.

    Consecutive moves of the same nodes (a key held down, nudge after nudge) merge into
    one undo step.
    """

    MERGE_ID = 0x6D6F7665  # any fixed id: QUndoStack merges commands that share one

    def __init__(
        self,
        document: GraphDocument,
        before: Mapping[str, Point],
        after: Mapping[str, Point],
    ) -> None:
        n = len(after)
        super().__init__(f"move {', '.join(after) if n <= 3 else f'{n} screens'}")
        self._document = document
        self.before = dict(before)
        self.after = dict(after)

    def id(self) -> int:
        return self.MERGE_ID

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt's name
        if not isinstance(other, MoveNodesCommand) or set(other.after) != set(self.after):
            return False
        self.after = dict(other.after)
        return True

    def redo(self) -> None:
        self._document.move_nodes(self.after)

    def undo(self) -> None:
        self._document.move_nodes(self.before)
