"""The workspace folder: layout, tasks, demo summaries, recent list, write problems."""

from __future__ import annotations

from io import BytesIO

import pytest
from PIL import Image

from graph_builder import io
from graph_builder.model import Action, DemoStatus, Task
from recorder_app.errors import WorkspaceError
from recorder_app.recording.workspace import DEFAULT_SUITE, Workspace, push_recent


def _tiny_png() -> bytes:
    buffer = BytesIO()
    Image.new("RGB", (2, 2), "white").save(buffer, "PNG")
    return buffer.getvalue()


PNG = _tiny_png()  # a real PNG: a screenshot is checked at capture


def test_open_creates_layout_and_default_suite(tmp_path):
    ws = Workspace.open(tmp_path / "ws")
    for sub in ("demos", "suites", "runs"):
        assert (tmp_path / "ws" / sub).is_dir()
    assert ws.suite_names() == [DEFAULT_SUITE]
    assert ws.load_suite(DEFAULT_SUITE).vocabularies["syntax"]
    assert ws.write_problem() is None


def test_open_refuses_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(WorkspaceError, match="is a file"):
        Workspace.open(tmp_path / "f")


def test_tasks_are_saved_in_their_suite_and_never_overwritten_silently(tmp_path):
    ws = Workspace.open(tmp_path)
    ws.save_task("default", Task("wifi-on", "turn the wifi on"))
    assert (tmp_path / "suites/default/wifi-on/task.json").exists()
    with pytest.raises(WorkspaceError, match="already exists"):
        ws.save_task("default", Task("wifi-on", "something else"))
    assert ws.load_task("default", "wifi-on").instruction == "turn the wifi on"
    ws.save_task("default", Task("wifi-on", "edited"), overwrite=True)
    assert ws.find_task("wifi-on")[1].instruction == "edited"
    ws.create_suite("elder")
    ws.save_task("elder", Task("alarm", "wake me at 7"))
    assert ws.suite_names() == ["default", "elder"]
    assert ws.find_task("alarm")[0] == "elder"
    assert ws.find_task("missing") is None


def test_demo_summaries_report_status_steps_and_unreadable_demos(tmp_path):
    ws = Workspace.open(tmp_path)
    task = Task("t", "do it")
    w = io.DemoWriter.create(ws.demos_dir, task, demo_id="a")
    w.add_step(PNG, None, action=Action.back(), activity=None, screen=(10, 20), time=0.0)
    done = io.DemoWriter.create(ws.demos_dir, task, demo_id="b")
    done.add_step(PNG, None, action=Action.done(), activity=None, screen=(10, 20), time=0.0)
    done.finish()
    broken = ws.demos_dir / "t" / "c"
    broken.mkdir()
    (broken / "demo.json").write_text("{not json")
    by_id = {s.demo_id: s for s in ws.demo_summaries()}
    assert (by_id["a"].status, by_id["a"].step_count) == (DemoStatus.INCOMPLETE, 1)
    assert by_id["b"].finished and by_id["b"].status is DemoStatus.COMPLETE
    assert by_id["c"].status is None and "JSON" in by_id["c"].problem
    assert [s.demo_id for s in ws.incomplete_demos()] == ["a"]


def test_push_recent_moves_to_front_without_duplicates(tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    recent = push_recent([], a)
    recent = push_recent(recent, b)
    assert push_recent(recent, a) == [a, b]
    assert len(push_recent([str(i) for i in range(20)], a, limit=8)) == 8
