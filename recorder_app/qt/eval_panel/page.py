"""The Evaluate tab: configure and run an evaluation, follow it live, read the results,
inspect traces (verdicts, failure tags), compare runs and export the report; audit what
the graphs did not credit (and explore a branch) and check the suite's graphs for drift
on a phone.

The page wraps the evaluator: ``runner`` runs (in a QThread, see run_worker), ``run_store``
keeps results, verdicts and tags, ``metrics`` gives the summary line, ``report`` writes
report.md/html. Settings are saved per workspace (settings.py).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt, Signal, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from devices.hierarchy import DEFAULT_HIERARCHY
from evaluator.errors import EvaluatorError
from evaluator.language.failures import failure_analysis
from evaluator.metrics import group_metrics, judge_agreement, judge_disagreements
from evaluator.prices import PriceTable, load_prices
from evaluator.report import write_report
from evaluator.run_store import RunStore
from evaluator.runner import (
    RunConfig,
    RunFinished,
    RunStarted,
    TaskFinished,
    WorkerStopped,
    resume_config,
)
from graph_builder.errors import GraphBuilderError
from recorder_app.connection import DeviceConnection
from recorder_app.errors import SettingsError
from recorder_app.qt.device_owner import DeviceOwner
from recorder_app.qt.dialogs import StoppedRunsDialog, show_problem
from recorder_app.qt.eval_panel.audit_view import AuditView
from recorder_app.qt.eval_panel.compare_view import CompareView, run_label
from recorder_app.qt.eval_panel.drift_view import DriftView
from recorder_app.qt.eval_panel.explore_box import ExploreBox
from recorder_app.qt.eval_panel.live_view import LiveView
from recorder_app.qt.eval_panel.report_figures import ReportFigures
from recorder_app.qt.eval_panel.results_table import (
    REVIEW,
    ResultsFilterProxy,
    ResultsModel,
    ResultsTableView,
)
from recorder_app.qt.eval_panel.run_config_form import RunConfigForm
from recorder_app.qt.eval_panel.run_worker import EVALUATE_TAB, EvaluationRun
from recorder_app.qt.eval_panel.settings import (
    load_settings,
    save_settings,
    stopped_runs,
)
from recorder_app.qt.eval_panel.trace_viewer import TraceViewer
from recorder_app.qt.report_path import ReportPathRow
from recorder_app.qt.steady import fit_widest, scrolled_lines
from recorder_app.qt.workers import run_in_background
from recorder_app.recording.workspace import Workspace

log = logging.getLogger(__name__)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


class EvaluationPage(QWidget):
    """The "Evaluate" tab. ``current_run`` is the run folder the results show."""

    run_state_changed = Signal(str)  # "running", "paused", "finished", "stopped", "failed"
    report_written = Signal(str)  # report.html

    def __init__(
        self, connection: DeviceConnection | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("evaluationPage")
        self.connection = connection
        # The Record tab's hierarchy tool, recorded in each new run's configuration.
        self.hierarchy = connection.hierarchy if connection is not None else DEFAULT_HIERARCHY
        self.workspace: Workspace | None = None
        self.current_run: Path | None = None
        self.run: EvaluationRun | None = None
        self.last_problem: tuple[str, str] | None = None
        self.owner = DeviceOwner(EVALUATE_TAB, self)  # runs wait for phones held elsewhere
        self.owner.message_posted.connect(lambda text, _ms: self.state_label.setText(text))
        self.owner.problem_occurred.connect(self.report_problem)
        self.report_path: Path | None = None
        self._prices: PriceTable | None = None
        self._outcomes: dict[str, int] = {}  # result status -> tasks, in the running run
        self.resume_dialog: StoppedRunsDialog | None = None

        self.form = RunConfigForm(connection.list_devices if connection else None)
        self.form.problem_occurred.connect(lambda text: self.report_problem("Devices", text))
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.form)
        scroll.setMinimumWidth(340)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(scroll, 1)
        left_layout.addWidget(self._build_controls())

        self.live_view = LiveView()
        self.results_tab = self._build_results_tab()
        self.trace_viewer = TraceViewer()
        self.trace_viewer.verdict_changed.connect(self._on_run_annotated)
        self.trace_viewer.tags_changed.connect(self._on_run_annotated)
        self.trace_viewer.category_added.connect(self._on_category_added)
        self.trace_viewer.problem_occurred.connect(lambda t: self.report_problem("Trace", t))
        self.compare_view = CompareView()
        self.compare_view.problem_occurred.connect(lambda t: self.report_problem("Compare", t))
        self._build_audit_and_drift(connection or DeviceConnection())
        self.tabs = QTabWidget()
        self.tabs.setObjectName("evalTabs")
        self.tabs.addTab(self.live_view, "Live")
        self.tabs.addTab(self.results_tab, "Results")
        self.tabs.addTab(self.trace_viewer, "Trace")
        self.tabs.addTab(self.compare_view, "Compare")
        self.tabs.addTab(self.audit_view, "Audit")
        self.tabs.addTab(self.drift_view, "Drift")
        self.figures_view = ReportFigures()
        self.tabs.addTab(self.figures_view, "Figures")

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([380, 900])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.splitter)
        self.menus = [self._build_menu()]
        self._update_buttons()

    # -- construction

    def _build_audit_and_drift(self, devices: DeviceConnection) -> None:
        explore = ExploreBox(
            devices.open_device,
            devices.list_devices,
            lambda: self.audit_view.annotator_edit.text().strip(),
        )
        explore.problem_occurred.connect(lambda t: self.report_problem("Explore", t))
        self.audit_view = AuditView(explore)
        self.audit_view.problem_occurred.connect(lambda t: self.report_problem("Audit", t))
        self.drift_view = DriftView(devices.open_device, devices.list_devices)
        self.drift_view.problem_occurred.connect(lambda t: self.report_problem("Drift", t))
        self.form.suite_combo.currentIndexChanged.connect(self._on_form_suite_changed)

    @Slot()
    def _on_form_suite_changed(self) -> None:
        """The Audit and Drift views work on the suite chosen in the form."""
        data = self.form.suite_combo.currentData()
        suite = Path(str(data)) if data else None
        self.audit_view.set_suite(suite)
        self.drift_view.set_suite(suite)

    def show_devices(self, devices: list) -> None:
        """The phones the studio sees, for the run form and the views that drive a phone."""
        self.form.show_devices(devices)
        self.audit_view.explore.picker.show_devices(devices)
        self.drift_view.picker.show_devices(devices)

    def _build_controls(self) -> QWidget:
        box = QWidget()
        self.start_button = QPushButton("Start run")
        self.start_button.setObjectName("startButton")
        self.start_button.clicked.connect(self.start_run)
        self.pause_button = QPushButton("Pause")
        self.pause_button.setCheckable(True)
        self.pause_button.toggled.connect(self._on_pause_toggled)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop after the current step; the run can be resumed")
        self.stop_button.clicked.connect(self.stop_run)
        self.resume_button = QPushButton("Resume run…")
        self.resume_button.setToolTip("Continue an interrupted run: finished tasks are skipped")
        self.resume_button.clicked.connect(self._on_resume_clicked)
        self.open_button = QPushButton("Open run…")
        self.open_button.clicked.connect(self._on_open_clicked)
        self.progress = QProgressBar()
        self.progress.setObjectName("runProgress")
        self.progress.setFormat("%v / %m tasks")
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setTextVisible(False)  # no count until a run has counted its tasks
        self.state_label = QLabel("No run")
        self.state_label.setObjectName("runState")
        self.state_label.setWordWrap(True)
        # Pause and Continue take the same room, and the state text below has fixed
        # lines: the run controls stay put whatever the run reports.
        fit_widest(self.pause_button, ("Pause", "Continue"))
        row1 = QHBoxLayout()
        row1.addWidget(self.start_button, 2)
        row1.addWidget(self.pause_button, 1)
        row1.addWidget(self.stop_button, 1)
        row2 = QHBoxLayout()
        row2.addWidget(self.resume_button)
        row2.addWidget(self.open_button)
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(row1)
        layout.addLayout(row2)
        layout.addWidget(self.progress)
        layout.addWidget(scrolled_lines(self.state_label, 3))
        return box

    def _build_menu(self) -> QMenu:
        """The main window's "Evaluate" menu: the same commands as the buttons."""
        menu = QMenu("E&valuate", self)
        self.start_action = menu.addAction("Start run", self.start_run)
        self.pause_action = menu.addAction("Pause", self.pause_button.toggle)
        self.stop_action = menu.addAction("Stop", self.stop_run)
        menu.addSeparator()
        self.resume_action = menu.addAction("Resume run…", self._on_resume_clicked)
        self.open_action = menu.addAction("Open run…", self._on_open_clicked)
        menu.addSeparator()
        self.export_action = menu.addAction("Export report", self.export_report)
        self.open_report_action = menu.addAction("Open report", self._on_open_report_clicked)
        menu.addAction("Compare runs", lambda: self.tabs.setCurrentWidget(self.compare_view))
        return menu

    def _build_results_tab(self) -> QWidget:
        tab = QWidget()
        self.run_label = QLabel("No run open")
        self.run_label.setObjectName("runLabel")
        self.status_filter = QComboBox()
        self.status_filter.setObjectName("statusFilter")
        for text, value in (
            ("all results", ""),
            ("success", "success"),
            ("failure", "failure"),
            ("error", "error"),
            ("judge ≠ human (review)", REVIEW),
        ):
            self.status_filter.addItem(text, value)
        self.search_edit = QLineEdit()
        self.search_edit.setObjectName("resultsSearch")
        self.search_edit.setPlaceholderText("Filter: task, app, reason, tag…")
        self.search_edit.setClearButtonEnabled(True)
        self.results_model = ResultsModel(self)
        self.results_proxy = ResultsFilterProxy(self)
        self.results_proxy.setSourceModel(self.results_model)
        self.results_table = ResultsTableView()
        self.results_table.setModel(self.results_proxy)
        self.results_table.doubleClicked.connect(self._on_result_double_clicked)
        self.status_filter.currentIndexChanged.connect(
            lambda: self.results_proxy.set_status_filter(self.status_filter.currentData())
        )
        self.search_edit.textChanged.connect(self.results_proxy.setFilterFixedString)
        self.summary_label = QLabel("")
        self.summary_label.setObjectName("resultsSummary")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.export_button = QPushButton("Export report")
        self.export_button.setToolTip("Write report.md and report.html into the run folder")
        self.export_button.clicked.connect(self.export_report)
        self.report_row = ReportPathRow()
        self.open_report_button = self.report_row.open_button
        top = QHBoxLayout()
        top.addWidget(self.run_label, 1)
        top.addWidget(self.status_filter)
        top.addWidget(self.search_edit, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.summary_label, 1)
        bottom.addWidget(self.export_button)
        layout = QVBoxLayout(tab)
        layout.addLayout(top)
        layout.addWidget(self.results_table, 1)
        layout.addLayout(bottom)
        layout.addWidget(self.report_row)
        return tab

    # -- workspace and settings

    def set_workspace(self, workspace: Workspace) -> None:
        if self.workspace is not None:
            self.save_settings()
        self.workspace = workspace
        self.audit_view.runs_dir = workspace.runs_dir
        self.audit_view.explore.workspace_demos = workspace.demos_dir
        self.trace_viewer.workspace_demos = workspace.demos_dir
        self.form.set_workspace(workspace.suites_dir, workspace.runs_dir)
        settings = load_settings(workspace.root)
        self.form.apply_settings(settings)
        self._on_form_suite_changed()
        self.trace_viewer.set_custom_categories(settings.custom_categories)
        self.compare_view.set_runs_dir(workspace.runs_dir)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.workspace is not None and not (self.run is not None and self.run.running):
            self.form.refresh_suites()
            self.compare_view.refresh_runs()
            self.audit_view.refresh_runs()

    def save_settings(self) -> None:
        if self.workspace is None:
            return
        try:
            save_settings(self.workspace.root, self.form.settings())
        except (OSError, GraphBuilderError) as exc:
            log.warning("cannot save the evaluation settings: %s", exc)

    def can_close(self) -> bool:
        """Asked before the studio closes while a run is going: stop it, or stay open."""
        if self.run is None or not self.run.running:
            return True
        answer = QMessageBox.question(
            self,
            "An evaluation is running",
            "Stop the run and quit? Finished tasks are saved; Resume run… continues it later.",
        )
        return answer == QMessageBox.StandardButton.Yes

    def shutdown(self) -> None:
        """Closing the studio: stop a run (it stays resumable) and keep the settings."""
        if self.run is not None and self.run.running:
            self.run.wait()
        self.audit_view.shutdown()
        self.drift_view.shutdown()
        self.save_settings()

    # -- running

    @Slot()
    def start_run(self) -> None:
        try:
            config = self.form.build_config()
        except (SettingsError, EvaluatorError) as exc:
            self.report_problem("Cannot start the run", str(exc))
            return
        self.save_settings()
        self._launch(replace(config, hierarchy=self.hierarchy), self.form.trials_spin.value())

    def resume_run(self, run_dir: str | Path) -> None:
        """Continue an interrupted run in ``run_dir`` with the configuration it was made with."""
        try:
            config = resume_config(Path(run_dir))
        except EvaluatorError as exc:
            self.report_problem("Cannot resume the run", str(exc))
            return
        self._launch(config)

    def _launch(self, config: RunConfig, trials: int = 1) -> None:
        if self.run is not None and self.run.running:
            self.report_problem("A run is in progress", "Stop it before starting another.")
            return
        if not self.owner.when_free(config.devices, lambda: self._launch(config, trials)):
            return  # the dialog says who holds a phone; waiting launches the run
        if self.run is not None:
            self.run.deleteLater()  # its thread has ended; free it with its worker
        device_factory = (
            functools.partial(self.connection.open_device, hierarchy=config.hierarchy)
            if self.connection is not None
            else None
        )
        run = EvaluationRun(config, device_factory=device_factory, trials=trials, parent=self)
        run.run_started.connect(self._on_run_started)
        run.task_started.connect(self.live_view.on_task_started)
        run.step_done.connect(self.live_view.on_step_done)
        run.task_finished.connect(self._on_task_finished)
        run.task_finished.connect(self.live_view.on_task_finished)
        run.worker_stopped.connect(self._on_worker_stopped)
        run.run_finished.connect(self._on_run_finished)
        run.failed.connect(self._on_run_failed)
        run.ended.connect(self._on_run_ended)
        self.run = run
        self.pause_button.setChecked(False)
        self.progress.setRange(0, 0)  # busy until the runner has counted the tasks
        self._set_state("running", f"Starting {config.agent} → {config.out}")
        self.tabs.setCurrentWidget(self.live_view)
        run.start()
        self._update_buttons()

    @Slot()
    def stop_run(self) -> None:
        if self.run is not None and self.run.running:
            self.run.stop()
            self._set_state("stopping", "Stopping after the current step…")

    @Slot()
    def stop_phone_work(self) -> None:
        """Stop what this tab does on a phone: the run, an exploration, a drift check."""
        self.stop_run()
        self.audit_view.explore.cancel()
        self.drift_view.cancel()

    @Slot(bool)
    def _on_pause_toggled(self, paused: bool) -> None:
        if self.run is None or not self.run.running:
            return
        self.run.set_paused(paused)
        self.pause_button.setText("Continue" if paused else "Pause")
        self.pause_action.setText("Continue" if paused else "Pause")
        if paused:
            self._set_state("paused", "Paused (between steps)")
        else:
            self._set_state("running", "Running")

    @Slot(object)
    def _on_run_started(self, event: RunStarted) -> None:
        self._show_run(event.run_dir)
        self.progress.setRange(0, max(1, event.total))
        self.progress.setValue(len(event.skipped))
        self.progress.setTextVisible(True)
        self._outcomes = {}
        skipped = f", {len(event.skipped)} finished before" if event.skipped else ""
        self._set_state("running", f"Running {event.pending} of {event.total} tasks{skipped}")

    @Slot(object)
    def _on_task_finished(self, event: TaskFinished) -> None:
        self.results_model.add_result(event.result)
        self.progress.setValue(event.done)
        status = event.result.status.value
        self._outcomes[status] = self._outcomes.get(status, 0) + 1
        if self.run is not None and self.run.paused:
            return  # the label says "Paused" until the user continues
        counts = ", ".join(f"{n} {s}" for s, n in sorted(self._outcomes.items()))
        self._set_state(
            "running",
            f"Running: {event.done} of {event.total} tasks done ({counts}); "
            f"last: {event.task_id} {status}",
        )

    @Slot(object)
    def _on_worker_stopped(self, event: WorkerStopped) -> None:
        self.report_problem("A worker stopped", f"{event.worker}: {event.reason}")

    @Slot(object)
    def _on_run_finished(self, event: RunFinished) -> None:
        self.live_view.flush()
        self.reload_results()
        if event.not_run:
            how = "Stopped" if event.stopped else "Ended"
            self._set_state(
                "stopped",
                f"{how}: {event.finished} done, {len(event.not_run)} not run. "
                "Resume run… continues it.",
            )
        else:
            self._set_state("finished", f"Finished: {event.finished} tasks")
            self.tabs.setCurrentWidget(self.results_tab)
        self.compare_view.refresh_runs()
        self.audit_view.refresh_runs()

    @Slot(str)
    def _on_run_failed(self, message: str) -> None:
        self.progress.setRange(0, 1)
        self._set_state("failed", f"The run failed: {message}")
        self.report_problem("The run failed", message)

    @Slot()
    def _on_run_ended(self) -> None:
        self.pause_button.setChecked(False)
        self.pause_button.setText("Pause")
        self.pause_action.setText("Pause")
        self._update_buttons()

    def _set_state(self, state: str, text: str) -> None:
        self.state_label.setText(text)
        self.run_state_changed.emit(state)

    def _update_buttons(self) -> None:
        running = self.run is not None and self.run.running
        has_run = self.current_run is not None
        for widgets, enabled in (
            ((self.start_button, self.start_action), not running),
            ((self.resume_button, self.resume_action), not running),
            ((self.open_button, self.open_action), not running),
            ((self.pause_button, self.pause_action), running),
            ((self.stop_button, self.stop_action), running),
            ((self.export_button, self.export_action), has_run and not running),
            ((self.open_report_button, self.open_report_action), self.report_path is not None),
        ):
            for widget in widgets:
                widget.setEnabled(enabled)

    # -- results

    def open_run(self, run_dir: str | Path) -> bool:
        """Show an existing run's results (and offer Resume when tasks are missing)."""
        try:
            RunStore.open(Path(run_dir))
        except EvaluatorError as exc:
            self.report_problem("Cannot open the run", str(exc))
            return False
        self._show_run(Path(run_dir))
        self.tabs.setCurrentWidget(self.results_tab)
        return True

    def _show_run(self, run_dir: Path) -> None:
        self.current_run = Path(run_dir)
        html = self.current_run / "report.html"
        self.report_path = html if html.is_file() else None
        self.report_row.set_path(self.report_path, what="Report (report.md beside it)")
        self.figures_view.show_run(self.current_run)
        self.reload_results()
        self._update_buttons()

    def store(self) -> RunStore | None:
        return RunStore(self.current_run) if self.current_run is not None else None

    def reload_results(self) -> None:
        """Results, verdicts and tags from the run folder, and the summary line."""
        store = self.store()
        if store is None:
            return
        if self._prices is None:
            try:
                self._prices = load_prices()
            except EvaluatorError as exc:
                log.warning("no price table: %s", exc)
        try:
            results, overrides, tags = store.results(), store.overrides(), store.tags()
        except (OSError, EvaluatorError) as exc:
            self.report_problem("Cannot read the run", str(exc))
            return
        self.results_model.set_results(results, overrides, tags, self._prices)
        review = frozenset(d.task_id for d in judge_disagreements(results, overrides))
        self.results_proxy.set_review_tasks(review)
        self.status_filter.setItemText(
            self.status_filter.findData(REVIEW), f"judge ≠ human (review {len(review)})"
        )
        self.results_table.fit_columns()
        self.run_label.setText(f"<b>{store.run_dir.name}</b> — {store.run_dir.parent}")
        overall = group_metrics(results, overrides, self._prices)
        parts = [
            f"SR {_pct(overall.sr)} ({overall.successes}/{overall.n})",
            f"CR {_pct(overall.cr)}",
            f"errors {overall.errors}",
            f"AIL {overall.ail:.2f} s/step" if overall.ail is not None else "AIL n/a",
        ]
        agreement = judge_agreement(results, overrides).get("combined")
        if agreement is not None:
            parts.append(
                f"judge–human agreement {_pct(agreement.rate)} ({agreement.agree}/{agreement.n})"
            )
        else:
            parts.append(f"human verdicts {len(overrides)}")
        failures = failure_analysis(store)
        if failures.analysed:
            shares = ", ".join(
                f"{c.title} {_pct(c.share)}" for c in failures.categories if c.primary
            )
            parts.append(f"failures analysed {failures.analysed}/{failures.failures}: {shares}")
        self.summary_label.setText(" · ".join(parts))

    @Slot(QModelIndex)
    def _on_result_double_clicked(self, index: QModelIndex) -> None:
        task_id = self.results_table.task_id_at(index)
        if task_id:
            self.open_trace(task_id)

    def open_trace(self, task_id: str) -> bool:
        store = self.store()
        if store is None or not self.trace_viewer.show_task(store, task_id):
            return False
        self.tabs.setCurrentWidget(self.trace_viewer)
        return True

    @Slot(str)
    def _on_run_annotated(self, task_id: str) -> None:
        self.reload_results()

    @Slot(str)
    def _on_category_added(self, label: str) -> None:
        settings = self.form.settings()
        if label not in settings.custom_categories:
            self.form.set_custom_categories((*settings.custom_categories, label))
            self.save_settings()

    # -- report

    @Slot()
    def export_report(self) -> None:
        if self.current_run is None:
            return
        run_dir = self.current_run
        self.export_button.setEnabled(False)
        self.state_label.setText("Writing the report…")
        run_in_background(
            lambda: write_report(run_dir),
            on_done=self._on_report_written,
            on_error=self._on_report_failed,
        )

    def _on_report_written(self, paths: tuple[Path, Path]) -> None:
        self.report_path = paths[1]
        self.report_row.set_path(paths[1], what="Report (report.md beside it)")
        self.figures_view.show_run(paths[1].parent)
        self.state_label.setText(f"Report written: {paths[0]} and {paths[1].name}")
        self._update_buttons()
        self.report_written.emit(str(paths[1]))

    def _on_report_failed(self, exc: Exception) -> None:
        self._update_buttons()
        self.report_problem("Cannot write the report", str(exc))

    @Slot()
    def _on_open_report_clicked(self) -> None:
        self.report_row.open_report()

    # -- dialogs

    def _runs_start(self) -> str:
        if self.workspace is not None:
            return str(self.workspace.runs_dir)
        return str(Path.home())

    @Slot()
    def _on_resume_clicked(self) -> None:
        """Offer the workspace's stopped runs first; a folder dialog only on request."""
        runs_dir = self.workspace.runs_dir if self.workspace is not None else None
        runs = [
            (
                str(run.folder),
                f"{run_label(run.folder)} — {run.total - run.finished} of {run.total} "
                "tasks not run",
            )
            for run in stopped_runs(runs_dir)
        ]
        dialog = StoppedRunsDialog(runs, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.resume_requested.connect(self.resume_run)
        dialog.browse_requested.connect(self._on_resume_browse)
        dialog.finished.connect(lambda _: setattr(self, "resume_dialog", None))
        self.resume_dialog = dialog
        dialog.open()

    @Slot()
    def _on_resume_browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Resume which run?", self._runs_start())
        if path:
            self.resume_run(path)

    @Slot()
    def _on_open_clicked(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a run folder", self._runs_start())
        if path:
            self.open_run(path)

    def report_problem(self, title: str, message: str) -> None:
        self.last_problem = (title, message)
        log.warning("%s: %s", title, message)
        show_problem(self, title, message)
