"""Dialogs of the graph editor: a new edge's action, and what a build did.

Both open window-modal without blocking (``open()``), and report through signals.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from itertools import count

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QImage
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from graph_builder.build import TaskBuildReport
from graph_builder.hierarchy import Hierarchy
from graph_builder.model import (
    NORMALIZED_SCREEN,
    ActionType,
    Bounds,
    Edge,
    MatchRule,
    Pin,
    PinKind,
    SwipeDirection,
    rescale_point,
)
from graph_builder.settings import SimilaritySettings
from recorder_app.qt.graph_editor.inspector import TextsEdit
from recorder_app.qt.graph_editor.overlay import RuleOverlay

EDGE_TYPES = (
    ActionType.TAP,
    ActionType.LONG_PRESS,
    ActionType.SWIPE,
    ActionType.TYPE,
    ActionType.BACK,
    ActionType.HOME,
    ActionType.WAIT,
)


def fresh_edge_id(taken: Sequence[str]) -> str:
    used = set(taken)
    return next(f"e{k}" for k in count(1) if f"e{k}" not in used)


class NewEdgeDialog(QDialog):
    """Choose the action of an edge drawn from ``source`` to ``target``.

    For a tap or long press, click the source screen where the finger goes: the point is
    kept, and the element under it gives the bounds when "inside the element" is ticked.
    """

    edge_chosen = Signal(object)  # the new Edge

    def __init__(
        self,
        source: str,
        target: str,
        taken_ids: Sequence[str],
        image: QImage | None,
        screen: tuple[int, int],
        hierarchy: Hierarchy | None,
        settings: SimilaritySettings,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("newEdgeDialog")
        self.setWindowTitle(f"New edge {source} → {target}")
        self.source, self.target = source, target
        self.edge_id = fresh_edge_id(taken_ids)
        self._screen = screen
        self._hierarchy = hierarchy
        self._point: tuple[float, float] | None = None
        self._bounds: Bounds | None = None

        self.type_combo = QComboBox()
        for kind in EDGE_TYPES:
            self.type_combo.addItem(kind.value.replace("_", " "), kind.value)
        self.overlay = RuleOverlay()
        self.overlay.picking = True
        self.overlay.setToolTip("Click where the finger goes")
        self.overlay.show_screen(image, screen, None, message="The source screen is not available")
        self.radius = QDoubleSpinBox()
        self.radius.setRange(0, 1000)
        self.radius.setDecimals(0)
        self.radius.setValue(settings.tap_radius)
        self.use_bounds = QCheckBox("Taps inside the element under the point match too")
        self.use_bounds.setChecked(True)
        self.direction = QComboBox()
        for direction in SwipeDirection:
            self.direction.addItem(direction.value, direction.value)
        self.texts = TextsEdit()
        self.texts.setMaximumHeight(70)
        self.texts.setPlaceholderText("one accepted text per line")
        self.threshold = QDoubleSpinBox()
        self.threshold.setRange(0, 100)
        self.threshold.setDecimals(0)
        self.threshold.setValue(settings.text_threshold)
        self.point_label = QLabel("Click the screen to place the point")
        self.problem_label = QLabel()
        self.problem_label.setObjectName("problemLabel")
        self.problem_label.setStyleSheet("color: #b91c1c")
        self.problem_label.setWordWrap(True)

        self.form = QFormLayout()
        self.form.addRow("Action", self.type_combo)
        self.form.addRow("Point", self.point_label)
        self.form.addRow("Tolerance radius", self.radius)
        self.form.addRow("", self.use_bounds)
        self.form.addRow("Swipe direction", self.direction)
        self.form.addRow("Accepted texts", self.texts)
        self.form.addRow("Text threshold", self.threshold)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        right = QVBoxLayout()
        right.addLayout(self.form)
        right.addWidget(self.problem_label)
        right.addStretch(1)
        right.addWidget(self.buttons)
        layout = QHBoxLayout(self)
        layout.addWidget(self.overlay, 1)
        layout.addLayout(right, 1)
        self.resize(720, 560)

        self.type_combo.currentIndexChanged.connect(self._on_field_changed)
        self.radius.valueChanged.connect(self._on_field_changed)
        self.use_bounds.toggled.connect(self._on_field_changed)
        self.direction.currentIndexChanged.connect(self._on_field_changed)
        self.texts.textChanged.connect(self._on_field_changed)
        self.threshold.valueChanged.connect(self._on_field_changed)
        self.overlay.point_picked.connect(self.set_point)
        self.buttons.accepted.connect(self._on_ok_clicked)
        self.buttons.rejected.connect(self.reject)
        self._on_field_changed()

    def set_type(self, kind: ActionType) -> None:
        self.type_combo.setCurrentIndex(self.type_combo.findData(kind.value))

    @Slot(float, float)
    def set_point(self, x: float, y: float) -> None:
        """The finger's point in ``[0,1000]`` space; looks up the element under it."""
        self._point = (round(x, 1), round(y, 1))
        self._bounds = None
        if self._hierarchy is not None:
            dx, dy = rescale_point(x, y, NORMALIZED_SCREEN, self._screen)
            element = self._hierarchy.element_at(dx, dy)
            if element is not None:
                self._bounds = element.ref().rescaled(self._screen, NORMALIZED_SCREEN).bounds
                self.point_label.setText(
                    f"({x:.0f}, {y:.0f}) on {element.label() or element.class_name}"
                )
        if self._bounds is None:
            self.point_label.setText(f"({x:.0f}, {y:.0f})")
        self._on_field_changed()

    def rule(self) -> MatchRule:
        kind = ActionType(self.type_combo.currentData())
        if kind.is_pointed:
            return MatchRule(
                kind,
                bounds=self._bounds if self.use_bounds.isChecked() else None,
                points=(self._point,) if self._point else (),
                radius=self.radius.value(),
            )
        if kind is ActionType.SWIPE:
            return MatchRule(kind, direction=SwipeDirection(self.direction.currentData()))
        if kind is ActionType.TYPE:
            return MatchRule(kind, texts=self.texts.texts(), text_threshold=self.threshold.value())
        return MatchRule(kind)

    def edge(self) -> Edge:
        return Edge(self.edge_id, self.source, self.target, self.rule())

    @Slot()
    def _on_field_changed(self) -> None:
        kind = ActionType(self.type_combo.currentData())
        pointed = kind.is_pointed
        for field, visible in (
            (self.point_label, pointed),
            (self.radius, pointed),
            (self.use_bounds, pointed),
            (self.direction, kind is ActionType.SWIPE),
            (self.texts, kind is ActionType.TYPE),
            (self.threshold, kind is ActionType.TYPE),
        ):
            self.form.setRowVisible(field, visible)
        self.overlay.picking = pointed
        rule = self.rule()
        self.overlay.set_rule(rule)
        problems = rule.problems()
        if pointed and not problems and self._point is None:
            problems = ["click the screen to place the point"]
        self.problem_label.setText("\n".join(problems))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not problems)

    @Slot()
    def _on_ok_clicked(self) -> None:
        self.edge_chosen.emit(self.edge())
        self.accept()


