"""The Demos tab: tasks and their demonstrations, stepped through one screenshot at a time."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QBrush, QColor, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from graph_builder import io
from graph_builder.errors import GraphBuilderError
from graph_builder.model import Demonstration, DemoStatus
from recorder_app.errors import explain_os_error
from recorder_app.qt.hierarchy_view import HierarchyInspector
from recorder_app.qt.recorder import step_hierarchy, step_text
from recorder_app.qt.report_path import ReportPathRow
from recorder_app.qt.steady import fix_lines, scrolled_lines
from recorder_app.qt.step_viewer import StepViewer
from recorder_app.qt.workers import BackgroundJob, run_in_background
from recorder_app.recording.animation import ANIMATION_FILTER, demo_frames, write_animation
from recorder_app.recording.workspace import DemoSummary, Workspace

FOLDER_ROLE = Qt.ItemDataRole.UserRole
STATUS_COLORS = {
    DemoStatus.INCOMPLETE: QColor(214, 140, 0),
    DemoStatus.DISCARDED: QColor(140, 140, 140),
}


def _demo_label(summary: DemoSummary) -> str:
    if summary.problem:
        return f"{summary.demo_id} · unreadable"
    steps = f"{summary.step_count} step{'s' if summary.step_count != 1 else ''}"
    status = summary.status.value if summary.status else "?"
    return f"{summary.demo_id} · {steps} · {status}"


class DemoBrowser(QWidget):
    """Lists demos by task; the step viewer shows the selected demo's steps."""

    resume_requested = Signal(str)  # demo folder
    demo_changed = Signal(str)  # demo folder whose files changed
    problem_occurred = Signal(str)
    gif_written = Signal(str)  # the written GIF's or MP4's path

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("demoBrowser")
        self._workspace: Workspace | None = None
        self._folder: Path | None = None
        self._demo: Demonstration | None = None
        self._step = 0
        self._stale = False  # the demos changed while this page was hidden
        self._recording_folder: str | None = None

        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Tasks and demonstrations"])
        self.tree.setMinimumWidth(260)
        self.refresh_button = QPushButton("Refresh")
        self.viewer = StepViewer()
        self.hierarchy_view = HierarchyInspector()
        self.view_tabs = QTabWidget()
        self.view_tabs.setObjectName("demoViewTabs")
        self.view_tabs.addTab(self.viewer, "Action")
        self.view_tabs.addTab(self.hierarchy_view, "Hierarchy")
        self.step_label = QLabel("")
        self.step_label.setObjectName("stepLabel")
        self.step_label.setWordWrap(True)
        self.detail_label = QLabel("")
        self.detail_label.setObjectName("detailLabel")
        self.detail_label.setWordWrap(True)
        self.detail_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.prev_button = QPushButton("◀ Previous")
        self.prev_button.setToolTip("Previous step (Left)")
        self.next_button = QPushButton("Next ▶")
        self.next_button.setToolTip("Next step (Right)")
        self.discard_button = QPushButton("Discard demo")
        self.discard_button.setToolTip(
            "Mark the demonstration as discarded; its files stay and it can be restored"
        )
        self.drop_button = QPushButton("Delete last step")
        self.gif_button = QPushButton("Export GIF/MP4…")
        self.gif_button.setToolTip(
            "Write the demonstration as an animated GIF or an MP4 video with each action "
            "drawn (for papers, talks and bug reports)"
        )
        self.gif_row = ReportPathRow()
        self.gif_row.setObjectName("gifRow")
        # The row keeps its place, shown or not and whatever it says: an export never
        # moves Previous/Next (the full path is in the tooltip and Copy path).
        self.gif_row.label.setWordWrap(False)
        fix_lines(self.gif_row.label, 1)
        fix_lines(self.gif_row.note, 1)
        keep_place = self.gif_row.sizePolicy()
        keep_place.setRetainSizeWhenHidden(True)
        self.gif_row.setSizePolicy(keep_place)
        self.gif_row.hide()
        self.resume_button = QPushButton("Resume recording")
        self.resume_button.setToolTip("Continue this incomplete demonstration on the phone")

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.tree, 1)
        left_layout.addWidget(self.refresh_button)
        nav = QHBoxLayout()
        nav.addWidget(self.prev_button)
        nav.addWidget(self.step_label, 1)
        nav.addWidget(self.next_button)
        actions = QHBoxLayout()
        actions.addWidget(self.resume_button)
        actions.addWidget(self.drop_button)
        actions.addWidget(self.discard_button)
        actions.addStretch(1)
        actions.addWidget(self.gif_button)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.view_tabs, 1)
        # Fixed heights: a longer description or more details never move the buttons.
        fix_lines(self.step_label, 2)
        right_layout.addLayout(nav)
        right_layout.addWidget(scrolled_lines(self.detail_label, 6))
        right_layout.addLayout(actions)
        right_layout.addWidget(self.gif_row)
        splitter = QSplitter()
        splitter.setObjectName("demoSplitter")
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([340, 900])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        self.splitter = splitter

        self.tree.currentItemChanged.connect(self._on_current_item_changed)
        self.refresh_button.clicked.connect(self.refresh)
        self.prev_button.clicked.connect(self.previous_step)
        self.next_button.clicked.connect(self.next_step)
        self.discard_button.clicked.connect(self._on_discard_clicked)
        self.drop_button.clicked.connect(self._on_drop_clicked)
        self.resume_button.clicked.connect(self._on_resume_clicked)
        self.gif_button.clicked.connect(self._on_gif_clicked)
        for key, slot in (
            (Qt.Key.Key_Left, self.previous_step),
            (Qt.Key.Key_Right, self.next_step),
        ):
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)
        self._show_demo(None)

    # -- public API

    def set_workspace(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self.refresh()

    def set_recording_folder(self, folder: str | None) -> None:
        """The demo being recorded right now: shown, but not edited from here."""
        self._recording_folder = folder
        self._update_buttons()

    @property
    def demo(self) -> Demonstration | None:
        return self._demo

    @property
    def step_index(self) -> int:
        return self._step

    @Slot()
    def refresh_when_shown(self) -> None:
        """Re-read the demos folder now if this page is on screen, else when it is shown.

        A recording saves a step every few seconds; re-reading every demo of a large
        workspace (and decoding the selected step) each time would hold up the GUI thread
        while the next screen is being captured.
        """
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True

    def refresh_if_stale(self) -> None:
        if self._stale:
            self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh_if_stale()

    def refresh(self) -> None:
        """Re-read the demos folder, keeping the selection when it still exists."""
        self._stale = False
        if self._workspace is None:
            return
        keep = str(self._folder) if self._folder else None
        self.tree.blockSignals(True)
        self.tree.clear()
        by_task: dict[str, list[DemoSummary]] = {}
        for summary in self._workspace.demo_summaries():
            by_task.setdefault(summary.task_id, []).append(summary)
        selected: QTreeWidgetItem | None = None
        for task_id, demos in sorted(by_task.items()):
            usable = sum(1 for d in demos if d.status is not DemoStatus.DISCARDED)
            task_item = QTreeWidgetItem([f"{task_id}  ({usable} demo{'s' if usable != 1 else ''})"])
            task_item.setToolTip(0, task_item.text(0))  # long task ids are cut
            self.tree.addTopLevelItem(task_item)
            for summary in demos:
                item = QTreeWidgetItem([_demo_label(summary)])
                item.setData(0, FOLDER_ROLE, str(summary.folder))
                item.setToolTip(0, str(summary.folder))
                color = STATUS_COLORS.get(summary.status) if summary.status else QColor("red")
                if color is not None:
                    item.setForeground(0, QBrush(color))
                if summary.problem:
                    item.setToolTip(0, summary.problem)
                task_item.addChild(item)
                if str(summary.folder) == keep:
                    selected = item
            task_item.setExpanded(True)
        if selected is not None:
            self.tree.setCurrentItem(selected)
        self.tree.blockSignals(False)
        self._show_demo(Path(keep) if selected is not None and keep else None, step=self._step)

    def select_demo(self, folder: str | Path) -> bool:
        target = str(Path(folder))
        for i in range(self.tree.topLevelItemCount()):
            task_item = self.tree.topLevelItem(i)
            for j in range(task_item.childCount() if task_item else 0):
                item = task_item.child(j) if task_item else None
                if item is not None and item.data(0, FOLDER_ROLE) == target:
                    self.tree.setCurrentItem(item)
                    return True
        return False

    def demo_count(self, task_id: str) -> int:
        """Demos of ``task_id`` that are not discarded, as the tree shows them."""
        if self._workspace is None:
            return 0
        return sum(
            1
            for d in self._workspace.demo_summaries(task_id)
            if d.status is not DemoStatus.DISCARDED
        )

    @Slot()
    def previous_step(self) -> None:
        self._show_step(self._step - 1)

    @Slot()
    def next_step(self) -> None:
        self._show_step(self._step + 1)

    def set_demo_status(self, status: DemoStatus) -> bool:
        if self._folder is None:
            return False
        try:
            io.set_demo_status(self._folder, status)
        except (GraphBuilderError, OSError) as exc:
            self._report(exc)
            return False
        self.demo_changed.emit(str(self._folder))
        self.refresh()
        return True

    def delete_last_step(self, *, confirm: bool = True) -> bool:
        """Remove the trailing step; a complete demo that loses its 'done' becomes incomplete."""
        if self._folder is None or self._demo is None or not self._demo.steps:
            return False
        last = self._demo.steps[-1]
        if confirm:
            answer = QMessageBox.question(
                self,
                "Delete last step",
                f"Delete step {last.index + 1} ({last.action.describe()}) of {self._demo.id}?",
            )
            if answer != QMessageBox.StandardButton.Yes:
                return False
        try:
            writer = io.DemoWriter(self._folder, self._demo)
            writer.drop_last_step()
            if writer.demo.status is DemoStatus.COMPLETE and not writer.demo.is_finished:
                io.save_demo(replace(writer.demo, status=DemoStatus.INCOMPLETE), self._folder)
        except (GraphBuilderError, OSError) as exc:
            self._report(exc)
            return False
        self._step = max(0, len(self._demo.steps) - 2)
        self.demo_changed.emit(str(self._folder))
        self.refresh()
        return True

    # -- slots

    @Slot(QTreeWidgetItem, QTreeWidgetItem)
    def _on_current_item_changed(self, current: QTreeWidgetItem | None, _: object) -> None:
        folder = current.data(0, FOLDER_ROLE) if current is not None else None
        self._show_demo(Path(folder) if folder else None)

    @Slot()
    def _on_discard_clicked(self) -> None:
        if self._demo is None:
            return
        discarded = self._demo.status is DemoStatus.DISCARDED
        if discarded:
            self.set_demo_status(
                DemoStatus.COMPLETE if self._demo.is_finished else DemoStatus.INCOMPLETE
            )
        else:
            self.set_demo_status(DemoStatus.DISCARDED)

    @Slot()
    def _on_drop_clicked(self) -> None:
        self.delete_last_step()

    @Slot()
    def _on_resume_clicked(self) -> None:
        if self._folder is not None:
            self.resume_requested.emit(str(self._folder))

    # -- internals

    def _show_demo(self, folder: Path | None, step: int = 0) -> None:
        if folder != self._folder:  # the written file belongs to the demo it came from
            self.gif_row.set_path(None)
            self.gif_row.hide()
        self._folder = folder
        self._demo = None
        if folder is not None:
            try:
                self._demo = io.load_demo(folder)
            except GraphBuilderError as exc:
                self.viewer.clear(f"This demonstration cannot be read:\n{exc}")
                self.step_label.setText("")
                self.detail_label.setText("")
                self._update_buttons()
                return
        if self._demo is None:
            self.viewer.clear("Select a demonstration on the left")
            self.step_label.setText("")
            self.detail_label.setText("")
        elif not self._demo.steps:
            self.viewer.clear("This demonstration has no steps yet")
            self.step_label.setText("0 steps")
            self.detail_label.setText(self._demo_details())
        else:
            self._show_step(min(step, len(self._demo.steps) - 1))
        self._update_buttons()

    def _show_step(self, index: int) -> None:
        demo, folder = self._demo, self._folder
        if demo is None or folder is None or not demo.steps:
            return
        index = max(0, min(index, len(demo.steps) - 1))
        self._step = index
        step = demo.steps[index]
        try:
            png: bytes | None = io.read_png(folder / step.observation.screenshot)
        except GraphBuilderError:
            png = None
        self.viewer.show_step(png, step.observation.screen, step.action, jumped=step.jumped)
        hierarchy = step_hierarchy(folder, step)
        self.hierarchy_view.show_screen(png, step.observation.screen, hierarchy)
        self.hierarchy_view.label.setText(
            f"{len(hierarchy)} elements · activity {step.observation.activity or '?'}"
            if hierarchy is not None
            else "No hierarchy was recorded for this step."
        )
        device = step.action.to_device(step.observation.screen)
        if step.action.type.is_pointed and device.point is not None:
            self.hierarchy_view.select_at(int(device.x or 0), int(device.y or 0))
        obs = step.observation
        described = step_text(step, hierarchy)
        self.step_label.setText(f"Step {index + 1} of {len(demo.steps)}: {described}")
        self.step_label.setToolTip(described)
        lines = [self._demo_details(), f"activity: {obs.activity or '?'}"]
        if step.jumped:
            lines.append(
                f"jump: step {index}'s action did not lead here (the recording was resumed "
                "from this screen); no graph edge is built into this step"
            )
        # The details name the element the label names: the one under the action's point.
        hit = hierarchy.hit(step.action, obs.screen) if hierarchy is not None else None
        if hierarchy is not None and hit is not None:
            kind = hit.class_name.rpartition(".")[2]
            name = hierarchy.spoken_label(hit)
            lines.append(f"element: {name!r} ({kind} {hit.bounds.as_list()})")
        elif step.action.element is not None:
            e = step.action.element
            kind = e.class_name.rpartition(".")[2]
            lines.append(f"element: {e.label()!r} ({kind} {e.bounds.as_list()})")
        if obs.phash:
            lines.append(f"phash: {obs.phash}")
        self.detail_label.setText("\n".join(lines))
        self.prev_button.setEnabled(index > 0)
        self.next_button.setEnabled(index < len(demo.steps) - 1)

    def _demo_details(self) -> str:
        demo = self._demo
        assert demo is not None
        when = (
            time.strftime("%Y-%m-%d %H:%M", time.localtime(demo.created)) if demo.created else "?"
        )
        device = demo.device.model or demo.device.serial if demo.device else "?"
        who = f" · by {demo.annotator}" if demo.annotator else ""
        return f"“{demo.instruction}” · {demo.status.value} · {when} · {device}{who}"

    def _update_buttons(self) -> None:
        demo = self._demo
        recording = demo is not None and str(self._folder) == self._recording_folder
        editable = demo is not None and not recording
        self.discard_button.setEnabled(editable)
        self.discard_button.setText(
            "Restore demo" if demo and demo.status is DemoStatus.DISCARDED else "Discard demo"
        )
        self.drop_button.setEnabled(editable and bool(demo and demo.steps))
        self.resume_button.setEnabled(
            editable and demo is not None and demo.status is DemoStatus.INCOMPLETE
        )
        self.gif_button.setEnabled(demo is not None and bool(demo.steps))
        has_steps = demo is not None and len(demo.steps) > 1
        self.prev_button.setEnabled(has_steps and self._step > 0)
        self.next_button.setEnabled(
            has_steps and demo is not None and self._step < len(demo.steps) - 1
        )

    def export_gif(self, out: Path) -> BackgroundJob | None:
        """Write the shown demonstration as a GIF or an MP4, as `out` is named (off the GUI
        thread)."""
        folder = self._folder
        if folder is None:
            return None
        self.gif_button.setEnabled(False)

        def done(path: Path) -> None:
            self.gif_button.setEnabled(True)
            kind = "MP4" if path.suffix.lower() == ".mp4" else "GIF"
            self.gif_row.set_path(path, what=f"{kind} written to", open_label=f"Open {kind}")
            self.gif_row.show()
            self.gif_written.emit(str(path))

        def failed(exc: Exception) -> None:
            self.gif_button.setEnabled(True)
            self._report(exc)

        return run_in_background(
            lambda: write_animation(demo_frames(folder), out), on_done=done, on_error=failed
        )

    @Slot()
    def _on_gif_clicked(self) -> None:
        if self._folder is None:
            return
        suggested = str(self._folder.parent / f"{self._folder.parent.name}-{self._folder.name}.gif")
        path, _ = QFileDialog.getSaveFileName(
            self, "Export as GIF or MP4", suggested, ANIMATION_FILTER
        )
        if path:
            self.export_gif(Path(path))

    def _report(self, exc: Exception) -> None:
        message = explain_os_error(exc) if isinstance(exc, OSError) else str(exc)
        self.problem_occurred.emit(message)
