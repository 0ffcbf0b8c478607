"""The current step of a run: the screenshot with the agent's action drawn on it, what the
step matched, and the model's raw output. ``StepPanel`` is shared with the trace viewer.

Offline runs produce steps far faster than anyone can look at them, so the live view
shows the latest step at most ten times a second.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt, QTimer, Slot
from PySide6.QtGui import QFontDatabase, QImageReader
from PySide6.QtWidgets import (
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from evaluator.records import StepRecord
from evaluator.runner import StepDone, TaskFinished, TaskStarted
from graph_builder.errors import GraphBuilderError
from graph_builder.model import Action
from recorder_app.qt.step_viewer import StepViewer

REFRESH_MS = 100


def png_size(png: bytes) -> tuple[int, int] | None:
    """The image's size from its header, without decoding the pixels."""
    buffer = QBuffer()
    buffer.setData(QByteArray(png))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    size = QImageReader(buffer).size()
    return (size.width(), size.height()) if size.isValid() else None


def record_action(record: StepRecord) -> Action | None:
    if not record.action:
        return None
    try:
        return Action.from_json(record.action)
    except GraphBuilderError:
        return None


def step_summary(record: StepRecord) -> str:
    """One line on what the step did and which rule decided it."""
    parts = [f"Step {record.index + 1}", record.action_text or "(no action)"]
    if record.parse_error:
        parts.append(f"parse error: {record.parse_error}")
    if record.matched is not None:
        parts.append(("matched " if record.matched else "no match ") + (record.edge or ""))
    if record.rule:
        parts.append(f"rule: {record.rule}")
    if record.decision_correct is not None:
        parts.append("correct" if record.decision_correct else "wrong")
    seconds = record.inference_seconds + record.parsing_seconds
    if seconds:
        parts.append(f"{seconds:.2f} s")
    if record.input_tokens or record.output_tokens:
        parts.append(f"{record.input_tokens}/{record.output_tokens} tokens")
    return " · ".join(p.strip() for p in parts if p.strip())


def exchange_text(record: StepRecord) -> str:
    """The question the step put to the user and the reply (empty: it asked nothing)."""
    exchange = record.extra.get("user") if isinstance(record.extra, dict) else None
    if not isinstance(exchange, dict):
        return ""
    reply = exchange.get("reply")
    who = f"{exchange.get('source') or 'scripted'} user"
    spent = ""
    if exchange.get("input_tokens") or exchange.get("output_tokens"):
        spent = (
            f" ({exchange.get('model')}, {exchange.get('input_tokens', 0)}/"
            f"{exchange.get('output_tokens', 0)} tokens, priced apart)"
        )
    said = f"“{reply}”" if reply is not None else "(no reply: the task scripts none)"
    return f"Agent asked: “{exchange.get('question') or ''}”\nThe {who} replied: {said}{spent}"


class StepPanel(QWidget):
    """One step: screenshot and action on top, the summary line and raw output below."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.viewer = StepViewer()
        self.viewer.clear("No step yet")
        self.summary = QLabel("")
        self.summary.setObjectName("stepSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.raw_output = QPlainTextEdit()
        self.raw_output.setObjectName("rawOutput")
        self.raw_output.setReadOnly(True)
        self.raw_output.setPlaceholderText("The model's raw output appears here")
        self.raw_output.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        below = QWidget()
        below_layout = QVBoxLayout(below)
        below_layout.setContentsMargins(0, 0, 0, 0)
        below_layout.addWidget(self.summary)
        below_layout.addWidget(QLabel("Raw output"))
        below_layout.addWidget(self.raw_output)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.viewer)
        self.splitter.addWidget(below)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

    def show_record(self, record: StepRecord, screenshot: Path | None) -> None:
        png = _read(screenshot)
        size = png_size(png) if png else None
        if png and size:
            self.viewer.show_step(png, size, record_action(record))
        else:
            self.viewer.clear("The screenshot of this step is missing")
        self.summary.setText(step_summary(record))
        text = record.raw_output
        if record.reasoning and record.reasoning not in text:
            text = f"{text}\n\n[reasoning]\n{record.reasoning}"
        exchange = exchange_text(record)
        if exchange:
            text = f"{text}\n\n[conversation]\n{exchange}"
        self.raw_output.setPlainText(text)

    def clear(self, message: str) -> None:
        self.viewer.clear(message)
        self.summary.setText("")
        self.raw_output.clear()


def _read(path: Path | None) -> bytes | None:
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


class LiveView(QWidget):
    """Follows a running evaluation: which task, its instruction, the latest step.

    The heading always names the task of the step on show. Steps are shown at most ten
    times a second, so a step can still be waiting when its worker starts the next task;
    such a step is dropped and never drawn under the next task's name.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("liveView")
        self.task_label = QLabel("No run yet. Configure one on the left and press Start.")
        self.task_label.setObjectName("liveTask")
        self.task_label.setWordWrap(True)
        self.instruction_label = QLabel("")
        self.instruction_label.setObjectName("liveInstruction")
        self.instruction_label.setWordWrap(True)
        self.step_panel = StepPanel()
        self.step_panel.clear("The current step of a run shows here")
        layout = QVBoxLayout(self)
        layout.addWidget(self.task_label)
        layout.addWidget(self.instruction_label)
        layout.addWidget(self.step_panel, 1)
        self._pending: StepDone | None = None
        self.shown: StepDone | None = None
        self.task_id: str | None = None  # the task the heading names
        self._current: dict[str, str] = {}  # worker -> the task it runs now
        self._instructions: dict[str, str] = {}  # task id -> instruction as given
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._on_refresh_due)

    @Slot(object)
    def on_task_started(self, event: TaskStarted) -> None:
        self._current[event.worker] = event.task_id
        self._instructions[event.task_id] = event.instruction
        pending = self._pending
        if pending is not None and pending.worker == event.worker:
            self._pending = None  # the previous task's step: too late to show
        shown_here = self.shown is None or self.shown.worker == event.worker
        if shown_here:
            self.shown = None
            self._show_heading(event.task_id, f"on {event.worker}")
            self.step_panel.clear(f"Waiting for the first step of {event.task_id}…")

    @Slot(object)
    def on_step_done(self, event: StepDone) -> None:
        if self._current.get(event.worker, event.task_id) != event.task_id:
            return  # a straggler from a task that has ended
        self._pending = event
        if not self._timer.isActive():
            self._timer.start()

    @Slot(object)
    def on_task_finished(self, event: TaskFinished) -> None:
        if self._pending is not None and self._pending.task_id == event.task_id:
            self.flush()  # the task's last step, before its result is named
        if self.task_id not in (None, event.task_id) and self.shown is not None:
            return  # another worker's task is on show
        result = event.result
        why = f": {result.reason}" if result.reason else ""
        self._show_heading(
            event.task_id, f"{result.status.value}{why} ({event.done}/{event.total})"
        )

    def flush(self) -> None:
        """Show the latest step now (the end of a task or run, tests)."""
        self._timer.stop()
        self._on_refresh_due()

    def _show_heading(self, task_id: str, text: str) -> None:
        self.task_id = task_id
        self.task_label.setText(f"<b>{task_id}</b> {text}")
        instruction = self._instructions.get(task_id, "")
        self.instruction_label.setText(f"“{instruction}”" if instruction else "")

    @Slot()
    def _on_refresh_due(self) -> None:
        event, self._pending = self._pending, None
        if event is None:
            return
        if event.task_id != self.task_id:
            self._show_heading(event.task_id, f"on {event.worker}")
        self.shown = event
        self.step_panel.show_record(event.record, event.screenshot_path)
