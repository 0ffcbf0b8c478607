"""Free drive: the mirror moves the phone outside a recording and nothing becomes a step."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from devices.android import AndroidDevice
from devices.device_lock import DeviceLock, device_holder
from graph_builder import io
from graph_builder.model import ActionType
from recorder_app.qt.mirror_view import BADGE_HEIGHT
from recorder_app.qt.record_page import FREE_DRIVE_BADGE
from tests.recorder_app.helpers import on_server
from tests.recorder_app.studio_driver import READY_TIMEOUT_MS, SERIAL, Recording, start_demo


def centre_of(adb_client, label: str) -> tuple[int, int]:
    """Where the element labelled ``label`` is on the phone now (device pixels)."""
    device = AndroidDevice(SERIAL, client=adb_client)
    try:
        hierarchy = device.observe().hierarchy()
    finally:
        device.close()
    assert hierarchy is not None
    element = next(e for e in hierarchy.visible() if e.label() == label)
    x, y = element.bounds.center
    return round(x), round(y)


def click_device_point(qtbot, rec: Recording, point: tuple[int, int]) -> None:
    target = rec.point(*point)
    qtbot.mouseMove(rec.mirror, target + QPoint(1, 1))
    qtbot.mouseClick(rec.mirror, Qt.MouseButton.LeftButton, pos=target)


def test_a_tap_in_free_drive_moves_the_phone_and_the_next_demo_starts_with_no_step(
    qtbot, studio, workspace, virtual_server, adb_client
):
    window = studio()
    page = window.record_page
    phone = virtual_server.phones[0]
    rec = Recording(qtbot, window, phone)
    assert phone.ground_truth().startswith("launcher/home")
    settings_icon = centre_of(adb_client, "Settings")

    # Off: a click on the mirror is refused and says how to drive the phone anyway.
    refused: list[str] = []
    page.recorder.input_refused.connect(refused.append)
    click_device_point(qtbot, rec, settings_icon)
    assert refused and "Free drive" in refused[-1]
    assert page.mirror.badge is None

    page.free_drive_button.click()
    assert page.free_drive_action.isChecked() and page.free_driving
    assert page.mirror.badge == FREE_DRIVE_BADGE
    assert page.mirror.image_rect().y >= BADGE_HEIGHT  # the band hides none of the screen
    assert FREE_DRIVE_BADGE in page.state_label.text()
    # free drive owns the phone like a demonstration does
    holder = device_holder(on_server(virtual_server.port, SERIAL))
    assert holder is not None and holder.command == "free drive"
    assert page.home_action.isEnabled() and page.text_edit.isEnabled()
    assert not page.wait_action.isEnabled() and not page.complete_action.isEnabled()

    click_device_point(qtbot, rec, settings_icon)
    qtbot.waitUntil(lambda: phone.ground_truth().startswith("settings/main"), timeout=10_000)
    rec.key(Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)  # Home, unrecorded
    qtbot.waitUntil(lambda: phone.ground_truth().startswith("launcher/home"), timeout=10_000)
    click_device_point(qtbot, rec, settings_icon)
    qtbot.waitUntil(lambda: phone.ground_truth().startswith("settings/main"), timeout=10_000)
    qtbot.waitUntil(lambda: not page.free_drive.busy, timeout=10_000)
    assert refused == refused[:1]  # nothing more was refused
    assert not workspace.demos_dir.exists() or not any(workspace.demos_dir.rglob("demo.json"))
    assert page.steps_list.count() == 0

    # A demo started now records from where free drive left the phone, with no step.
    start_demo(rec, "from-free-drive")
    assert not page.free_drive_action.isChecked() and page.mirror.badge is None
    assert page.steps_list.count() == 0
    assert rec.truth[-1].startswith("settings/main")
    (folder,) = io.demo_dirs(workspace.demos_dir, "from-free-drive")
    assert len(io.load_demo(folder).steps) == 0
    holder = device_holder(on_server(virtual_server.port, SERIAL))
    assert holder is not None and holder.command.startswith("demonstration")
    assert not page.free_drive_action.isEnabled()  # no free drive while recording
    rec.tap("search_action_bar")
    rec.wait_ready()
    rec.key(Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not page.recorder.recording, timeout=READY_TIMEOUT_MS)
    steps = io.load_demo(folder).steps
    assert [s.action.type for s in steps] == [ActionType.TAP, ActionType.DONE]
    # the demo closed and free drive is off
    assert device_holder(on_server(virtual_server.port, SERIAL)) is None


def test_free_drive_waits_for_a_phone_another_tab_holds_and_ends_when_asked(
    qtbot, studio, virtual_server
):
    window = studio()
    page = window.record_page
    other = DeviceLock(
        on_server(virtual_server.port, SERIAL), owner="the Evaluate tab", command="online run"
    )
    other.acquire()
    try:
        page.free_drive_button.click()
        assert not page.free_drive_action.isChecked() and not page.free_driving
        assert page.owner.busy_dialog is not None  # says who holds the phone
        page.owner.busy_dialog.reject()
    finally:
        other.release()
    page.free_drive_button.click()
    assert page.free_driving
    # The Evaluate tab wants the phone: it is told who holds it, and "Stop it" ends free
    # drive; waiting then gets the phone at once.
    started: list[bool] = []
    evaluate = window.eval_page.owner
    assert not evaluate.when_free([SERIAL], lambda: started.append(True))
    dialog = evaluate.busy_dialog
    assert dialog is not None and "(free drive;" in dialog.text.text()
    dialog.stop_button.click()
    assert not page.free_driving and page.mirror.badge is None
    assert device_holder(on_server(virtual_server.port, SERIAL)) is None
    dialog.wait_button.click()
    qtbot.waitUntil(lambda: started == [True], timeout=5_000)


def test_after_stop_free_drive_brings_the_phone_back_and_the_demo_resumes_there(
    qtbot, studio, workspace, virtual_server, adb_client
):
    window = studio()
    page = window.record_page
    phone = virtual_server.phones[0]
    rec = Recording(qtbot, window, phone)
    start_demo(rec, "stopped-then-resumed")
    rec.tap("Settings")
    rec.wait_ready()
    page.stop_action.trigger()  # stop, to resume later
    qtbot.waitUntil(lambda: not page.recorder.recording, timeout=READY_TIMEOUT_MS)
    (folder,) = io.demo_dirs(workspace.demos_dir, "stopped-then-resumed")

    # The phone wandered off meanwhile; free drive brings it back, unrecorded.
    rec.key(Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)  # free drive on
    assert page.free_driving
    rec.key(Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: phone.ground_truth().startswith("launcher/home"), timeout=10_000)
    click_device_point(qtbot, rec, centre_of(adb_client, "Settings"))
    qtbot.waitUntil(lambda: phone.ground_truth().startswith("settings/main"), timeout=10_000)
    qtbot.waitUntil(lambda: not page.free_drive.busy, timeout=10_000)

    assert page.resume_demo(str(folder))
    rec.wait_ready()
    # The phone is where the demo stopped: no "another screen" question, no jump.
    assert page.resume_dialog is None and not page.free_driving
    assert page.steps_list.count() == 1
    rec.tap("search_action_bar")
    rec.wait_ready()
    page.complete_button.click()
    qtbot.waitUntil(lambda: not page.recorder.recording, timeout=READY_TIMEOUT_MS)
    steps = io.load_demo(folder).steps
    assert [s.action.type for s in steps] == [ActionType.TAP, ActionType.TAP, ActionType.DONE]
    assert not any(s.jumped for s in steps)
