"""Corrupt input is refused where it enters, with the file named: empty or damaged
hierarchies and screenshots on import, truncated and bomb PNGs at build, NaN in JSON,
clicks off the screen, and damaged overrides.json / tags.json."""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path

import pytest

from evaluator.errors import RunStoreError
from evaluator.run_store import RunStore
from evaluator.synthetic import write_suite
from graph_builder.build import build_task
from graph_builder.errors import FormatError
from graph_builder.importers.llamatouch import import_llamatouch
from graph_builder.io import load_graph
from graph_builder.similarity import SimilaritySettings
from tests.evaluator.fake_llm_server import FakeLLMServer, reply
from tests.graph_builder.gb_synthetic import Sketch, render


def trace(tmp_path: Path, events: str = "[Home]\n", screens: int = 2) -> Path:
    folder = tmp_path / "trace"
    folder.mkdir()
    for i in range(screens):
        image, xml = render(Sketch(f"S{i}", ("One", "Two")))
        image.save(folder / f"{i}.png")
        (folder / f"{i}.xml").write_text(xml)
    (folder / "eventStructs.txt").write_text(events)
    (folder / "instruction.txt").write_text("Open two\n")
    return folder


def bomb_png() -> bytes:
    """A tiny file whose header claims 100000 x 100000 pixels."""
    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 0, 0, 0, 0)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    idat = zlib.compress(b"\x00" * 1000)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )


@pytest.mark.parametrize(
    ("damage", "named", "said"),
    [
        (lambda f: (f / "1.xml").write_text(""), "1.xml", "empty"),
        (
            lambda f: (f / "0.png").write_bytes((f / "0.png").read_bytes()[:300]),
            "0.png",
            "cut short",
        ),
        (lambda f: (f / "1.png").write_bytes(bomb_png()), "1.png", "bomb"),
        (
            lambda f: (f / "eventStructs.txt").write_text(
                "[Click] Screen Resolution (270, 600), Click Position (99999, -5000)\n"
            ),
            "trace",
            "outside the",
        ),
    ],
    ids=["empty-xml", "truncated-png", "bomb-png", "click-off-screen"],
)
def test_import_refuses_corrupt_files_naming_them(tmp_path, damage, named, said):
    folder = trace(tmp_path)
    damage(folder)
    with pytest.raises(FormatError, match=said) as refused:
        import_llamatouch(folder, task_id="t", demos_root=tmp_path / "demos")
    assert named in str(refused.value)
    assert not list((tmp_path / "demos").glob("t/*/demo.json"))


@pytest.mark.parametrize("damage", ["truncate", "bomb"])
def test_build_refuses_a_damaged_screenshot_even_with_a_stored_hash(tmp_path, damage):
    write_suite(tmp_path / "made", 2, demos=tmp_path / "demos", size=(270, 600))
    demo = tmp_path / "demos" / "task001" / "demo1"
    data = json.loads((demo / "demo.json").read_text())
    for step in data["steps"]:  # a hash stored at capture: the build would not decode
        step["observation"]["phash"] = "phash16:" + "ab" * 32
    (demo / "demo.json").write_text(json.dumps(data))
    shot = demo / "steps" / "0001.png"
    shot.write_bytes(shot.read_bytes()[:200] if damage == "truncate" else bomb_png())
    report = build_task(
        tmp_path / "demos", "task001", tmp_path / "suite", settings=SimilaritySettings()
    )
    [note] = [n for n in report.skipped if n.startswith("demo1")]
    assert "0001.png" in note and ("cut short" in note or "bomb" in note)
    for node_png in (tmp_path / "suite" / "task001" / "nodes").glob("*.png"):
        assert node_png.read_bytes() != shot.read_bytes()


