"""The Graphs tab: a visual editor of task graphs (see ``page.GraphEditorPage``)."""

from recorder_app.qt.graph_editor.page import GraphEditorPage

__all__ = ["GraphEditorPage"]
