"""The Record tab: device bar, live mirror, task panel and recording controls.

The page wires three parts that know nothing of each other: the ``DeviceBar`` (which
phone), the ``MirrorFeed``/``MirrorView`` (what it shows, and gestures on it) and the
``RecorderController`` (the recording protocol in its worker thread). Every input --
mouse gesture, text box, button, shortcut -- goes through ``RecorderController.submit``,
which refuses it unless a settled observation is pending.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from devices.device import Device
from devices.hierarchy import HIERARCHY_CHOICES, HIERARCHY_HELP
from graph_builder import io
from graph_builder.errors import GraphBuilderError
from graph_builder.model import Action, DemoStatus, Task
from recorder_app.connection import HIERARCHY_SETTING, DeviceConnection
from recorder_app.qt.device_bar import DeviceBar
from recorder_app.qt.device_owner import DeviceOwner
from recorder_app.qt.dialogs import ResumeCheckDialog
from recorder_app.qt.free_drive import FreeDriver
from recorder_app.qt.mirror_view import MirrorFeed, MirrorView
from recorder_app.qt.phone_restart import PhoneRestart
from recorder_app.qt.recorder import (
    CONFIRMING,
    IDLE,
    START_DIFFERS,
    RecorderController,
    ResumeRequest,
    StartRequest,
    saved_steps,
    step_hierarchy,
    step_text,
)
from recorder_app.qt.steady import fix_lines
from recorder_app.qt.step_viewer import StepViewer
from recorder_app.qt.task_panel import TaskPanel
from recorder_app.recording.session import PendingStep, ResumeCheck, SessionState
from recorder_app.recording.start_check import StartReference, load_start_reference
from recorder_app.recording.workspace import Workspace

log = logging.getLogger(__name__)

BUSY_MESSAGES = {
    SessionState.PREPARING.value: "Preparing the app…",
    SessionState.CAPTURING.value: "Capturing the screen…\nwait before the next input",
    SessionState.PERFORMING.value: "Performing…",
    SessionState.INTERRUPTED.value: "Recording interrupted\nRetry capture (F5) or Stop",
    CONFIRMING: "Another screen than where the demo stopped\ncontinue or discard it",
    START_DIFFERS: "The phone does not show the task's start\nrecord from it or discard the demo",
}
STATE_TEXT = {
    IDLE: "Not recording",
    SessionState.PREPARING.value: "Preparing…",
    SessionState.CAPTURING.value: "Capturing…",
    SessionState.READY.value: "Ready for input",
    SessionState.PERFORMING.value: "Performing…",
    SessionState.FINISHED.value: "Demo saved",
    SessionState.INTERRUPTED.value: "Interrupted",
    CONFIRMING: "Check the screen",
    START_DIFFERS: "Check the first screen",
}
RECORD_TAB = "the Record tab"  # how a demonstration's device lock names its holder
FREE_DRIVE_BADGE = "Free drive — not recorded"
SIDE_MIN_WIDTH = 400  # the recording controls and task form, in pixels
NO_STEP_YET = "The recorded steps appear here, each on the screen it was taken"


def _with_shortcut(text: str, action: QAction) -> str:
    keys = ", ".join(s.toString(QKeySequence.SequenceFormat.NativeText) for s in action.shortcuts())
    return f"{text} ({keys})" if keys else text


class RecordPage(QWidget):
    """Signals carry serials and demo folders; the window shows messages and dialogs."""

    message_posted = Signal(str, int)  # text, timeout in ms (0: until replaced)
    problem_occurred = Signal(str, str)  # title, message: needs the user's attention
    mirror_status_changed = Signal(str)
    recorder_status_changed = Signal(str)  # state and the last capture time, for the status bar
    demo_saved = Signal(str)  # demo folder whose steps changed
    hierarchy_changed = Signal(str)  # the view hierarchy tool chosen (devices.hierarchy)

    def __init__(
        self,
        connection: DeviceConnection,
        settings: QSettings,
        parent: QWidget | None = None,
        *,
        poll_ms: int = 2000,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("recordPage")
        self._connection = connection
        self._settings = settings
        self._workspace: Workspace | None = None
        self._serial: str | None = None
        self._mirror_live = False
        self._capture_ms: float | None = None
        self._lost_during: str | None = None  # demo folder whose phone loss was reported
        self._steps_folder: Path | None = None  # the demo listed in the Steps tab
        self._last_capture: PendingStep | None = None
        self._discard_on_close: str | None = None  # a resumed demo the user discarded
        self._last_serial: str | None = None  # the phone to reconnect when none is connected
        self.resume_dialog: ResumeCheckDialog | None = None
        self.start_dialog: ResumeCheckDialog | None = None
        # Holds the phone while a demo is open, in free drive and while it restarts.
        self.owner = DeviceOwner(RECORD_TAB, self, connection.lock_address)
        self.hierarchy = connection.hierarchy  # read by the recorder thread at each demo start

        self.device_bar = DeviceBar(connection.list_devices, poll_ms=poll_ms)
        self.phone_restart = PhoneRestart(connection, self.device_bar, self)
        self.mirror = MirrorView()
        self.feed = MirrorFeed(self.mirror, self)
        self.recorder = RecorderController(
            self._open_device, settle_timeout=connection.settle_timeout, parent=self
        )
        self.free_drive = FreeDriver(connection.open_device, self)
        self.task_panel = TaskPanel()
        self.task_panel.annotator_edit.setText(str(settings.value("task/annotator", "")))
        self._build_actions()
        self._build_layout()
        self._connect()
        self._on_recorder_state_changed(IDLE)

    # -- construction

    def _build_actions(self) -> None:
        def make(text: str, keys: list[str], slot: object | None, tip: str) -> QAction:
            action = QAction(text, self)
            action.setShortcuts([QKeySequence(k) for k in keys])
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            action.setToolTip(_with_shortcut(tip, action))
            action.setStatusTip(tip)
            if slot is not None:
                action.triggered.connect(slot)
            return action

        self.start_action = make(
            "Start demo",
            ["Ctrl+R"],
            self._on_start_triggered,
            "Start a new demonstration of the task",
        )
        self.back_action = make(
            "Back", ["Alt+Left"], self._on_back_triggered, "Press the phone's Back button"
        )
        self.home_action = make(
            "Home", ["Ctrl+H", "Alt+Home"], self._on_home_triggered, "Press the phone's Home button"
        )
        self.wait_action = make(
            "Wait",
            ["Alt+W"],
            self._on_wait_triggered,
            "Record a pause of one second (for loading screens)",
        )
        self.type_action = make(
            "Type text",
            ["Ctrl+T"],
            self._on_type_focus_triggered,
            "Type into the focused field on the phone (Enter sends)",
        )
        self.complete_action = make(
            "Task complete",
            ["Ctrl+Return", "Ctrl+Enter"],
            self._on_complete_triggered,
            "End the demonstration here with a 'done' step",
        )
        self.retry_action = make(
            "Retry capture",
            ["F5"],
            self._on_retry_triggered,
            "Capture the screen again after a problem",
        )
        self.stop_action = make(
            "Stop demo",
            ["Ctrl+."],
            self._on_stop_triggered,
            "Stop recording; the demonstration stays incomplete and can be resumed",
        )
        self.free_drive_action = make(
            "Free drive",
            ["Ctrl+D"],
            None,  # a toggle: _on_free_drive_toggled follows its state
            "Drive the phone from the mirror without recording anything: bring it to the "
            "task's start, recover after a stop, or explore",
        )
        self.free_drive_action.setCheckable(True)
        self.free_drive_action.toggled.connect(self._on_free_drive_toggled)
        self.restart_action = make(
            self.phone_restart.text, [], self.restart_phone, self.phone_restart.tip
        )
        self.actions_in_menu = [
            self.start_action,
            self.free_drive_action,
            self.restart_action,
            None,
            self.back_action,
            self.home_action,
            self.wait_action,
            self.type_action,
            self.complete_action,
            None,
            self.retry_action,
            self.stop_action,
        ]
        for action in self.actions_in_menu:
            if action is not None:
                self.addAction(action)
        # Esc is Back only while the mirror has focus, so it never cancels by surprise.
        esc = QShortcut(QKeySequence("Esc"), self.mirror)
        esc.setContext(Qt.ShortcutContext.WidgetShortcut)
        esc.activated.connect(self._on_back_triggered)
        self.mirror.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.mirror.setToolTip("Click: tap · hold ½ s: long press · drag: swipe · Esc: back")

    def _tool_button(self, action: QAction) -> QToolButton:
        button = QToolButton()
        button.setDefaultAction(action)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        return button

    def _build_layout(self) -> None:
        self.text_edit = QLineEdit()
        self.text_edit.setObjectName("typeText")
        self.text_edit.setPlaceholderText("Text to type on the phone, then Enter")
        self.text_edit.setToolTip(
            _with_shortcut("Text to type on the phone; Enter sends it", self.type_action)
        )
        self.reset_check = QCheckBox("Reset the phone before each demo")
        self.reset_check.setToolTip(
            "Run the task's reset recipe (Task tab: snapshot, settings, apps to clear, "
            "start activity) so every demonstration starts from the same state"
        )
        self.reset_check.setChecked(str(self._settings.value("record/reset_app", "true")) == "true")
        self.flash_check = QCheckBox("Flash the mirror on each accepted input")
        self.flash_check.setToolTip(
            "A green ring where a tap or swipe was accepted (a frame for Back, Home, Wait "
            "and typing); refused input always shows a red banner"
        )
        self.flash_check.setChecked(str(self._settings.value("record/flash", "true")) == "true")
        self.flash_check.toggled.connect(
            lambda on: self._settings.setValue("record/flash", "true" if on else "false")
        )
        self.hierarchy_combo = QComboBox()
        self.hierarchy_combo.setObjectName("hierarchyCombo")
        for choice in HIERARCHY_CHOICES:
            self.hierarchy_combo.addItem(f"View hierarchy: {choice}", choice)
        self.hierarchy_combo.setCurrentIndex(HIERARCHY_CHOICES.index(self.hierarchy))
        self.hierarchy_combo.setToolTip(
            f"{HIERARCHY_HELP[0].upper()}{HIERARCHY_HELP[1:]}. Applies from the next demo "
            "and to the Evaluate tab's next run."
        )
        self.start_button = QPushButton(self.start_action.text())
        self.start_button.setObjectName("startButton")
        self.start_button.setToolTip(self.start_action.toolTip())
        self.start_button.clicked.connect(self.start_action.trigger)
        self.steps_list = QListWidget()
        self.steps_list.setObjectName("stepsList")
        self.state_label = QLabel()
        self.state_label.setObjectName("recorderState")
        self.state_label.setWordWrap(True)
        self.instruction_label = QLabel()
        self.instruction_label.setObjectName("instructionLabel")
        self.instruction_label.setWordWrap(True)
        # Fixed lines, always shown: the buttons below stay put when a demo opens or a
        # longer state is reported (the state label's style adds 8 px of padding).
        fix_lines(self.instruction_label, 2)
        fix_lines(self.state_label, 2, padding=8)
        self._show_instruction(None)

        controls = QGroupBox("Recording")
        grid = QGridLayout(controls)
        grid.addWidget(self.reset_check, 0, 0, 1, 3)
        grid.addWidget(self.flash_check, 1, 0, 1, 3)
        grid.addWidget(self.start_button, 2, 0, 1, 2)
        self.free_drive_button = self._tool_button(self.free_drive_action)
        self.free_drive_button.setObjectName("freeDriveButton")
        grid.addWidget(self.free_drive_button, 2, 2)
        grid.addWidget(self.instruction_label, 3, 0, 1, 3)
        grid.addWidget(self.state_label, 4, 0, 1, 3)
        grid.addWidget(self._tool_button(self.back_action), 5, 0)
        grid.addWidget(self._tool_button(self.home_action), 5, 1)
        grid.addWidget(self._tool_button(self.wait_action), 5, 2)
        grid.addWidget(self.text_edit, 6, 0, 1, 3)
        self.complete_button = self._tool_button(self.complete_action)
        self.complete_button.setObjectName("completeButton")
        grid.addWidget(self.complete_button, 7, 0, 1, 3)
        grid.addWidget(self._tool_button(self.retry_action), 8, 0, 1, 2)
        grid.addWidget(self._tool_button(self.stop_action), 8, 2)
        grid.addWidget(self.hierarchy_combo, 9, 0, 1, 3)

        task_scroll = QScrollArea()
        task_scroll.setWidget(self.task_panel)
        task_scroll.setWidgetResizable(True)
        task_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        task_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.side_tabs = QTabWidget()
        self.side_tabs.setObjectName("recordSideTabs")
        self.side_tabs.addTab(task_scroll, "Task")
        self.step_preview = StepViewer()
        self.step_preview.setMinimumSize(160, 200)
        self.step_preview.clear(NO_STEP_YET)
        steps_split = QSplitter(Qt.Orientation.Vertical)
        steps_split.setObjectName("stepsSplitter")
        steps_split.addWidget(self.steps_list)
        steps_split.addWidget(self.step_preview)
        steps_split.setStretchFactor(1, 1)
        steps_split.setSizes([140, 400])
        self.side_tabs.addTab(steps_split, "Steps")
        self.side_tabs.setMinimumHeight(240)  # a few rows of the task form, not a sliver

        side = QWidget()
        side.setObjectName("recordSide")
        side.setMinimumWidth(SIDE_MIN_WIDTH)
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.addWidget(controls)
        side_layout.addWidget(self.side_tabs, 1)
        # On a short window the controls scroll rather than being squeezed to slivers.
        self.side_scroll = QScrollArea()
        self.side_scroll.setObjectName("recordSideScroll")
        self.side_scroll.setWidget(side)
        self.side_scroll.setWidgetResizable(True)
        self.side_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.side_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scrollbar = self.side_scroll.verticalScrollBar().sizeHint().width()
        self.side_scroll.setMinimumWidth(SIDE_MIN_WIDTH + scrollbar)

        self.splitter = QSplitter()
        self.splitter.setObjectName("recordSplitter")
        self.splitter.addWidget(self.mirror)
        self.splitter.addWidget(self.side_scroll)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 0)
        self.splitter.setCollapsible(0, False)
        self.splitter.setCollapsible(1, False)
        self.splitter.setSizes([900, 470])
        layout = QVBoxLayout(self)
        layout.addWidget(self.device_bar)
        layout.addWidget(self.splitter, 1)

    def _connect(self) -> None:
        bar, rec = self.device_bar, self.recorder
        bar.restart_button.setText(self.restart_action.text())
        bar.restart_button.setToolTip(self.restart_action.toolTip())
        bar.restart_button.clicked.connect(self.restart_action.trigger)
        bar.device_connected.connect(self._on_device_connected)
        bar.device_disconnected.connect(self._on_device_disconnected)
        bar.device_lost.connect(self._on_device_lost)
        bar.status_changed.connect(lambda text: self.message_posted.emit(text, 0))
        self.feed.started.connect(self._on_mirror_started)
        self.feed.stats_updated.connect(self._on_mirror_stats_updated)
        self.feed.failed.connect(self._on_mirror_failed)
        self.mirror.gesture_made.connect(self.submit)
        self.text_edit.returnPressed.connect(self._on_text_entered)
        self.steps_list.currentRowChanged.connect(self._on_step_row_changed)
        rec.state_changed.connect(self._on_recorder_state_changed)
        rec.demo_started.connect(self._on_demo_started)
        rec.screen_captured.connect(self._on_screen_captured)
        rec.step_saved.connect(self._on_step_saved)
        rec.action_failed.connect(self._on_action_failed)
        rec.demo_finished.connect(self._on_demo_finished)
        rec.demo_interrupted.connect(self._on_demo_interrupted)
        rec.demo_closed.connect(self._on_demo_closed)
        rec.input_refused.connect(self._on_input_refused)
        rec.resume_checked.connect(self._on_resume_checked)
        rec.start_checked.connect(self._on_start_checked)
        self.free_drive.performed.connect(
            lambda text: self.message_posted.emit(f"Free drive (not recorded): {text}", 3000)
        )
        self.free_drive.failed.connect(self._on_free_drive_failed)
        self.free_drive.idle.connect(self._update_controls)
        self.phone_restart.back.connect(self._on_phone_back)
        self.phone_restart.failed.connect(self._on_phone_not_back)
        rec.device_notice.connect(lambda text: self.message_posted.emit(text, 0))
        self.hierarchy_combo.currentIndexChanged.connect(self._on_hierarchy_chosen)
        self.owner.message_posted.connect(self.message_posted)
        self.owner.problem_occurred.connect(self.problem_occurred)
        self.task_panel.problem_occurred.connect(
            lambda text: self.problem_occurred.emit("Task", text)
        )
        self.task_panel.task_saved.connect(self._on_task_saved)
        self.task_panel.annotator_edit.editingFinished.connect(
            lambda: self._settings.setValue("task/annotator", self.task_panel.annotator)
        )
        self.reset_check.toggled.connect(
            lambda on: self._settings.setValue("record/reset_app", "true" if on else "false")
        )

    @Slot(str, str)
    def _on_task_saved(self, suite: str, task_id: str) -> None:
        """Save task sits below the form's fold: the status bar says it was written."""
        if self._workspace is not None:
            where = self._workspace.suite_dir(suite) / task_id / "task.json"
            self.message_posted.emit(f"Task saved: {where}", 5000)

    def _open_device(self, serial: str) -> Device:
        return self._connection.open_device(serial, hierarchy=self.hierarchy)

    @Slot(int)
    def _on_hierarchy_chosen(self, index: int) -> None:
        self.hierarchy = str(self.hierarchy_combo.itemData(index))
        self._settings.setValue(HIERARCHY_SETTING, self.hierarchy)
        self.hierarchy_changed.emit(self.hierarchy)

    # -- public API

    def set_workspace(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self.task_panel.set_workspace(workspace)

    def start(self) -> None:
        """Begin watching for phones."""
        self._emit_recorder_status()
        self.device_bar.start()

    def shutdown(self) -> None:
        self.device_bar.stop()
        self.feed.stop_now()
        self.free_drive.shutdown()
        self.recorder.shutdown()
        self.owner.shutdown()

    def release_phone(self) -> None:
        """Another tab asks for the phone: free drive ends, a demo stops (kept incomplete)."""
        self.free_drive_action.setChecked(False)
        self.recorder.stop()

    @property
    def serial(self) -> str | None:
        return self._serial

    @property
    def free_driving(self) -> bool:
        """Inputs go to the phone unrecorded (free drive is on and no demo is open)."""
        return self.free_drive.active and not self.recorder.recording

    @Slot(object)
    def submit(self, action: Action) -> bool:
        """Hand an input to the recorder (which refuses it unless ready), or in free drive
        straight to the phone, unrecorded."""
        if self.free_driving:
            accepted = self.free_drive.submit(action)
            if accepted:
                self.mirror.clear_notice()
                if self.flash_check.isChecked():
                    self.mirror.flash_accepted(action.point if action.type.is_pointed else None)
                self._update_controls()
            return accepted
        accepted = self.recorder.submit(action)
        if accepted:
            self.mirror.set_hierarchy(None)
            self.mirror.clear_notice()
            if self.flash_check.isChecked():
                self.mirror.flash_accepted(action.point if action.type.is_pointed else None)
            self.message_posted.emit(f"Recording: {action.describe()}", 3000)
        return accepted

    def start_demo(self) -> bool:
        if self._workspace is None:
            return False
        if self._serial is None:
            self.problem_occurred.emit(
                "No phone",
                "Connect a phone in the bar at the top first (or start the "
                "studio with --virtual-phone).",
            )
            return False
        problem = self._workspace.write_problem()
        if problem:
            self.problem_occurred.emit("The workspace is not writable", problem)
            return False
        if self.free_drive.busy:
            self.problem_occurred.emit(
                "Free drive is still sending input",
                "The last free-drive input has not reached the phone yet; start the demo "
                "once the phone took it, so that the first step shows where it ended.",
            )
            return False
        task = self.task_panel.commit()
        if task is None:
            return False
        held_before = self.owner.held is not None  # by the demo or free drive, if any
        if not self.owner.take(self._serial, f"demonstration of {task.id}", self.start_demo):
            self._update_controls()  # free drive ends if its hold on the phone was lost
            return False
        reset = task.reset if self.reset_check.isChecked() else None
        if self.reset_check.isChecked() and (reset is None or reset.is_empty):
            reset = None
            self.message_posted.emit(
                "The task has no reset recipe (app, settings or snapshot), so the phone is "
                "not reset before this demo.",
                8000,
            )
        self.steps_list.clear()
        self._update_steps_tab()
        started = self.recorder.start_demo(
            StartRequest(
                serial=self._serial,
                demos_root=self._workspace.demos_dir,
                task=task,
                annotator=self.task_panel.annotator,
                reset=reset,
                start=self._start_reference(task),
            )
        )
        if not started and not held_before:
            self.owner.release()
        if started:
            self.free_drive_action.setChecked(False)  # what follows is recorded
        return started

    def resume_demo(self, folder: str) -> bool:
        if self._serial is None:
            self.problem_occurred.emit(
                "No phone",
                "Connect the phone first, on the screen the demonstration stopped on; "
                "the studio compares the two before recording goes on.",
            )
            return False
        if self.free_drive.busy:
            self.problem_occurred.emit(
                "Free drive is still sending input",
                "The last free-drive input has not reached the phone yet; resume the demo "
                "once the phone took it.",
            )
            return False
        command = f"demonstration {Path(folder).parent.name}/{Path(folder).name}"
        held_before = self.owner.held is not None  # by the demo or free drive, if any
        if not self.owner.take(self._serial, command, lambda: self.resume_demo(folder)):
            self._update_controls()  # free drive ends if its hold on the phone was lost
            return False
        self.steps_list.clear()
        resumed = self.recorder.resume_demo(ResumeRequest(self._serial, Path(folder)))
        if not resumed and not held_before:
            self.owner.release()
        if resumed:
            self.free_drive_action.setChecked(False)  # what follows is recorded
        return resumed

    def _start_reference(self, task: Task) -> StartReference | None:
        """The START of the task's graph, when it has one, to check the first screen."""
        assert self._workspace is not None
        task_dir = self._workspace.suite_dir(self.task_panel.suite) / task.id
        try:
            return load_start_reference(task_dir)
        except (GraphBuilderError, OSError) as exc:
            self.message_posted.emit(
                f"The task's graph cannot be read, so the first screen is not compared "
                f"with its START: {exc}",
                8000,
            )
            return None

    # -- device and mirror

    @Slot()
    def restart_phone(self) -> bool:
        """Restart the built-in phone or reconnect a real one, off the GUI thread, with the
        device bar showing progress. A demo being recorded is stopped first (it stays
        incomplete and can be resumed); the task form and the workspace stay as they are."""
        if self.phone_restart.running:
            return False
        serial = self._serial or self._last_serial or self.device_bar.combo.currentData()
        if serial is None and not self._connection.built_in:
            self.problem_occurred.emit(
                "No phone to reconnect",
                "No phone has been connected yet: plug one in and press Refresh.",
            )
            return False
        if serial is not None and not self.owner.take(
            serial, "restarting the phone", self.restart_phone
        ):
            return False
        if self.recorder.recording:
            self.recorder.stop()
            self.message_posted.emit(
                "The demonstration was stopped for the restart; it is kept as incomplete "
                "and can be resumed from the Demos tab.",
                0,
            )
        self.phone_restart.start(serial)
        self.free_drive_action.setChecked(False)  # after start: the phone stays held
        self._update_controls()
        return True

    @Slot(str)
    def _on_phone_back(self, serial: str) -> None:
        self._update_controls()
        self.message_posted.emit(f"The phone {serial} is back.", 5000)

    @Slot(str, str)
    def _on_phone_not_back(self, title: str, message: str) -> None:
        self._update_controls()
        self.problem_occurred.emit(title, message)

    @Slot(str)
    def _on_device_connected(self, serial: str) -> None:
        self._serial = serial
        self._last_serial = serial
        self._mirror_live = False
        self._update_controls()
        self.mirror.clear("Starting the mirror…")
        self.mirror_status_changed.emit("mirror: starting…")
        self.feed.start(lambda: self._connection.open_frame_source(serial))

    @Slot(str)
    def _on_device_disconnected(self, serial: str) -> None:
        if serial != self._serial:
            return
        self.free_drive_action.setChecked(False)
        self._serial = None
        self._mirror_live = False
        self.feed.stop()
        self.mirror.clear("No phone connected")
        self.mirror_status_changed.emit("mirror: off")

    @Slot(str)
    def _on_device_lost(self, serial: str) -> None:
        if not self.recorder.recording:
            return
        already_reported = self.recorder.state == SessionState.INTERRUPTED.value
        self._lost_during = self.recorder.demo_folder
        self.recorder.stop()
        if already_reported:
            return
        self.problem_occurred.emit(
            "The phone disconnected",
            f"The phone {serial} disconnected during the demonstration. "
            f"{saved_steps(self.steps_list.count())} and the demonstration is kept as "
            "incomplete. Reconnect the phone, then resume it from the Demos tab.",
        )

    @Slot(str, str)
    def _on_mirror_started(self, name: str, fallback_reason: str) -> None:
        self._mirror_live = True
        text = f"mirror: {name}"
        if fallback_reason:
            text += f" (scrcpy unavailable: {fallback_reason})"
            self.message_posted.emit(
                f"The mirror uses screenshots because scrcpy could not start: {fallback_reason}",
                0,
            )
        self.mirror_status_changed.emit(text)

    @Slot(str, float, float)
    def _on_mirror_stats_updated(self, name: str, fps: float, latency_ms: float) -> None:
        self.mirror_status_changed.emit(
            f"mirror: {name} · {fps:.1f} fps · frame age {latency_ms:.0f} ms"
        )

    @Slot(str)
    def _on_mirror_failed(self, message: str) -> None:
        self._mirror_live = False
        self.mirror_status_changed.emit("mirror: failed")
        self.message_posted.emit(f"{message} Recording still works on captured screenshots.", 0)
        pending = self.recorder.screen
        if pending is not None:
            self.mirror.show_still(pending.screen.png(), pending.screen.size)
        else:
            self.mirror.clear(message)

    # -- recorder

    @Slot(str)
    def _on_recorder_state_changed(self, state: str) -> None:
        self.mirror.set_busy(BUSY_MESSAGES.get(state))
        screen = self.recorder.screen  # set while ready, also after a refused action
        self.mirror.set_hierarchy(screen.hierarchy if screen is not None else None)
        self.state_label.setProperty("state", state)
        self.state_label.style().polish(self.state_label)
        self._capture_ms = None if state == IDLE else self._capture_ms
        self._update_controls()

    def _update_controls(self) -> None:
        """Enable what the recorder's state and the open demonstration allow.

        Called on every state change and again when a demonstration closes: a finished
        demo reports "finished" before its session is closed, so the state alone would
        leave Start demo disabled after Task complete.
        """
        state = self.recorder.state
        ready = state == SessionState.READY.value
        recording = self.recorder.recording or state not in (IDLE, SessionState.FINISHED.value)
        if self.free_drive.active and self.owner.held is None and not recording:
            self.free_drive_action.setChecked(False)  # its hold on the phone was lost
        free = self.free_drive.active and not recording
        for action in (self.back_action, self.home_action):
            action.setEnabled(ready or free)
        for action in (self.wait_action, self.complete_action):
            action.setEnabled(ready)
        self.text_edit.setEnabled(recording or free)  # text may be prepared while capturing
        self.type_action.setEnabled(recording or free)
        self.retry_action.setEnabled(state == SessionState.INTERRUPTED.value)
        self.stop_action.setEnabled(recording)
        self.start_action.setEnabled(not recording)
        self.start_button.setEnabled(not recording)
        self.free_drive_action.setEnabled(
            self._serial is not None and (not recording or self.free_drive.active)
        )
        self.task_panel.setEnabled(not recording)
        self.mirror.set_badge(FREE_DRIVE_BADGE if free else None)
        restarting = self.phone_restart.running
        self.restart_action.setEnabled(not restarting)
        busy = state == SessionState.PREPARING.value or free or restarting
        if not recording and not busy:
            self.owner.release()  # the demo is closed (or never opened), free drive is off
        self._emit_recorder_status()

    def _emit_recorder_status(self) -> None:
        """The state, the step count and the last capture, in the panel and the status bar."""
        state = self.recorder.state
        parts = [STATE_TEXT.get(state, state)]
        if self.free_driving:
            parts = [FREE_DRIVE_BADGE]
        if self.recorder.recording or state == SessionState.FINISHED.value:
            count = self.steps_list.count()
            parts.append(f"{count} step{'' if count == 1 else 's'} saved")
        if self._last_capture is not None and self._capture_ms is not None:
            clock = time.strftime("%H:%M:%S", time.localtime(self._last_capture.screen.time))
            parts.append(f"last capture {clock} ({self._capture_ms:.0f} ms)")
        self.state_label.setText(" · ".join(parts))
        text = f"recorder: {state}"
        if self._capture_ms is not None:
            text += f" · capture {self._capture_ms:.0f} ms"
        self.recorder_status_changed.emit(text)

    def _show_instruction(self, text: str | None) -> None:
        """The open demo's task and request, or a grey note that none is open."""
        self.instruction_label.setText(text or "<i>No demonstration open</i>")
        self.instruction_label.setEnabled(text is not None)
        if text is None:
            self.instruction_label.setToolTip("")

    def _update_steps_tab(self) -> None:
        count = self.steps_list.count()
        self.side_tabs.setTabText(1, f"Steps ({count})" if count else "Steps")
        self._emit_recorder_status()

    @Slot(str, int)
    def _on_demo_started(self, folder: str, saved_steps: int) -> None:
        self._steps_folder = Path(folder)
        self.steps_list.clear()
        try:
            demo = io.load_demo(Path(folder))
        except GraphBuilderError as exc:  # the recorder has just read it; report, go on
            log.warning("cannot list the steps of %s: %s", folder, exc)
        else:
            for step in demo.steps:
                hierarchy = step_hierarchy(Path(folder), step)
                self.steps_list.addItem(f"{step.index + 1}. {step_text(step, hierarchy)}")
            self.steps_list.setCurrentRow(self.steps_list.count() - 1)
            self._show_instruction(f"<b>{demo.task_id}</b>: “{demo.instruction}”")
            self.instruction_label.setToolTip(demo.instruction)
        self.side_tabs.setCurrentIndex(1)
        self._update_steps_tab()
        self.demo_saved.emit(folder)
        if saved_steps:
            self.message_posted.emit(f"Resuming {Path(folder).name} after step {saved_steps}", 5000)
        else:
            self.message_posted.emit(
                f"Recording {Path(folder).parent.name}/{Path(folder).name}", 5000
            )

    @Slot(object)
    def _on_screen_captured(self, screen: PendingStep) -> None:
        self._last_capture = screen
        self._capture_ms = screen.capture_ms
        self._emit_recorder_status()
        if not self._mirror_live or self.mirror.device_size is None:
            self.mirror.show_still(screen.screen.png(), screen.screen.size)  # until frames come
        self.mirror.set_hierarchy(screen.hierarchy)
        notes = []
        if not screen.settled:
            notes.append("the screen was still changing; captured anyway")
        if screen.hierarchy_problem:
            notes.append(f"no usable hierarchy ({screen.hierarchy_problem})")
        extra = f" — {'; '.join(notes)}" if notes else ""
        self.message_posted.emit(
            f"Step {screen.step_index + 1}: ready ({screen.capture_ms:.0f} ms capture){extra}",
            0 if notes else 4000,
        )

    @Slot(str, int, str)
    def _on_step_saved(self, folder: str, index: int, description: str) -> None:
        while self.steps_list.count() > index:
            self.steps_list.takeItem(self.steps_list.count() - 1)
        self.steps_list.addItem(f"{index + 1}. {description}")
        self.steps_list.setCurrentRow(self.steps_list.count() - 1)
        self._update_steps_tab()
        self.demo_saved.emit(folder)

    @Slot(int)
    def _on_step_row_changed(self, row: int) -> None:
        """Preview a recorded step: its pre-action screenshot with the action drawn on it.

        With no step (a new demonstration was opened) the preview goes back to its note, so
        the last demonstration's final step is not shown as if it were this one's.
        """
        if row < 0 or self._steps_folder is None:
            self.step_preview.clear(NO_STEP_YET)
            return
        try:
            demo = io.load_demo(self._steps_folder)
            step = demo.steps[row]
            png = io.read_png(self._steps_folder / step.observation.screenshot)
        except (GraphBuilderError, IndexError) as exc:
            self.step_preview.clear(f"Cannot show this step: {exc}")
            return
        self.step_preview.show_step(png, step.observation.screen, step.action, jumped=step.jumped)

    @Slot(str)
    def _on_action_failed(self, message: str) -> None:
        self.problem_occurred.emit("The action was not recorded", message)

    @Slot(str)
    def _on_demo_finished(self, folder: str) -> None:
        self.message_posted.emit(
            f"Demonstration saved: {folder} ({self.steps_list.count()} steps)", 0
        )
        self.demo_saved.emit(folder)

    @Slot(str, str)
    def _on_demo_interrupted(self, title: str, message: str) -> None:
        if self._lost_during is not None and self._lost_during == self.recorder.demo_folder:
            self.message_posted.emit(f"{title}: {message.splitlines()[0]}", 0)  # said already
            return
        self.problem_occurred.emit(title, message)

    @Slot(str, object)
    def _on_resume_checked(self, folder: str, check: ResumeCheck) -> None:
        if check.same is not False:
            self.message_posted.emit(check.message, 0 if check.same is None else 8000)
            return
        live = self._last_capture.screen.png() if self._last_capture else None
        dialog = ResumeCheckDialog(check.message, check.expected_png, live, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.continue_requested.connect(self.recorder.confirm_resume)
        dialog.discard_requested.connect(lambda: self._discard_resumed(folder))
        dialog.stop_requested.connect(self.recorder.stop)
        dialog.finished.connect(lambda _: setattr(self, "resume_dialog", None))
        self.resume_dialog = dialog
        dialog.open()

    @Slot(str, object)
    def _on_start_checked(self, folder: str, check: ResumeCheck) -> None:
        if check.same is not False:
            self.message_posted.emit(check.message, 0 if check.same is None else 5000)
            return
        live = self._last_capture.screen.png() if self._last_capture else None
        dialog = ResumeCheckDialog(
            check.message,
            check.expected_png,
            live,
            self,
            expected_title="The task's START (from its graph)",
            note=(
                "Recording from this screen would merge it with the wrong screens of the "
                "task. Fix the reset recipe in the Task form and discard this demo, or "
                "record from this screen if it is a start you mean to add."
            ),
            continue_text="Record from this screen",
        )
        dialog.setObjectName("startCheckDialog")
        dialog.setWindowTitle("The phone does not show the task's start")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.continue_requested.connect(self.recorder.confirm_start)
        dialog.discard_requested.connect(lambda: self._discard_resumed(folder))
        dialog.stop_requested.connect(self.recorder.stop)
        dialog.finished.connect(lambda _: setattr(self, "start_dialog", None))
        self.start_dialog = dialog
        dialog.open()

    def _discard_resumed(self, folder: str) -> None:
        self._discard_on_close = folder
        self.recorder.stop()

    @Slot(str)
    def _on_demo_closed(self, folder: str) -> None:
        self._show_instruction(None)
        self._update_controls()
        if self._discard_on_close == folder:
            self._discard_on_close = None
            try:
                io.set_demo_status(Path(folder), DemoStatus.DISCARDED)
            except (GraphBuilderError, OSError) as exc:
                self.problem_occurred.emit("Cannot discard the demonstration", str(exc))
            else:
                self.message_posted.emit(
                    f"Discarded {Path(folder).name}; its files stay and it can be restored "
                    "in the Demos tab.",
                    0,
                )
            self.demo_saved.emit(folder)
            return
        self.demo_saved.emit(folder)
        if self.recorder.state == IDLE:
            self.message_posted.emit(
                f"Stopped; {Path(folder).name} is kept as incomplete and can be resumed.", 0
            )

    @Slot(bool)
    def _on_free_drive_toggled(self, on: bool) -> None:
        if on == self.free_drive.active:
            return
        if not on:
            self.free_drive.stop()
            self._update_controls()  # releases the phone unless a demo holds it
            return
        if self._serial is None or self.recorder.recording:
            self.free_drive_action.setChecked(False)
            return
        if not self.owner.take(self._serial, "free drive", self.free_drive_action.trigger):
            self.free_drive_action.setChecked(False)
            return
        self.free_drive.start(self._serial)
        self.mirror.setFocus()
        self.message_posted.emit(
            "Free drive: taps, swipes, keys and text go to the phone and nothing is recorded.",
            5000,
        )
        self._update_controls()

    @Slot(str)
    def _on_free_drive_failed(self, message: str) -> None:
        self.mirror.show_refused(message)
        self.message_posted.emit(message, 8000)
        self._update_controls()

    @Slot(str)
    def _on_input_refused(self, message: str) -> None:
        self.mirror.show_refused(message)
        self.message_posted.emit(message, 5000)

    # -- actions

    @Slot()
    def _on_start_triggered(self) -> None:
        self.start_demo()

    @Slot()
    def _on_back_triggered(self) -> None:
        self.submit(Action.back())

    @Slot()
    def _on_home_triggered(self) -> None:
        self.submit(Action.home())

    @Slot()
    def _on_wait_triggered(self) -> None:
        self.submit(Action.wait(1000))

    @Slot()
    def _on_type_focus_triggered(self) -> None:
        self.text_edit.setFocus()
        self.text_edit.selectAll()

    @Slot()
    def _on_text_entered(self) -> None:
        text = self.text_edit.text()
        if text and self.submit(Action.type_text(text)):
            self.text_edit.clear()

    @Slot()
    def _on_complete_triggered(self) -> None:
        self.recorder.complete()

    @Slot()
    def _on_retry_triggered(self) -> None:
        self.recorder.retry()

    @Slot()
    def _on_stop_triggered(self) -> None:
        self.recorder.stop()
