"""A researcher's whole day in one studio window, without a restart: two demonstrations
recorded back to back with mouse and keys, the graph built, edited and undone, an
offline and an online evaluation, a human verdict, and the comparison of two runs."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt, QTimer

from evaluator.run_store import RunStore
from graph_builder import io
from graph_builder.model import ActionType, DemoStatus
from recorder_app.qt.eval_panel.results_table import COLUMN
from recorder_app.qt.eval_panel.settings import SAMPLE_SUITE
from tests.recorder_app.studio_driver import READY_TIMEOUT_MS, SERIAL, Recording

TASK = "display-open"
RUN_TIMEOUT_MS = 120_000


def choose(combo, data: str) -> None:
    index = combo.findData(data)
    assert index >= 0, f"{data!r} is not offered"
    combo.setCurrentIndex(index)


def record(rec: Recording, qtbot, *, back_and_forth: bool) -> None:
    """One demonstration of TASK from a freshly launched Settings app."""
    rec.key(Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)  # Start demo
    rec.wait_ready()
    rec.click("Display")
    rec.wait_ready()
    if back_and_forth:
        rec.key(Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)  # Back to Settings
        rec.wait_ready()
        rec.click("Display")
        rec.wait_ready()
    rec.key(Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # Task complete
    qtbot.waitUntil(lambda: not rec.page.recorder.recording, timeout=READY_TIMEOUT_MS)


def run_and_wait(qtbot, page) -> RunStore:
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    assert page.last_problem is None, page.last_problem
    qtbot.waitUntil(lambda: page.run is not None and not page.run.running, timeout=RUN_TIMEOUT_MS)
    assert page.last_problem is None, page.last_problem
    assert page.current_run is not None
    return RunStore.open(page.current_run)


def gif_frames(path) -> int:
    from PIL import Image

    with Image.open(path) as gif:
        return gif.n_frames


def test_a_researchers_day_in_one_studio_session(
    qtbot, studio, workspace, virtual_server, tmp_path
):
    window = studio()
    rec = Recording(qtbot, window, virtual_server.phones[0])

    # -- Record: the task typed in the panel, then two demonstrations back to back.
    panel = rec.page.task_panel
    qtbot.keyClicks(panel.id_edit, TASK)
    qtbot.keyClicks(panel.instruction_edit, "the display thing, where is it")
    qtbot.keyClicks(panel.normalized_edit, "In Settings, open Display.")
    qtbot.keyClicks(panel.app_edit, "com.android.settings")
    qtbot.keyClicks(panel.annotator_edit, "a01")
    rec.page.reset_check.setChecked(True)  # every demo starts on a freshly launched Settings
    record(rec, qtbot, back_and_forth=False)
    assert rec.page.start_button.isEnabled() and panel.isEnabled()
    assert panel.task_id == TASK  # the saved task stays chosen for the next demo
    record(rec, qtbot, back_and_forth=True)
    demos = [io.load_demo(f) for f in io.demo_dirs(workspace.demos_dir, TASK)]
    assert [d.status for d in demos] == [DemoStatus.COMPLETE] * 2
    assert sorted(len(d.steps) for d in demos) == [2, 4]
    assert {d.annotator for d in demos} == {"a01"}
    for folder in io.demo_dirs(workspace.demos_dir, TASK):
        assert not list(folder.glob("steps/pending.*"))  # finished demos keep no resume screen
    assert "'Display'" in rec.page.steps_list.item(0).text()  # the tapped row, by name

    # -- The Demos tab exports the second demonstration as a GIF with its actions drawn.
    window.show_page("demos")
    browser = window.demo_browser
    assert browser.select_demo(io.demo_dirs(workspace.demos_dir, TASK)[-1])
    with qtbot.waitSignal(browser.gif_written, timeout=RUN_TIMEOUT_MS):
        browser.export_gif(tmp_path / "demo.gif")
    assert gif_frames(tmp_path / "demo.gif") == 4

    # -- Build the graph from both demonstrations, edit a tolerance, undo it with Ctrl+Z.
    window.show_page("graphs")
    graphs = window.pages["graphs"]
    entry = next(e for e in graphs.tasks.entries() if e.task_id == TASK)
    assert entry.demo_count == 2 and not entry.has_graph
    graphs.tasks.select_task_dir(entry.task_dir)
    with qtbot.waitSignal(graphs.build_finished, timeout=RUN_TIMEOUT_MS) as built:
        qtbot.mouseClick(graphs.build_button, Qt.MouseButton.LeftButton)
    (report,) = built.args[0]
    assert report.written
    graphs.report_dialog.close()
    graph = graphs.document.graph
    assert any(n.kind.value == "done" for n in graph.nodes)
    start = graph.start.id
    tap = next(e for e in graph.edges if e.source == start and e.rule.action_type is ActionType.TAP)
    graphs.scene.select(edge_ids=[tap.id])
    spin = graphs.inspector.edge.radius
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, "150")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert graphs.document.graph.edge(tap.id).rule.radius == 150
    qtbot.keyClick(spin, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert graphs.document.graph.edge(tap.id).rule.radius == tap.rule.radius
    assert not graphs.document.modified

    # -- Evaluate offline: the replay agent on the original wording, the heuristic on the
    # normalized one (two runs to compare).
    window.show_page("evaluate")
    page = window.eval_page
    form = page.form
    suite = workspace.suites_dir / "default"
    choose(form.suite_combo, str(suite))
    choose(form.run_protocol, "offline")
    choose(form.agent_combo, "replay")
    replay = run_and_wait(qtbot, page)
    assert replay.run_dir.name.endswith("-replay-original")
    assert [r.success for r in replay.results()] == [True]
    choose(form.agent_combo, "heuristic")
    choose(form.variant_combo, "normalized")
    heuristic = run_and_wait(qtbot, page)
    assert heuristic.run_dir.name.endswith("-heuristic-normalized")

    # -- Evaluate online on the phone: the device list has followed adb all along.
    choose(form.suite_combo, str(SAMPLE_SUITE))
    choose(form.protocol_filter, "online")
    choose(form.app_filter, "com.elderphone.weather")
    choose(form.run_protocol, "")
    choose(form.agent_combo, "replay")
    choose(form.variant_combo, "original")
    tasks = [t.id for t in form.selected_tasks()]
    assert len(tasks) == 2
    devices = form.device_list
    qtbot.waitUntil(
        lambda: any(
            devices.item(i).data(Qt.ItemDataRole.UserRole) == SERIAL for i in range(devices.count())
        ),
        timeout=10_000,
    )
    row = next(
        i
        for i in range(devices.count())
        if devices.item(i).data(Qt.ItemDataRole.UserRole) == SERIAL
    )
    devices.item(row).setCheckState(Qt.CheckState.Checked)
    # While it runs, the Live view's screen always belongs to the task it names.
    live = page.live_view
    mismatches: list[str] = []

    def check_live() -> None:
        shown = live.shown
        if shown is None:
            return
        if shown.task_id != live.task_id or shown.task_id not in live.task_label.text():
            mismatches.append(f"{shown.task_id} under {live.task_label.text()!r}")
        if shown.screenshot_path is not None and shown.task_id not in shown.screenshot_path.parts:
            mismatches.append(f"{shown.screenshot_path} shown for {shown.task_id}")

    watch = QTimer()
    watch.timeout.connect(check_live)
    watch.start(5)
    online = run_and_wait(qtbot, page)
    watch.stop()
    assert mismatches == []
    results = {r.task_id: r for r in online.results()}
    assert sorted(results) == sorted(tasks)
    assert all(r.protocol == "online" and r.success for r in results.values())
    assert "Finished: 2 tasks" in page.state_label.text()

    # -- A human verdict on an online task, signed with the studio's annotator id.
    assert page.open_trace(tasks[0])
    trace = page.trace_viewer
    assert trace.annotator_edit.text() == "a01"
    trace.verdict_note.setText("the temperature unit did not change")
    qtbot.mouseClick(trace.failure_button, Qt.MouseButton.LeftButton)
    verdict = json.loads((online.run_dir / "overrides.json").read_text())["tasks"][tasks[0]]
    assert verdict["success"] is False and verdict["annotator"] == "a01"
    with qtbot.waitSignal(trace.gif_written, timeout=RUN_TIMEOUT_MS):
        trace.export_gif(tmp_path / "trace.gif")
    assert gif_frames(tmp_path / "trace.gif") == len(online.read_steps(tasks[0]))
    assert "failure (human)" in [
        str(page.results_proxy.index(r, COLUMN["Result"]).data())
        for r in range(page.results_proxy.rowCount())
    ]

    # -- Compare the two offline runs and export the comparison report.
    compare = page.compare_view
    page.tabs.setCurrentWidget(compare)
    compare.refresh_runs()
    assert compare.run_a.currentData() != compare.run_b.currentData()
    compare.set_runs(replay.run_dir, heuristic.run_dir)
    with qtbot.waitSignal(compare.comparison_ready, timeout=RUN_TIMEOUT_MS):
        qtbot.mouseClick(compare.compare_button, Qt.MouseButton.LeftButton)
    assert "<b>1</b> tasks evaluated by both" in compare.headline.text()
    qtbot.mouseClick(compare.export_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: compare.report_row.path is not None, timeout=RUN_TIMEOUT_MS)
    assert str(replay.run_dir / "report.html") in compare.report_row.label.text()
    assert (replay.run_dir / "report.md").is_file()

    # -- And the Record tab still takes the next demonstration.
    window.show_page("record")
    assert rec.page.start_button.isEnabled() and rec.page.task_panel.isEnabled()
