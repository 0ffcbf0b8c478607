"""The Audit view: what the graph did not credit, marked from the keyboard.

Choose runs (by default the runs of the suite open in the form), find their unmatched
offline steps grouped as ``elderbench audit`` groups them (``evaluator.audit_groups``, on
a worker), look at each group's node with the agents' actions drawn as the HTML sheet
draws them (``evaluator.audit_sheet.overlay_svg``), and mark it with V (valid), W
(wrong) or U (unsure); J/K or the arrows move, Ctrl+Z puts the last mark back. Marks are
written by ``evaluator.audit_marks.set_mark``, the code behind ``audit --mark``, signed
with the annotator id and under the suite's lock. A group marked valid can be explored on
a phone from here (``explore_box.ExploreBox``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF, Qt, Signal, Slot
from PySide6.QtGui import QImage, QKeyEvent, QKeySequence, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
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

from evaluator.audit_groups import Audit, AuditGroup, collect, run_suite_dir
from evaluator.audit_marks import Mark, Verdict, load_marks, put_back, set_mark
from evaluator.audit_sheet import overlay_svg
from evaluator.errors import EvaluatorError
from evaluator.run_store import RUN_FILE, RunStore
from graph_builder.errors import GraphBuilderError
from recorder_app.qt.eval_panel.explore_box import ExploreBox
from recorder_app.qt.fitted_picture import FittedPicture
from recorder_app.qt.progress_job import ProgressJob

PICTURE_WIDTH = 360
COLUMNS = ("Group", "Task", "Node", "Mark", "Count", "Agents", "Target")
VERDICT_KEYS = {
    Qt.Key.Key_V: Verdict.VALID,
    Qt.Key.Key_W: Verdict.WRONG,
    Qt.Key.Key_U: Verdict.UNSURE,
}
MOVE_KEYS = {Qt.Key.Key_J: 1, Qt.Key.Key_K: -1}


@dataclass(frozen=True, slots=True)
class Undo:
    """What the last keyboard mark replaced in the suite."""

    suite: Path
    task_id: str
    group: str
    previous: Mark | None


def group_picture(group: AuditGroup, width: int = PICTURE_WIDTH) -> QPixmap:
    """The node's screenshot with the sheet's drawing of the group over it."""
    image = QImage(str(group.screenshot))
    if image.isNull():
        w, h = group.screen
        image = QImage(w, h, QImage.Format.Format_RGB32)
        image.fill(Qt.GlobalColor.lightGray)
    image = image.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
    image = image.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
    renderer = QSvgRenderer(QByteArray(overlay_svg(group).encode("utf-8")))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, image.width(), image.height()))
    painter.end()
    return QPixmap.fromImage(image)


def mark_text(mark: Mark | None) -> str:
    return f"{mark.verdict.value} ({mark.annotator})" if mark is not None else "unmarked"


def suite_runs(runs_dir: Path | None) -> list[tuple[Path, Path | None]]:
    """The run folders under ``runs_dir`` with the suite each was evaluated on."""
    found: list[tuple[Path, Path | None]] = []
    if runs_dir is None or not runs_dir.is_dir():
        return found
    for folder in sorted(p for p in runs_dir.iterdir() if (p / RUN_FILE).is_file()):
        try:
            found.append((folder, run_suite_dir(RunStore.open(folder))))
        except EvaluatorError:
            continue  # not a readable run: not offered
    return found


def same_folder(a: Path | None, b: Path | None) -> bool:
    return a is not None and b is not None and a.resolve() == b.resolve()


class GroupTable(QTableWidget):
    """The groups, one a row; V/W/U mark the current one, J/K move, Ctrl+Z undoes."""

    verdict_keyed = Signal(str)
    undo_keyed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setObjectName("auditGroups")
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().hide()
        self.horizontalHeader().setStretchLastSection(True)
        self.setWordWrap(False)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Undo):
            self.undo_keyed.emit()
            return
        plain = event.modifiers() in (
            Qt.KeyboardModifier.NoModifier,
            Qt.KeyboardModifier.KeypadModifier,
        )
        key = Qt.Key(event.key())
        if plain and key in VERDICT_KEYS:
            self.verdict_keyed.emit(VERDICT_KEYS[key].value)
            return
        if plain and key in MOVE_KEYS:
            self.move_by(MOVE_KEYS[key])
            return
        super().keyPressEvent(event)

    def move_by(self, delta: int) -> None:
        if self.rowCount():
            row = min(max(self.currentRow() + delta, 0), self.rowCount() - 1)
            self.selectRow(row)


class AuditView(QWidget):
    """The "Audit" tab of the Evaluate page."""

    problem_occurred = Signal(str)
    marked = Signal(str, str)  # group id, verdict
    groups_found = Signal(int)

    def __init__(self, explore: ExploreBox, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("auditView")
        self.suite: Path | None = None
        self.runs_dir: Path | None = None
        self.audit: Audit | None = None
        self.groups: list[AuditGroup] = []
        self.undo_stack: list[Undo] = []
        self.job: ProgressJob | None = None
        self.explore = explore
        layout = QVBoxLayout(self)
        layout.addLayout(self._build_runs_row())
        self.progress = QProgressBar()
        self.progress.setObjectName("auditProgress")
        self.progress.setFormat("%v / %m runs read")
        self.progress.hide()
        self.summary = QLabel("Choose runs and find what the graph did not credit.")
        self.summary.setObjectName("auditSummary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.progress)
        layout.addWidget(self.summary)
        self.table = GroupTable()
        self.table.itemSelectionChanged.connect(self._on_group_selected)
        self.table.verdict_keyed.connect(self.mark_current)
        self.table.undo_keyed.connect(self.undo_last)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.table)
        splitter.addWidget(self._build_detail())
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout.addWidget(splitter, 1)
        self._update_buttons()

    # -- construction

    def _build_runs_row(self) -> QHBoxLayout:
        self.runs_list = QListWidget()
        self.runs_list.setObjectName("auditRuns")
        self.runs_list.setMaximumHeight(110)
        self.add_run_button = QPushButton("Add run…")
        self.add_run_button.clicked.connect(self._on_add_run_clicked)
        self.find_button = QPushButton("Find uncredited actions")
        self.find_button.setObjectName("auditFindButton")
        self.find_button.setToolTip("Group the checked runs' offline steps that matched no edge")
        self.find_button.clicked.connect(self.find_groups)
        buttons = QVBoxLayout()
        buttons.addWidget(self.find_button)
        buttons.addWidget(self.add_run_button)
        buttons.addStretch(1)
        row = QHBoxLayout()
        row.addWidget(self.runs_list, 1)
        row.addLayout(buttons)
        return row

    def _build_detail(self) -> QWidget:
        self.picture = FittedPicture("No group chosen")
        self.picture.setObjectName("auditPicture")
        self.details = QLabel("")
        self.details.setObjectName("auditDetails")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.annotator_edit = QLineEdit()
        self.annotator_edit.setObjectName("auditAnnotator")
        self.annotator_edit.setPlaceholderText("Your annotator id (signs the marks)")
        self.note_edit = QLineEdit()
        self.note_edit.setPlaceholderText("Note kept with the next mark (optional)")
        self.verdict_buttons: dict[str, QPushButton] = {}
        row = QHBoxLayout()
        for verdict, text in (
            ("valid", "Valid (V)"),
            ("wrong", "Wrong (W)"),
            ("unsure", "Unsure (U)"),
        ):
            button = QPushButton(text)
            button.clicked.connect(lambda _=False, v=verdict: self.mark_current(v))
            self.verdict_buttons[verdict] = button
            row.addWidget(button)
        self.undo_button = QPushButton("Undo mark (Ctrl+Z)")
        self.undo_button.clicked.connect(self.undo_last)
        row.addWidget(self.undo_button)
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.picture, 1)
        layout.addWidget(self.details)
        layout.addWidget(self.annotator_edit)
        layout.addWidget(self.note_edit)
        layout.addLayout(row)
        layout.addWidget(self.explore)
        return box

    # -- what to audit

    def set_runs_dir(self, runs_dir: Path | None) -> None:
        self.runs_dir = runs_dir
        self.refresh_runs()

    def set_suite(self, suite: Path | None) -> None:
        """The suite open in the form: its runs are the ones checked by default."""
        self.suite = suite
        self.refresh_runs(keep=False)

    def refresh_runs(self, *, keep: bool = True) -> None:
        """List the workspace's runs again. With ``keep``, a run listed before keeps the
        check the person left it with (runs added from elsewhere stay); a new run is
        checked when it was evaluated on the open suite."""
        before = self._run_checks() if keep else {}
        elsewhere = [p for p, checked in before.items() if checked and p.parent != self.runs_dir]
        self.runs_list.clear()
        for folder, suite in suite_runs(self.runs_dir):
            self._add_run(folder, suite, checked=before.get(folder, same_folder(suite, self.suite)))
        for folder in elsewhere:
            self._add_run(folder, None, checked=True)
        self._update_buttons()

    def _run_checks(self) -> dict[Path, bool]:
        return {
            Path(str(item.data(Qt.ItemDataRole.UserRole))): item.checkState()
            == Qt.CheckState.Checked
            for item in (self.runs_list.item(i) for i in range(self.runs_list.count()))
        }

    def _add_run(self, folder: Path, suite: Path | None, *, checked: bool) -> None:
        item = QListWidgetItem(f"{folder.name}  ({suite.name if suite else 'suite?'})")
        item.setData(Qt.ItemDataRole.UserRole, str(folder))
        item.setToolTip(str(folder))
        item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        self.runs_list.addItem(item)

    def checked_runs(self) -> list[Path]:
        return [path for path, checked in self._run_checks().items() if checked]

    @Slot()
    def _on_add_run_clicked(self) -> None:
        start = str(self.runs_dir or Path.home())
        path = QFileDialog.getExistingDirectory(self, "Add a run folder to the audit", start)
        if path:
            self._add_run(Path(path), None, checked=True)

    # -- finding the groups

    @Slot()
    def find_groups(self) -> None:
        runs = self.checked_runs()
        if not runs:
            self.problem_occurred.emit("Check at least one run to audit.")
            return
        if self.job is not None and self.job.running:
            return

        def work(report: Callable[[object], None], _stop: object) -> Audit:
            return collect(runs, progress=lambda done, total: report((done, total)))

        if self.job is not None:
            self.job.deleteLater()  # it has ended: free it before the next
        job = ProgressJob(work, self)
        job.progressed.connect(self._on_collect_progressed)
        job.finished.connect(self._on_audit_collected)
        job.failed.connect(self._on_collect_failed)
        job.ended.connect(self._update_buttons)
        self.job = job
        self.progress.setRange(0, len(runs))
        self.progress.setValue(0)
        self.progress.show()
        self.summary.setText(f"Reading {len(runs)} run(s)…")
        job.start()
        self._update_buttons()

    @Slot(object)
    def _on_collect_progressed(self, item: object) -> None:
        assert isinstance(item, tuple)
        done, total = item
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    @Slot(object)
    def _on_audit_collected(self, audit: Audit) -> None:
        self.progress.hide()
        self.show_audit(audit)

    @Slot(object)
    def _on_collect_failed(self, exc: Exception) -> None:
        self.progress.hide()
        self.summary.setText(f"Cannot audit these runs: {exc}")
        self.problem_occurred.emit(f"Cannot audit these runs: {exc}")

    def show_audit(self, audit: Audit) -> None:
        self.audit = audit
        self.groups = list(audit.groups)
        self.undo_stack.clear()
        self.table.setRowCount(len(self.groups))
        for row in range(len(self.groups)):
            self._fill_row(row)
        self.table.resizeColumnsToContents()
        steps = sum(len(g.steps) for g in self.groups)
        notes = f"; {len(audit.notes)} step(s) left out (see the tooltip)" if audit.notes else ""
        self.summary.setText(
            f"{steps} unmatched step(s) in {len(self.groups)} group(s), suite {audit.suite}"
            f"{notes}. Mark with V, W, U; move with J/K or the arrows."
        )
        self.summary.setToolTip("\n".join(audit.notes))
        if self.groups:
            self.table.selectRow(0)
            self.table.setFocus()
        else:
            self._show_group(None)
        self.groups_found.emit(len(self.groups))
        self._update_buttons()

    def _fill_row(self, row: int) -> None:
        g = self.groups[row]
        values = (
            g.id,
            g.task_id,
            g.node_id,
            mark_text(g.mark),
            str(len(g.steps)),
            ", ".join(g.agents),
            g.target.describe(),
        )
        for column, value in enumerate(values):
            item = QTableWidgetItem(value)
            item.setToolTip(value)
            self.table.setItem(row, column, item)

    # -- the chosen group

    def current_group(self) -> AuditGroup | None:
        row = self.table.currentRow()
        return self.groups[row] if 0 <= row < len(self.groups) else None

    @Slot()
    def _on_group_selected(self) -> None:
        self._show_group(self.current_group())

    def _show_group(self, group: AuditGroup | None) -> None:
        self.explore.set_group(self.audit.suite if self.audit else None, group)
        self._update_buttons()
        if group is None:
            self.picture.show_picture(None)
            self.details.setText("")
            return
        self.picture.show_picture(group_picture(group))
        steps = "".join(
            f"<li>{s.agent}, step {s.index + 1}: {s.action_text} <i>({s.rule})</i></li>"
            for s in group.steps[:12]
        )
        more = f"<li>… and {len(group.steps) - 12} more</li>" if len(group.steps) > 12 else ""
        note = f": {group.mark.note}" if group.mark and group.mark.note else ""
        self.details.setText(
            f"<b>{group.id}</b> — {group.target.describe()}<br>task <b>{group.task_id}</b>, "
            f"node <b>{group.node_id}</b>; {len(group.steps)} step(s) by "
            f"{', '.join(group.agents)}; <b>{mark_text(group.mark)}</b>{note}"
            f"<ul>{steps}{more}</ul>"
        )

    # -- marking

    @Slot(str)
    def mark_current(self, verdict: str) -> Mark | None:
        """Sign ``verdict`` on the chosen group as ``audit --mark`` does, then go on to the
        next group."""
        group, audit = self.current_group(), self.audit
        if group is None or audit is None:
            return None
        annotator = self.annotator_edit.text().strip()
        if not annotator:
            self.problem_occurred.emit(
                "Write your annotator id first: every audit mark is signed with it."
            )
            self.annotator_edit.setFocus()
            return None
        try:
            before = next(
                (m for m in load_marks(audit.suite / group.task_id) if m.group == group.id), None
            )
            mark = set_mark(
                audit.suite,
                group.task_id,
                group=group.id,
                verdict=verdict,
                annotator=annotator,
                node_members=group.node_members,
                target=group.target,
                note=self.note_edit.text().strip(),
            )
        except (EvaluatorError, GraphBuilderError, OSError) as exc:
            self.problem_occurred.emit(f"Cannot save the mark on {group.id}: {exc}")
            return None
        self.undo_stack.append(Undo(audit.suite, group.task_id, group.id, before))
        self.note_edit.clear()
        self._set_mark(group.id, mark)
        self.marked.emit(group.id, mark.verdict.value)
        self.table.move_by(1)
        self.table.setFocus()
        return mark

    @Slot()
    def undo_last(self) -> None:
        """Put the group's mark back as it was before the last mark made here."""
        if not self.undo_stack:
            return
        undo = self.undo_stack[-1]
        try:
            put_back(undo.suite, undo.task_id, undo.group, undo.previous)
        except (EvaluatorError, GraphBuilderError, OSError) as exc:
            self.problem_occurred.emit(f"Cannot undo the mark on {undo.group}: {exc}")
            return
        self.undo_stack.pop()
        self._set_mark(undo.group, undo.previous)
        row = next((i for i, g in enumerate(self.groups) if g.id == undo.group), -1)
        if row >= 0:
            self.table.selectRow(row)
        self.table.setFocus()

    def _set_mark(self, group_id: str, mark: Mark | None) -> None:
        for row, g in enumerate(self.groups):
            if g.id == group_id:
                self.groups[row] = replace(g, mark=mark)
                self._fill_row(row)
                if row == self.table.currentRow():
                    self._show_group(self.groups[row])
        self._update_buttons()

    def _update_buttons(self) -> None:
        busy = self.job is not None and self.job.running
        self.find_button.setEnabled(not busy and self.runs_list.count() > 0)
        has_group = self.current_group() is not None
        for button in self.verdict_buttons.values():
            button.setEnabled(has_group)
        self.undo_button.setEnabled(bool(self.undo_stack))

    def shutdown(self) -> None:
        if self.job is not None:
            self.job.wait(30.0)
        self.explore.shutdown()
