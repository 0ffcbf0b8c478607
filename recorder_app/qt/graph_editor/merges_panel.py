"""The possible-merges panel: decide the pairs of screens the builder was least sure about.

The list (``graph_builder.review``) holds pairs kept apart that nearly merged and members
merged that nearly split, best first. The current pair's two screenshots and the
comparison's reason are shown below it. The comparisons run in a worker thread, with
progress. In the list, Enter or A accepts the pair (one
state: a must-link), R or Delete rejects it (two states: a cannot-link). The decision is
written at once to the task's constraints.json, signed with the annotator id, and the graph
follows it (accepting two nodes merges them, rejecting a merged member splits it out), all
in one undo step: undo puts the graph back and withdraws the decision from disk.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QColor, QKeyEvent, QUndoCommand
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from graph_builder.constraints import load_constraints, set_decision
from graph_builder.edits import Command, MergeNodes, SplitMembers
from graph_builder.errors import GraphBuilderError
from graph_builder.model import Constraint, LinkKind, MemberRef, TaskGraph, now_utc
from graph_builder.review import GraphReview, PairKind, PossibleMerge, review_graph
from graph_builder.settings import comparison_settings
from recorder_app.qt.graph_editor.document import GraphDocument
from recorder_app.qt.graph_editor.pictures import PictureCache
from recorder_app.qt.graph_editor.sources import ScreenSources
from recorder_app.qt.workers import BackgroundJob, run_in_background

log = logging.getLogger(__name__)

PAIR_ROLE = Qt.ItemDataRole.UserRole  # index into the review's possible merges
SHOT_WIDTH = 120
PAIRS_MIN_HEIGHT = 90
PAIRS_MIN_ROWS = 4  # the list always shows at least this many pairs
SHOT_MIN_HEIGHT = 48
ACCEPT_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_A)
REJECT_KEYS = (Qt.Key.Key_R, Qt.Key.Key_Delete, Qt.Key.Key_Backspace)


class DecisionCommand(QUndoCommand):
    """Writes (redo) or withdraws (undo) one decision in the task's constraints.json.

    Built after the first write succeeded, so its first redo does nothing; later ones
    write again. ``written`` is called after each write; a failing write is reported
    through ``failed`` (the undo stack cannot refuse a step).
    """

    def __init__(
        self,
        task_dir: Path,
        constraint: Constraint,
        previous: Constraint | None,
        written: Callable[[], None],
        failed: Callable[[str], None],
    ) -> None:
        super().__init__(f"{constraint.kind.words} {constraint.a} ~ {constraint.b}")
        self.task_dir, self.constraint, self.previous = task_dir, constraint, previous
        self._written_callback, self._failed = written, failed
        self._written = True

    def redo(self) -> None:
        if self._written:
            self._written = False
            return
        self._write(self.constraint)

    def undo(self) -> None:
        self._write(self.previous)

    def _write(self, constraint: Constraint | None) -> None:
        a, b = self.constraint.pair
        try:
            set_decision(self.task_dir, a, b, constraint)
        except (GraphBuilderError, OSError) as exc:
            log.error("cannot write the decision on %s ~ %s: %s", a, b, exc)
            self._failed(f"The decision on {a} ~ {b} could not be written: {exc}")
        self._written_callback()


class _PairList(QListWidget):
    """The pairs; takes its decision keys before the window's shortcuts (Delete)."""

    decided = Signal(bool)  # True: accept, False: reject

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            plain = event.modifiers() in (
                Qt.KeyboardModifier.NoModifier,
                Qt.KeyboardModifier.KeypadModifier,
            )
            if plain and event.key() in (*ACCEPT_KEYS, *REJECT_KEYS):
                event.accept()
                return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        if event.modifiers() in (
            Qt.KeyboardModifier.NoModifier,
            Qt.KeyboardModifier.KeypadModifier,
        ):
            if event.key() in ACCEPT_KEYS:
                self.decided.emit(True)
                return
            if event.key() in REJECT_KEYS:
                self.decided.emit(False)
                return
        super().keyPressEvent(event)


