"""What silently damaged a researcher's data (issue 23), driven through the real widgets on
the virtual phone: a demonstration after a system change starts clean (and a phone that
does not show the task's START is reported before the first step), a paused online run
keeps the phone, and a resumed demonstration records its jump instead of an edge."""

from __future__ import annotations

import io as bytes_io

import numpy as np
from PIL import Image
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from devices.device_lock import device_holder
from graph_builder import io
from graph_builder.build import build_workspace
from graph_builder.merge import DemoInput, merge_demonstrations
from graph_builder.model import Action, ActionType, DemoStatus, MemberRef
from graph_builder.similarity import SimilaritySettings
from recorder_app.qt.eval_panel.settings import SAMPLE_SUITE
from recorder_app.qt.record_page import RECORD_TAB
from tests.recorder_app.helpers import on_server
from tests.recorder_app.studio_driver import READY_TIMEOUT_MS, SERIAL, Recording

RUN_TIMEOUT_MS = 120_000
SETTINGS_APP = "com.android.settings"


def pixels(folder, step: int) -> np.ndarray:
    demo = io.load_demo(folder)
    png = io.read_png(folder / demo.steps[step].observation.screenshot)
    return np.asarray(Image.open(bytes_io.BytesIO(png)).convert("RGB"))


def font_scale(adb_client) -> str:
    return adb_client.device(SERIAL).shell("settings get system font_scale").strip()


def make_font_large(adb_client) -> None:
    """What the researcher did on the phone between two demonstrations."""
    adb_client.device(SERIAL).shell("settings put system font_scale 1.15")
    assert font_scale(adb_client) == "1.15"


def new_task(rec: Recording, task_id: str, app: str) -> None:
    panel = rec.page.task_panel
    panel.task_combo.setCurrentIndex(panel.task_combo.findData(""))  # "New task…"
    panel.id_edit.setText(task_id)
    panel.instruction_edit.setPlainText("the letters are too big again")
    panel.app_edit.setText(app)
    panel.annotator_edit.setText("a01")


def start(rec: Recording) -> None:
    rec.key(Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)  # Start demo


