"""A run becomes a demonstration: an online replay run on the virtual phone, imported and
built into a graph, scores 100% offline and merges with the task's recorded demos."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from devices.android import AndroidDevice, adb_client
from elderbench.cli import main
from evaluator.run_import import RunImportError, import_run
from evaluator.run_store import HumanVerdict, RunStore
from evaluator.runner import RunConfig, run_suite
from graph_builder.build import build_task
from graph_builder.io import load_demo, load_graph, load_task, save_task
from graph_builder.model import DemoStatus, ResetRecipe, SuccessCriteria, Task
from graph_builder.similarity import SimilaritySettings
from tests.evaluator.test_online import record
from virtual_phone import fast_phone, running_server

SETTINGS = "com.android.settings"
FONT = Task(
    id="font",
    instruction="the words are too small for me, dear",
    normalized_instruction="Open Display, tap Font size, then Make larger",
    app=SETTINGS,
    protocol="online",
    max_steps=6,
    reset=ResetRecipe(SETTINGS),
    success=SuccessCriteria(must_contain=("Large",)),
)
PATH = ({"text": "Display"}, {"text": "Font size"}, {"content_desc": "Make larger"})


@pytest.fixture(scope="module")
def online_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """Recorded demos of FONT, its suite, and an online replay run of it."""
    root = tmp_path_factory.mktemp("run_import")
    with running_server(phones=[fast_phone("virtual-1")]) as server:
        device = AndroidDevice("virtual-1", client=adb_client(port=server.port), timeout=5.0)
        record(device, root / "demos", FONT, list(PATH))
        device.close()
    save_task(FONT, root / "suite" / FONT.id)
    report = build_task(root / "demos", FONT.id, root / "suite", settings=SimilaritySettings())
    assert report.written, report.note
    # The recording made the font large: the run gets a fresh phone.
    with running_server(phones=[fast_phone("virtual-1")]) as server:
        old = os.environ.get("ANDROID_ADB_SERVER_PORT")
        os.environ["ANDROID_ADB_SERVER_PORT"] = str(server.port)
        try:
            run_suite(
                RunConfig(
                    suite=root / "suite",
                    out=root / "run",
                    agent="replay",
                    devices=("virtual-1",),
                    demos=root / "demos",
                )
            )
        finally:
            if old is None:
                del os.environ["ANDROID_ADB_SERVER_PORT"]
            else:
                os.environ["ANDROID_ADB_SERVER_PORT"] = old
    (result,) = RunStore.open(root / "run").results()
    assert result.success and result.protocol == "online"
    return root / "suite", root / "demos", root / "run"


def test_an_imported_online_run_builds_into_a_graph_that_replays_at_100_percent(
    online_run, tmp_path, capsys
):
    suite, demos, run = online_run
    # Alone: the run is the only demonstration of the task.
    alone = tmp_path / "alone"
    code = main(["import", "run", str(run), "--task", "font", "-o", str(alone / "demos")])
    assert code == 0, capsys.readouterr().err
    assert "imported 4 steps" in capsys.readouterr().out
    demo = load_demo(alone / "demos" / "font" / "run-run")
    assert demo.status is DemoStatus.COMPLETE and demo.source == "run"
    assert [s.action.type.value for s in demo.steps] == ["tap", "tap", "tap", "done"]
    assert all(s.observation.hierarchy and s.observation.activity for s in demo.steps)
    assert demo.steps[0].action.element is not None
    assert demo.steps[0].action.element.text == "Display"
    # the suite's task.json comes along, reset recipe and criteria included
    assert load_task(alone / "demos" / "font") == FONT
    save_task(FONT, alone / "suite" / "font")
    assert build_task(alone / "demos", "font", alone / "suite").written
    offline = tmp_path / "offline"
    run_suite(
        RunConfig(
            suite=alone / "suite",
            out=offline,
            agent="replay",
            protocol="offline",
            tasks=("font",),
            demos=alone / "demos",
        )
    )
    (result,) = RunStore.open(offline).results()
    assert result.success and result.completion_rate == 1.0

    # Beside the recorded demonstration: the build merges both into one path.
    merged = tmp_path / "merged"
    shutil.copytree(demos, merged / "demos")
    assert import_run(run, task_id="font", demos_root=merged / "demos").demo.is_finished
    save_task(FONT, merged / "suite" / "font")
    assert build_task(merged / "demos", "font", merged / "suite").written
    graph = load_graph(merged / "suite" / "font")
    assert sorted(graph.meta["demos"]) == ["d1", "run-run"]
    assert len(graph.nodes) == len(load_graph(suite / "font").nodes) == 4
    assert all(
        {s.member.demo_id for s in edge.support} == {"d1", "run-run"} for edge in graph.edges
    )
    run_suite(
        RunConfig(
            suite=merged / "suite",
            out=tmp_path / "again",
            agent="replay",
            protocol="offline",
            tasks=("font",),
            demos=merged / "demos",
            agent_config={"demo_id": "run-run"},
        )
    )
    (again,) = RunStore.open(tmp_path / "again").results()
    assert again.success


def _copy_run(run: Path, to: Path) -> Path:
    shutil.copytree(run, to, ignore=shutil.ignore_patterns("*.lock", ".lock*"))
    return to


def test_a_failure_by_human_verdict_is_refused_naming_the_run_and_task(online_run, tmp_path):
    _, _, run = online_run
    copy = _copy_run(run, tmp_path / "judged")
    RunStore.open(copy).set_override("font", HumanVerdict(False, "wrong size", "ana"))
    with pytest.raises(RunImportError, match=r"judged.*task font.*not a verified success"):
        import_run(copy, task_id="font", demos_root=tmp_path / "demos")
    assert not (tmp_path / "demos" / "font").exists()
    # ... and a person's success verdict makes an unverified episode importable.
    RunStore.open(copy).set_override("font", HumanVerdict(True, "", "ana"))
    assert import_run(copy, task_id="font", demos_root=tmp_path / "demos").demo.is_finished


def test_an_offline_episode_and_an_unknown_task_are_refused(online_run, tmp_path):
    suite, demos, _ = online_run
    offline = tmp_path / "offline"
    run_suite(
        RunConfig(
            suite=suite,
            out=offline,
            agent="replay",
            protocol="offline",
            tasks=("font",),
            demos=demos,
        )
    )
    with pytest.raises(RunImportError, match=r"task font: the episode is offline"):
        import_run(offline, task_id="font", demos_root=tmp_path / "demos")
    with pytest.raises(RunImportError, match=r"task other: the run has no result"):
        import_run(offline, task_id="other", demos_root=tmp_path / "demos")


def test_a_missing_file_or_a_link_out_of_the_run_is_refused(online_run, tmp_path):
    _, _, run = online_run
    missing = _copy_run(run, tmp_path / "missing")
    (missing / "traces" / "font" / "0002.xml").unlink()
    with pytest.raises(RunImportError, match=r"task font: step 2: .*0002.xml is missing"):
        import_run(missing, task_id="font", demos_root=tmp_path / "demos")

    linked = _copy_run(run, tmp_path / "linked")
    outside = tmp_path / "outside.png"
    shutil.copy2(linked / "traces" / "font" / "0001.png", outside)
    (linked / "traces" / "font" / "0001.png").unlink()
    (linked / "traces" / "font" / "0001.png").symlink_to(outside)
    with pytest.raises(RunImportError, match=r"task font: step 1: .*outside"):
        import_run(linked, task_id="font", demos_root=tmp_path / "demos")

    cut = _copy_run(run, tmp_path / "cut")
    steps = cut / "traces" / "font" / "steps.jsonl"
    steps.write_text("".join(steps.read_text().splitlines(keepends=True)[:2]) + '{"index": 2')
    with pytest.raises(RunImportError, match=r"task font: the trace holds steps \[0, 1\]"):
        import_run(cut, task_id="font", demos_root=tmp_path / "demos")

    climbing = _copy_run(run, tmp_path / "climbing")
    steps = climbing / "traces" / "font" / "steps.jsonl"
    lines = [json.loads(line) for line in steps.read_text().splitlines()]
    lines[0]["screenshot"] = "../outside.png"
    steps.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(RunImportError, match=r"task font: step 0: .*stay inside"):
        import_run(climbing, task_id="font", demos_root=tmp_path / "demos")
    assert not (tmp_path / "demos" / "font").exists()