class _ProgressRelay(QObject):
    """Carries the worker's progress to the GUI thread (a queued signal)."""

    advanced = Signal(int, int)  # done, total


class PossibleMergesPanel(QWidget):
    message_posted = Signal(str)
    problem = Signal(str, str)  # title, text
    reviewed = Signal()  # a review finished (shown, or failed and said so)

    def __init__(
        self,
        document: GraphDocument,
        pictures: PictureCache,
        busy: Callable[[], bool],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("possibleMergesPanel")
        self.document, self.pictures, self._busy = document, pictures, busy
        self.review: GraphReview | None = None
        self._active = False  # listed once for this graph: keep the list current
        self.title = QLabel("Possible merges")
        self.title.setObjectName("possibleMergesTitle")
        self.find_button = QPushButton("Find possible merges")
        self.annotator_edit = QLineEdit()
        self.annotator_edit.setObjectName("mergesAnnotator")
        self.annotator_edit.setPlaceholderText("annotator id (signs each decision)")
        self.pairs = _PairList()
        self.pairs.setObjectName("possibleMerges")
        self.pairs.setWordWrap(True)
        self.pairs.setToolTip("Enter or A: one state (must-link) · R or Delete: two states")
        self.left_shot, self.right_shot = QLabel(), QLabel()
        for shot in (self.left_shot, self.right_shot):
            shot.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
            shot.setMinimumWidth(SHOT_WIDTH)
        self.reason = QLabel("")
        self.reason.setObjectName("possibleMergeReason")
        self.reason.setWordWrap(True)
        self.accept_button = QPushButton("One state (A)")
        self.reject_button = QPushButton("Two states (R)")
        self.checks = QLabel("")
        self.checks.setObjectName("graphChecks")
        self.checks.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setObjectName("possibleMergesProgress")
        self.progress.setTextVisible(True)
        self.progress.setFormat("comparing screens… %v/%m")
        self.progress.hide()
        self._layout()
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self._job: BackgroundJob | None = None
        self._again = False
        self._opened = 0  # counts graphs opened: a review of an earlier one is dropped
        self._sources: ScreenSources | None = None
        self._relay = _ProgressRelay(self)
        self._relay.advanced.connect(self._on_progress)
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(0)
        self._refresh_timer.timeout.connect(self.refresh)
        self.find_button.clicked.connect(self.refresh)
        self.pairs.currentRowChanged.connect(self._show_pair)
        self.pairs.decided.connect(self.decide_current)
        self.accept_button.clicked.connect(lambda: self.decide_current(True))
        self.reject_button.clicked.connect(lambda: self.decide_current(False))
        document.opened.connect(self._on_opened)
        document.graph_changed.connect(self._on_graph_changed)
        self._on_opened()

    def _layout(self) -> None:
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.find_button)
        shots = QHBoxLayout()
        shots.addWidget(self.left_shot)
        shots.addWidget(self.right_shot)
        buttons = QHBoxLayout()
        buttons.addWidget(self.accept_button)
        buttons.addWidget(self.reject_button)
        # Room for a few pairs whatever the height: the pictures of the current pair
        # scroll below, the list and the decision buttons do not.
        line = self.pairs.fontMetrics().lineSpacing()
        self.pairs.setMinimumHeight(max(PAIRS_MIN_HEIGHT, PAIRS_MIN_ROWS * (line + 8)))
        details = QWidget()
        inner = QVBoxLayout(details)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addLayout(shots)
        inner.addWidget(self.reason)
        inner.addWidget(self.checks)
        inner.addStretch(1)
        scroll = QScrollArea()
        scroll.setObjectName("possibleMergeDetails")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(details)
        scroll.setMinimumHeight(SHOT_MIN_HEIGHT)
        split = QSplitter(Qt.Orientation.Vertical)
        split.setChildrenCollapsible(False)
        list_box = QWidget()
        list_layout = QVBoxLayout(list_box)
        list_layout.setContentsMargins(0, 0, 0, 0)
        list_layout.addWidget(self.pairs, 1)
        list_layout.addLayout(buttons)
        split.addWidget(list_box)
        split.addWidget(scroll)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setSizes([200, 300])  # shares, until the user drags the handle
        self.splitter = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.progress)
        layout.addWidget(self.annotator_edit)
        layout.addWidget(split, 1)

    # -- listing

    def _on_opened(self) -> None:
        self._opened += 1
        self._active = False
        self._again = False
        self.review = None
        doc = self.document
        # The worker reads screens through its own sources, so no screen object is
        # shared with the GUI thread; kept while the graph is open (features load once).
        self._sources = (
            ScreenSources(doc.sources.task_dir, doc.sources.demos_root, doc.sources.task_id)
            if doc.sources is not None
            else None
        )
        self.pairs.clear()
        self._show_pair(-1)
        self.checks.setText("")
        self.find_button.setEnabled(self.document.graph is not None)

    def _on_graph_changed(self) -> None:
        if self._active and self.document.graph is not None:
            self._refresh_timer.start()  # once per burst of changes (an undo macro)

    @property
    def reviewing(self) -> bool:
        """A review is being computed in the background."""
        return self._job is not None

    def refresh(self) -> None:
        """(Re)compute the possible merges of the graph as it is now, in a worker thread.

        Comparing screens takes a while on large tasks; the list keeps the last result
        until the new one arrives, and a graph changed meanwhile is reviewed again.
        """
        graph, task_dir = self.document.graph, self.document.task_dir
        if graph is None or self._sources is None or task_dir is None:
            return
        if self._job is not None:
            self._again = True
            return
        try:
            constraints = load_constraints(task_dir, graph.task_id).constraints
        except GraphBuilderError as exc:
            self.problem.emit("Cannot read the merge decisions", str(exc))
            return
        sources, relay, opened = self._sources, self._relay, self._opened

        def review() -> GraphReview:
            return review_graph(
                graph,
                sources.member_state,
                comparison_settings(graph),
                constraints=constraints,
                progress=relay.advanced.emit,
            )

        self._again = False
        self.progress.setRange(0, 0)
        self.progress.show()
        self.find_button.setEnabled(False)
        self._job = run_in_background(
            review,
            on_done=lambda result: self._on_reviewed(opened, graph, result),
            on_error=self._on_review_failed,
            pool=self.pool,
        )

    def _on_progress(self, done: int, total: int) -> None:
        if self._job is not None:
            self.progress.setRange(0, total)
            self.progress.setValue(done)

    def _job_ended(self) -> None:
        self._job = None
        self.progress.hide()
        self.find_button.setEnabled(self.document.graph is not None)

    def _on_review_failed(self, exc: Exception) -> None:
        self._job_ended()
        self.problem.emit("Cannot look for possible merges", str(exc))
        self.reviewed.emit()

    def _on_reviewed(self, opened: int, graph: TaskGraph, review: GraphReview) -> None:
        self._job_ended()
        if opened != self._opened:  # another graph was opened meanwhile: not asked for
            self.reviewed.emit()
            return
        if graph is not self.document.graph or self._again:  # edited meanwhile
            if self.document.graph is not None and self._sources is not None:
                self.refresh()
            return
        self._show_review(review)
        self.reviewed.emit()

    def _show_review(self, review: GraphReview) -> None:
        current = self._current()
        self.review = review
        self._active = True
        self.pairs.clear()
        for i, pair in enumerate(review.possible_merges):
            item = QListWidgetItem(pair.title)
            item.setData(PAIR_ROLE, i)
            item.setToolTip(pair.describe())
            if pair.kind is PairKind.MERGED:
                item.setForeground(QColor("#b45309"))
            self.pairs.addItem(item)
        if not review.possible_merges:
            item = QListWidgetItem("No pair is near the decision line.")
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            self.pairs.addItem(item)
        self.title.setText(f"Possible merges ({len(review.possible_merges)})")
        checks = [m.describe() for m in review.mixed] + [s.describe() for s in review.split]
        if review.unreadable:
            checks.append(
                f"{len(review.unreadable)} screens could not be compared (their "
                "demonstrations are not in this workspace, or their files are damaged)"
            )
        self.checks.setText("\n".join(checks))
        keep = next(
            (i for i, p in enumerate(review.possible_merges) if current and p.pair == current),
            0,
        )
        self.pairs.setCurrentRow(keep if review.possible_merges else -1)
        self._show_pair(self.pairs.currentRow())

    def pair_titles(self) -> list[str]:
        review = self.review
        return [p.title for p in review.possible_merges] if review is not None else []

    def _current(self) -> tuple[MemberRef, MemberRef] | None:
        pair = self.current_pair()
        return pair.pair if pair is not None else None

    def current_pair(self) -> PossibleMerge | None:
        item = self.pairs.currentItem()
        if item is None or self.review is None or item.data(PAIR_ROLE) is None:
            return None
        return self.review.possible_merges[int(item.data(PAIR_ROLE))]

    def _show_pair(self, _row: int) -> None:
        pair = self.current_pair()
        for shot, path in zip(
            (self.left_shot, self.right_shot),
            pair.screenshots if pair else (None, None),
            strict=True,
        ):
            picture = self.pictures.thumbnail(path, SHOT_WIDTH)
            if picture is None:
                shot.clear()
                shot.setText("" if pair is None else "(no screenshot)")
                shot.setMinimumHeight(0)
            else:
                shot.setPixmap(picture)
                # held at full height, so the pictures scroll rather than squeeze
                shot.setMinimumHeight(picture.height())
        self.reason.setText(pair.describe() if pair is not None else "")
        for button in (self.accept_button, self.reject_button):
            button.setEnabled(pair is not None)

    # -- deciding

    def decide_current(self, accept: bool) -> bool:
        """Accept (must-link) or reject (cannot-link) the current pair; False if nothing
        was decided (the reason is posted)."""
        pair, task_dir = self.current_pair(), self.document.task_dir
        if pair is None or task_dir is None or self.document.graph is None:
            return False
        if self._busy():
            self.message_posted.emit("Wait for the build to finish before deciding.")
            return False
        annotator = self.annotator_edit.text().strip()
        if not annotator:
            self.message_posted.emit("Enter your annotator id first: it signs each decision.")
            self.annotator_edit.setFocus()
            return False
        kind = LinkKind.MUST_LINK if accept else LinkKind.CANNOT_LINK
        constraint = Constraint(kind, pair.a, pair.b, annotator, now_utc(), pair.verdict.reason)
        edit = _edit_for(self.document.graph, pair, accept)
        try:
            if edit is not None:
                edit.apply(self.document.graph)  # raises GraphEditError before anything changes
            previous = set_decision(task_dir, pair.a, pair.b, constraint)
        except (GraphBuilderError, OSError) as exc:
            self.problem.emit("Cannot record the decision", str(exc))
            return False
        stack = self.document.undo_stack
        stack.beginMacro(f"{kind.words} {pair.a} ~ {pair.b}")
        try:
            if edit is not None:
                self.document.apply(edit)
            stack.push(
                DecisionCommand(
                    task_dir,
                    constraint,
                    previous,
                    self._refresh_timer.start,
                    lambda text: self.problem.emit("Cannot write the decision", text),
                )
            )
        finally:
            stack.endMacro()
        self._refresh_timer.start()
        self.message_posted.emit(f"Recorded {constraint.describe()}")
        self.pairs.setFocus()
        return True


def _edit_for(graph: TaskGraph, pair: PossibleMerge, accept: bool) -> Command | None:
    """What the graph does at once (the next rebuild does the same from the decision)."""
    if accept and pair.kind is PairKind.KEPT_APART:
        return MergeNodes(pair.node_a, (pair.node_b,))
    if not accept and pair.kind is PairKind.MERGED:
        first = graph.node(pair.node_a).members[:1]
        leaving = pair.a if first == (pair.b,) else pair.b  # the node keeps its picture
        return SplitMembers(pair.node_a, (leaving,))
    return None
