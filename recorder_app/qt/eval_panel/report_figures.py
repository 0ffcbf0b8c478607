"""The figures of a run's report inside the studio: the SVG files the report wrote (the
drawing of ``elderbench figures``), one under the other, each at its own size."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtSvgWidgets import QSvgWidget
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget

from evaluator.report import report_figures
from recorder_app.qt.figure_widget import figure_widget


class ReportFigures(QScrollArea):
    """``show_run(folder)`` shows its report's figures; ``figures`` are the shown ones."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reportFigures")
        self.setWidgetResizable(True)
        self.figures: list[QSvgWidget] = []
        self._message("Open a run with a report to see its figures.")

    def _message(self, text: str) -> None:
        label = QLabel(text)
        label.setWordWrap(True)
        self.figures = []
        self.setWidget(label)

    def show_run(self, run_dir: Path | None) -> None:
        found = report_figures(run_dir) if run_dir is not None else []
        if not found:
            self._message(
                "This run's report has no figures yet: export the report."
                if run_dir is not None
                else "Open a run with a report to see its figures."
            )
            return
        body = QWidget()
        layout = QVBoxLayout(body)
        shown = []
        for title, path in found:
            try:
                data = path.read_bytes()
            except OSError as exc:
                layout.addWidget(QLabel(f"{path.name}: cannot read it ({exc.strerror})"))
                continue
            svg = figure_widget(data, title, self.logicalDpiX())
            svg.setObjectName(path.name)
            layout.addWidget(svg)
            shown.append(svg)
        layout.addStretch(1)
        self.setWidget(body)
        self.figures = shown
