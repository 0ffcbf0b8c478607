"""Faults found by clicking through a whole studio day in a real window (issue 23's GUI
check): what one view shows must belong to what is open in it now."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from devices.device_lock import DeviceLock
from evaluator.run_store import RunStore
from evaluator.runner import RunConfig, run_suite
from recorder_app.connection import DeviceConnection
from recorder_app.qt.demo_browser import DemoBrowser
from recorder_app.qt.device_owner import DeviceOwner
from recorder_app.qt.eval_panel.drift_view import DriftView
from recorder_app.qt.eval_panel.trace_viewer import TraceViewer
from tests.conftest import UNUSED_ADB_PORT
from tests.evaluator.test_drift import SUITE
from tests.recorder_app.helpers import write_demo
from tests.recorder_app.studio_driver import Recording, start_demo
from tests.recorder_app.test_graph_editor import click_node
from tests.recorder_app.test_language_page import page, suite  # noqa: F401 (fixtures)
from tests.recorder_app.test_main_window import make_window
from tests.recorder_app.test_small_windows import SAMPLE, unreachable


def place(widget, within) -> QRect:
    return QRect(widget.mapTo(within, QPoint(0, 0)), widget.size())


def test_a_new_demo_does_not_preview_the_last_demos_final_step(qtbot, studio, virtual_server):
    window = studio()
    recording = Recording(qtbot, window, virtual_server.phones[0])
    record = recording.page
    start_demo(recording)
    recording.tap("Settings")
    recording.wait_ready()
    recording.key(Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # Task complete
    qtbot.waitUntil(lambda: not record.recorder.recording, timeout=10_000)
    record.side_tabs.setCurrentIndex(1)
    assert record.steps_list.count() == 2 and record.step_preview.has_image  # tap, done

    start_demo(recording)  # the next demonstration, nothing recorded yet
    assert record.steps_list.count() == 0
    assert not record.step_preview.has_image  # not the previous demo's DONE screen


def test_an_export_path_belongs_to_its_demo_and_never_moves_the_buttons(
    qtbot, workspace, tmp_path: Path
):
    write_demo(workspace, demo_id="d1")
    write_demo(workspace, demo_id="d2")
    browser = DemoBrowser()
    qtbot.addWidget(browser)
    browser.set_workspace(workspace)
    browser.resize(900, 620)
    browser.show()
    qtbot.waitExposed(browser)
    assert browser.select_demo(workspace.demo_folder("wifi", "d1"))
    qtbot.wait(1)
    before = place(browser.next_button, browser), place(browser.prev_button, browser)

    out = tmp_path / "d1.gif"
    with qtbot.waitSignal(browser.gif_written, timeout=30_000):
        browser.export_gif(out)
    qtbot.wait(1)
    assert browser.gif_row.isVisible() and str(out) in browser.gif_row.label.text()
    assert (place(browser.next_button, browser), place(browser.prev_button, browser)) == before

    assert browser.select_demo(workspace.demo_folder("wifi", "d2"))
    assert not browser.gif_row.isVisible()  # d2 was never exported
    assert browser.gif_row.path is None
    browser.refresh()  # a refresh keeps d2 and shows no stale path
    assert not browser.gif_row.isVisible()
    assert browser.select_demo(workspace.demo_folder("wifi", "d1"))
    assert (place(browser.next_button, browser), place(browser.prev_button, browser)) == before


def test_before_a_drift_check_the_bar_counts_the_tasks_ticked(qtbot):
    connection = DeviceConnection(port=1)  # never asked: no check is started
    view = DriftView(
        connection.open_device, connection.list_devices, lock_address=connection.lock_address
    )
    qtbot.addWidget(view)
    view.set_suite(Path(SUITE))
    offered = view.task_list.count()
    assert offered > 3 and view.progress.text() == f"0 / {offered} tasks"  # all ticked
    view.set_checked_tasks({"font_bigger", "hearing_aid", "my_number"})
    assert view.progress.text() == "0 / 3 tasks"
    view.set_checked_tasks(set())
    assert view.progress.text() == "no task ticked"


def test_the_status_line_does_not_keep_saying_the_phone_is_in_use(qtbot):
    """The busy dialog says who holds the phone for as long as it matters; its echo in the
    status bar must not outlive the holder (it stayed after a drift check had ended)."""
    parent = QWidget()
    qtbot.addWidget(parent)
    # the phone on the server ANDROID_ADB_SERVER_PORT names, as the holder's bare serial is
    owner = DeviceOwner(
        "the Record tab", parent, DeviceConnection(port=int(UNUSED_ADB_PORT)).lock_address
    )
    holder = DeviceLock("walk-1", owner="the Drift view", command="drift check").acquire()
    try:
        with qtbot.waitSignal(owner.message_posted) as posted:
            assert not owner.take("walk-1", "demo", lambda: None)
        text, timeout_ms = posted.args
        assert "in use by the Drift view" in text and timeout_ms > 0
        assert owner.busy_dialog is not None
        owner.busy_dialog.reject()
    finally:
        holder.release()
        owner.shutdown()


@pytest.fixture(scope="module")
def heuristic_run(tmp_path_factory) -> Path:
    """An offline heuristic run of two sample tasks (one success, one failure)."""
    out = tmp_path_factory.mktemp("runs") / "heuristic"
    run_suite(
        RunConfig(
            suite=SAMPLE,
            out=out,
            agent="heuristic",
            protocol="offline",
            variant="normalized",
            tasks=("font_bigger", "call_tom_back"),
        )
    )
    return out


def test_a_trace_export_path_belongs_to_its_task(qtbot, heuristic_run, tmp_path):
    viewer = TraceViewer()
    qtbot.addWidget(viewer)
    viewer.show()
    store = RunStore.open(heuristic_run)
    assert viewer.show_task(store, "font_bigger")
    with qtbot.waitSignal(viewer.gif_written, timeout=30_000):
        viewer.export_gif(tmp_path / "font_bigger.gif")
    assert viewer.gif_row.isVisible()
    assert viewer.show_task(store, "call_tom_back")
    assert not viewer.gif_row.isVisible() and viewer.gif_row.path is None


def test_save_task_says_where_it_wrote(qtbot, settings, workspace):
    window = make_window(qtbot, settings)
    window.open_workspace(workspace.root)
    panel = window.record_page.task_panel
    panel.id_edit.setText("font_larger")
    panel.instruction_edit.setPlainText("the words are too small")
    qtbot.mouseClick(panel.save_button, Qt.MouseButton.LeftButton)
    written = workspace.suite_dir("default") / "font_larger" / "task.json"
    assert written.is_file()
    assert window.statusBar().currentMessage() == f"Task saved: {written}"


def test_waiting_for_the_phone_leaves_the_other_tabs_usable(qtbot):
    """Start demo while a paused run holds the phone, then "Wait until it is free": the run's
    Continue is in another tab of the same window, so the wait must not block it."""
    parent = QWidget()
    qtbot.addWidget(parent)
    parent.show()
    owner = DeviceOwner(
        "the Record tab", parent, DeviceConnection(port=int(UNUSED_ADB_PORT)).lock_address
    )
    holder = DeviceLock("walk-2", owner="the Evaluate tab", command="online run").acquire()
    started: list[bool] = []
    try:
        assert not owner.take("walk-2", "demo", lambda: started.append(True))
        dialog = owner.busy_dialog
        assert dialog is not None
        qtbot.waitUntil(lambda: QApplication.activeModalWidget() is dialog)  # asks first
        qtbot.mouseClick(dialog.wait_button, Qt.MouseButton.LeftButton)
        assert dialog.isVisible() and "Waiting for the phone" in dialog.status.text()
        assert QApplication.activeModalWidget() is None  # the window takes clicks again
        holder.release()  # the run was continued and ended
        qtbot.waitUntil(lambda: started == [True], timeout=5_000)
        assert owner.busy_dialog is None
    finally:
        holder.release()
        owner.shutdown()


@pytest.mark.parametrize("tab", ["trace", "live", "results", "compare", "audit", "drift"])
def test_the_evaluate_tab_fits_a_1024_by_700_window(qtbot, settings, workspace, heuristic_run, tab):
    window = make_window(qtbot, settings)
    window.open_workspace(workspace.root)
    window.resize(1024, 700)
    window.show()
    qtbot.waitExposed(window)
    window.show_page("evaluate")
    evaluate = window.eval_page
    assert evaluate.open_run(heuristic_run) and evaluate.open_trace("call_tom_back")
    view = {
        "trace": evaluate.trace_viewer,
        "live": evaluate.live_view,
        "results": evaluate.results_tab,
        "compare": evaluate.compare_view,
        "audit": evaluate.audit_view,
        "drift": evaluate.drift_view,
    }[tab]
    evaluate.tabs.setCurrentWidget(view)
    qtbot.wait(10)
    assert window.size().toTuple() == (1024, 700)  # no view holds the window larger
    assert view.visibleRegion().boundingRect().width() == view.width()  # none is cut
    problems = unreachable(qtbot, window, view, 1)
    # A spin box's own line edit is drawn inside its frame, shorter than a line edit is.
    assert [p for p in problems if not p.startswith("qt_spinbox_lineedit")] == []
    if tab == "trace":
        assert view.step_panel.width() >= 150  # the screenshot is not squeezed away


def test_why_a_trace_failed_names_the_step_the_list_marks(qtbot, heuristic_run):
    viewer = TraceViewer()
    qtbot.addWidget(viewer)
    assert viewer.show_task(RunStore.open(heuristic_run), "call_tom_back")
    wrong = [
        viewer.step_list.item(i).text()
        for i in range(viewer.step_list.count())
        if viewer.step_list.item(i).text().startswith("✗")
    ]
    assert len(wrong) == 1  # "✗ 3. tap (180, 2334) 'Back'"
    number = wrong[0].split()[1].rstrip(".")
    assert f"unmatched action at step {number}:" in viewer.recorded_label.text()


def test_a_task_rewritten_in_place_shows_up_in_the_language_tab(qtbot, page, suite):  # noqa: F811
    """A script that edits task.json and writes it over itself changes no folder: the tab
    must still notice, as it does for atomic writes (it kept the old text)."""
    view = page.labels
    page.inner.setCurrentWidget(view)
    row = [view.table.item(r, 0).text() for r in range(view.table.rowCount())].index("fahrenheit")
    path = suite / "fahrenheit" / "task.json"
    data = json.loads(path.read_text())
    data["instruction"] = "Celsius still confuses me"
    with path.open("r+", encoding="utf-8") as file:  # the same file, not a new one
        file.seek(0)
        file.write(json.dumps(data))
        file.truncate()
    cell = view.table.item
    qtbot.waitUntil(lambda: cell(row, 1).text() == "Celsius still confuses me", timeout=5000)


def test_reviewing_from_the_keyboard_does_not_redraw_the_hidden_statistics(
    qtbot,
    page,  # noqa: F811
    suite,  # noqa: F811
):
    """Each decision redrew every chart of the Statistics tab (most of a second each),
    which nobody sees while reviewing: it is drawn when that tab is shown, up to date."""
    page.inner.setCurrentWidget(page.statistics)
    drawn = page.statistics.widget()
    review = page.labels
    page.inner.setCurrentWidget(review)
    review.table.setFocus()
    row = review.table.currentRow()
    qtbot.keyClick(review.table, Qt.Key.Key_Return)  # accept the proposal
    assert review.table.item(row, 4).text() == "accepted"
    assert page.statistics.widget() is drawn and page.statistics.pending == suite
    page.inner.setCurrentWidget(page.statistics)
    assert page.statistics.widget() is not drawn and page.statistics.pending is None
    text = " ".join(w.text() for w in page.statistics.widget().findChildren(QLabel))
    assert "Under 20 characters" in text


@pytest.mark.parametrize("size", [(1600, 1000), (1024, 700)])
def test_a_nodes_hierarchy_in_the_graphs_tab_is_readable(qtbot, settings, workspace, size):
    """Beside a node the inspector squeezed the element tree to two rows and the
    properties to their header: both keep a readable height, the inspector scrolls."""
    window = make_window(qtbot, settings)
    window.open_workspace(workspace.root)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    window.show_page("graphs")
    graphs = window.pages["graphs"]
    assert graphs.open_task(SAMPLE / "call_daughter")
    click_node(qtbot, graphs, "n3")
    node = graphs.inspector.node
    node.tabs.setCurrentIndex(node.tabs.indexOf(node.hierarchy_view.parentWidget()))
    qtbot.wait(10)
    assert window.size().toTuple() == size  # the inspector holds the window no larger
    view = node.hierarchy_view
    rows = view.tree.sizeHintForRow(0)
    assert view.tree.height() >= 6 * rows  # six rows of the tree, not two
    assert view.properties.height() >= 5 * rows  # the selected element's first properties
    assert unreachable(qtbot, window, view, 3) == []  # scrolled to, never cut


def test_the_demos_hierarchy_leaves_room_for_the_tree_at_1024_by_700(qtbot, settings, workspace):
    """The screenshot half of the inspector was mostly empty dark margin while the tree
    beside it showed only its indentation and cut class names."""
    write_demo(workspace)
    window = make_window(qtbot, settings)
    window.open_workspace(workspace.root)
    window.resize(1024, 700)
    window.show()
    qtbot.waitExposed(window)
    window.show_page("demos")
    browser = window.demo_browser
    assert browser.select_demo(workspace.demo_folder("wifi", "d1"))
    browser.view_tabs.setCurrentWidget(browser.hierarchy_view)
    qtbot.wait(10)
    assert window.size().toTuple() == (1024, 700)
    inspector = browser.hierarchy_view
    assert inspector.tree.width() >= 1.5 * inspector.screen_view.width()
    assert inspector.screen_view.width() >= 160  # the phone stays visible
