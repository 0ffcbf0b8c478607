"""A jump in a demonstration (a resumed recording continued from another screen) is not a
transition: the merge builds no edge across it, and the demonstration stays readable."""

from __future__ import annotations

import dataclasses

from graph_builder.merge import DemoInput, merge_demonstrations
from graph_builder.model import Action, ActionType, Demonstration, MemberRef, Step
from graph_builder.similarity import SimilaritySettings
from tests.graph_builder.gb_synthetic import Sketch, demo, tap_row

S = SimilaritySettings()
HOME = Sketch("Home", ("Settings", "Contacts", "Clock"))
SETTINGS = Sketch("Settings", ("Display", "Sound", "Battery"))
DISPLAY = Sketch("Display", ("Brightness", "Dark theme", "Font size"))
DARK = Sketch("Display", DISPLAY.rows, dialog="Dark theme is on")


def _resumed(*, jumped: bool) -> DemoInput:
    """Stopped on Display after pressing Back; the phone was found on Home and the
    recording continued there."""
    item = demo(
        "d1",
        [
            (HOME, tap_row(HOME, "Settings")),
            (SETTINGS, tap_row(SETTINGS, "Display")),
            (DISPLAY, Action.back()),
            (HOME.with_clock("12:05"), tap_row(HOME, "Settings")),
            (SETTINGS, tap_row(SETTINGS, "Display")),
            (DISPLAY, tap_row(DISPLAY, "Dark theme")),
            (DARK, Action.done()),
        ],
    )
    steps = list(item.demo.steps)
    steps[3] = dataclasses.replace(steps[3], jumped=jumped)
    return DemoInput(dataclasses.replace(item.demo, steps=tuple(steps)), item.states)


def _back_edges(item: DemoInput) -> list[tuple[str, str]]:
    graph = merge_demonstrations([item], settings=S).graph
    return [(e.source, e.target) for e in graph.edges if e.rule.action_type is ActionType.BACK]


def test_no_edge_is_built_across_a_jump() -> None:
    # Without the mark the merge invents what nobody did: Display -> START by Back.
    assert _back_edges(_resumed(jumped=False)) == [("n2", "start")]
    result = merge_demonstrations([_resumed(jumped=True)], settings=S)
    graph = result.graph
    assert _back_edges(_resumed(jumped=True)) == []
    supports = {s.member for e in graph.edges for s in e.support}
    assert MemberRef("d1", 2) not in supports  # the action before the jump leads nowhere known
    assert {MemberRef("d1", i) for i in (0, 1, 3, 4, 5)} <= supports
    assert graph.node("start").members == (MemberRef("d1", 0), MemberRef("d1", 3))


def test_a_jump_is_written_only_where_it_happened_and_old_demos_read() -> None:
    item = _resumed(jumped=True)
    data = item.demo.to_json()
    assert [("jumped" in s) for s in data["steps"]] == [
        False,
        False,
        False,
        True,
        False,
        False,
        False,
    ]
    assert Demonstration.from_json(data) == item.demo
    old = dict(data["steps"][3])
    del old["jumped"]
    assert Step.from_json(old).jumped is False
