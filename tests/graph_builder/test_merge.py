"""Merging demonstrations into a task graph: nodes, edges, pins, drift and bad input."""

from __future__ import annotations

import dataclasses

import pytest

from graph_builder.errors import GraphBuilderError
from graph_builder.merge import DemoInput, merge_demonstrations
from graph_builder.model import (
    Action,
    ActionType,
    Demonstration,
    DemoStatus,
    MemberRef,
    NodeKind,
    Observation,
    Pin,
    PinKind,
    Step,
    SwipeDirection,
)
from graph_builder.screen import Screen
from graph_builder.similarity import SimilaritySettings
from graph_builder.validate import validate_graph
from tests.graph_builder.gb_synthetic import SIZE, Sketch, demo, observation, tap_row

S = SimilaritySettings()
HOME = Sketch("Home", ("Settings", "Contacts", "Clock"))
SETTINGS = Sketch("Settings", ("Display", "Sound", "Battery"))
DISPLAY = Sketch("Display", ("Brightness", "Dark theme", "Font size"))
DARK = Sketch("Display", DISPLAY.rows, dialog="Dark theme is on")
CONTACTS = Sketch("Contacts", ("Alice", "Bob", "Carol"))


def _members(result, node_id: str) -> set[str]:  # type: ignore[no-untyped-def]
    return {str(m) for m in result.graph.node(node_id).members}


def _two_paths():  # type: ignore[no-untyped-def]
    d1 = demo(
        "d1",
        [
            (HOME, tap_row(HOME, "Settings")),
            (SETTINGS, tap_row(SETTINGS, "Display")),
            (DISPLAY, tap_row(DISPLAY, "Dark theme")),
            (DARK, Action.done()),
        ],
    )
    # A detour through Contacts and back, another clock, and a slightly different tap point.
    x, y = HOME.row_center("Settings")
    d2 = demo(
        "d2",
        [
            (HOME.with_clock("12:05"), tap_row(HOME, "Contacts")),
            (CONTACTS, Action.back()),
            (HOME.with_clock("12:06"), Action.tap(x + 20, y + 5, screen=SIZE)),
            (SETTINGS.with_clock("12:07"), tap_row(SETTINGS, "Display")),
            (DISPLAY, tap_row(DISPLAY, "Dark theme")),
            (DARK.with_clock("12:09"), Action.done()),
        ],
    )
    return d1, d2


def test_two_demonstrations_share_nodes_and_a_loop_returns_to_start() -> None:
    result = merge_demonstrations(list(_two_paths()), settings=S)
    graph = result.graph
    assert [n.id for n in graph.nodes] == ["start", "n1", "n2", "n3", "done"]
    assert [n.kind for n in graph.nodes] == [NodeKind.START, *[NodeKind.STATE] * 3, NodeKind.DONE]
    assert _members(result, "start") == {"d1#0", "d2#0", "d2#2"}
    assert _members(result, "n1") == {"d1#1", "d2#3"}
    assert _members(result, "done") == {"d1#3", "d2#5"}
    assert validate_graph(graph) == []
    assert result.merges == 10 - 5 and not result.warnings
    assert graph.meta["demos"] == ("d1", "d2")


def test_parallel_taps_become_one_edge_with_all_points() -> None:
    graph = merge_demonstrations(list(_two_paths()), settings=S).graph
    to_settings = [e for e in graph.edges if e.source == "start" and e.target == "n1"]
    assert len(to_settings) == 1
    edge = to_settings[0]
    assert {str(s.member) for s in edge.support} == {"d1#0", "d2#2"}
    assert len(edge.rule.points) == 2
    # The row's bounds [0,96][270,144] in a 270x600 screen, in [0,1000] space.
    assert edge.rule.bounds is not None
    assert edge.rule.bounds.as_list() == [0, 160, 1000, 240]
    assert edge.rule.radius == 50
    back = [e for e in graph.edges if e.rule.action_type is ActionType.BACK]
    assert len(back) == 1 and back[0].target == "start"


def test_taps_on_different_elements_between_the_same_nodes_stay_separate() -> None:
    row_a = Sketch("List", ("Alpha", "Beta"))
    detail = Sketch("Detail", ("Info",))
    d1 = demo("d1", [(row_a, tap_row(row_a, "Alpha")), (detail, Action.done())])
    d2 = demo("d2", [(row_a, tap_row(row_a, "Beta")), (detail, Action.done())])
    graph = merge_demonstrations([d1, d2], settings=S).graph
    assert len(graph.edges) == 2
    assert {e.rule.bounds.top for e in graph.edges if e.rule.bounds} == {160, 250}


