"""A crash between saving a step and performing its action: the step is saved as not yet
performed, and resuming drops it, so the demonstration never records an action the phone
did not see (which built into a self-loop: the same screen before and after)."""

from __future__ import annotations

import multiprocessing
import os
import signal
from pathlib import Path

from devices.fake import FakeDevice
from evaluator.synthetic import render_screen
from graph_builder.io import load_demo
from graph_builder.model import Action, DemoStatus, Task
from graph_builder.screen import Screen
from recorder_app.recording.session import RecordingSession

SIZE = (540, 1200)
APP = "com.example.app"
TASK = Task("open_display", "open display", app=APP)
HOME = render_screen("Home", ["Display", "Sound"], app=APP, activity=f"{APP}/.Home")
DISPLAY = render_screen("Display", ["Font size"], app=APP, activity=f"{APP}/.Display")
TAP_DISPLAY = Action.tap(*HOME.buttons["Display"].center, screen=SIZE)


def _device() -> FakeDevice:
    def transition(at: str, action: Action) -> str:
        return "display" if at == "home" else at

    screens = {
        name: Screen(SIZE, png=drawn.png, hierarchy_xml=drawn.xml, activity=drawn.activity)
        for name, drawn in (("home", HOME), ("display", DISPLAY))
    }
    return FakeDevice(screens, "home", transition)


class _DiesWhenActing(FakeDevice):
    """The studio killed (power cut, kill -9) the moment the action is to be sent."""

    def perform(self, action: Action) -> None:
        os.kill(os.getpid(), signal.SIGKILL)


def _record_until_killed(demos: str) -> None:
    device = _device()
    crashing = _DiesWhenActing(device.screens, "home", device.transition)
    session = RecordingSession.start(crashing, Path(demos), TASK, demo_id="d1")
    session.capture()
    session.act(TAP_DISPLAY)


def test_a_step_saved_but_never_performed_is_dropped_on_resume(tmp_path: Path) -> None:
    child = multiprocessing.get_context("spawn").Process(
        target=_record_until_killed, args=(str(tmp_path),)
    )
    child.start()
    child.join(60)
    assert child.exitcode == -signal.SIGKILL
    folder = tmp_path / TASK.id / "d1"
    crashed = load_demo(folder)
    assert crashed.status is DemoStatus.INCOMPLETE
    assert [step.performed for step in crashed.steps] == [False]

    phone = _device()  # still on the home screen: the tap never reached it
    session = RecordingSession.resume(phone, folder)
    assert session.demo.steps == ()
    dropped = session.dropped_step
    assert dropped is not None and dropped.action.element is not None
    assert dropped.action.element.text == "Display"
    assert load_demo(folder).steps == ()
    pending = session.capture()
    assert pending.step_index == 0
    assert session.check_resume(pending).same is True  # the kept screen is the live one
    session.act(TAP_DISPLAY)
    session.capture()
    demo = session.complete()
    activities = [step.observation.activity for step in demo.steps]
    assert activities == [HOME.activity, DISPLAY.activity]  # no step from home to home
    assert all(step.performed for step in load_demo(folder).steps)
    assert [action.point for action in phone.performed] == [TAP_DISPLAY.point]


def test_a_performed_step_is_kept_on_resume(tmp_path: Path) -> None:
    phone = _device()
    session = RecordingSession.start(phone, tmp_path, TASK, demo_id="d1")
    session.capture()
    session.act(TAP_DISPLAY)  # returns: the phone got it
    folder = tmp_path / TASK.id / "d1"
    assert [step.performed for step in load_demo(folder).steps] == [True]
    resumed = RecordingSession.resume(phone, folder)
    assert len(resumed.demo.steps) == 1 and resumed.dropped_step is None


def test_demo_files_without_the_field_read_as_performed(tmp_path: Path) -> None:
    phone = _device()
    session = RecordingSession.start(phone, tmp_path, TASK, demo_id="d1")
    session.capture()
    session.act(TAP_DISPLAY)
    text = (tmp_path / TASK.id / "d1" / "demo.json").read_text()
    assert '"performed"' not in text  # a performed step is written as before
    assert load_demo(tmp_path / TASK.id / "d1").steps[0].performed is True