def test_nan_in_a_graph_is_refused_naming_the_file(tmp_path):
    write_suite(tmp_path / "suite", 1, demos=tmp_path / "demos", size=(270, 600))
    graph = tmp_path / "suite" / "task000" / "graph.json"
    data = json.loads(graph.read_text())
    data["nodes"][0]["screen"] = [270, 600]
    text = json.dumps(data).replace("[270, 600]", "[NaN, 600]", 1)  # what a NaN writer leaves
    graph.write_text(text)
    with pytest.raises(FormatError, match=r"task000/graph\.json.*NaN"):
        load_graph(graph)


@pytest.mark.parametrize(
    ("file", "content", "said"),
    [
        ("overrides.json", {"t1": {"success": "false"}}, "'success' must be true or false"),
        ("overrides.json", {"t1": "yes"}, "entry of task 't1' is damaged"),
        ("tags.json", {"t1": "intent"}, "entry of task 't1' is damaged"),
        ("tags.json", {"t1": [{"category": "nonsense"}]}, "entry of task 't1' is damaged"),
    ],
)
def test_damaged_verdicts_and_tags_are_refused_naming_the_file(tmp_path, file, content, said):
    store = RunStore.create(tmp_path / "run", {"agent": {"name": "random"}})
    (tmp_path / "run" / file).write_text(json.dumps({"schema_version": 1, "tasks": content}))
    read = store.overrides if file == "overrides.json" else store.tags
    with pytest.raises(RunStoreError, match=said) as refused:
        read()
    assert f"run/{file}" in str(refused.value)
    store.close()


def nested(levels: int = 200_000) -> str:
    """A small JSON text nested ``levels`` deep (400 KB at 200,000 levels)."""
    return "[" * levels + "]" * levels


def test_a_deeply_nested_task_is_one_task_error_and_the_eval_goes_on(tmp_path):
    from evaluator.runner import RunConfig, run_suite

    write_suite(tmp_path / "suite", 2, demos=tmp_path / "demos", size=(270, 600))
    task = tmp_path / "suite" / "task000" / "task.json"
    task.write_text(nested())
    run_suite(RunConfig(suite=tmp_path / "suite", out=tmp_path / "run", agent="replay"))
    results = {r.task_id: r for r in RunStore.open(tmp_path / "run").results()}
    assert results["task001"].status.value == "success"
    assert results["task000"].status.value == "error"
    assert "task000/task.json" in results["task000"].reason
    assert "nested 200000 levels deep" in results["task000"].reason


@pytest.mark.parametrize("file", ["demo.json", "graph.json", "suite.json", "task.json"])
def test_deeply_nested_suite_files_are_refused_naming_them(tmp_path, file):
    from graph_builder.io import load_demo, load_suite, load_task

    write_suite(tmp_path / "suite", 1, demos=tmp_path / "demos", size=(270, 600))
    folder = {
        "demo.json": tmp_path / "demos" / "task000" / "demo1",
        "suite.json": tmp_path / "suite",
    }.get(file, tmp_path / "suite" / "task000")
    (folder / file).write_text(nested())
    load = {"demo.json": load_demo, "graph.json": load_graph, "suite.json": load_suite}
    with pytest.raises(FormatError, match="levels deep") as refused:
        load.get(file, load_task)(folder)
    assert str(folder / file) in str(refused.value)


@pytest.mark.parametrize("file", ["run.json", "overrides.json", "tags.json", "results.jsonl"])
def test_deeply_nested_run_files_are_refused_naming_them(tmp_path, file):
    store = RunStore.create(tmp_path / "run", {"agent": {"name": "random"}})
    (tmp_path / "run" / file).write_text(nested() + "\n")
    if file == "results.jsonl":
        assert store.results() == [] and store.skipped_lines == 1  # a torn line, set aside
        return
    read = {"run.json": store.info, "overrides.json": store.overrides, "tags.json": store.tags}
    with pytest.raises(RunStoreError, match="levels deep") as refused:
        read[file]()
    assert f"run/{file}" in str(refused.value)
    store.close()


