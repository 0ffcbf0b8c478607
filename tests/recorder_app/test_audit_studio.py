"""The whole loop in the studio window on the virtual phone: audit a heuristic run, mark
the uncredited tap valid from the keyboard, explore it on the phone, finish the branch
on the mirror in the Record tab, and build: the branch becomes an edge of the graph."""

from __future__ import annotations

from PySide6.QtCore import Qt

from evaluator.runner import RunConfig, run_suite
from graph_builder.build import build_task
from graph_builder.io import SUITE_DEMOS_DIR, load_demo, load_graph
from graph_builder.model import DemoStatus
from tests.recorder_app.studio_driver import READY_TIMEOUT_MS, SERIAL, Recording
from tests.recorder_app.test_audit_view import TASK, WAIT_MS, alarm_row, copy_suite


def test_a_branch_marked_in_the_studio_is_explored_finished_and_built(
    qtbot, studio, workspace, virtual_server
):
    suite = copy_suite(workspace.suites_dir / "alarms")
    run_suite(
        RunConfig(
            suite=suite,
            out=workspace.runs_dir / "heuristic",
            agent="heuristic",
            protocol="offline",
            variant="normalized",
        )
    )
    window = studio()
    rec = Recording(qtbot, window, virtual_server.phones[0])
    rec.page.task_panel.annotator_edit.setText("ana")
    page = window.eval_page
    window.show_page("evaluate")
    page.form.suite_combo.setCurrentIndex(page.form.suite_combo.findData(str(suite)))
    page.tabs.setCurrentWidget(page.audit_view)
    view, explore = page.audit_view, page.audit_view.explore
    # one annotator id signs everything; the device bar's list reaches the view
    assert view.annotator_edit.text() == "ana"
    qtbot.waitUntil(lambda: explore.picker.serial == SERIAL, timeout=WAIT_MS)

    qtbot.mouseClick(view.find_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.audit is not None and not view.job.running, timeout=WAIT_MS)
    view.table.selectRow(alarm_row(view))
    group = view.current_group()
    assert group is not None
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_V)
    marks = suite / TASK / "audit_marks.json"
    assert marks.is_file()
    # in the window, Ctrl+Z reaches the table (not another tab's undo)
    qtbot.keyClick(view.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert view.groups[alarm_row(view)].mark is None
    assert '"marks": []' in marks.read_text(encoding="utf-8")
    view.table.selectRow(alarm_row(view))
    qtbot.keyClick(view.table, Qt.Key.Key_V)
    view.table.selectRow(alarm_row(view))
    with qtbot.waitSignal(explore.explored, timeout=WAIT_MS):
        qtbot.mouseClick(explore.explore_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not explore.job.running, timeout=WAIT_MS)
    folder = suite / SUITE_DEMOS_DIR / TASK / f"explore-{group.id}"
    assert load_demo(folder).status is DemoStatus.INCOMPLETE

    # Finish in the Record tab: the demonstration resumes there, on the alarm editor
    qtbot.mouseClick(explore.finish_button, Qt.MouseButton.LeftButton)
    assert window.tabs.currentWidget() is window.record_page
    qtbot.waitUntil(
        lambda: rec.page.recorder.recording or rec.page.resume_dialog is not None,
        timeout=READY_TIMEOUT_MS,
    )
    if rec.page.resume_dialog is not None:
        rec.page.resume_dialog.continue_button.click()
    rec.wait_ready()
    rec.click("OK")
    rec.wait_ready()
    rec.key(Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # Task complete
    qtbot.waitUntil(lambda: not rec.page.recorder.recording, timeout=READY_TIMEOUT_MS)

    demo = load_demo(folder)
    assert demo.status is DemoStatus.COMPLETE
    assert [s.action.type.value for s in demo.steps] == ["tap", "tap", "done"]
    report = build_task(suite / SUITE_DEMOS_DIR, TASK, suite, force=True)
    assert report.written, report.note
    graph = load_graph(suite / TASK)
    explored = [e for e in graph.edges if any(s.member.demo_id == demo.id for s in e.support)]
    assert explored and explored[0].source == "start"
