"""Paths stored inside demo.json and graph.json stay inside their folder: an absolute
path, a '..' or a symbolic link to an outside file is refused, and build never links or
copies an outside file into a suite."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evaluator.synthetic import write_suite
from graph_builder.build import build_task
from graph_builder.errors import FormatError
from graph_builder.io import load_demo, load_graph
from graph_builder.similarity import SimilaritySettings


@pytest.fixture
def outside(tmp_path) -> Path:
    """A file that is no part of any suite or demonstration (a stand-in for a secret)."""
    secret = tmp_path / "private" / "secret.png"
    secret.parent.mkdir()
    shutil.copyfile(Path(__file__).parents[2] / "resources" / "icons" / "studio.svg", secret)
    return secret


def escape(demo: Path, outside: Path, how: str) -> None:
    data = json.loads((demo / "demo.json").read_text())
    if how == "symlink":
        target = demo / "steps" / "0000.png"
        target.unlink()
        target.symlink_to(outside)
    else:
        path = str(outside) if how == "absolute" else "../../../private/secret.png"
        data["steps"][0]["observation"]["screenshot"] = path
        (demo / "demo.json").write_text(json.dumps(data))


@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink"])
def test_build_refuses_demo_paths_that_leave_the_demo_folder(tmp_path, outside, how):
    write_suite(tmp_path / "suite", 2, demos=tmp_path / "demos", size=(270, 600))
    demo = tmp_path / "demos" / "task001" / "demo1"
    escape(demo, outside, how)
    with pytest.raises(FormatError, match="demo.json") as refused:
        load_demo(demo)
    assert "inside" in str(refused.value) or "outside" in str(refused.value)
    refused = build_task(tmp_path / "demos", "task001", tmp_path / "suite")
    assert not refused.written and str(demo / "demo.json") in refused.note
    report = build_task(
        tmp_path / "demos",
        "task001",
        tmp_path / "suite",
        settings=SimilaritySettings(),
        skip_unreadable=True,
    )
    assert any(note.startswith("demo1: unreadable demo.json") for note in report.skipped)
    linked = [
        p
        for p in (tmp_path / "suite").rglob("*")
        if p.is_file() and (p.samefile(outside) or p.read_bytes() == outside.read_bytes())
    ]
    assert linked == []


@pytest.mark.parametrize("path", ["/etc/hostname", "../task000/nodes/start.png", "nodes/../../x"])
def test_graph_node_paths_must_stay_in_the_task_folder(tmp_path, path):
    write_suite(tmp_path / "suite", 2, demos=tmp_path / "demos", size=(270, 600))
    graph_file = tmp_path / "suite" / "task001" / "graph.json"
    data = json.loads(graph_file.read_text())
    data["nodes"][0]["screenshot"] = path
    graph_file.write_text(json.dumps(data))
    with pytest.raises(FormatError, match=r"task001/graph.json"):
        load_graph(graph_file)
