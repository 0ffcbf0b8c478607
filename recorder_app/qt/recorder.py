"""The recorder: a ``RecordingSession`` run in its own worker thread, and its GUI-side handle.

Input policy: **refuse, never queue.** The ``RecorderController`` accepts an input only
while its state is ``ready`` (a settled pre-action observation is pending). Everything
arriving while the recorder prepares, captures or performs is refused at once with
``input_refused`` and a message; the mirror shows a busy overlay meanwhile. A queue would
replay clicks against screens the user never saw.

The controller switches to ``performing`` synchronously when it accepts an input, so a
second click that arrives before the worker has even started is refused too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QThread, Signal, Slot

from devices.device import Device
from graph_builder.errors import GraphBuilderError
from graph_builder.hierarchy import Hierarchy, load_hierarchy
from graph_builder.model import Action, ActionType, ResetRecipe, Step, Task
from recorder_app.errors import RecordingError, explain_os_error
from recorder_app.recording.session import (
    PendingStep,
    RecordingSession,
    ResumeCheck,
    SessionState,
)
from recorder_app.recording.start_check import StartReference, check_start

log = logging.getLogger(__name__)

DeviceFactory = Callable[[str], Device]

IDLE = "idle"  # no demonstration in progress (controller-only state)
# A resumed demo whose phone shows another screen than where it stopped: input waits
# until the user continues from this screen or discards the demo (controller-only state).
CONFIRMING = "confirming"
# A new demo whose first screen is not the task's START: input waits until the user
# records from this screen anyway or discards the demo (controller-only state).
START_DIFFERS = "start_differs"


@dataclass(frozen=True, slots=True)
class StartRequest:
    serial: str
    demos_root: Path
    task: Task
    annotator: str = ""
    reset: ResetRecipe | None = None
    start: StartReference | None = None  # the task graph's START, checked before step 1


@dataclass(frozen=True, slots=True)
class ResumeRequest:
    serial: str
    folder: Path


JUMP_MARK = "⤳ jumped here · "


def step_text(step: Step, hierarchy: Hierarchy | None) -> str:
    """A saved step as the step lists show it; a jump is marked before its action."""
    action = step.action
    described = (
        hierarchy.describe(action, step.observation.screen)
        if hierarchy is not None
        else action.describe()
    )
    return (JUMP_MARK if step.jumped else "") + described


def step_hierarchy(folder: Path, step: Step) -> Hierarchy | None:
    """A saved step's hierarchy, or None when it has none or it cannot be read."""
    if step.observation.hierarchy is None:
        return None
    try:
        return load_hierarchy(folder / step.observation.hierarchy)
    except GraphBuilderError:
        return None


def saved_steps(count: int) -> str:
    """``1 step is saved`` / ``3 steps are saved``."""
    return f"{count} step is saved" if count == 1 else f"{count} steps are saved"