def complete(rec: Recording, qtbot) -> None:
    rec.key(Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # Task complete
    qtbot.waitUntil(lambda: not rec.page.recorder.recording, timeout=READY_TIMEOUT_MS)


def record_display(rec: Recording, qtbot) -> None:
    start(rec)
    rec.wait_ready()
    rec.click("Display")
    rec.wait_ready()
    complete(rec, qtbot)


def test_a_demonstration_after_a_font_change_starts_from_the_task_reset(
    qtbot, studio, workspace, virtual_server, adb_client
):
    window = studio()
    rec = Recording(qtbot, window, virtual_server.phones[0])
    panel = rec.page.task_panel
    new_task(rec, "font-reset", SETTINGS_APP)
    # A new task's form offers to restore the settings most often left changed.
    assert "system font_scale 1.0" in panel.settings_edit.toPlainText().splitlines()
    rec.page.reset_check.setChecked(True)
    record_display(rec, qtbot)
    make_font_large(adb_client)
    record_display(rec, qtbot)
    assert font_scale(adb_client) == "1.0"
    first, second = io.demo_dirs(workspace.demos_dir, "font-reset")
    # Both demonstrations start on the very same screen, the font restored.
    assert np.array_equal(pixels(first, 0), pixels(second, 0))
    saved = workspace.load_task("default", "font-reset").reset
    assert saved is not None and saved.package == SETTINGS_APP
    assert ("system", "font_scale", "1.0") in {
        (s.namespace, s.key, s.value) for s in saved.settings
    }

    # With an empty package field the settings are still restored (and the phone goes home).
    new_task(rec, "font-reset-home", "")
    panel.settings_edit.setPlainText("system font_scale 1.0")
    make_font_large(adb_client)
    start(rec)
    rec.wait_ready()
    assert font_scale(adb_client) == "1.0"
    assert rec.page.recorder.screen.screen.activity.startswith("com.android.launcher")
    complete(rec, qtbot)

    # Once the task has a graph, a phone that does not show its START is reported before
    # the first step, with both screens; the reset recipe then puts it right.
    (report,) = build_workspace(
        workspace.demos_dir,
        workspace.suite_dir("default"),
        settings=SimilaritySettings(),
        tasks=["font-reset"],
    )
    assert report.written
    panel.select_task("default", "font-reset")
    rec.page.reset_check.setChecked(False)
    rec.phone.key(3)  # KEYCODE_HOME on the phone: not where the task starts
    start(rec)
    qtbot.waitUntil(lambda: rec.page.start_dialog is not None, timeout=READY_TIMEOUT_MS)
    dialog = rec.page.start_dialog
    text = dialog.findChild(QLabel, "resumeCheckText").text()
    assert "does not show the task's START" in text
    shown = [label for label in dialog.findChildren(QLabel) if not label.pixmap().isNull()]
    assert len(shown) == 2  # the graph's START beside what the phone shows
    assert not rec.page.recorder.ready  # no input is recorded meanwhile
    assert not rec.page.submit(Action.back())
    dialog.discard_button.click()
    qtbot.waitUntil(lambda: not rec.page.recorder.recording, timeout=READY_TIMEOUT_MS)
    rec.page.reset_check.setChecked(True)
    start(rec)
    rec.wait_ready()
    assert rec.page.start_dialog is None
    complete(rec, qtbot)
    statuses = [io.load_demo(f).status for f in io.demo_dirs(workspace.demos_dir, "font-reset")]
    assert statuses.count(DemoStatus.DISCARDED) == 1
    assert statuses.count(DemoStatus.COMPLETE) == 3


def choose(combo, data: str) -> None:
    index = combo.findData(data)
    assert index >= 0, f"{data!r} is not offered"
    combo.setCurrentIndex(index)


def check_device(qtbot, form) -> None:
    devices = form.device_list
    qtbot.waitUntil(
        lambda: any(
            devices.item(i).data(Qt.ItemDataRole.UserRole) == SERIAL for i in range(devices.count())
        ),
        timeout=10_000,
    )
    for i in range(devices.count()):
        if devices.item(i).data(Qt.ItemDataRole.UserRole) == SERIAL:
            devices.item(i).setCheckState(Qt.CheckState.Checked)


def test_a_paused_online_run_keeps_the_phone_and_record_says_who_holds_it(
    qtbot, studio, workspace, virtual_server
):
    window = studio()
    rec = Recording(qtbot, window, virtual_server.phones[0])
    window.show_page("evaluate")
    page = window.eval_page
    form = page.form
    choose(form.suite_combo, str(SAMPLE_SUITE))
    choose(form.protocol_filter, "online")
    choose(form.app_filter, "com.elderphone.weather")  # two tasks
    choose(form.run_protocol, "")
    choose(form.agent_combo, "replay")
    check_device(qtbot, form)
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    assert page.last_problem is None, page.last_problem
    page.pause_button.click()
    assert page.run is not None and page.run.paused
    qtbot.waitUntil(
        lambda: device_holder(on_server(virtual_server.port, SERIAL)) is not None, timeout=10_000
    )

    window.show_page("record")
    new_task(rec, "while-paused", SETTINGS_APP)
    start(rec)
    qtbot.waitUntil(lambda: rec.page.owner.busy_dialog is not None, timeout=5_000)
    dialog = rec.page.owner.busy_dialog
    said = dialog.text.text()
    assert "the Evaluate tab" in said and "online run" in said and "this studio" in said
    # The demonstration did not take the phone: nothing recorded, the run still paused.
    assert not rec.page.recorder.recording
    assert io.demo_dirs(workspace.demos_dir, "while-paused") == []
    assert page.run.running and page.run.paused
    assert device_holder(on_server(virtual_server.port, SERIAL)).owner == "the Evaluate tab"

    # "Stop it" stops the run here; the demonstration then starts by itself.
    assert dialog.stop_button.isEnabled()
    dialog.stop_button.click()
    qtbot.waitUntil(lambda: not page.run.running, timeout=RUN_TIMEOUT_MS)
    rec.wait_ready()
    assert rec.page.owner.busy_dialog is None
    assert device_holder(on_server(virtual_server.port, SERIAL)).owner == RECORD_TAB

    # The other way round: a run does not start while the demonstration holds the phone;
    # the Evaluate tab says so, and "Stop it" stops the demo (kept incomplete), then runs.
    window.show_page("evaluate")
    previous = page.run
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.owner.busy_dialog is not None, timeout=5_000)
    said = page.owner.busy_dialog.text.text()
    assert "the Record tab" in said and "demonstration of while-paused" in said
    assert page.run is previous and rec.page.recorder.recording
    page.owner.busy_dialog.stop_button.click()
    qtbot.waitUntil(lambda: page.run is not previous, timeout=RUN_TIMEOUT_MS)
    (demo,) = io.demo_dirs(workspace.demos_dir, "while-paused")
    assert io.load_demo(demo).status is DemoStatus.INCOMPLETE
    qtbot.waitUntil(lambda: not page.run.running, timeout=RUN_TIMEOUT_MS)
    assert page.last_problem is None, page.last_problem
    assert device_holder(on_server(virtual_server.port, SERIAL)) is None


