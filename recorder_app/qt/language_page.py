"""The Language tab: a suite's instruction statistics, and the review of model proposals.

Left of the tabs, the suite (a workspace suite or any suite folder) and the annotator id
(shared with the Record tab). "Statistics" shows what ``elderbench analyze`` prints for
the suite. "Labels" and "Rewrites" list every task with its verified value and the model's
proposal (``elderbench label`` / ``normalize`` make them). From the keyboard: Up/Down
choose a task, Enter accepts the proposal, C opens the correction editor below with the
proposal filled in (Ctrl+Return saves it), R rejects. Each decision moves to the next task
still waiting and is written at once (task.json and the proposals file, atomically);
Ctrl+Z in the list takes the last decision back.

The tab follows the suite on disk: a task added or edited elsewhere (the Record tab's task
form, a build, ``elderbench label`` in a terminal) shows up without reopening the suite.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QFileSystemWatcher, QSettings, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from evaluator.document import Chart, Table
from evaluator.errors import EvaluatorError
from evaluator.language.analysis import analyze, blocks
from evaluator.language.definitions import label_definitions
from evaluator.language.proposals import (
    PROPOSALS_FILE,
    Decision,
    Kind,
    Proposal,
    ProposalStore,
    ReviewRecord,
    decide,
    has_labels,
    labels_from_json,
    undo_review,
)
from graph_builder import io
from graph_builder.errors import GraphBuilderError
from graph_builder.model import Labels, Suite, Task
from recorder_app.qt.dialogs import show_problem
from recorder_app.qt.eval_panel.settings import suite_choices
from recorder_app.qt.figure_widget import figure_widget
from recorder_app.qt.proposal_runner import ProposalRunner
from recorder_app.recording.workspace import Workspace

ANNOTATOR_KEY = "task/annotator"  # the Record tab's setting: one annotator id per studio


Fingerprint = tuple[tuple[str, int, int], ...]


def suite_fingerprint(folder: Path) -> Fingerprint:
    """What the tab shows depends on: suite.json, every task.json and the proposals."""
    files = [folder / io.SUITE_FILE, folder / PROPOSALS_FILE]
    files += [task_dir / io.TASK_FILE for task_dir in io.suite_task_dirs(folder)]
    out = []
    for path in files:
        try:
            stat = path.stat()
        except OSError:
            continue
        out.append((str(path.relative_to(folder)), stat.st_mtime_ns, stat.st_size))
    return tuple(out)


def _labels_text(labels: Labels) -> str:
    parts = [labels.scenario or ""]
    parts += [", ".join(labels.syntax), ", ".join(labels.semantics)]
    return " · ".join(p for p in parts if p) or "—"


def _proposal_labels(proposal: Proposal | None) -> Labels | None:
    if proposal is None or not isinstance(proposal.proposed, dict):
        return None
    return labels_from_json(proposal.proposed)


class StatisticsView(QScrollArea):
    """The analysis of a suite's instructions: its tables as rich text, its charts as SVG.

    Drawing the charts takes a large part of a second, so while the view is hidden (a
    review in the Labels tab, another tab of the studio) it is only noted and drawn when
    the view is shown: a keyboard review stays at the speed of the keys.
    """

    def __init__(self) -> None:
        super().__init__()
        self.setWidgetResizable(True)
        self.setObjectName("languageStatistics")
        self.pending: Path | None = None  # a suite to draw once shown
        self.show_message("Choose a suite.")

    def show_message(self, text: str) -> None:
        self.pending = None
        label = QLabel(text)
        label.setWordWrap(True)
        self.setWidget(label)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.pending is not None:
            try:
                self._draw(self.pending)
            except (EvaluatorError, GraphBuilderError) as exc:
                self.show_message(f"Cannot analyse this suite: {exc}")

    def show_suite(self, folder: Path) -> None:
        """Draw ``folder``'s analysis now if shown, else when next shown."""
        if not self.isVisible():
            self.pending = folder
            return
        self._draw(folder)

    def _draw(self, folder: Path) -> None:
        self.pending = None
        body = QWidget()
        layout = QVBoxLayout(body)
        for block in blocks(analyze(folder)):
            if isinstance(block, Chart):
                layout.addWidget(
                    figure_widget(block.svg.encode("utf-8"), block.title, self.logicalDpiX())
                )
            elif isinstance(block, Table):
                layout.addWidget(_table_label(block))
            else:
                kind, text = block
                label = QLabel(
                    f"<{kind}>{_escape(text)}</{kind}>" if kind != "p" else _escape(text)
                )
                label.setWordWrap(True)
                layout.addWidget(label)
        layout.addStretch(1)
        self.setWidget(body)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _table_label(table: Table) -> QLabel:
    head = "".join(f"<th align='left'>{_escape(h)}</th>" for h in table.headers)
    rows = "".join(
        "<tr>" + "".join(f"<td>{_escape(c)}</td>" for c in row) + "</tr>" for row in table.rows
    )
    label = QLabel(
        f"<table cellspacing='0' cellpadding='4' border='1'><tr>{head}</tr>{rows}</table>"
    )
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class CorrectionEditor(QGroupBox):
    """The person's own value: label checkboxes from the suite's vocabulary, or a text."""

    saved = Signal()

    def __init__(self, kind: Kind) -> None:
        super().__init__("Correction (Ctrl+Return saves)")
        self.kind = kind
        self.setObjectName(f"correctionEditor_{kind.value}")
        self.scenario = QComboBox()
        self.checks: dict[str, dict[str, QCheckBox]] = {}
        self.text = QLineEdit()
        self.text.setObjectName("rewriteEdit")
        self._grid = QGridLayout(self)
        self.save_button = QPushButton("Save correction")
        self.save_button.setObjectName("saveCorrection")
        self.save_button.clicked.connect(self.saved)
        QShortcut(QKeySequence("Ctrl+Return"), self, self.saved.emit)

    def set_vocabulary(self, suite: Suite) -> None:
        while self._grid.count():
            item = self._grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None and widget not in (self.scenario, self.text, self.save_button):
                widget.setParent(None)  # the old vocabulary's labels and checkboxes
        self.checks = {}
        if self.kind is Kind.REWRITES:
            self._grid.addWidget(self.text, 0, 0)
            self._grid.addWidget(self.save_button, 0, 1)
            return
        definitions = label_definitions()
        self.scenario.clear()
        self.scenario.addItem("(none)", None)
        for name in suite.vocabularies.get("scenario", ()):
            self.scenario.addItem(name, name)
        self._grid.addWidget(QLabel("scenario"), 0, 0)
        self._grid.addWidget(self.scenario, 0, 1, 1, 3)
        for row, dim in enumerate(("syntax", "semantics"), 1):
            self._grid.addWidget(QLabel(dim), row, 0)
            self.checks[dim] = {}
            for col, name in enumerate(suite.vocabularies.get(dim, ()), 1):
                box = QCheckBox(name)
                box.setToolTip(definitions.get(name, ""))
                self.checks[dim][name] = box
                self._grid.addWidget(box, row, col)
        self._grid.addWidget(self.save_button, 3, 1)

    def load(self, value: Any) -> None:
        if self.kind is Kind.REWRITES:
            self.text.setText(str(value or ""))
            self.text.setFocus()
            return
        labels = value if isinstance(value, Labels) else Labels()
        index = self.scenario.findData(labels.scenario)
        self.scenario.setCurrentIndex(max(0, index))
        for dim, boxes in self.checks.items():
            chosen = set(getattr(labels, dim))
            for name, box in boxes.items():
                box.setChecked(name in chosen)
        self.scenario.setFocus()

    def value(self) -> Any:
        if self.kind is Kind.REWRITES:
            return self.text.text()
        return Labels(
            self.scenario.currentData(),
            tuple(n for n, b in self.checks.get("syntax", {}).items() if b.isChecked()),
            tuple(n for n, b in self.checks.get("semantics", {}).items() if b.isChecked()),
        )