def test_a_json_file_over_the_size_cap_is_refused_unread(tmp_path, monkeypatch):
    import graph_builder.io as gio

    write_suite(tmp_path / "suite", 1, demos=tmp_path / "demos", size=(270, 600))
    graph = tmp_path / "suite" / "task000" / "graph.json"
    monkeypatch.setattr(gio, "MAX_JSON_BYTES", graph.stat().st_size - 1)
    with pytest.raises(FormatError, match="larger than") as refused:
        load_graph(graph)
    assert "task000/graph.json" in str(refused.value)


GIGABYTE = 1 << 30


def sparse_png(path: Path, size: int = GIGABYTE) -> None:
    """A 'PNG' of ``size`` bytes that passes the header and end checks: a real header, a
    hole (sparse: no disk is used), and the end chunk."""
    from graph_builder.io import PNG_END

    head = bomb_png()[:33]
    path.write_bytes(head[:16] + struct.pack(">II", 270, 600) + head[24:])
    os.truncate(path, size - len(PNG_END))
    with path.open("ab") as fh:
        fh.write(PNG_END)


def test_build_refuses_a_huge_sparse_png_even_with_a_stored_hash(tmp_path):
    write_suite(tmp_path / "made", 2, demos=tmp_path / "demos", size=(270, 600))
    demo = tmp_path / "demos" / "task001" / "demo1"
    data = json.loads((demo / "demo.json").read_text())
    for step in data["steps"]:
        step["observation"]["phash"] = "phash16:" + "ab" * 32
    (demo / "demo.json").write_text(json.dumps(data))
    sparse_png(demo / "steps" / "0001.png")
    report = build_task(
        tmp_path / "demos", "task001", tmp_path / "suite", settings=SimilaritySettings()
    )
    [note] = [n for n in report.skipped if n.startswith("demo1")]
    assert "0001.png" in note and f"{GIGABYTE:,} bytes (at most" in note
    for node_png in (tmp_path / "suite" / "task001" / "nodes").glob("*.png"):
        assert node_png.stat().st_size < 1_000_000


def test_eval_refuses_a_huge_node_image_naming_it_without_reading_it(tmp_path):
    from evaluator.runner import RunConfig, run_suite

    write_suite(tmp_path / "suite", 2, demos=tmp_path / "demos", size=(270, 600))
    graph = load_graph(tmp_path / "suite" / "task000")
    start = next(n for n in graph.nodes if n.kind.value == "start")
    image = tmp_path / "suite" / "task000" / start.screenshot
    sparse_png(image)
    with FakeLLMServer([reply('{"action": "done"}')]) as server:
        agent = {"base_url": server.base_url, "model": "m", "retries": 0}
        config = RunConfig(
            suite=tmp_path / "suite", out=tmp_path / "run", agent="openai", agent_config=agent
        )
        run_suite(config)  # a model that looks at the screen: the image must be read
    results = {r.task_id: r for r in RunStore.open(tmp_path / "run").results()}
    assert results["task000"].status.value == "error"
    assert start.screenshot in results["task000"].reason
    assert "bytes (at most" in results["task000"].reason
    assert results["task001"].status.value != "error"


def test_capture_refuses_an_oversized_or_bomb_screenshot(tmp_path, monkeypatch):
    import graph_builder.io as gio
    from graph_builder.model import Action, Task

    writer = gio.DemoWriter.create(
        tmp_path / "demos", Task(id="t", instruction="do it"), demo_id="d1"
    )
    with pytest.raises(FormatError, match="pixels") as refused:
        writer.add_step(
            bomb_png(), None, action=Action.back(), activity=None, screen=(9, 9), time=0
        )
    assert "steps/0000.png" in str(refused.value)
    image, _ = render(Sketch("S", ("One",)))
    import io as std_io

    buffer = std_io.BytesIO()
    image.save(buffer, "PNG")
    monkeypatch.setattr(gio, "MAX_PNG_BYTES", len(buffer.getvalue()) - 1)
    with pytest.raises(FormatError, match="bytes \\(at most"):
        writer.add_step(
            buffer.getvalue(), None, action=Action.back(), activity=None, screen=(9, 9), time=0
        )
    assert not list((tmp_path / "demos").rglob("*.png"))