def test_a_resumed_demo_records_its_jump_and_builds_no_edge_across_it(
    qtbot, studio, workspace, virtual_server
):
    window = studio()
    rec = Recording(qtbot, window, virtual_server.phones[0])
    new_task(rec, "jump", SETTINGS_APP)
    rec.page.reset_check.setChecked(True)
    start(rec)
    rec.wait_ready()  # the Settings app
    rec.click("Display")
    rec.wait_ready()  # Display
    rec.page.stop_action.trigger()  # Stop (resume later)
    qtbot.waitUntil(lambda: not rec.page.recorder.recording, timeout=READY_TIMEOUT_MS)
    (folder,) = io.demo_dirs(workspace.demos_dir, "jump")

    rec.phone.key(4)  # KEYCODE_BACK on the phone itself: back in the Settings list
    rec.page.resume_demo(str(folder))
    qtbot.waitUntil(lambda: rec.page.resume_dialog is not None, timeout=READY_TIMEOUT_MS)
    rec.page.resume_dialog.continue_button.click()
    rec.wait_ready()
    # Stopped again before the next input, and resumed on the same screen: still a jump.
    rec.page.stop_action.trigger()
    qtbot.waitUntil(lambda: not rec.page.recorder.recording, timeout=READY_TIMEOUT_MS)
    rec.page.resume_demo(str(folder))
    rec.wait_ready()
    assert rec.page.resume_dialog is None
    rec.click("Display")
    rec.wait_ready()
    complete(rec, qtbot)

    demo = io.load_demo(folder)
    assert [s.action.type for s in demo.steps] == [ActionType.TAP, ActionType.TAP, ActionType.DONE]
    assert [s.jumped for s in demo.steps] == [False, True, False]
    assert "jumped" in rec.page.steps_list.item(1).text()
    result = merge_demonstrations(
        [DemoInput.from_folder(folder)], settings=SimilaritySettings(), task_id="jump"
    )
    graph = result.graph
    supports = {s.member for e in graph.edges for s in e.support}
    # Step 0's tap led to Display, which was never recorded as a step: no edge from it,
    # and nothing leads from Settings back to Settings.
    assert MemberRef(demo.id, 0) not in supports
    assert MemberRef(demo.id, 1) in supports
    assert all(e.source != e.target for e in graph.edges)

    # The demo viewer shows the jump.
    window.show_page("demos")
    browser = window.demo_browser
    assert browser.select_demo(folder)
    browser.next_step()
    assert browser.step_index == 1
    assert browser.viewer.jumped
    assert "jumped" in browser.step_label.text()
    assert "jump:" in browser.detail_label.text()
    browser.next_step()
    assert not browser.viewer.jumped
