"""The Graphs tab's possible-merges panel, driven through its widgets and keys."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from graph_builder.build import build_task
from graph_builder.constraints import load_constraints
from graph_builder.io import load_graph
from graph_builder.model import Action, LinkKind, MemberRef
from graph_builder.similarity import SimilaritySettings
from recorder_app.qt.graph_editor import GraphEditorPage
from recorder_app.recording.workspace import Workspace
from tests.graph_builder.gb_synthetic import Sketch, tap_row, write_demo

TASK = "task1"
HOME = Sketch("Home", ("Settings", "Contacts"))
_NOTES = {"a": "Backup", "b": "Storage", "c": "Accounts"}
SETTINGS = Sketch("Settings", ("Display", "Sound"), extra=_NOTES)
# one more text outside the list (a list row would be ambient): another state, just
SETTINGS_MORE = Sketch("Settings", ("Display", "Sound"), extra={**_NOTES, "d": "Battery"})
DISPLAY = Sketch("Display", ("Brightness", "Dark theme"))
A1, B1 = MemberRef("a", 1), MemberRef("b", 1)


def _path(settings: Sketch, clock: str) -> list[tuple[Sketch, Action]]:
    return [
        (HOME.with_clock(clock), tap_row(HOME, "Settings")),
        (settings.with_clock(clock), tap_row(settings, "Display")),
        (DISPLAY.with_clock(clock), Action.done()),
    ]


@pytest.fixture
def page(qtbot, tmp_path: Path) -> GraphEditorPage:  # type: ignore[no-untyped-def]
    ws = Workspace.open(tmp_path / "ws")
    write_demo(ws.demos_dir, "a", _path(SETTINGS, "09:00"), task_id=TASK)
    write_demo(ws.demos_dir, "b", _path(SETTINGS_MORE, "09:30"), task_id=TASK)
    report = build_task(ws.demos_dir, TASK, ws.suite_dir("default"), settings=SimilaritySettings())
    assert report.written
    page = GraphEditorPage()
    qtbot.addWidget(page)
    page.resize(1400, 900)
    page.show()
    qtbot.waitExposed(page)
    page.set_workspace(ws)
    assert page.open_task(ws.suite_dir("default") / TASK)
    return page


def _node_of(page: GraphEditorPage) -> dict[MemberRef, str]:
    graph = page.document.graph
    assert graph is not None
    return {m: n.id for n in graph.nodes for m in n.members}


def test_one_key_accepts_a_possible_merge_and_undo_takes_it_back(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    panel = page.merges
    task_dir = page.document.task_dir
    before = page.document.graph
    assert _node_of(page)[A1] != _node_of(page)[B1]
    with qtbot.waitSignal(panel.reviewed, timeout=30_000):
        qtbot.mouseClick(panel.find_button, Qt.MouseButton.LeftButton)
    assert panel.pair_titles()[0].startswith("kept apart: n1 and n2, a#1 vs b#1, score ")
    assert panel.pairs.currentRow() == 0
    assert "battery" in panel.reason.text()  # the comparison's reason
    assert panel.left_shot.pixmap() is not None and not panel.left_shot.pixmap().isNull()
    assert panel.right_shot.pixmap() is not None and not panel.right_shot.pixmap().isNull()

    # Unsigned decisions are refused.
    panel.pairs.setFocus()
    qtbot.keyClick(panel.pairs, Qt.Key.Key_A)
    assert _node_of(page)[A1] != _node_of(page)[B1]
    assert not (task_dir / "constraints.json").exists()

    qtbot.keyClicks(panel.annotator_edit, "ann")
    panel.pairs.setFocus()
    qtbot.keyClick(panel.pairs, Qt.Key.Key_Return)
    merged = _node_of(page)
    assert merged[A1] == merged[B1]
    assert len(page.scene.node_ids()) == len(before.nodes) - 1
    [decided] = load_constraints(task_dir).constraints
    assert (decided.kind, decided.pair, decided.annotator) == (LinkKind.MUST_LINK, (A1, B1), "ann")
    qtbot.waitUntil(lambda: not any("a#1 vs b#1" in t for t in panel.pair_titles()))
    assert page.undo_action.text().startswith("Undo must-link a#1 ~ b#1")

    page.undo_action.trigger()
    assert page.document.graph == before
    assert load_constraints(task_dir).constraints == ()
    qtbot.waitUntil(lambda: any("a#1 vs b#1" in t for t in panel.pair_titles()))
    page.redo_action.trigger()
    assert _node_of(page)[A1] == _node_of(page)[B1]
    assert [c.pair for c in load_constraints(task_dir).constraints] == [(A1, B1)]

    # The decision holds in the studio's rebuild, whose report names it.
    assert page.save()
    with qtbot.waitSignal(page.build_finished, timeout=60_000) as finished:
        page.build_action.trigger()
    [report] = finished.args[0]
    assert report.written and report.constraints[0].honoured
    text = page.report_dialog.plain_text()
    assert "Merge decisions (constraints.json)" in text
    assert "must-link a#1 ~ b#1 (ann, " in text and "honoured, both in" in text
    page.report_dialog.close()
    assert _node_of(page)[A1] == _node_of(page)[B1]
    graph = load_graph(task_dir)
    assert len({n.id for n in graph.nodes if {A1, B1} & set(n.members)}) == 1


def test_delete_in_the_list_rejects_the_pair_not_the_selected_screen(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    panel = page.merges
    task_dir = page.document.task_dir
    before = page.document.graph
    page.scene.select(["n1"])
    panel.annotator_edit.setText("ann")
    with qtbot.waitSignal(panel.reviewed, timeout=30_000):
        panel.refresh()
    page.activateWindow()
    qtbot.waitUntil(lambda: page.isActiveWindow())
    panel.pairs.setFocus()
    qtbot.keyClick(panel.pairs, Qt.Key.Key_Delete)
    assert page.document.graph == before  # two states: nothing to change, n1 not deleted
    [decided] = load_constraints(task_dir).constraints
    assert (decided.kind, decided.pair) == (LinkKind.CANNOT_LINK, (A1, B1))
    qtbot.waitUntil(lambda: panel.pair_titles() == [])
    page.undo_action.trigger()
    assert load_constraints(task_dir).constraints == ()


def test_rejecting_a_merged_pair_splits_it_out_until_undone(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Two visits of an inbox whose sync line changed: merged, with little margin."""
    inbox = Sketch("Inbox", ("Mail from Ann", "Mail from Bo"), extra={"sync": "Updated 5 min ago"})
    later = Sketch("Inbox", inbox.rows, extra={"sync": "Updated 7 min ago"})
    ws = Workspace.open(tmp_path / "ws")
    for demo_id, screen in (("a", inbox), ("b", later)):
        path = [
            (HOME, tap_row(HOME, "Settings")),
            (screen, tap_row(screen, "Mail from Ann")),
            (DISPLAY, Action.done()),
        ]
        write_demo(ws.demos_dir, demo_id, path, task_id=TASK)
    strict = dataclasses.replace(SimilaritySettings(), structure_floor=0.95)  # little slack
    assert build_task(ws.demos_dir, TASK, ws.suite_dir("default"), settings=strict).written
    page = GraphEditorPage()
    qtbot.addWidget(page)
    page.show()
    page.set_workspace(ws)
    assert page.open_task(ws.suite_dir("default") / TASK)
    before = page.document.graph
    assert _node_of(page)[A1] == _node_of(page)[B1]
    panel = page.merges
    panel.annotator_edit.setText("ann")
    with qtbot.waitSignal(panel.reviewed, timeout=30_000):
        panel.refresh()
    titles = panel.pair_titles()
    row = next(i for i, t in enumerate(titles) if t.startswith("merged: n1, a#1 vs b#1"))
    panel.pairs.setCurrentRow(row)
    panel.pairs.setFocus()
    qtbot.keyClick(panel.pairs, Qt.Key.Key_R)
    assert _node_of(page)[A1] != _node_of(page)[B1]
    task_dir = ws.suite_dir("default") / TASK
    [decided] = load_constraints(task_dir).constraints
    assert (decided.kind, decided.pair) == (LinkKind.CANNOT_LINK, (A1, B1))
    page.undo_action.trigger()
    assert page.document.graph == before
    assert load_constraints(task_dir).constraints == ()


