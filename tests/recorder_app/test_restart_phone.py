"""Restart phone / Reconnect: the phone comes back without restarting the studio."""

from __future__ import annotations

import adbutils
import pytest
from PySide6.QtCore import Qt

from graph_builder import io
from graph_builder.model import ActionType, DemoStatus
from recorder_app import connection as connection_module
from recorder_app.qt.app import BuiltInPhone
from tests.recorder_app.studio_driver import (
    MIRROR_OPTIONS,
    READY_TIMEOUT_MS,
    SERIAL,
    Recording,
    open_studio,
    start_demo,
)
from virtual_phone import fast_phone

BACK_MS = 20_000


@pytest.fixture
def built_in():
    phone = BuiltInPhone(lambda: [fast_phone(SERIAL)]).start()
    yield phone
    phone.close()


def wait_back(qtbot, page) -> None:
    qtbot.waitUntil(lambda: not page.device_bar.busy, timeout=BACK_MS)
    qtbot.waitUntil(lambda: page.device_bar.connected_serial == SERIAL, timeout=BACK_MS)
    qtbot.waitUntil(lambda: page.mirror.device_size == (1080, 2400), timeout=BACK_MS)


def test_restart_phone_brings_a_fresh_phone_and_keeps_the_task_and_the_demo(
    qtbot, settings, workspace, built_in
):
    connection = built_in.connection(mirror_prefer="screencap", **MIRROR_OPTIONS)
    window = open_studio(qtbot, settings, workspace, built_in.port, connection=connection)
    page = window.record_page
    assert built_in.server is not None
    old_phone = built_in.server.phones[0]
    rec = Recording(qtbot, window, old_phone)
    start_demo(rec, "before-restart")
    rec.tap("Settings")
    rec.wait_ready()
    assert old_phone.ground_truth().startswith("settings/main")
    panel = page.task_panel
    panel.instruction_edit.setPlainText("open the settings, please")
    shell = adbutils.AdbClient(host="127.0.0.1", port=built_in.port).device(SERIAL).shell
    assert shell("virtualphone snapshot save in-settings").strip() == "OK"

    restart = page.device_bar.restart_button
    assert restart.text() == "Restart phone" == page.restart_action.text()
    qtbot.mouseClick(restart, Qt.MouseButton.LeftButton)
    # Progress while it restarts; nothing to click twice.
    assert page.device_bar.progress.isVisibleTo(page) and not restart.isEnabled()
    assert "Restarting" in page.device_bar.status_label.text()
    wait_back(qtbot, page)
    assert not page.device_bar.progress.isVisibleTo(page) and restart.isEnabled()

    new_phone = built_in.server.phones[0]
    assert new_phone is not old_phone  # a fresh phone, on its home screen
    assert new_phone.ground_truth().startswith("launcher/home")
    # Its saved snapshots survive: a reset recipe naming one still loads it.
    assert shell("virtualphone snapshot list").split() == ["in-settings"]
    assert shell("virtualphone snapshot load in-settings").strip() == "OK"
    assert new_phone.ground_truth().startswith("settings/main")
    shell("input keyevent KEYCODE_HOME")
    qtbot.waitUntil(lambda: new_phone.ground_truth().startswith("launcher/home"))
    # The demo was stopped for the restart, kept with its step, and can be resumed.
    qtbot.waitUntil(lambda: not page.recorder.recording, timeout=READY_TIMEOUT_MS)
    (folder,) = io.demo_dirs(workspace.demos_dir, "before-restart")
    demo = io.load_demo(folder)
    assert demo.status is DemoStatus.INCOMPLETE
    assert [s.action.type for s in demo.steps] == [ActionType.TAP]
    # The task form is as it was, and the next demo records on the fresh phone.
    assert panel.id_edit.text() == "before-restart"
    assert panel.instruction_edit.toPlainText() == "open the settings, please"
    rec.phone = new_phone
    page.start_button.click()
    rec.wait_ready()
    rec.tap("Settings")
    rec.wait_ready()
    qtbot.waitUntil(lambda: new_phone.ground_truth().startswith("settings/main"))
    page.stop_action.trigger()
    qtbot.waitUntil(lambda: not page.recorder.recording, timeout=READY_TIMEOUT_MS)
    second = [f for f in io.demo_dirs(workspace.demos_dir, "before-restart") if f != folder]
    assert len(second) == 1
    assert io.load_demo(second[0]).instruction == "open the settings, please"


def test_a_failed_restart_says_why_and_can_be_tried_again(
    qtbot, settings, workspace, built_in, monkeypatch
):
    connection = built_in.connection(mirror_prefer="screencap", **MIRROR_OPTIONS)
    window = open_studio(qtbot, settings, workspace, built_in.port, connection=connection)
    page = window.record_page

    def broken():
        raise OSError("no space left for the phone's storage")

    monkeypatch.setattr(built_in, "_make_phones", broken)
    page.restart_action.trigger()
    qtbot.waitUntil(lambda: window.last_problem is not None, timeout=BACK_MS)
    title, message = window.last_problem
    assert title == "Cannot restart the phone"
    assert "Could not restart the built-in virtual phone" in message
    assert "no space left" in message
    assert not page.device_bar.busy and page.restart_action.isEnabled()
    assert page.device_bar.connected_serial is None

    monkeypatch.setattr(built_in, "_make_phones", lambda: [fast_phone(SERIAL)])
    page.restart_action.trigger()
    wait_back(qtbot, page)


def test_reconnect_brings_a_real_phone_back_or_says_it_did_not_come(
    qtbot, studio, virtual_server, monkeypatch
):
    window = studio()
    page = window.record_page
    assert page.restart_action.text() == "Reconnect phone"
    page.device_bar.restart_button.click()
    assert page.device_bar.busy
    wait_back(qtbot, page)
    assert window.last_problem is None

    monkeypatch.setattr(connection_module, "RECONNECT_TIMEOUT_S", 1.0)
    virtual_server.remove_phone(SERIAL)  # the cable is out
    page.device_bar.restart_button.click()
    qtbot.waitUntil(lambda: window.last_problem is not None, timeout=BACK_MS)
    title, message = window.last_problem
    assert title == "Cannot reconnect"
    assert f"the phone {SERIAL} did not come back within 1 s" in message
    assert "adb does not list it" in message
    assert not page.device_bar.busy
