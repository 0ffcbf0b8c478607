"""One task of a run, step by step, with the human verdict and failure tags.

Verdicts go to the run through ``RunStore.set_override`` and tags through
``RunStore.add_tag`` and ``remove_tag``; the report and the metrics read them from there.
Tags follow ElderBench's failure taxonomy (section 5) plus categories the user adds.
"Import as demonstration" does what ``elderbench import run RUN --task T -o DEMOS`` does
for the episode shown (``evaluator.run_import``), into the suite's demonstrations
(``recorder_app.recording.suite_demos``), so the next build of the task merges it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from evaluator.audit_groups import run_suite_dir
from evaluator.errors import EvaluatorError
from evaluator.judges import combine
from evaluator.language.failures import confirm_failure, read_failure_proposals
from evaluator.metrics import effective_status
from evaluator.records import StepRecord, TaskResult, TaskStatus
from evaluator.run_import import import_run
from evaluator.run_store import CATEGORY_TITLES, FailureCategory, FailureTag, HumanVerdict, RunStore
from graph_builder.errors import GraphBuilderError
from graph_builder.importers import ImportResult
from recorder_app.qt.eval_panel.live_view import StepPanel, exchange_text
from recorder_app.qt.report_path import ReportPathRow
from recorder_app.qt.workers import BackgroundJob, run_in_background
from recorder_app.recording.animation import ANIMATION_FILTER, trace_frames, write_animation
from recorder_app.recording.suite_demos import suite_demos

CUSTOM_PREFIX = "custom:"


def _passed(value: bool | None) -> str:
    return "n/a" if value is None else "pass" if value else "fail"


def _tag_text(tag: FailureTag) -> str:
    where = "overall" if tag.step is None else f"step {tag.step + 1}"
    note = f" — {tag.note}" if tag.note else ""
    return f"{tag.title} @ {where}{note}"


class TraceViewer(QWidget):
    """Open a task with ``show_task(store, task_id)``."""

    verdict_changed = Signal(str)  # task id
    tags_changed = Signal(str)  # task id
    category_added = Signal(str)  # a custom category's label
    problem_occurred = Signal(str)
    gif_written = Signal(str)  # the written GIF's or MP4's path
    demo_imported = Signal(str)  # the new demonstration's folder

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("traceViewer")
        self.store: RunStore | None = None
        self.result: TaskResult | None = None
        # The tags as the list shows them: a removal names the tag the person saw.
        self._shown_tags: tuple[FailureTag, ...] = ()
        self.steps: list[StepRecord] = []
        self.workspace_demos: Path | None = None
        self.title = QLabel("Double-click a task in the results to open its trace.")
        self.title.setObjectName("traceTitle")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.step_list = QListWidget()
        self.step_list.setObjectName("traceSteps")
        self.step_list.currentRowChanged.connect(self._on_step_selected)
        self.step_panel = StepPanel()
        self.step_panel.clear("No task open")

        side = QWidget()
        side.setMaximumWidth(420)
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.addWidget(self._build_verdict_box())
        side_layout.addWidget(self._build_tags_box())
        side_layout.addStretch(1)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.step_list)
        splitter.addWidget(self.step_panel)
        splitter.addWidget(side)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 3)
        splitter.setStretchFactor(2, 2)
        splitter.setSizes([260, 560, 380])
        self.splitter = splitter
        self.gif_button = QPushButton("Export GIF/MP4…")
        self.gif_button.setToolTip(
            "Write this task's steps as an animated GIF or an MP4 video, actions drawn"
        )
        self.gif_button.clicked.connect(self._on_gif_clicked)
        heading = QHBoxLayout()
        heading.addWidget(self.title, 1)
        heading.addWidget(self.gif_button)
        self.import_button = QPushButton("Import as demonstration")
        self.import_button.setObjectName("importDemoButton")
        self.import_button.clicked.connect(self.import_demo)
        heading.addWidget(self.import_button)
        self.gif_row = ReportPathRow()
        self.gif_row.setObjectName("gifRow")
        self.gif_row.hide()
        self.import_row = ReportPathRow()
        self.import_row.setObjectName("importRow")
        self.import_row.hide()
        layout = QVBoxLayout(self)
        layout.addLayout(heading)
        layout.addWidget(self.gif_row)
        layout.addWidget(self.import_row)
        layout.addWidget(splitter, 1)
        self._set_enabled(False)

    # -- construction

    def _build_verdict_box(self) -> QGroupBox:
        box = QGroupBox("Verdict")
        self.recorded_label = QLabel("")
        self.recorded_label.setObjectName("recordedVerdict")
        self.recorded_label.setWordWrap(True)
        self.human_label = QLabel("")
        self.human_label.setObjectName("humanVerdict")
        self.human_label.setWordWrap(True)
        self.verdict_note = QLineEdit()
        self.verdict_note.setPlaceholderText("Note (why you agree or override)")
        self.annotator_edit = QLineEdit()
        self.annotator_edit.setObjectName("verdictAnnotator")
        self.annotator_edit.setPlaceholderText("Your annotator id (signs the verdicts)")
        self.annotator_edit.setToolTip(
            "The annotator id that signs human verdicts; the same as in the Record tab"
        )
        self.accept_button = QPushButton("Accept")
        self.accept_button.setToolTip("Confirm the recorded verdict as the human verdict")
        self.success_button = QPushButton("Success")
        self.success_button.setToolTip("Override: the task was done")
        self.failure_button = QPushButton("Failure")
        self.failure_button.setToolTip("Override: the task was not done")
        self.clear_button = QPushButton("Clear")
        self.clear_button.setToolTip("Remove the human verdict")
        self.accept_button.clicked.connect(self._on_accept_clicked)
        self.success_button.clicked.connect(lambda: self._set_verdict(True))
        self.failure_button.clicked.connect(lambda: self._set_verdict(False))
        self.clear_button.clicked.connect(self._on_clear_clicked)
        # Two by two, so the Evaluate tab fits a 1024 px window beside the run form.
        buttons = QGridLayout()
        for index, button in enumerate(
            (self.accept_button, self.success_button, self.failure_button, self.clear_button)
        ):
            buttons.addWidget(button, index // 2, index % 2)
        layout = QVBoxLayout(box)
        layout.addWidget(self.recorded_label)
        layout.addWidget(self.human_label)
        layout.addWidget(self.verdict_note)
        layout.addWidget(self.annotator_edit)
        layout.addLayout(buttons)
        return box

    def _build_tags_box(self) -> QGroupBox:
        box = QGroupBox("Failure analysis")
        self.tag_list = QListWidget()
        self.tag_list.setObjectName("tagList")
        self.tag_list.setMinimumHeight(60)
        self.tag_list.setWordWrap(True)
        self.tag_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.category_combo = QComboBox()
        self.category_combo.setObjectName("categoryCombo")
        # Long category titles must not make the Evaluate tab wider than a 1024 px window:
        # the combo shows 16 characters when narrow, the whole title in its list.
        self.category_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.category_combo.setMinimumContentsLength(16)
        for category, title in CATEGORY_TITLES.items():
            if category is not FailureCategory.CUSTOM:
                self.category_combo.addItem(title, category.value)
        self.new_category = QLineEdit()
        self.new_category.setPlaceholderText("New category…")
        self.add_category_button = QPushButton("Add category")
        self.add_category_button.clicked.connect(self._on_add_category_clicked)
        self.new_category.returnPressed.connect(self._on_add_category_clicked)
        new_row = QHBoxLayout()
        new_row.addWidget(self.new_category, 1)
        new_row.addWidget(self.add_category_button)
        self.tag_step = QSpinBox()
        self.tag_step.setObjectName("tagStep")
        self.tag_step.setSpecialValueText("overall")
        self.tag_step.setPrefix("step ")
        self.tag_note = QLineEdit()
        self.tag_note.setPlaceholderText("What went wrong")
        self.add_tag_button = QPushButton("Add tag")
        self.add_tag_button.setObjectName("addTagButton")
        self.remove_tag_button = QPushButton("Remove tag")
        self.add_tag_button.clicked.connect(self._on_add_tag_clicked)
        self.remove_tag_button.clicked.connect(self._on_remove_tag_clicked)
        form = QFormLayout()
        form.addRow("Category", self.category_combo)
        form.addRow("", new_row)
        form.addRow("Went wrong at", self.tag_step)
        form.addRow("Note", self.tag_note)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_tag_button)
        buttons.addWidget(self.remove_tag_button)
        # A model's first pass (elderbench failures RUN): shown, and counted once confirmed.
        self.proposal_label = QLabel()
        self.proposal_label.setObjectName("failureProposal")
        self.proposal_label.setWordWrap(True)
        self.confirm_proposal_button = QPushButton("Confirm proposal")
        self.confirm_proposal_button.setObjectName("confirmProposalButton")
        self.confirm_proposal_button.clicked.connect(self._on_confirm_proposal_clicked)
        proposal_row = QHBoxLayout()
        proposal_row.addWidget(self.proposal_label, 1)
        proposal_row.addWidget(self.confirm_proposal_button)
        layout = QVBoxLayout(box)
        layout.addWidget(self.tag_list, 1)
        layout.addLayout(proposal_row)
        layout.addLayout(form)
        layout.addLayout(buttons)
        return box

    # -- API

    def set_custom_categories(self, labels: list[str] | tuple[str, ...]) -> None:
        for label in labels:
            self._add_category(label)

    def show_task(self, store: RunStore, task_id: str) -> bool:
        """Load the task's latest result and steps from the run; False when it has none."""
        result = next((r for r in store.results() if r.task_id == task_id), None)
        if result is None:
            self.problem_occurred.emit(f"{task_id} has no result in {store.run_dir}")
            return False
        self.store, self.result = store, result
        try:
            self.steps = store.read_steps(task_id)
        except (OSError, EvaluatorError) as exc:
            self.steps = []
            self.problem_occurred.emit(f"cannot read the trace of {task_id}: {exc}")
        for tags in store.tags().values():
            for tag in tags:
                if tag.category is FailureCategory.CUSTOM:
                    self._add_category(tag.label)
        self.step_list.clear()
        for record in self.steps:
            mark = {True: "✓", False: "✗", None: "·"}[record.decision_correct]
            item = QListWidgetItem(f"{mark} {record.index + 1}. {record.action_text or '—'}")
            item.setToolTip(
                "\n".join(
                    t for t in (record.rule or record.parse_error, exchange_text(record)) if t
                )
            )
            self.step_list.addItem(item)
        self.tag_step.setRange(0, max(1, len(self.steps)))
        self.title.setText(
            f"<b>{result.task_id}</b> ({result.protocol}, {result.app or 'no app'}) — "
            f"“{result.instruction}”"
        )
        self._refresh_verdict()
        self._refresh_tags()
        self._set_enabled(True)
        for row in (self.gif_row, self.import_row):  # they named the previous task's files
            row.set_path(None)
            row.hide()
        if self.steps:
            self.step_list.setCurrentRow(len(self.steps) - 1)
        else:
            self.step_panel.clear("This task has no recorded steps")
        return True

    @property
    def task_id(self) -> str | None:
        return self.result.task_id if self.result else None

    # -- display

    def _set_enabled(self, enabled: bool) -> None:
        for widget in (
            self.accept_button,
            self.success_button,
            self.failure_button,
            self.clear_button,
            self.gif_button,
            self.add_tag_button,
            self.remove_tag_button,
            self.verdict_note,
            self.tag_note,
        ):
            widget.setEnabled(enabled)
        if enabled and self.result is not None:
            self.accept_button.setEnabled(self.result.status is not TaskStatus.ERROR)
        self._refresh_import()

    def import_refusal(self) -> str:
        """Why the episode shown cannot become a demonstration ("" when it can)."""
        store, result = self.store, self.result
        if store is None or result is None:
            return "Open a task's trace first."
        if result.protocol != "online":
            return (
                f"This episode is {result.protocol}: only an online episode (screens seen on "
                "a phone) can become a demonstration."
            )
        status = effective_status(result, store.overrides())
        if status is not TaskStatus.SUCCESS:
            return (
                f"This episode is a {status.value}, not a verified success: only a verified "
                "successful episode becomes a demonstration (a person's Success verdict counts)."
            )
        if self._demos_root() is None:
            return "The run's suite ships no demos/ and no workspace is open to put it in."
        return ""

    def _demos_root(self) -> Path | None:
        suite = run_suite_dir(self.store) if self.store is not None else None
        return suite_demos(
            suite if suite is not None and suite.is_dir() else None, self.workspace_demos
        )

    def _refresh_import(self) -> None:
        why = self.import_refusal()
        self.import_button.setEnabled(not why)
        self.import_button.setToolTip(
            why
            or "Write this episode as a demonstration of its task, where the suite's "
            "demonstrations live; the next build of the task merges it"
        )

    def _refresh_verdict(self) -> None:
        assert self.store is not None and self.result is not None
        result = self.result
        lines = [f"Recorded: <b>{result.status.value}</b>"]
        if result.reason:
            lines.append(f"Why: {result.reason}")
        if result.verification:
            lines.append(f"Judges combined: {_passed(combine(result.verification))}")
            lines += [
                f"&nbsp;&nbsp;{v.judge}: {_passed(v.passed)} — {v.reason}"
                for v in result.verification
            ]
        self.recorded_label.setText("<br>".join(lines))
        human = self.store.overrides().get(result.task_id)
        if human is None:
            self.human_label.setText("Human verdict: none")
        else:
            note = f" — {human.note}" if human.note else ""
            who = f" by {human.annotator}" if human.annotator else ""
            self.human_label.setText(
                f"Human verdict: <b>{'success' if human.success else 'failure'}</b>{who}{note}"
            )

    def _refresh_tags(self) -> None:
        assert self.store is not None and self.result is not None
        self.tag_list.clear()
        tags = self._shown_tags = self.store.tags().get(self.result.task_id, ())
        for tag in tags:
            self.tag_list.addItem(_tag_text(tag))
        try:
            proposal = read_failure_proposals(self.store).get(self.result.task_id) or {}
        except (OSError, EvaluatorError, GraphBuilderError) as exc:
            proposal = {"error": str(exc)}
        category = proposal.get("category")
        if category and not tags and category in FailureCategory:
            title = CATEGORY_TITLES[FailureCategory(category)]
            reason = f" — {proposal['reason']}" if proposal.get("reason") else ""
            self.proposal_label.setText(f"Model proposes: <b>{title}</b>{reason}")
        elif proposal.get("error") and not tags:
            self.proposal_label.setText(f"Model proposal unusable: {proposal['error']}")
        else:
            self.proposal_label.setText("")
        self.proposal_label.setVisible(bool(self.proposal_label.text()))
        self.confirm_proposal_button.setVisible(bool(category) and not tags)

    def _add_category(self, label: str) -> bool:
        label = label.strip()
        if not label or self.category_combo.findText(label) >= 0:
            return False
        self.category_combo.addItem(label, CUSTOM_PREFIX + label)
        return True

    # -- slots

    @Slot(int)
    def _on_step_selected(self, row: int) -> None:
        if self.store is None or self.result is None or not 0 <= row < len(self.steps):
            return
        record = self.steps[row]
        try:
            shot = self.store.step_file(self.result.protocol, record.screenshot)
        except EvaluatorError:
            shot = None
        self.step_panel.show_record(record, shot)
        self.tag_step.setValue(record.index + 1)

    def _write(self, what: str, write: Callable[[], object]) -> bool:
        try:
            write()
        except (OSError, EvaluatorError, GraphBuilderError, ValueError) as exc:
            self.problem_occurred.emit(f"cannot save the {what}: {exc}")
            return False
        return True

    def _set_verdict(self, success: bool | None) -> None:
        if self.store is None or self.result is None:
            return
        store, task_id = self.store, self.result.task_id
        annotator = self._annotator() if success is not None else ""
        if annotator is None:
            return
        verdict = (
            None
            if success is None
            else HumanVerdict(success, self.verdict_note.text().strip(), annotator)
        )
        if self._write("verdict", lambda: store.set_override(task_id, verdict)):
            self.verdict_note.clear()
            self._refresh_verdict()
            self._refresh_import()
            self.verdict_changed.emit(task_id)

    def export_gif(self, out: Path) -> BackgroundJob | None:
        """Write the open task's trace as a GIF or an MP4, as `out` is named (off the GUI
        thread)."""
        if self.store is None or self.result is None:
            return None
        run_dir, task_id = self.store.run_dir, self.result.task_id
        self.gif_button.setEnabled(False)

        def done(path: Path) -> None:
            self.gif_button.setEnabled(True)
            kind = "MP4" if path.suffix.lower() == ".mp4" else "GIF"
            self.gif_row.set_path(path, what=f"{kind} written to", open_label=f"Open {kind}")
            self.gif_row.show()
            self.gif_written.emit(str(path))

        def failed(exc: Exception) -> None:
            self.gif_button.setEnabled(True)
            self.problem_occurred.emit(str(exc))

        return run_in_background(
            lambda: write_animation(trace_frames(run_dir, task_id), out),
            on_done=done,
            on_error=failed,
        )

    @Slot()
    def import_demo(self) -> BackgroundJob | None:
        """Import the episode shown as a demonstration (off the GUI thread)."""
        why = self.import_refusal()
        if why:
            self.problem_occurred.emit(why)
            return None
        assert self.store is not None and self.result is not None
        run_dir, task_id, demos = self.store.run_dir, self.result.task_id, self._demos_root()
        assert demos is not None
        self.import_button.setEnabled(False)

        def done(imported: ImportResult) -> None:
            self._refresh_import()
            steps = len(imported.demo.steps)
            self.import_row.set_path(
                imported.folder,
                what=f"Imported {steps} steps; the next build merges",
                open_label="Open folder",
            )
            self.import_row.show()
            self.demo_imported.emit(str(imported.folder))

        def failed(exc: Exception) -> None:
            self._refresh_import()
            self.problem_occurred.emit(f"cannot import the episode: {exc}")

        return run_in_background(
            lambda: import_run(run_dir, task_id=task_id, demos_root=demos),
            on_done=done,
            on_error=failed,
        )

    @Slot()
    def _on_gif_clicked(self) -> None:
        if self.store is None or self.result is None:
            return
        suggested = str(self.store.run_dir / f"{self.result.task_id}.gif")
        path, _ = QFileDialog.getSaveFileName(
            self, "Export as GIF or MP4", suggested, ANIMATION_FILTER
        )
        if path:
            self.export_gif(Path(path))

    def _annotator(self) -> str | None:
        """The annotator id that signs a human judgement; None (and a message) when unset."""
        annotator = self.annotator_edit.text().strip()
        if not annotator:
            self.problem_occurred.emit(
                "Write your annotator id in the Verdict box first: every human verdict and "
                "confirmed failure tag is signed with it."
            )
            self.annotator_edit.setFocus()
            return None
        return annotator

    @Slot()
    def _on_accept_clicked(self) -> None:
        if self.result is not None:
            self._set_verdict(self.result.success)

    @Slot()
    def _on_clear_clicked(self) -> None:
        self._set_verdict(None)

    @Slot()
    def _on_add_category_clicked(self) -> None:
        label = self.new_category.text().strip()
        if not label:
            return
        if self._add_category(label):
            self.category_added.emit(label)
        self.category_combo.setCurrentIndex(self.category_combo.findText(label))
        self.new_category.clear()

    def current_tag(self) -> FailureTag:
        data = str(self.category_combo.currentData())
        step = self.tag_step.value()
        where = None if step == 0 else step - 1
        note = self.tag_note.text().strip()
        if data.startswith(CUSTOM_PREFIX):
            return FailureTag(FailureCategory.CUSTOM, where, note, data.removeprefix(CUSTOM_PREFIX))
        return FailureTag(FailureCategory(data), where, note)

    @Slot()
    def _on_add_tag_clicked(self) -> None:
        if self.store is None or self.result is None:
            return
        store, task_id, tag = self.store, self.result.task_id, self.current_tag()
        if self._write("failure tag", lambda: store.add_tag(task_id, tag)):
            self.tag_note.clear()
            self._refresh_tags()
            self.tags_changed.emit(task_id)

    @Slot()
    def _on_confirm_proposal_clicked(self) -> None:
        if self.store is None or self.result is None:
            return
        store, task_id = self.store, self.result.task_id
        annotator = self._annotator()
        if annotator is None:
            return
        if self._write("failure tag", lambda: confirm_failure(store, task_id, annotator=annotator)):
            self._refresh_tags()
            self.tags_changed.emit(task_id)

    @Slot()
    def _on_remove_tag_clicked(self) -> None:
        row = self.tag_list.currentRow()
        if self.store is None or self.result is None or row < 0:
            return
        store, task_id = self.store, self.result.task_id
        if row >= len(self._shown_tags):
            return
        # The tag shown at that row, removed from the file as it is now: what another
        # writer added or removed meanwhile is left as they left it.
        tag = self._shown_tags[row]
        if self._write("failure tags", lambda: store.remove_tag(task_id, tag)):
            self._refresh_tags()
            self.tags_changed.emit(task_id)