class RecorderWorker(QObject):
    """Owns the session and the device; lives in the recorder thread."""

    state_changed = Signal(str)
    demo_started = Signal(str, int)  # demo folder, steps already saved
    screen_captured = Signal(object)  # PendingStep
    step_saved = Signal(str, int, str)  # demo folder, step index, action description
    device_notice = Signal(str)  # something about the phone worth a line in the status bar
    action_failed = Signal(str)  # the action was not performed; the same screen waits
    demo_finished = Signal(str)  # demo folder
    demo_interrupted = Signal(str, str)  # title, message; the demo is kept as incomplete
    demo_closed = Signal(str)  # demo folder; the session is gone
    resume_checked = Signal(str, object)  # demo folder, ResumeCheck
    start_checked = Signal(str, object)  # demo folder, ResumeCheck against the START node

    def __init__(self, device_factory: DeviceFactory, settle_timeout: float) -> None:
        super().__init__()
        self._device_factory = device_factory
        self._settle_timeout = settle_timeout
        self._session: RecordingSession | None = None
        self._noticed = ""

    # -- slots called through queued signals from the controller

    @Slot(object)
    def _on_start_requested(self, request: StartRequest) -> None:
        self._close_session()
        self.state_changed.emit(SessionState.PREPARING.value)

        def start() -> RecordingSession:
            device = self._device_factory(request.serial)
            return RecordingSession.start(
                device,
                request.demos_root,
                request.task,
                annotator=request.annotator,
                reset=request.reset,
                settle_timeout=self._settle_timeout,
            )

        self._open(start, "Could not start the demonstration", start=request.start)

    @Slot(object)
    def _on_resume_requested(self, request: ResumeRequest) -> None:
        self._close_session()
        self.state_changed.emit(SessionState.PREPARING.value)

        def resume() -> RecordingSession:
            device = self._device_factory(request.serial)
            return RecordingSession.resume(
                device, request.folder, settle_timeout=self._settle_timeout
            )

        self._open(resume, "Could not resume the demonstration", check_resume=True)

    @Slot(object)
    def _on_action_requested(self, action: Action) -> None:
        session = self._session
        if session is None:
            return
        self.state_changed.emit(SessionState.PERFORMING.value)
        screen = session.pending  # the screen the action is taken on
        try:
            step = session.act(action)
        except RecordingError as exc:
            if session.state is SessionState.READY:  # refused before the phone was touched
                self.action_failed.emit(str(exc))
                self.state_changed.emit(SessionState.READY.value)
                return
            self._interrupt("The action failed", str(exc))
            return
        except Exception as exc:
            self._interrupt("The action failed", self._explain(exc, f"{action.describe()} failed"))
            return
        hierarchy = screen.hierarchy if screen is not None else None
        self.step_saved.emit(str(session.folder), step.index, step_text(step, hierarchy))
        self._capture()

    @Slot()
    def _on_complete_requested(self) -> None:
        session = self._session
        if session is None:
            return
        self.state_changed.emit(SessionState.PERFORMING.value)
        try:
            demo = session.complete()
        except RecordingError as exc:
            self.action_failed.emit(str(exc))
            self.state_changed.emit(session.state.value)
            return
        last = demo.steps[-1]
        self.step_saved.emit(str(session.folder), last.index, last.action.describe())
        self.state_changed.emit(SessionState.FINISHED.value)
        self.demo_finished.emit(str(session.folder))
        self._close_session()

    @Slot()
    def _on_retry_requested(self) -> None:
        if self._session is not None:
            self._capture()

    @Slot()
    def _on_jump_requested(self) -> None:
        if self._session is not None:
            self._session.mark_jump()  # the next step was not reached by the last action
            self._capture()

    @Slot()
    def _on_stop_requested(self) -> None:
        self._close_session()

    # -- internals

    def _open(
        self,
        make: Callable[[], RecordingSession],
        title: str,
        *,
        check_resume: bool = False,
        start: StartReference | None = None,
    ) -> None:
        try:
            self._session = make()
        except Exception as exc:
            self.state_changed.emit(IDLE)
            self.demo_interrupted.emit(title, self._explain(exc, title))
            return
        self.demo_started.emit(str(self._session.folder), len(self._session.demo.steps))
        self._capture(check_resume=check_resume, start=start)

    def _capture(self, *, check_resume: bool = False, start: StartReference | None = None) -> None:
        session = self._session
        assert session is not None
        self.state_changed.emit(SessionState.CAPTURING.value)
        try:
            # The screen is kept for a later resume check only once the user may act (the
            # write costs ~15 ms), and on resume only after the kept one was compared.
            screen = session.capture(keep=False)
        except Exception as exc:
            self._interrupt(
                "The screen could not be captured",
                self._explain(exc, "The screen could not be captured"),
            )
            return
        self.screen_captured.emit(screen)
        # An `auto` hierarchy that fell back to uiautomator dump says why, once.
        note = getattr(session.device, "hierarchy_note", "")
        if note and note != self._noticed:
            self._noticed = note
            self.device_notice.emit(f"View hierarchy: {note}")
        # The state goes out before the check, so that the dialog the check opens finds
        # the controller already waiting for the user's answer.
        if check_resume:
            result: ResumeCheck = session.check_resume(screen)
            if result.same is False:
                self.state_changed.emit(CONFIRMING)  # the user decides; no input meanwhile
            self.resume_checked.emit(str(session.folder), result)
            if result.same is False:
                return
        if start is not None:
            result = check_start(start, screen)
            if result.same is False:
                self.state_changed.emit(START_DIFFERS)  # the user decides; no input meanwhile
            self.start_checked.emit(str(session.folder), result)
            if result.same is False:
                return
        self.state_changed.emit(SessionState.READY.value)
        session.keep_pending()
        session.hash_pending()

    def _interrupt(self, title: str, message: str) -> None:
        session = self._session
        assert session is not None
        session.interrupt()
        saved = len(session.demo.steps)
        log.warning("%s: %s", title, message)
        self.state_changed.emit(SessionState.INTERRUPTED.value)
        self.demo_interrupted.emit(
            title,
            f"{message}\n\n{saved_steps(saved)}; the demonstration is kept as "
            "incomplete. Fix the problem and choose Retry capture, or Stop and resume it "
            "later from the Demos tab.",
        )

    def _close_session(self) -> None:
        session, self._session = self._session, None
        if session is None:
            return
        try:
            session.device.close()
        except Exception:
            log.debug("closing the recording device failed", exc_info=True)
        self.demo_closed.emit(str(session.folder))

    @staticmethod
    def _explain(exc: Exception, what: str) -> str:
        if isinstance(exc, RecordingError):
            return str(exc)
        if isinstance(exc, OSError):
            return f"{what}. {explain_os_error(exc)}"
        from devices.errors import DeviceDisconnectedError, DeviceError

        if isinstance(exc, DeviceDisconnectedError):
            return f"The phone disconnected ({exc}). Plug it in again and check the Device bar."
        if isinstance(exc, DeviceError | GraphBuilderError):
            return f"{what}: {exc}"
        return f"{what}: unexpected {type(exc).__name__}: {exc}"


