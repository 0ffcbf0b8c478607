"""Building suites from demonstrations on disk, through the library and `elderbench build`."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from elderbench.cli import main
from graph_builder.build import build_task, write_node_files
from graph_builder.edits import EditEdgeRule, SplitMembers
from graph_builder.io import (
    load_graph,
    load_suite,
    load_task,
    save_graph,
    save_suite,
    save_task,
    set_demo_status,
)
from graph_builder.model import (
    Action,
    ActionType,
    DemoStatus,
    Edge,
    EvalProtocol,
    MatchRule,
    MemberRef,
    Pin,
    PinKind,
    ResetRecipe,
    Suite,
    Task,
)
from graph_builder.screen import Screen
from graph_builder.similarity import SimilaritySettings
from graph_builder.validate import validate_graph
from tests.graph_builder.gb_synthetic import Sketch, tap_row, write_demo
from tests.shared_fixtures import require_llamatouch_trace

HOME = Sketch("Home", ("Settings", "Contacts"))
SETTINGS = Sketch("Settings", ("Display", "Sound"))
DISPLAY = Sketch("Display", ("Brightness", "Dark theme"))


def _path(clock: str = "12:00") -> list[tuple[Sketch, Action]]:
    return [
        (HOME.with_clock(clock), tap_row(HOME, "Settings")),
        (SETTINGS.with_clock(clock), tap_row(SETTINGS, "Display")),
        (DISPLAY.with_clock(clock), Action.done()),
    ]


@pytest.fixture
def demos(tmp_path: Path) -> Path:
    root = tmp_path / "demos"
    write_demo(root, "a", _path("09:00"))
    write_demo(root, "b", _path("09:30"), phash=False)  # hashes computed at build time
    return root


def test_build_writes_a_valid_task_folder(demos: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    suite = tmp_path / "suite"
    assert main(["build", str(demos), "-o", str(suite)]) == 0
    out = capsys.readouterr()
    assert "task1: 2 demos, 3 nodes, 2 edges, 3 merges, 0 warnings, 0 errors -> written" in out.out
    assert "1/1" in out.err  # the progress bar
    graph = load_graph(suite / "task1")
    assert [n.id for n in graph.nodes] == ["start", "n1", "done"]
    assert validate_graph(graph) == []
    for node in graph.nodes:
        assert (suite / "task1" / node.screenshot).read_bytes().startswith(b"\x89PNG")
        assert (suite / "task1" / (node.hierarchy or "")).read_text().startswith("<?xml")
    task = load_task(suite / "task1")
    assert task.instruction == "Do the thing" and task.protocol.value == "offline"
    assert load_suite(suite).name == "suite"
    assert not list(suite.glob(".task1.*"))  # no temporary folders left


def test_explain_prints_every_decision_with_scores(demos: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["build", str(demos), "-o", str(tmp_path / "s"), "--explain"]) == 0
    out = capsys.readouterr().out
    assert "b#1 -> n1: same screen as every member checked [vs a#1: SAME (the hierarchies " in out
    assert "p(same) 1.00" in out
    assert "a#1 -> n1: new node; no node fits [vs a#0: DIFFERENT (" in out
    assert "visual" in out and "structure" in out and "content" in out


def test_repaired_hierarchies_are_warnings_on_their_step_and_counted(
    demos: Path, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    step = demos / "task1" / "b" / "steps" / "0001.xml"
    # A view scrolled out of its parent, as real phones dump it, and uiautomator's own line.
    scrolled_out = '<node class="android.view.View" bounds="[0,220][300,28]"/></hierarchy>'
    xml = step.read_text().replace("</hierarchy>", scrolled_out)
    step.write_text(xml + "UI hierchary dumped to: /dev/tty")
    assert main(["build", str(demos), "-o", str(tmp_path / "s"), "--explain"]) == 0
    out = capsys.readouterr().out
    assert "2 demos, 3 nodes, 2 edges, 3 merges, 2 warnings" in out  # the dump still merged
    assert "warning: b#1: hierarchy repaired: cut text after the XML: 'UI hierchary" in out
    assert "warning: b#1: hierarchy repaired: 1 node with inverted bounds collapsed" in out
    assert "hierarchy repairs: 2 in 1 steps" in out


def test_settings_file_is_used_and_bad_settings_are_reported(
    demos: Path, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    coarse = tmp_path / "coarse.json"
    coarse.write_text(json.dumps({"hash_size": 8, "max_text_changes": 0.25}))
    assert main(["build", str(demos), "-o", str(tmp_path / "s"), "--settings", str(coarse)]) == 0
    assert "2 demos, 3 nodes" in capsys.readouterr().out
    graph = load_graph(tmp_path / "s" / "task1")
    assert graph.meta["settings"]["hash_size"] == 8
    assert graph.meta["settings"]["max_text_changes"] == 0.25
    assert all((node.phash or "").startswith("phash8:") for node in graph.nodes)
    bad = tmp_path / "bad.json"
    bad.write_text('{"same_treshold": 1}')
    assert main(["build", str(demos), "-o", str(tmp_path / "s"), "--settings", str(bad)]) == 1
    assert "unknown settings: same_treshold" in capsys.readouterr().err


def test_incomplete_discarded_and_broken_demos_are_skipped(
    demos: Path, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    set_demo_status(write_demo(demos, "c", _path()), DemoStatus.DISCARDED)
    broken = write_demo(demos, "d", _path(), phash=False)
    (broken / "steps" / "0001.png").write_bytes(b"not a png")
    bad_xml = write_demo(demos, "e", _path())
    (bad_xml / "steps" / "0000.xml").write_text("<hierarchy><node")
    (demos / "task1" / "f").mkdir()
    (demos / "task1" / "f" / "demo.json").write_text("{")
    assert main(["build", str(demos), "-o", str(tmp_path / "s"), "--skip-unreadable"]) == 0
    out = capsys.readouterr().out
    assert "task1: 2 demos (4 skipped)" in out
    assert "skipped c: discarded" in out
    assert "skipped d: step 1:" in out and "not a PNG" in out
    assert "skipped e: step 0:" in out and "malformed hierarchy" in out
    assert "skipped f: unreadable demo.json" in out
    assert load_graph(tmp_path / "s" / "task1").meta["demos"] == ("a", "b")


def test_an_unreadable_demo_refuses_the_rebuild_naming_it_unless_asked_to_skip_it(
    demos: Path, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    suite = tmp_path / "s"
    write_demo(demos, "c", _path("10:00"))
    assert main(["build", str(demos), "-o", str(suite)]) == 0
    before = (suite / "task1" / "graph.json").read_bytes()
    assert load_graph(suite / "task1").meta["demos"] == ("a", "b", "c")
    capsys.readouterr()
    truncated = demos / "task1" / "b" / "demo.json"
    truncated.write_bytes(truncated.read_bytes()[:40])
    assert main(["build", str(demos), "-o", str(suite)]) == 1
    out = capsys.readouterr().out
    assert f"NOT written: cannot read {truncated}" in out and "--skip-unreadable" in out
    assert (suite / "task1" / "graph.json").read_bytes() == before
    assert main(["build", str(demos), "-o", str(suite), "--skip-unreadable"]) == 0
    assert load_graph(suite / "task1").meta["demos"] == ("a", "c")


def test_task_json_comes_from_the_suite_then_the_demos_folder(demos: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    save_task(Task(id="task1", instruction="From the demos folder", app="x"), demos / "task1")
    settings = SimilaritySettings()
    build_task(demos, "task1", suite, settings=settings)
    assert load_task(suite / "task1").instruction == "From the demos folder"
    save_task(Task(id="task1", instruction="Edited in the suite"), suite / "task1")
    (suite / "task1" / "notes.txt").write_text("keep me")
    build_task(demos, "task1", suite, settings=settings)
    assert load_task(suite / "task1").instruction == "Edited in the suite"
    assert (suite / "task1" / "notes.txt").read_text() == "keep me"


def test_a_broken_graph_never_replaces_a_valid_one_without_force(
    demos: Path, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    suite = tmp_path / "suite"
    settings = SimilaritySettings()
    assert build_task(demos, "task1", suite, settings=settings).written
    good = load_graph(suite / "task1")
    # A pin that glues the start screen to the end screen leaves no DONE node: an error.
    glue = Pin(PinKind.TOGETHER, (MemberRef("a", 0), MemberRef("a", 2), MemberRef("b", 2)))
    save_graph(good.with_changes(pins=(glue,)), suite / "task1")
    good = load_graph(suite / "task1")
    assert main(["build", str(demos), "-o", str(suite)]) == 1
    out = capsys.readouterr().out
    assert "NOT written: the new graph has errors" in out and "no DONE node" in out
    assert load_graph(suite / "task1") == good
    assert main(["build", str(demos), "-o", str(suite), "--force"]) == 0
    assert load_graph(suite / "task1").done_nodes == ()


def test_a_failed_write_keeps_the_old_folder(demos: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    suite = tmp_path / "suite"
    settings = SimilaritySettings()
    build_task(demos, "task1", suite, settings=settings)
    before = (suite / "task1" / "graph.json").read_bytes()
    write_demo(demos, "c", _path("10:00"))

    def fail(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(Screen, "copy_files", fail)
    report = build_task(demos, "task1", suite, settings=settings)
    assert not report.written and "disk full" in report.note
    assert (suite / "task1" / "graph.json").read_bytes() == before
    assert sorted(p.name for p in suite.iterdir()) == [".lock", "suite.json", "task1"]


def test_rebuild_keeps_a_split_made_in_the_editor(demos: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    settings = SimilaritySettings()
    build_task(demos, "task1", suite, settings=settings)
    graph = load_graph(suite / "task1")
    split, _ = SplitMembers("n1", (MemberRef("b", 1),)).apply(graph)
    split = write_node_files(suite / "task1", split, demos, ["n2"])
    assert (suite / "task1" / "nodes" / "n2.png").read_bytes().startswith(b"\x89PNG")
    save_graph(split, suite / "task1")
    report = build_task(demos, "task1", suite, settings=settings)
    rebuilt = load_graph(suite / "task1")
    assert report.written and len(rebuilt.nodes) == 4
    holders = [
        n.id for n in rebuilt.nodes if {MemberRef("a", 1), MemberRef("b", 1)} & set(n.members)
    ]
    assert len(holders) == 2


def test_no_demonstrations_is_an_error(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty").mkdir()
    assert main(["build", str(tmp_path / "empty"), "-o", str(tmp_path / "s")]) == 1
    assert "no demonstrations found" in capsys.readouterr().out
    assert main(["build", str(tmp_path / "nowhere"), "-o", str(tmp_path / "s")]) == 2


def test_only_the_named_task_is_built(demos: Path, tmp_path: Path) -> None:
    write_demo(demos, "x", _path(), task_id="task2")
    assert main(["build", str(demos), "-o", str(tmp_path / "s"), "--task", "task2"]) == 0
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == [".lock", "suite.json", "task2"]


def test_import_then_build_the_real_trace(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    trace = require_llamatouch_trace()
    demos, suite = tmp_path / "demos", tmp_path / "suite"
    assert main(["import", "llamatouch", str(trace), "--task", "duo", "-o", str(demos)]) == 0
    assert "imported 5 steps" in capsys.readouterr().out
    assert main(["build", str(demos), "-o", str(suite)]) == 0
    graph = load_graph(suite / "duo")
    assert len(graph.nodes) == 5  # five different real screens: nothing merged
    assert [e.rule.action_type.value for e in graph.edges] == ["home", "tap", "tap", "tap"]
    assert graph.edges[1].rule.bounds is not None
    assert load_task(suite / "duo").instruction.startswith("Practice pronunciation")


def test_a_build_into_a_fresh_folder_keeps_the_task_people_wrote(tmp_path: Path) -> None:
    # A suite that ships its demonstrations (suite/demos/<task>/...), and a studio workspace.
    written = Task(
        id="task1",
        instruction="Can you ring my daughter",
        app="com.android.dialer",
        protocol=EvalProtocol.ONLINE,
        normalized_instruction="Call Emma",
        max_steps=12,
        reset=ResetRecipe("com.android.dialer", clear_data=True),
    )
    for home, task_dir in (
        (tmp_path / "suite", tmp_path / "suite" / "task1"),
        (tmp_path / "ws", tmp_path / "ws" / "suites" / "elder" / "task1"),
    ):
        demos = home / "demos"
        write_demo(demos, "a", _path())
        save_task(written, task_dir)
        if home.name == "suite":
            save_suite(Suite(name="suite"), home)
        fresh = tmp_path / f"fresh-{home.name}"
        report = build_task(demos, "task1", fresh, settings=SimilaritySettings())
        assert report.written and report.task_source == str(task_dir / "task.json")
        assert load_task(fresh / "task1") == written


def test_a_rebuild_keeps_edited_edge_rules_and_says_so(demos: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    suite = tmp_path / "suite"
    build_task(demos, "task1", suite, settings=SimilaritySettings())
    graph = load_graph(suite / "task1")
    first = graph.edges[0]
    wider = dataclasses.replace(first.rule, radius=120.0)
    graph, _ = EditEdgeRule(first.id, wider).apply(graph)
    hand = Edge("e9", "n1", "start", MatchRule(ActionType.BACK))
    graph = graph.with_changes(edges=(*graph.edges, hand))
    save_graph(graph, suite / "task1")
    assert main(["build", str(demos), "-o", str(suite)]) == 0
    out = capsys.readouterr().out
    rebuilt = load_graph(suite / "task1")
    assert rebuilt.edges[0].rule.radius == 120.0
    assert any(e.rule.action_type is ActionType.BACK for e in rebuilt.edges)
    assert f"kept the edited rule of edge {first.id} (now {first.id}): radius 120" in out
    assert "kept edge e9, drawn by hand, as e9 (n1 -> start)" in out
