"""Two runs side by side: SR by category, the paired test, and the tasks that flipped.

Every number comes from the evaluator: ``report.summarize(a, compare=b)`` (breakdowns,
McNemar exact p-value, paired-bootstrap CI) and ``metrics.flipped_tasks``. The work runs
on a pool thread; ``comparison_ready`` fires when the numbers are on screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from evaluator.metrics import flipped_tasks
from evaluator.report import write_report
from evaluator.run_store import RunStore
from evaluator.run_summary import RunSummary, summarize
from recorder_app.qt.eval_panel.settings import run_folders
from recorder_app.qt.report_path import ReportPathRow
from recorder_app.qt.workers import run_in_background


@dataclass(frozen=True, slots=True)
class RunComparison:
    run_a: Path
    run_b: Path
    summary: RunSummary  # report.summarize(run_a, compare=run_b)
    flips: dict[str, bool]  # task -> True when only A succeeded


def compare(run_a: Path, run_b: Path) -> RunComparison:
    """Everything the view shows (blocking: call it off the GUI thread)."""
    summary = summarize(run_a, compare=run_b)
    a, b = RunStore.open(run_a), RunStore.open(run_b)
    flips = flipped_tasks(a.results(), b.results(), a.overrides(), b.overrides())
    return RunComparison(run_a, run_b, summary, flips)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def run_label(run: Path) -> str:
    """``name — agent, variant`` from run.json (just the name when unreadable)."""
    try:
        info = RunStore.open(run).info()
    except Exception:  # noqa: BLE001 - a damaged run still gets listed by name
        return run.name
    agent = info.get("agent", {}).get("name", "?")
    model = info.get("model")
    variant = info.get("config", {}).get("variant", "")
    details = ", ".join(p for p in (agent + (f"/{model}" if model else ""), variant) if p)
    return f"{run.name} — {details}"


class CompareView(QWidget):
    comparison_ready = Signal(object)  # RunComparison
    problem_occurred = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareView")
        self._runs_dir: Path | None = None
        self.comparison: RunComparison | None = None
        self.report_path: Path | None = None
        self.run_a = QComboBox()
        self.run_a.setObjectName("runACombo")
        self.run_b = QComboBox()
        self.run_b.setObjectName("runBCombo")
        grid = QGridLayout()
        for row, (name, combo) in enumerate((("Run A", self.run_a), ("Run B", self.run_b))):
            browse = QToolButton()
            browse.setText("…")
            browse.setToolTip("Choose a run folder")
            browse.clicked.connect(lambda _=False, c=combo: self._on_browse_clicked(c))
            grid.addWidget(QLabel(name), row, 0)
            grid.addWidget(combo, row, 1)
            grid.addWidget(browse, row, 2)
        grid.setColumnStretch(1, 1)
        self.compare_button = QPushButton("Compare")
        self.compare_button.setObjectName("compareButton")
        self.compare_button.clicked.connect(self.start_comparison)
        self.export_button = QPushButton("Export comparison report")
        self.export_button.clicked.connect(self._on_export_clicked)
        self.report_row = ReportPathRow()
        self.open_button = self.report_row.open_button
        buttons = QHBoxLayout()
        buttons.addWidget(self.compare_button)
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)

        self.headline = QLabel("Choose two runs of the same tasks and press Compare.")
        self.headline.setObjectName("compareHeadline")
        self.headline.setWordWrap(True)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.stats_table = self._table(["", "Run A", "Run B"], "statsTable")
        self.category_table = self._table(
            ["Dimension", "Group", "SR A (n)", "SR B"], "categoryTable"
        )
        self.flip_table = self._table(["Task", "Run A", "Run B"], "flipTable")
        categories = QGroupBox("Success rate by category")
        QVBoxLayout(categories).addWidget(self.category_table)
        flips = QGroupBox("Tasks that flipped")
        QVBoxLayout(flips).addWidget(self.flip_table)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(categories)
        splitter.addWidget(flips)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)

        layout = QVBoxLayout(self)
        layout.addLayout(grid)
        layout.addLayout(buttons)
        layout.addWidget(self.report_row)
        layout.addWidget(self.headline)
        layout.addWidget(self.stats_table)
        layout.addWidget(splitter, 1)

    @staticmethod
    def _table(headers: list[str], name: str) -> QTableWidget:
        table = QTableWidget(0, len(headers))
        table.setObjectName(name)
        table.setHorizontalHeaderLabels(headers)
        table.verticalHeader().setVisible(False)
        table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        table.horizontalHeader().setStretchLastSection(True)
        table.setAlternatingRowColors(True)
        return table

    # -- runs

    def set_runs_dir(self, runs_dir: Path | None) -> None:
        self._runs_dir = runs_dir
        self.refresh_runs()

    def refresh_runs(self) -> None:
        """List the workspace's runs, newest first; A and B are two different runs whenever
        two exist (the newest two, until the user picks others)."""
        runs = [str(run) for run in run_folders(self._runs_dir)]
        chosen: list[str] = []
        for combo in (self.run_a, self.run_b):
            keep = combo.currentData()
            combo.clear()
            for run in runs:
                combo.addItem(run_label(Path(run)), run)
            if keep and keep not in runs and Path(keep).is_dir():
                combo.addItem(run_label(Path(keep)), keep)  # browsed to, outside runs/
            options = [keep] if keep and combo.findData(keep) >= 0 else []
            options += runs
            pick = next((r for r in options if r not in chosen), options[0] if options else None)
            if pick is not None:
                combo.setCurrentIndex(combo.findData(pick))
                chosen.append(pick)

    def set_runs(self, run_a: Path, run_b: Path) -> None:
        for combo, run in ((self.run_a, run_a), (self.run_b, run_b)):
            if combo.findData(str(run)) < 0:
                combo.addItem(run_label(run), str(run))
            combo.setCurrentIndex(combo.findData(str(run)))

    def _selected(self) -> tuple[Path, Path] | None:
        a, b = self.run_a.currentData(), self.run_b.currentData()
        if not a or not b:
            self.problem_occurred.emit("choose two run folders to compare")
            return None
        if a == b:
            self.problem_occurred.emit("choose two different runs")
            return None
        return Path(a), Path(b)

    # -- comparing

    @Slot()
    def start_comparison(self) -> None:
        runs = self._selected()
        if runs is None:
            return
        self.compare_button.setEnabled(False)
        self.headline.setText("Comparing…")
        run_in_background(
            lambda: compare(*runs), on_done=self._on_compared, on_error=self._on_failed
        )

    def _on_compared(self, comparison: RunComparison) -> None:
        self.compare_button.setEnabled(True)
        self.comparison = comparison
        self._show(comparison)
        self.comparison_ready.emit(comparison)

    def _on_failed(self, exc: Exception) -> None:
        self.compare_button.setEnabled(True)
        self.export_button.setEnabled(True)
        self.headline.setText("The comparison failed.")
        self.problem_occurred.emit(str(exc))

    def _show(self, comparison: RunComparison) -> None:
        summary = comparison.summary
        paired = summary.comparison
        if paired is None:  # compare() always asks for one
            raise ValueError("the summary holds no comparison of two runs")
        ci = paired["ci"]
        ci_text = (
            f"{_pct(ci['low'])} to {_pct(ci['high'])} ({100 * ci['level']:.0f}% paired bootstrap)"
            if ci
            else "n/a"
        )
        self.headline.setText(
            f"<b>{paired['pairs']}</b> tasks evaluated by both. "
            f"SR A − SR B = <b>{_pct(paired['sr_difference'])}</b>, CI {ci_text}. "
            f"McNemar exact p = <b>{paired['mcnemar_p']:.4g}</b> "
            f"({paired['only_a']} only A, {paired['only_b']} only B)."
        )
        rows = [
            ("Run", comparison.run_a.name, comparison.run_b.name),
            ("Agent", str(summary.agent), str(paired["other_agent"])),
            ("Instruction", str(summary.variant), str(paired["other_variant"])),
            ("SR on paired tasks", _pct(paired["sr_a"]), _pct(paired["sr_b"])),
        ]
        self._fill(self.stats_table, rows)
        self.stats_table.setMaximumHeight(
            self.stats_table.horizontalHeader().height()
            + sum(self.stats_table.rowHeight(i) for i in range(len(rows)))
            + 4
        )
        other = paired["other_breakdowns"]
        category_rows = []
        for dimension, groups in summary.breakdowns.items():
            for group, metrics in groups.items():
                sr_b = other.get(dimension, {}).get(group)
                category_rows.append(
                    (dimension, group, f"{_pct(metrics['sr'])} ({metrics['n']})", _pct(sr_b))
                )
        self._fill(self.category_table, category_rows)
        self._fill(
            self.flip_table,
            [
                (task, "success" if a_won else "failure", "failure" if a_won else "success")
                for task, a_won in comparison.flips.items()
            ],
        )

    @staticmethod
    def _fill(table: QTableWidget, rows: Sequence[Sequence[str]]) -> None:
        table.setSortingEnabled(False)
        table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                table.setItem(r, c, QTableWidgetItem(text))

    # -- report

    @Slot()
    def _on_export_clicked(self) -> None:
        runs = self._selected()
        if runs is None:
            return
        self.export_button.setEnabled(False)
        run_in_background(
            lambda: write_report(runs[0], compare=runs[1]),
            on_done=self._on_report_written,
            on_error=self._on_failed,
        )

    def _on_report_written(self, paths: tuple[Path, Path]) -> None:
        self.export_button.setEnabled(True)
        self.report_path = paths[1]
        self.report_row.set_path(paths[1], what="Comparison report (report.md beside it)")

    def _on_browse_clicked(self, combo: QComboBox) -> None:
        start = str(self._runs_dir or Path.home())
        path = QFileDialog.getExistingDirectory(self, "Choose a run folder", start)
        if path:
            if combo.findData(path) < 0:
                combo.addItem(run_label(Path(path)), path)
            combo.setCurrentIndex(combo.findData(path))
