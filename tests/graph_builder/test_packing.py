"""A packed suite (each distinct PNG once, the copies listed in duplicates.json) is
restored byte for byte, and loads as the ordinary format again."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

from graph_builder.io import load_demo, load_graph
from graph_builder.packing import DUPLICATES_FILE, pack, restore

SAMPLE = Path(__file__).resolve().parents[2] / "task_graphs" / "sample"
TASKS = ("call_daughter", "font_bigger")


def files(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())


def test_a_packed_suite_is_restored_byte_for_byte(tmp_path):
    suite = tmp_path / "suite"
    for task in TASKS:
        shutil.copytree(SAMPLE / task, suite / task)
        shutil.copytree(SAMPLE / "demos" / task, suite / "demos" / task)
    original = tmp_path / "original"
    shutil.copytree(suite, original)
    dropped = pack(suite)
    pngs = [p for p in files(suite) if p.suffix == ".png"]
    assert dropped > 0 and len(pngs) + dropped == sum(p.suffix == ".png" for p in files(original))
    assert len({(suite / p).read_bytes() for p in pngs}) == len(pngs)  # each content once
    assert restore(suite) == dropped
    assert [p for p in files(suite) if p.name != DUPLICATES_FILE] == files(original)
    for relative in files(original):
        assert filecmp.cmp(original / relative, suite / relative, shallow=False), relative
    load_graph(suite / TASKS[0])
    load_demo(next((suite / "demos" / TASKS[0]).iterdir()))
    assert restore(suite) == 0  # complete: nothing more to write
