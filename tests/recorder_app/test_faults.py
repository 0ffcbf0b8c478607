"""Faults while recording: each is explained, nothing saved is lost, the studio keeps working."""

from __future__ import annotations

import errno

from graph_builder import io
from graph_builder.model import ActionType, DemoStatus
from recorder_app.recording import workspace as workspace_module
from tests.recorder_app.studio_driver import READY_TIMEOUT_MS, SERIAL, Recording, start_demo


def test_a_full_disk_refuses_the_action_before_the_phone_moves(
    qtbot, studio, workspace, virtual_server, monkeypatch
):
    window = studio()
    rec = Recording(qtbot, window, virtual_server.phones[0])
    start_demo(rec, "disk-full")
    rec.tap("Settings")
    rec.wait_ready()
    before = rec.phone.ground_truth()

    def no_space(path, data):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(io, "atomic_write_bytes", no_space)
    rec.tap("search_action_bar")
    qtbot.waitUntil(lambda: window.last_problem is not None, timeout=READY_TIMEOUT_MS)
    title, message = window.last_problem
    assert "not recorded" in title and "disk is full" in message
    qtbot.waitUntil(lambda: rec.page.recorder.ready)  # the same screen still waits for input
    assert rec.phone.ground_truth() == before  # the phone was not touched
    assert rec.acknowledge_problems() == 1

    monkeypatch.undo()  # space freed: the same action now goes through
    rec.tap("search_action_bar")
    rec.wait_ready()
    (folder,) = io.demo_dirs(workspace.demos_dir, "disk-full")
    demo = io.load_demo(folder)
    assert [s.action.type for s in demo.steps] == [ActionType.TAP, ActionType.TAP]
    assert demo.status is DemoStatus.INCOMPLETE
    assert rec.phone.ground_truth().startswith("settings/search")


def test_a_failing_hierarchy_dump_interrupts_and_retry_recovers(
    qtbot, studio, workspace, virtual_server
):
    window = studio()
    rec = Recording(qtbot, window, virtual_server.phones[0])
    start_demo(rec, "dump-fails")
    commands = virtual_server.device(SERIAL).commands
    working = commands["uiautomator"]

    def idle_state_never_reached(inv) -> int:
        inv.write("ERROR: could not get idle state.\n")
        return 1

    commands["uiautomator"] = idle_state_never_reached
    rec.tap("Settings")
    qtbot.waitUntil(lambda: window.last_problem is not None, timeout=30_000)
    assert rec.page.recorder.state == "interrupted"
    title, message = window.last_problem
    assert "could not be captured" in title and "Retry capture" in message
    assert "1 step is saved" in message
    assert rec.page.retry_action.isEnabled()
    rec.acknowledge_problems()

    commands["uiautomator"] = working
    rec.key_retry()
    rec.wait_ready()
    assert rec.truth[-1].startswith("settings/main")  # captured after the tap, as it should
    rec.page.complete_button.click()
    qtbot.waitUntil(lambda: rec.page.recorder.state == "finished", timeout=READY_TIMEOUT_MS)
    (folder,) = io.demo_dirs(workspace.demos_dir, "dump-fails")
    assert [s.action.type for s in io.load_demo(folder).steps] == [ActionType.TAP, ActionType.DONE]


def test_scrcpy_failing_to_start_falls_back_to_screenshots_and_says_why(qtbot, studio, monkeypatch):
    from devices import mirror
    from devices.errors import MirrorError

    def broken(device, max_size, max_fps):
        raise MirrorError("scrcpy-server exited: Aborted (core dumped)")

    monkeypatch.setitem(mirror.FRAME_SOURCES, "scrcpy", broken)
    window = studio(prefer="scrcpy")
    qtbot.waitUntil(lambda: "scrcpy unavailable" in window.mirror_label.text(), timeout=10_000)
    assert "core dumped" in window.mirror_label.text()
    assert window.record_page.mirror.device_size == (1080, 2400)  # screenshots mirror it


def test_a_read_only_workspace_is_explained_and_nothing_starts(
    qtbot, studio, workspace, monkeypatch
):
    window = studio()
    rec = Recording(qtbot, window, None)

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EROFS, "Read-only file system", str(workspace.demos_dir))

    monkeypatch.setattr(workspace_module.tempfile, "mkstemp", refuse)
    panel = rec.page.task_panel
    panel.id_edit.setText("ro")
    panel.instruction_edit.setPlainText("anything")
    assert not rec.page.start_demo()
    title, message = window.last_problem
    assert "not writable" in title and "read-only" in message
    assert rec.page.recorder.state == "idle"
    assert not (workspace.demos_dir / "ro").exists()


def test_phones_coming_and_going_are_followed_and_explained(qtbot, studio, virtual_server):
    from virtual_phone import fast_phone

    window = studio()
    bar = window.record_page.device_bar
    phone = virtual_server.phones[0]
    virtual_server.remove_phone(SERIAL)
    qtbot.waitUntil(lambda: "No phone attached" in bar.status_label.text(), timeout=10_000)
    assert bar.connected_serial is None
    assert window.record_page.mirror.device_size is None  # no stale picture of a lost phone
    virtual_server.add_phone(phone)
    virtual_server.add_phone(fast_phone("virtual-2"))
    qtbot.waitUntil(lambda: len(bar.serials) == 2, timeout=10_000)
    assert "2 phones attached" in bar.status_label.text()  # two: the user chooses
    assert bar.combo.itemText(0) == "ElderPhone Virtual · 1080×2400 · Android 14"
    bar.combo.setCurrentIndex(bar.combo.findData("virtual-2"))
    bar.connect_button.click()
    assert bar.connected_serial == "virtual-2"
    qtbot.waitUntil(lambda: window.record_page.mirror.device_size is not None, timeout=10_000)


def test_unexpected_errors_are_shown_in_a_dialog_and_the_studio_goes_on(qtbot, studio):
    import sys

    from PySide6.QtWidgets import QMessageBox

    from recorder_app.qt.app import install_excepthook

    window = studio()
    saved = sys.excepthook
    try:
        install_excepthook(window)
        try:
            raise RuntimeError("boom")
        except RuntimeError as exc:
            sys.excepthook(type(exc), exc, exc.__traceback__)
    finally:
        sys.excepthook = saved
    (box,) = [b for b in window.findChildren(QMessageBox) if b.isVisible()]
    assert "RuntimeError: boom" in box.text() and "Traceback" in box.detailedText()
    box.accept()
    assert window.record_page.device_bar.connected_serial == SERIAL
