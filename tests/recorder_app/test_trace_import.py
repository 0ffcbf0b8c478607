"""The trace viewer's "Import as demonstration": an online replay run on the virtual phone,
imported from the button, lands in the demonstrations the suite's builds read and builds
into a graph the replay agent completes offline; other episodes keep the button off and
say why."""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtCore import Qt

from evaluator.run_store import RunStore
from evaluator.runner import RunConfig, run_suite
from graph_builder.build import build_task
from graph_builder.io import load_demo, save_task
from graph_builder.model import DemoStatus
from recorder_app.qt.eval_panel.trace_viewer import TraceViewer
from recorder_app.recording.workspace import Workspace
from tests.evaluator.test_run_import import FONT, online_run  # noqa: F401 (a fixture)

WAIT_MS = 30_000


def open_viewer(qtbot, workspace: Workspace, run: Path) -> TraceViewer:
    viewer = TraceViewer()
    qtbot.addWidget(viewer)
    viewer.workspace_demos = workspace.demos_dir
    assert viewer.show_task(RunStore.open(run), FONT.id)
    return viewer


def copy_run(run: Path, to: Path) -> Path:
    shutil.copytree(run, to, ignore=shutil.ignore_patterns("*.lock", ".lock*"))
    return to


def test_the_button_imports_a_verified_online_success_that_then_builds(
    qtbot,
    workspace,
    online_run,  # noqa: F811
    tmp_path,
):
    _suite, _demos, run = online_run
    run = copy_run(run, tmp_path / "run")
    viewer = open_viewer(qtbot, workspace, run)
    assert viewer.import_button.isEnabled(), viewer.import_button.toolTip()
    with qtbot.waitSignal(viewer.demo_imported, timeout=WAIT_MS) as imported:
        qtbot.mouseClick(viewer.import_button, Qt.MouseButton.LeftButton)
    # the run's suite ships no demos/: the workspace's demonstrations, where builds look
    folder = Path(imported.args[0])
    assert folder == workspace.demos_dir / FONT.id / "run-run"
    demo = load_demo(folder)
    assert demo.status is DemoStatus.COMPLETE and demo.source == "run"
    assert [s.action.type.value for s in demo.steps] == ["tap", "tap", "tap", "done"]
    assert not viewer.import_row.isHidden() and str(folder) in viewer.import_row.label.text()

    suite = tmp_path / "suite"
    save_task(FONT, suite / FONT.id)
    assert build_task(workspace.demos_dir, FONT.id, suite).written
    run_suite(
        RunConfig(
            suite=suite,
            out=tmp_path / "offline",
            agent="replay",
            protocol="offline",
            tasks=(FONT.id,),
            demos=workspace.demos_dir,
        )
    )
    (result,) = RunStore.open(tmp_path / "offline").results()
    assert result.success and result.completion_rate == 1.0

    # a second import of the same episode is refused in plain words, nothing overwritten
    with qtbot.waitSignal(viewer.problem_occurred, timeout=WAIT_MS) as problem:
        qtbot.mouseClick(viewer.import_button, Qt.MouseButton.LeftButton)
    assert "already exists" in problem.args[0]
    assert load_demo(folder).steps == demo.steps


def test_a_failure_verdict_and_an_offline_episode_keep_the_button_off(
    qtbot,
    workspace,
    online_run,  # noqa: F811
    tmp_path,
):
    suite, demos, run = online_run
    run = copy_run(run, tmp_path / "run")
    viewer = open_viewer(qtbot, workspace, run)
    viewer.annotator_edit.setText("ana")
    qtbot.mouseClick(viewer.failure_button, Qt.MouseButton.LeftButton)
    assert not viewer.import_button.isEnabled()
    assert "not a verified success" in viewer.import_button.toolTip()
    qtbot.mouseClick(viewer.success_button, Qt.MouseButton.LeftButton)
    assert viewer.import_button.isEnabled()

    offline = tmp_path / "offline"
    run_suite(
        RunConfig(
            suite=suite,
            out=offline,
            agent="replay",
            protocol="offline",
            tasks=(FONT.id,),
            demos=demos,
        )
    )
    viewer.show_task(RunStore.open(offline), FONT.id)
    assert not viewer.import_button.isEnabled()
    assert "offline" in viewer.import_button.toolTip()
    qtbot.mouseClick(viewer.import_button, Qt.MouseButton.LeftButton)
    assert not (workspace.demos_dir / FONT.id).exists()
