"""Two writers of one suite: a build holds the suite's lock, and what a killed build leaves
behind is never taken for a task."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from elderbench.cli import main
from evaluator.runner import RunConfig, load_jobs
from graph_builder import io
from graph_builder.build import task_ids
from graph_builder.folder_lock import FolderLock
from graph_builder.model import Action
from tests.graph_builder.gb_synthetic import Sketch, tap_row, write_demo

HOME = Sketch("Home", ("Settings", "Contacts"))
SETTINGS = Sketch("Settings", ("Display", "Sound"))


@pytest.fixture
def demos(tmp_path: Path) -> Path:
    root = tmp_path / "demos"
    for demo_id, clock in (("a", "09:00"), ("b", "09:30")):
        steps = [
            (HOME.with_clock(clock), tap_row(HOME, "Settings")),
            (SETTINGS.with_clock(clock), Action.done()),
        ]
        write_demo(root, demo_id, steps)
    return root


def files_of(folder: Path) -> dict[Path, bytes]:
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_build_refuses_a_suite_another_build_holds_and_leaves_its_folders_alone(
    demos: Path, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    suite = tmp_path / "suite"
    assert main(["build", str(demos), "-o", str(suite)]) == 0
    before = files_of(suite / "task1")
    other = suite / ".task1.building"  # the other build's task folder, half written
    shutil.copytree(suite / "task1", other)
    capsys.readouterr()
    with FolderLock(suite, purpose="elderbench build (the other one)"):
        assert main(["build", str(demos), "-o", str(suite)]) == 1
    err = capsys.readouterr().err
    assert "is in use by elderbench build (the other one)" in err
    assert files_of(other) == files_of(suite / "task1") == before


def test_hidden_and_temporary_folders_are_never_tasks_and_a_build_cleans_leftovers(
    demos: Path, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    from recorder_app.qt.graph_editor.task_list import suite_entries

    suite = tmp_path / "suite"
    assert main(["build", str(demos), "-o", str(suite)]) == 0
    shutil.copytree(suite / "task1", suite / ".task1.building")  # a killed build's
    shutil.copytree(suite / "task1", suite / ".task1.old")
    shutil.copytree(demos / "task1" / "a", demos / "task1" / ".a.partial")
    shutil.copytree(demos / "task1", demos / ".task1.copy")
    assert io.suite_task_dirs(suite) == [suite / "task1"]
    assert [e.task_id for e in suite_entries(suite, demos)] == ["task1"]
    assert task_ids(demos) == ["task1"]
    assert io.demo_dirs(demos, "task1") == [demos / "task1" / "a", demos / "task1" / "b"]
    jobs = load_jobs(RunConfig(suite=suite, out=tmp_path / "run", agent="replay"))
    assert [job.task_id for job in jobs] == ["task1"]  # no "two folders hold task1"
    assert io.leftovers(suite) == [suite / ".task1.building", suite / ".task1.old"]

    capsys.readouterr()
    assert main(["build", str(demos), "-o", str(suite)]) == 0
    out = capsys.readouterr().out
    assert "removed .task1.building, left by a build that was killed" in out
    assert io.leftovers(suite) == []
    assert io.load_graph(suite / "task1").meta["demos"] == ("a", "b")
