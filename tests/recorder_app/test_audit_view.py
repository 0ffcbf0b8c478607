"""The Evaluate tab's Audit view driven from the keyboard: the groups of a heuristic run,
marks signed exactly as ``elderbench audit --mark`` signs them, undo, and exploring a
valid branch on the virtual phone (real adbutils, random port)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from devices.device_lock import DeviceLock, device_holder
from elderbench.cli import main
from evaluator.audit_marks import MARKS_FILE
from evaluator.runner import RunConfig, run_suite
from graph_builder.io import SUITE_DEMOS_DIR, load_demo
from graph_builder.model import DemoStatus
from recorder_app.connection import DeviceConnection
from recorder_app.qt.eval_panel import EvaluationPage
from recorder_app.qt.eval_panel.audit_view import AuditView
from recorder_app.recording.workspace import Workspace
from task_graphs.generate import SUITE_DIR
from tests.recorder_app.helpers import on_server

TASK = "wake_at_eight"
WAIT_MS = 30_000


def copy_suite(to: Path) -> Path:
    """Two sample tasks where the heuristic agent takes a way nobody demonstrated."""
    to.mkdir(parents=True)
    shutil.copy2(SUITE_DIR / "suite.json", to / "suite.json")
    for task in (TASK, "sleep_in"):
        shutil.copytree(SUITE_DIR / task, to / task)
        shutil.copytree(SUITE_DIR / SUITE_DEMOS_DIR / task, to / SUITE_DEMOS_DIR / task)
    return to


@pytest.fixture
def audited(workspace: Workspace) -> tuple[Path, Path]:
    """A suite in the workspace and a heuristic offline run of it in the workspace's runs."""
    suite = copy_suite(workspace.suites_dir / "alarms")
    run = workspace.runs_dir / "heuristic"
    run_suite(
        RunConfig(suite=suite, out=run, agent="heuristic", protocol="offline", variant="normalized")
    )
    return suite, run


def open_page(qtbot, workspace: Workspace, connection: DeviceConnection | None = None):
    page = EvaluationPage(connection)
    qtbot.addWidget(page)
    page.set_workspace(workspace)
    index = page.form.suite_combo.findData(str(workspace.suites_dir / "alarms"))
    assert index >= 0
    page.form.suite_combo.setCurrentIndex(index)
    page.tabs.setCurrentWidget(page.audit_view)
    page.resize(1400, 900)
    page.show()
    qtbot.waitExposed(page)
    return page


def find_groups(qtbot, view: AuditView) -> None:
    qtbot.mouseClick(view.find_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.audit is not None and not view.job.running, timeout=WAIT_MS)


def alarm_row(view: AuditView) -> int:
    """The heuristic's tap on the existing 8:00 AM alarm at START, nobody's way."""
    (row,) = [
        i
        for i, g in enumerate(view.groups)
        if g.task_id == TASK and g.target.element and "8:00 AM" in "".join(g.target.element)
    ]
    return row


def marks_without_time(path: Path) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [{k: v for k, v in m.items() if k != "time"} for m in data["marks"]]


def test_the_runs_of_the_open_suite_are_found_grouped_and_drawn(qtbot, workspace, audited):
    suite, run = audited
    page = open_page(qtbot, workspace)
    view = page.audit_view
    assert view.checked_runs() == [run]
    # a check the person changed survives the list being refreshed (on every show)
    view.runs_list.item(0).setCheckState(Qt.CheckState.Unchecked)
    view.refresh_runs()
    assert view.checked_runs() == []
    view.runs_list.item(0).setCheckState(Qt.CheckState.Checked)
    find_groups(qtbot, view)
    assert view.groups and view.table.rowCount() == len(view.groups)
    assert view.audit is not None and view.audit.suite == suite
    row = alarm_row(view)
    view.table.selectRow(row)
    group = view.groups[row]
    cells = [view.table.item(row, c).text() for c in range(view.table.columnCount())]
    assert cells == [
        group.id,
        TASK,
        "start",
        "unmarked",
        str(len(group.steps)),
        "heuristic",
        group.target.describe(),
    ]
    picture = view.picture.source.toImage()
    assert picture.width() == 360
    # the action is drawn in the sheet's red over the screenshot at the tapped point
    point = group.steps[0].target.point
    assert point is not None
    x = round(point[0] / 1000 * picture.width())
    y = round(point[1] / 1000 * picture.height())
    red = picture.pixelColor(x, y)
    assert red.red() > 150 and red.green() < 120 and red.blue() < 120
    assert "8:00 AM" in view.details.text()


