"""The Drift view: has an app update broken the open suite's graphs?

Pick tasks (those with a graph) and a phone; "Check drift" takes the phone through the
tab's ``DeviceOwner`` and runs ``evaluator.drift.check_suite`` on a worker, the walk
behind ``elderbench drift``, with the tasks counted as they finish and a Cancel that
stops before the next task (the phone is put back in its clean state either way). Each
task shows ``unchanged`` or ``drifted at NODE`` with the reason; choosing a drifted task
shows the graph's screenshot of the node beside what the phone showed there. "Save
sheet…" writes what ``elderbench drift --out`` writes (``evaluator.drift.sheet``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from devices.android import DeviceSummary
from devices.device import Device
from evaluator.drift.sheet import write_sheet
from evaluator.drift.walk import TaskDrift, TaskStatus, check_suite
from graph_builder.errors import GraphBuilderError
from graph_builder.io import GRAPH_FILE, load_task, suite_task_dirs
from graph_builder.screen import Screen
from recorder_app.qt.device_owner import DeviceOwner
from recorder_app.qt.eval_panel.device_picker import DevicePicker
from recorder_app.qt.fitted_picture import FittedPicture
from recorder_app.qt.progress_job import ProgressJob
from recorder_app.qt.report_path import ReportPathRow
from recorder_app.qt.workers import BackgroundJob, run_in_background

DRIFT_VIEW = "the Drift view"  # how a drift check's device lock names its holder
SHOT_WIDTH = 540  # the pictures fit their space; this bounds the memory they take
COLUMNS = ("Task", "Status", "Node", "Reason", "Detail")


def screen_pixmap(screen: Screen, width: int = SHOT_WIDTH) -> QPixmap:
    pixmap = QPixmap()
    pixmap.loadFromData(screen.png())
    if pixmap.isNull():
        return pixmap
    return pixmap.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)


class DriftView(QWidget):
    problem_occurred = Signal(str)
    checked = Signal(int)  # tasks checked
    sheet_written = Signal(str)  # drift.html

    def __init__(
        self,
        open_device: Callable[[str], Device],
        list_devices: Callable[[], list[DeviceSummary]],
        parent: QWidget | None = None,
        *,
        lock_address: Callable[[str], str],
    ) -> None:
        super().__init__(parent)
        self.setObjectName("driftView")
        self._open_device = open_device
        self.suite: Path | None = None
        self.results: list[TaskDrift] = []
        self.checked_on = ""  # the phone the results were found on
        self.job: ProgressJob | None = None
        self.owner = DeviceOwner(DRIFT_VIEW, self, lock_address)
        self.owner.message_posted.connect(self._on_owner_message)
        self.owner.problem_occurred.connect(lambda t, m: self.problem_occurred.emit(f"{t}: {m}"))
        self.picker = DevicePicker(list_devices)
        self.picker.problem_occurred.connect(self.problem_occurred)
        self.picker.device_changed.connect(lambda _: self._update_buttons())
        self.task_list = QListWidget()
        self.task_list.setObjectName("driftTasks")
        self.task_list.itemChanged.connect(lambda _: self._update_buttons())
        self.check_button = QPushButton("Check drift")
        self.check_button.setObjectName("driftCheckButton")
        self.check_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop before the next task; the phone is put back clean")
        self.cancel_button.clicked.connect(self.cancel)
        self.save_button = QPushButton("Save sheet…")
        self.save_button.setToolTip(
            "Write drift.json, drift.md, drift.html and both screenshots of every drift, "
            "as elderbench drift --out does"
        )
        self.save_button.clicked.connect(self._on_save_clicked)
        self.sheet_row = ReportPathRow()
        self.sheet_row.setObjectName("driftSheetRow")
        self.sheet_row.hide()
        self.progress = QProgressBar()
        self.progress.setObjectName("driftProgress")
        self.progress.setFormat("%v / %m tasks")
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.status = QLabel("Choose the tasks and a phone, then Check drift.")
        self.status.setObjectName("driftStatus")
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("driftResults")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.table.itemSelectionChanged.connect(self._on_result_selected)
        self._build_layout()
        self._update_buttons()

    def _build_layout(self) -> None:
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(QLabel("Tasks with a graph"))
        left_layout.addWidget(self.task_list, 1)
        left_layout.addWidget(self.picker)
        buttons = QHBoxLayout()
        buttons.addWidget(self.check_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.save_button)
        left_layout.addLayout(buttons)
        left_layout.addWidget(self.progress)
        left_layout.addWidget(self.status)
        self.expected_shot = FittedPicture("the node in the graph")
        self.expected_shot.setObjectName("driftExpected")
        self.live_shot = FittedPicture("what the phone showed")
        self.live_shot.setObjectName("driftLive")
        self.why = QLabel("")
        self.why.setObjectName("driftWhy")
        self.why.setWordWrap(True)
        self.why.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        shots = QHBoxLayout()
        for caption, shot in (
            ("In the graph", self.expected_shot),
            ("On the phone", self.live_shot),
        ):
            column = QVBoxLayout()
            title = QLabel(f"<b>{caption}</b>")
            title.setAlignment(Qt.AlignmentFlag.AlignCenter)
            column.addWidget(title)
            column.addWidget(shot, 1)
            shots.addLayout(column)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.table, 2)
        right_layout.addWidget(self.why)
        right_layout.addLayout(shots, 3)
        right_layout.addWidget(self.sheet_row)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

    # -- tasks

    def set_suite(self, suite: Path | None) -> None:
        """Offer the suite's tasks that have a graph, all checked."""
        self.suite = suite
        self.task_list.blockSignals(True)
        self.task_list.clear()
        for folder in suite_task_dirs(suite) if suite is not None and suite.is_dir() else []:
            if (folder / GRAPH_FILE).is_file():
                item = QListWidgetItem(folder.name)
                item.setData(Qt.ItemDataRole.UserRole, str(folder))
                item.setCheckState(Qt.CheckState.Checked)
                self.task_list.addItem(item)
        self.task_list.blockSignals(False)
        self._update_buttons()

    def set_checked_tasks(self, task_ids: set[str]) -> None:
        for i in range(self.task_list.count()):
            item = self.task_list.item(i)
            checked = item.text() in task_ids
            item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)

    def checked_folders(self) -> list[Path]:
        return [
            Path(str(self.task_list.item(i).data(Qt.ItemDataRole.UserRole)))
            for i in range(self.task_list.count())
            if self.task_list.item(i).checkState() == Qt.CheckState.Checked
        ]

    # -- checking

    @Slot()
    def start(self) -> None:
        if self.job is not None and self.job.running:
            return
        folders, serial = self.checked_folders(), self.picker.serial
        if not folders or not serial:
            self.problem_occurred.emit("Check at least one task and choose a phone.")
            return
        try:
            tasks = [(load_task(folder), folder) for folder in folders]
        except GraphBuilderError as exc:
            self.problem_occurred.emit(f"Cannot check drift: {exc}")
            return
        if not self.owner.take(serial, f"drift check of {len(tasks)} task(s)", self.start):
            return  # the dialog says who holds the phone; waiting retries
        open_device = self._open_device

        def work(report: Callable[[object], None], stop: threading.Event) -> list[TaskDrift]:
            device = open_device(serial)
            try:
                return check_suite(
                    tasks, device, progress=report, on_result=report, stop=stop.is_set
                )
            finally:
                device.close()

        if self.job is not None:
            self.job.deleteLater()  # it has ended: free it before the next
        job = ProgressJob(work, self)
        job.progressed.connect(self._on_progressed)
        job.finished.connect(self._on_finished)
        job.failed.connect(self._on_failed)
        job.ended.connect(self._on_ended)
        self.job = job
        self.results = []
        self.checked_on = serial
        self.sheet_row.hide()
        self.table.setRowCount(0)
        self._show_drift(None)
        self.progress.setRange(0, len(tasks))
        self.progress.setValue(0)
        self.status.setText(f"Checking {len(tasks)} task(s) on {serial}…")
        job.start()
        self._update_buttons()

    @Slot()
    def cancel(self) -> None:
        if self.job is not None and self.job.running:
            self.job.cancel()
            self.status.setText("Cancelling: the task being walked finishes first…")

    @Slot(object)
    def _on_progressed(self, item: object) -> None:
        if isinstance(item, TaskDrift):
            self._add_result(item)
        elif not (self.job is not None and self.job.stop.is_set()):
            self.status.setText(str(item).strip())

    def _add_result(self, result: TaskDrift) -> None:
        self.results.append(result)
        drift = result.drift
        row = self.table.rowCount()
        self.table.insertRow(row)
        values = (
            result.task_id,
            result.status.value,
            drift.node if drift else "",
            drift.reason.value if drift else "",
            drift.detail if drift else result.error,
        )
        for column, value in enumerate(values):
            item = QTableWidgetItem(value)
            item.setToolTip(result.headline())
            self.table.setItem(row, column, item)
        self.progress.setValue(len(self.results))
        if drift is not None and self.table.currentRow() < 0:
            self.table.selectRow(row)

    def _on_finished(self, results: list[TaskDrift]) -> None:
        drifted = sum(1 for r in results if r.drift is not None)
        errors = sum(1 for r in results if r.status is TaskStatus.ERROR)
        total = self.progress.maximum()
        if len(results) < total:
            text = f"Cancelled after {len(results)} of {total} task(s); {drifted} drifted"
        else:
            text = f"{drifted} of {total} task(s) drifted"
        if errors:
            text += f"; {errors} could not be checked (see Detail)"
        self.status.setText(text + ".")
        self.checked.emit(len(results))

    def _on_failed(self, exc: Exception) -> None:
        self.status.setText(f"The drift check stopped: {exc}")
        self.problem_occurred.emit(f"The drift check stopped: {exc}")

    def _on_ended(self) -> None:
        self.owner.release()
        self._update_buttons()

    def save_sheet(self, out: Path) -> BackgroundJob | None:
        """Write the results shown as ``elderbench drift --out OUT`` would (off the GUI
        thread); the row under the screens then names ``drift.html``."""
        if not self.results or self.suite is None:
            return None
        results, suite, device = list(self.results), self.suite.resolve().name, self.checked_on
        self.save_button.setEnabled(False)

        def done(_data: object) -> None:
            self._update_buttons()
            self.sheet_row.set_path(out / "drift.html", what="Drift sheet", open_label="Open")
            self.sheet_row.show()
            self.sheet_written.emit(str(out / "drift.html"))

        def failed(exc: Exception) -> None:
            self._update_buttons()
            self.problem_occurred.emit(f"Cannot write the drift sheet into {out}: {exc}")

        return run_in_background(
            lambda: write_sheet(out, results, suite=suite, device=device),
            on_done=done,
            on_error=failed,
        )

    @Slot()
    def _on_save_clicked(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Save the drift sheet into which folder?")
        if path:
            self.save_sheet(Path(path))

    # -- one task

    def result_of(self, task_id: str) -> TaskDrift | None:
        return next((r for r in self.results if r.task_id == task_id), None)

    @Slot()
    def _on_result_selected(self) -> None:
        row = self.table.currentRow()
        self._show_drift(self.results[row] if 0 <= row < len(self.results) else None)

    def _show_drift(self, result: TaskDrift | None) -> None:
        drift = result.drift if result is not None else None
        if drift is None:
            self.expected_shot.show_picture(None)
            self.live_shot.show_picture(None)
            self.why.setText(result.headline() if result is not None else "")
            return
        self.expected_shot.show_picture(screen_pixmap(drift.expected))
        self.live_shot.show_picture(screen_pixmap(drift.live))
        edge = f" before edge {drift.edge}" if drift.edge else " at DONE"
        self.why.setText(
            f"<b>{result.task_id if result else ''}: {drift.describe()}</b>{edge}<br>"
            f"Similarity: {drift.similarity}"
        )

    @Slot(str, int)
    def _on_owner_message(self, text: str, _timeout_ms: int) -> None:
        self.status.setText(text)

    def _update_buttons(self) -> None:
        busy = self.job is not None and self.job.running
        self.check_button.setEnabled(
            not busy and bool(self.picker.serial) and bool(self.checked_folders())
        )
        self.cancel_button.setEnabled(busy)
        self.save_button.setEnabled(not busy and bool(self.results))
        self.task_list.setEnabled(not busy)
        if self.job is None:  # before the first check the bar counts the tasks ticked
            ticked = len(self.checked_folders())
            self.progress.setRange(0, max(1, ticked))  # (0, 0) would be a busy bar
            self.progress.setValue(0)
            self.progress.setFormat("%v / %m tasks" if ticked else "no task ticked")

    def shutdown(self) -> None:
        if self.job is not None and self.job.running:
            self.job.cancel()
            self.job.wait(60.0)
        self.owner.shutdown()
