"""On-disk formats: atomic writes, schema versions, bad files, the step-by-step demo writer."""

from __future__ import annotations

import json
import os
from io import BytesIO

import pytest
from PIL import Image

from graph_builder import io
from graph_builder.errors import FormatError, GraphBuilderError, InvalidIdError
from graph_builder.model import Action, DemoStatus, Suite, Task


def _tiny_png(shade: int = 255) -> bytes:
    buffer = BytesIO()
    Image.new("RGB", (2, 2), (shade, shade, shade)).save(buffer, "PNG")
    return buffer.getvalue()


PNG = _tiny_png()  # a real PNG: a screenshot is checked at capture
SCREEN = (1080, 2400)


def test_task_suite_and_demo_files_round_trip(tmp_path):
    task = Task(id="call_daughter", instruction="call my daughter", app="com.android.dialer")
    suite = Suite("sample")
    io.save_task(task, tmp_path / "suite" / task.id)
    io.save_suite(suite, tmp_path / "suite")
    assert io.load_task(tmp_path / "suite" / task.id) == task
    assert io.load_suite(tmp_path / "suite") == suite
    assert io.load_suite_tasks(tmp_path / "suite") == [task]


def test_atomic_write_leaves_no_temp_files_and_replaces_whole(tmp_path):
    target = tmp_path / "a" / "x.json"
    io.atomic_write_json(target, {"v": 1})
    io.atomic_write_json(target, {"v": 2})
    assert json.loads(target.read_text()) == {"v": 2}
    assert os.listdir(target.parent) == ["x.json"]


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "x.json"
    io.atomic_write_json(target, {"v": 1})

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(io.os, "replace", broken_replace)
    with pytest.raises(OSError):
        io.atomic_write_json(target, {"v": 2})
    assert json.loads(target.read_text()) == {"v": 1}
    assert os.listdir(tmp_path) == ["x.json"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (b'{"id": "t"}', "missing or non-integer 'schema_version'"),
        (b'{"schema_version": 99, "id": "t"}', "written by a newer ElderBench Studio"),
        (b'{"schema_version": 1, "instruction": "x"}', "field 'id' is missing"),
        (b"\xff\xfe\x00garbage", "not valid JSON"),
    ],
)
def test_bad_task_files_name_the_file_and_problem(tmp_path, content, message):
    path = tmp_path / "task.json"
    path.write_bytes(content)
    with pytest.raises(FormatError, match=message) as info:
        io.load_task(path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == content  # loading never modifies what is on disk


def test_missing_file_is_a_format_error(tmp_path):
    with pytest.raises(FormatError, match="file not found"):
        io.load_graph(tmp_path / "nope")


def test_read_png_checks_the_signature(tmp_path):
    good, bad = tmp_path / "a.png", tmp_path / "b.png"
    good.write_bytes(PNG)
    bad.write_bytes(b"GIF89a....")
    assert io.read_png(good) == PNG
    with pytest.raises(FormatError, match="not a PNG file"):
        io.read_png(bad)
    with pytest.raises(FormatError, match="screenshot not found"):
        io.read_png(tmp_path / "c.png")


def _writer(tmp_path, **kwargs):
    task = Task(id="font", instruction="the words are too small")
    return io.DemoWriter.create(tmp_path / "demos", task, clock=lambda: 1_790_000_000.0, **kwargs)


def _add(writer, action, n=0):
    return writer.add_step(
        _tiny_png(n),
        f"<hierarchy n='{n}'/>",
        action=action,
        activity="pkg/.A",
        screen=SCREEN,
        time=1.0 + n,
    )


def test_demo_writer_flushes_every_step(tmp_path):
    writer = _writer(tmp_path)
    _add(writer, Action.tap(5, 6, screen=SCREEN), 0)
    on_disk = io.load_demo(writer.folder)
    assert on_disk.status is DemoStatus.INCOMPLETE
    assert len(on_disk.steps) == 1
    assert (writer.folder / "steps" / "0000.png").read_bytes() == _tiny_png(0)
    _add(writer, Action.done(), 1)
    demo = writer.finish()
    assert io.load_demo(writer.folder) == demo
    assert demo.status is DemoStatus.COMPLETE
    assert [s.observation.screenshot for s in demo.steps] == ["steps/0000.png", "steps/0001.png"]


def test_demo_writer_never_reuses_a_folder(tmp_path):
    first = _writer(tmp_path)
    second = _writer(tmp_path)
    assert first.folder != second.folder
    with pytest.raises(GraphBuilderError, match="already exists"):
        _writer(tmp_path, demo_id=first.demo.id)


def test_complete_demo_must_end_with_done(tmp_path):
    writer = _writer(tmp_path)
    _add(writer, Action.back())
    with pytest.raises(GraphBuilderError, match="must end with a 'done' step"):
        writer.finish()
    assert io.load_demo(writer.folder).status is DemoStatus.INCOMPLETE


def test_incomplete_demo_resumes_and_trailing_step_can_be_dropped(tmp_path):
    writer = _writer(tmp_path)
    _add(writer, Action.back(), 0)
    _add(writer, Action.home(), 1)
    resumed = io.DemoWriter.resume(writer.folder)
    assert resumed.drop_last_step().action == Action.home()
    _add(resumed, Action.done(), 1)
    resumed.finish()
    assert [s.action.type.value for s in io.load_demo(writer.folder).steps] == ["back", "done"]
    with pytest.raises(GraphBuilderError, match="only incomplete demos resume"):
        io.DemoWriter.resume(writer.folder)


def test_discard_and_restore_keep_the_steps(tmp_path):
    writer = _writer(tmp_path)
    _add(writer, Action.done())
    writer.finish()
    assert io.set_demo_status(writer.folder, DemoStatus.DISCARDED).status is DemoStatus.DISCARDED
    restored = io.set_demo_status(writer.folder, DemoStatus.COMPLETE)
    assert len(restored.steps) == 1
    assert [f.name for f in io.demo_dirs(tmp_path / "demos")] == [writer.folder.name]


def test_task_ids_cannot_escape_the_workspace(tmp_path):
    task = Task(id="ok", instruction="x")
    with pytest.raises(InvalidIdError):
        io.DemoWriter.create(tmp_path / "demos", task, demo_id="../../evil")
    assert not (tmp_path / "evil").exists()


def test_replace_folder_swaps_whole_folders(tmp_path):
    target, new = tmp_path / "task", tmp_path / ".task.new"
    target.mkdir()
    (target / "graph.json").write_text("old")
    new.mkdir()
    (new / "graph.json").write_text("new")
    io.replace_folder(new, target)
    assert (target / "graph.json").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["task"]


def test_replace_folder_puts_the_old_one_back_when_the_swap_fails(tmp_path, monkeypatch):
    target, new = tmp_path / "task", tmp_path / ".task.new"
    target.mkdir()
    (target / "graph.json").write_text("old")
    new.mkdir()
    real_replace = os.replace

    def failing_second_rename(src, dst):
        if str(src) == str(new):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(io.os, "replace", failing_second_rename)
    with pytest.raises(OSError):
        io.replace_folder(new, target)
    assert (target / "graph.json").read_text() == "old"
