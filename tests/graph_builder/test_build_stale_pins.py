"""A rebuild reports the manual decisions (pins) whose screens are no longer there."""

from __future__ import annotations

from pathlib import Path

from graph_builder.build import build_task
from graph_builder.edits import SplitMembers
from graph_builder.io import load_graph, save_graph, set_demo_status
from graph_builder.model import Action, DemoStatus, MemberRef, PinKind
from graph_builder.similarity import SimilaritySettings
from tests.graph_builder.gb_synthetic import Sketch, tap_row, write_demo

HOME = Sketch("Home", ("Settings", "Contacts"))
SETTINGS = Sketch("Settings", ("Display", "Sound"))
DISPLAY = Sketch("Display", ("Brightness", "Dark theme"))
PATH = [
    (HOME, tap_row(HOME, "Settings")),
    (SETTINGS, tap_row(SETTINGS, "Display")),
    (DISPLAY, Action.done()),
]


def test_pins_whose_screens_are_gone_are_reported_and_the_others_are_not(tmp_path: Path) -> None:
    demos, suite = tmp_path / "demos", tmp_path / "suite"
    for demo_id in ("a", "b", "c"):
        write_demo(demos, demo_id, PATH)
    settings = SimilaritySettings()
    assert build_task(demos, "task1", suite, settings=settings).stale_pins == ()
    graph = load_graph(suite / "task1")
    split, _ = SplitMembers("n1", (MemberRef("b", 1),)).apply(graph)
    save_graph(split, suite / "task1")

    kept = build_task(demos, "task1", suite, settings=settings)
    assert kept.written and kept.stale_pins == ()

    set_demo_status(demos / "task1" / "b", DemoStatus.DISCARDED)
    report = build_task(demos, "task1", suite, settings=settings)
    assert report.written
    assert [p.kind for p in report.stale_pins] == [PinKind.APART]
    assert report.stale_pins[0].members == (MemberRef("b", 1),)
    assert any("pin no longer applies" in w for w in report.warnings)