def test_swipes_merge_by_direction_and_texts_by_meaning() -> None:
    a, b = Sketch("Feed", ("One", "Two")), Sketch("Search", ("Results",))
    d1 = demo(
        "d1",
        [
            (a, Action.swipe(100, 500, 100, 200, screen=SIZE)),
            (a, Action.type_text("Hello")),
            (b, Action.done()),
        ],
    )
    d2 = demo(
        "d2",
        [
            (a, Action.swipe(120, 450, 110, 100, screen=SIZE)),
            (a, Action.type_text("hello ")),
            (b, Action.done()),
        ],
    )
    d3 = demo(
        "d3",
        [
            (a, Action.swipe(100, 100, 100, 500, screen=SIZE)),
            (a, Action.type_text("bye")),
            (b, Action.done()),
        ],
    )
    graph = merge_demonstrations([d1, d2, d3], settings=S).graph
    swipes = [e for e in graph.edges if e.rule.action_type is ActionType.SWIPE]
    assert sorted(e.rule.direction for e in swipes) == [SwipeDirection.DOWN, SwipeDirection.UP]
    up = next(e for e in swipes if e.rule.direction is SwipeDirection.UP)
    assert len(up.support) == 2 and up.source == up.target == "start"
    types = [e for e in graph.edges if e.rule.action_type is ActionType.TYPE]
    assert sorted(len(e.support) for e in types) == [1, 2]
    assert next(e for e in types if len(e.support) == 2).rule.texts == ("Hello", "hello ")


def test_tap_on_a_screen_sized_element_keeps_points_only() -> None:
    a, b = Sketch("Splash"), Sketch("Main", ("Go",))
    d1 = demo("d1", [(a, Action.tap(135, 550, screen=SIZE)), (b, Action.done())])
    edge = merge_demonstrations([d1], settings=S).graph.edges[0]
    assert edge.rule.bounds is None  # the root frame would accept any tap
    assert edge.rule.points == ((500.0, 550 / 600 * 1000),)


def test_different_start_screens_warn_and_different_end_screens_stay_apart() -> None:
    d1 = demo("d1", [(HOME, tap_row(HOME, "Settings")), (SETTINGS, Action.done())])
    d2 = demo("d2", [(CONTACTS, Action.back()), (DISPLAY, Action.done())])
    result = merge_demonstrations([d1, d2], settings=S)
    assert any("d2 starts on a screen" in w for w in result.warnings)
    assert _members(result, "start") == {"d1#0", "d2#0"}
    assert [n.id for n in result.graph.done_nodes] == ["done", "done2"]


def _hash_state(demo_id: str, step: int, bits: int) -> Screen:
    """A state known only by its hash: ``bits`` low bits set out of 256."""
    value = (1 << bits) - 1
    return Screen(
        SIZE, phash=f"phash16:{value:064x}", activity="a/.A", member=MemberRef(demo_id, step)
    )


def _hash_demo(demo_id: str, bits: list[int]) -> DemoInput:
    states = [_hash_state(demo_id, i, b) for i, b in enumerate(bits)]
    actions = [Action.back()] * (len(bits) - 1) + [Action.done()]
    steps = tuple(
        Step(i, observation(s), a) for i, (s, a) in enumerate(zip(states, actions, strict=True))
    )
    return DemoInput(
        Demonstration(
            id=demo_id, task_id="t", instruction="x", steps=steps, status=DemoStatus.COMPLETE
        ),
        tuple(states),
    )


def test_chains_do_not_drift() -> None:
    # A~B (20 bits apart, 0.92), B~C (0.92), but A vs C is 40 bits apart (0.84 < 0.90).
    result = merge_demonstrations([_hash_demo("d", [200, 0, 20, 40, 250])], settings=S)
    assert _members(result, "n1") == {"d#1", "d#2"}
    assert _members(result, "n2") == {"d#3"}
    decision = next(d for d in result.decisions if str(d.member) == "d#3")
    assert not decision.joined and decision.verdict is not None and not decision.verdict.same
    assert "0.84" in decision.describe()


