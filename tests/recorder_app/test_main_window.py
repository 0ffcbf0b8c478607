"""The main window without a phone: tabs, workspace, settings, incomplete demos, no adb."""

from __future__ import annotations

import socket

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLabel

from graph_builder import io
from graph_builder.model import DemoStatus
from recorder_app.cli import register
from recorder_app.connection import DeviceConnection
from recorder_app.qt.dialogs import IncompleteDemosDialog
from recorder_app.qt.main_window import StudioMainWindow, initial_workspace_path
from tests.recorder_app.helpers import write_demo


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_window(qtbot, settings, **kwargs) -> StudioMainWindow:
    window = StudioMainWindow(settings, DeviceConnection(port=free_port()), poll_ms=200, **kwargs)
    qtbot.addWidget(window)
    return window


def test_studio_subcommand_is_registered():
    import argparse

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["studio", "--virtual-phone", "--workspace", "/tmp/x"])
    assert args.virtual_phone and str(args.workspace) == "/tmp/x" and callable(args.func)


def test_tabs_can_be_added_by_later_pages(qtbot, settings, workspace):
    window = make_window(qtbot, settings)
    window.open_workspace(workspace.root)
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert titles[:2] == ["Record", "Demos"]

    class ExtraPage(QLabel):
        def set_workspace(self, ws):
            self.setText(str(ws.root))

    page = ExtraPage()
    assert window.add_page("extra", "Extra", page) == len(titles)
    assert page.text() == str(workspace.root)
    window.show_page("extra")
    assert window.tabs.currentWidget() is page


def test_missing_adb_is_explained_in_the_device_bar(qtbot, settings, workspace):
    window = make_window(qtbot, settings)
    window.open_workspace(workspace.root)
    window.record_page.start()
    status = window.record_page.device_bar.status_label
    qtbot.waitUntil(lambda: "No adb server answers" in status.text(), timeout=5000)
    window.record_page.start_demo()
    assert window.last_problem[0] == "No phone"


def test_workspace_and_layout_are_remembered(qtbot, tmp_path, workspace):
    path = str(tmp_path / "settings.ini")
    first = QSettings(path, QSettings.Format.IniFormat)
    window = make_window(qtbot, first)
    window.open_workspace(workspace.root)
    window.resize(640, 500)  # the offscreen screen is small
    window.show_page("demos")
    window.close()
    second = QSettings(path, QSettings.Format.IniFormat)
    assert initial_workspace_path(second, None) == workspace.root
    again = make_window(qtbot, second)
    assert again.size().width() == 640
    assert again.tabs.currentWidget() is again.demo_browser
    assert second.value("workspace/recent") in ([str(workspace.root)], str(workspace.root))


def test_incomplete_demos_are_offered_for_resume_or_discard(qtbot, settings, workspace):
    write_demo(workspace, demo_id="crashed", finish=False)
    window = make_window(qtbot, settings)
    window.show()
    window.open_workspace(workspace.root)
    qtbot.waitUntil(lambda: window.findChild(IncompleteDemosDialog) is not None)
    dialog = window.findChild(IncompleteDemosDialog)
    assert dialog.list.count() == 1 and "crashed" in dialog.list.item(0).text()
    dialog.discard_button.click()
    folder = workspace.demo_folder("wifi", "crashed")
    assert io.load_demo(folder).status is DemoStatus.DISCARDED
    assert len(io.load_demo(folder).steps) == 2  # nothing of the recording is lost


def test_a_workspace_open_in_one_studio_is_refused_by_another(qtbot, settings, workspace):
    first = make_window(qtbot, settings)
    assert first.open_workspace(workspace.root)
    second = make_window(qtbot, settings)
    assert not second.open_workspace(workspace.root)
    assert second.workspace is None
    title, message = second.last_problem
    assert title == "The workspace is open in another studio"
    assert "ElderBench Studio (pid" in message and str(workspace.root) in message
    first.close()
    assert second.open_workspace(workspace.root)


def test_a_restart_reopens_the_suite_folder_the_task_and_the_run(qtbot, tmp_path, workspace):
    from evaluator.records import TaskResult
    from evaluator.run_store import RunStore
    from recorder_app.qt.eval_panel.settings import SAMPLE_SUITE

    run = workspace.runs_dir / "r1"
    RunStore.create(run, {"agent": {"name": "replay"}, "config": {}}).append_result(
        TaskResult("font_bigger", "success", "offline", terminated=True)
    )
    path = str(tmp_path / "settings.ini")
    first = make_window(qtbot, QSettings(path, QSettings.Format.IniFormat))
    first.open_workspace(workspace.root)
    graphs = first.pages["graphs"]
    graphs.open_suite_folder(SAMPLE_SUITE)
    assert graphs.tasks.select_task_dir(SAMPLE_SUITE / "font_bigger")
    assert first.eval_page.open_run(run)
    first.close()

    again = make_window(qtbot, QSettings(path, QSettings.Format.IniFormat))
    again.open_workspace(workspace.root)
    graphs = again.pages["graphs"]
    assert SAMPLE_SUITE.resolve() in graphs.tasks.folders
    assert graphs.tasks.current_entry().task_id == "font_bigger"
    assert graphs.document.graph is not None  # the graph is open, not just listed
    assert again.eval_page.current_run == run
    assert again.eval_page.results_model.rowCount() == 1
