"""Recording on the virtual phone purely through mouse and key events on the studio window."""

from __future__ import annotations

import io as bytes_io

import numpy as np
from PIL import Image
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from graph_builder import io
from graph_builder.model import ActionType, DemoStatus
from recorder_app.qt.demo_browser import DemoBrowser
from tests.recorder_app.studio_driver import READY_TIMEOUT_MS, SERIAL, Recording, start_demo


def decoded(path) -> np.ndarray:
    return np.asarray(Image.open(bytes_io.BytesIO(io.read_png(path))).convert("RGB"))


def test_a_demo_recorded_with_mouse_and_keys_pairs_each_action_with_its_screen(
    qtbot, studio, workspace, virtual_server
):
    window = studio()
    rec = Recording(qtbot, window, virtual_server.phones[0])
    start_demo(rec)
    refused: list[str] = []
    rec.page.recorder.input_refused.connect(refused.append)

    rec.tap("Settings")
    assert rec.mirror.flashing  # the accepted tap is marked where it landed
    # A click while the recorder performs and captures is refused, never recorded.
    qtbot.mouseClick(rec.mirror, Qt.MouseButton.LeftButton, pos=rec.point(540, 1200))
    assert refused and "not recorded" in refused[-1]
    assert rec.mirror._busy_message  # the busy overlay is up
    rec.wait_ready()
    # The refusal stays readable after the recorder is ready again.
    assert rec.mirror.notice == refused[-1]
    assert "1 step saved" in rec.page.state_label.text()
    assert "last capture" in rec.page.state_label.text()
    rec.tap("search_action_bar")
    rec.wait_ready()
    rec.type_text("wifi")
    rec.wait_ready()
    rec.long_press("wifi")
    rec.wait_ready()
    rec.key(Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)  # back: hides the keyboard
    rec.wait_ready()
    rec.key(Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)  # back: to Settings
    rec.wait_ready()
    rec.swipe((540, 1800), (540, 700))
    rec.wait_ready()
    rec.key(Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # task complete
    qtbot.waitUntil(lambda: rec.page.recorder.state == "finished", timeout=READY_TIMEOUT_MS)

    (folder,) = io.demo_dirs(workspace.demos_dir, "wifi-search")
    demo = io.load_demo(folder)
    assert demo.status is DemoStatus.COMPLETE and demo.annotator == "a01"
    assert demo.device.model == "ElderPhone Virtual"
    kinds = [s.action.type for s in demo.steps]
    assert kinds == [
        ActionType.TAP,
        ActionType.TAP,
        ActionType.TYPE,
        ActionType.LONG_PRESS,
        ActionType.BACK,
        ActionType.BACK,
        ActionType.SWIPE,
        ActionType.DONE,
    ]
    tap, search, typed, press, _, _, swipe, _ = (s.action for s in demo.steps)
    # Actions are in device pixels, with the element under the pointer.
    assert tap.screen == (1080, 2400) and tap.element.text == "Settings"
    assert tap.element.bounds.contains(tap.x, tap.y)
    assert search.element.resource_id.endswith("search_action_bar")
    assert typed.text == "wifi"
    assert press.element.class_name == "android.widget.EditText"
    assert press.duration_ms >= 600
    assert swipe.direction == "up" and abs(swipe.y - 1800) < 10 and abs(swipe.y2 - 700) < 10
    # Each screenshot shows the screen the action was taken on, never the one after it.
    assert len(rec.pixels) == len(demo.steps)
    for step, before in zip(demo.steps, rec.pixels, strict=True):
        assert step.observation.phash and step.observation.hierarchy
        saved = decoded(folder / step.observation.screenshot)
        assert np.array_equal(saved, before), f"step {step.index} shows another screen"
    assert rec.truth[0].startswith("launcher/home") and rec.truth[1].startswith("settings/main")
    assert demo.steps[1].observation.activity.startswith("com.android.settings/")

    # The Demos tab shows the saved demonstration.
    browser: DemoBrowser = window.demo_browser
    window.show_page("demos")
    assert browser.select_demo(folder)
    assert browser.tree.topLevelItem(0).text(0) == "wifi-search  (1 demo)"
    assert browser.step_label.text().startswith("Step 1 of 8: tap")
    assert browser.viewer.has_image


def test_killing_the_phone_server_mid_demo_keeps_an_incomplete_demo_that_resumes(
    qtbot, studio, workspace, virtual_server
):
    window = studio()
    from virtual_phone import fast_phone, running_server

    rec = Recording(qtbot, window, virtual_server.phones[0])
    start_demo(rec, "settings-open")
    rec.tap("Settings")
    rec.wait_ready()
    port = virtual_server.port
    virtual_server.close()
    # Either the tap fails or the device bar notices first: one fault, one dialog.
    rec.click("search_action_bar")
    qtbot.waitUntil(lambda: window.last_problem is not None, timeout=READY_TIMEOUT_MS)
    qtbot.waitUntil(lambda: not rec.page.recorder.recording, timeout=READY_TIMEOUT_MS)
    (folder,) = io.demo_dirs(workspace.demos_dir, "settings-open")
    demo = io.load_demo(folder)
    assert demo.status is DemoStatus.INCOMPLETE
    assert [s.action.type for s in demo.steps] == [ActionType.TAP]  # the failed tap is not kept
    assert "disconnect" in window.last_problem[0].lower() + window.last_problem[1].lower()
    assert rec.acknowledge_problems() == 1  # one dialog for one fault

    with running_server(phones=[fast_phone(SERIAL)], port=port) as server:
        rec.phone = server.phones[0]
        qtbot.waitUntil(lambda: rec.page.device_bar.connected_serial == SERIAL, timeout=10_000)
        window.demo_browser.refresh()
        assert window.demo_browser.select_demo(folder)
        window.demo_browser.resume_button.click()
        # The fresh phone shows its home screen, not Settings where the demo stopped.
        qtbot.waitUntil(
            lambda: rec.page.resume_dialog is not None and rec.page.recorder.state == "confirming",
            timeout=READY_TIMEOUT_MS,
        )
        dialog = rec.page.resume_dialog
        assert (
            "does not show the screen the demonstration stopped on"
            in dialog.findChild(QLabel, "resumeCheckText").text()
        )
        # Input waits for the user's answer.
        qtbot.mouseClick(rec.mirror, Qt.MouseButton.LeftButton, pos=rec.point(540, 1200))
        assert not rec.page.recorder.ready
        dialog.continue_button.click()
        rec.wait_ready()
        assert rec.page.steps_list.count() == 1  # the saved step is listed again
        rec.tap("Settings")
        rec.wait_ready()
        rec.page.complete_button.click()
        qtbot.waitUntil(lambda: rec.page.recorder.state == "finished", timeout=READY_TIMEOUT_MS)
        window.record_page.feed.stop_now()
    demo = io.load_demo(folder)
    assert demo.status is DemoStatus.COMPLETE
    assert [s.action.type for s in demo.steps] == [ActionType.TAP, ActionType.TAP, ActionType.DONE]


def test_after_task_complete_the_next_demo_starts_without_a_restart(
    qtbot, studio, workspace, virtual_server
):
    window = studio()
    rec = Recording(qtbot, window, virtual_server.phones[0])
    for task_id in ("first-demo", "second-demo"):
        start_demo(rec, task_id)
        rec.tap("Settings")
        rec.wait_ready()
        rec.key(Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # task complete
        qtbot.waitUntil(lambda: not rec.page.recorder.recording, timeout=READY_TIMEOUT_MS)
        # The demo is closed: the Record tab takes the next task and the next Start demo.
        assert rec.page.start_button.isEnabled() and rec.page.start_action.isEnabled()
        assert rec.page.task_panel.isEnabled()
        assert not rec.page.stop_action.isEnabled()
        rec.key(Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)  # refused: no demo open
    for task_id in ("first-demo", "second-demo"):
        (folder,) = io.demo_dirs(workspace.demos_dir, task_id)
        demo = io.load_demo(folder)
        assert demo.status is DemoStatus.COMPLETE
        assert [s.action.type for s in demo.steps] == [ActionType.TAP, ActionType.DONE]


def test_resume_compares_the_phone_with_where_the_demo_stopped(
    qtbot, studio, workspace, virtual_server
):
    window = studio()
    rec = Recording(qtbot, window, virtual_server.phones[0])
    start_demo(rec, "resume-check")
    rec.tap("Settings")
    rec.wait_ready()
    rec.page.stop_action.trigger()  # the demo stays incomplete, the phone in Settings
    qtbot.waitUntil(lambda: not rec.page.recorder.recording, timeout=READY_TIMEOUT_MS)
    (folder,) = io.demo_dirs(workspace.demos_dir, "resume-check")
    messages: list[str] = []
    window.record_page.message_posted.connect(lambda text, _: messages.append(text))

    # Same screen: no question, recording goes on.
    rec.page.resume_demo(str(folder))
    rec.wait_ready()
    assert rec.page.resume_dialog is None
    assert any("shows the screen the demonstration stopped on" in m for m in messages)
    rec.page.stop_action.trigger()
    qtbot.waitUntil(lambda: not rec.page.recorder.recording, timeout=READY_TIMEOUT_MS)

    # Another screen: the user is asked, and Discard keeps the files but marks it discarded.
    rec.phone.key(3)  # KEYCODE_HOME, pressed on the phone itself
    rec.page.resume_demo(str(folder))
    qtbot.waitUntil(lambda: rec.page.resume_dialog is not None, timeout=READY_TIMEOUT_MS)
    rec.page.resume_dialog.discard_button.click()
    qtbot.waitUntil(lambda: not rec.page.recorder.recording, timeout=READY_TIMEOUT_MS)
    demo = io.load_demo(folder)
    assert demo.status is DemoStatus.DISCARDED
    assert [s.action.type for s in demo.steps] == [ActionType.TAP]
    assert rec.page.start_button.isEnabled()


def test_steps_recorded_behind_the_demos_tab_are_listed_when_it_is_shown(
    qtbot, studio, workspace, virtual_server, monkeypatch
):
    """Each saved step used to re-read every demo of the workspace on the GUI thread
    while the next screen was being captured; now the hidden Demos tab catches up once,
    when it is shown."""
    window = studio()
    rec = Recording(qtbot, window, virtual_server.phones[0])
    start_demo(rec)
    reads: list[str | None] = []
    read_all = type(workspace).demo_summaries
    monkeypatch.setattr(
        type(workspace),
        "demo_summaries",
        lambda self, task_id=None: reads.append(task_id) or read_all(self, task_id),
    )
    rec.tap("Settings")
    rec.wait_ready()
    rec.tap("search_action_bar")
    rec.wait_ready()
    assert reads == []  # the Record tab is in front: nothing re-read per step
    window.show_page("demos")
    assert len(reads) == 1
    browser: DemoBrowser = window.demo_browser
    (folder,) = io.demo_dirs(workspace.demos_dir, "wifi-search")
    assert browser.select_demo(folder)
    assert browser.step_label.text().startswith("Step 1 of 2: tap")
    window.show_page("record")
    window.show_page("demos")
    assert len(reads) == 1  # nothing changed in between: no second read