def test_representative_is_the_medoid_and_comes_first() -> None:
    result = merge_demonstrations([_hash_demo("d", [200, 0, 10, 14, 250])], settings=S)
    node = result.graph.node("n1")
    assert node.members[0] == MemberRef("d", 2)  # 10 is nearest to both 0 and 14
    assert result.representatives["n1"].member == MemberRef("d", 2)
    assert node.phash == f"phash16:{(1 << 10) - 1:064x}"


def test_pins_force_together_and_apart_and_stale_pins_are_reported() -> None:
    d1, d2 = _two_paths()
    pins = (
        Pin(PinKind.TOGETHER, (MemberRef("d1", 1), MemberRef("d1", 2))),  # Settings + Display
        Pin(PinKind.APART, (MemberRef("d2", 4),), (MemberRef("d1", 2),)),  # two Display shots
        Pin(PinKind.TOGETHER, (MemberRef("gone", 0), MemberRef("d1", 0))),
    )
    result = merge_demonstrations([d1, d2], settings=S, pins=pins)
    together = next(n for n in result.graph.nodes if MemberRef("d1", 1) in n.members)
    assert MemberRef("d1", 2) in together.members
    apart = next(n for n in result.graph.nodes if MemberRef("d2", 4) in n.members)
    assert MemberRef("d1", 2) not in apart.members
    assert result.stale_pins == (pins[2],)
    assert any("no longer applies" in w for w in result.warnings)
    assert result.graph.pins == pins  # kept, so no manual decision is lost
    pinned = [d for d in result.decisions if d.reason.startswith("pinned")]
    assert [str(d.member) for d in pinned] == ["d1#2"]


def test_unusable_demonstrations_are_skipped_and_the_rest_build() -> None:
    d1, _ = _two_paths()
    unfinished = dataclasses.replace(d1.demo, id="open", steps=d1.demo.steps[:-1])
    broken_obs = Observation(screenshot="missing.png", screen=SIZE)  # no hash, no file
    broken_state = Screen(SIZE, member=MemberRef("broken", 1))
    broken_demo = dataclasses.replace(
        d1.demo, id="broken", steps=(d1.demo.steps[0], Step(1, broken_obs, Action.done()))
    )
    result = merge_demonstrations(
        [
            d1,
            DemoInput(unfinished, d1.states[:-1]),
            DemoInput(broken_demo, (d1.states[0], broken_state)),
            d1,
        ],
        settings=S,
    )
    reasons = {s.demo_id: s.reason for s in result.skipped}
    assert "does not end with 'done'" in reasons["open"]
    assert "step 1" in reasons["broken"]
    assert "same id" in reasons["d1"]
    assert result.graph.meta["demos"] == ("d1",)
    with pytest.raises(GraphBuilderError, match="no usable demonstration"):
        merge_demonstrations([DemoInput(unfinished, d1.states[:-1])], settings=S)


def test_demo_input_needs_one_state_per_step() -> None:
    d1, _ = _two_paths()
    with pytest.raises(GraphBuilderError, match="states were given"):
        DemoInput(d1.demo, d1.states[:2])


def test_an_end_screen_joins_the_same_intermediate_screen_which_becomes_done() -> None:
    clock = Sketch("World clock", ("New York", "London"))
    d1 = demo(
        "d1", [(HOME, tap_row(HOME, "Clock")), (clock, Action.wait()), (clock, Action.done())]
    )
    d2 = demo("d2", [(HOME, tap_row(HOME, "Clock")), (clock.with_clock("12:01"), Action.done())])
    graph = merge_demonstrations([d1, d2], settings=S).graph
    assert [n.id for n in graph.nodes] == ["start", "done"]
    assert set(graph.node("done").members) == {
        MemberRef("d1", 1),
        MemberRef("d1", 2),
        MemberRef("d2", 1),
    }
    assert [e.rule.action_type for e in graph.out_edges("done")] == [ActionType.WAIT]


def test_an_end_screen_like_the_start_keeps_its_own_done_node() -> None:
    d1 = demo(
        "d1", [(HOME, tap_row(HOME, "Settings")), (SETTINGS, Action.back()), (HOME, Action.done())]
    )
    graph = merge_demonstrations([d1], settings=S).graph
    assert [(n.id, n.kind) for n in graph.nodes] == [
        ("start", NodeKind.START),
        ("n1", NodeKind.STATE),
        ("done", NodeKind.DONE),
    ]
    assert validate_graph(graph) == []
