""" "Explore this branch": what ``elderbench explore`` does, for the audit group chosen in
the Audit view, on the phone chosen here.

The phone is taken through the tab's ``DeviceOwner`` (the device lock every driver of a
phone takes), then ``evaluator.explore.explore`` drives it on a worker from the task's
clean start to the group's node, performs the group's action and records it all as a
demonstration in the suite's demonstrations (its own ``demos/`` when it ships one, else
the workspace's), where the next build finds it. With "then follow the graph to DONE"
the demonstration is finished along a demonstrated way; otherwise it is left incomplete
and "Finish in the Record tab" resumes it there, on the screen the branch led to.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from devices.android import DeviceSummary
from devices.device import Device
from evaluator.audit_groups import AuditGroup
from evaluator.audit_marks import Verdict
from evaluator.explore import Explored, ExploreError, explore
from recorder_app.qt.device_owner import DeviceOwner
from recorder_app.qt.eval_panel.device_picker import DevicePicker
from recorder_app.qt.progress_job import ProgressJob
from recorder_app.recording.suite_demos import suite_demos

AUDIT_VIEW = "the Audit view"  # how an exploration's device lock names its holder


class ExploreBox(QGroupBox):
    problem_occurred = Signal(str)
    explored = Signal(str)  # the demonstration folder
    finish_requested = Signal(str)  # an incomplete explored demonstration, to resume
    job_ended = Signal()  # an exploration ended, however (the phone is free again)

    def __init__(
        self,
        open_device: Callable[[str], Device],
        list_devices: Callable[[], list[DeviceSummary]],
        annotator: Callable[[], str],
        parent: QWidget | None = None,
        *,
        lock_address: Callable[[str], str],
    ) -> None:
        super().__init__("Explore this branch", parent)
        self.setObjectName("exploreBox")
        self._open_device = open_device
        self._annotator = annotator
        self.suite: Path | None = None
        self.group: AuditGroup | None = None
        self.workspace_demos: Path | None = None
        self.job: ProgressJob | None = None
        self.last: Explored | None = None
        self.owner = DeviceOwner(AUDIT_VIEW, self, lock_address)
        self.owner.message_posted.connect(self._on_owner_message)
        self.owner.problem_occurred.connect(lambda t, m: self.problem_occurred.emit(f"{t}: {m}"))
        self.picker = DevicePicker(list_devices)
        self.picker.problem_occurred.connect(self.problem_occurred)
        self.picker.device_changed.connect(lambda _: self._update_buttons())
        self.rest_check = QCheckBox("then follow the graph to DONE")
        self.rest_check.setToolTip(
            "After the branch, follow a demonstrated way from the node the phone is on; "
            "unchecked, the demonstration is left for you to finish in the Record tab"
        )
        self.explore_button = QPushButton("Explore this branch")
        self.explore_button.setObjectName("exploreButton")
        self.explore_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stops at the next step; nothing is recorded")
        self.cancel_button.clicked.connect(self.cancel)
        self.finish_button = QPushButton("Finish in the Record tab")
        self.finish_button.clicked.connect(self._on_finish_clicked)
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.hide()
        self.status = QLabel("")
        self.status.setObjectName("exploreStatus")
        self.status.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.explore_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.finish_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.picker)
        layout.addWidget(self.rest_check)
        layout.addLayout(row)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        self._update_buttons()

    def set_group(self, suite: Path | None, group: AuditGroup | None) -> None:
        self.suite, self.group = suite, group
        self._update_buttons()

    def why_not(self) -> str:
        """Why the chosen group cannot be explored now ("" when it can)."""
        group = self.group
        if group is None or self.suite is None:
            return "choose a group"
        if group.mark is None or group.mark.verdict is not Verdict.VALID:
            return "only a group marked valid is explored (press V on it first)"
        if not self.picker.serial:
            return "choose a phone"
        if suite_demos(self.suite, self.workspace_demos) is None:
            return "the suite ships no demos/ and no workspace is open"
        return ""

    @Slot()
    def start(self) -> None:
        if self.job is not None and self.job.running:
            return
        why = self.why_not()
        if why:
            self.problem_occurred.emit(f"Cannot explore: {why}.")
            return
        assert self.group is not None and self.suite is not None
        suite, group, serial = self.suite, self.group, self.picker.serial
        demos = suite_demos(suite, self.workspace_demos)
        assert demos is not None
        if not self.owner.take(serial, f"explore {group.task_id} {group.id}", self.start):
            return  # the dialog says who holds the phone; waiting retries
        rest, annotator, open_device = (
            self.rest_check.isChecked(),
            self._annotator(),
            self._open_device,
        )

        def work(report: Callable[[object], None], stop: threading.Event) -> Explored:
            def progress(line: str) -> None:
                report(line)
                if stop.is_set():
                    raise _Cancelled()

            device = open_device(serial)
            try:
                return explore(
                    suite,
                    group.task_id,
                    group.id,
                    device,
                    demos,
                    rest_on_graph=rest,
                    annotator=annotator,
                    progress=progress,
                )
            finally:
                device.close()

        if self.job is not None:
            self.job.deleteLater()  # it has ended: free it before the next
        job = ProgressJob(work, self)
        job.progressed.connect(lambda line: self.status.setText(str(line)))
        job.finished.connect(self._on_explored)
        job.failed.connect(self._on_failed)
        job.ended.connect(self._on_ended)
        self.job = job
        self.progress.show()
        self.status.setText(f"Exploring {group.id} on {serial}…")
        job.start()
        self._update_buttons()

    @Slot()
    def cancel(self) -> None:
        if self.job is not None and self.job.running:
            self.job.cancel()
            self.status.setText("Cancelling after the current step…")

    def _on_explored(self, explored: Explored) -> None:
        self.last = explored
        state = explored.demo.status.value
        then = (
            "press Finish in the Record tab to go on from where the branch led"
            if not explored.demo.is_finished
            else "build the task to merge it"
        )
        self.status.setText(
            f"Recorded {len(explored.demo.steps)} step(s) ({state}) into {explored.folder}; {then}."
        )
        self.explored.emit(str(explored.folder))

    def _on_failed(self, exc: Exception) -> None:
        if isinstance(exc, _Cancelled):
            self.status.setText("Cancelled on the way to the branch; nothing was recorded.")
            return
        if isinstance(exc.__cause__, _Cancelled):
            self.status.setText(f"Cancelled after the branch: {exc}")
            return
        self.status.setText(f"Not explored: {exc}")
        self.problem_occurred.emit(f"Cannot explore the branch: {exc}")

    def _on_ended(self) -> None:
        self.owner.release()
        self.progress.hide()
        self._update_buttons()
        self.job_ended.emit()

    @Slot()
    def _on_finish_clicked(self) -> None:
        if self.last is not None and not self.last.demo.is_finished:
            self.finish_requested.emit(str(self.last.folder))

    @Slot(str, int)
    def _on_owner_message(self, text: str, _timeout_ms: int) -> None:
        self.status.setText(text)

    def _update_buttons(self) -> None:
        busy = self.job is not None and self.job.running
        why = self.why_not()
        self.explore_button.setEnabled(not busy and not why)
        self.explore_button.setToolTip(why or "Drive the phone to the node and record the branch")
        self.cancel_button.setEnabled(busy)
        self.finish_button.setEnabled(
            not busy and self.last is not None and not self.last.demo.is_finished
        )

    def shutdown(self) -> None:
        if self.job is not None and self.job.running:
            self.job.cancel()
            self.job.wait(30.0)
        self.owner.shutdown()


class _Cancelled(ExploreError):
    """The person cancelled (raised from the progress callback). An ExploreError, so that
    ``explore`` removes a demonstration cut short before the branch, as it does on any
    failure there."""

    def __init__(self) -> None:
        super().__init__("cancelled")