class ProposalReview(QWidget):
    """Every task with its verified value and the proposal; decisions from the keyboard."""

    decided = Signal(str)  # task id

    COLUMNS = ("Task", "Instruction", "Verified", "Proposed", "Status")

    def __init__(self, kind: Kind, annotator: Any) -> None:
        super().__init__()
        self.kind = kind
        self._annotator = annotator  # a callable giving the current annotator id
        self.suite_dir: Path | None = None
        self.tasks: list[Task] = []
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setObjectName(f"review_{kind.value}")
        self.table.setHorizontalHeaderLabels(self.COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        for col, mode in enumerate(
            (
                QHeaderView.ResizeMode.ResizeToContents,
                QHeaderView.ResizeMode.Interactive,
                QHeaderView.ResizeMode.Stretch,
                QHeaderView.ResizeMode.Stretch,
                QHeaderView.ResizeMode.ResizeToContents,
            )
        ):
            header.setSectionResizeMode(col, mode)
        self.table.setColumnWidth(1, 300)
        self.table.verticalHeader().setVisible(False)
        self.summary = QLabel()
        self.summary.setObjectName(f"reviewSummary_{kind.value}")
        self._done: list[ReviewRecord] = []  # this session's decisions, last one last
        self.undo_button = QPushButton("Undo last decision (Ctrl+Z)")
        self.undo_button.setObjectName(f"undoReview_{kind.value}")
        self.undo_button.setEnabled(False)
        self.undo_button.clicked.connect(self.undo_last)
        self.editor = CorrectionEditor(kind)
        self.editor.setVisible(False)
        self.editor.saved.connect(self._on_correction_saved)
        hint = QLabel(
            "Enter accepts the proposal · C corrects · R rejects · Up/Down choose. Proposals "
            f"come from Propose {kind.value} above, or <code>elderbench "
            f"{'label' if kind is Kind.LABELS else 'normalize'} SUITE --endpoint FILE</code>."
        )
        hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(hint)
        layout.addWidget(self.table, 1)
        footer = QHBoxLayout()
        footer.addWidget(self.summary, 1)
        footer.addWidget(self.undo_button)
        layout.addLayout(footer)
        layout.addWidget(self.editor)
        for key, slot in (
            (Qt.Key.Key_Return, self.accept_current),
            (Qt.Key.Key_Enter, self.accept_current),
            (Qt.Key.Key_C, self.correct_current),
            (Qt.Key.Key_R, self.reject_current),
            (QKeySequence.StandardKey.Undo, self.undo_last),
        ):
            shortcut = QShortcut(QKeySequence(key), self.table, slot)
            shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)

    def show_suite(self, folder: Path, suite: Suite) -> None:
        if folder != self.suite_dir:
            self._done = []
            self.undo_button.setEnabled(False)
        self.suite_dir = folder
        self.tasks = io.load_suite_tasks(folder)
        self.editor.set_vocabulary(suite)
        self.editor.setVisible(False)
        self.refresh()
        self.select_next_pending(-1)

    def reload(self, suite: Suite) -> None:
        """Read the suite's tasks again (they changed on disk), keeping the chosen task
        and a correction being typed."""
        if self.suite_dir is None:
            return
        chosen = self.current_task()
        self.tasks = io.load_suite_tasks(self.suite_dir)
        if not self.editor.isVisible():
            self.editor.set_vocabulary(suite)
        self.refresh()
        if chosen is None or not self.select_task(chosen.id):
            self.select_next_pending(-1)

    def select_task(self, task_id: str) -> bool:
        for row, task in enumerate(self.tasks):
            if task.id == task_id:
                self.table.selectRow(row)
                return True
        return False

    def refresh(self) -> None:
        if self.suite_dir is None:
            return
        store = ProposalStore(self.suite_dir)
        keep = self.table.currentRow()
        self.table.setRowCount(len(self.tasks))
        waiting = 0
        for row, task in enumerate(self.tasks):
            proposal = store.get(self.kind, task.id)
            verified, proposed = self._texts(task, proposal)
            status = self._status(task, proposal)
            waiting += status == "waiting"
            for col, text in enumerate((task.id, task.instruction, verified, proposed, status)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.table.setItem(row, col, item)
        self.summary.setText(
            f"{len(self.tasks) - waiting} of {len(self.tasks)} tasks need no review"
            if self.tasks
            else "This suite has no tasks."
        )
        if 0 <= keep < len(self.tasks):
            self.table.selectRow(keep)

    def _texts(self, task: Task, proposal: Proposal | None) -> tuple[str, str]:
        if self.kind is Kind.LABELS:
            labels = _proposal_labels(proposal)
            return _labels_text(task.labels), _labels_text(labels) if labels else self._missing(
                proposal
            )
        proposed = proposal.proposed if proposal and isinstance(proposal.proposed, str) else None
        return task.normalized_instruction or "—", proposed or self._missing(proposal)

    @staticmethod
    def _missing(proposal: Proposal | None) -> str:
        if proposal is None:
            return "(no proposal)"
        return f"(model reply unusable: {proposal.error})" if proposal.error else "—"

    def _status(self, task: Task, proposal: Proposal | None) -> str:
        if proposal is not None and proposal.review is not None:
            return proposal.review.decision.value
        has_value = (
            has_labels(task.labels) if self.kind is Kind.LABELS else task.normalized_instruction
        )
        if has_value:
            return "verified"  # a person's value: a proposal never replaces it
        if proposal is None:
            return "no proposal"
        return "waiting" if proposal.proposed is not None else "unusable reply"

    def current_task(self) -> Task | None:
        row = self.table.currentRow()
        return self.tasks[row] if 0 <= row < len(self.tasks) else None

    def select_next_pending(self, after: int) -> None:
        for row in [*range(after + 1, len(self.tasks)), *range(0, after + 1)]:
            item = self.table.item(row, 4)
            if item is not None and item.text() == "waiting":
                self.table.selectRow(row)
                return
        if self.tasks and self.table.currentRow() < 0:
            self.table.selectRow(0)

    def _decide(self, decision: Decision, value: Any = None) -> None:
        task = self.current_task()
        if task is None or self.suite_dir is None:
            return
        annotator = self._annotator()
        if not annotator:
            show_problem(self, "Who decides?", "Enter your annotator id above first.")
            return
        try:
            updated, record = decide(
                self.suite_dir, self.kind, task.id, decision, annotator=annotator, value=value
            )
        except (EvaluatorError, GraphBuilderError, ValueError) as exc:
            show_problem(self, "Cannot record this decision", str(exc))
            return
        self._done.append(record)
        self.undo_button.setEnabled(True)
        row = self.table.currentRow()
        self.tasks[row] = updated
        self.editor.setVisible(False)
        self.refresh()
        self.select_next_pending(row)
        self.table.setFocus()
        self.decided.emit(task.id)

    @Slot()
    def undo_last(self) -> None:
        """Take the last decision of this session back and select its task."""
        if not self._done or self.suite_dir is None:
            return
        record = self._done[-1]
        try:
            restored = undo_review(self.suite_dir, record)
        except (EvaluatorError, GraphBuilderError) as exc:
            show_problem(self, "Cannot undo this decision", str(exc))
            return
        self._done.pop()
        self.undo_button.setEnabled(bool(self._done))
        self.tasks = [restored if t.id == restored.id else t for t in self.tasks]
        self.editor.setVisible(False)
        self.refresh()
        self.select_task(record.task_id)
        self.table.setFocus()
        self.decided.emit(record.task_id)

    @Slot()
    def accept_current(self) -> None:
        self._decide(Decision.ACCEPTED)

    @Slot()
    def reject_current(self) -> None:
        self._decide(Decision.REJECTED)

    @Slot()
    def correct_current(self) -> None:
        task = self.current_task()
        if task is None or self.suite_dir is None:
            return
        proposal = ProposalStore(self.suite_dir).get(self.kind, task.id)
        if self.kind is Kind.LABELS:
            start: Any = _proposal_labels(proposal) or task.labels
        else:
            start = (
                proposal.proposed
                if proposal and proposal.proposed
                else (task.normalized_instruction or task.instruction)
            )
        self.editor.setVisible(True)
        self.editor.load(start)

    @Slot()
    def _on_correction_saved(self) -> None:
        self._decide(Decision.CORRECTED, self.editor.value())


class LanguagePage(QWidget):
    def __init__(self, settings: QSettings) -> None:
        super().__init__()
        self.setObjectName("languagePage")
        self._settings = settings
        self.workspace: Workspace | None = None
        self.suite_combo = QComboBox()
        self.suite_combo.setObjectName("languageSuite")
        self.suite_combo.setMinimumWidth(240)
        self.open_button = QPushButton("Open suite folder…")
        self.open_button.clicked.connect(self._on_open_clicked)
        self.annotator_edit = QLineEdit(str(settings.value(ANNOTATOR_KEY, "")))
        self.annotator_edit.setPlaceholderText("Your annotator id")
        self.annotator_edit.editingFinished.connect(
            lambda: self._settings.setValue(ANNOTATOR_KEY, self.annotator_edit.text().strip())
        )
        self.statistics = StatisticsView()
        self.labels = ProposalReview(Kind.LABELS, self.annotator)
        self.rewrites = ProposalReview(Kind.REWRITES, self.annotator)
        for view in (self.labels, self.rewrites):
            view.decided.connect(lambda _id: self._on_decided())
        self.runner = ProposalRunner(settings)
        self.runner.started.connect(self._on_proposing_started)
        self.runner.finished.connect(self._on_proposing_ended)
        self.runner.failed.connect(self._on_proposing_failed)
        self.inner = QTabWidget()
        self.inner.addTab(self.statistics, "Statistics")
        self.inner.addTab(self.labels, "Labels")
        self.inner.addTab(self.rewrites, "Rewrites")
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Suite"))
        bar.addWidget(self.suite_combo)
        bar.addWidget(self.open_button)
        bar.addStretch(1)
        bar.addWidget(QLabel("Annotator"))
        bar.addWidget(self.annotator_edit)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.runner)
        layout.addWidget(self.inner, 1)
        self.suite_combo.currentIndexChanged.connect(self._on_suite_changed)
        self._fingerprint: Fingerprint | None = None
        self.watcher = QFileSystemWatcher(self)
        # A write is a burst of events (temporary file, rename): read once it settles.
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(250)
        self._settle.timeout.connect(self.refresh_if_changed)
        self.watcher.directoryChanged.connect(lambda _: self._settle.start())
        self.watcher.fileChanged.connect(lambda _: self._settle.start())

    def annotator(self) -> str:
        return self.annotator_edit.text().strip()

    def set_workspace(self, workspace: Workspace) -> None:
        self.workspace = workspace
        opened = [
            self.suite_combo.itemData(i)
            for i in range(self.suite_combo.count())
            if self.suite_combo.itemData(i) is not None
        ]
        self.suite_combo.blockSignals(True)
        self.suite_combo.clear()
        for path in suite_choices(workspace.suites_dir):  # the Evaluate tab's list
            self.suite_combo.addItem(path.name, str(path.resolve()))
        for folder in opened:
            if self.suite_combo.findData(folder) < 0 and Path(folder).is_dir():
                self.suite_combo.addItem(Path(folder).name, folder)
        self.suite_combo.blockSignals(False)
        self._on_suite_changed()

    def open_suite_folder(self, folder: str | Path) -> None:
        folder = str(Path(folder).resolve())
        index = self.suite_combo.findData(folder)
        if index < 0:
            self.suite_combo.addItem(Path(folder).name, folder)
            index = self.suite_combo.count() - 1
        self.suite_combo.setCurrentIndex(index)

    def suite_dir(self) -> Path | None:
        data = self.suite_combo.currentData()
        return Path(data) if data else None

    def can_close(self) -> bool:
        """Closing cancels a proposals job (what it received is saved)."""
        self.runner.cancel()
        return True

    @Slot()
    def _on_open_clicked(self) -> None:
        start = str(self.workspace.suites_dir) if self.workspace else str(Path.home())
        folder = QFileDialog.getExistingDirectory(self, "Open a suite folder", start)
        if folder:
            self.open_suite_folder(folder)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh_if_changed()  # changes made while another tab was in front

    @Slot()
    def refresh_if_changed(self) -> bool:
        """Show the suite again when its files changed since it was last read."""
        folder = self.suite_dir()
        if folder is None or suite_fingerprint(folder) == self._fingerprint:
            return False
        self._show_suite(folder, reload=True)
        return True

    @Slot()
    def _on_suite_changed(self) -> None:
        folder = self.suite_dir()
        self.runner.set_suite(folder)
        if folder is not None:
            self._show_suite(folder, reload=False)

    def _show_suite(self, folder: Path, *, reload: bool) -> None:
        self._watch(folder)
        self._fingerprint = suite_fingerprint(folder)
        if not (folder / io.SUITE_FILE).is_file() or not io.suite_task_dirs(folder):
            self.statistics.show_message(f"{folder} has no tasks yet.")
            return
        try:
            suite = io.load_suite(folder)
            for view in (self.labels, self.rewrites):
                if reload and view.suite_dir == folder:
                    view.reload(suite)
                else:
                    view.show_suite(folder, suite)
        except (EvaluatorError, GraphBuilderError) as exc:
            self.statistics.show_message(f"Cannot read this suite: {exc}")
            return
        self._show_statistics()

    def _watch(self, folder: Path) -> None:
        """Watch the suite folder, its task folders and its proposals folder (a file
        added, or replaced by an atomic write), and the files the tab reads (a file
        rewritten in place, as some editors and scripts do, changes no folder)."""
        wanted = {str(folder), str(folder / PROPOSALS_FILE.parent)}
        wanted |= {str(d) for d in io.suite_task_dirs(folder)} if folder.is_dir() else set()
        wanted = {p for p in wanted if Path(p).is_dir()}
        wanted |= {str(folder / name) for name, _, _ in suite_fingerprint(folder)}
        current = set(self.watcher.directories()) | set(self.watcher.files())
        if current - wanted:
            self.watcher.removePaths(sorted(current - wanted))
        if wanted - current:
            self.watcher.addPaths(sorted(wanted - current))

    @Slot(str)
    def _on_proposing_started(self, kind: str) -> None:
        # The job saves its whole proposals file after each task: a review written
        # meanwhile would be overwritten, so reviews wait until it ends.
        for view in (self.labels, self.rewrites):
            view.setEnabled(False)
        self.inner.setCurrentWidget(self.labels if kind == Kind.LABELS.value else self.rewrites)

    @Slot(str, str)
    def _on_proposing_ended(self, _kind: str, _summary: str) -> None:
        for view in (self.labels, self.rewrites):
            view.setEnabled(True)
        self.refresh_if_changed()

    @Slot(str, str)
    def _on_proposing_failed(self, kind: str, message: str) -> None:
        self._on_proposing_ended(kind, message)
        show_problem(self, f"Cannot propose {kind}", message)

    def _on_decided(self) -> None:
        folder = self.suite_dir()
        if folder is not None:  # our own write: nothing to read again
            self._fingerprint = suite_fingerprint(folder)
        self._show_statistics()

    def _show_statistics(self) -> None:
        folder = self.suite_dir()
        if folder is None:
            return
        try:
            self.statistics.show_suite(folder)
        except (EvaluatorError, GraphBuilderError) as exc:
            self.statistics.show_message(f"Cannot analyse this suite: {exc}")