class RecorderController(QObject):
    """GUI-side handle of the recorder thread; the single gate through which input passes."""

    state_changed = Signal(str)
    demo_started = Signal(str, int)
    screen_captured = Signal(object)
    step_saved = Signal(str, int, str)
    device_notice = Signal(str)
    action_failed = Signal(str)
    demo_finished = Signal(str)
    demo_interrupted = Signal(str, str)
    demo_closed = Signal(str)
    resume_checked = Signal(str, object)  # demo folder, ResumeCheck
    start_checked = Signal(str, object)  # demo folder, ResumeCheck against the START node
    input_refused = Signal(str)

    _start_requested = Signal(object)
    _resume_requested = Signal(object)
    _action_requested = Signal(object)
    _complete_requested = Signal()
    _retry_requested = Signal()
    _jump_requested = Signal()
    _stop_requested = Signal()

    def __init__(
        self,
        device_factory: DeviceFactory,
        *,
        settle_timeout: float = 3.0,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._state = IDLE
        self._demo_folder: str | None = None
        self._screen: PendingStep | None = None
        self._thread = QThread()
        self._thread.setObjectName("recorder")
        self._worker = RecorderWorker(device_factory, settle_timeout)
        self._worker.moveToThread(self._thread)
        w = self._worker
        self._start_requested.connect(w._on_start_requested)
        self._resume_requested.connect(w._on_resume_requested)
        self._action_requested.connect(w._on_action_requested)
        self._complete_requested.connect(w._on_complete_requested)
        self._retry_requested.connect(w._on_retry_requested)
        self._jump_requested.connect(w._on_jump_requested)
        self._stop_requested.connect(w._on_stop_requested)
        w.state_changed.connect(self._on_worker_state_changed)
        w.demo_started.connect(self._on_demo_started)
        w.screen_captured.connect(self._on_screen_captured)
        w.step_saved.connect(self.step_saved)
        w.device_notice.connect(self.device_notice)
        w.action_failed.connect(self.action_failed)
        w.demo_finished.connect(self.demo_finished)
        w.demo_interrupted.connect(self.demo_interrupted)
        w.demo_closed.connect(self._on_demo_closed)
        w.resume_checked.connect(self.resume_checked)
        w.start_checked.connect(self.start_checked)
        self._thread.start()

    @property
    def state(self) -> str:
        return self._state

    @property
    def ready(self) -> bool:
        return self._state == SessionState.READY.value

    @property
    def recording(self) -> bool:
        """A demonstration is open (possibly interrupted)."""
        return self._demo_folder is not None

    @property
    def demo_folder(self) -> str | None:
        return self._demo_folder

    @property
    def screen(self) -> PendingStep | None:
        """The pending pre-action observation while ready."""
        return self._screen if self.ready else None

    # -- commands from the GUI

    def start_demo(self, request: StartRequest) -> bool:
        if self.recording or self._state == SessionState.PREPARING.value:
            self.input_refused.emit("A demonstration is already being recorded; stop it first.")
            return False
        self._set_state(SessionState.PREPARING.value)
        self._start_requested.emit(request)
        return True

    def resume_demo(self, request: ResumeRequest) -> bool:
        if self.recording or self._state == SessionState.PREPARING.value:
            self.input_refused.emit("A demonstration is already being recorded; stop it first.")
            return False
        self._set_state(SessionState.PREPARING.value)
        self._resume_requested.emit(request)
        return True

    def submit(self, action: Action) -> bool:
        """Record and perform ``action`` if the recorder is ready; refuse it otherwise."""
        if action.type is ActionType.DONE:
            return self.complete()
        if not self._accepting(action.describe()):
            return False
        self._set_state(SessionState.PERFORMING.value)
        self._action_requested.emit(action)
        return True

    def complete(self) -> bool:
        if not self._accepting("Task complete"):
            return False
        self._set_state(SessionState.PERFORMING.value)
        self._complete_requested.emit()
        return True

    def retry(self) -> None:
        if self._state == SessionState.INTERRUPTED.value:
            self._set_state(SessionState.CAPTURING.value)
            self._retry_requested.emit()

    def confirm_resume(self) -> None:
        """Continue a resumed demo from the screen the phone shows now (captured afresh);
        the next step is saved as a jump, since no recorded action led to it."""
        if self._state == CONFIRMING:
            self._set_state(SessionState.CAPTURING.value)
            self._jump_requested.emit()

    def confirm_start(self) -> None:
        """Record a new demo from the first screen although it is not the task's START."""
        if self._state == START_DIFFERS:
            self._set_state(SessionState.CAPTURING.value)
            self._retry_requested.emit()

    def stop(self) -> None:
        """Close the demonstration; unless it was finished it stays incomplete on disk."""
        self._stop_requested.emit()

    def shutdown(self) -> None:
        self._stop_requested.emit()
        self._thread.quit()
        self._thread.wait(10_000)

    # -- internals

    def _accepting(self, what: str) -> bool:
        if self.ready:
            return True
        if not self.recording and self._state == IDLE:
            reason = (
                "no demonstration is being recorded; press Start demo first, or turn on "
                "Free drive to move the phone without recording"
            )
        elif self._state == SessionState.INTERRUPTED.value:
            reason = "the demonstration is interrupted; choose Retry capture or Stop"
        elif self._state == CONFIRMING:
            reason = "the phone shows another screen; continue from it or discard the demo first"
        elif self._state == START_DIFFERS:
            reason = "the phone does not show the task's start; record from it or discard the demo"
        else:
            reason = f"the recorder is busy ({self._state}); wait until the screen is captured"
        self.input_refused.emit(f"{what} was not recorded: {reason}.")
        return False

    def _set_state(self, state: str) -> None:
        if state != self._state:
            self._state = state
            self.state_changed.emit(state)

    @Slot(str)
    def _on_worker_state_changed(self, state: str) -> None:
        # The controller moves to 'performing' on its own when it accepts input; the
        # worker's own 'performing' only confirms it.
        self._set_state(state)

    @Slot(str, int)
    def _on_demo_started(self, folder: str, saved_steps: int) -> None:
        self._demo_folder = folder
        self.demo_started.emit(folder, saved_steps)

    @Slot(object)
    def _on_screen_captured(self, screen: PendingStep) -> None:
        self._screen = screen
        self.screen_captured.emit(screen)

    @Slot(str)
    def _on_demo_closed(self, folder: str) -> None:
        if self._demo_folder == folder:
            self._demo_folder = None
            self._screen = None
            if self._state != SessionState.FINISHED.value:
                self._set_state(IDLE)
        self.demo_closed.emit(folder)