def test_keyboard_marks_are_the_marks_the_command_writes_and_undo_puts_them_back(
    qtbot, workspace, audited, tmp_path, capsys
):
    suite, run = audited
    page = open_page(qtbot, workspace)
    view = page.audit_view
    find_groups(qtbot, view)
    assert len(view.groups) == 2
    first, second = view.groups
    view.table.selectRow(0)
    view.table.setFocus()
    marks = suite / first.task_id / MARKS_FILE

    # unsigned: refused, nothing written
    qtbot.keyClick(view.table, Qt.Key.Key_V)
    assert page.last_problem is not None and "annotator" in page.last_problem[1]
    assert not marks.exists()

    qtbot.keyClicks(view.annotator_edit, "ana")
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_V)
    assert view.table.item(0, 3).text() == "valid (ana)"
    twin = copy_suite(tmp_path / "twin")
    argv = ["audit", str(run), "--suite", str(twin), "--mark", first.id, "valid"]
    assert main([*argv, "--annotator", "ana"]) == 0, capsys.readouterr().err
    by_cli = marks_without_time(twin / first.task_id / MARKS_FILE)
    assert marks_without_time(marks) == by_cli
    assert by_cli[0]["annotator"] == "ana" and by_cli[0]["group"] == first.id

    # the mark moved on to the next group: W marks it, Ctrl+Z takes it back off
    assert view.table.currentRow() == 1
    other = suite / second.task_id / MARKS_FILE
    qtbot.keyClick(view.table, Qt.Key.Key_W)
    assert [m["verdict"] for m in marks_without_time(other)] == ["wrong"]
    qtbot.keyClick(view.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert marks_without_time(other) == []
    assert view.table.item(1, 3).text() == "unmarked"

    # K goes back up; a second verdict keeps the first in its history, and undo restores
    # the first mark as it was, signature, time and all
    before = json.loads(marks.read_text(encoding="utf-8"))
    qtbot.keyClick(view.table, Qt.Key.Key_K)
    assert view.table.currentRow() == 0
    qtbot.keyClick(view.table, Qt.Key.Key_U)
    (changed,) = marks_without_time(marks)
    assert changed["verdict"] == "unsure" and changed["history"][0]["verdict"] == "valid"
    qtbot.keyClick(view.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert json.loads(marks.read_text(encoding="utf-8")) == before
    assert view.table.item(0, 3).text() == "valid (ana)"


def test_a_valid_group_is_explored_on_the_phone_and_left_for_the_record_tab(
    qtbot, workspace, audited, virtual_server
):
    suite, _run = audited
    page = open_page(qtbot, workspace, DeviceConnection(port=virtual_server.port))
    view = page.audit_view
    explore = view.explore
    find_groups(qtbot, view)
    view.table.selectRow(alarm_row(view))
    group = view.current_group()
    assert group is not None
    explore.picker.refresh()
    qtbot.waitUntil(lambda: explore.picker.serial == "virtual-1", timeout=WAIT_MS)
    # unmarked: the button says why it is off
    assert not explore.explore_button.isEnabled()
    assert "marked valid" in explore.explore_button.toolTip()
    view.annotator_edit.setText("ana")
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_V)
    view.table.selectRow(alarm_row(view))
    assert explore.explore_button.isEnabled()

    # a phone held by another program: nothing starts, the dialog says who holds it
    holder = DeviceLock(
        on_server(virtual_server.port), owner="a terminal", command="elderbench eval"
    )
    holder.acquire()
    try:
        qtbot.mouseClick(explore.explore_button, Qt.MouseButton.LeftButton)
        assert explore.job is None and explore.owner.busy_dialog is not None
        explore.owner.busy_dialog.reject()
    finally:
        holder.release()

    with qtbot.waitSignal(explore.explored, timeout=WAIT_MS) as explored:
        qtbot.mouseClick(explore.explore_button, Qt.MouseButton.LeftButton)
    folder = Path(explored.args[0])
    assert folder == suite / SUITE_DEMOS_DIR / TASK / f"explore-{group.id}"
    demo = load_demo(folder)
    assert demo.status is DemoStatus.INCOMPLETE and demo.annotator == "ana"
    assert [s.action.type.value for s in demo.steps] == ["tap"]
    qtbot.waitUntil(lambda: not explore.job.running, timeout=WAIT_MS)
    assert device_holder(on_server(virtual_server.port)) is None  # the phone is free again
    assert explore.finish_button.isEnabled()
    with qtbot.waitSignal(explore.finish_requested, timeout=1000) as finish:
        qtbot.mouseClick(explore.finish_button, Qt.MouseButton.LeftButton)
    assert finish.args == [str(folder)]


def test_cancelling_an_exploration_on_its_way_keeps_nothing(
    qtbot, workspace, audited, virtual_server
):
    suite, _run = audited
    page = open_page(qtbot, workspace, DeviceConnection(port=virtual_server.port))
    view, explore = page.audit_view, page.audit_view.explore
    find_groups(qtbot, view)
    view.table.selectRow(alarm_row(view))
    group = view.current_group()
    assert group is not None
    view.annotator_edit.setText("ana")
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_V)
    view.table.selectRow(alarm_row(view))
    explore.picker.refresh()
    qtbot.waitUntil(explore.explore_button.isEnabled, timeout=WAIT_MS)
    with qtbot.waitSignal(explore.job_ended, timeout=WAIT_MS):
        qtbot.mouseClick(explore.explore_button, Qt.MouseButton.LeftButton)
        assert explore.cancel_button.isEnabled()
        qtbot.mouseClick(explore.cancel_button, Qt.MouseButton.LeftButton)
    assert explore.status.text().startswith("Cancelled on the way to the branch")
    assert not (suite / SUITE_DEMOS_DIR / TASK / f"explore-{group.id}").exists()
    assert (
        device_holder(on_server(virtual_server.port)) is None and explore.explore_button.isEnabled()
    )
