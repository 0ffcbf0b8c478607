"""The graph's validation problems, listed live; clicking one selects what it is about."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from graph_builder.validate import Problem, Severity

TARGET_ROLE = Qt.ItemDataRole.UserRole  # ("node" | "edge" | "", id)
SEVERITY_COLORS = {Severity.ERROR: QColor("#b91c1c"), Severity.WARNING: QColor("#b45309")}
SEVERITY_MARKS = {Severity.ERROR: "✖", Severity.WARNING: "⚠"}


class ProblemList(QListWidget):
    node_clicked = Signal(str)
    edge_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("problemList")
        self.setWordWrap(True)
        self.setToolTip("Problems found in the graph; click one to select the screen or edge")
        self.itemClicked.connect(self._on_item_clicked)
        self.itemActivated.connect(self._on_item_clicked)
        self.show_problems([], has_graph=False)

    def show_problems(self, problems: Sequence[Problem], *, has_graph: bool = True) -> None:
        self.clear()
        for problem in problems:
            item = QListWidgetItem(f"{SEVERITY_MARKS[problem.severity]} {problem.message}")
            item.setForeground(SEVERITY_COLORS[problem.severity])
            target = (
                ("node", problem.node_id)
                if problem.node_id
                else ("edge", problem.edge_id)
                if problem.edge_id
                else ("", "")
            )
            item.setData(TARGET_ROLE, target)
            item.setToolTip(str(problem))
            self.addItem(item)
        if not problems:
            item = QListWidgetItem("No problems found." if has_graph else "No graph open.")
            item.setForeground(QColor("#15803d" if has_graph else "#6b7280"))
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            self.addItem(item)

    def problem_count(self) -> int:
        return sum(1 for i in range(self.count()) if self.item(i).data(TARGET_ROLE) is not None)

    def problem_texts(self) -> list[str]:
        return [
            self.item(i).text()
            for i in range(self.count())
            if self.item(i).data(TARGET_ROLE) is not None
        ]

    @Slot(QListWidgetItem)
    def _on_item_clicked(self, item: QListWidgetItem) -> None:
        target = item.data(TARGET_ROLE)
        if not target:
            return
        kind, target_id = target
        if kind == "node":
            self.node_clicked.emit(target_id)
        elif kind == "edge":
            self.edge_clicked.emit(target_id)
