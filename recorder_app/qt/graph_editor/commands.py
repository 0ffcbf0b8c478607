"""The undo stack's one command: a graph_builder edit and the inverse it returned.

Redo applies the edit, undo applies its inverse; applying an inverse returns the edit
again, so the pair swaps on every step and nothing here knows what an edit does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QUndoCommand

from graph_builder.edits import Command
from graph_builder.model import TaskGraph

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
