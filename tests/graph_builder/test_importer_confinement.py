"""Importers read only their input: a file named in it (a ColorBench graph's image names)
or reached through a symbolic link that leads outside its folder is refused, naming the
file, and nothing of it reaches the suite or the demonstrations. What an import creates
gets the folder mode the umask gives, like every other folder the studio writes."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from graph_builder.errors import FormatError
from graph_builder.importers import IMPORTERS
from graph_builder.importers.colorbench import import_colorbench
from tests.graph_builder.gb_synthetic import Sketch, render

DROIDBOT = Path(__file__).resolve().parents[1] / "fixtures" / "droidbot_qqmusic"


@pytest.fixture
def secret(tmp_path: Path) -> bytes:
    """A private file beside the input: a PNG (so a leak would import cleanly) and text."""
    private = tmp_path / "private"
    private.mkdir()
    image, _ = render(Sketch("Private", ("bank pin 4711",)))
    image.save(private / "x.png")
    (private / "notes.txt").write_text("the bank pin is 4711\n")
    return (private / "x.png").read_bytes()


def _leaked(root: Path, secret: bytes) -> list[Path]:
    if not root.exists():
        return []
    return [
        p
        for p in root.rglob("*")
        if p.is_file() and (p.read_bytes() == secret or b"4711" in p.read_bytes())
    ]


@pytest.fixture
def normal_umask() -> Iterator[int]:
    old = os.umask(0o022)
    try:
        yield 0o022
    finally:
        os.umask(old)


def _colorbench_input(tmp_path: Path, done: str) -> tuple[Path, Path]:
    images = tmp_path / "data" / "images"
    images.mkdir(parents=True)
    Image.new("RGB", (108, 240), (200, 200, 200)).save(images / "a.png")
    graph = {"a.png": {done: [{"action_type": "click", "x": 50, "y": 50}]}}
    graph_file = tmp_path / "data" / "graph.json"
    graph_file.write_text(json.dumps(graph))
    return graph_file, images


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink"])
def test_a_colorbench_graph_cannot_pull_an_outside_image_into_the_suite(
    tmp_path: Path, secret: bytes, how: str
) -> None:
    outside = tmp_path / "private" / "x.png"
    name = {"dotdot": "../../private/x.png", "absolute": str(outside), "symlink": "b.png"}[how]
    graph_file, images = _colorbench_input(tmp_path, name)
    if how == "symlink":
        (images / "b.png").symlink_to(outside)
    suite = tmp_path / "suite"
    with pytest.raises(FormatError) as refused:
        import_colorbench(
            graph_file,
            task_id="t",
            suite_dir=suite,
            images=images,
            start="a.png",
            done=[name],
            instruction="open it",
        )
    assert "graph.json" in str(refused.value)
    assert "outside" in str(refused.value) or "inside" in str(refused.value)
    assert not (suite / "t").exists()
    assert _leaked(suite, secret) == []


def test_a_colorbench_task_folder_gets_the_mode_of_the_umask(
    tmp_path: Path, normal_umask: int
) -> None:
    graph_file, images = _colorbench_input(tmp_path, "b.png")
    Image.new("RGB", (108, 240), (10, 10, 10)).save(images / "b.png")
    result = import_colorbench(
        graph_file,
        task_id="t",
        suite_dir=tmp_path / "suite",
        images=images,
        start="a.png",
        done=["b.png"],
        instruction="open it",
    )
    expected = 0o777 & ~normal_umask
    for folder in (result.folder, result.folder / "nodes"):
        assert stat.S_IMODE(folder.stat().st_mode) == expected, folder
    assert [p.name for p in (tmp_path / "suite").iterdir()] == ["t"]  # no temporary left


def _llamatouch_trace(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for i in range(2):
        image, xml = render(Sketch(f"S{i}", ("One", "Two")))
        image.save(folder / f"{i}.png")
        (folder / f"{i}.xml").write_text(xml)
        (folder / f"{i}.activity").write_text("com.example.app/.Main\n")
    (folder / "eventStructs.txt").write_text("[Home]\n")
    (folder / "instruction.txt").write_text("Go home\n")
    return folder


@pytest.mark.parametrize(("name", "target"), [("1.png", "x.png"), ("instruction.txt", "notes.txt")])
def test_llamatouch_does_not_follow_a_symlink_out_of_its_folder(
    tmp_path: Path, secret: bytes, name: str, target: str
) -> None:
    trace = _llamatouch_trace(tmp_path / "trace")
    (trace / name).unlink()
    (trace / name).symlink_to(tmp_path / "private" / target)
    demos = tmp_path / "demos"
    with pytest.raises(FormatError, match="outside") as refused:
        IMPORTERS["llamatouch"](trace, task_id="t", demos_root=demos)
    assert str(trace) in str(refused.value)
    assert _leaked(demos, secret) == []
    assert not list(demos.glob("t/*/demo.json"))


def test_llamatouch_follows_a_symlink_that_stays_inside_its_folder(tmp_path: Path) -> None:
    trace = _llamatouch_trace(tmp_path / "trace")
    shutil.move(trace / "1.png", trace / "last.png")
    (trace / "1.png").symlink_to("last.png")
    result = IMPORTERS["llamatouch"](trace, task_id="t", demos_root=tmp_path / "demos")
    assert len(result.demo.steps) == 2


def test_droidbot_does_not_follow_a_symlinked_screenshot_out_of_its_folder(
    tmp_path: Path, secret: bytes
) -> None:
    run = tmp_path / "run"
    shutil.copytree(DROIDBOT, run)
    screenshot = run / "states" / "screen_2021-11-23_094457.jpg"
    screenshot.unlink()
    screenshot.symlink_to(tmp_path / "private" / "x.png")
    demos = tmp_path / "demos"
    with pytest.raises(FormatError, match="outside"):
        IMPORTERS["droidbot"](run, task_id="t", demos_root=demos)
    assert _leaked(demos, secret) == []


def test_appagent_does_not_follow_a_symlinked_screenshot_out_of_its_folder(
    tmp_path: Path, secret: bytes
) -> None:
    demo = tmp_path / "apps" / "demo_x"
    for sub in ("raw_screenshots", "xml"):
        (demo / sub).mkdir(parents=True)
    for k in (1, 2):
        image, xml = render(Sketch(f"S{k}", ("One", "Two")))
        image.save(demo / "raw_screenshots" / f"demo_x_{k}.png")
        (demo / "xml" / f"demo_x_{k}.xml").write_text(xml)
    (demo / "record.txt").write_text("tap(1):::first_row\nstop\n")
    (demo / "task_desc.txt").write_text("Go back")
    last = demo / "raw_screenshots" / "demo_x_2.png"
    last.unlink()
    last.symlink_to(tmp_path / "private" / "x.png")
    demos = tmp_path / "demos"
    with pytest.raises(FormatError, match="outside"):
        IMPORTERS["appagent"](demo, task_id="t", demos_root=demos)
    assert _leaked(demos, secret) == []