def test_the_review_runs_in_a_worker_with_progress_and_follows_edits_made_meanwhile(
    qtbot, page, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    import threading

    from graph_builder.edits import SetNodeKind
    from graph_builder.model import NodeKind
    from recorder_app.qt.graph_editor import merges_panel

    release = threading.Event()
    seen: list[tuple[threading.Thread, object]] = []
    real = merges_panel.review_graph

    def held_review(graph, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append((threading.current_thread(), graph))
        assert release.wait(30)  # bounded: the test releases it
        return real(graph, *args, **kwargs)

    monkeypatch.setattr(merges_panel, "review_graph", held_review)
    panel = page.merges
    page.side_tabs.setCurrentWidget(panel)
    values: list[int] = []
    panel.progress.valueChanged.connect(values.append)
    qtbot.mouseClick(panel.find_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(seen) == 1)
    assert seen[0][0] is not threading.main_thread()
    assert panel.reviewing and panel.progress.isVisible() and not panel.find_button.isEnabled()
    # The GUI goes on meanwhile: an edit is made while the screens are compared.
    assert page.apply(SetNodeKind("n1", NodeKind.DONE))
    edited = page.document.graph
    with qtbot.waitSignal(panel.reviewed, timeout=30_000):
        release.set()
    assert [graph for _, graph in seen] == [seen[0][1], edited]  # reviewed again
    assert not panel.reviewing and not panel.progress.isVisible() and panel.find_button.isEnabled()
    n = len(edited.nodes)
    assert values and max(values) == n + n * (n - 1) // 2  # every node and pair counted
    assert panel.pair_titles()[0].startswith("kept apart: n1 and n2")


def test_a_review_of_a_graph_closed_meanwhile_is_dropped(qtbot, page, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import threading

    from recorder_app.qt.graph_editor import merges_panel

    release = threading.Event()
    calls: list[object] = []
    real = merges_panel.review_graph

    def held_review(graph, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(graph)
        assert release.wait(30)
        return real(graph, *args, **kwargs)

    monkeypatch.setattr(merges_panel, "review_graph", held_review)
    panel = page.merges
    qtbot.mouseClick(panel.find_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(calls) == 1)
    page.document.close()  # another task, or none, is shown now
    with qtbot.waitSignal(panel.reviewed, timeout=30_000):
        release.set()
    assert len(calls) == 1 and panel.review is None and panel.pair_titles() == []
