"""Explore a branch on the virtual phone: audit -> mark valid -> explore -> rebuild turns
the branch into an edge, and a new run's audit no longer lists it as uncredited."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from devices.android import AndroidDevice, adb_client
from elderbench.cli import main
from evaluator.audit_groups import AuditGroup, collect
from evaluator.audit_marks import Target, set_mark
from evaluator.explore import (
    ExploreError,
    ScriptStep,
    explore,
    load_script,
    path_from,
    path_to,
)
from evaluator.run_store import RunStore
from evaluator.run_summary import summarize
from evaluator.runner import RunConfig, run_suite
from graph_builder.build import build_task
from graph_builder.io import SUITE_DEMOS_DIR, load_demo, load_graph
from graph_builder.model import Action, DemoStatus
from task_graphs.generate import SUITE_DIR
from virtual_phone import fast_phone, running_server

TASK = "wake_at_eight"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    out = tmp_path / "suite"
    out.mkdir()
    shutil.copy2(SUITE_DIR / "suite.json", out / "suite.json")
    shutil.copytree(SUITE_DIR / TASK, out / TASK)
    shutil.copytree(SUITE_DIR / SUITE_DEMOS_DIR / TASK, out / SUITE_DEMOS_DIR / TASK)
    return out


def _heuristic(suite: Path, out: Path) -> Path:
    run_suite(
        RunConfig(suite=suite, out=out, agent="heuristic", protocol="offline", variant="normalized")
    )
    return out


def _alarm_group(run: Path) -> AuditGroup:
    """The group of the heuristic's tap on the existing 8:00 AM alarm at START (which opens
    the alarm to edit; nobody demonstrated that way)."""
    groups = [g for g in collect([run]).groups if g.task_id == TASK]
    (group,) = [g for g in groups if g.target.element and "8:00 AM" in "".join(g.target.element)]
    return group


def test_an_explored_branch_becomes_an_edge_after_the_next_build(suite, tmp_path, capsys):
    first = _heuristic(suite, tmp_path / "first")
    group = _alarm_group(first)
    assert group.node_id == "start"
    before = load_graph(suite / TASK)
    assert main(["audit", str(first), "--mark", group.id, "valid", "--annotator", "ana"]) == 0
    marked = summarize(first).bounds
    assert marked is not None and marked["undetermined_tasks"] == [TASK]
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"type": "tap", "element": {"text": "OK"}}]))
    with running_server(phones=[fast_phone("virtual-1")]) as server:
        code = main(
            [
                "explore",
                str(suite),
                "--task",
                TASK,
                "--group",
                group.id,
                "--device",
                f"virtual-1@127.0.0.1:{server.port}",
                "--script",
                str(script),
                "--annotator",
                "ana",
            ]
        )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    folder = suite / SUITE_DEMOS_DIR / TASK / f"explore-{group.id}"
    demo = load_demo(folder)
    assert demo.status is DemoStatus.COMPLETE and demo.source == "explored"
    assert [s.action.type.value for s in demo.steps] == ["tap", "tap", "done"]
    tapped = [s.action.element.text for s in demo.steps[:2] if s.action.element]
    assert tapped == ["8:00 AM", "OK"]
    assert all(s.observation.hierarchy and s.observation.activity for s in demo.steps)

    report = build_task(suite / SUITE_DEMOS_DIR, TASK, suite, force=True)
    assert report.written, report.note
    after = load_graph(suite / TASK)
    explored = [e for e in after.edges if any(s.member.demo_id == demo.id for s in e.support)]
    assert explored[0].source == "start" and len(explored) == 2
    assert len(after.edges) > len(before.edges)

    second = _heuristic(suite, tmp_path / "second")
    # the same tap is now credited: it follows the explored edge
    assert RunStore.open(second).read_steps(TASK)[0].edge == explored[0].id
    # ... so the episode is scored on the grown graph, no longer undetermined
    scored = summarize(second).bounds
    assert scored is not None and scored["undetermined"] == 0
    assert all(
        not (g.target.element and "8:00 AM" in "".join(g.target.element))
        for g in collect([second]).groups
        if g.task_id == TASK
    )


def test_without_a_script_the_demonstration_is_left_for_a_person(suite, tmp_path):
    first = _heuristic(suite, tmp_path / "first")
    group = _alarm_group(first)
    set_mark(
        suite,
        TASK,
        group=group.id,
        verdict="valid",
        annotator="ana",
        node_members=group.node_members,
        target=group.target,
    )
    with running_server(phones=[fast_phone("virtual-1")]) as server:
        device = AndroidDevice("virtual-1", client=adb_client(port=server.port), timeout=5.0)
        with device:
            explored = explore(suite, TASK, group.id, device, tmp_path / "demos")
            after = device.observe().hierarchy()
    assert explored.demo.status is DemoStatus.INCOMPLETE
    assert [s.action.type.value for s in explored.demo.steps] == ["tap"]
    assert explored.demo.steps[0].performed
    # the phone was left where the branch led, for a person to go on: the alarm editor
    assert after is not None and after.find(text="Edit alarm")


def test_only_a_group_marked_valid_is_explored(suite, tmp_path):
    first = _heuristic(suite, tmp_path / "first")
    group = _alarm_group(first)
    with pytest.raises(ExploreError, match=r"no mark on group"):
        explore(suite, TASK, group.id, None, tmp_path / "demos")  # type: ignore[arg-type]
    set_mark(
        suite,
        TASK,
        group=group.id,
        verdict="wrong",
        annotator="bo",
        node_members=group.node_members,
        target=group.target,
    )
    with pytest.raises(ExploreError, match=r"marked 'wrong' by bo"):
        explore(suite, TASK, group.id, None, tmp_path / "demos")  # type: ignore[arg-type]
    assert not (tmp_path / "demos").exists()


def test_the_phone_is_driven_along_the_demonstrated_edges_to_the_marked_node(suite, tmp_path):
    graph = load_graph(suite / TASK)
    (add,) = [
        e
        for e in graph.edges
        if e.source == "start"
        and any(
            s.action.element and s.action.element.content_desc == "Add alarm" for s in e.support
        )
    ]
    picker = graph.node(add.target)
    # A mark made by hand on the time picker: Cancel, a way back nobody demonstrated.
    set_mark(
        suite,
        TASK,
        group="gpicker",
        verdict="valid",
        annotator="ana",
        node_members=tuple((m.demo_id, m.step) for m in picker.members),
        target=Target("tap", element=("", "Cancel", "")),
    )
    with running_server(phones=[fast_phone("virtual-1")]) as server:
        device = AndroidDevice("virtual-1", client=adb_client(port=server.port), timeout=5.0)
        with device:
            explored = explore(
                suite,
                TASK,
                "gpicker",
                device,
                tmp_path / "demos",
                script=[ScriptStep(Action.done())],
            )
    assert explored.node == picker.id and explored.path.edge_ids == (add.id,)
    steps = explored.demo.steps
    assert [s.action.type.value for s in steps] == ["tap", "tap", "done"]
    assert steps[0].action.element is not None
    assert steps[0].action.element.content_desc == "Add alarm"
    assert steps[1].action.element is not None and steps[1].action.element.text == "Cancel"
    assert explored.demo.status is DemoStatus.COMPLETE
    # the last screen is the alarm list again, without the picker
    assert steps[2].observation.hierarchy is not None
    last = (explored.folder / steps[2].observation.hierarchy).read_text()
    assert "Add alarm" in last and "Cancel" not in last


def test_the_way_to_a_node_is_the_shortest_demonstrated_one(suite):
    graph = load_graph(suite / TASK)
    assert path_to(graph, "start").steps == ()
    done = next(n.id for n in graph.nodes if n.kind.value == "done")
    way = path_to(graph, done)
    # d1 and d2 take three and four edges, d3 five: the way to DONE is d1's whole path
    assert way.demos == ("d1",) and len(way.steps) == 3
    assert way.steps[0].edge.source == "start" and way.steps[-1].edge.target == done


def test_explore_needs_somewhere_to_put_the_demonstration(suite, capsys):
    shutil.rmtree(suite / SUITE_DEMOS_DIR)
    args = ["explore", str(suite), "--task", TASK, "--group", "g1", "--device", "virtual-1"]
    assert main(args) == 2
    assert "ships no demos/; give -o DEMOS_DIR" in capsys.readouterr().err


def test_a_script_that_fails_after_the_branch_keeps_the_demonstration(suite, tmp_path):
    first = _heuristic(suite, tmp_path / "first")
    group = _alarm_group(first)
    set_mark(
        suite,
        TASK,
        group=group.id,
        verdict="valid",
        annotator="ana",
        node_members=group.node_members,
        target=group.target,
    )
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"type": "tap", "element": {"text": "Snooze forever"}}]))
    with running_server(phones=[fast_phone("virtual-1")]) as server:
        device = AndroidDevice("virtual-1", client=adb_client(port=server.port), timeout=5.0)
        with device, pytest.raises(ExploreError, match=r"script action 1: .*kept incomplete"):
            explore(suite, TASK, group.id, device, tmp_path / "demos", script=load_script(script))
    demo = load_demo(tmp_path / "demos" / TASK / f"explore-{group.id}")
    assert demo.status is DemoStatus.INCOMPLETE and len(demo.steps) == 1


def test_the_rest_is_followed_along_the_graph_once_the_phone_is_back_on_it(suite, tmp_path):
    graph = load_graph(suite / TASK)
    picker = next(n for n in graph.nodes if ("d1", 1) in {(m.demo_id, m.step) for m in n.members})
    set_mark(
        suite,
        TASK,
        group="gcancel",
        verdict="valid",
        annotator="ana",
        node_members=tuple((m.demo_id, m.step) for m in picker.members),
        target=Target("tap", element=("", "Cancel", "")),
    )
    with running_server(phones=[fast_phone("virtual-1")]) as server:
        device = AndroidDevice("virtual-1", client=adb_client(port=server.port), timeout=5.0)
        with device:
            explored = explore(
                suite, TASK, "gcancel", device, tmp_path / "demos", rest_on_graph=True
            )
    said = [
        s.action.element.text or s.action.element.content_desc
        for s in explored.demo.steps
        if s.action.element is not None
    ]
    # to the picker, the branch (Cancel: back on START), then d1's way from START to DONE
    assert said == ["Add alarm", "Cancel", "Add alarm", "Increase hour", "OK"]
    assert explored.demo.steps[-1].action.type.value == "done"
    assert explored.demo.status is DemoStatus.COMPLETE
    assert path_from(graph, "start").demos == ("d1",)