# --------------------------------------------------------------------------- build report


def describe_pin(pin: Pin) -> str:
    members = ", ".join(str(m) for m in pin.members)
    if pin.kind is PinKind.TOGETHER:
        return f"kept together: {members}"
    others = ", ".join(str(m) for m in pin.others)
    return f"kept apart: {members} from {others}"


def report_html(reports: Sequence[TaskBuildReport], pins: dict[str, tuple[Pin, ...]]) -> str:
    """The build reports as HTML; ``pins`` are each task's pins before the build."""
    parts: list[str] = []
    for report in reports:
        esc = html.escape
        # summary() ends with the outcome ("-> written" or "-> NOT written: why").
        parts.append(f"<h3>{esc(report.task_id)}</h3><p>{esc(report.summary())}</p>")
        if report.settings_origin:
            parts.append(f"<p>Built with {esc(report.settings_origin)}.</p>")
        edits = report.hand_edits
        if edits.dropped:
            parts.append(
                "<p style='color:#b91c1c'><b>Hand edits the rebuild did not keep</b> (edit "
                "them again if they still matter; Undo brings the previous graph back):</p>"
                + _list(list(edits.dropped))
            )
        if edits.kept:
            parts.append("<p><b>Hand edits kept</b></p>" + _list(list(edits.kept)))
        if report.cleaned:
            parts.append("<p><b>Cleaned up</b></p>" + _list(list(report.cleaned)))
        before = pins.get(report.task_id, ())
        stale = set(report.stale_pins)
        kept = [p for p in before if p not in stale]
        if before:
            parts.append(
                f"<p><b>Manual decisions applied in full:</b> {len(kept)} of {len(before)}</p>"
                + _list([describe_pin(p) for p in kept])
            )
        if report.stale_pins:
            parts.append(
                "<p style='color:#b45309'><b>Manual decisions that no longer apply in full</b> "
                "(some of their screens are not in the demonstrations used; the screens "
                "still there follow them, and they stay in graph.json to apply in full "
                "again if the screens come back):</p>"
                + _list([describe_pin(p) for p in report.stale_pins])
            )
        if report.constraints:
            parts.append(
                "<p><b>Merge decisions (constraints.json)</b></p>"
                + _list([o.describe() for o in report.constraints])
            )
        sections = (
            ("Skipped demonstrations", list(report.skipped)),
            ("Warnings", [w for w in report.warnings if not w.startswith("pin no longer")]),
            ("Problems", [str(p) for p in report.problems]),
        )
        for title, lines in sections:
            if lines:
                parts.append(f"<p><b>{title}</b></p>" + _list(lines))
        if report.decisions:
            parts.append(
                "<p><b>Where each screen went</b></p>"
                + _list([d.describe() for d in report.decisions])
            )
    return "".join(parts) or "<p>No task had demonstrations to build.</p>"


def _list(lines: Sequence[str]) -> str:
    return "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>"


class BuildReportDialog(QDialog):
    def __init__(
        self,
        reports: Sequence[TaskBuildReport],
        pins: dict[str, tuple[Pin, ...]],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("buildReportDialog")
        self.setWindowTitle("Build report")
        self.text = QTextBrowser()
        self.text.setHtml(report_html(reports, pins))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        self.resize(680, 520)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def plain_text(self) -> str:
        return self.text.toPlainText()
