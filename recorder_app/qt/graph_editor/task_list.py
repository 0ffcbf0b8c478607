"""The tasks whose graphs can be opened or built: the workspace's suites, plus other folders.

A task is listed when its suite has it (``<suite>/<task>/task.json`` or ``graph.json``),
or when the workspace has demonstrations for it (it is then built into the default
suite). Items hold folder paths and ids only.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem, QWidget

from graph_builder import io
from graph_builder.build import task_ids as demo_task_ids
from graph_builder.errors import GraphBuilderError
from graph_builder.model import DemoStatus
from recorder_app.recording.workspace import DEFAULT_SUITE, Workspace

TASK_ROLE = Qt.ItemDataRole.UserRole  # TaskEntry of a task item; None on group items


@dataclass(frozen=True, slots=True)
class TaskEntry:
    task_id: str
    suite_dir: Path
    demo_count: int = 0  # complete demonstrations: the ones a build uses
    demos_root: Path | None = None  # where this task's demonstrations live
    left_out: str = ""  # the others, in words ("1 discarded, 1 incomplete")

    @property
    def task_dir(self) -> Path:
        return self.suite_dir / self.task_id

    @property
    def has_graph(self) -> bool:
        return (self.task_dir / io.GRAPH_FILE).is_file()


def suite_entries(suite_dir: Path, demos_root: Path | None) -> list[TaskEntry]:
    """Tasks of a suite folder: those with task.json or graph.json, sorted (hidden and
    temporary folders, such as a build's ``.<task>.building``, are not tasks)."""
    suite_dir = Path(suite_dir)
    names = {p.name for p in io.suite_task_dirs(suite_dir)}
    names |= {
        p.parent.name for p in suite_dir.glob(f"*/{io.GRAPH_FILE}") if not io.is_hidden(p.parent)
    }
    return [task_entry(name, suite_dir, demos_root) for name in sorted(names)]


def task_entry(task_id: str, suite_dir: Path, demos_root: Path | None) -> TaskEntry:
    """The entry of one task; a suite that ships its own ``demos/`` (like the sample suite)
    uses those demonstrations rather than the workspace's."""
    root = io.shipped_demos(suite_dir, task_id) or demos_root
    statuses: Counter[str] = Counter()
    for folder in io.demo_dirs(root, task_id) if root is not None else []:
        try:
            statuses[io.load_demo(folder).status.value] += 1
        except GraphBuilderError:
            statuses["unreadable"] += 1
    complete = statuses.pop(DemoStatus.COMPLETE.value, 0)
    left_out = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
    return TaskEntry(task_id, Path(suite_dir), complete, root, left_out)


class TaskList(QTreeWidget):
    task_chosen = Signal(str)  # task folder ("" for a group)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphTaskList")
        self.setHeaderLabels(["Task", "Graph", "Demos"])
        self.setRootIsDecorated(True)
        self.setUniformRowHeights(True)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.setToolTip(
            "Tasks of the workspace's suites and of opened folders. Choose one to open its "
            "graph; tasks without a graph can be built from their demonstrations."
        )
        self._workspace: Workspace | None = None
        self._folders: list[Path] = []
        self.currentItemChanged.connect(self._on_current_item_changed)

    def set_workspace(self, workspace: Workspace | None) -> None:
        self._workspace = workspace
        self.refresh()

    def add_folder(self, folder: Path) -> None:
        """List another suite folder (or a single task folder) below the workspace's suites."""
        folder = Path(folder).resolve()
        if folder not in self._folders:
            self._folders.append(folder)
        self.refresh()

    @property
    def folders(self) -> tuple[Path, ...]:
        """The folders opened besides the workspace's suites."""
        return tuple(self._folders)

    @property
    def demos_root(self) -> Path | None:
        return self._workspace.demos_dir if self._workspace else None

    def refresh(self) -> None:
        current = self.current_entry()
        self.blockSignals(True)
        self.clear()
        ws = self._workspace
        if ws is not None:
            for suite in ws.suite_names():
                entries = suite_entries(ws.suite_dir(suite), ws.demos_dir)
                if suite == DEFAULT_SUITE:
                    in_suites = {
                        e.task_id
                        for s in ws.suite_names()
                        for e in suite_entries(ws.suite_dir(s), None)
                    }
                    extra = [
                        task_entry(t, ws.suite_dir(suite), ws.demos_dir)
                        for t in demo_task_ids(ws.demos_dir)
                        if t not in in_suites
                    ]
                    entries = sorted([*entries, *extra], key=lambda e: e.task_id)
                self._add_group(f"suite {suite}", str(ws.suite_dir(suite)), entries)
        for folder in self._folders:
            if (folder / io.GRAPH_FILE).is_file():
                entries = [task_entry(folder.name, folder.parent, self.demos_root)]
            else:
                entries = suite_entries(folder, self.demos_root)
            self._add_group(f"folder {folder.name}", str(folder), entries)
        self.expandAll()
        self.blockSignals(False)
        if current is not None:
            self.select_task_dir(current.task_dir, notify=False)

    def _add_group(self, title: str, tooltip: str, entries: list[TaskEntry]) -> None:
        group = QTreeWidgetItem([title])
        group.setToolTip(0, tooltip)
        group.setFlags(Qt.ItemFlag.ItemIsEnabled)
        font = group.font(0)
        font.setBold(True)
        group.setFont(0, font)
        self.addTopLevelItem(group)
        for entry in entries:
            graph = "graph" if entry.has_graph else "—"
            item = QTreeWidgetItem([entry.task_id, graph, str(entry.demo_count or "")])
            unused = f"; not used: {entry.left_out}" if entry.left_out else ""
            item.setToolTip(2, f"{entry.demo_count} complete demonstrations{unused}")
            item.setData(0, TASK_ROLE, entry)
            item.setToolTip(0, f"{entry.task_id}\n{entry.task_dir}")  # long ids are cut
            if not entry.has_graph:
                item.setForeground(1, QColor("#9ca3af"))
            group.addChild(item)
        if not entries:
            empty = QTreeWidgetItem(["(no tasks)"])
            empty.setFlags(Qt.ItemFlag.NoItemFlags)
            group.addChild(empty)

    # -- selection

    def _task_items(self) -> list[tuple[QTreeWidgetItem, TaskEntry]]:
        out = []
        for i in range(self.topLevelItemCount()):
            group = self.topLevelItem(i)
            assert group is not None
            for k in range(group.childCount()):
                item = group.child(k)
                entry = item.data(0, TASK_ROLE) if item is not None else None
                if item is not None and entry is not None:
                    out.append((item, entry))
        return out

    def entries(self) -> list[TaskEntry]:
        return [entry for _, entry in self._task_items()]

    def current_entry(self) -> TaskEntry | None:
        item = self.currentItem()
        return item.data(0, TASK_ROLE) if item is not None else None

    def select_task_dir(self, task_dir: Path, *, notify: bool = True) -> bool:
        wanted = Path(task_dir).resolve()
        for item, entry in self._task_items():
            if entry.task_dir.resolve() == wanted:
                self.blockSignals(not notify)
                self.setCurrentItem(item)
                self.blockSignals(False)
                return True
        return False

    @Slot(QTreeWidgetItem, QTreeWidgetItem)
    def _on_current_item_changed(
        self, current: QTreeWidgetItem | None, previous: QTreeWidgetItem | None
    ) -> None:
        entry = current.data(0, TASK_ROLE) if current is not None else None
        self.task_chosen.emit(str(entry.task_dir) if entry is not None else "")
