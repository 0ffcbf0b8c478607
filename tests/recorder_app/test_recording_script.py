"""Scripted recording through the studio's RecordingSession, on an in-memory device."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from devices.android import AndroidDevice, adb_client
from devices.device_lock import DeviceBusyError, DeviceLock, device_holder, lock_address
from devices.errors import DeviceDisconnectedError
from devices.fake import FakeDevice
from evaluator.synthetic import render_screen
from graph_builder.io import load_demo
from graph_builder.model import Action, ActionType, DemoStatus, ResetRecipe, SettingValue, Task
from graph_builder.screen import Screen
from recorder_app.errors import RecordingError
from recorder_app.recording.script import record_script
from recorder_app.recording.session import PendingStep

SIZE = (540, 1200)
APP = "com.example.app"
TASK = Task("open_display", "open display", app=APP)
HOME = render_screen("Home", ["Display", "Sound"], app=APP, activity=f"{APP}/.Home")
DISPLAY = render_screen("Display", ["Font size"], app=APP, activity=f"{APP}/.Display")


def screen(drawn) -> Screen:
    return Screen(SIZE, png=drawn.png, hierarchy_xml=drawn.xml, activity=drawn.activity)


def device() -> FakeDevice:
    def transition(at: str, action: Action) -> str:
        x, y = action.to_device(SIZE).point or (0, 0)
        return "display" if at == "home" and HOME.buttons["Display"].contains(x, y) else at

    return FakeDevice({"home": screen(HOME), "display": screen(DISPLAY)}, "home", transition)


def tap_display_then_done(pending: PendingStep) -> Action:
    if pending.step_index == 1:
        return Action.done()
    assert pending.hierarchy is not None
    element = pending.hierarchy.find(text="Display")[0]
    return Action.tap(*element.bounds.center, screen=pending.screen.size)


def test_a_scripted_demo_is_stored_like_a_recorded_one(tmp_path: Path) -> None:
    phone = device()
    demo = record_script(
        phone,
        tmp_path,
        TASK,
        tap_display_then_done,
        reset=ResetRecipe(APP),
        demo_id="d1",
        clock=lambda: 7.0,
    )
    assert phone.resets == [ResetRecipe(APP)] and phone.current == "display"
    saved = load_demo(tmp_path / TASK.id / "d1")
    assert saved == demo and saved.status is DemoStatus.COMPLETE and saved.source == "scripted"
    assert saved.created == 7.0 and saved.device is not None and saved.device.width == 540
    tap, done = saved.steps
    assert tap.action.type is ActionType.TAP and done.action.type is ActionType.DONE
    # the recorder names the tapped element from the pre-action hierarchy
    assert tap.action.element is not None and tap.action.element.text == "Display"
    assert [s.observation.activity for s in saved.steps] == [HOME.activity, DISPLAY.activity]
    assert all(s.observation.phash for s in saved.steps)
    folder = tmp_path / TASK.id / "d1"
    assert (folder / tap.observation.screenshot).read_bytes() == HOME.png


def test_a_failed_action_leaves_an_incomplete_demo_without_its_step(tmp_path: Path) -> None:
    phone = device()
    phone.fail_next("perform")
    with pytest.raises(DeviceDisconnectedError):
        record_script(phone, tmp_path, TASK, tap_display_then_done, demo_id="d1")
    saved = load_demo(tmp_path / TASK.id / "d1")
    assert saved.status is DemoStatus.INCOMPLETE and saved.steps == ()


def test_a_script_that_never_says_done_stops_at_max_steps(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match="did not say done within 3 steps"):
        record_script(device(), tmp_path, TASK, lambda p: Action.back(), max_steps=3)
    (folder,) = (tmp_path / TASK.id).iterdir()
    saved = load_demo(folder)
    assert saved.status is DemoStatus.INCOMPLETE and len(saved.steps) == 3


def test_a_scripted_demo_starts_from_the_tasks_own_reset_recipe(tmp_path):
    """No reset given: the task's recipe runs (its settings first) before step 0."""
    phone = device()
    recipe = ResetRecipe(APP, settings=(SettingValue("system", "font_scale", "1.0"),))
    task = dataclasses.replace(TASK, reset=recipe)
    record_script(phone, tmp_path, task, lambda pending: Action.done(), demo_id="d1")
    assert phone.resets == [recipe]
    record_script(phone, tmp_path, TASK, lambda pending: Action.done(), demo_id="d2")
    assert phone.resets == [recipe]  # a task without a recipe resets nothing


def test_a_scripted_recording_holds_the_phone_and_is_refused_one_held_elsewhere(tmp_path):
    """Two holders of one phone: the scripted recording takes the same device lock as the
    Record tab and an online run, so it is refused (naming the holder, before anything is
    reset or written) while another holds the phone, and others are refused while it
    records."""
    phone = device()
    held = DeviceLock(phone.serial, owner="the Record tab", command="demo d0")
    with held, pytest.raises(DeviceBusyError, match="in use by the Record tab"):
        record_script(phone, tmp_path, TASK, tap_display_then_done, demo_id="d1")
    assert phone.resets == [] and not (tmp_path / TASK.id).exists()

    seen: list[str] = []

    def script(pending: PendingStep) -> Action:
        holder = device_holder(phone.serial)
        assert holder is not None
        seen.append(holder.owner)
        with pytest.raises(DeviceBusyError, match="in use by a scripted recording"):
            DeviceLock(phone.serial, owner="the Evaluate tab", command="a run").acquire()
        return tap_display_then_done(pending)

    record_script(phone, tmp_path, TASK, script, demo_id="d2")
    assert seen == ["a scripted recording"] * 2
    assert device_holder(phone.serial) is None  # let go at the end


def test_a_phone_on_an_adb_server_is_locked_under_its_server_address(virtual_server, tmp_path):
    phone = AndroidDevice("virtual-1", client=adb_client(port=virtual_server.port))
    address = f"virtual-1@127.0.0.1:{virtual_server.port}"
    assert lock_address(phone) == address
    held = DeviceLock(address, owner="the Record tab", command="demo d0")
    with held, pytest.raises(DeviceBusyError, match="in use by the Record tab"):
        record_script(phone, tmp_path, TASK, lambda pending: Action.done(), demo_id="d1")
