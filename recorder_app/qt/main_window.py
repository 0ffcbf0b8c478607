"""The studio's main window: a tab per job (Record, Demos, Graphs, Evaluate, Language).

Pages are added with ``add_page(key, title, widget)``; a page may offer ``set_workspace``
(called whenever the workspace changes), ``can_close`` (asked before closing; False keeps
the studio open), ``shutdown`` (called on close) and ``menus`` (inserted before View).
Menus get their entries from the pages, so a new tab does not need to touch this module
beyond one ``add_page`` call.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QSizePolicy,
    QTabWidget,
    QWidget,
)

from graph_builder import io
from graph_builder.errors import GraphBuilderError
from graph_builder.folder_lock import FolderLock, FolderLockedError
from graph_builder.model import DemoStatus
from recorder_app.connection import DeviceConnection
from recorder_app.errors import StudioError
from recorder_app.qt.about import open_documentation, show_about
from recorder_app.qt.demo_browser import DemoBrowser
from recorder_app.qt.dialogs import IncompleteDemosDialog, show_problem
from recorder_app.qt.eval_panel import EvaluationPage
from recorder_app.qt.graph_editor import GraphEditorPage
from recorder_app.qt.language_page import LanguagePage
from recorder_app.qt.record_page import RecordPage
from recorder_app.recording.workspace import Workspace, default_workspace_path, push_recent

log = logging.getLogger(__name__)

APP_TITLE = "ElderBench Studio"


def initial_workspace_path(settings: QSettings, requested: Path | None) -> Path:
    """The workspace to open: the one asked for, else the last used, else ~/ElderBench."""
    if requested is not None:
        return Path(requested)
    last = settings.value("workspace/last")
    if last and Path(str(last)).is_dir():
        return Path(str(last))
    return default_workspace_path()


class StudioMainWindow(QMainWindow):
    def __init__(
        self,
        settings: QSettings,
        connection: DeviceConnection,
        *,
        poll_ms: int = 2000,
    ) -> None:
        super().__init__()
        self.setObjectName("studioMainWindow")
        self.settings = settings
        self.connection = connection
        self.workspace: Workspace | None = None
        self._workspace_lock: FolderLock | None = None
        self.pages: dict[str, QWidget] = {}
        self.last_problem: tuple[str, str] | None = None
        self._incomplete_dialog: IncompleteDemosDialog | None = None

        self.tabs = QTabWidget()
        self.tabs.setObjectName("mainTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.setCentralWidget(self.tabs)
        self.record_page = RecordPage(connection, settings, poll_ms=poll_ms)
        self.demo_browser = DemoBrowser()
        self._build_status_bar()
        self._build_menus()
        self.add_page("record", "Record", self.record_page)
        self.add_page("demos", "Demos", self.demo_browser)
        self.add_page("graphs", "Graphs", GraphEditorPage())
        self.eval_page = EvaluationPage(connection)
        self.add_page("evaluate", "Evaluate", self.eval_page)
        self.language_page = LanguagePage(settings)
        self.add_page("language", "Language", self.language_page)
        self._connect()
        self.resize(1280, 860)
        self._restore_layout()

    # -- pages

    def add_page(self, key: str, title: str, widget: QWidget) -> int:
        """Add a tab; Ctrl+<n> switches to it. Returns its index."""
        if key in self.pages:
            raise ValueError(f"a page named {key!r} already exists")
        self.pages[key] = widget
        index = self.tabs.addTab(widget, title)
        self._on_tab_changed(self.tabs.currentIndex())
        action = QAction(title, self)
        if index < 9:
            action.setShortcut(QKeySequence(f"Ctrl+{index + 1}"))
        action.triggered.connect(lambda: self.tabs.setCurrentWidget(widget))
        self.view_menu.addAction(action)
        show_requested = getattr(widget, "show_requested", None)
        if show_requested is not None:
            show_requested.connect(lambda: self.tabs.setCurrentWidget(widget))
        for menu in getattr(widget, "menus", ()):
            self.menuBar().insertMenu(self.view_menu.menuAction(), menu)
        if self.workspace is not None and hasattr(widget, "set_workspace"):
            widget.set_workspace(self.workspace)
        return index

    def show_page(self, key: str) -> None:
        self.tabs.setCurrentWidget(self.pages[key])

    @Slot(int)
    def _on_tab_changed(self, _index: int) -> None:
        """Only the tab in front sets how small the window may get: a tab stack asks every
        page for its minimum, so one tall tab would keep a small screen from showing the
        others at all (a page whose policy is Ignored adds nothing to that minimum)."""
        current = self.tabs.currentWidget()
        ignored, preferred = QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred
        for page in self.pages.values():
            policy = preferred if page is current else ignored
            page.setSizePolicy(policy, policy)

    # -- workspace

    def open_workspace(self, path: str | Path) -> bool:
        try:
            workspace = Workspace.open(path)
        except (StudioError, GraphBuilderError) as exc:
            self.report_problem("Cannot open the workspace", str(exc))
            return False
        if self.record_page.recorder.recording:
            self.report_problem(
                "Recording in progress", "Stop the demonstration before switching workspaces."
            )
            return False
        if self.workspace is None or self.workspace.root != workspace.root:
            # Two studios recording into one workspace would interleave demo ids and builds.
            lock = FolderLock(workspace.root, purpose="ElderBench Studio")
            try:
                lock.acquire()
            except FolderLockedError as exc:
                self.report_problem("The workspace is open in another studio", str(exc))
                return False
            except OSError:
                pass  # a read-only workspace cannot be written to by anyone: nothing to guard
            self._release_workspace()
            self._workspace_lock = lock
        self._save_session()  # of the workspace being left
        self.workspace = workspace
        for page in self.pages.values():
            if hasattr(page, "set_workspace"):
                page.set_workspace(workspace)
        recent = push_recent(self._recent(), workspace.root)
        self.settings.setValue("workspace/last", str(workspace.root))
        self.settings.setValue("workspace/recent", recent)
        self._fill_recent_menu()
        self._update_title()
        self.workspace_label.setText(f"workspace: {workspace.root}")
        problem = workspace.write_problem()
        if problem:
            self.report_problem(
                "The workspace is read-only",
                f"{problem}\n\nYou can browse it, but new demonstrations cannot be saved here.",
            )
        self._restore_session(workspace)
        QTimer.singleShot(0, self.offer_incomplete_demos)
        return True

    def _session_key(self, workspace: Workspace) -> str:
        digest = hashlib.sha1(str(workspace.root).encode("utf-8")).hexdigest()[:12]
        return f"session-{digest}"

    def _save_session(self) -> None:
        """What a restart reopens: the suite folders and task open in the Graphs tab, the
        run shown in the Evaluate tab (per workspace)."""
        if self.workspace is None:
            return
        graphs = self.pages["graphs"]
        assert isinstance(graphs, GraphEditorPage)
        key = self._session_key(self.workspace)
        task = graphs.tasks.current_entry()
        run = self.eval_page.current_run
        self.settings.setValue(f"{key}/graph_folders", [str(f) for f in graphs.tasks.folders])
        self.settings.setValue(f"{key}/graph_task", str(task.task_dir) if task else "")
        self.settings.setValue(f"{key}/run", str(run) if run else "")

    def _restore_session(self, workspace: Workspace) -> None:
        graphs = self.pages["graphs"]
        assert isinstance(graphs, GraphEditorPage)
        key = self._session_key(workspace)
        folders = self.settings.value(f"{key}/graph_folders") or []
        for folder in folders if isinstance(folders, list) else [folders]:
            if Path(str(folder)).is_dir():
                graphs.tasks.add_folder(Path(str(folder)))
        task = str(self.settings.value(f"{key}/graph_task") or "")
        if task and Path(task).is_dir():
            graphs.tasks.select_task_dir(Path(task))
        run = str(self.settings.value(f"{key}/run") or "")
        if run and Path(run).is_dir():
            self.eval_page.open_run(run)

    @Slot()
    def offer_incomplete_demos(self) -> None:
        if self.workspace is None or self.record_page.recorder.recording:
            return
        demos = self.workspace.incomplete_demos()
        if not demos:
            return
        dialog = IncompleteDemosDialog(demos, self)
        dialog.resume_requested.connect(self._on_resume_requested)
        dialog.discard_requested.connect(self._on_discard_requested)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self._incomplete_dialog = dialog
        dialog.finished.connect(lambda _: setattr(self, "_incomplete_dialog", None))
        dialog.open()

    # -- messages

    def report_problem(self, title: str, message: str) -> None:
        """Status bar + a non-blocking dialog, for problems that need attention."""
        self.last_problem = (title, message)
        log.warning("%s: %s", title, message)
        self.statusBar().showMessage(f"{title}: {message.splitlines()[0]}", 15000)
        show_problem(self, title, message)

    # -- construction

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.workspace_label = QLabel()
        self.workspace_label.setObjectName("workspaceLabel")
        self.mirror_label = QLabel("mirror: off")
        self.mirror_label.setObjectName("mirrorLabel")
        self.state_label = QLabel("")
        self.state_label.setObjectName("stateLabel")
        for label in (self.state_label, self.mirror_label, self.workspace_label):
            bar.addPermanentWidget(label)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        open_action = file_menu.addAction("Open workspace…")
        open_action.setShortcut(QKeySequence.StandardKey.Open)
        open_action.triggered.connect(self._on_open_workspace_triggered)
        self.recent_menu = QMenu("Recent workspaces", self)
        file_menu.addMenu(self.recent_menu)
        file_menu.addSeparator()
        incomplete = file_menu.addAction("Incomplete demonstrations…")
        incomplete.triggered.connect(self._on_incomplete_triggered)
        file_menu.addSeparator()
        quit_action = file_menu.addAction("Quit")
        quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        quit_action.triggered.connect(self.close)
        record_menu = self.menuBar().addMenu("&Record")
        for action in self.record_page.actions_in_menu:
            if action is None:
                record_menu.addSeparator()
            else:
                record_menu.addAction(action)
        self.view_menu = self.menuBar().addMenu("&View")
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction("Recording how-to").triggered.connect(self._on_help_triggered)
        self.docs_action = help_menu.addAction("Documentation")
        self.docs_action.setShortcut(QKeySequence.StandardKey.HelpContents)
        self.docs_action.triggered.connect(
            lambda: self._on_message_posted(open_documentation(), 8000)
        )
        self.about_action = help_menu.addAction("About ElderBench Studio")
        self.about_action.triggered.connect(lambda: show_about(self))
        self._fill_recent_menu()

    def _connect(self) -> None:
        page = self.record_page
        page.message_posted.connect(self._on_message_posted)
        page.problem_occurred.connect(self.report_problem)
        page.mirror_status_changed.connect(self.mirror_label.setText)
        page.recorder_status_changed.connect(self.state_label.setText)
        page.demo_saved.connect(self._on_demo_saved)
        page.recorder.demo_started.connect(
            lambda folder, _: self.demo_browser.set_recording_folder(folder)
        )
        page.recorder.demo_closed.connect(lambda _: self.demo_browser.set_recording_folder(None))
        self.demo_browser.resume_requested.connect(self._on_resume_requested)
        self.tabs.currentChanged.connect(self._on_page_changed)
        page.device_bar.devices_listed.connect(self.eval_page.show_devices)
        page.hierarchy_changed.connect(lambda choice: setattr(self.eval_page, "hierarchy", choice))
        # "Stop it" in the Record tab's phone-in-use dialog stops what the Evaluate tab
        # does on a phone (a run, an exploration, a drift check).
        page.owner.release_requested.connect(lambda _serial: self.eval_page.stop_phone_work())
        # ... and in the Evaluate tab's (a run, an exploration, a drift check), it ends free
        # drive and stops the demonstration (kept as incomplete).
        for owner in (
            self.eval_page.owner,
            self.eval_page.audit_view.explore.owner,
            self.eval_page.drift_view.owner,
        ):
            owner.release_requested.connect(lambda _serial: page.release_phone())
        # An explored branch left incomplete is finished in the Record tab; imported and
        # explored demonstrations show in the Demos tab.
        self.eval_page.audit_view.explore.finish_requested.connect(self._on_resume_requested)
        self.eval_page.audit_view.explore.explored.connect(self._on_demo_saved)
        self.eval_page.trace_viewer.demo_imported.connect(self._on_demo_saved)
        # One annotator id signs demonstrations, human verdicts, label reviews and merge
        # decisions alike.
        graphs = self.pages["graphs"]
        assert isinstance(graphs, GraphEditorPage)
        recorder_id = page.task_panel.annotator_edit
        fields = (
            recorder_id,
            self.eval_page.trace_viewer.annotator_edit,
            self.eval_page.audit_view.annotator_edit,
            self.language_page.annotator_edit,
            graphs.merges.annotator_edit,
        )
        for field in fields[1:]:
            field.setText(recorder_id.text())
            field.editingFinished.connect(
                lambda f=field: self.settings.setValue("task/annotator", f.text().strip())
            )
        for source in fields:
            for target in fields:
                if target is not source:
                    source.textChanged.connect(
                        lambda text, t=target: t.setText(text) if t.text() != text else None
                    )
        self.demo_browser.problem_occurred.connect(
            lambda text: self.report_problem("Demonstration", text)
        )

    # -- layout persistence

    def _restore_layout(self) -> None:
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = self.settings.value("window/state")
        if state is not None:
            self.restoreState(state)
        for key, splitter in (
            ("record/splitter", self.record_page.splitter),
            ("demos/splitter", self.demo_browser.splitter),
        ):
            value = self.settings.value(key)
            if value is not None:
                splitter.restoreState(value)
        tab = self.settings.value("window/tab")
        if tab in self.pages:
            self.show_page(str(tab))

    def save_layout(self) -> None:
        self._save_session()
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.setValue("record/splitter", self.record_page.splitter.saveState())
        self.settings.setValue("demos/splitter", self.demo_browser.splitter.saveState())
        current = next((k for k, w in self.pages.items() if w is self.tabs.currentWidget()), None)
        if current:
            self.settings.setValue("window/tab", current)
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        # No "are you sure": every step is already on disk, and a demo that is still open
        # stays incomplete and is offered for resuming the next time the studio starts.
        if not all(p.can_close() for p in self.pages.values() if hasattr(p, "can_close")):
            event.ignore()
            return
        self.save_layout()
        for page in self.pages.values():
            if hasattr(page, "shutdown"):
                page.shutdown()
        self._release_workspace()
        event.accept()

    def _release_workspace(self) -> None:
        if self._workspace_lock is not None:
            self._workspace_lock.release()
            self._workspace_lock = None

    # -- helpers

    def _recent(self) -> list[str]:
        value = self.settings.value("workspace/recent") or []
        return [str(v) for v in (value if isinstance(value, list) else [value])]

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        for path in self._recent():
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _=False, p=path: self.open_workspace(p))
        self.recent_menu.setEnabled(not self.recent_menu.isEmpty())

    def _update_title(self) -> None:
        parts = [APP_TITLE]
        if self.workspace is not None:
            parts.append(self.workspace.root.name)
        if self.connection.label:
            parts.append(self.connection.label)
        self.setWindowTitle(" — ".join(parts))

    # -- slots

    @Slot(str, int)
    def _on_message_posted(self, text: str, timeout_ms: int) -> None:
        self.statusBar().showMessage(text, timeout_ms)

    @Slot(int)
    def _on_page_changed(self, _index: int) -> None:
        # A window that is not shown (tests, scripts) gets no showEvent on a tab switch.
        if self.tabs.currentWidget() is self.demo_browser:
            self.demo_browser.refresh_if_stale()

    @Slot(str)
    def _on_demo_saved(self, folder: str) -> None:
        self.demo_browser.refresh_when_shown()

    @Slot(str)
    def _on_resume_requested(self, folder: str) -> None:
        self.show_page("record")
        self.record_page.resume_demo(folder)

    @Slot(str)
    def _on_discard_requested(self, folder: str) -> None:
        try:
            io.set_demo_status(Path(folder), DemoStatus.DISCARDED)
        except (GraphBuilderError, OSError) as exc:
            self.report_problem("Cannot discard the demonstration", str(exc))
            return
        self.demo_browser.refresh()

    @Slot()
    def _on_open_workspace_triggered(self) -> None:
        start = str(self.workspace.root) if self.workspace else str(Path.home())
        path = QFileDialog.getExistingDirectory(self, "Open or create a workspace", start)
        if path:
            self.open_workspace(path)

    @Slot()
    def _on_incomplete_triggered(self) -> None:
        if self.workspace is not None and not self.workspace.incomplete_demos():
            self.statusBar().showMessage("No incomplete demonstrations in this workspace.", 5000)
            return
        self.offer_incomplete_demos()

    @Slot()
    def _on_help_triggered(self) -> None:
        QMessageBox.information(
            self,
            "Recording how-to",
            "1. Pick the phone in the bar at the top (the virtual phone connects by itself).\n"
            "2. Choose or write the task on the right, then Start demo (Ctrl+R).\n"
            "3. Do the task on the mirror: click = tap, hold ½ s = long press, "
            "drag = swipe. Type text in the box and press Enter. Back: Alt+Left or Esc "
            "on the mirror; Home: Ctrl+H; Wait: Alt+W.\n"
            "4. Wait for 'Ready for input' before each action: input while the screen is "
            "being captured is refused, so every step pairs the action with the screen "
            "you saw.\n"
            "5. End with Task complete (Ctrl+Return). Every step is saved as you go.\n\n"
            "Free drive (Ctrl+D) moves the phone from the mirror without recording, to bring "
            "it to the task's start or recover after Stop. Restart phone (or Reconnect "
            "phone) in the bar at the top brings a stuck phone back.",
        )
